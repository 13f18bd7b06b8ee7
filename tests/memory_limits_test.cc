// The memory a check plans against what the process really has: `polyred check` of an
// inflated shape under an address-space limit (ulimit -v) and, where the machine lets
// a test make one, under a cgroup memory limit, must be refused with exit 2 and a
// message naming the limit -- never die of bad_alloc (exit 3) or the OOM killer. And
// the plan counts the CPU executor's own state, which once escaped it.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "support/process_memory.h"

using namespace polyred;
namespace fs = std::filesystem;

namespace {

// A row sum of a [rows, cols] float32 input, as MindSpore writes it.
std::string rowSumComposite(int64_t rows, int64_t cols) {
  const std::string in = "[" + std::to_string(rows) + "," + std::to_string(cols) + "]";
  const std::string out = "[" + std::to_string(rows) + ",1]";
  return R"({"composite":true,"composite_graph":"1.1.1","id":1,"input_desc":[[{"data_type":"float32","format":"DefaultFormat","shape":)" +
         in + R"(,"tensor_name":"input_0"}]],"op":"Fused_ReduceSum_inflated","op_desc":[{"attr":[{"data_type":"listInt","name":"axis","value":[1]},{"data_type":"bool","name":"keep_dims","value":true}],"impl_path":"","input_desc":[[{"data_type":"float32","format":"DefaultFormat","name":"input_0","shape":)" +
         in + R"(,"tensor_name":"input_0"}]],"name":"ReduceSum","output_desc":[{"data_type":"float32","format":"DefaultFormat","name":"output_0","shape":)" +
         out + R"(,"tensor_name":"output_0_0"}]}],"output_desc":[{"data_type":"float32","format":"DefaultFormat","shape":)" +
         out + R"(,"tensor_name":"output_0_0"}],"platform":"AKG","process":"cuda"})";
}

class MemoryLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("polyred_memory_limits_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    big_ = write("inflated.json", rowSumComposite(16384, 16384));  // a 1 GiB input
    small_ = write("small.json", rowSumComposite(16, 2));
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  struct Run {
    int exit = -1;
    std::string err;
  };
  // `polyred check FILE`, after `setup` (shell commands) in the same process.
  Run check(const std::string& setup, const std::string& file) const {
    const fs::path err = dir_ / "stderr";
    const std::string cmd = "bash -c '" + setup + " && exec \"" POLYRED_CLI "\" check \"" + file + "\"' >/dev/null 2>\"" +
                            err.string() + "\"";
    const int status = std::system(cmd.c_str());
    std::ifstream in(err);
    std::stringstream text;
    text << in.rdbuf();
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), text.str()};
  }

  fs::path dir_;
  std::string big_, small_;
};

}  // namespace

TEST_F(MemoryLimits, AnAddressSpaceLimitRefusesWhatItCannotHold) {
  // 1 GiB of address space: the check's 1 GiB input cannot fit beside the program.
  const Run refused = check("ulimit -v 1048576", big_);
  EXPECT_EQ(refused.exit, 2) << refused.err;
  EXPECT_NE(refused.err.find("would need about"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("the address-space limit (ulimit -v) leaves"), std::string::npos) << refused.err;
  // And the same limit leaves room for a check that fits.
  const Run fits = check("ulimit -v 1048576", small_);
  EXPECT_EQ(fits.exit, 0) << fits.err;
}

TEST_F(MemoryLimits, ACgroupLimitRefusesWhatItCannotHold) {
  // A memory cgroup of our own (v1 memory controller or v2 memory.max); many machines
  // allow neither to a test, and the test is skipped there.
  const CgroupPaths paths = parseProcCgroup([] {
    std::ifstream in("/proc/self/cgroup");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }());
  const std::string name = "polyred_test_" + std::to_string(getpid());
  std::string group, limitFile;
  if (fs::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes")) {
    group = "/sys/fs/cgroup/memory/" + name;
    limitFile = "memory.limit_in_bytes";
  } else if (fs::exists("/sys/fs/cgroup/cgroup.controllers") && !paths.unified.empty()) {
    group = "/sys/fs/cgroup" + paths.unified + "/" + name;
    limitFile = "memory.max";
  } else {
    GTEST_SKIP() << "no cgroup memory controller is mounted at /sys/fs/cgroup";
  }
  std::error_code error;
  if (!fs::create_directory(group, error)) GTEST_SKIP() << "cannot create cgroup " << group << ": " << error.message();
  std::ofstream(group + "/" + limitFile) << (int64_t{768} << 20);
  std::ifstream back(group + "/" + limitFile);
  int64_t limit = 0;
  back >> limit;
  if (limit != int64_t{768} << 20) {
    fs::remove(group, error);
    GTEST_SKIP() << "cannot set " << limitFile << " of cgroup " << group << " (the memory controller is not enabled there)";
  }
  const Run refused = check("echo $$ > " + group + "/cgroup.procs", big_);
  fs::remove(group, error);
  EXPECT_EQ(refused.exit, 2) << refused.err;
  EXPECT_NE(refused.err.find("the memory limit of cgroup"), std::string::npos) << refused.err;
}

TEST(CheckMemoryPlan, CountsTheExecutorsWorkspaceOfEveryRow) {
  // A row sum of 2^20 rows: the executor keeps a 32-byte Scalar per row beside the
  // outputs the plan counts at 4 bytes an element (three copies and a mask).
  GraphBuilder b("rows");
  Value x = b.input("x", DType::Float32, {int64_t{1} << 20, 2});
  b.output(b.reduceSum(x, {1}));
  CompiledGraph c = compileGraph(b.build(), CompileOptions{});
  CpuCheckOptions o;
  const CheckMemory m = planCheckMemory(c, &o);
  EXPECT_GE(m.executor, (int64_t{1} << 20) * 32);
  EXPECT_EQ(planCheckMemory(c).executor, 0);  // a GPU run's host side has no executor
  EXPECT_NE(m.toString().find("executor"), std::string::npos) << m.toString();
}
