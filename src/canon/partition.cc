#include "canon/partition.h"

#include <map>

#include "canon/flatten.h"
#include "support/error.h"

namespace polyred {

namespace {

// For each tensor, the first reduction node it depends on (itself included), or -1.
std::vector<int> reductionAncestor(const Graph& g) {
  std::vector<int> anc(g.tensors.size(), -1);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    int a = node.kind == OpKind::Reduce ? static_cast<int>(n) : -1;
    for (TensorId in : node.inputs)
      if (a < 0) a = anc[static_cast<size_t>(in)];
    anc[static_cast<size_t>(node.output)] = a;
  }
  return anc;
}

std::string kernelName(size_t index, const char* kind) {
  return "polyred_k" + std::to_string(index) + "_" + kind;
}

}  // namespace

KernelPartition partitionGraph(const Graph& g) {
  std::vector<int> anc = reductionAncestor(g);

  // Reductions grouped by (input shape, axes); elementwise outputs grouped by shape.
  std::map<std::pair<Shape, std::vector<int64_t>>, std::pair<std::vector<int>, std::vector<int>>> reductionGroups;
  std::map<Shape, std::vector<int>> elementwiseGroups;
  std::vector<std::pair<Shape, std::vector<int64_t>>> reductionOrder;
  std::vector<Shape> elementwiseOrder;

  for (size_t o = 0; o < g.outputs.size(); ++o) {
    TensorId t = valueTensor(g, g.outputs[o].tensor);
    const Node* producer = g.producer(t);
    if (producer && producer->kind == OpKind::Reduce) {
      int node = g.tensor(t).producer;
      if (anc[static_cast<size_t>(producer->inputs[0])] >= 0)
        throw UnsupportedError(g.sourceFile, producer->name,
                               "a reduction of a reduction result (dependent reductions) is not supported yet");
      auto key = std::make_pair(g.tensor(producer->inputs[0]).shape, producer->axes);
      if (!reductionGroups.count(key)) reductionOrder.push_back(key);
      reductionGroups[key].first.push_back(node);
      reductionGroups[key].second.push_back(static_cast<int>(o));
      continue;
    }
    if (anc[static_cast<size_t>(t)] >= 0) {
      const Node& red = g.nodes[static_cast<size_t>(anc[static_cast<size_t>(t)])];
      throw UnsupportedError(g.sourceFile, producer ? producer->name : g.tensor(t).name,
                             "elementwise work after reduction '" + red.name + "' (an epilogue) is not supported yet");
    }
    const Shape& shape = g.tensor(t).shape;
    if (!elementwiseGroups.count(shape)) elementwiseOrder.push_back(shape);
    elementwiseGroups[shape].push_back(static_cast<int>(o));
  }

  KernelPartition p;
  for (const auto& key : reductionOrder) {
    const auto& [nodes, outs] = reductionGroups[key];
    KernelPlan k = flattenReductions(g, nodes, outs, kernelName(p.kernels.size(), "reduce"));
    if (nodes.size() > 1)
      k.why += "; " + std::to_string(nodes.size()) + " reductions over the same axes fused into one kernel";
    p.kernels.push_back(std::move(k));
  }
  for (const Shape& shape : elementwiseOrder) {
    KernelPlan k = flattenElementwise(g, elementwiseGroups[shape], kernelName(p.kernels.size(), "elementwise"));
    p.kernels.push_back(std::move(k));
  }
  return p;
}

}  // namespace polyred
