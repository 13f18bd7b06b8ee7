// Limits on the host-side work of a check: how much memory it may take and how long
// it may run. Both turn a would-be crash or hang into a clear error (exit 2).
//
// Memory: a check computes what it will allocate before allocating (driver/
// check_memory) and compares it with maxMemoryBytes (default: 3/4 of the memory the
// kernel reports available, MemAvailable in /proc/meminfo).
// Time: long loops poll a Deadline; past it they throw TimeBudgetExceeded, an Error
// whose reason says which stage was running and how far it had got.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "support/error.h"

namespace polyred {

struct ResourceLimits {
  int64_t maxMemoryBytes = 0;     // 0: defaultMaxMemoryBytes()
  double timeoutSeconds = 300;    // <= 0: no limit
};

// MemAvailable from /proc/meminfo, or 0 when it cannot be read.
int64_t availableMemoryBytes();
// 3/4 of availableMemoryBytes(), or 8 GiB when that is unknown.
int64_t defaultMaxMemoryBytes();
// The limit in force: `limits.maxMemoryBytes`, or the default.
int64_t memoryLimit(const ResourceLimits& limits);

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
