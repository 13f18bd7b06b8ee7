// Random "parallel" graphs: independent random reduction graphs (tests/random_graphs.h)
// side by side in one graph, as a MindSpore "*_parallel" file holds them, for the
// horizontal-fusion property tests on the CPU and the GPU.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "random_graphs.h"

namespace polyred::random_graphs {

// Independent random graphs side by side in one graph (a MindSpore "parallel" file):
// tensors renamed per part, ids and producers shifted.
inline Graph sideBySide(const std::vector<Graph>& parts) {
  Graph g;
  g.name = "parallel";
  for (size_t p = 0; p < parts.size(); ++p) {
    const Graph& part = parts[p];
    const auto tensorBase = static_cast<TensorId>(g.tensors.size());
    const auto nodeBase = static_cast<int32_t>(g.nodes.size());
    for (Tensor t : part.tensors) {
      t.name = "p" + std::to_string(p) + "_" + t.name;
      if (t.producer >= 0) t.producer += nodeBase;
      g.tensors.push_back(std::move(t));
    }
    for (Node n : part.nodes) {
      for (TensorId& in : n.inputs) in += tensorBase;
      n.output += tensorBase;
      g.nodes.push_back(std::move(n));
    }
    for (TensorId in : part.inputs) g.inputs.push_back(in + tensorBase);
    for (Output o : part.outputs) {
      o.tensor += tensorBase;
      if (o.aliasOfInput) *o.aliasOfInput += tensorBase;
      g.outputs.push_back(o);
    }
  }
  g.verify();
  return g;
}

// 2-4 independent random reduction graphs of one size profile side by side (parts
// drawn from seeds 1000 * seed + k); the features are the last part's.
inline Generated parallelGraph(uint64_t seed, const SizeProfile& sizes = cpuSizes()) {
  std::vector<Graph> parts;
  Features features;
  for (uint64_t k = 0; k < 2 + seed % 3; ++k) {
    Generated part = GraphGenerator(1000 * seed + k, sizes).reductionGraph();
    parts.push_back(part.graph);
    features = part.features;
  }
  return {sideBySide(parts), features};
}

}  // namespace polyred::random_graphs
