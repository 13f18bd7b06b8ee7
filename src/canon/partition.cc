#include "canon/partition.h"

#include <algorithm>
#include <map>
#include <set>

#include "canon/flatten.h"
#include "canon/scatter_fallback.h"
#include "support/error.h"

namespace polyred {

namespace {

// Reductions share a kernel when they reduce the same shape over the same axes and,
// unless the kernel is row-resident, sit at the same depth of reduction nesting (a
// variance reading a mean then comes a kernel later).
struct GroupKey {
  Shape shape;
  std::vector<int64_t> axes;
  int level = 0;
  auto operator<=>(const GroupKey&) const = default;
};

// For each tensor, the `kind` nodes (Reduce or Scan) it depends on, not looking
// through them: feeding(t) of such a node's output is just that node.
std::vector<std::set<int>> nodesFeeding(const Graph& g, OpKind kind) {
  std::vector<std::set<int>> r(g.tensors.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    auto& out = r[static_cast<size_t>(node.output)];
    if (node.kind == kind) {
      out.insert(static_cast<int>(n));
      continue;
    }
    for (TensorId in : node.inputs) out.insert(r[static_cast<size_t>(in)].begin(), r[static_cast<size_t>(in)].end());
  }
  return r;
}

// Nesting depth of each Reduce node: 0 if its input depends on no reduction.
std::map<int, int> reductionLevels(const Graph& g, const std::vector<std::set<int>>& feeding) {
  std::map<int, int> level;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (g.nodes[n].kind != OpKind::Reduce) continue;
    int l = 0;
    for (TensorId in : g.nodes[n].inputs)  // a tuple reduction has several element inputs
      for (int r : feeding[static_cast<size_t>(in)]) l = std::max(l, level.at(r) + 1);
    level[static_cast<int>(n)] = l;
  }
  return level;
}


std::set<int> temporariesLoaded(const KernelPlan& k) {
  std::set<int> t;
  for (const auto* values : {&k.body, &k.epilogue})
    for (const BodyValue& v : *values)
      if (v.temporary >= 0) t.insert(v.temporary);
  return t;
}

// Kernels in an order where every temporary is written before it is read.
std::vector<KernelPlan> launchOrder(std::vector<KernelPlan> kernels) {
  std::vector<KernelPlan> ordered;
  std::set<int> written;
  while (!kernels.empty()) {
    auto ready = std::find_if(kernels.begin(), kernels.end(), [&](const KernelPlan& k) {
      std::set<int> need = temporariesLoaded(k);
      return std::includes(written.begin(), written.end(), need.begin(), need.end());
    });
    POLYRED_CHECK(ready != kernels.end(), "kernels read temporaries in a cycle");
    for (const ReductionOutput& r : ready->reductions)
      if (r.temporary >= 0) written.insert(r.temporary);
    for (const ElementwiseOutput& s : ready->stores)
      if (s.temporary >= 0) written.insert(s.temporary);
    ordered.push_back(std::move(*ready));
    kernels.erase(ready);
  }
  for (size_t k = 0; k < ordered.size(); ++k)  // names follow launch order
    ordered[k].name = "polyred_k" + std::to_string(k) +
                      (ordered[k].hasScan()                             ? "_scan"
                       : ordered[k].form == CanonicalForm::Elementwise ? "_elementwise"
                                                                        : "_reduce");
  return ordered;
}

class Partitioner {
 public:
  Partitioner(const Graph& g, const RowsFitOneBlock& rowsFitOneBlock)
      : g_(g), feeding_(nodesFeeding(g, OpKind::Reduce)), scansFeeding_(nodesFeeding(g, OpKind::Scan)),
        level_(reductionLevels(g, feeding_)), rowsFitOneBlock_(rowsFitOneBlock) {}

  // Builds the kernels; whenever a reduction result turns out to be needed outside its
  // kernel, materializes it (and moves the output that needed it) and starts over. A
  // row-resident kernel whose reduction reads another's total at other rows is split
  // by nesting depth instead.
  KernelPartition run() {
    for (;;) {
      try {
        return build();
      } catch (const NeedsMaterialization& e) {
        bool progress = false;
        if (e.sameKernel && e.output < 0) {
          progress = splitByLevel_.insert(spaceOf(e.node)).second;
        } else {
          progress = materialized_.emplace(e.node, static_cast<int>(materialized_.size())).second;
          if (e.output >= 0) progress = separate_.insert(e.output).second || progress;
        }
        POLYRED_CHECK(progress, "partitioning made no progress on " << e.why);
      }
    }
  }

 private:
  KernelPartition build() {
    groups_.clear();
    groupOrder_.clear();
    scans_.clear();
    elementwiseGroups_.clear();
    elementwiseOrder_.clear();
    std::vector<int> reductionFree;
    for (size_t o = 0; o < g_.outputs.size(); ++o) classify(static_cast<int>(o), reductionFree);
    for (auto [node, temp] : materialized_)  // materialized results must be computed
      if (isScan(node)) scanGroupOf(node);
      else if (isReduce(node)) groupOf(node);
    attachPointOutputs(reductionFree);

    KernelPartition p;
    std::vector<KernelPlan> kernels;
    for (const GroupKey& key : groupOrder_) {
      ReductionGroup& group = groups_[key];
      std::stable_sort(group.nodes.begin(), group.nodes.end(), [&](int a, int b) { return level_.at(a) < level_.at(b); });
      KernelPlan k = flattenReductions(g_, group, materialized_);  // named in launch order
      if (group.nodes.size() > 1)
        k.why += "; " + std::to_string(group.nodes.size()) + " reductions over the same axes fused into one kernel";
      kernels.push_back(std::move(k));
    }
    for (const ScanGroup& scan : scans_) kernels.push_back(flattenScan(g_, scan, materialized_));
    for (auto [node, temp] : materialized_)  // gathered params: a kernel each, before their readers
      if (!isScan(node) && !isReduce(node)) kernels.push_back(flattenMaterialized(g_, node, materialized_));
    for (const Shape& shape : elementwiseOrder_) {
      KernelPlan k = flattenElementwise(g_, elementwiseGroups_[shape], materialized_);
      kernels.push_back(std::move(k));
    }
    p.kernels = launchOrder(std::move(kernels));
    p.temporaries.resize(materialized_.size());
    for (auto [node, temp] : materialized_) {
      const Tensor& t = g_.tensor(g_.nodes[static_cast<size_t>(node)].output);
      p.temporaries[static_cast<size_t>(temp)] = {g_.nodes[static_cast<size_t>(node)].output, numElements(t.shape), t.dtype};
    }
    if (!materialized_.empty() && !p.kernels.empty()) p.kernels.front().why += "; " + whyMaterialized();
    return p;
  }

  // "2 result(s) materialized for later kernels: read at other rows than its
  // own" -- why the reductions could not stay passes of one row-resident kernel.
  std::string whyMaterialized() const {
    std::set<std::string> reasons;
    for (auto [node, temp] : materialized_) {
      const OpKind kind = g_.nodes[static_cast<size_t>(node)].kind;
      if (kind == OpKind::ScatterAdd) {
        reasons.insert("a scatter result read by another op");
        continue;
      }
      if (!isScan(node) && !isReduce(node)) {
        reasons.insert("gathered params computed by " + std::string(opName(kind)));
        continue;
      }
      const auto [shape, axes] = spaceOf(node);
      if (isScan(node)) reasons.insert("a scan result read by another op");
      else if (splitByLevel_.count({shape, axes})) reasons.insert("read at other rows than its own");
      else if (!rowsFitOneBlock_(canonicalSpace(shape, axes)))
        reasons.insert("its rows span several blocks: too long for one, too few to fill the GPU one block each");
      else reasons.insert("read by a reduction over other axes or another shape");
    }
    std::string text = std::to_string(materialized_.size()) + " result(s) materialized for later kernels";
    const char* separator = ": ";
    for (const std::string& r : reasons) {
      text += separator + r;
      separator = "; ";
    }
    return text;
  }

  void classify(int o, std::vector<int>& reductionFree) {
    TensorId t = valueTensor(g_, g_.outputs[static_cast<size_t>(o)].tensor);
    if (outputScatter(g_, t)) return addElementwise(o, iterationShape(g_, o));  // over its values, reductions in them materialized
    if (const Node* producer = g_.producer(t); producer && producer->kind == OpKind::Scan)
      return scanGroupOf(g_.tensor(t).producer).outputs.push_back(o);  // its own kernel
    const std::set<int>& reds = feeding_[static_cast<size_t>(t)];
    if (reds.empty() && storedByScan(o, t)) return;
    if (reds.empty()) return reductionFree.push_back(o);
    std::set<GroupKey> keys;
    for (int r : reds) keys.insert(keyOf(r));
    if (separate_.count(o) || keys.size() > 1) return addElementwise(o, g_.tensor(t).shape);
    for (int r : reds) groupOf(r);
    const GroupKey& key = *keys.begin();
    ReductionGroup& group = groups_[key];
    const Node* producer = g_.producer(t);
    const Shape& shape = g_.tensor(t).shape;
    if (producer && producer->kind == OpKind::Reduce) group.direct.emplace_back(g_.tensor(t).producer, o);
    else if (rowResident(key) && !sameSqueezedShape(keptShape(key), shape) && sameSqueezedShape(key.shape, shape))
      group.pointOutputs.push_back(o);  // over the whole row, after the totals it reads
    else group.epilogue.push_back(o);
  }

  // The (shape, axes) a Reduce node reduces.
  std::pair<Shape, std::vector<int64_t>> spaceOf(int node) const {
    const Node& n = g_.nodes[static_cast<size_t>(node)];
    return {g_.tensor(n.inputs[0]).shape, n.axes};
  }

  // Row-resident: each row is reduced inside one block, so reductions that depend on
  // each other can run as passes of one kernel (unless one reads another's totals at
  // other rows, which split the kernel by level).
  bool rowResident(const GroupKey& key) const {
    return !splitByLevel_.count({key.shape, key.axes}) && rowsFitOneBlock_(canonicalSpace(key.shape, key.axes));
  }

  GroupKey keyOf(int node) const {
    auto [shape, axes] = spaceOf(node);
    GroupKey key{shape, axes, 0};
    if (!rowResident(key)) key.level = level_.at(node);
    return key;
  }

  // The group of a Reduce node, created (in first-use order) and joined if needed.
  ReductionGroup& groupOf(int node) {
    GroupKey key = keyOf(node);
    if (!groups_.count(key)) groupOrder_.push_back(key);
    ReductionGroup& group = groups_[key];
    if (std::find(group.nodes.begin(), group.nodes.end(), node) == group.nodes.end()) group.nodes.push_back(node);
    return group;
  }

  bool isScan(int node) const { return g_.nodes[static_cast<size_t>(node)].kind == OpKind::Scan; }
  bool isReduce(int node) const { return g_.nodes[static_cast<size_t>(node)].kind == OpKind::Reduce; }

  // An output computed elementwise from one scan's result over the scan's shape is a
  // store of the scan kernel (unless flattening found it reads the scan at other
  // points: then it is separate_, and the scan is materialized).
  bool storedByScan(int o, TensorId t) {
    const std::set<int>& scans = scansFeeding_[static_cast<size_t>(t)];
    if (scans.size() != 1 || separate_.count(o)) return false;
    const int scan = *scans.begin();
    if (!sameSqueezedShape(g_.tensor(g_.nodes[static_cast<size_t>(scan)].output).shape, g_.tensor(t).shape)) return false;
    scanGroupOf(scan).outputs.push_back(o);
    return true;
  }

  // The scan kernel of a Scan node (one per node, in first-use order).
  ScanGroup& scanGroupOf(int node) {
    auto it = std::find_if(scans_.begin(), scans_.end(), [&](const ScanGroup& s) { return s.node == node; });
    if (it != scans_.end()) return *it;
    scans_.push_back({node, {}});
    return scans_.back();
  }

  // A reduction-free output over a group's anchor shape is stored from that group's
  // Red statement (every anchor point is visited once there), one over its kept rows
  // from its epilogue (once per row); the rest get elementwise kernels.
  void attachPointOutputs(const std::vector<int>& reductionFree) {
    for (int o : reductionFree) {
      const Shape& shape = g_.tensor(valueTensor(g_, g_.outputs[static_cast<size_t>(o)].tensor)).shape;
      auto anchor = std::find_if(groupOrder_.begin(), groupOrder_.end(),
                                 [&](const GroupKey& k) { return sameSqueezedShape(k.shape, shape); });
      auto rows = std::find_if(groupOrder_.begin(), groupOrder_.end(),
                               [&](const GroupKey& k) { return sameSqueezedShape(keptShape(k), shape); });
      if (anchor != groupOrder_.end()) groups_[*anchor].pointOutputs.push_back(o);
      else if (rows != groupOrder_.end()) groups_[*rows].epilogue.push_back(o);
      else addElementwise(o, shape);
    }
  }

  static Shape keptShape(const GroupKey& k) {
    Shape kept;
    for (size_t d = 0; d < k.shape.size(); ++d)
      if (std::find(k.axes.begin(), k.axes.end(), static_cast<int64_t>(d)) == k.axes.end()) kept.push_back(k.shape[d]);
    return kept;
  }

  void addElementwise(int o, const Shape& shape) {
    if (!elementwiseGroups_.count(shape)) elementwiseOrder_.push_back(shape);
    elementwiseGroups_[shape].push_back(o);
  }

  const Graph& g_;
  std::vector<std::set<int>> feeding_, scansFeeding_;
  std::map<int, int> level_;
  const RowsFitOneBlock& rowsFitOneBlock_;
  std::set<std::pair<Shape, std::vector<int64_t>>> splitByLevel_;
  Materialized materialized_;
  std::set<int> separate_;  // outputs that must not be epilogues (moved to elementwise kernels)
  std::map<GroupKey, ReductionGroup> groups_;
  std::vector<GroupKey> groupOrder_;
  std::vector<ScanGroup> scans_;
  std::map<Shape, std::vector<int>> elementwiseGroups_;
  std::vector<Shape> elementwiseOrder_;
};

}  // namespace

KernelPartition partitionGraph(const Graph& g, const RowsFitOneBlock& rowsFitOneBlock) {
  return Partitioner(g, rowsFitOneBlock).run();
}

}  // namespace polyred
