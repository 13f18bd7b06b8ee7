// The corpus command: every composite file under a directory, parsed, compiled and
// checked (the lowered kernels on the CPU against the reference interpreter; on the
// GPU too when one is present), with a summary of what happened and why.
#pragma once

#include <iosfwd>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "poly/binding.h"

namespace polyred {

struct CorpusOptions {
  Target target;
  bool gpu = false;
  bool deterministic = false;
  bool nvrtc = false;           // also compile every kernel to CUBIN (no GPU needed)
  int64_t maxPoints = 1 << 22;  // CPU check budget per file (sampled i-tiles beyond it)
  bool horizontalFusion = true;
  // Launches per file above maxLaunches (0: no limit) are failures, except for the files
  // (paths relative to the corpus directory) in launchExceptions.
  int maxLaunches = 0;
  std::set<std::string> launchExceptions;
};

// The paths of an exceptions file: one per line; '#' starts a comment; blank lines
// are skipped. Throws Error naming the file when it cannot be read.
std::set<std::string> readLaunchExceptions(const std::string& file);

struct CorpusSummary {
  int files = 0, parsed = 0, compiled = 0, cpuCorrect = 0, gpuRun = 0, gpuCorrect = 0;
  std::map<std::string, int> outOfScope;      // reason -> files
  std::map<int, int> launchesPerGraph;        // launch count -> files
  std::map<int, int> kernelsPerGraph;         // kernel count (before horizontal fusion) -> files
  std::map<std::string, int> forms;           // canonical form -> kernels
  std::vector<std::pair<std::string, std::string>> multiLaunch;  // file, why
  std::vector<std::pair<std::string, std::string>> failures;     // file, what went wrong
  // With --nvrtc: the CUBINs compiled, and the kernels among them whose registers hold
  // fewer blocks per SM than their threads would (file, "kernel: N registers, B of F
  // blocks of T"), or that have a stack frame (spills or local arrays).
  int cubins = 0;
  int registersFitted = 0;  // CUBINs compiled under a bound that won blocks per SM (runtime/register_fit.h)
  std::vector<std::pair<std::string, std::string>> registerLimited, withStack;
  std::string toString() const;
};

// Walks `dir` recursively (sorted), printing one progress line per file to `progress`.
CorpusSummary runCorpus(const std::string& dir, const CorpusOptions& options, std::ostream& progress);

// The composite files (.info, .json) under `dir`, recursively, sorted; throws Error
// when the directory cannot be read.
std::vector<std::string> compositeFilesUnder(const std::string& dir);

}  // namespace polyred
