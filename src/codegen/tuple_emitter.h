// CUDA for tuple reductions (ir/tuple_reduction.h), used by the kernel emitter.
//
// Takes a tuple Reduction and its reduction number r in the kernel; gives the device
// code the kernel's statements call, in the device library's terms
// (device/polyred_reduce.cuh, "tuple accumulators"):
//   struct alignas(8) Tuple<r> { polyred_tuple, polyred_commutative; fields f0, f1, ... };
//   struct Combine<r> { Tuple<r> operator()(const Tuple<r>& a, const Tuple<r>& b) const; };
//   struct CombineLater<r> { ... }          where the tuple has a later-combine
//   Tuple<r> lift<r>(element inputs...);   the per-element tuple
//   finalize<r>(const Tuple<r>&)           the Reduce node's result (before its cast)
// Every expression is printed with the types of ir/tuple_reduction.h (each operand
// converted with emitCast), so the kernel computes what the CPU executor computes.
#pragma once

#include <string>
#include <vector>

#include "ir/reduction.h"

namespace polyred {

std::string tupleTypeName(int r);
// `holder`: the reduction whose Tuple<holder> accumulates r's tuple (r itself, or an
// earlier one with the same tuple and values: then only finalize<r> is emitted).
std::string tupleDefinitions(const Reduction& red, int r, int holder);
std::string tupleIdentityLiteral(const Reduction& red, int r);
// lift<r>(args...), `args` being compute-type expressions of the element inputs.
std::string tupleLiftCall(int r, const std::vector<std::string>& args);
std::string tupleFinalizeCall(int r, const std::string& total);
// sizeof(Tuple<r>) as the device compiler lays it out (fields in order, natural
// alignment, the struct 8-byte aligned).
int64_t tupleBytes(const Reduction& red);

}  // namespace polyred
