// In-place outputs whose kernel cannot write straight into their input's buffer.
//
// Takes: a KernelPartition and its Graph. Gives: the same partition where each
// in-place output (Output::aliasOfInput: MindSpore's Assign into an input) that would
// change what a kernel still reads is staged -- written into a temporary of its own
// and copied into the input's buffer after the last launch (KernelPartition::staged,
// Program::copiesAfter). A kernel K writes output o over input x in place safely only
// if every read of x happens before the write of the same element, by the thread that
// writes it:
//   - no kernel after K reads x -- loads it, or copies it as a scatter's base before its
//     launch (it would see the new values; the graph means the old);
//   - a body store into x: K's body reads x only at the store's own offset, in the
//     store's pass or an earlier one (row-resident passes are separated by the block's
//     barrier), and K's epilogue does not read x;
//   - an epilogue store into x: K's body does not read x, its epilogue only at the
//     store's own offset (a moving average x = 0.9 x + 0.1 mean(y));
//   - a reduction's result or a scatter's sums into x: K does not read x at all (their
//     cross-block combine and atomics write x while other blocks still read it).
// Anything else -- a transpose, reverse or shift written back into its input, a
// reduction kernel reading x after an earlier kernel updated it -- is staged: correct
// at the price of the output's bytes copied once more.
#pragma once

#include "canon/kernel_plan.h"

namespace polyred {

void stageInPlaceHazards(KernelPartition& partition, const Graph& g);

}  // namespace polyred
