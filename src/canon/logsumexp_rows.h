// logsumexp over rows one block reduces: max first, then the sum of exponentials.
//
// Takes: a verified Graph and the partitioner's row-resident predicate. Gives: the same
// graph, except that every logsumexp reduction (the online tuple of
// ir/tuple_reduction.h, logSumExpTuple) whose canonical form is an x-reduce with rows
// that fit one block is written as
//     m = max(x) over the axes; z = (m is +-inf ? 0 : m);
//     lse = log(sum(exp(x - z))) + z
// in the tuple's float type (f32, f64 for f64), then cast and reshaped to the tuple's
// output. The partitioner makes that one row-resident kernel of two passes (the second
// re-reads the row from the L2), which costs fewer instructions per element than the
// online combine's compares and selects: logsumexp f16 [8192,32000] on the H100
// (2026-11-25) took 307.5 us online, 272.2 us in two passes. Edge values keep the
// tuple's answers: a row of -inf gives -inf, a +inf gives +inf, a NaN gives NaN.
// Longer rows (several blocks per row) keep the online tuple: one pass, one launch.
#pragma once

#include "canon/partition.h"
#include "ir/graph.h"

namespace polyred {

Graph splitLogSumExpRows(const Graph& g, const RowsFitOneBlock& rowsFitOneBlock);

}  // namespace polyred
