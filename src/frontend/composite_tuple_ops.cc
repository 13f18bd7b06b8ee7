#include "frontend/composite_tuple_ops.h"

#include <algorithm>
#include <array>

#include "frontend/builder.h"
#include "ir/tuple_reduction.h"
#include "support/error.h"
#include "support/printable.h"

namespace polyred {

namespace {
constexpr std::array<std::string_view, 5> kTupleOps = {"Argmax", "Argmin", "ArgMaxWithValue", "ArgMinWithValue",
                                                       "TupleReduce"};
// The Reduce node of result `result` of tuple `t` over `ins` (not yet added).
Node tupleResultNode(const std::shared_ptr<const TupleReduction>& t, int result, std::vector<TensorId> ins,
                     std::vector<int64_t> axes, bool keepDims) {
  Node n;
  n.kind = OpKind::Reduce;
  n.inputs = std::move(ins);
  n.axes = std::move(axes);
  n.keepDims = keepDims;
  Reduction r;
  r.name = t->name;
  r.tuple = t;
  r.result = result;
  r.accType = tupleResultType(*t, result);
  n.reduction = std::move(r);
  return n;
}

}  // namespace

std::span<const std::string_view> tupleOpNames() { return kTupleOps; }

bool isTupleOp(std::string_view name) {
  return std::find(kTupleOps.begin(), kTupleOps.end(), name) != kTupleOps.end();
}

std::vector<TupleOpOutput> expandTupleOp(std::string_view name, const std::vector<TensorId>& ins,
                                         const TupleOpAttrs& attrs, ExpansionSink& sink, const std::string& op) {
  POLYRED_CHECK(name != "TupleReduce", "TupleReduce goes through expandDeclaredTuple");
  if (ins.size() != 1) throw Error("", op, "takes 1 input (the tensor to reduce), got " + std::to_string(ins.size()));
  const Tensor x = sink.tensor(ins[0]);  // a copy: adding the Iota may move the tensors
  const bool withValue = name == "ArgMaxWithValue" || name == "ArgMinWithValue";
  const bool max = name == "Argmax" || name == "ArgMaxWithValue";
  if (x.shape.empty()) throw Error("", op, "needs an input of rank 1 or more");
  const int64_t axis = normalizeAxes({attrs.axis.value_or(withValue ? 0 : -1)}, x.shape.size(), op).at(0);
  if (withValue && attrs.outputType) throw Error("", op, std::string(name) + " has no output_type attribute");
  if (!withValue && attrs.keepDims) throw Error("", op, std::string(name) + " has no keep_dims attribute");
  const DType index = attrs.outputType.value_or(DType::Int32);
  if (index != DType::Int32 && index != DType::Int64)
    throw Error("", op, "output_type must be int32 or int64, got " + std::string(dtypeName(index)));
  if (index == DType::Int32 && x.shape[static_cast<size_t>(axis)] > (int64_t{1} << 31))
    throw Error("", op, "an axis of more than 2^31 elements needs output_type int64");

  auto tuple = argExtremumTuple(max, x.dtype, index, x.shape[static_cast<size_t>(axis)]);
  Node iota;
  iota.kind = OpKind::Iota;
  iota.axes = {axis};
  const TensorId j = sink.add(std::move(iota), x.shape, tuple->inputs[1]);
  Shape shape;
  for (size_t d = 0; d < x.shape.size(); ++d)
    if (static_cast<int64_t>(d) != axis) shape.push_back(x.shape[d]);
    else if (attrs.keepDims) shape.push_back(1);

  std::vector<TupleOpOutput> outs;
  for (int result = 0; result < (withValue ? 2 : 1); ++result)
    outs.push_back({tupleResultNode(tuple, result, {ins[0], j}, {axis}, attrs.keepDims), shape,
                    result == 0 ? index : x.dtype});
  return outs;
}

std::vector<TupleOpOutput> expandDeclaredTuple(const std::shared_ptr<const TupleReduction>& t,
                                               const std::vector<TensorId>& ins, const std::vector<int64_t>& axes,
                                               bool keepDims, ExpansionSink& sink, const std::string& op) {
  if (ins.size() != t->inputs.size())
    throw Error("", op, "tuple reduction " + quotedName(t->name) + " takes " + std::to_string(t->inputs.size()) +
                            " input(s), got " + std::to_string(ins.size()));
  const Shape shape = sink.tensor(ins[0]).shape;
  for (size_t k = 0; k < ins.size(); ++k) {
    const Tensor& x = sink.tensor(ins[k]);
    if (x.dtype != t->inputs[k])
      throw Error("", op, "input " + std::to_string(k) + " is " + std::string(dtypeName(x.dtype)) + ", tuple reduction " +
                              quotedName(t->name) + " takes " + std::string(dtypeName(t->inputs[k])));
    if (x.shape != shape) throw Error("", op, "the inputs of a tuple reduction must have one shape");
  }
  Shape out;
  for (size_t d = 0; d < shape.size(); ++d)
    if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) == axes.end()) out.push_back(shape[d]);
    else if (keepDims) out.push_back(1);
  std::vector<TupleOpOutput> outs;
  for (int result = 0; result < static_cast<int>(t->results.size()); ++result) {
    outs.push_back({tupleResultNode(t, result, ins, axes, keepDims), out, tupleResultType(*t, result)});
  }
  return outs;
}

}  // namespace polyred
