// polyred: command-line driver. `polyred help` and `polyred help COMMAND` describe the
// commands, options, environment variables and exit codes (tools/cli.cc holds the
// option tables); this file runs the commands.
//
// Exit codes (driver/outcome.h): 0 success, 1 a result did not match, 2 bad input or
// usage (including sub-graphs outside polyred's scope, checks over their memory or
// time budget, and `run` without a GPU), 3 internal error.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <isl/version.h>
#include <nlohmann/json.hpp>
#include <nvrtc.h>

#include "cli.h"
#include "driver/artifacts.h"
#include "driver/corpus.h"
#include "driver/cpu_check.h"
#include "driver/gpu_run.h"
#include "driver/outcome.h"
#include "driver/pipeline.h"
#include "driver/shard_check.h"
#include "driver/shard_run.h"
#include "driver/tune_run.h"
#include "frontend/composite_reader.h"
#include "runtime/executor.h"
#include "runtime/kernel_cache.h"
#include "runtime/nvrtc.h"
#include "runtime/register_fit.h"
#include "support/budget.h"
#include "support/error.h"
#include "support/printable.h"

#ifndef POLYRED_VERSION
#define POLYRED_VERSION "unknown"
#endif
#include "git_hash.h"  // POLYRED_GIT_HASH, written at build time

using namespace polyred;
using cli::Args;

namespace {

std::string versionText() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  std::string why;
  bool gpu = gpuAvailable(&why);
  std::string isl = isl_version();
  isl.erase(isl.find_last_not_of(" \n") + 1);
  return std::string("polyred ") + POLYRED_VERSION + " (git " + POLYRED_GIT_HASH + ")\nNVRTC " +
         std::to_string(major) + "." + std::to_string(minor) + ", CUDA headers " + std::to_string(CUDA_VERSION) +
         "\n" + isl + "\nGPU: " + (gpu ? currentTarget().name : "none (" + why + ")") + "\n";
}

// A composite file, or standard input for "-".
Graph readGraph(const std::string& file) {
  if (file != "-") return readCompositeFile(file);
  std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  return parseComposite(text, "<stdin>");
}

std::string label(const std::string& file) { return file == "-" ? "<stdin>" : printable(file, 256); }

class Timings {
 public:
  explicit Timings(bool on) : on_(on) {}
  std::map<std::string, double>* sink() { return on_ ? &ms_ : nullptr; }
  template <class F>
  auto measure(const std::string& stage, F&& f) {
    auto start = std::chrono::steady_clock::now();
    auto result = f();
    if (on_) ms_[stage] += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return result;
  }
  void print(const std::string& file) const {
    if (!on_) return;
    std::cerr << "polyred: " << label(file) << ": stage times:";
    for (const auto& [stage, ms] : ms_) std::cerr << " " << stage << " " << std::fixed << std::setprecision(2) << ms << " ms";
    std::cerr << "\n";
  }

 private:
  bool on_;
  std::map<std::string, double> ms_;
};

Target targetFromFlags(const Args& a) {
  Target t;
  std::string arch = a.get("arch", "");
  if (!arch.empty()) {
    int cc = std::stoi(arch.substr(3));  // validated by cli::parse
    t.ccMajor = cc / 10;
    t.ccMinor = cc % 10;
    t.name = arch;
  }
  t.smCount = static_cast<int>(a.integer("sms", t.smCount));
  t.l2Bytes = a.integer("l2-mib", t.l2Bytes >> 20) << 20;
  return t;
}

CompileOptions compileOptions(const Args& a, const Target& target, Timings& timings) {
  CompileOptions o;
  o.target = target;
  o.deterministic = a.has("deterministic");
  o.horizontalFusion = !a.has("no-horizontal-fusion");
  o.fastExp = a.has("fast-exp");
  if (a.has("config")) o.config = KernelConfig::parse(a.get("config", ""), "--config");
  std::stringstream stages(a.get("dump", ""));
  for (std::string stage; std::getline(stages, stage, ',');) o.dump.insert(stage);
  o.dumpTo = &std::cout;
  o.stageMillis = timings.sink();
  return o;
}

ResourceLimits resourceLimits(const Args& a) {
  ResourceLimits l;
  if (a.has("max-memory")) l.maxMemoryBytes = parseByteSize(a.get("max-memory", ""));
  l.timeoutSeconds = static_cast<double>(a.integer("timeout", 300));
  return l;
}

// Runs `body` for one file, turning exceptions into messages and exit codes.
template <class F>
Exit guarded(const std::string& file, F&& body) {
  return runGuarded(file == "-" ? "<stdin>" : file, std::cerr, std::forward<F>(body));
}

// The tuning database, read once per process; its warnings go to stderr once.
const TuningDb& tuningDb() {
  static const TuningDb db = [] {
    std::vector<std::string> warnings;
    TuningDb loaded = TuningDb::load(TuningDb::defaultPath(), warnings);
    for (const std::string& w : warnings) std::cerr << "polyred: warning: " << printable(w, 400) << "\n";
    return loaded;
  }();
  return db;
}

// Compile options for `g`: the flags, and the tuned config of the graph on this target
// unless --config or --no-tune-db says otherwise.
CompileOptions optionsFor(const Graph& g, const Args& a, const Target& target, Timings& timings) {
  CompileOptions o = compileOptions(a, target, timings);
  if (!a.has("config") && !a.has("no-tune-db") && applyTuning(g, tuningDb(), o) && a.has("verbose"))
    std::cerr << "polyred: tuned config " << o.config.toString() << "\n";
  return o;
}

CompiledGraph compileFile(const std::string& file, const Args& a, const Target& target, Timings& timings) {
  Graph g = timings.measure("parse", [&] { return readGraph(file); });
  return compileGraph(g, optionsFor(g, a, target, timings));
}

void printLaunch(const CompiledGraph& c) {
  for (const KernelSpec& s : c.program.kernels) {
    std::cout << "// launch " << s.name << ": grid (" << s.launch.grid[0] << "," << s.launch.grid[1] << ","
              << s.launch.grid[2] << ") block (" << s.launch.block[0] << "," << s.launch.block[1] << ","
              << s.launch.block[2] << ")";
    int64_t ws = 0;
    for (const auto& w : s.workspaces) ws += w.bytes;
    if (ws) std::cout << ", workspace " << ws << " bytes (restored by every launch)";
    std::cout << "\n";
  }
}

Exit cmdCompile(const Args& a) {
  Exit worst = Exit::Ok;
  Target target = targetFromFlags(a);
  for (const std::string& file : a.files)
    worst = std::max(worst, guarded(file, [&] {
      Timings timings(a.has("verbose"));
      CompiledGraph c = compileFile(file, a, target, timings);
      std::cout << "// " << label(file) << ": " << c.program.kernels.size() << " kernel(s)\n";
      printLaunch(c);
      if (!a.has("dump"))
        for (const KernelSpec* s : compiledKernels(c.program)) std::cout << s->source << "\n";
      if (a.has("output")) {
        std::filesystem::path dir = a.get("output", "");
        if (a.files.size() > 1) dir /= std::filesystem::path(file == "-" ? "stdin" : file).stem();
        ArtifactOptions o;
        o.testData = a.has("test-data");
        o.seed = static_cast<uint64_t>(a.integer("seed", 1));
        timings.measure("artifacts", [&] {
          writeArtifacts(c, compileOptions(a, target, timings), dir, o);
          return true;
        });
        std::cout << "// artifacts: " << printable(dir.string()) << "/manifest.json, " << c.program.kernels.size()
                  << " kernel(s) as .cu and .cubin for " << target.name << (o.testData ? ", test data" : "") << "\n";
      }
      if (a.has("nvrtc"))
        for (const KernelSpec* s : compiledKernels(c.program)) {
          const RegisterFit fit = timings.measure("nvrtc", [&] {
            return fitRegisters(*s, target.ccMajor, target.ccMinor, uncachedNvrtc());
          });
          const std::string resources = fit.describe(s->launch.threadsPerBlock());
          std::cout << "// NVRTC: " << s->name << " -> " << fit.cubin->size() << " bytes of CUBIN for " << target.name
                    << (resources.empty() ? "" : ", " + resources) << "\n";
        }
      timings.print(file);
      return Exit::Ok;
    }));
  return worst;
}

// check --shard: the CPU simulation of the sharded run (driver/shard_check.h).
Exit cmdCheckSharded(const Args& a) {
  Exit worst = Exit::Ok;
  for (const std::string& file : a.files)
    worst = std::max(worst, guarded(file, [&] {
      Graph g = readGraph(file);
      ShardSpec spec{static_cast<int>(a.integer("ranks", 1)), parseShardText(a.get("shard", ""))};
      ShardCheckOptions o;
      o.seed = static_cast<uint64_t>(a.integer("seed", 1));
      o.deterministic = a.has("deterministic");
      o.target = targetFromFlags(a);
      o.timeoutSeconds = resourceLimits(a).timeoutSeconds;
      ShardCheckReport r = checkShardedOnCpu(g, spec, o);
      std::cout << label(file) << ": CPU simulation over " << spec.ranks << " ranks, " << r.simulation.localKernels
                << " lowered kernel(s) run, " << (r.ok ? "passed" : "FAILED") << "\n"
                << r.plan << r.message;
      return r.ok ? Exit::Ok : Exit::Mismatch;
    }));
  return worst;
}

// run --shard --gpus=N: one process driving N GPUs through NCCL (driver/shard_run.h).
Exit cmdRunSharded(const Args& a) {
  Exit worst = Exit::Ok;
  for (const std::string& file : a.files)
    worst = std::max(worst, guarded(file, [&] {
      Graph g = readGraph(file);
      ShardSpec spec{static_cast<int>(a.integer("gpus", 1)), parseShardText(a.get("shard", ""))};
      ShardedGpuRunOptions o;
      o.seed = static_cast<uint64_t>(a.integer("seed", 1));
      o.deterministic = a.has("deterministic");
      o.time = !a.has("no-time");
      o.iterations = static_cast<int>(a.integer("iterations", 20));
      o.check = !a.has("no-check");
      ShardedGpuRunReport r;
      try {
        r = runShardedOnGpus(g, spec, o);
      } catch (const NoGpuError& e) {  // no NCCL, or a GPU missing: the user's setup, exit 2
        throw Error(file, "", e.what());
      }
      std::cout << label(file) << ": sharded over " << spec.ranks << " GPUs, result "
                << (r.ok ? "matches" : "DOES NOT MATCH") << " the reference"
                << (r.ranksAgree ? "" : " (ranks disagree)") << (r.bitwiseRepeatable ? "" : " (repeat launch differed bitwise)");
      if (o.time) std::cout << std::fixed << std::setprecision(2) << ", " << r.micros << " us (wall, all GPUs synchronized)";
      std::cout << "\n" << r.plan << r.message;
      return r.ok ? Exit::Ok : Exit::Mismatch;
    }));
  return worst;
}

// --size=S=1,7,1000 (repeated per symbol): every combination of the values, in the
// order of the program's symbols; one empty list for a program without symbols.
std::vector<std::vector<int64_t>> sizesToCheck(const Args& a, const CompiledGraph& c) {
  std::map<std::string, std::vector<int64_t>> given;
  std::stringstream entries(a.get("size", ""));
  for (std::string entry; std::getline(entries, entry, ';');) {
    const size_t eq = entry.find('=');
    std::vector<int64_t>& values = given[entry.substr(0, eq)];
    std::stringstream list(entry.substr(eq + 1));
    for (std::string n; std::getline(list, n, ',');) values.push_back(std::stoll(n));
  }
  const std::vector<std::string>& symbols = c.symbolic.symbols;
  for (const auto& [name, values] : given)
    if (std::find(symbols.begin(), symbols.end(), name) == symbols.end())
      throw Error(c.graph.sourceFile, "", "--size names " + quotedName(name) + ", which is not a size symbol of the graph" +
                                              (symbols.empty() ? " (it has none)" : ""));
  std::vector<std::vector<int64_t>> combinations = {{}};
  for (const std::string& symbol : symbols) {
    if (!given.count(symbol)) throw Error(c.graph.sourceFile, "", "the graph has the size symbol " + symbol + ": give its values with --size=" + symbol + "=N[,N...]");
    std::vector<std::vector<int64_t>> next;
    for (const std::vector<int64_t>& prefix : combinations)
      for (int64_t v : given.at(symbol)) {
        next.push_back(prefix);
        next.back().push_back(v);
      }
    combinations = std::move(next);
  }
  return combinations;
}

std::string sizesLabel(const CompiledGraph& c, const std::vector<int64_t>& sizes) {
  std::string s;
  for (size_t k = 0; k < sizes.size(); ++k) s += (k ? ", " : " at ") + c.symbolic.symbols[k] + " = " + std::to_string(sizes[k]);
  return s;
}

Exit cmdCheck(const Args& a) {
  if (a.has("shard")) return cmdCheckSharded(a);
  Exit worst = Exit::Ok;
  Target target = targetFromFlags(a);
  for (const std::string& file : a.files)
    worst = std::max(worst, guarded(file, [&] {
      Timings timings(a.has("verbose"));
      CompiledGraph c = compileFile(file, a, target, timings);
      CpuCheckOptions o;
      o.seed = static_cast<uint64_t>(a.integer("seed", 1));
      o.maxPoints = a.integer("max-points", o.maxPoints);
      o.deterministic = a.has("deterministic");
      o.limits = resourceLimits(a);
      bool ok = true;
      const std::vector<std::vector<int64_t>> sizes = sizesToCheck(a, c);
      for (const std::vector<int64_t>& at : sizes) {
        o.sizes = at;
        CpuCheckReport r = timings.measure("check", [&] { return checkOnCpu(c, o); });
        std::cout << label(file) << ": CPU check" << sizesLabel(c, at) << " of " << c.program.kernels.size()
                  << " lowered kernel(s) " << (r.ok ? "passed" : "FAILED") << (r.sampled ? " (sampled i-tiles)" : "")
                  << "\n" << r.message;
        ok = ok && r.ok;
      }
      if (!c.symbolic.symbols.empty())
        std::cout << label(file) << ": compiled 1 time, checked at " << sizes.size() << " size(s)\n";
      timings.print(file);
      return ok ? Exit::Ok : Exit::Mismatch;
    }));
  return worst;
}

Exit cmdRun(const Args& a) {
  std::string why;
  if (!gpuAvailable(&why)) {
    std::cerr << "polyred: run needs a GPU and none is usable (" << printable(why, 400)
              << "); 'polyred check FILE' runs the lowered kernels on the CPU\n";
    return Exit::BadInput;
  }
  if (a.has("shard")) return cmdRunSharded(a);
  Target target = currentTarget();
  std::cout << "device: " << target.name << ", " << target.smCount << " SMs\n";
  Exit worst = Exit::Ok;
  nlohmann::json results = nlohmann::json::array();
  for (const std::string& file : a.files)
    worst = std::max(worst, guarded(file, [&] {
      Timings timings(a.has("verbose"));
      CompiledGraph c = compileFile(file, a, target, timings);
      GpuRunOptions o;
      o.seed = static_cast<uint64_t>(a.integer("seed", 1));
      o.time = !a.has("no-time");
      o.iterations = static_cast<int>(a.integer("iterations", 50));
      o.misalignElements = static_cast<int>(a.integer("misalign", 0));
      o.limits = resourceLimits(a);
      GpuRunReport r = timings.measure("gpu run", [&] { return runOnGpu(c, o); });
      results.push_back({{"file", file}, {"kernels", r.kernels}, {"ok", r.ok}, {"micros", r.micros},
                         {"bytes", r.bytes}, {"bytes_read", r.bytesRead}, {"bytes_written", r.bytesWritten},
                         {"bitwise_repeatable", r.bitwiseRepeatable},
                         {"deterministic", a.has("deterministic")}});
      std::cout << label(file) << ": " << r.kernels << " kernel(s), GPU result " << (r.ok ? "matches" : "DOES NOT MATCH")
                << " the reference" << (r.bitwiseRepeatable ? "" : " (repeat launch differed bitwise)");
      if (o.time)
        std::cout << std::fixed << std::setprecision(2) << ", " << r.micros << " us, " << r.gbPerSecond() << " GB/s";
      std::cout << "\n" << r.check;
      timings.print(file);
      return r.ok ? Exit::Ok : Exit::Mismatch;
    }));
  if (a.has("json")) {
    std::ofstream out(a.get("json", ""));
    out << nlohmann::json{{"device", target.name}, {"results", results}}.dump(1) << "\n";
    if (!out) {
      std::cerr << "polyred: cannot write " << printable(a.get("json", "")) << "\n";
      return Exit::BadInput;
    }
  }
  return worst;
}

Exit cmdCorpus(const Args& a) {
  CorpusOptions o;
  std::string why;
  o.gpu = gpuAvailable(&why);
  o.target = o.gpu ? currentTarget() : targetFromFlags(a);
  o.maxPoints = a.integer("max-points", 1 << 22);
  o.deterministic = a.has("deterministic");
  o.nvrtc = a.has("nvrtc");
  o.horizontalFusion = !a.has("no-horizontal-fusion");
  if (a.has("max-launches")) o.maxLaunches = static_cast<int>(a.integer("max-launches", 1));
  if (a.has("launch-exceptions")) o.launchExceptions = readLaunchExceptions(a.get("launch-exceptions", ""));
  if (!o.gpu) std::cout << "polyred: no GPU (" << printable(why, 400) << "): CPU checks only; the GPU part is SKIPPED\n";
  CorpusSummary s = runCorpus(a.files[0], o, std::cout);
  std::cout << s.toString();
  if (s.files == 0) throw Error(a.files[0], "", "no composite files (.info/.json) found");
  int64_t minCompiled = a.integer("min-compiled", 0);
  if (s.compiled < minCompiled) {
    std::cout << "FAILED: " << s.compiled << " files compiled, expected at least " << minCompiled << "\n";
    return Exit::Mismatch;
  }
  return s.failures.empty() ? Exit::Ok : Exit::Mismatch;
}

// Every composite file named, directories expanded (sorted).
std::vector<std::string> expandFiles(const std::vector<std::string>& given) {
  std::vector<std::string> files;
  for (const std::string& f : given) {
    std::error_code ec;
    if (f != "-" && std::filesystem::is_directory(f, ec)) {
      std::vector<std::string> under = compositeFilesUnder(f);
      files.insert(files.end(), under.begin(), under.end());
    } else {
      files.push_back(f);
    }
  }
  return files;
}

// --candidates: knob lists separated by ';' (empty ones skipped); none: the built-in grid.
std::vector<KernelConfig> tuneCandidatesOption(const Args& a) {
  std::vector<KernelConfig> configs;
  std::stringstream list(a.get("candidates", ""));
  std::string text;
  while (std::getline(list, text, ';'))
    if (!text.empty()) configs.push_back(KernelConfig::parse(text, "--candidates"));
  if (a.has("candidates") && configs.empty()) throw Error("--candidates: no config given");
  return configs;
}

// polyred tune: the candidate configs of every file timed on this GPU; the winners go
// to the tuning database, which compile, check and run then use.
Exit cmdTune(const Args& a) {
  const std::vector<KernelConfig> candidates = tuneCandidatesOption(a);
  std::string why;
  if (!gpuAvailable(&why)) {
    std::cerr << "polyred: tune needs a GPU and none is usable (" << printable(why, 400) << ")\n";
    return Exit::BadInput;
  }
  const Target target = currentTarget();
  std::vector<std::string> warnings;
  TuningDb db = TuningDb::load(TuningDb::defaultPath(), warnings);
  for (const std::string& w : warnings) std::cerr << "polyred: warning: " << printable(w, 400) << "\n";
  const std::vector<std::string> files = expandFiles(a.files);
  std::cout << "tuning " << files.size() << " file(s) on " << target.name << "; database "
            << printable(TuningDb::defaultPath().string()) << "\n";
  const auto start = std::chrono::steady_clock::now();
  Exit worst = Exit::Ok;
  int tuned = 0, improved = 0, skipped = 0, configs = 0, programs = 0;
  double logGain = 0;
  for (size_t k = 0; k < files.size(); ++k) {
    const std::string& file = files[k];
    std::cout << "[" << k + 1 << "/" << files.size() << "] " << label(file) << ": " << std::flush;
    Exit e = guarded(file, [&] {
      Timings timings(false);
      Graph g = readGraph(file);
      CompileOptions o = compileOptions(a, target, timings);
      GpuRunOptions run;
      run.seed = static_cast<uint64_t>(a.integer("seed", 1));
      run.iterations = static_cast<int>(a.integer("iterations", 20));
      run.limits = resourceLimits(a);
      TuneReport r = tuneGraph(g, o, run, candidates);
      db.put(tuningKeyOf(g, target, o.deterministic), r.entry);
      db.save();  // after every file: an interrupted run keeps what it measured
      ++tuned;
      improved += r.improved;
      configs += r.entry.configsTried;
      programs += r.distinctPrograms;
      const double gain = r.entry.defaultMicros / r.entry.tunedMicros;
      logGain += std::log(gain);
      std::cout << std::fixed << std::setprecision(2) << r.entry.configsTried << " configs, " << r.distinctPrograms
                << " programs" << (r.failedVariants ? " (" + std::to_string(r.failedVariants) + " WRONG, dropped)" : "")
                << ", default " << r.entry.defaultMicros << " us"
                << (r.improved ? " -> " + r.entry.config.toString() + " " + std::to_string(r.entry.tunedMicros).substr(0, 7) +
                                     " us (" + std::to_string(gain).substr(0, 4) + "x)"
                               : " kept") << "\n";
      if (a.has("verbose"))
        for (const MeasuredConfig& m : r.measured)
          std::cout << "    " << (m.micros ? std::to_string(*m.micros).substr(0, 7) + " us" : "WRONG") << "  "
                    << m.config.toString() << "\n";
      return r.failedVariants ? Exit::Mismatch : Exit::Ok;
    });
    if (e == Exit::BadInput) ++skipped;
    else worst = std::max(worst, e);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << std::fixed << std::setprecision(2) << "== tuned " << tuned << " file(s) in " << seconds << " s ("
            << skipped << " skipped: out of scope or bad input); " << configs << " configs, " << programs
            << " distinct programs timed; " << improved << " improved; geomean gain over the default "
            << (tuned ? std::exp(logGain / tuned) : 1.0) << "x; database: " << db.size() << " entries\n";
  return worst;
}

// The on-disk kernel cache: where it is and why, its entries and size; or clear it.
Exit cmdCache(const Args& a) {
  KernelCacheConfig config = KernelCache::configFromEnvironment();
  if (config.directory.empty()) {
    std::cout << "kernel cache: memory only (no POLYRED_CACHE_DIR, XDG_CACHE_HOME or HOME)\n";
    return Exit::Ok;
  }
  if (!a.files.empty()) {  // clear
    int64_t removed = KernelCache::clearDisk(config);
    std::cout << "kernel cache " << printable(config.directory.string()) << ": removed " << removed << " entries\n";
    return Exit::Ok;
  }
  KernelCache::DiskUsage u = KernelCache::diskUsage(config);
  std::cout << "kernel cache: " << printable(config.directory.string()) << " (from $" << config.directoryFrom << ")\n"
            << "entries: " << u.entries << ", " << formatBytes(u.bytes) << "\n"
            << (config.enabled ? "" : "disabled by POLYRED_DISABLE_CACHE: kernels are compiled every time\n");
  return Exit::Ok;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  try {
    a = cli::parse(argc, argv);
    if (a.has("version")) {
      std::cout << versionText();
      return 0;
    }
    if (a.command.empty() || a.command == "help" || a.has("help")) {
      std::string topic = a.command == "help" ? (a.files.empty() ? "" : a.files[0]) : a.command;
      std::cout << cli::helpText(topic);
      return 0;
    }
  } catch (const cli::UsageError& e) {
    std::cerr << "polyred: " << e.what() << " (see 'polyred --help')\n";
    return static_cast<int>(Exit::BadInput);
  }
  Exit e = Exit::Internal;
  if (a.command == "compile") e = cmdCompile(a);
  else if (a.command == "check") e = cmdCheck(a);
  else if (a.command == "run") e = cmdRun(a);
  else if (a.command == "corpus") e = guarded(a.files[0], [&] { return cmdCorpus(a); });
  else if (a.command == "cache") e = guarded("cache", [&] { return cmdCache(a); });
  else if (a.command == "tune") e = guarded("tune", [&] { return cmdTune(a); });
  return static_cast<int>(e);
}
