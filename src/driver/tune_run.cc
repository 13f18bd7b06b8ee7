#include "driver/tune_run.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <optional>
#include <thread>

#include "canon/logsumexp_rows.h"
#include "runtime/kernel_cache.h"
#include "support/parallel.h"
#include "poly/transpose_tiling.h"
#include "tune/config_search.h"

namespace polyred {

namespace {

std::string utcNow() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  return text;
}

// What decides a variant's speed: its kernels' sources and launch shapes.
std::string fingerprint(const CompiledGraph& c) {
  std::string f;
  for (const KernelSpec& k : c.program.kernels)
    f += k.source + "|" + std::to_string(k.launch.grid[0]) + "," + std::to_string(k.launch.grid[1]) + "," +
         std::to_string(k.launch.block[0]) + "," + std::to_string(k.launch.block[1]) + "\n";
  return sha256Hex(f);
}

bool hasReduction(const CompiledGraph& c) {
  for (const KernelPlan& k : c.partition.kernels)
    if (k.form != CanonicalForm::Elementwise) return true;
  return false;
}

bool hasRowResidentKernel(const CompiledGraph& c) {
  for (const KernelPlan& k : c.partition.kernels)
    if (k.passes() > 1) return true;
  return false;
}

// Whether an elementwise kernel transposes (tiles could take it: poly/transpose_tiling.h).
bool hasTransposingKernel(const CompiledGraph& c, const Target& target) {
  for (const KernelPlan& k : c.partition.kernels)
    if (!chooseTransposeTiling(k, KernelConfig::parse("transpose=on", "tune"), target.launchPolicy()).empty())
      return true;
  return false;
}

// Whether the graph reduces with logsumexp's tuple (its rows may split: the `lse` knob).
bool hasLogSumExp(const Graph& g) { return std::any_of(g.nodes.begin(), g.nodes.end(), isLogSumExp); }

}  // namespace

TuningKey tuningKeyOf(const Graph& g, const Target& target, bool deterministic) {
  return TuningKey{sha256Hex(g.toString()), target.name, target.ccMajor, target.ccMinor, deterministic};
}

TuneCandidates compileTuneCandidates(const Graph& g, const CompileOptions& base, unsigned threads,
                                     const std::vector<KernelConfig>& candidates) {
  CompileOptions o = base;
  o.config = KernelConfig{};
  TuneCandidates t;
  t.programs.push_back(compileGraph(g, o));
  t.configsOf = {{o.config}};
  const std::vector<KernelConfig> configs =
      !candidates.empty() ? candidates
                          : candidateConfigs(hasReduction(t.programs[0]), hasRowResidentKernel(t.programs[0]),
                                             hasTransposingKernel(t.programs[0], base.target), hasLogSumExp(g));
  std::vector<std::optional<CompiledGraph>> compiled(configs.size());
  parallelFor(configs.size(), threads, [&](size_t k) {
    CompileOptions ok = base;
    ok.config = configs[k];
    compiled[k] = compileGraph(g, ok);
  });
  std::map<std::string, size_t> seen = {{fingerprint(t.programs[0]), 0}};
  for (size_t k = 0; k < configs.size(); ++k) {
    auto [it, fresh] = seen.emplace(fingerprint(*compiled[k]), t.programs.size());
    if (fresh) {
      t.programs.push_back(std::move(*compiled[k]));
      t.configsOf.emplace_back();
    }
    t.configsOf[it->second].push_back(configs[k]);
  }
  return t;
}

TuneReport tuneGraph(const Graph& g, const CompileOptions& base, const GpuRunOptions& run,
                     const std::vector<KernelConfig>& asked) {
  TuneCandidates candidates = compileTuneCandidates(g, base, std::thread::hardware_concurrency(), asked);
  const std::vector<CompiledGraph>& programs = candidates.programs;
  const std::vector<std::vector<KernelConfig>>& configsOf = candidates.configsOf;
  std::vector<const CompiledGraph*> variants;
  for (const CompiledGraph& p : programs) variants.push_back(&p);
  std::vector<std::optional<double>> micros = timeVariants(variants, run);

  TuneReport r;
  r.distinctPrograms = static_cast<int>(programs.size());
  std::vector<MeasuredConfig>& measured = r.measured;
  for (size_t k = 0; k < programs.size(); ++k) {
    measured.push_back({configsOf[k].front(), micros[k]});
    if (!micros[k]) ++r.failedVariants;
  }
  if (!micros[0]) throw InternalError("tuning " + g.name + ": the default variant's result does not match the reference");
  const size_t best = pickBest(measured, kTuningNoise);
  r.improved = best != 0;
  int tried = 0;
  for (const auto& configs : configsOf) tried += static_cast<int>(configs.size());
  r.entry = TuningEntry{measured[best].config, *micros[0], *micros[best], tried, utcNow()};
  return r;
}

bool applyTuning(const Graph& g, const TuningDb& db, CompileOptions& options) {
  auto entry = db.find(tuningKeyOf(g, options.target, options.deterministic));
  if (!entry) return false;
  options.config = entry->config;
  return true;
}

}  // namespace polyred
