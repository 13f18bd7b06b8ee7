#include "tune/config_search.h"

#include "support/error.h"

namespace polyred {

std::vector<KernelConfig> candidateConfigs(bool hasReduction, bool rowResident, bool transposes, bool logSumExp) {
  // Each distinct program costs an NVRTC compile (~0.3 s) and a timing: the grid is
  // kept to the knobs that moved times on the H100 (docs/design/tuning.md, "Code variants").
  std::vector<KernelConfig> configs = {KernelConfig{}};
  auto add = [&](KernelConfig c) {
    for (const KernelConfig& seen : configs)
      if (seen == c) return;
    configs.push_back(c);
  };
  for (int threads : {256, 512})
    for (int vector : {1, 16})
      for (int items : hasReduction ? std::vector<int>{8, 32} : std::vector<int>{8}) add({threads, items, vector});
  if (hasReduction) {
    for (int items : {4, 16, 64}) add({256, items, 16});
    for (int unroll : {8, 16}) add({256, KernelConfig::kAuto, KernelConfig::kAuto, unroll});
    // Fewer blocks, each with more loads in flight: var_mean f32 [32,64,56,56] over
    // (0,2,3) took 16.6 us against the default's 17.6 (H100, 2026-11-26).
    add({256, 16, 16, 16});
    // The other way to combine split blocks (atomics or partials; binding.cc,
    // combineThroughPartials): the policy's rule rests on ten measured kernels.
    for (CombineMode combine : {CombineMode::Atomic, CombineMode::Partials}) {
      KernelConfig c;
      c.combine = combine;
      add(c);
    }
    // One block a row, no cross-block combine, where the policy's rule still splits
    // (binding.cc, unsplitRows: rows with masked lanes past 4 vectors a thread, fewer than
    // 16 rows): blocks of 1024 and 512 took 6-16% off rows of 5000-32000 elements that the
    // rule now takes, f16 [3,32000] 14% (H200, 2026-11-30).
    for (int threads : {512, 1024}) {
      KernelConfig c;
      c.threadsPerBlock = threads;
      c.splitBlocks = 1;
      add(c);
    }
  }
  if (rowResident) {  // the row cache, with blocks of one row and of two (codegen/row_cache.h)
    for (int threads : {512, 1024})
      add({threads, KernelConfig::kAuto, KernelConfig::kAuto, KernelConfig::kAuto, RowCacheMode::On});
    // The pass loops' unroll: the default's rule (poly/vectorize, loopUnrollFor) rests on
    // six measured long-row kernels.
    for (int unroll : {1, 2, 4}) add({256, KernelConfig::kAuto, KernelConfig::kAuto, unroll});
    // Without the evict-first hints the default gives row-resident kernels (poly/cache_hints.h):
    // measured on four kernels only.
    KernelConfig plain;
    plain.cacheHints = CacheHintMode::Off;
    add(plain);
    // The row stage off and everywhere it can (codegen/row_stage.h): its policy rests on
    // ten measured kernels.
    for (RowStageMode stage : {RowStageMode::Off, RowStageMode::On}) {
      KernelConfig c;
      c.rowStage = stage;
      add(c);
    }
    // The row in registers where the policy leaves it out (two passes, staged rows),
    // and no cache where the policy keeps it: its rule rests on eleven measured kernels.
    for (RowCacheMode cache : {RowCacheMode::Registers, RowCacheMode::Off}) {
      KernelConfig c;
      c.rowCache = cache;
      add(c);
    }
  }
  if (transposes) {  // tiles everywhere a load transposes, and nowhere (poly/transpose_tiling.h)
    for (TransposeTileMode mode : {TransposeTileMode::On, TransposeTileMode::Off}) {
      KernelConfig c;
      c.transposeTiles = mode;
      add(c);
    }
  }
  if (logSumExp) {  // rows as max-then-sum and as the online tuple (canon/logsumexp_rows.h)
    for (LogSumExpRowsMode mode : {LogSumExpRowsMode::Split, LogSumExpRowsMode::Online}) {
      KernelConfig c;
      c.logSumExpRows = mode;
      add(c);
    }
  }
  return configs;
}

size_t pickBest(const std::vector<MeasuredConfig>& measured, double noise) {
  POLYRED_CHECK(!measured.empty() && measured[0].micros, "the default config has no time");
  size_t best = 0;
  for (size_t k = 1; k < measured.size(); ++k)
    if (measured[k].micros && *measured[k].micros < *measured[best].micros) best = k;
  return *measured[best].micros < *measured[0].micros * (1 - noise) ? best : 0;
}

}  // namespace polyred
