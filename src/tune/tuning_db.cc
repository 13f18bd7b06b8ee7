#include "tune/tuning_db.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "runtime/kernel_cache.h"
#include "support/error.h"

namespace polyred {

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

constexpr const char* kFormat = "polyred-tuning-db";
constexpr int kVersion = 1;

std::string ccText(const TuningKey& k) { return std::to_string(k.ccMajor) + "." + std::to_string(k.ccMinor); }

Json toJson(const TuningKey& k, const TuningEntry& e) {
  return Json{{"graph_sha256", k.graphSha256}, {"gpu", k.gpuName}, {"cc", ccText(k)},
              {"deterministic", k.deterministic}, {"config", e.config.toString()},
              {"default_us", e.defaultMicros}, {"tuned_us", e.tunedMicros},
              {"configs_tried", e.configsTried}, {"date", e.date}};
}

// One stored entry, or a reason why it cannot be used.
std::optional<std::string> readEntry(const std::string& name, const Json& j, TuningKey& key, TuningEntry& entry) {
  if (!j.is_object()) return "not an object";
  for (const char* field : {"graph_sha256", "gpu", "cc", "config"})
    if (!j.contains(field) || !j[field].is_string()) return std::string("no string '") + field + "'";
  if (!j.contains("deterministic") || !j["deterministic"].is_boolean()) return "no boolean 'deterministic'";
  key.graphSha256 = j["graph_sha256"].get<std::string>();
  key.gpuName = j["gpu"].get<std::string>();
  key.deterministic = j["deterministic"].get<bool>();
  const std::string cc = j["cc"].get<std::string>();
  if (std::sscanf(cc.c_str(), "%d.%d", &key.ccMajor, &key.ccMinor) != 2) return "bad compute capability '" + cc + "'";
  if (key.toString() != name) return "its fields name another graph or GPU than its key";
  try {
    entry.config = KernelConfig::parse(j["config"].get<std::string>(), "config");
  } catch (const Error& e) {
    return e.what();
  }
  entry.defaultMicros = j.value("default_us", 0.0);
  entry.tunedMicros = j.value("tuned_us", 0.0);
  entry.configsTried = j.value("configs_tried", 0);
  entry.date = j.value("date", std::string());
  return std::nullopt;
}

}  // namespace

std::string TuningKey::toString() const {
  return graphSha256 + "|" + gpuName + "|sm_" + std::to_string(ccMajor) + std::to_string(ccMinor) +
         (deterministic ? "|deterministic" : "");
}

fs::path TuningDb::defaultPath() {
  if (const char* env = std::getenv("POLYRED_TUNE_DB"); env && *env) return env;
  KernelCacheConfig cache = KernelCache::configFromEnvironment();
  return cache.directory.empty() ? fs::path() : cache.directory / "tuning.json";
}

TuningDb TuningDb::load(const fs::path& path, std::vector<std::string>& warnings) {
  TuningDb db;
  db.path_ = path;
  std::error_code ec;
  if (path.empty() || !fs::exists(path, ec)) return db;
  auto warn = [&](const std::string& why) { warnings.push_back("tuning database " + path.string() + ": " + why); };
  std::ifstream in(path);
  Json j = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!in.good() && !in.eof()) return warn("cannot be read; ignored"), db;
  if (j.is_discarded() || !j.is_object()) return warn("not JSON; ignored (polyred tune rewrites it)"), db;
  if (j.value("format", std::string()) != kFormat || j.value("version", 0) != kVersion)
    return warn("not a version " + std::to_string(kVersion) + " " + kFormat + "; ignored"), db;
  if (!j.contains("entries") || !j["entries"].is_object()) return warn("no 'entries' object; ignored"), db;
  for (const auto& [name, value] : j["entries"].items()) {
    Stored s;
    if (auto why = readEntry(name, value, s.key, s.entry)) {
      warn("entry '" + name.substr(0, 80) + "' ignored: " + *why);
      continue;
    }
    db.entries_[name] = std::move(s);
  }
  return db;
}

std::optional<TuningEntry> TuningDb::find(const TuningKey& key) const {
  auto it = entries_.find(key.toString());
  if (it == entries_.end()) return std::nullopt;
  return it->second.entry;
}

void TuningDb::put(const TuningKey& key, const TuningEntry& entry) { entries_[key.toString()] = Stored{key, entry}; }

void TuningDb::save() const {
  if (path_.empty()) throw Error("no tuning database path: set POLYRED_TUNE_DB or POLYRED_CACHE_DIR");
  Json entries = Json::object();
  for (const auto& [name, s] : entries_) entries[name] = toJson(s.key, s.entry);
  Json root{{"format", kFormat}, {"version", kVersion}, {"entries", entries}};
  std::error_code ec;
  if (path_.has_parent_path()) fs::create_directories(path_.parent_path(), ec);
  const fs::path temporary = path_.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temporary);
    out << root.dump(1) << "\n";
    if (!out) throw Error(path_.string(), "", "cannot write the tuning database");
  }
  fs::rename(temporary, path_, ec);
  if (ec) throw Error(path_.string(), "", "cannot write the tuning database: " + ec.message());
}

}  // namespace polyred
