// Auto-tuning on the GPU and the use of its results.
//
// Takes: a graph and the compile options it would get. Gives (tuneGraph): the graph
// compiled with every candidate KernelConfig (tune/config_search.h, or the caller's
// list), the distinct programs among them launched on the same inputs, checked
// against the reference and timed (docs/method.md), and the entry to record in the
// tuning database (tune/tuning_db.h). applyTuning gives compile options the database's
// config for the graph on the current target, unless the user fixed one.
#pragma once

#include <string>
#include <vector>

#include "driver/gpu_run.h"
#include "driver/pipeline.h"
#include "tune/config_search.h"
#include "tune/tuning_db.h"

namespace polyred {

TuningKey tuningKeyOf(const Graph& g, const Target& target, bool deterministic);

struct TuneReport {
  TuningEntry entry;      // best config (the default when nothing beat it)
  int distinctPrograms = 0;
  int failedVariants = 0;  // variants whose result did not match (never chosen)
  bool improved = false;   // entry.config is not the default
  // Every distinct program timed, the default first: the first config giving it and
  // its time (nullopt: wrong result).
  std::vector<MeasuredConfig> measured;
};

// Relative margin a config must beat the default by to be recorded (timing noise).
constexpr double kTuningNoise = 0.03;

// `candidates`: the configs to time beside the default; empty: the built-in grid of
// tune/config_search.h (candidateConfigs).
TuneReport tuneGraph(const Graph& g, const CompileOptions& base, const GpuRunOptions& run,
                     const std::vector<KernelConfig>& candidates = {});

// The candidates tuneGraph times: the default config's program first, then each
// distinct program the candidate configs give (by kernel sources and launch shapes),
// with the configs giving it, in candidate order. Compiled on up to `threads` threads
// (the compiles are independent); the same result for any count.
struct TuneCandidates {
  std::vector<CompiledGraph> programs;
  std::vector<std::vector<KernelConfig>> configsOf;
};
TuneCandidates compileTuneCandidates(const Graph& g, const CompileOptions& base, unsigned threads,
                                     const std::vector<KernelConfig>& candidates = {});

// Sets options.config from `db` for `g` when an entry exists; returns whether it did.
bool applyTuning(const Graph& g, const TuningDb& db, CompileOptions& options);

}  // namespace polyred
