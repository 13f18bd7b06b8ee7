// The search space of `polyred tune` and the rule that picks a winner.
//
// Takes: whether the graph has a reduction kernel; then the measured times of its
// candidates. Gives: the KernelConfigs to try (the analytic default first) and the
// index of the one to keep. The default is kept unless another config is faster by
// more than the noise margin, so a tuning entry only exists where it measurably helps.
#pragma once

#include <optional>
#include <vector>

#include "poly/kernel_config.h"

namespace polyred {

// The analytic default first. Elementwise-only graphs: block size (256, 512) and
// lanes on or off. Reductions also try how many items each thread takes along the
// reduced axis (4..64: how many blocks split a row or column). Graphs with a
// row-resident kernel also try its row cache (cache=on, blocks of 512 and 1024 threads),
// its pass loops unrolled by 1, 2 and 4, and no cache hints (evict=off). Graphs with
// an elementwise kernel that transposes also try it through shared-memory tiles and
// without (transpose=on, off): auto's rule rests on 25 measured transposes. Graphs with
// a logsumexp reduction try its rows split and online (lse=split, online): auto's rule
// rests on twelve measured kernels (canon/logsumexp_rows.h).
std::vector<KernelConfig> candidateConfigs(bool hasReduction, bool rowResident = false, bool transposes = false,
                                           bool logSumExp = false);

struct MeasuredConfig {
  KernelConfig config;
  std::optional<double> micros;  // nullopt: the variant failed (compile, check)
};

// Index of the config to keep: the fastest, if it beats the first (the default) by
// more than `noise` (relative, e.g. 0.03); else 0. Requires measured[0] to have a time.
size_t pickBest(const std::vector<MeasuredConfig>& measured, double noise);

}  // namespace polyred
