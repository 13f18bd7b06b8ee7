// Auto-tuning on the GPU and the use of its results.
//
// Takes: a graph and the compile options it would get. Gives (tuneGraph): the graph
// compiled with every candidate KernelConfig (tune/config_search.h), the distinct
// programs among them launched on the same inputs, checked against the reference and
// timed (docs/method.md), and the entry to record in the tuning database
// (tune/tuning_db.h). applyTuning gives compile options the database's config for
// the graph on the current target, unless the user fixed one.
#pragma once

#include <string>
#include <vector>

#include "driver/gpu_run.h"
#include "driver/pipeline.h"
#include "tune/tuning_db.h"

namespace polyred {

TuningKey tuningKeyOf(const Graph& g, const Target& target, bool deterministic);

struct TuneReport {
  TuningEntry entry;      // best config (the default when nothing beat it)
  int distinctPrograms = 0;
  int failedVariants = 0;  // variants whose result did not match (never chosen)
  bool improved = false;   // entry.config is not the default
};

// Relative margin a config must beat the default by to be recorded (timing noise).
constexpr double kTuningNoise = 0.03;

TuneReport tuneGraph(const Graph& g, const CompileOptions& base, const GpuRunOptions& run);

// Sets options.config from `db` for `g` when an entry exists; returns whether it did.
bool applyTuning(const Graph& g, const TuningDb& db, CompileOptions& options);

}  // namespace polyred
