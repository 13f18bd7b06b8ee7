// How much more memory this process may allocate: the least of what the kernel reports
// available (MemAvailable), what its cgroups' memory limits leave (cgroup v2 memory.max
// less memory.current, v1 memory.limit_in_bytes less memory.usage_in_bytes, at its own
// cgroup and every parent), what its address-space limit leaves (RLIMIT_AS, `ulimit -v`,
// less VmSize) and what its data-segment limit leaves (RLIMIT_DATA, `ulimit -d`, less
// VmData). Unlimited values ("max", RLIM_INFINITY, v1's page-counter maximum) bound
// nothing. support/budget turns the least bound into the check's memory limit.
//
// The parsers are pure (they take the files' contents) so that tests can feed them
// sample files; readMemoryFacts() is the one place that reads /proc, /sys and rlimits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace polyred {

// One thing that bounds the process's memory: how many bytes it leaves, and that in
// words for messages ("the address-space limit (ulimit -v) leaves 1.6 GiB").
struct MemoryBound {
  int64_t bytes = 0;
  std::string what;
};

// --- parsers of file contents ---

// MemAvailable of /proc/meminfo in bytes.
std::optional<int64_t> parseMemAvailable(std::string_view meminfo);
// A "Key:   123 kB" line of /proc/self/status (key without the colon) in bytes.
std::optional<int64_t> parseStatusBytes(std::string_view status, std::string_view key);
// A cgroup memory file holding one number ("123\n"); nullopt for "max", for v1's
// unlimited page-counter maximum (any value from 2^62 up) and for anything unreadable.
std::optional<int64_t> parseCgroupBytes(std::string_view text);

// The process's cgroup paths from /proc/self/cgroup: the v2 (unified, "0::/path") one
// and the v1 memory controller's; empty where the file has none.
struct CgroupPaths {
  std::string unified;
  std::string memoryV1;
};
CgroupPaths parseProcCgroup(std::string_view text);

// The cgroup2 mount and the v1 memory-controller mount of /proc/self/mountinfo.
struct CgroupMount {
  std::string root;        // the cgroup the mount shows at its mount point
  std::string mountPoint;  // where it is mounted ("/sys/fs/cgroup")
};
struct CgroupMounts {
  std::optional<CgroupMount> unified, memoryV1;
};
CgroupMounts parseCgroupMounts(std::string_view mountinfo);

// The directories holding the limits that apply to a process in cgroup `path`: its own
// cgroup's directory under `mount`, then each parent's up to the mount point. Only the
// mount point when `path` lies outside the mount's root.
std::vector<std::string> cgroupDirectories(const CgroupMount& mount, const std::string& path);

// --- the facts, and the bounds they give ---

// One cgroup level's limit and usage, read from its directory.
struct CgroupLevel {
  std::string directory;
  bool v2 = true;        // memory.max/memory.current, else memory.limit_in_bytes/usage_in_bytes
  std::string limit, usage;  // the files' contents ("" where missing)
};

struct MemoryFacts {
  std::string meminfo, status;  // /proc/meminfo, /proc/self/status
  std::optional<int64_t> addressSpaceLimit, dataLimit;  // soft RLIMIT_AS / RLIMIT_DATA; nullopt: unlimited
  std::vector<CgroupLevel> cgroups;
};

// Every bound the facts give, in the order listed at the top of this file.
std::vector<MemoryBound> memoryBounds(const MemoryFacts& facts);
// The least of `bounds`, or nullopt when there is none.
std::optional<MemoryBound> tightestBound(const std::vector<MemoryBound>& bounds);

// The facts of this process now.
MemoryFacts readMemoryFacts();

}  // namespace polyred
