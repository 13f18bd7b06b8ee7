// MindSpore ops that polyred computes by expansion into its primitives: the ops users
// write first (ReduceMean, ReLU, Sigmoid, Softmax, ...). The expansion is ordinary
// graph nodes, so it is fused like any other producer and shows in --dump=graph.
//
// Takes the op name, its operands and its axis attributes; emits the intermediate
// nodes through an ExpansionSink (the composite reader) and gives back the last node,
// which the reader adds under the op's declared output. Semantics (docs/format.md):
//   ReduceMean(x, axis, keep_dims)  ReduceSum / n (16-bit floats in float32)
//   ReLU(x)          Maximum(x, 0)            Square(x)   x * x
//   Sigmoid(x)       1 / (1 + Exp(-x))        Softplus(x) Log(1 + Exp(x))
//   GeLU(x)          0.5 x (1 + Tanh(sqrt(2/pi) (x + 0.044715 x^3)))  (MindSpore's)
//   Softmax(x, axis)     Exp(x - max) / sum(Exp(x - max))   over `axis` (default -1)
//   LogSoftmax(x, axis)  x - max - Log(sum(Exp(x - max)))
// Float math on float16/bfloat16 operands is done in float32 and rounded once at the
// end, as the frameworks do.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/composite_json.h"
#include "ir/graph.h"

namespace polyred {

// The shape of reducing `axes` (normalized) of `in`: kept as 1 with keepDims, else dropped.
Shape reducedShape(const Shape& in, const std::vector<int64_t>& axes, bool keepDims);

class ExpansionSink {
 public:
  virtual ~ExpansionSink() = default;
  virtual const Tensor& tensor(TensorId id) const = 0;
  virtual TensorId constant(Scalar value) = 0;              // a scalar constant
  virtual TensorId add(Node n, Shape shape, DType t) = 0;   // an intermediate tensor
};

// The node-making steps every expansion uses: nodes named after the source op, added
// through the sink. (frontend/composite_index_ops builds on it too.)
class ExpansionBuilder {
 public:
  ExpansionBuilder(ExpansionSink& sink, const std::string& op) : sink_(sink), op_(op) {}

  const Tensor& info(TensorId t) const { return sink_.tensor(t); }
  Node node(OpKind k, std::vector<TensorId> ins) const;
  TensorId add(Node n, Shape shape, DType t) { return sink_.add(std::move(n), std::move(shape), t); }
  // An elementwise node over operands of one dtype (numpy broadcasting); comparisons
  // and logical ops give bool, Select its values' dtype.
  TensorId apply(OpKind k, std::vector<TensorId> ins);
  TensorId constant(double v, DType t) { return sink_.constant(Scalar::convert(v, t)); }
  TensorId constant(Scalar v) { return sink_.constant(v); }  // exact: an int64 past 2^53 too
  TensorId cast(TensorId x, DType t);  // x itself when it already has dtype t
  // The dtype float math on t is done in (float32 for 16-bit floats, else t), and x in it.
  static DType computeType(DType t) { return t == DType::Float16 || t == DType::BFloat16 ? DType::Float32 : t; }
  TensorId inComputeType(TensorId x) { return cast(x, computeType(info(x).dtype)); }
  TensorId reshape(TensorId x, Shape shape) { return add(node(OpKind::Reshape, {x}), std::move(shape), info(x).dtype); }
  TensorId iota(const Shape& shape, int64_t axis, DType t = DType::Int64);  // the coordinate along `axis`
  // A built-in reduction of x over the normalized `axes`, in x's dtype.
  TensorId reduce(TensorId x, BuiltinCombiner c, const std::vector<int64_t>& axes, bool keepDims);
  // The row-major flat position within `extents` of each index tuple along the last
  // axis of `indices` (int32/int64, its last extent extents.size()), as int64 of
  // indices' shape without that axis; -1 where some component is outside its axis.
  TensorId flatIndex(TensorId indices, const Shape& extents);

 protected:
  ExpansionSink& sink_;
  std::string op_;
};

// An expansion that reads its op's attributes itself (the layer ops, the masked sums):
// errors name the file and the op.
class AttributedExpansion : public ExpansionBuilder, protected CompositeAttrAccess {
 public:
  AttributedExpansion(ExpansionSink& sink, const std::string& file, const std::string& op, const CompositeAttrs& attrs)
      : ExpansionBuilder(sink, op), file_(file), attrs_(attrs) {}

 protected:
  [[noreturn]] void fail(const std::string& why) const override;
  int64_t intAttr(const char* name, int64_t fallback) const;
  double floatAttr(const char* name, double fallback) const;
  bool boolAttr(const char* name) const;  // absent: false
  // Input `at` when there is one (a constant integer, as MindSpore passes an axis), else
  // the attribute `name` (an int or a one-element list), else `fallback` (none: required).
  int64_t intParameter(const char* name, const std::vector<TensorId>& ins, size_t at,
                       std::optional<int64_t> fallback = std::nullopt) const;

  std::string file_;
  const CompositeAttrs& attrs_;
};

struct ExpansionAttrs {
  std::vector<int64_t> axes;  // normalized; every axis when the attribute is absent or empty
  bool axisGiven = false;     // the op carried a non-empty "axis"
  bool keepDims = false;
};

// The ops this file expands, and whether `name` is one.
std::span<const std::string_view> expandedOpNames();
bool isExpandedOp(std::string_view name);

// The final node of the expansion of `name` (not yet added), its inputs emitted
// through `sink`. Throws Error (naming `op`) on a wrong operand count or dtype.
Node expandOp(std::string_view name, const std::vector<TensorId>& ins, const ExpansionAttrs& attrs,
              ExpansionSink& sink, const std::string& op);

// The shape the final node computes (elementwise: its operands broadcast).
Shape expandedShape(const Node& last, const ExpansionSink& sink);

}  // namespace polyred
