#include "poly/kernel_config.h"

#include <charconv>
#include <sstream>

#include "support/error.h"

namespace polyred {

namespace {
std::string knob(int v) { return v == KernelConfig::kAuto ? "auto" : std::to_string(v); }
// The values of a knob with named modes (evict, combine, regfit, lse), for parsing and
// printing alike; the first is Auto.
template <class Mode>
struct KnobValue {
  Mode mode;
  const char* name;
};
constexpr KnobValue<CacheHintMode> kCacheHintNames[] = {
    {CacheHintMode::Auto, "auto"}, {CacheHintMode::On, "on"}, {CacheHintMode::Off, "off"}, {CacheHintMode::Stream, "stream"}};
constexpr KnobValue<CombineMode> kCombineNames[] = {
    {CombineMode::Auto, "auto"}, {CombineMode::Atomic, "atomic"}, {CombineMode::Partials, "partials"}};
constexpr KnobValue<RegisterFitMode> kRegisterFitNames[] = {
    {RegisterFitMode::Auto, "auto"}, {RegisterFitMode::Off, "off"}, {RegisterFitMode::Force, "force"}};
constexpr KnobValue<LogSumExpRowsMode> kLogSumExpRowsNames[] = {
    {LogSumExpRowsMode::Auto, "auto"}, {LogSumExpRowsMode::Split, "split"}, {LogSumExpRowsMode::Online, "online"}};

// ",key=name" for a mode other than Auto, else "".
template <class Mode, size_t N>
std::string namedText(const char* key, const KnobValue<Mode> (&values)[N], Mode m) {
  if (m == Mode::Auto) return "";
  for (const KnobValue<Mode>& v : values)
    if (v.mode == m) return std::string(",") + key + "=" + v.name;
  return "";
}

// The mode named `value`; else Error "key must be a, b or c".
template <class Mode, size_t N>
Mode parseNamed(const std::string& key, const std::string& value, const KnobValue<Mode> (&values)[N],
                const std::string& what) {
  std::string names;
  for (size_t k = 0; k < N; ++k) {
    if (value == values[k].name) return values[k].mode;
    names += (k == 0 ? "" : k + 1 == N ? " or " : ", ") + std::string(values[k].name);
  }
  throw Error(what + ": " + key + " must be " + names);
}

// The knobs of auto, on or off (cache, stage): Mode is an enum with Auto, On and Off.
template <class Mode>
std::string autoOnOffText(const char* key, Mode m) {
  return m == Mode::Auto ? "" : std::string(",") + key + (m == Mode::On ? "=on" : "=off");
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
         (splitBlocks == kAuto ? "" : ",split=" + std::to_string(splitBlocks)) +
         rowCacheText(rowCache) + namedText("evict", kCacheHintNames, cacheHints) + autoOnOffText("stage", rowStage) +
         namedText("combine", kCombineNames, combine) + autoOnOffText("transpose", transposeTiles) +
         namedText("regfit", kRegisterFitNames, registerFit) + namedText("lse", kLogSumExpRowsNames, logSumExpRows);
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
      c.cacheHints = parseNamed(key, value, kCacheHintNames, what);
      continue;
    }
    if (key == "combine") {
      c.combine = parseNamed(key, value, kCombineNames, what);
      continue;
    }
    if (key == "regfit") {
      c.registerFit = parseNamed(key, value, kRegisterFitNames, what);
      continue;
    }
    if (key == "lse") {
      c.logSumExpRows = parseNamed(key, value, kLogSumExpRowsNames, what);
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
    } else if (key == "split") {
      if (!automatic && (v < 1 || v > 65535)) throw Error(what + ": split must be auto or in 1..65535");
      c.splitBlocks = v;
    } else {
      throw Error(what + ": unknown knob '" + key + "' (threads, items, vector, unroll, split, cache, evict, stage, combine, transpose, regfit, lse)");
    }
  }
  return c;
}

}  // namespace polyred
