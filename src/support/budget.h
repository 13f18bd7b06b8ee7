// Limits on the host-side work of a check: how much memory it may take and how long
// it may run. Both turn a would-be crash or hang into a clear error (exit 2).
//
// Memory: a check computes what it will allocate before allocating (driver/
// cpu_check's planCheckMemory) and compares it with the limit in force: 3/4 of what the
// process may still allocate (support/process_memory: the least of MemAvailable, its
// cgroups' limits, RLIMIT_AS and RLIMIT_DATA), lowered by --max-memory, never raised.
// Time: long loops poll a Deadline; past it they throw TimeBudgetExceeded, an Error
// whose reason says which stage was running and how far it had got.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "support/error.h"
#include "support/process_memory.h"

namespace polyred {

struct ResourceLimits {
  int64_t maxMemoryBytes = 0;     // --max-memory; 0: none asked for
  double timeoutSeconds = 300;    // <= 0: no limit
};

// The memory limit of a check, and why it is that ("3/4 of the 1.6 GiB that the
// address-space limit (ulimit -v) leaves"), for the message that refuses a check.
struct MemoryLimit {
  int64_t bytes = 0;
  std::string why;
};

// Used when nothing bounds the process's memory that polyred can read.
constexpr int64_t kUnknownMemoryLimit = int64_t{8} << 30;

// The limit given what bounds the process (`tightest`, nullopt when unknown) and the
// bytes --max-memory asks for (0: none): 3/4 of the tightest bound, or --max-memory
// when that is lower. Pure, for tests; memoryLimit() passes this process's bound.
MemoryLimit memoryLimitGiven(const std::optional<MemoryBound>& tightest, int64_t maxMemoryBytes);
// The limit in force for this process now.
MemoryLimit memoryLimit(const ResourceLimits& limits);

// "123", "64K", "512M", "2G", "1T" (powers of 1024) -> bytes; throws Error otherwise.
int64_t parseByteSize(const std::string& text);
// 1536 -> "1.5 KiB", for messages.
std::string formatBytes(int64_t bytes);

class TimeBudgetExceeded : public Error {
 public:
  using Error::Error;
};

class Deadline {
 public:
  explicit Deadline(double seconds);  // <= 0: never expires
  static Deadline none() { return Deadline(0); }

  // What is running now, for the message if the budget runs out ("kernel 2 of 3").
  void setStage(std::string stage) { stage_ = std::move(stage); }
  // Throws TimeBudgetExceeded when past the deadline; `progress` adds how far the
  // running stage got ("41% of the points"). Cheap: call it every few thousand steps.
  void check(const std::string& progress = "") const;

 private:
  using Clock = std::chrono::steady_clock;
  double seconds_;
  Clock::time_point start_, end_;
  std::string stage_;
};

}  // namespace polyred
