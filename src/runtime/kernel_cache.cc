// SHA-256, the cache key, the memory and disk layers of the kernel cache, and the NVRTC
// compiler it uses by default.
#include "runtime/kernel_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <random>

#include "codegen/device_sources.h"
#include "runtime/nvrtc.h"
#include "support/error.h"

namespace polyred {
namespace {

// Bump when anything that shapes a cubin changes without showing up in the key (the
// key's layout, the entry file format, how the compiler is driven).
constexpr std::string_view kCacheVersion = "polyred-kernel-cache-1";
// First bytes of an entry file; followed by the payload's SHA-256, then the payload.
constexpr std::string_view kEntryMagic = "polyred-cubin-1\n";
constexpr size_t kDigestBytes = 32;
// Larger files under an entry's name are not entries polyred wrote (CUBINs are KBs to MBs).
constexpr size_t kMaxEntryBytes = size_t{256} << 20;
// An entry being written: "<key>.cubin" + this + a name of the writer's own.
constexpr std::string_view kTemporaryInfix = ".tmp.";

constexpr std::array<uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

uint32_t rotateRight(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

std::string toHex(const std::array<uint8_t, 32>& digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t byte : digest) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 15];
  }
  return hex;
}

std::string_view asText(const std::array<uint8_t, 32>& digest) {
  return {reinterpret_cast<const char*>(digest.data()), digest.size()};
}

// The payload of an entry file if its header and checksum hold.
std::optional<std::string_view> validPayload(std::string_view file) {
  const size_t headerBytes = kEntryMagic.size() + kDigestBytes;
  if (file.size() <= headerBytes || !file.starts_with(kEntryMagic)) return std::nullopt;
  const std::string_view payload = file.substr(headerBytes);
  Sha256 hash;
  hash.update(payload);
  const std::array<uint8_t, 32> digest = hash.finish();
  if (asText(digest) != file.substr(kEntryMagic.size(), kDigestBytes)) return std::nullopt;
  return payload;
}

// Feeds a length-prefixed field, so that no two different field lists hash alike.
void updateField(Sha256& hash, std::string_view field) {
  uint64_t length = field.size();
  char prefix[8];
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>(length >> (8 * i));
  hash.update({prefix, sizeof prefix});
  hash.update(field);
}

std::string readEnv(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// A name no other writer picks, in this process or another (on this host or, for a
// cache on a shared file system, another): the process id and 64 random bits.
std::filesystem::path temporaryNameFor(const std::filesystem::path& path) {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 random{std::random_device{}()};
  std::filesystem::path temporary = path;
  temporary += std::string(kTemporaryInfix) + std::to_string(getpid()) + "." + std::to_string(counter++) + "." +
               std::to_string(random());
  return temporary;
}

bool writeAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Makes a rename in `dir` durable; best effort (not every file system syncs directories).
void syncDirectory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// Writes `parts` to `path` through a temporary file of its own in the same directory,
// synced to disk before the rename: readers, in this process or any other, see no file,
// the previous one or the complete new one, and a crash cannot leave a renamed file
// whose bytes never reached the disk. Writers of the same path at once each rename a
// complete file; the last rename stays. Returns false on any failure (the temporary
// file removed).
bool writeAtomically(const std::filesystem::path& path, std::initializer_list<std::string_view> parts) {
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  const std::filesystem::path temporary = temporaryNameFor(path);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool written = true;
  for (std::string_view part : parts) written = written && writeAll(fd, part);
  written = written && ::fsync(fd) == 0;
  written = ::close(fd) == 0 && written;
  if (written) std::filesystem::rename(temporary, path, error);
  if (!written || error) {
    std::filesystem::remove(temporary, error);
    return false;
  }
  syncDirectory(path.parent_path());
  return true;
}

// A regular file's identity and bytes (none where it is larger than maxBytes: no entry
// is), or nothing for a missing file or one of another kind.
struct FileRead {
  std::string bytes;
  dev_t device = 0;
  ino_t inode = 0;
};
std::optional<FileRead> readFile(const std::filesystem::path& path, size_t maxBytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // a FIFO must not block
  if (fd < 0) return std::nullopt;
  struct stat st;
  std::optional<FileRead> file;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    file.emplace();
    file->device = st.st_dev;
    file->inode = st.st_ino;
    if (static_cast<uint64_t>(st.st_size) <= maxBytes) file->bytes.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < file->bytes.size()) {
      const ssize_t n = ::read(fd, file->bytes.data() + done, file->bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    file->bytes.resize(done);  // shorter than its size said: its checksum fails
  }
  ::close(fd);
  return file;
}

// Removes the file at `path` if it is still the one that was read: a writer may have
// renamed a valid entry over it since.
void removeIfUnchanged(const std::filesystem::path& path, const FileRead& read) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && st.st_dev == read.device && st.st_ino == read.inode)
    ::unlink(path.c_str());
}

// NVRTC's version, the options compileCuda adds on its own and the device headers it
// supplies. The options are taken for a placeholder arch: the real one is in the key.
std::string nvrtcIdentity() {
  Sha256 inputs;
  for (const std::string& option : nvrtcOptions(0, 0)) updateField(inputs, option);
  for (const DeviceSource& header : deviceSources()) {
    updateField(inputs, header.name);
    updateField(inputs, header.text);
  }
  return "nvrtc " + nvrtcVersion() + " " + toHex(inputs.finish());
}

}  // namespace

Sha256::Sha256()
    : state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
             0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::update(std::string_view bytes) {
  totalBytes_ += bytes.size();
  for (char c : bytes) {
    pending_[pendingBytes_++] = static_cast<uint8_t>(c);
    if (pendingBytes_ == pending_.size()) {
      compressBlock(pending_.data());
      pendingBytes_ = 0;
    }
  }
}

std::array<uint8_t, 32> Sha256::finish() {
  uint64_t totalBits = totalBytes_ * 8;
  // Padding: a 1 bit, zeros up to 56 bytes mod 64, then the bit length big-endian.
  pending_[pendingBytes_++] = 0x80;
  if (pendingBytes_ > 56) {
    std::fill(pending_.begin() + pendingBytes_, pending_.end(), 0);
    compressBlock(pending_.data());
    pendingBytes_ = 0;
  }
  std::fill(pending_.begin() + pendingBytes_, pending_.begin() + 56, 0);
  for (int i = 0; i < 8; ++i) pending_[63 - i] = static_cast<uint8_t>(totalBits >> (8 * i));
  compressBlock(pending_.data());
  std::array<uint8_t, 32> digest;
  for (int i = 0; i < 32; ++i)
    digest[i] = static_cast<uint8_t>(state_[i / 4] >> (24 - 8 * (i % 4)));
  return digest;
}

void Sha256::compressBlock(const uint8_t* block) {
  std::array<uint32_t, 64> w;
  for (int i = 0; i < 16; ++i)
    w[i] = uint32_t{block[4 * i]} << 24 | uint32_t{block[4 * i + 1]} << 16 |
           uint32_t{block[4 * i + 2]} << 8 | uint32_t{block[4 * i + 3]};
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = rotateRight(w[i - 15], 7) ^ rotateRight(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotateRight(w[i - 2], 17) ^ rotateRight(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  auto [a, b, c, d, e, f, g, h] = state_;
  for (int i = 0; i < 64; ++i) {
    uint32_t s1 = rotateRight(e, 6) ^ rotateRight(e, 11) ^ rotateRight(e, 25);
    uint32_t choose = (e & f) ^ (~e & g);
    uint32_t t1 = h + s1 + choose + kRoundConstants[i] + w[i];
    uint32_t s0 = rotateRight(a, 2) ^ rotateRight(a, 13) ^ rotateRight(a, 22);
    uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + s0 + majority;
  }
  std::array<uint32_t, 8> mixed = {a, b, c, d, e, f, g, h};
  for (int i = 0; i < 8; ++i) state_[i] += mixed[i];
}

std::string sha256Hex(std::string_view bytes) {
  Sha256 hash;
  hash.update(bytes);
  return toHex(hash.finish());
}

Compiler nvrtcCompiler() {
  return {nvrtcIdentity(), [](const CompileRequest& request) {
            return compileCuda(request.source, request.name + ".cu", request.ccMajor,
                               request.ccMinor, request.options)
                .cubin;
          }};
}

KernelCache::KernelCache(Compiler compiler, KernelCacheConfig config)
    : compiler_(std::move(compiler)), config_(std::move(config)) {}

KernelCache& KernelCache::global() {
  static KernelCache cache(nvrtcCompiler(), configFromEnvironment());
  return cache;
}

KernelCacheConfig KernelCache::configFromEnvironment() {
  KernelCacheConfig config;
  std::string disable = readEnv("POLYRED_DISABLE_CACHE");
  config.enabled = disable.empty() || disable == "0";
  if (std::string dir = readEnv("POLYRED_CACHE_DIR"); !dir.empty()) {
    config.directory = dir;
    config.directoryFrom = "POLYRED_CACHE_DIR";
  } else if (std::string xdg = readEnv("XDG_CACHE_HOME"); !xdg.empty()) {
    config.directory = std::filesystem::path(xdg) / "polyred";
    config.directoryFrom = "XDG_CACHE_HOME";
  } else if (std::string home = readEnv("HOME"); !home.empty()) {
    config.directory = std::filesystem::path(home) / ".cache" / "polyred";
    config.directoryFrom = "HOME";
  }
  return config;
}

std::string KernelCache::key(const CompileRequest& request) const {
  Sha256 hash;
  updateField(hash, kCacheVersion);
  updateField(hash, compiler_.identity);
  updateField(hash, "sm_" + std::to_string(request.ccMajor) + std::to_string(request.ccMinor));
  updateField(hash, std::to_string(request.options.size()));
  for (const std::string& option : request.options) updateField(hash, option);
  updateField(hash, request.name);
  updateField(hash, request.source);
  return toHex(hash.finish());
}

KernelCache::Cubin KernelCache::cubin(const CompileRequest& request) {
  std::string entryKey = key(request);
  if (!config_.enabled)
    return std::make_shared<const std::vector<char>>(compiler_.compile(request));
  if (Cubin hit = findInMemory(entryKey)) return hit;
  // Compiling happens outside the lock: two threads may compile the same kernel once
  // each, which is cheaper than serializing every compile.
  Cubin found = readFromDisk(entryKey);
  if (!found) {
    found = std::make_shared<const std::vector<char>>(compiler_.compile(request));
    writeToDisk(entryKey, *found);
  }
  std::lock_guard lock(mutex_);
  return memory_.try_emplace(entryKey, found).first->second;
}

KernelCache::Cubin KernelCache::findInMemory(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = memory_.find(key);
  return it == memory_.end() ? nullptr : it->second;
}

std::filesystem::path KernelCache::entryPath(const std::string& key) const {
  return config_.directory / (key + ".cubin");
}

// A missing, unreadable, truncated or corrupt entry reads as absent (never as an
// error); a damaged one is removed, and the caller's recompiled entry takes its place.
KernelCache::Cubin KernelCache::readFromDisk(const std::string& key) const {
  if (config_.directory.empty()) return nullptr;
  const std::filesystem::path path = entryPath(key);
  std::optional<FileRead> file = readFile(path, kMaxEntryBytes);
  if (!file) return nullptr;
  std::optional<std::string_view> payload = validPayload(file->bytes);
  if (!payload) {
    removeIfUnchanged(path, *file);
    return nullptr;
  }
  return std::make_shared<const std::vector<char>>(payload->begin(), payload->end());
}

// Best effort: a cache that cannot be written (read-only home, full disk) only costs
// recompiling next time.
void KernelCache::writeToDisk(const std::string& key, const std::vector<char>& cubin) const {
  if (config_.directory.empty()) return;
  std::string_view payload(cubin.data(), cubin.size());
  Sha256 hash;
  hash.update(payload);
  std::array<uint8_t, 32> digest = hash.finish();
  writeAtomically(entryPath(key), {kEntryMagic, asText(digest), payload});
}

namespace {

// A cache entry's file name: 64 lowercase hex digits and ".cubin".
bool isEntryName(std::string_view name) {
  if (name.size() != 64 + 6 || !name.ends_with(".cubin")) return false;
  return std::all_of(name.begin(), name.begin() + 64, [](char c) { return std::isxdigit(c) && !std::isupper(c); });
}

// A temporary file of writeAtomically for an entry (left behind by a writer that died).
bool isTemporaryName(std::string_view name) {
  const size_t infix = 64 + 6;
  return name.size() > infix + kTemporaryInfix.size() && isEntryName(name.substr(0, infix)) &&
         name.substr(infix, kTemporaryInfix.size()) == kTemporaryInfix;
}

template <class F>
void forEachFile(const KernelCacheConfig& config, F&& f) {
  std::error_code ec;
  if (config.directory.empty() || !std::filesystem::is_directory(config.directory, ec)) return;
  for (const auto& e : std::filesystem::directory_iterator(config.directory, ec))
    if (e.is_regular_file(ec)) f(e, e.path().filename().string());
}

}  // namespace

KernelCache::DiskUsage KernelCache::diskUsage(const KernelCacheConfig& config) {
  DiskUsage u;
  forEachFile(config, [&](const std::filesystem::directory_entry& e, const std::string& name) {
    if (!isEntryName(name)) return;
    std::error_code ec;
    ++u.entries;
    u.bytes += static_cast<int64_t>(e.file_size(ec));
  });
  return u;
}

int64_t KernelCache::clearDisk(const KernelCacheConfig& config) {
  std::vector<std::filesystem::path> entries, temporaries;
  forEachFile(config, [&](const std::filesystem::directory_entry& e, const std::string& name) {
    if (isEntryName(name)) entries.push_back(e.path());
    else if (isTemporaryName(name)) temporaries.push_back(e.path());
  });
  int64_t removed = 0;
  for (const auto& path : entries) {
    std::error_code ec;
    if (std::filesystem::remove(path, ec)) ++removed;  // false without ec: another process removed it
    else if (ec) throw Error(path.string(), "", "cannot remove this cache entry: " + ec.message());
  }
  for (const auto& path : temporaries) {  // best effort: a live writer's rename then fails, harmlessly
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
  return removed;
}

}  // namespace polyred
