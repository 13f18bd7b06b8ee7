#include "canon/launch_groups.h"

#include <algorithm>
#include <set>
#include <utility>

namespace polyred {

namespace {

// A buffer of the program: kind (0 input, 1 output, 2 temporary) and index.
using Buffer = std::pair<int, int>;

struct Access {
  std::set<Buffer> reads, writes;
};

Buffer outputBuffer(const KernelPartition& partition, const Graph& g, int output) {
  if (const int staging = partition.stagingTemporary(output); staging >= 0) return {2, staging};
  const Output& o = g.outputs[static_cast<size_t>(output)];
  if (o.aliasOfInput) {
    int in = g.inputIndex(*o.aliasOfInput);
    if (in >= 0) return {0, in};
  }
  return {1, output};
}

Access accessOf(const KernelPartition& partition, const KernelPlan& k, const Graph& g) {
  Access a;
  for (const auto* values : {&k.body, &k.epilogue})
    for (const BodyValue& v : *values)
      if (v.kind == BodyValue::Kind::Load) a.reads.insert(v.temporary >= 0 ? Buffer{2, v.temporary} : Buffer{0, v.input});
  for (const ReductionOutput& r : k.reductions) {
    if (r.output >= 0) a.writes.insert(outputBuffer(partition, g, r.output));
    if (r.temporary >= 0) a.writes.insert({2, r.temporary});
  }
  for (const ElementwiseOutput& s : k.stores)  // a scatter's base, copied into its output before the launch
    if (s.scatters() && s.scatterBase >= 0) a.reads.insert({0, s.scatterBase});
  for (const auto* stores : {&k.stores, &k.epilogueStores})  // (a scan's store may fill a temporary)
    for (const ElementwiseOutput& s : *stores)
      a.writes.insert(s.output >= 0 ? outputBuffer(partition, g, s.output) : Buffer{2, s.temporary});
  return a;
}

bool intersects(const std::set<Buffer>& a, const std::set<Buffer>& b) {
  return std::any_of(a.begin(), a.end(), [&](const Buffer& x) { return b.count(x) > 0; });
}

// Whether `later` must run after `earlier` (both in partition order).
bool dependsOn(const Access& later, const Access& earlier) {
  return intersects(earlier.writes, later.reads) || intersects(earlier.writes, later.writes) ||
         intersects(earlier.reads, later.writes);
}

}  // namespace

std::vector<LaunchGroup> groupIndependentKernels(const KernelPartition& partition, const Graph& g) {
  std::vector<Access> access;
  for (const KernelPlan& k : partition.kernels) access.push_back(accessOf(partition, k, g));
  std::vector<int> depth(partition.kernels.size(), 0);
  std::vector<LaunchGroup> groups;
  for (size_t k = 0; k < partition.kernels.size(); ++k) {
    for (size_t e = 0; e < k; ++e)
      if (dependsOn(access[k], access[e])) depth[k] = std::max(depth[k], depth[e] + 1);
    if (static_cast<size_t>(depth[k]) >= groups.size()) groups.resize(static_cast<size_t>(depth[k]) + 1);
    groups[static_cast<size_t>(depth[k])].kernels.push_back(static_cast<int>(k));
  }
  return groups;
}

std::string toString(const std::vector<LaunchGroup>& groups, const KernelPartition& partition) {
  std::string s;
  for (size_t l = 0; l < groups.size(); ++l) {
    s += (l ? " | launch " : "launch ") + std::to_string(l) + ":";
    for (int k : groups[l].kernels) s += " " + partition.kernels[static_cast<size_t>(k)].name;
  }
  return s;
}

}  // namespace polyred
