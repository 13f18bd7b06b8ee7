// polyred: command-line driver.
//
//   polyred compile FILE... [--dump=STAGES] [--deterministic] [--nvrtc] [--arch=sm_XY] [--sms=N]
//       print the generated CUDA and launch configuration (no GPU needed)
//   polyred check FILE...   [--seed=N] [--max-points=N] [--deterministic] [--max-memory=SIZE] [--timeout=S]
//       run the lowered kernels on the CPU and compare with the reference interpreter
//   polyred run FILE...     [--seed=N] [--deterministic] [--no-time] [--iterations=N] [--json=OUT]
//       compile, run on the GPU with random inputs, compare, print time and bandwidth;
//       without a GPU: the CPU check, and a line saying the GPU part was skipped
//   polyred corpus DIR      [--max-points=N] [--deterministic] [--min-compiled=N] [--nvrtc]
//       every composite file under DIR: parse, compile, check; a summary at the end
//
// Exit codes (driver/outcome.h): 0 success, 1 a result did not match, 2 bad input or
// usage (including sub-graphs outside polyred's scope and checks over their memory or
// time budget), 3 internal error.
#include <algorithm>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "driver/corpus.h"
#include "driver/cpu_check.h"
#include "driver/gpu_run.h"
#include "driver/outcome.h"
#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/composite_reader.h"
#include "runtime/executor.h"
#include "runtime/nvrtc.h"
#include "support/budget.h"
#include "support/error.h"
#include "support/printable.h"

#include <nlohmann/json.hpp>

using namespace polyred;

namespace {

constexpr Exit kOk = Exit::Ok, kMismatch = Exit::Mismatch, kBadInput = Exit::BadInput;

struct Args {
  std::string command;
  std::vector<std::string> files;
  std::map<std::string, std::string> flags;  // --name=value or --name (value "")

  bool has(const std::string& f) const { return flags.count(f) > 0; }
  std::string get(const std::string& f, const std::string& def) const {
    auto it = flags.find(f);
    return it == flags.end() ? def : it->second;
  }
  int64_t number(const std::string& f, int64_t def) const {
    std::string v = get(f, "");
    if (v.empty()) return def;
    try {
      return std::stoll(v);
    } catch (const std::exception&) {
      throw Error("", "", "--" + f + " expects a number, got '" + v + "'");
    }
  }
};

const char* kUsage =
    "usage: polyred <command> [options] FILE...\n"
    "  compile FILE...  print generated CUDA + launch config  [--dump=STAGES] [--deterministic] [--nvrtc]\n"
    "                   [--arch=sm_XY] [--sms=N]   STAGES: all or a comma list of graph,partition,binding,\n"
    "                   schedule,ast,cuda\n"
    "  check FILE...    CPU check of the lowered kernels  [--seed=N] [--max-points=N] [--deterministic]\n"
    "  run FILE...      GPU run + check + timing  [--seed=N] [--deterministic] [--no-time] [--iterations=N]\n"
    "                   [--json=OUT] (results as JSON)\n"
    "  check and run:   [--max-memory=SIZE] host memory for inputs, outputs and the reference (default 3/4 of\n"
    "                   the available memory; SIZE in bytes or with K/M/G/T), [--timeout=SECONDS] (default 300)\n"
    "  corpus DIR       compile and check every composite file under DIR  [--max-points=N]\n"
    "                   [--min-compiled=N] (fail if fewer files compile) [--nvrtc] (also to CUBIN)\n";

Args parseArgs(int argc, char** argv) {
  Args a;
  for (int k = 1; k < argc; ++k) {
    std::string s = argv[k];
    if (s.rfind("--", 0) == 0) {
      auto eq = s.find('=');
      a.flags[s.substr(2, eq == std::string::npos ? std::string::npos : eq - 2)] =
          eq == std::string::npos ? "" : s.substr(eq + 1);
    } else if (a.command.empty()) {
      a.command = s;
    } else {
      a.files.push_back(s);
    }
  }
  return a;
}

CompileOptions compileOptions(const Args& a, const Target& target) {
  CompileOptions o;
  o.target = target;
  o.deterministic = a.has("deterministic");
  std::string dump = a.get("dump", "");
  for (size_t start = 0; !dump.empty() && start <= dump.size();) {
    size_t comma = dump.find(',', start);
    std::string stage = dump.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto& known = dumpStages();
    if (stage != "all" && std::find(known.begin(), known.end(), stage) == known.end())
      throw Error("", "", "unknown --dump stage '" + stage + "'");
    o.dump.insert(stage);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  o.dumpTo = &std::cout;
  return o;
}

Target targetFromFlags(const Args& a) {
  Target t;
  std::string arch = a.get("arch", "");
  if (!arch.empty()) {
    if (arch.size() < 5 || arch.rfind("sm_", 0) != 0 || !std::all_of(arch.begin() + 3, arch.end(), ::isdigit))
      throw Error("", "", "--arch expects sm_XY, got '" + arch + "'");
    int cc = std::stoi(arch.substr(3));
    t.ccMajor = cc / 10;
    t.ccMinor = cc % 10;
    t.name = arch;
  }
  t.smCount = static_cast<int>(a.number("sms", t.smCount));
  return t;
}

// Runs `body` for one file, turning exceptions into messages and exit codes.
template <class F>
Exit guarded(const std::string& file, F&& body) {
  return runGuarded(file, std::cerr, std::forward<F>(body));
}

ResourceLimits resourceLimits(const Args& a) {
  ResourceLimits l;
  if (a.has("max-memory")) l.maxMemoryBytes = parseByteSize(a.get("max-memory", ""));
  l.timeoutSeconds = static_cast<double>(a.number("timeout", 300));
  if (l.timeoutSeconds <= 0) throw Error("--timeout expects a positive number of seconds");
  return l;
}

void printLaunch(const CompiledGraph& c) {
  for (size_t k = 0; k < c.program.kernels.size(); ++k) {
    const KernelSpec& s = c.program.kernels[k];
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
  Exit worst = kOk;
  Target target = targetFromFlags(a);
  for (const std::string& file : a.files) {
    worst = std::max(worst, guarded(file, [&] {
      CompiledGraph c = compileGraph(readCompositeFile(file), compileOptions(a, target));
      std::cout << "// " << printable(file, 256) << ": " << c.program.kernels.size() << " kernel(s)\n";
      printLaunch(c);
      if (!a.has("dump"))
        for (const KernelSpec& s : c.program.kernels) std::cout << s.source << "\n";
      if (a.has("nvrtc"))
        for (const KernelSpec& s : c.program.kernels) {
          NvrtcResult r = compileCuda(s.source, s.name, target.ccMajor, target.ccMinor);
          std::cout << "// NVRTC: " << s.name << " -> " << r.cubin.size() << " bytes of CUBIN for " << target.name << "\n";
        }
      return kOk;
    }));
  }
  return worst;
}

Exit cpuCheck(const std::string& file, const CompiledGraph& c, const Args& a) {
  CpuCheckOptions o;
  o.seed = static_cast<uint64_t>(a.number("seed", 1));
  o.maxPoints = a.number("max-points", o.maxPoints);
  o.deterministic = a.has("deterministic");
  o.limits = resourceLimits(a);
  CpuCheckReport r = checkOnCpu(c, o);
  std::cout << printable(file, 256) << ": CPU check of " << c.program.kernels.size() << " lowered kernel(s) "
            << (r.ok ? "passed" : "FAILED") << (r.sampled ? " (sampled i-tiles)" : "") << "\n"
            << r.message;
  return r.ok ? kOk : kMismatch;
}

Exit cmdCheck(const Args& a) {
  Exit worst = kOk;
  Target target = targetFromFlags(a);
  for (const std::string& file : a.files)
    worst = std::max(worst, guarded(file, [&] {
      return cpuCheck(file, compileGraph(readCompositeFile(file), compileOptions(a, target)), a);
    }));
  return worst;
}

Exit cmdRun(const Args& a) {
  std::string why;
  bool gpu = gpuAvailable(&why);
  if (!gpu) std::cout << "polyred: no GPU (" << why << "): compiling and checking on the CPU; the GPU part is SKIPPED\n";
  Target target = gpu ? currentTarget() : targetFromFlags(a);
  if (gpu) std::cout << "device: " << target.name << ", " << target.smCount << " SMs\n";
  Exit worst = kOk;
  nlohmann::json results = nlohmann::json::array();
  for (const std::string& file : a.files)
    worst = std::max(worst, guarded(file, [&] {
      CompiledGraph c = compileGraph(readCompositeFile(file), compileOptions(a, target));
      if (!gpu) return cpuCheck(file, c, a);
      GpuRunOptions o;
      o.seed = static_cast<uint64_t>(a.number("seed", 1));
      o.time = !a.has("no-time");
      o.iterations = static_cast<int>(a.number("iterations", 50));
      o.limits = resourceLimits(a);
      GpuRunReport r = runOnGpu(c, o);
      results.push_back({{"file", file}, {"kernels", r.kernels}, {"ok", r.ok}, {"micros", r.micros},
                         {"bytes", r.bytes}, {"bitwise_repeatable", r.bitwiseRepeatable},
                         {"deterministic", a.has("deterministic")}});
      std::cout << printable(file, 256) << ": " << r.kernels << " kernel(s), GPU result " << (r.ok ? "matches" : "DOES NOT MATCH")
                << " the reference" << (r.bitwiseRepeatable ? "" : " (repeat launch differed bitwise)");
      if (o.time)
        std::cout << std::fixed << std::setprecision(2) << ", " << r.micros << " us, " << r.gbPerSecond() << " GB/s";
      std::cout << "\n" << r.check;
      return r.ok ? kOk : kMismatch;
    }));
  if (gpu && a.has("json")) {
    std::ofstream(a.get("json", "")) << nlohmann::json{{"device", target.name}, {"results", results}}.dump(1) << "\n";
  }
  return worst;
}

Exit cmdCorpus(const Args& a) {
  CorpusOptions o;
  std::string why;
  o.gpu = gpuAvailable(&why);
  o.target = o.gpu ? currentTarget() : targetFromFlags(a);
  o.maxPoints = a.number("max-points", 1 << 22);
  o.deterministic = a.has("deterministic");
  o.nvrtc = a.has("nvrtc");
  if (!o.gpu) std::cout << "polyred: no GPU (" << why << "): CPU checks only; the GPU part is SKIPPED\n";
  CorpusSummary s = runCorpus(a.files[0], o, std::cout);
  std::cout << s.toString();
  if (s.files == 0) throw Error(a.files[0], "", "no composite files (.info/.json) found");
  int64_t minCompiled = a.number("min-compiled", 0);
  if (s.compiled < minCompiled) {
    std::cout << "FAILED: " << s.compiled << " files compiled, expected at least " << minCompiled << "\n";
    return kMismatch;
  }
  return s.failures.empty() ? kOk : kMismatch;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parseArgs(argc, argv);
  try {
    if (a.command == "compile" && !a.files.empty()) return static_cast<int>(cmdCompile(a));
    if (a.command == "check" && !a.files.empty()) return static_cast<int>(cmdCheck(a));
    if (a.command == "run" && !a.files.empty()) return static_cast<int>(cmdRun(a));
    if (a.command == "corpus" && a.files.size() == 1) return static_cast<int>(cmdCorpus(a));
  } catch (const Error& e) {
    std::cerr << "polyred: " << e.what() << "\n" << kUsage;
    return static_cast<int>(kBadInput);
  }
  std::cerr << kUsage;
  return static_cast<int>(kBadInput);
}
