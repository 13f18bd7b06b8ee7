// The tuning database: the best measured KernelConfig per graph and GPU.
//
// Takes: a JSON file (default <kernel cache directory>/tuning.json, or $POLYRED_TUNE_DB)
// written by `polyred tune`. Gives: the config to compile a graph with on this GPU, or
// nothing. An entry is keyed by the SHA-256 of the graph's IR text, the GPU's name,
// its compute capability and the combine mode (deterministic or not): a lookup never
// returns a config measured on another GPU. A file or entry that cannot be read --
// not JSON, another format or version, fields missing, a config that does not parse,
// an entry whose fields disagree with its key -- is skipped with a warning, never an
// error: the analytic policy is always a correct fallback. Saving writes a temporary
// file and renames it, so a reader never sees half a database.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "poly/kernel_config.h"

namespace polyred {

struct TuningKey {
  std::string graphSha256;
  std::string gpuName;
  int ccMajor = 0, ccMinor = 0;
  bool deterministic = false;
  std::string toString() const;  // the entry's name in the file
};

struct TuningEntry {
  KernelConfig config;
  double defaultMicros = 0;  // the analytic policy's time, same run
  double tunedMicros = 0;    // the config's time
  int configsTried = 0;
  std::string date;          // UTC, when measured
};

class TuningDb {
 public:
  // $POLYRED_TUNE_DB, else tuning.json in the kernel cache directory; empty when there
  // is neither (no database).
  static std::filesystem::path defaultPath();

  // Reads `path` (a missing file is an empty database). Problems go to `warnings`.
  static TuningDb load(const std::filesystem::path& path, std::vector<std::string>& warnings);

  std::optional<TuningEntry> find(const TuningKey& key) const;
  void put(const TuningKey& key, const TuningEntry& entry);
  size_t size() const { return entries_.size(); }
  // Throws polyred::Error when the file cannot be written.
  void save() const;

 private:
  struct Stored {
    TuningKey key;
    TuningEntry entry;
  };
  std::filesystem::path path_;
  std::map<std::string, Stored> entries_;
};

}  // namespace polyred
