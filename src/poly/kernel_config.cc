#include "poly/kernel_config.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <sstream>

#include "support/error.h"

namespace polyred {

namespace {
std::string knob(int v) { return v == KernelConfig::kAuto ? "auto" : std::to_string(v); }
// The `evict` knob's values, for parsing and printing alike.
struct CacheHintName {
  CacheHintMode mode;
  const char* name;
};
constexpr CacheHintName kCacheHintNames[] = {{CacheHintMode::Auto, "auto"},
                                             {CacheHintMode::On, "on"},
                                             {CacheHintMode::Off, "off"},
                                             {CacheHintMode::Stream, "stream"}};

std::string cacheHintsText(CacheHintMode m) {
  if (m == CacheHintMode::Auto) return "";
  for (const CacheHintName& n : kCacheHintNames)
    if (n.mode == m) return std::string(",evict=") + n.name;
  return "";
}

// The knobs of auto, on or off (cache, stage): Mode is an enum with Auto, On and Off.
template <class Mode>
std::string autoOnOffText(const char* key, Mode m) {
  return m == Mode::Auto ? "" : std::string(",") + key + (m == Mode::On ? "=on" : "=off");
}
// The `combine` knob's values, likewise.
struct CombineName {
  CombineMode mode;
  const char* name;
};
constexpr CombineName kCombineNames[] = {
    {CombineMode::Auto, "auto"}, {CombineMode::Atomic, "atomic"}, {CombineMode::Partials, "partials"}};

std::string combineText(CombineMode m) {
  if (m == CombineMode::Auto) return "";
  for (const CombineName& n : kCombineNames)
    if (n.mode == m) return std::string(",combine=") + n.name;
  return "";
}
std::string registerFitText(RegisterFitMode m) {
  return m == RegisterFitMode::Off ? ",regfit=off" : m == RegisterFitMode::Force ? ",regfit=force" : "";
}
std::string logSumExpRowsText(LogSumExpRowsMode m) {
  return m == LogSumExpRowsMode::Split ? ",lse=split" : m == LogSumExpRowsMode::Online ? ",lse=online" : "";
}
std::string rowCacheText(RowCacheMode m) {
  return m == RowCacheMode::Registers ? ",cache=regs" : autoOnOffText("cache", m);
}

// `others`: the knob's further values, for the message (", regs").
template <class Mode>
Mode parseAutoOnOff(const std::string& key, const std::string& value, const std::string& what,
                    const std::string& others = "") {
  if (value == "auto") return Mode::Auto;
  if (value == "on") return Mode::On;
  if (value == "off") return Mode::Off;
  throw Error(what + ": " + key + " must be auto, on" + others + " or off");
}
}  // namespace

std::string KernelConfig::toString() const {
  return "threads=" + std::to_string(threadsPerBlock) + ",items=" + knob(itemsPerThread) +
         ",vector=" + knob(maxVectorWidth) + (unroll == kAuto ? "" : ",unroll=" + std::to_string(unroll)) +
         rowCacheText(rowCache) + cacheHintsText(cacheHints) + autoOnOffText("stage", rowStage) + combineText(combine) +
         autoOnOffText("transpose", transposeTiles) + registerFitText(registerFit) + logSumExpRowsText(logSumExpRows);
}

namespace {

bool isPow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

int parseField(const std::string& key, const std::string& value, const std::string& what) {
  int v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size())
    throw Error(what + ": '" + key + "' needs an integer, got '" + value + "'");
  return v;
}

}  // namespace

KernelConfig KernelConfig::parse(const std::string& text, const std::string& what) {
  KernelConfig c;
  std::stringstream fields(text);
  std::string field;
  while (std::getline(fields, field, ',')) {
    if (field.empty()) continue;
    const size_t eq = field.find('=');
    if (eq == std::string::npos) throw Error(what + ": '" + field + "' is not key=value");
    const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    const bool automatic = value == "auto" && key != "threads";
    if (key == "cache") {
      c.rowCache = value == "regs" ? RowCacheMode::Registers : parseAutoOnOff<RowCacheMode>(key, value, what, ", regs");
      continue;
    }
    if (key == "stage") {
      c.rowStage = parseAutoOnOff<RowStageMode>(key, value, what);
      continue;
    }
    if (key == "transpose") {
      c.transposeTiles = parseAutoOnOff<TransposeTileMode>(key, value, what);
      continue;
    }
    if (key == "evict") {
      const auto named = std::find_if(std::begin(kCacheHintNames), std::end(kCacheHintNames),
                                      [&](const CacheHintName& n) { return value == n.name; });
      if (named == std::end(kCacheHintNames)) throw Error(what + ": evict must be auto, on, off or stream");
      c.cacheHints = named->mode;
      continue;
    }
    if (key == "combine") {
      const auto named = std::find_if(std::begin(kCombineNames), std::end(kCombineNames),
                                      [&](const CombineName& n) { return value == n.name; });
      if (named == std::end(kCombineNames)) throw Error(what + ": combine must be auto, atomic or partials");
      c.combine = named->mode;
      continue;
    }
    if (key == "regfit") {
      if (value == "auto") c.registerFit = RegisterFitMode::Auto;
      else if (value == "off") c.registerFit = RegisterFitMode::Off;
      else if (value == "force") c.registerFit = RegisterFitMode::Force;
      else throw Error(what + ": regfit must be auto, off or force");
      continue;
    }
    if (key == "lse") {
      if (value == "auto") c.logSumExpRows = LogSumExpRowsMode::Auto;
      else if (value == "split") c.logSumExpRows = LogSumExpRowsMode::Split;
      else if (value == "online") c.logSumExpRows = LogSumExpRowsMode::Online;
      else throw Error(what + ": lse must be auto, split or online");
      continue;
    }
    const int v = automatic ? kAuto : parseField(key, value, what);
    if (key == "threads") {
      if (!isPow2(v) || v < 32 || v > 1024) throw Error(what + ": threads must be a power of two in 32..1024");
      c.threadsPerBlock = v;
    } else if (key == "items") {
      if (!automatic && (v < 1 || v > 4096)) throw Error(what + ": items must be auto or in 1..4096");
      c.itemsPerThread = v;
    } else if (key == "vector") {
      if (!automatic && (!isPow2(v) || v > 16)) throw Error(what + ": vector must be auto, 1, 2, 4, 8 or 16");
      c.maxVectorWidth = v;
    } else if (key == "unroll") {
      if (!automatic && (v < 1 || v > 32)) throw Error(what + ": unroll must be auto or in 1..32");
      c.unroll = v;
    } else {
      throw Error(what + ": unknown knob '" + key + "' (threads, items, vector, unroll, cache, evict, stage, combine, transpose, regfit, lse)");
    }
  }
  return c;
}

}  // namespace polyred
