// The kernel cache: turns CUDA source into a cubin, compiling only when neither memory
// nor disk holds one for the same inputs. Takes a CompileRequest (source, name, arch,
// NVRTC options) and a Compiler; gives the cubin bytes.
//
// Entries are keyed by the SHA-256 of everything that decides the cubin: a cache format
// version, the compiler's identity (NVRTC's version, the options it always passes and the
// embedded device headers), the arch, the extra options, the name and the source. On disk each
// entry is one checksummed file, written atomically (a temporary file of the writer's own,
// synced, then renamed), so processes sharing the directory (torchrun's ranks, a notebook
// beside a training job) never see a partial entry, and writers of the same key at once
// each leave a complete one. A truncated, corrupt or oversized file reads as a miss, is
// removed and rebuilt, never loaded and never an error.
//
// Environment (read by KernelCache::global()):
//   POLYRED_CACHE_DIR      cache directory (default $XDG_CACHE_HOME/polyred, else
//                          ~/.cache/polyred)
//   POLYRED_DISABLE_CACHE  1: compile every time, no memory or disk cache
// (POLYRED_DUMP_CUDA is the compiler's, not the cache's: driver/artifacts.h.)
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace polyred {

// SHA-256 (FIPS 180-4), fed incrementally.
class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  std::array<uint8_t, 32> finish();  // the object is spent afterwards

 private:
  void compressBlock(const uint8_t* block);
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> pending_{};
  size_t pendingBytes_ = 0;
  uint64_t totalBytes_ = 0;
};

std::string sha256Hex(std::string_view bytes);

struct CompileRequest {
  std::string name;    // the __global__ function; also names the NVRTC program
  std::string source;  // complete translation unit
  int ccMajor = 0;
  int ccMinor = 0;
  std::vector<std::string> options;  // extra NVRTC options
};

struct Compiler {
  // Names the compiler and everything it reads besides the request (its version, the
  // headers it supplies); part of every key, so changing either invalidates the cache.
  std::string identity;
  std::function<std::vector<char>(const CompileRequest&)> compile;  // returns a cubin
};

// NVRTC via runtime/nvrtc.h, with the embedded device headers.
Compiler nvrtcCompiler();

struct KernelCacheConfig {
  std::filesystem::path directory;  // empty: memory only
  std::string directoryFrom;        // the variable that chose `directory` (for `polyred cache`)
  bool enabled = true;              // false: compile every time
};

class KernelCache {
 public:
  using Cubin = std::shared_ptr<const std::vector<char>>;

  KernelCache(Compiler compiler, KernelCacheConfig config);

  // The process-wide cache: NVRTC, configured from the environment on first use.
  static KernelCache& global();
  static KernelCacheConfig configFromEnvironment();

  // Hex SHA-256 naming the request's cubin.
  std::string key(const CompileRequest& request) const;

  // The cubin for `request`: from memory, else from disk, else compiled (and stored in
  // both). Thread-safe; compiler errors propagate.
  Cubin cubin(const CompileRequest& request);

  const KernelCacheConfig& config() const { return config_; }

  // The entries on disk under `config.directory` (files polyred wrote: <64 hex>.cubin).
  struct DiskUsage {
    int64_t entries = 0;
    int64_t bytes = 0;
  };
  static DiskUsage diskUsage(const KernelCacheConfig& config);
  // Removes those entries and the temporary files of writers that died before their
  // rename (<entry>.tmp.*), nothing else in the directory; returns how many entries.
  static int64_t clearDisk(const KernelCacheConfig& config);

 private:
  Cubin findInMemory(const std::string& key);
  Cubin readFromDisk(const std::string& key) const;
  void writeToDisk(const std::string& key, const std::vector<char>& cubin) const;
  std::filesystem::path entryPath(const std::string& key) const;

  Compiler compiler_;
  KernelCacheConfig config_;
  std::mutex mutex_;  // guards memory_
  std::unordered_map<std::string, Cubin> memory_;
};

}  // namespace polyred
