#include "codegen/accumulator_names.h"

#include <vector>

#include "codegen/cuda_expr.h"
#include "codegen/tuple_emitter.h"
#include "ir/tuple_reduction.h"

namespace polyred {

std::string AccumulatorNames::accType(size_t r) const {
  return tuple(r) ? tupleTypeName(static_cast<int>(holder(r))) : computeType(p_.reductions[r].reduction.accType);
}

std::string AccumulatorNames::identity(size_t r) const {
  const Reduction& red = p_.reductions[r].reduction;
  return tuple(r) ? tupleIdentityLiteral(red, static_cast<int>(r)) : emitLiteral(red.identity);
}

std::string AccumulatorNames::result(size_t r, const std::string& total) const {
  const ReductionOutput& ro = p_.reductions[r];
  return emitCast(tuple(r) ? tupleFinalizeCall(static_cast<int>(r), total) : total, ro.reduction.accType, ro.outType);
}

std::string AccumulatorNames::element(size_t r, const std::string& prefix, const std::string& suffix) const {
  const ReductionOutput& ro = p_.reductions[r];
  if (tuple(r)) {
    std::vector<std::string> args;
    for (int v : ro.values) args.push_back(prefix + std::to_string(v) + suffix);
    return tupleLiftCall(static_cast<int>(r), args);
  }
  return emitCast(prefix + std::to_string(ro.value) + suffix, p_.body[static_cast<size_t>(ro.value)].dtype,
                  ro.reduction.accType);
}

std::string AccumulatorNames::laneFold(size_t r, int width, bool masked, const std::string& indent) const {
  const ReductionOutput& ro = p_.reductions[r];
  const int input = ro.values.at(0);
  return tupleLaneTree({.reduction = static_cast<int>(r), .width = width, .masked = masked,
                        .later = ro.reduction.tuple->hasCombineLater(), .tupleType = accType(r),
                        .laneElement = element(r, "v", "[l]"), .identity = identity(r), .accumulator = acc(r, 0),
                        .fold = laneFoldFor(p_, r),
                        .laneInput = emitCast("v" + std::to_string(input) + "[l]",
                                              p_.body[static_cast<size_t>(input)].dtype, DType::Float32)},
                       indent);
}

std::string AccumulatorNames::functor(size_t r) const {
  const Reduction& red = p_.reductions[r].reduction;
  BuiltinCombiner c = red.builtin();
  if (c != BuiltinCombiner::None) return builtinFunctor(c, accType(r));
  return "Combine" + std::to_string(r);
}

bool AccumulatorNames::orderedTree(size_t r) const {
  const Reduction& red = p_.reductions[r].reduction;
  return red.isTuple() && !red.tuple->commutative;
}

std::string AccumulatorNames::row(const std::string& i, int lane) const {
  if (lanes_ == 1) return i;
  return "(" + std::to_string(lanes_) + " * (" + i + ") + " + std::to_string(lane) + ")";
}

}  // namespace polyred
