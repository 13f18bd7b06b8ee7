// logsumexp over rows one block reduces: max first, then the sum of exponentials.
//
// Takes: a verified Graph, the partitioner's row-resident predicate and which rows to
// split. Gives: the same graph, except that every logsumexp reduction (the online tuple
// of ir/tuple_reduction.h, logSumExpTuple, recognized by structure) whose canonical
// form is an x-reduce with rows that fit one block and that the policy splits is written as
//     m = max(x) over the axes; z = (m is +-inf ? 0 : m);
//     lse = log(sum(exp(x - z))) + z
// in the tuple's float type (f32, f64 for f64), then cast and reshaped to the tuple's
// output. The partitioner makes that one row-resident kernel of two passes (the second
// re-reads the row from the L1/L2). Edge values keep the tuple's answers: a row of -inf
// gives -inf, a +inf gives +inf, a NaN gives NaN. Other rows keep the online tuple: one
// pass, its lanes folded in closed form (codegen/lane_folds.h).
//
// Policy (SplitLogSumExpRows::Policy), measured on the H200 (docs/results/notes-2026-11-29.md;
// us, split against online): a logsumexp whose result feeds a pass over its own rows
// (softmax via logsumexp: exp(x - lse)) splits -- its kernel is row-resident anyway, and
// three staged passes took softmax via logsumexp f16 [4096,50257] 216.5 where the tuple's
// two took 231.7. Otherwise rows of 256 and 512 elements split (f16: 10.9 vs 13.2, 9.8
// vs 11.4 -- a short row pays mostly for the tuple's block combine, an exact Exp a step)
// and longer ones stay online: f16 1024 10.4 vs 10.5, f32 1024 16.1 vs 14.0, f16 4096
// 16.2 vs 15.7, f32 16384 49.8 vs 40.1, f16 [8192,32000] 148.6 vs 130.9, f16
// [4096,50257] 168.6 vs 117.2 -- each row read once instead of twice (on the H100,
// before the closed form, the tuple's lane tree made online the slower: 307.5 against
// 272.2 us for [8192,32000]).
#pragma once

#include "canon/partition.h"
#include "ir/graph.h"

namespace polyred {

// Which logsumexp rows that fit one block to split (the `lse` knob: auto, split, online).
enum class SplitLogSumExpRows { Policy, Always, Never };
// The longest rows (elements) the policy splits where the result feeds no row pass.
inline constexpr int64_t kLongestSplitLogSumExpRow = 512;

// Whether node n reduces with logsumexp's tuple (by structure, isLogSumExpTuple).
bool isLogSumExp(const Node& n);

Graph splitLogSumExpRows(const Graph& g, const RowsFitOneBlock& rowsFitOneBlock,
                         SplitLogSumExpRows which = SplitLogSumExpRows::Policy);

}  // namespace polyred
