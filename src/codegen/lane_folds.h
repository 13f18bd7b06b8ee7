// How one thread's V lifted lanes of a tuple reduction join its accumulator.
//
// Takes: a TupleReduction. Gives: the fold its lanes take in the kernels, and the host's
// mirror of it for the CPU executor:
//   Tree       any tuple: lanes l and l + s combined for s = 1, 2, 4, ... (whole vectors
//              with the tuple's later-combine where it has one; lanes outside the row
//              are the identity), the root joined to the accumulator with the combine
//              (codegen/tuple_emitter.h, tupleLaneTree);
//   LogSumExp  logsumexp's online tuple with float32 fields (isLogSumExpTuple): the
//              closed form of device/polyred_lane_folds.cuh, pr_fold_logsumexp_lanes --
//              the lanes' maximum, the sum of their exponentials relative to it, one
//              join -- V + 2 Exps a vector where the tree's combines take V - 1 Exps,
//              each with its compares and selects.
// Measured on the H200 (docs/results/notes-2026-11-29.md; us, tree -> closed form): rows of
// 2M halves 67.2 -> 42.0; with canon/logsumexp_rows's policy, logsumexp f16
// [8192,32000] 148.6 (split rows) -> 130.9 and cross-entropy 179.1 -> 143.7.
#pragma once

#include <span>

#include "canon/kernel_plan.h"
#include "ir/tuple_program.h"

namespace polyred {

enum class TupleLaneFold { Tree, LogSumExp };

// The fold tuple t can take.
TupleLaneFold laneFoldOf(const TupleReduction& t);
// The fold reduction r of `plan` takes: its tuple's (Tree for scalar reductions).
TupleLaneFold laneFoldFor(const KernelPlan& plan, size_t r);

// Joins lanes (V lifted tuples, the identity where a lane is outside the row) to `acc`
// as the kernel does. `whole`: every lane inside the row (the tree's later-combine).
// The host computes the closed form's exponentials exactly (the kernel's MUFU ones are
// within the float32 tolerance of them) and in the kernel's order.
void foldLanesOnHost(TupleLaneFold fold, const TupleReduction& t, TuplePrograms& programs, std::span<TupleValue> lanes,
                     bool whole, TupleValue& acc);

}  // namespace polyred
