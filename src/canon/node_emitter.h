// Rewriting a graph node by node: the helpers the graph rewrites of canon/ share.
//
// A rewrite copies a graph with its nodes cleared, re-appends the nodes it keeps and,
// for each node it replaces, appends an expansion through a NodeEmitter: new tensors
// are named after the replaced node's output, and the last node appended takes over
// that output (finish()), so readers of the replaced node need no change.
// renumberProducers() then restores Tensor::producer and verifies the result.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace polyred {

class NodeEmitter {
 public:
  NodeEmitter(Graph& g, const Node& replaced) : g_(g), target_(replaced.output), name_(replaced.name) {}

  // Appends `n` with a new output tensor of `shape` and `t`; `what` names it.
  TensorId emit(Node n, const Shape& shape, DType t, const std::string& what);
  TensorId op(OpKind k, std::vector<TensorId> inputs, const Shape& shape, DType t, const std::string& what);
  // A reduction of x over `axes` (keepDims as given), its result of x's dtype.
  TensorId reduce(TensorId x, Reduction r, std::vector<int64_t> axes, bool keepDims, const Shape& shape,
                  const std::string& what);
  TensorId iota(const Shape& shape, int64_t axis, DType t, const std::string& what);
  TensorId constant(Scalar v, const std::string& what);
  // The last node appended writes the replaced node's output tensor instead of its own.
  void finish();

 private:
  Graph& g_;
  const TensorId target_;
  const std::string name_;
};

// Tensor::producer from the node order, then Graph::verify().
void renumberProducers(Graph& g);

}  // namespace polyred
