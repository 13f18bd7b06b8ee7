#include "driver/corpus.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "driver/cpu_check.h"
#include "driver/gpu_run.h"
#include "driver/pipeline.h"
#include "frontend/composite_reader.h"
#include "runtime/cubin_info.h"
#include "runtime/nvrtc.h"
#include "runtime/register_fit.h"
#include "support/error.h"
#include "support/printable.h"
#include "support/sm_occupancy.h"

namespace polyred {

namespace fs = std::filesystem;

std::vector<std::string> compositeFilesUnder(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    auto ext = it->path().extension();
    if (it->is_regular_file() && (ext == ".info" || ext == ".json")) files.push_back(it->path().string());
  }
  if (ec) throw Error(dir, "", "cannot read directory: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

namespace {

// "PadAkg is outside polyred's scope (...)" -> "PadAkg is outside polyred's scope"
std::string reasonKey(const Error& e) {
  std::string r = (e.op().empty() ? "" : e.op() + ": ") + e.reason();
  if (auto p = r.find(" ("); p != std::string::npos) r = r.substr(0, p);
  return r;
}

// Records kernel `k`'s occupancy by registers and its stack from its CUBIN.
void noteResources(CorpusSummary& s, const std::string& file, const KernelSpec& k, const Target& target) {
  ++s.cubins;
  const RegisterFit fit = fitRegisters(k, target.ccMajor, target.ccMinor, uncachedNvrtc());
  if (fit.keptBlocks > 0) ++s.registersFitted;
  const std::optional<KernelResources> r = cubinKernelResources(*fit.cubin, k.name);
  if (!r) return;
  const int threads = k.launch.threadsPerBlock();
  const int byThreads = residentBlocksByThreads(threads), byRegisters = residentBlocksByRegisters(r->registers, threads);
  if (byRegisters < byThreads)
    s.registerLimited.emplace_back(file, k.name + ": " + std::to_string(r->registers) + " registers, " +
                                             std::to_string(byRegisters) + " of " + std::to_string(byThreads) +
                                             " blocks of " + std::to_string(threads) + " per SM" +
                                             (fit.keptBlocks > 0 ? " (fitted)" : ""));
  if (r->stackBytes > 0) s.withStack.emplace_back(file, k.name + ": " + std::to_string(r->stackBytes) + " bytes of stack");
}

}  // namespace

CorpusSummary runCorpus(const std::string& dir, const CorpusOptions& o, std::ostream& progress) {
  CorpusSummary s;
  std::vector<std::string> files = compositeFilesUnder(dir);
  CompileOptions co;
  co.target = o.target;
  co.deterministic = o.deterministic;
  co.horizontalFusion = o.horizontalFusion;
  for (const std::string& file : files) {
    ++s.files;
    std::string rel = printable(fs::relative(file, dir).string(), 256);
    progress << "[" << s.files << "/" << files.size() << "] " << rel << ": " << std::flush;
    try {
      Graph g = readCompositeFile(file);
      ++s.parsed;
      CompiledGraph c = compileGraph(g, co);
      ++s.compiled;
      const int launches = static_cast<int>(c.program.kernels.size());
      ++s.launchesPerGraph[launches];
      ++s.kernelsPerGraph[static_cast<int>(c.partition.kernels.size())];
      for (const KernelPlan& k : c.partition.kernels) ++s.forms[std::string(formName(k.form))];
      if (launches > 1) {
        std::string why, line;
        for (std::istringstream launches(describeLaunches(c.program)); std::getline(launches, line);)
          why += "    " + line + "\n";
        for (const KernelPlan& k : c.partition.kernels) why += "    " + k.name + ": " + printable(k.why, 400) + "\n";
        s.multiLaunch.emplace_back(rel, why);
        if (o.maxLaunches > 0 && launches > o.maxLaunches && !o.launchExceptions.count(rel))
          s.failures.emplace_back(rel, std::to_string(launches) + " launches, more than --max-launches=" +
                                           std::to_string(o.maxLaunches) + " (and not in --launch-exceptions)");
      }
      if (o.nvrtc)
        for (const KernelSpec& k : c.program.kernels)
          noteResources(s, rel, k, o.target);
      CpuCheckReport cpu = checkOnCpu(c, 1, o.maxPoints, o.deterministic);
      if (!cpu.ok) {
        s.failures.emplace_back(rel, "CPU check: " + cpu.message);
        progress << "CPU MISMATCH\n";
        continue;
      }
      ++s.cpuCorrect;
      progress << launches << " launch(es), CPU ok";
      if (o.gpu) {
        GpuRunOptions go;
        go.time = false;
        GpuRunReport r = runOnGpu(c, go);
        ++s.gpuRun;
        if (r.ok) ++s.gpuCorrect;
        else s.failures.emplace_back(rel, "GPU: " + r.check);
        progress << (r.ok ? ", GPU ok" : ", GPU MISMATCH");
      }
      progress << "\n";
    } catch (const UnsupportedError& e) {
      ++s.outOfScope[reasonKey(e)];
      progress << "out of scope: " << printable(e.reason(), 4096) << "\n";
    } catch (const Error& e) {
      s.failures.emplace_back(rel, std::string("error: ") + e.what());
      progress << "ERROR " << e.what() << "\n";
    } catch (const std::exception& e) {
      s.failures.emplace_back(rel, "internal: " + printable(e.what(), 4096));
      progress << "INTERNAL ERROR " << printable(e.what(), 4096) << "\n";
    }
  }
  return s;
}

std::set<std::string> readLaunchExceptions(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw Error(file, "", "cannot read the launch exceptions file");
  std::set<std::string> paths;
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    const auto first = line.find_first_not_of(" \t\r"), last = line.find_last_not_of(" \t\r");
    if (first != std::string::npos) paths.insert(line.substr(first, last - first + 1));
  }
  return paths;
}

std::string CorpusSummary::toString() const {
  std::ostringstream os;
  int unsupported = 0;
  for (const auto& [r, n] : outOfScope) unsupported += n;
  os << "\n== corpus summary ==\n"
     << "files " << files << ", out of scope " << unsupported << ", compiled " << compiled << ", CPU check passed "
     << cpuCorrect;
  if (gpuRun) os << ", GPU run " << gpuRun << ", GPU correct " << gpuCorrect;
  os << "\nout of scope by reason:\n";
  for (const auto& [r, n] : outOfScope) os << "  " << n << "  " << r << "\n";
  os << "launches per sub-graph:\n";
  for (const auto& [k, n] : launchesPerGraph) os << "  " << k << " launch(es): " << n << " file(s)\n";
  os << "kernels per sub-graph (before horizontal fusion):\n";
  for (const auto& [k, n] : kernelsPerGraph) os << "  " << k << " kernel(s): " << n << " file(s)\n";
  os << "canonical forms (kernels):\n";
  for (const auto& [f, n] : forms) os << "  " << f << ": " << n << "\n";
  if (!multiLaunch.empty()) {
    os << "sub-graphs with more than one launch:\n";
    for (const auto& [f, why] : multiLaunch) os << "  " << f << "\n" << why;
  }
  if (cubins > 0) {
    os << "CUBINs (--nvrtc): " << cubins << ", registers fitted: " << registersFitted
       << ", below full occupancy by registers: " << registerLimited.size()
       << ", with a stack frame: " << withStack.size() << "\n";
    for (const auto& [f, what] : registerLimited) os << "  " << f << ": " << what << "\n";
    for (const auto& [f, what] : withStack) os << "  " << f << ": " << what << "\n";
  }
  os << "failures: " << failures.size() << "\n";
  for (const auto& [f, what] : failures) os << "  " << f << ": " << what << "\n";
  return os.str();
}

}  // namespace polyred
