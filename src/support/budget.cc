#include "support/budget.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace polyred {

MemoryLimit memoryLimitGiven(const std::optional<MemoryBound>& tightest, int64_t maxMemoryBytes) {
  // A quarter is left for what the plan does not count: the allocator's arenas and
  // slack, the compiler's own structures, stacks and libraries mapped later.
  MemoryLimit limit = tightest ? MemoryLimit{tightest->bytes / 4 * 3, "3/4 of what the process may still allocate: " +
                                                                           tightest->what}
                               : MemoryLimit{kUnknownMemoryLimit, "the default when the available memory is unknown"};
  if (maxMemoryBytes <= 0) return limit;
  if (maxMemoryBytes <= limit.bytes) return {maxMemoryBytes, "--max-memory"};
  limit.why += "; --max-memory=" + formatBytes(maxMemoryBytes) + " cannot raise it";
  return limit;
}

MemoryLimit memoryLimit(const ResourceLimits& limits) {
  return memoryLimitGiven(tightestBound(memoryBounds(readMemoryFacts())), limits.maxMemoryBytes);
}

int64_t parseByteSize(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  std::string suffix = text.substr(digits);
  int shift = suffix.empty() ? 0 : suffix == "K" ? 10 : suffix == "M" ? 20 : suffix == "G" ? 30 : suffix == "T" ? 40 : -1;
  if (digits == 0 || digits > 15 || shift < 0)
    throw Error("a size must be a number of bytes with an optional K, M, G or T suffix, got " + quotedName(text));
  int64_t n = std::stoll(text.substr(0, digits));
  if (n <= 0 || n > (int64_t{1} << (62 - shift))) throw Error("size " + quotedName(text) + " is out of range");
  return n << shift;
}

std::string formatBytes(int64_t bytes) {
  static const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, kUnits[u]);
  return buf;
}

Deadline::Deadline(double seconds) : seconds_(seconds), start_(Clock::now()) {
  end_ = seconds > 0 ? start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds))
                     : Clock::time_point::max();
}

void Deadline::check(const std::string& progress) const {
  if (Clock::now() < end_) return;
  std::ostringstream os;
  os << "stopped after " << seconds_ << " s (the --timeout budget)";
  if (!stage_.empty()) os << " while " << stage_;
  if (!progress.empty()) os << ", " << progress;
  throw TimeBudgetExceeded(os.str());
}

}  // namespace polyred
