#include "frontend/composite_tuple_ops.h"

#include <algorithm>
#include <array>

#include "frontend/builder.h"
#include "ir/tuple_reduction.h"
#include "support/error.h"

namespace polyred {

namespace {
constexpr std::array<std::string_view, 4> kTupleOps = {"Argmax", "Argmin", "ArgMaxWithValue", "ArgMinWithValue"};
}  // namespace

std::span<const std::string_view> tupleOpNames() { return kTupleOps; }

bool isTupleOp(std::string_view name) {
  return std::find(kTupleOps.begin(), kTupleOps.end(), name) != kTupleOps.end();
}

std::vector<TupleOpOutput> expandTupleOp(std::string_view name, const std::vector<TensorId>& ins,
                                         const TupleOpAttrs& attrs, ExpansionSink& sink, const std::string& op) {
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

  Node iota;
  iota.kind = OpKind::Iota;
  iota.axes = {axis};
  const TensorId j = sink.add(std::move(iota), x.shape, index);
  auto tuple = argExtremumTuple(max, x.dtype, index);
  Shape shape;
  for (size_t d = 0; d < x.shape.size(); ++d)
    if (static_cast<int64_t>(d) != axis) shape.push_back(x.shape[d]);
    else if (attrs.keepDims) shape.push_back(1);

  std::vector<TupleOpOutput> outs;
  for (int result = 0; result < (withValue ? 2 : 1); ++result) {
    Node n;
    n.kind = OpKind::Reduce;
    n.inputs = {ins[0], j};
    n.axes = {axis};
    n.keepDims = attrs.keepDims;
    Reduction r;
    r.name = tuple->name;
    r.tuple = tuple;
    r.result = result;
    r.accType = tupleResultType(*tuple, result);
    n.reduction = std::move(r);
    outs.push_back({std::move(n), shape, result == 0 ? index : x.dtype});
  }
  return outs;
}

}  // namespace polyred
