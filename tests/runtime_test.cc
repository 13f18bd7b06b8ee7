// CPU tests of the runtime: SHA-256, cache keys, the on-disk kernel cache (with a fake
// compiler, so no NVRTC is needed) and the no-GPU behaviour of the executor.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "runtime/executor.h"
#include "runtime/kernel_cache.h"
#include "runtime/register_fit.h"
#include "support/error.h"
#include "support/parallel.h"

namespace polyred {
namespace {

namespace fs = std::filesystem;

TEST(RuntimeSha256, MatchesPublishedVectors) {
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(RuntimeSha256, PaddingBoundaries) {
  // Lengths around 56 and 64 bytes take the one- and two-block padding paths.
  const std::map<size_t, std::string> expected = {
      {55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072"},
      {56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e"},
      {63, "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2"},
      {64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c"},
      {65, "9537c5fdf120482f7d58d25e9ed583f52c02b4e304ea814db1633ad565aed7e9"},
      {119, "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c"},
      {120, "13f05a0b594787f5ecd315edc96141bd3243203d1b7d4f0836f37308b276ba98"}};
  for (const auto& [length, hex] : expected)
    EXPECT_EQ(sha256Hex(std::string(length, 'x')), hex) << length;
}

TEST(RuntimeSha256, IncrementalUpdatesEqualOneShot) {
  std::string million(1'000'000, 'a');
  Sha256 pieces;
  for (size_t at = 0; at < million.size(); at += 999)
    pieces.update(std::string_view(million).substr(at, 999));
  Sha256 whole;
  whole.update(million);
  EXPECT_EQ(pieces.finish(), whole.finish());
  EXPECT_EQ(sha256Hex(million), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// A compiler that needs no NVRTC: the "cubin" is a function of the request, and every
// call is counted.
struct FakeCompiler {
  int calls = 0;
  Compiler compiler(std::string identity = "fake-compiler 1") {
    return {std::move(identity), [this](const CompileRequest& request) {
              ++calls;
              std::string text = "cubin:" + request.name + ":" + request.source;
              return std::vector<char>(text.begin(), text.end());
            }};
  }
};

CompileRequest addOneRequest() {
  return {"add_one",
          "extern \"C\" __global__ void add_one(float* x) { x[0] += 1; }",
          9,
          0,
          {"-lineinfo"}};
}

std::string asString(const KernelCache::Cubin& cubin) { return {cubin->begin(), cubin->end()}; }

// A fresh directory under the test temp dir, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::path(testing::TempDir()) / "polyred-runtime-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

KernelCacheConfig onDisk(const fs::path& dir) {
  KernelCacheConfig config;
  config.directory = dir;
  return config;
}

std::vector<fs::path> filesIn(const fs::path& dir) {
  std::vector<fs::path> files;
  if (fs::exists(dir))
    for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path());
  return files;
}

TEST(KernelCacheKey, IsStableAndHex) {
  FakeCompiler fake;
  KernelCache a(fake.compiler(), {});
  KernelCache b(fake.compiler(), {});
  std::string key = a.key(addOneRequest());
  EXPECT_EQ(key, b.key(addOneRequest()));
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(KernelCacheKey, ChangesWithEveryInput) {
  FakeCompiler fake;
  KernelCache cache(fake.compiler(), {});
  const std::string base = cache.key(addOneRequest());
  auto keyWith = [&](auto change) {
    CompileRequest request = addOneRequest();
    change(request);
    return cache.key(request);
  };
  EXPECT_NE(base, keyWith([](CompileRequest& r) { r.source += " "; }));
  EXPECT_NE(base, keyWith([](CompileRequest& r) { r.options = {"-G"}; }));
  EXPECT_NE(base, keyWith([](CompileRequest& r) { r.options.push_back("-G"); }));
  EXPECT_NE(base, keyWith([](CompileRequest& r) { r.ccMajor = 8; }));
  EXPECT_NE(base, keyWith([](CompileRequest& r) { r.ccMinor = 1; }));
  EXPECT_NE(base, keyWith([](CompileRequest& r) { r.name = "add_two"; }));
  KernelCache otherCompiler(fake.compiler("fake-compiler 2"), {});
  EXPECT_NE(base, otherCompiler.key(addOneRequest()));
}

TEST(KernelCacheKey, FieldBoundariesMatter) {
  FakeCompiler fake;
  KernelCache cache(fake.compiler(), {});
  CompileRequest split = addOneRequest();
  split.options = {"-a", "b"};
  CompileRequest joined = addOneRequest();
  joined.options = {"-ab"};
  EXPECT_NE(cache.key(split), cache.key(joined));
}

TEST(KernelCacheDisk, RoundTripsThroughMemoryAndDisk) {
  TempDir dir;
  FakeCompiler fake;
  KernelCache first(fake.compiler(), onDisk(dir.path()));
  std::string expected = asString(first.cubin(addOneRequest()));
  EXPECT_EQ(expected, "cubin:add_one:" + addOneRequest().source);
  EXPECT_EQ(asString(first.cubin(addOneRequest())), expected);
  EXPECT_EQ(fake.calls, 1);

  KernelCache second(fake.compiler(), onDisk(dir.path()));  // a new process, in effect
  EXPECT_EQ(asString(second.cubin(addOneRequest())), expected);
  EXPECT_EQ(fake.calls, 1);
  ASSERT_EQ(filesIn(dir.path()).size(), 1u) << "exactly the entry, no temporary files";
  EXPECT_EQ(filesIn(dir.path())[0].filename(), second.key(addOneRequest()) + ".cubin");
}

TEST(KernelCacheDisk, CorruptOrTruncatedEntriesAreRebuilt) {
  TempDir dir;
  FakeCompiler fake;
  KernelCache writer(fake.compiler(), onDisk(dir.path()));
  std::string expected = asString(writer.cubin(addOneRequest()));
  fs::path entry = dir.path() / (writer.key(addOneRequest()) + ".cubin");
  std::string valid;
  {
    std::ifstream in(entry, std::ios::binary);
    valid.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::string flipped = valid;
  flipped.back() ^= 1;
  const std::vector<std::string> damaged = {"", "garbage", valid.substr(0, valid.size() / 2),
                                            flipped};
  for (const std::string& contents : damaged) {
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << contents;
    int before = fake.calls;
    KernelCache reader(fake.compiler(), onDisk(dir.path()));
    EXPECT_EQ(asString(reader.cubin(addOneRequest())), expected);
    EXPECT_EQ(fake.calls, before + 1) << "a damaged entry must be recompiled";
  }
  KernelCache afterRepair(fake.compiler(), onDisk(dir.path()));
  int before = fake.calls;
  EXPECT_EQ(asString(afterRepair.cubin(addOneRequest())), expected);
  EXPECT_EQ(fake.calls, before) << "the rebuilt entry is valid again";
}

// A damaged entry is removed when it is read, even where the kernel then fails to
// compile and nothing takes its place; a valid one that is read stays.
TEST(KernelCacheDisk, DamagedEntriesAreRemovedWhenRead) {
  TempDir dir;
  FakeCompiler fake;
  KernelCache writer(fake.compiler(), onDisk(dir.path()));
  writer.cubin(addOneRequest());
  const fs::path entry = dir.path() / (writer.key(addOneRequest()) + ".cubin");
  KernelCache reader(fake.compiler(), onDisk(dir.path()));
  reader.cubin(addOneRequest());
  EXPECT_TRUE(fs::exists(entry)) << "a valid entry stays";
  const auto size = fs::file_size(entry);
  fs::resize_file(entry, size - 3);
  Compiler failing{"fake-compiler 1", [](const CompileRequest&) -> std::vector<char> { throw Error("no compiler"); }};
  KernelCache afterTruncation(failing, onDisk(dir.path()));
  EXPECT_THROW(afterTruncation.cubin(addOneRequest()), Error);
  EXPECT_FALSE(fs::exists(entry)) << "the truncated entry must not survive its reading";
}

// Writers of one entry at once, on many threads of two caches (two processes, in
// effect), with readers between them: each reads the kernel or a miss, never a part.
TEST(KernelCacheDisk, ConcurrentWritersOfOneKeyLeaveOneValidEntry) {
  TempDir dir;
  std::atomic<int> calls{0};
  std::string big(1 << 20, 'x');  // a write spans several syscalls
  Compiler slow{"slow", [&](const CompileRequest& r) {
                  ++calls;
                  std::string text = "cubin:" + r.name + big;
                  return std::vector<char>(text.begin(), text.end());
                }};
  std::vector<std::unique_ptr<KernelCache>> caches;
  for (int c = 0; c < 16; ++c) caches.push_back(std::make_unique<KernelCache>(slow, onDisk(dir.path())));
  const std::string expected = "cubin:add_one" + big;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (auto& cache : caches)
    threads.emplace_back([&, c = cache.get()] {
      if (asString(c->cubin(addOneRequest())) != expected) ++wrong;
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_GE(calls, 1);
  ASSERT_EQ(filesIn(dir.path()).size(), 1u) << "one entry, no temporary file left";
  KernelCache later(slow, onDisk(dir.path()));
  const int before = calls;
  EXPECT_EQ(asString(later.cubin(addOneRequest())), expected);
  EXPECT_EQ(calls, before) << "the entry left is valid";
}

TEST(KernelCacheDisk, DisabledCacheCompilesEveryTimeAndWritesNothing) {
  TempDir dir;
  FakeCompiler fake;
  KernelCacheConfig config = onDisk(dir.path());
  config.enabled = false;
  KernelCache cache(fake.compiler(), config);
  cache.cubin(addOneRequest());
  cache.cubin(addOneRequest());
  EXPECT_EQ(fake.calls, 2);
  EXPECT_TRUE(filesIn(dir.path()).empty());
}

TEST(KernelCacheDisk, CompileErrorsPropagateAndCacheNothing) {
  TempDir dir;
  int calls = 0;
  Compiler failing{"failing", [&](const CompileRequest&) -> std::vector<char> {
                     ++calls;
                     throw Error("does not compile");
                   }};
  KernelCache cache(failing, onDisk(dir.path()));
  EXPECT_THROW(cache.cubin(addOneRequest()), Error);
  EXPECT_THROW(cache.cubin(addOneRequest()), Error);
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(filesIn(dir.path()).empty());
}

// warmFittedCubins (runtime/register_fit.h) compiles on several threads: each missing
// kernel once, nothing already cached; a kernel that fails is left for the cubin()
// call that needs it. (The counting compiler's "cubins" hold no register counts, so no
// kernel is compiled a second time under a bound.)
TEST(KernelCacheWarm, CompilesEachMissingKernelOnce) {
  TempDir dir;
  std::atomic<int> calls{0};
  Compiler counting{"counting", [&](const CompileRequest& r) {
                      ++calls;
                      if (r.name.rfind("bad", 0) == 0) throw Error("does not compile");
                      std::string text = "cubin:" + r.name;
                      return std::vector<char>(text.begin(), text.end());
                    }};
  KernelCache cache(counting, onDisk(dir.path()));
  std::vector<KernelSpec> specs(40);
  std::vector<CompileRequest> requests;
  for (int k = 0; k < 40; ++k) {
    specs[k].name = (k == 17 ? "bad" : "k") + std::to_string(k);
    specs[k].source = addOneRequest().source;
    specs[k].registerFit = RegisterFitMode::Auto;
    requests.push_back(compileRequest(specs[k], 9, 0));
  }
  std::vector<const KernelSpec*> pointers;
  for (const KernelSpec& spec : specs) pointers.push_back(&spec);
  cache.cubin(requests[0]);
  EXPECT_EQ(calls, 1);
  EXPECT_NO_THROW(warmFittedCubins(cache, pointers, 9, 0, 8));
  EXPECT_EQ(calls, 40);
  for (const CompileRequest& r : requests)
    if (r.name != "bad17") EXPECT_EQ(asString(cache.cubin(r)), "cubin:" + r.name);
  EXPECT_EQ(calls, 40) << "the warmed cubins come from memory";
  EXPECT_THROW(cache.cubin(requests[17]), Error);
  EXPECT_EQ(filesIn(dir.path()).size(), 39u);
}

TEST(ParallelFor, RunsEveryIndexOnceAndRethrowsTheLowestFailure) {
  std::vector<std::atomic<int>> runs(100);
  try {
    parallelFor(runs.size(), 6, [&](size_t k) {
      ++runs[k];
      if (k == 37 || k == 81) throw Error("index " + std::to_string(k));
    });
    ADD_FAILURE() << "nothing was rethrown";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("index 37"), std::string::npos) << e.what();
  }
  for (const std::atomic<int>& r : runs) EXPECT_EQ(r.load(), 1);
  int calls = 0;
  parallelFor(0, 4, [&](size_t) { ++calls; });
  parallelFor(3, 0, [&](size_t) { ++calls; });  // 0 threads: the calling thread alone
  EXPECT_EQ(calls, 3);
}

TEST(KernelCacheDisk, UsageAndClearCountOnlyCacheEntries) {
  TempDir dir;
  FakeCompiler fake;
  KernelCache cache(fake.compiler(), onDisk(dir.path()));
  cache.cubin(addOneRequest());
  { std::ofstream(dir.path() / "notes.txt") << "not a cache entry"; }
  const std::string leftover = cache.key(addOneRequest()) + ".cubin.tmp.4242.0.17";  // a writer died
  { std::ofstream(dir.path() / leftover) << "half an entry"; }
  KernelCache::DiskUsage u = KernelCache::diskUsage(onDisk(dir.path()));
  EXPECT_EQ(u.entries, 1);
  EXPECT_GT(u.bytes, 0);
  EXPECT_EQ(KernelCache::clearDisk(onDisk(dir.path())), 1);
  EXPECT_EQ(KernelCache::diskUsage(onDisk(dir.path())).entries, 0);
  EXPECT_FALSE(fs::exists(dir.path() / leftover)) << "a dead writer's temporary file goes too";
  EXPECT_TRUE(fs::exists(dir.path() / "notes.txt")) << "clear removes cache files only";
  EXPECT_EQ(KernelCache::diskUsage(onDisk(dir.path() / "missing")).entries, 0);
}

// Sets environment variables for one test and restores them afterwards.
class ScopedEnv {
 public:
  void set(const char* name, const char* value) {
    if (!saved_.contains(name)) {
      const char* old = getenv(name);
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value)
        setenv(name.c_str(), value->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(KernelCacheEnvironment, DirectoryPrecedence) {
  ScopedEnv env;
  env.set("POLYRED_DISABLE_CACHE", nullptr);
  env.set("HOME", "/home/someone");
  env.set("XDG_CACHE_HOME", nullptr);
  env.set("POLYRED_CACHE_DIR", nullptr);
  EXPECT_EQ(KernelCache::configFromEnvironment().directory,
            fs::path("/home/someone/.cache/polyred"));
  EXPECT_EQ(KernelCache::configFromEnvironment().directoryFrom, "HOME");
  env.set("XDG_CACHE_HOME", "/xdg");
  EXPECT_EQ(KernelCache::configFromEnvironment().directory, fs::path("/xdg/polyred"));
  env.set("POLYRED_CACHE_DIR", "/explicit");
  KernelCacheConfig config = KernelCache::configFromEnvironment();
  EXPECT_EQ(config.directory, fs::path("/explicit"));
  EXPECT_TRUE(config.enabled);
  EXPECT_EQ(config.directoryFrom, "POLYRED_CACHE_DIR");
}

TEST(KernelCacheEnvironment, Disable) {
  ScopedEnv env;
  env.set("POLYRED_DISABLE_CACHE", "1");
  KernelCacheConfig config = KernelCache::configFromEnvironment();
  EXPECT_FALSE(config.enabled);
  env.set("POLYRED_DISABLE_CACHE", "0");
  EXPECT_TRUE(KernelCache::configFromEnvironment().enabled);
}

// Without a GPU, everything that needs one says why instead of crashing.
TEST(RuntimeNoGpu, ReportsWhyAndThrowsNoGpuError) {
  std::string why;
  if (gpuAvailable(&why)) GTEST_SKIP() << "a GPU is present";
  EXPECT_FALSE(why.empty());
  EXPECT_FALSE(gpuAvailable(nullptr));
  try {
    currentDevice();
    ADD_FAILURE() << "currentDevice() did not throw";
  } catch (const NoGpuError& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
  EXPECT_THROW(DeviceBuffer(16), NoGpuError);
  EXPECT_THROW(CompiledProgram::load(Program{}, DeviceInfo{}), NoGpuError);
  EXPECT_THROW(timeMedianMicros([](CUstream) {}), NoGpuError);
}

}  // namespace
}  // namespace polyred
