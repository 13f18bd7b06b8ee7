// The CPU reference interpreter: the oracle every correctness test compares against.
//
// Takes a Graph (verified again here) and one HostTensor per graph input; gives the
// graph's outputs (or every tensor, for debugging dumps).
//
// Semantics, which every kernel polyred generates must reproduce:
// - Nodes run in graph order. Every tensor holds values exactly representable in its
//   declared dtype: a float op is computed in double by evalElementwise() and rounded
//   to the op's output dtype; integer and bool ops are exact and wrap to the declared
//   type. A fused kernel must therefore round each intermediate to its declared type
//   too (computing a float16 chain entirely in float32 is a different program).
// - Cast is Scalar::castTo. Select, AddN (a left fold of Adds, each rounded) and
//   Assign (its value is input 1) are elementwise. Operands of elementwise ops and
//   BroadcastTo broadcast numpy-style (right-aligned). Reshape keeps row-major order;
//   Transpose's output dim k reads input dim perm[k]. A Constant tensor is its scalar
//   (cast to the tensor's dtype) broadcast to its shape.
// - Reduce converts each element to the reduction's accType, combines it into an
//   accumulator starting from the identity (in row-major order of the reduced
//   elements) and casts the result to the output dtype. Float sums and products are
//   accumulated in double whatever accType says: the oracle is more exact than any
//   kernel, and compare.h's tolerances absorb the difference. Integer sums and
//   products wrap to accType, as each step would. Max/min propagate NaN.
#pragma once

#include <vector>

#include "interp/host_tensor.h"
#include "ir/graph.h"

namespace polyred {

// `inputs` in g.inputs order; returns the tensors of g.outputs, in order. Throws
// polyred::Error if the graph does not verify or an input's count, dtype or shape
// does not match it.
std::vector<HostTensor> evaluateReference(const Graph& g, const std::vector<HostTensor>& inputs);

// Every tensor of the graph, indexed by TensorId (inputs and constants included; a
// tensor that nothing defines comes back with no bytes). Holds all intermediates in
// memory at once, so it is meant for debugging dumps.
std::vector<HostTensor> evaluateAllTensors(const Graph& g, const std::vector<HostTensor>& inputs);

}  // namespace polyred
