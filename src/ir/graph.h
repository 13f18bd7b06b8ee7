// The graph IR: a fused sub-graph of tensor ops, as a frontend produced it.
//
// Tensors are values with a name, a row-major shape and a dtype. A tensor is a graph
// input (a caller's buffer), a constant scalar (folded into the kernel), or the result
// of exactly one node. Nodes are kept in topological order. Outputs name tensors; an
// output produced by Assign is written into the buffer of Assign's destination input
// (in-place), which the runtime honours by aliasing the two pointers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/ops.h"
#include "ir/reduction.h"

namespace polyred {

using Shape = std::vector<int64_t>;
using TensorId = int32_t;

// Largest element count polyred accepts for one tensor (2^48): far above any GPU's
// memory, and small enough that byte offsets never overflow int64.
inline constexpr int64_t kMaxElements = int64_t{1} << 48;

// Number of elements; throws polyred::Error if a dimension is negative or the product
// exceeds kMaxElements.
int64_t numElements(const Shape& s);
std::string toString(const Shape& s);

enum class TensorRole : uint8_t { Input, Constant, Intermediate };

// A dimension of a symbolic graph (ir/symbolic_dims.h): `coefficient` times the value
// of Graph::symbols[symbol], or a constant (symbol -1: the shape's own value).
struct SymbolicDim {
  int symbol = -1;
  int64_t coefficient = 1;
  bool isConstant() const { return symbol < 0; }
  bool operator==(const SymbolicDim&) const = default;
};

struct Tensor {
  std::string name;
  Shape shape;
  DType dtype = DType::Float32;
  TensorRole role = TensorRole::Intermediate;
  std::optional<Scalar> constant;  // role == Constant: the scalar value (any shape broadcasts it)
  int32_t producer = -1;           // index of the producing node, -1 for inputs/constants
  // A template graph's symbolic dimensions, one per axis (empty: all constant); the
  // shape then holds them at the symbols' probe values (ir/symbolic_dims.h).
  std::vector<SymbolicDim> symbolic;
  bool hasSymbolicDim() const;
};

struct Node {
  OpKind kind = OpKind::Add;
  std::string name;  // for error messages: the op as the source named it
  std::vector<TensorId> inputs;
  TensorId output = -1;
  // Reduce: normalized axes (non-negative, sorted, unique), keepDims, the reduction.
  // Scan: axes = {axis}, the reduction, and whether it is exclusive and/or reversed.
  std::vector<int64_t> axes;
  bool keepDims = false;
  std::optional<Reduction> reduction;
  bool exclusive = false, reverse = false;
  // Transpose: output dim k reads input dim perm[k].
  std::vector<int64_t> perm;
  // Window: per axis, where the window starts in the input (may be negative: the
  // index wraps modulo the input extent, so every read is in bounds), and the step
  // between the elements it takes (empty: 1 on every axis; negative steps walk
  // backwards): out[idx] = x[(begin + steps * idx) mod x.shape].
  std::vector<int64_t> begin, steps;
  // Iota: the axis whose coordinate is the value, in `axes` ({axis}); Gather: the axis
  // of params the indices select along, in `axes` ({axis}).
  // Reshape/BroadcastTo: the target shape is the output tensor's shape.
};

struct Output {
  TensorId tensor = -1;
  // Set when the output is written into an input's buffer (Assign/InplaceAssign).
  std::optional<TensorId> aliasOfInput;
};

class Graph {
 public:
  std::string name;
  std::string sourceFile;  // for error messages; empty for builder-made graphs
  std::vector<Tensor> tensors;
  std::vector<Node> nodes;  // topological order
  std::vector<TensorId> inputs;
  std::vector<Output> outputs;
  // The size symbols of a template graph (ir/symbolic_dims.h); empty for a concrete one.
  std::vector<std::string> symbols;

  const Tensor& tensor(TensorId id) const { return tensors.at(static_cast<size_t>(id)); }
  Tensor& tensor(TensorId id) { return tensors.at(static_cast<size_t>(id)); }
  const Node* producer(TensorId id) const {
    int p = tensor(id).producer;
    return p < 0 ? nullptr : &nodes[static_cast<size_t>(p)];
  }
  std::optional<TensorId> findTensor(const std::string& name) const;
  // The position of `t` in `inputs`, or -1 when it is not a graph input.
  int inputIndex(TensorId t) const;

  // Checks shapes, dtypes, ids, topological order and axes; throws polyred::Error
  // naming sourceFile and the offending op.
  void verify() const;
  // Human-readable listing (used by --dump=graph).
  std::string toString() const;
};

// The strides of a row-major tensor of shape `s` (the last dimension's is 1).
std::vector<int64_t> rowMajorStrides(const Shape& s);

// The tensor a Gather node reads its rows from: its params, or the tensor a chain of
// Reshapes of its params starts from (the same memory, row-major; GatherNd gathers
// from its params' leading axes merged by a Reshape). The verifier requires a graph input.
TensorId gatherSource(const Graph& g, const Node& gather);

// How a ScatterAdd node addresses its output: its index selects one of `rows` rows --
// the first `indexedAxes` axes of the output flattened row-major -- each of `rowSize`
// elements (the remaining axes).
struct ScatterRows {
  int64_t indexedAxes = 1;
  int64_t rows = 0, rowSize = 0;
};
ScatterRows scatterRows(const Graph& g, const Node& scatter);

// Shape of a broadcast between two shapes (numpy rules, right-aligned); nullopt if
// they are incompatible.
std::optional<Shape> broadcastShapes(const Shape& a, const Shape& b);

}  // namespace polyred
