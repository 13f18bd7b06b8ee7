// CUDA for tuple reductions (ir/tuple_reduction.h), used by the kernel emitter.
//
// Takes a tuple Reduction and its reduction number r in the kernel; gives the device
// code the kernel's statements call, in the device library's terms
// (device/polyred_block_reduce.cuh, "tuple accumulators"):
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

#include "codegen/lane_folds.h"
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

// The fold of one vector's V lifted lanes of tuple reduction r into the thread's
// accumulator (codegen/lane_folds.h). LogSumExp: the closed form
// pr_fold_logsumexp_lanes over the lanes' element inputs (-inf outside the row).
// Tree: lanes l and l+s combined for s = 1, 2, 4, ..., log2(V) + 1 dependent
// combines per vector instead of V, so a combine as long as Welford's division or
// logsumexp's Exp no longer serializes the loop; the root joins the accumulator with
// Combine<r>. In a tree node lanes [l, l+s) come before lanes [l+s, l+2s), so a tuple
// with a later-combine (argmax) folds whole vectors with CombineLater<r>. Lanes masked
// outside the row (`whole`, `lo`, `hi` in scope) join as the identity, which needs the
// full combine. Only commutative tuples of x- and all-reduces get lanes
// (poly/vectorize.h); the CPU executor folds in the same order.
struct TupleLaneTree {
  int reduction = 0;
  int width = 1;
  bool masked = false;            // rows off the vector boundary
  bool later = false;             // the tuple has a later-combine
  std::string tupleType;          // Tuple<holder>
  std::string laneElement;        // lane l's lifted tuple, an expression of `l`
  std::string identity;           // the identity literal
  std::string accumulator;        // the thread's accumulator
  TupleLaneFold fold = TupleLaneFold::Tree;
  std::string laneInput;          // LogSumExp: lane l's element input as a float, an expression of `l`
};
std::string tupleLaneTree(const TupleLaneTree& t, const std::string& indent);

}  // namespace polyred
