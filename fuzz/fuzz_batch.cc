// polyred_fuzz_batch: a fixed-seed batch of mutated composite files through the whole
// pipeline, failing on anything a user must never see.
//
//   polyred_fuzz_batch --corpus=DIR [--cases=N] [--seed=S] [--first=K] [--nvrtc-every=M]
//                      [--case-seconds=T] [--address-space=SIZE]
//
// Case k (k = first .. first+N-1) mutates a corpus file chosen by (seed, k) with
// fuzz/mutator, then does what `polyred check --nvrtc` does (parse, compile, NVRTC
// for every M-th case, the CPU check under small memory and time budgets) through
// driver/outcome's runGuarded, exactly as the CLI reports it. A case FAILS when:
//   - the exit code is 3 (internal error, NVRTC rejecting generated code, a foreign
//     exception or bad_alloc) or 1 (a mismatch: a wrong kernel or a false alarm);
//   - a message line is not printable, or an exit-2 message does not start with the
//     file's name and carry a reason;
//   - the generated CUDA holds a byte other than printable ASCII and '\n', or differs
//     outside comments from the CUDA of the same graph with every name replaced by a
//     neutral one (a name changed the code's tokens);
//   - the case took longer than --case-seconds (a hang that the budgets missed).
// --address-space=SIZE (e.g. 4G) runs the batch under that RLIMIT_AS, as `ulimit -v`
// would, and gives each check the memory limit the CLI would have there (no fixed
// --max-memory): a check must then be refused by its memory plan (exit 2), never die
// of bad_alloc (exit 3). ctest passes 4G; a sanitizer build cannot (its shadow memory).
// A crash fails the whole run (ctest reports it). Prints one line per failure and a
// summary; exits 0 only when no case failed.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "driver/cpu_check.h"
#include "driver/outcome.h"
#include "driver/pipeline.h"
#include "frontend/composite_reader.h"
#include "fuzz/code_checks.h"
#include "fuzz/mutator.h"
#include "runtime/nvrtc.h"
#include "support/budget.h"
#include "support/printable.h"

using namespace polyred;
namespace fs = std::filesystem;

namespace {

struct Options {
  std::string corpus;
  int64_t cases = 1000, first = 0, nvrtcEvery = 8;
  int64_t addressSpaceBytes = 0;  // 0: the limit the batch was started with
  uint64_t seed = 1;
  double caseSeconds = 30;
};

int64_t byteSize(const char* text) {
  try {
    return parseByteSize(text);
  } catch (const Error& e) {
    std::cerr << "polyred_fuzz_batch: --address-space: " << e.what() << "\n";
    std::exit(2);
  }
}

Options parse(int argc, char** argv) {
  Options o;
  for (int k = 1; k < argc; ++k) {
    std::string a = argv[k];
    auto value = [&](const char* name) -> const char* {
      std::string prefix = std::string("--") + name + "=";
      return a.rfind(prefix, 0) == 0 ? argv[k] + prefix.size() : nullptr;
    };
    if (const char* v = value("corpus")) o.corpus = v;
    else if (const char* v = value("cases")) o.cases = std::stoll(v);
    else if (const char* v = value("first")) o.first = std::stoll(v);
    else if (const char* v = value("seed")) o.seed = std::stoull(v);
    else if (const char* v = value("nvrtc-every")) o.nvrtcEvery = std::stoll(v);
    else if (const char* v = value("case-seconds")) o.caseSeconds = std::stod(v);
    else if (const char* v = value("address-space")) o.addressSpaceBytes = byteSize(v);
    else {
      std::cerr << "polyred_fuzz_batch: unknown argument " << printable(a) << "\n";
      std::exit(2);
    }
  }
  if (o.corpus.empty() || !fs::is_directory(o.corpus)) {
    std::cerr << "polyred_fuzz_batch: --corpus=DIR must name a directory of composite files\n";
    std::exit(2);
  }
  return o;
}

void limitAddressSpace(int64_t bytes) {
  rlimit limit{};
  getrlimit(RLIMIT_AS, &limit);
  limit.rlim_cur = static_cast<rlim_t>(bytes);
  if (setrlimit(RLIMIT_AS, &limit) != 0) {
    std::cerr << "polyred_fuzz_batch: cannot set the address-space limit to " << formatBytes(bytes) << "\n";
    std::exit(2);
  }
}

std::vector<std::string> seedTexts(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".json" || ext == ".info")) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> texts;
  for (const fs::path& p : files) {
    std::ifstream in(p, std::ios::binary);
    texts.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return texts;
}

// The graph with every name replaced by a neutral one of polyred's choosing.
Graph renamed(Graph g) {
  g.name = "graph";
  for (size_t t = 0; t < g.tensors.size(); ++t) g.tensors[t].name = "t" + std::to_string(t);
  for (size_t n = 0; n < g.nodes.size(); ++n) g.nodes[n].name = "n" + std::to_string(n);
  g.sourceFile = "renamed.json";
  return g;
}

// What went wrong with the generated code of one compiled graph, or "".
std::string codeProblem(const Graph& g, const CompiledGraph& c, const CompileOptions& co) {
  for (const KernelSpec& k : c.program.kernels)
    if (!fuzz::plainAscii(k.source)) return "kernel " + k.name + " holds a byte that is not printable ASCII";
  CompiledGraph neutral = compileGraph(renamed(g), co);
  if (neutral.program.kernels.size() != c.program.kernels.size()) return "renaming changed the kernel count";
  for (size_t k = 0; k < c.program.kernels.size(); ++k)
    if (fuzz::withoutComments(c.program.kernels[k].source) != fuzz::withoutComments(neutral.program.kernels[k].source))
      return "a name changed the code of kernel " + c.program.kernels[k].name;
  return "";
}

std::string messageProblem(Exit exit, const std::string& label, const std::string& err) {
  std::istringstream in(err);
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (!isPrintableText(line)) return "unprintable message line: " + printable(line);
    if (first && exit == Exit::BadInput) {
      bool named = line.rfind("polyred: error: " + label + ": ", 0) == 0 ||
                   line.rfind("polyred: out of scope: " + label + ": ", 0) == 0;
      if (!named) return "exit-2 message does not start with the file: " + line;
      if (line.size() < line.find(label) + label.size() + 4) return "exit-2 message has no reason: " + line;
    }
    first = false;
  }
  if (exit != Exit::Ok && first) return "no message for exit " + std::to_string(static_cast<int>(exit));
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.addressSpaceBytes > 0) limitAddressSpace(o.addressSpaceBytes);
  const std::vector<std::string> seeds = seedTexts(o.corpus);
  if (seeds.empty()) {
    std::cerr << "polyred_fuzz_batch: no composite files under " << printable(o.corpus) << "\n";
    return 2;
  }
  CompileOptions co;  // the default target (sm_90, 132 SMs), no dumps
  CpuCheckOptions check;
  check.maxPoints = 1 << 14;
  // Under --address-space the check gets what the process really has (3/4 of what
  // the limit leaves), so its memory plan is all that stands between a large case and
  // bad_alloc; otherwise a fixed 1 GiB keeps the batch light on any machine.
  check.limits.maxMemoryBytes = o.addressSpaceBytes > 0 ? 0 : int64_t{1} << 30;
  check.limits.timeoutSeconds = 5;

  std::map<int, int64_t> byExit;
  int64_t failures = 0;
  for (int64_t k = o.first; k < o.first + o.cases; ++k) {
    fuzz::CompositeMutator mutator(o.seed * 1000003 + static_cast<uint64_t>(k));
    const std::string text = mutator.mutate(seeds[static_cast<size_t>(k) % seeds.size()]);
    const std::string label = "fuzz-" + std::to_string(k) + ".json";
    std::ostringstream err, out;
    std::string problem;
    auto start = std::chrono::steady_clock::now();
    Exit exit = runGuarded(label, err, [&] {
      Graph g = parseComposite(text, label);
      CompiledGraph c = compileGraph(g, co);
      problem = codeProblem(g, c, co);
      if (o.nvrtcEvery > 0 && k % o.nvrtcEvery == 0)
        for (const KernelSpec& s : c.program.kernels) compileCuda(s.source, s.name, co.target.ccMajor, co.target.ccMinor);
      CpuCheckReport r = checkOnCpu(c, check);
      out << r.message;
      return r.ok ? Exit::Ok : Exit::Mismatch;
    });
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++byExit[static_cast<int>(exit)];
    if (problem.empty() && (exit == Exit::Internal || exit == Exit::Mismatch))
      problem = "exit " + std::to_string(static_cast<int>(exit)) + ": " + printable(err.str() + out.str(), 2000);
    if (problem.empty()) problem = messageProblem(exit, label, err.str());
    if (problem.empty() && seconds > o.caseSeconds) problem = "took " + std::to_string(seconds) + " s";
    if (!problem.empty()) {
      ++failures;
      std::cout << "FAIL case " << k << " (seed " << o.seed << "): " << problem << "\n";
    }
  }
  std::cout << "fuzz batch: " << o.cases << " cases from " << seeds.size() << " seed files; exit 0: " << byExit[0]
            << ", exit 1: " << byExit[1] << ", exit 2: " << byExit[2] << ", exit 3: " << byExit[3] << "; "
            << failures << " failed\n";
  return failures == 0 ? 0 : 1;
}
