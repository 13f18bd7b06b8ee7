#include "driver/kernel_binding.h"

#include <algorithm>

namespace polyred {

namespace {

// The plan as chooseBinding sees it: a vectorized instance covers `width` elements.
KernelPlan perInstance(KernelPlan plan, const Vectorization& v) {
  int64_t& extent = v.axis == 'i' ? plan.M : plan.N;
  extent = v.vectorsAlong(extent);
  if (v.axis == 'j') {
    plan.elementsPerN = v.width;
    plan.maskedLanes = v.masked();
  }
  return plan;
}

// A kernel's binding for blocks of `threads` threads (0: its own choice); see
// chooseBinding for blocksBeside.
Binding bindOne(const KernelPlan& plan, const BoundKernel& b, const Target& target, const KernelConfig& config,
                int threads, int64_t blocksBeside = 0) {
  if (!b.tiling.empty()) return bindTiles(b.tiling, target, threads ? threads : tileBlockSize(b.tiling, config.threadsPerBlock));
  return chooseBinding(perInstance(plan, b.vector), target, config, threads, blocksBeside);
}

// A launch has one block size: the parts with smaller blocks are bound again with the
// group's largest (their extra threads idle, guarded by isl). Returns that size.
int bindWithOneBlockSize(const KernelPartition& partition, const LaunchGroup& group, const Target& target,
                         const KernelConfig& config, std::vector<BoundKernel>& bound) {
  int threads = 0;
  for (int k : group.kernels) threads = std::max(threads, bound[static_cast<size_t>(k)].binding.threadsPerBlock());
  for (int k : group.kernels) {
    BoundKernel& b = bound[static_cast<size_t>(k)];
    if (b.binding.threadsPerBlock() != threads)
      b.binding = bindOne(partition.kernels[static_cast<size_t>(k)], b, target, config, threads);
  }
  return threads;
}

// The part with the most blocks splits j again around the others' blocks, so that they
// run in the launch's waves instead of after them (chooseBinding's blocksBeside). A
// group that the pipeline's shared-memory budget later cuts into several launches
// counts as one here: the split is then merely less good, never wrong.
void makeRoomInTheWave(const KernelPartition& partition, const LaunchGroup& group, const Target& target,
                       const KernelConfig& config, int threads, std::vector<BoundKernel>& bound) {
  auto blocksOf = [&](int k) { return bound[static_cast<size_t>(k)].binding.blocks(); };
  int64_t total = 0;
  int largest = group.kernels.front();
  for (int k : group.kernels) {
    total += blocksOf(k);
    if (blocksOf(k) > blocksOf(largest)) largest = k;
  }
  BoundKernel& b = bound[static_cast<size_t>(largest)];
  b.binding = bindOne(partition.kernels[static_cast<size_t>(largest)], b, target, config, threads, total - blocksOf(largest));
}

}  // namespace

BoundKernel bindAlone(const KernelPlan& plan, const Target& target, const KernelConfig& config) {
  BoundKernel b;
  if (!plan.symbolicRows) b.tiling = chooseTransposeTiling(plan, config, target.launchPolicy(), &b.vector);
  if (b.tiling.empty()) b.vector = chooseVectorization(plan, target.launchPolicy(), config.maxVectorWidth);
  if (plan.symbolicRows && b.vector.axis == 'i') b.vector = Vectorization{};
  b.binding = bindOne(plan, b, target, config, 0);
  return b;
}

std::vector<BoundKernel> bindKernels(const KernelPartition& partition, const std::vector<LaunchGroup>& groups,
                                     const Target& target, const KernelConfig& config) {
  std::vector<BoundKernel> bound;
  for (const KernelPlan& plan : partition.kernels) bound.push_back(bindAlone(plan, target, config));
  for (const LaunchGroup& group : groups) {
    if (group.kernels.size() < 2) continue;
    const int threads = bindWithOneBlockSize(partition, group, target, config, bound);
    makeRoomInTheWave(partition, group, target, config, threads, bound);
  }
  return bound;
}

}  // namespace polyred
