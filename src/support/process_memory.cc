// Reads and parses what bounds this process's memory (see process_memory.h).
#include "support/process_memory.h"

#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/budget.h"

namespace polyred {

namespace {

// v1 reports "no limit" as the page counter's maximum (about 2^63 rounded to pages).
constexpr int64_t kUnlimitedFrom = int64_t{1} << 62;

std::string_view trimmed(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

std::optional<int64_t> parseNumber(std::string_view s) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (error != std::errc() || end != s.data() + s.size() || value < 0) return std::nullopt;
  return value;
}

std::vector<std::string_view> lines(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    size_t end = text.find('\n');
    out.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (size_t start = 0;;) {
    size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

// A "Key: 123 kB" line's value in bytes, for /proc/meminfo and /proc/self/status.
std::optional<int64_t> kibLine(std::string_view text, std::string_view key) {
  for (std::string_view line : lines(text)) {
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ':') continue;
    std::string_view rest = trimmed(line.substr(key.size() + 1));
    if (rest.size() < 3 || rest.substr(rest.size() - 3) != " kB") return std::nullopt;
    std::optional<int64_t> kib = parseNumber(trimmed(rest.substr(0, rest.size() - 3)));
    if (!kib || *kib > (int64_t{1} << 52)) return std::nullopt;
    return *kib * 1024;
  }
  return std::nullopt;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<int64_t> softLimit(int resource) {
  rlimit limit{};
  if (getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
      limit.rlim_cur >= static_cast<rlim_t>(kUnlimitedFrom))
    return std::nullopt;
  return static_cast<int64_t>(limit.rlim_cur);
}

// What `limit` leaves once `used` is taken (never below 0).
MemoryBound leaves(int64_t limit, int64_t used, const std::string& what) {
  const int64_t left = std::max<int64_t>(0, limit - used);
  return {left, what + " leaves " + formatBytes(left)};
}

// The levels of the cgroup hierarchy mounted at `mount` that hold limits for `path`.
void addCgroupLevels(const std::optional<CgroupMount>& mount, const std::string& path, bool v2,
                     std::vector<CgroupLevel>& levels) {
  if (!mount || path.empty()) return;
  std::vector<std::string> dirs = cgroupDirectories(*mount, path);
  // Without a cgroup namespace a container may mount only its own cgroup at the mount
  // point while /proc/self/cgroup names the host's path: the mount point is then ours.
  if (!std::filesystem::is_directory(dirs.front())) dirs = {mount->mountPoint};
  for (const std::string& dir : dirs)
    levels.push_back({dir, v2, readFile(dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes")),
                      readFile(dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes"))});
}

}  // namespace

std::optional<int64_t> parseMemAvailable(std::string_view meminfo) { return kibLine(meminfo, "MemAvailable"); }

std::optional<int64_t> parseStatusBytes(std::string_view status, std::string_view key) { return kibLine(status, key); }

std::optional<int64_t> parseCgroupBytes(std::string_view text) {
  std::optional<int64_t> value = parseNumber(trimmed(text));
  if (!value || *value >= kUnlimitedFrom) return std::nullopt;
  return value;
}

CgroupPaths parseProcCgroup(std::string_view text) {
  CgroupPaths paths;
  for (std::string_view line : lines(text)) {
    // "hierarchy-id:controller,list:path"; the path may itself hold ':'.
    size_t first = line.find(':');
    size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view id = line.substr(0, first), controllers = line.substr(first + 1, second - first - 1);
    std::string path(line.substr(second + 1));
    if (id == "0" && controllers.empty()) paths.unified = path;
    for (std::string_view c : split(controllers, ','))
      if (c == "memory") paths.memoryV1 = path;
  }
  return paths;
}

CgroupMounts parseCgroupMounts(std::string_view mountinfo) {
  CgroupMounts mounts;
  for (std::string_view line : lines(mountinfo)) {
    // "id parent major:minor root mount-point options [optional...] - fstype source super-options"
    std::vector<std::string_view> fields = split(line, ' ');
    auto dash = std::find(fields.begin(), fields.end(), "-");
    if (fields.size() < 5 || dash == fields.end() || fields.end() - dash < 4) continue;
    std::string_view fstype = dash[1], superOptions = dash[3];
    CgroupMount mount{std::string(fields[3]), std::string(fields[4])};
    if (fstype == "cgroup2" && !mounts.unified) mounts.unified = mount;
    std::vector<std::string_view> options = split(superOptions, ',');
    if (fstype == "cgroup" && !mounts.memoryV1 && std::find(options.begin(), options.end(), "memory") != options.end())
      mounts.memoryV1 = mount;
  }
  return mounts;
}

std::vector<std::string> cgroupDirectories(const CgroupMount& mount, const std::string& path) {
  std::string root = mount.root == "/" ? "" : mount.root;
  bool inside = path.compare(0, root.size(), root) == 0 && (path.size() == root.size() || path[root.size()] == '/');
  std::string relative = inside ? path.substr(root.size()) : "";
  while (!relative.empty() && relative.back() == '/') relative.pop_back();
  std::vector<std::string> dirs;
  for (;;) {
    dirs.push_back(mount.mountPoint + relative);
    if (relative.empty()) return dirs;
    relative.resize(relative.rfind('/'));
  }
}

std::vector<MemoryBound> memoryBounds(const MemoryFacts& facts) {
  std::vector<MemoryBound> bounds;
  if (std::optional<int64_t> available = parseMemAvailable(facts.meminfo))
    bounds.push_back({*available, "the kernel reports " + formatBytes(*available) + " available (MemAvailable)"});
  for (const CgroupLevel& level : facts.cgroups) {
    std::optional<int64_t> limit = parseCgroupBytes(level.limit), usage = parseCgroupBytes(level.usage);
    if (limit)
      bounds.push_back(leaves(*limit, usage.value_or(0),
                              "the memory limit of cgroup " + level.directory +
                                  (level.v2 ? " (memory.max)" : " (memory.limit_in_bytes)")));
  }
  if (facts.addressSpaceLimit)
    bounds.push_back(leaves(*facts.addressSpaceLimit, parseStatusBytes(facts.status, "VmSize").value_or(0),
                            "the address-space limit (ulimit -v)"));
  if (facts.dataLimit)
    bounds.push_back(leaves(*facts.dataLimit, parseStatusBytes(facts.status, "VmData").value_or(0),
                            "the data-segment limit (ulimit -d)"));
  return bounds;
}

std::optional<MemoryBound> tightestBound(const std::vector<MemoryBound>& bounds) {
  if (bounds.empty()) return std::nullopt;
  return *std::min_element(bounds.begin(), bounds.end(),
                           [](const MemoryBound& a, const MemoryBound& b) { return a.bytes < b.bytes; });
}

MemoryFacts readMemoryFacts() {
  MemoryFacts facts;
  facts.meminfo = readFile("/proc/meminfo");
  facts.status = readFile("/proc/self/status");
  facts.addressSpaceLimit = softLimit(RLIMIT_AS);
  facts.dataLimit = softLimit(RLIMIT_DATA);
  const CgroupPaths paths = parseProcCgroup(readFile("/proc/self/cgroup"));
  const CgroupMounts mounts = parseCgroupMounts(readFile("/proc/self/mountinfo"));
  addCgroupLevels(mounts.unified, paths.unified, /*v2=*/true, facts.cgroups);
  addCgroupLevels(mounts.memoryV1, paths.memoryV1, /*v2=*/false, facts.cgroups);
  return facts;
}

}  // namespace polyred
