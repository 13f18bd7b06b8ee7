#include "canon/partition.h"

#include <algorithm>
#include <map>
#include <set>

#include "canon/flatten.h"
#include "support/error.h"

namespace polyred {

namespace {

using GroupKey = std::pair<Shape, std::vector<int64_t>>;  // reduction input shape, axes

// For each tensor, the Reduce nodes it depends on, not looking through reductions:
// reductions(t) of a Reduce node's output is just that node.
std::vector<std::set<int>> reductionsFeeding(const Graph& g) {
  std::vector<std::set<int>> r(g.tensors.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    auto& out = r[static_cast<size_t>(node.output)];
    if (node.kind == OpKind::Reduce) {
      out.insert(static_cast<int>(n));
      continue;
    }
    for (TensorId in : node.inputs) out.insert(r[static_cast<size_t>(in)].begin(), r[static_cast<size_t>(in)].end());
  }
  return r;
}

std::string kernelName(size_t index, const char* kind) { return "polyred_k" + std::to_string(index) + "_" + kind; }

class Partitioner {
 public:
  explicit Partitioner(const Graph& g) : g_(g), feeding_(reductionsFeeding(g)) {}

  KernelPartition run() {
    for (size_t o = 0; o < g_.outputs.size(); ++o) classify(static_cast<int>(o));
    attachPointOutputs();
    KernelPartition p;
    for (const GroupKey& key : reductionOrder_) {
      const ReductionGroup& group = reductionGroups_[key];
      KernelPlan k = flattenReductions(g_, group, kernelName(p.kernels.size(), "reduce"));
      if (group.nodes.size() > 1)
        k.why += "; " + std::to_string(group.nodes.size()) + " reductions over the same axes fused into one kernel";
      p.kernels.push_back(std::move(k));
    }
    for (const Shape& shape : elementwiseOrder_)
      p.kernels.push_back(flattenElementwise(g_, elementwiseGroups_[shape], kernelName(p.kernels.size(), "elementwise")));
    return p;
  }

 private:
  void classify(int o) {
    TensorId t = valueTensor(g_, g_.outputs[static_cast<size_t>(o)].tensor);
    const std::set<int>& reds = feeding_[static_cast<size_t>(t)];
    if (reds.empty()) return elementwiseOutputs_.push_back(o);
    ReductionGroup& group = groupOf(reds, t);
    const Node* producer = g_.producer(t);
    if (producer && producer->kind == OpKind::Reduce) group.direct.emplace_back(g_.tensor(t).producer, o);
    else group.epilogue.push_back(o);
  }

  // The one group all of `reds` belong to (creating it, adding missing members).
  ReductionGroup& groupOf(const std::set<int>& reds, TensorId t) {
    std::set<GroupKey> keys;
    for (int r : reds) {
      const Node& n = g_.nodes[static_cast<size_t>(r)];
      if (!feeding_[static_cast<size_t>(n.inputs[0])].empty())
        throw UnsupportedError(g_.sourceFile, n.name,
                               "a reduction of a reduction result (dependent reductions) is not supported yet");
      keys.insert({g_.tensor(n.inputs[0]).shape, n.axes});
    }
    if (keys.size() > 1)
      throw UnsupportedError(g_.sourceFile, g_.tensor(t).name,
                             "an output combining reductions over different axes or shapes is not supported yet");
    const GroupKey& key = *keys.begin();
    if (!reductionGroups_.count(key)) reductionOrder_.push_back(key);
    ReductionGroup& group = reductionGroups_[key];
    for (int r : reds)
      if (std::find(group.nodes.begin(), group.nodes.end(), r) == group.nodes.end()) group.nodes.push_back(r);
    return group;
  }

  // A reduction-free output over a group's anchor shape is stored from that group's
  // kernel (every anchor point is visited once there); the rest get elementwise kernels.
  void attachPointOutputs() {
    for (int o : elementwiseOutputs_) {
      const Shape& shape = g_.tensor(valueTensor(g_, g_.outputs[static_cast<size_t>(o)].tensor)).shape;
      bool attached = false;
      for (const GroupKey& key : reductionOrder_) {
        if (!sameSqueezedShape(key.first, shape)) continue;
        reductionGroups_[key].pointOutputs.push_back(o);
        attached = true;
        break;
      }
      if (!attached) addElementwise(o, shape);
    }
  }

  void addElementwise(int o, const Shape& shape) {
    if (!elementwiseGroups_.count(shape)) elementwiseOrder_.push_back(shape);
    elementwiseGroups_[shape].push_back(o);
  }

  const Graph& g_;
  std::vector<std::set<int>> feeding_;
  std::map<GroupKey, ReductionGroup> reductionGroups_;
  std::vector<GroupKey> reductionOrder_;
  std::vector<int> elementwiseOutputs_;
  std::map<Shape, std::vector<int>> elementwiseGroups_;
  std::vector<Shape> elementwiseOrder_;
};

}  // namespace

KernelPartition partitionGraph(const Graph& g) { return Partitioner(g).run(); }

}  // namespace polyred
