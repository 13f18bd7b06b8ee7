// support/process_memory's parsers on sample files (meminfo, status, cgroup v1 and v2,
// mountinfo), the bounds they give, and support/budget's rule that turns the tightest
// bound and --max-memory into a check's memory limit.
#include <sys/resource.h>

#include <string>

#include <gtest/gtest.h>

#include "support/budget.h"
#include "support/process_memory.h"

using namespace polyred;

namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
constexpr int64_t kMiB = int64_t{1} << 20;

const char* kMeminfo =
    "MemTotal:       24576000 kB\n"
    "MemFree:        12000000 kB\n"
    "MemAvailable:   20971520 kB\n"
    "Buffers:          100000 kB\n";

const char* kStatus =
    "Name:\tpolyred\n"
    "VmPeak:\t  600000 kB\n"
    "VmSize:\t  524288 kB\n"
    "VmData:\t  131072 kB\n"
    "VmStk:\t     132 kB\n";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(ProcessMemory, ParsesMeminfoAndStatus) {
  EXPECT_EQ(parseMemAvailable(kMeminfo), int64_t{20971520} * 1024);
  EXPECT_EQ(parseStatusBytes(kStatus, "VmSize"), 512 * kMiB);
  EXPECT_EQ(parseStatusBytes(kStatus, "VmData"), 128 * kMiB);
  EXPECT_EQ(parseStatusBytes(kStatus, "VmSwap"), std::nullopt);  // absent
  EXPECT_EQ(parseStatusBytes("VmSizeX:\t1 kB\n", "VmSize"), std::nullopt);  // another key
  EXPECT_EQ(parseMemAvailable("MemAvailable: lots kB\n"), std::nullopt);
  EXPECT_EQ(parseMemAvailable(""), std::nullopt);
}

TEST(ProcessMemory, ParsesCgroupLimitFiles) {
  EXPECT_EQ(parseCgroupBytes("1073741824\n"), kGiB);      // v2 memory.max, v1 limit_in_bytes
  EXPECT_EQ(parseCgroupBytes("max\n"), std::nullopt);     // v2: no limit
  EXPECT_EQ(parseCgroupBytes("9223372036854771712\n"), std::nullopt);  // v1: no limit
  EXPECT_EQ(parseCgroupBytes(""), std::nullopt);          // no such file
  EXPECT_EQ(parseCgroupBytes("12 kB"), std::nullopt);
}

TEST(ProcessMemory, FindsTheProcessCgroups) {
  CgroupPaths v2 = parseProcCgroup("0::/user.slice/user-0.slice/session-3.scope\n");
  EXPECT_EQ(v2.unified, "/user.slice/user-0.slice/session-3.scope");
  EXPECT_EQ(v2.memoryV1, "");
  CgroupPaths hybrid = parseProcCgroup(
      "9:name=systemd:/\n5:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n0::/docker/abc\n");
  EXPECT_EQ(hybrid.memoryV1, "/docker/abc");
  EXPECT_EQ(hybrid.unified, "/docker/abc");

  CgroupMounts mounts = parseCgroupMounts(
      "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
      "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n"
      "36 31 0:33 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
      "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n");
  ASSERT_TRUE(mounts.memoryV1 && mounts.unified);
  EXPECT_EQ(mounts.memoryV1->root, "/docker/abc");
  EXPECT_EQ(mounts.memoryV1->mountPoint, "/sys/fs/cgroup/memory");
  EXPECT_EQ(mounts.unified->mountPoint, "/sys/fs/cgroup/unified");
}

TEST(ProcessMemory, WalksFromTheProcessCgroupUpToTheMountPoint) {
  const CgroupMount host{"/", "/sys/fs/cgroup"};
  EXPECT_EQ(cgroupDirectories(host, "/a/b"),
            (std::vector<std::string>{"/sys/fs/cgroup/a/b", "/sys/fs/cgroup/a", "/sys/fs/cgroup"}));
  EXPECT_EQ(cgroupDirectories(host, "/"), (std::vector<std::string>{"/sys/fs/cgroup"}));
  // A container's mount shows its own cgroup at the mount point.
  const CgroupMount container{"/docker/abc", "/sys/fs/cgroup/memory"};
  EXPECT_EQ(cgroupDirectories(container, "/docker/abc/job"),
            (std::vector<std::string>{"/sys/fs/cgroup/memory/job", "/sys/fs/cgroup/memory"}));
  EXPECT_EQ(cgroupDirectories(container, "/docker/abcd"), (std::vector<std::string>{"/sys/fs/cgroup/memory"}));
}

TEST(ProcessMemory, TheTightestBoundWinsAndUnlimitedOnesBoundNothing) {
  MemoryFacts facts;
  facts.meminfo = kMeminfo;  // 20 GiB available
  facts.status = kStatus;    // VmSize 512 MiB, VmData 128 MiB
  facts.cgroups = {{"/sys/fs/cgroup/job", true, "max\n", "1000\n"},                      // no limit
                   {"/sys/fs/cgroup", true, std::to_string(8 * kGiB), std::to_string(kGiB)}};  // leaves 7 GiB
  std::vector<MemoryBound> bounds = memoryBounds(facts);
  ASSERT_EQ(bounds.size(), 2u);
  EXPECT_EQ(tightestBound(bounds)->bytes, 7 * kGiB);
  EXPECT_TRUE(contains(tightestBound(bounds)->what, "cgroup /sys/fs/cgroup (memory.max) leaves 7.0 GiB"));

  facts.addressSpaceLimit = 2 * kGiB;  // ulimit -v: 1.5 GiB left after VmSize
  facts.dataLimit = 4 * kGiB;          // ulimit -d: 3.875 GiB left after VmData
  bounds = memoryBounds(facts);
  ASSERT_EQ(bounds.size(), 4u);
  const MemoryBound tightest = *tightestBound(bounds);
  EXPECT_EQ(tightest.bytes, 2 * kGiB - 512 * kMiB);
  EXPECT_EQ(tightest.what, "the address-space limit (ulimit -v) leaves 1.5 GiB");

  facts.addressSpaceLimit = 256 * kMiB;  // already past it: nothing left, not negative
  EXPECT_EQ(tightestBound(memoryBounds(facts))->bytes, 0);
  EXPECT_EQ(tightestBound({}), std::nullopt);

  MemoryFacts v1;
  v1.cgroups = {{"/sys/fs/cgroup/memory", false, std::to_string(2 * kGiB), std::to_string(kGiB / 2)}};
  EXPECT_EQ(tightestBound(memoryBounds(v1))->what,
            "the memory limit of cgroup /sys/fs/cgroup/memory (memory.limit_in_bytes) leaves 1.5 GiB");
}

TEST(ProcessMemory, MaxMemoryLowersTheLimitButNeverRaisesIt) {
  const MemoryBound bound{4 * kGiB, "the address-space limit (ulimit -v) leaves 4.0 GiB"};
  MemoryLimit plain = memoryLimitGiven(bound, 0);
  EXPECT_EQ(plain.bytes, 3 * kGiB);  // the 3/4 headroom
  EXPECT_TRUE(contains(plain.why, "ulimit -v")) << plain.why;

  MemoryLimit lower = memoryLimitGiven(bound, kGiB);
  EXPECT_EQ(lower.bytes, kGiB);
  EXPECT_EQ(lower.why, "--max-memory");

  MemoryLimit higher = memoryLimitGiven(bound, 64 * kGiB);
  EXPECT_EQ(higher.bytes, 3 * kGiB);
  EXPECT_TRUE(contains(higher.why, "ulimit -v")) << higher.why;
  EXPECT_TRUE(contains(higher.why, "--max-memory=64.0 GiB cannot raise it")) << higher.why;

  EXPECT_EQ(memoryLimitGiven(std::nullopt, 0).bytes, kUnknownMemoryLimit);
}

// This process, limited by setrlimit in a forked child: the limit it reports follows.
TEST(ProcessMemory, ThisProcessSeesItsAddressSpaceLimit) {
  EXPECT_EXIT(
      {
        const int64_t used = parseStatusBytes(readMemoryFacts().status, "VmSize").value_or(0);
        rlimit limit{};
        getrlimit(RLIMIT_AS, &limit);
        limit.rlim_cur = static_cast<rlim_t>(used + 512 * kMiB);
        if (setrlimit(RLIMIT_AS, &limit) != 0) std::exit(2);
        const MemoryLimit l = memoryLimit(ResourceLimits{});
        const bool ok = l.bytes <= 3 * 512 * kMiB / 4 && l.bytes > 0 && contains(l.why, "ulimit -v");
        std::fprintf(stderr, "limit %lld: %s\n", static_cast<long long>(l.bytes), l.why.c_str());
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "ulimit -v");
}
