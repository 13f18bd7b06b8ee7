// Sharded reductions on GPUs through NCCL (src/multigpu/, driver/shard_run.h): a
// one-rank communicator made from a unique id on one GPU, and 2 GPUs driven by one
// process (ncclCommInitAll) and by one thread per GPU (ncclCommInitRank), each checked
// against the unsharded reference. Without a GPU, without NCCL or (2-GPU tests) with
// fewer than 2 GPUs every test is SKIPPED, never passed.
#include <gtest/gtest.h>

#include <thread>

#include "driver/cpu_check.h"
#include "driver/gpu_run.h"
#include "driver/shard_run.h"
#include "frontend/builder.h"
#include "interp/random_inputs.h"
#include "interp/reference.h"
#include "multigpu/nccl_library.h"
#include "runtime/cuda_driver.h"
#include "runtime/executor.h"

using namespace polyred;

namespace {

// Skips unless `gpus` GPUs and NCCL are usable.
#define REQUIRE_GPUS(gpus)                                                                           \
  do {                                                                                               \
    std::string why;                                                                                 \
    int present = cudaDeviceCount(&why);                                                             \
    if (present == 0) GTEST_SKIP() << "no GPU: " << why;                                             \
    if (present < (gpus)) GTEST_SKIP() << "needs " << (gpus) << " GPUs, " << present << " present"; \
    if (!multigpu::ncclAvailable(&why)) GTEST_SKIP() << why;                                         \
  } while (0)

struct Case {
  std::string name;
  Graph graph;
  std::vector<InputShard> shards;
};

std::vector<Case> cases() {
  std::vector<Case> v;
  {
    GraphBuilder b("sum_rows_f32");
    Value x = b.input("x", DType::Float32, {96, 40000});
    b.output(b.reduceSum(b.mul(x, x), {1}));
    v.push_back({"sum over the split reduced axis", b.build(), {{"x", 1, {}}}});
  }
  {
    GraphBuilder b("max_all_bf16");
    Value x = b.input("x", DType::BFloat16, {333, 1001});
    b.output(b.reduceMax(x, {}));
    v.push_back({"max (float: all-gather + combine), uneven", b.build(), {{"x", 0, {}}}});
  }
  {
    GraphBuilder b("mean_cols_f16");
    Value x = b.input("x", DType::Float16, {4097, 768});
    Value s = b.reduce(x, Reduction::sum(DType::Float16), {0});
    b.output(b.binary(OpKind::Div, s, b.constant(Scalar::convert(4097.0, DType::Float16))));
    v.push_back({"mean over the split batch", b.build(), {{"x", 0, {}}}});
  }
  {
    GraphBuilder b("and_rows_bool");
    Value x = b.input("x", DType::Bool, {512, 3001});
    b.output(b.reduce(x, Reduction::logicalOr(DType::Bool), {1}));
    b.output(b.reduce(x, Reduction::logicalAnd(DType::Bool), {1}));
    v.push_back({"and/or", b.build(), {{"x", 1, {}}}});
  }
  {
    GraphBuilder b("sum_kept_split");
    Value x = b.input("x", DType::Float32, {1001, 4096});
    b.output(b.reduceSum(x, {1}));
    b.output(b.reduceSum(x, {1}, true));
    v.push_back({"split kept axis: slices gathered", b.build(), {{"x", 0, {}}}});
  }
  {
    GraphBuilder b("cumsum_rows_split_batch");
    Value x = b.input("x", DType::Float32, {1000, 3000});
    Value running = b.scan(x, Reduction::sum(DType::Float32), 1);
    b.output(running);
    b.output(b.reduceMax(running, {0}));
    v.push_back({"a scan along the unsplit rows, then a max over the split batch", b.build(), {{"x", 0, {}}}});
  }
  {
    GraphBuilder b("sum_kept_inner");
    Value x = b.input("x", DType::Int32, {2000, 301});
    b.output(b.reduceSum(x, {0}));
    v.push_back({"split kept inner axis: strided gather", b.build(), {{"x", 1, {}}}});
  }
  return v;
}

void runCases(int gpus, bool deterministic) {
  for (Case& c : cases()) {
    SCOPED_TRACE(c.name);
    ShardedGpuRunOptions o;
    o.deterministic = deterministic;
    o.time = false;
    ShardedGpuRunReport r = runShardedOnGpus(c.graph, ShardSpec{gpus, c.shards}, o);
    EXPECT_TRUE(r.ok) << r.plan << r.message;
    EXPECT_TRUE(r.ranksAgree);
    if (deterministic) {
      EXPECT_TRUE(r.bitwiseRepeatable);
    }
  }
}

TEST(ShardGpu, OneRankCommunicatorFromUniqueId) {
  REQUIRE_GPUS(1);
  GraphBuilder b("one_rank");
  Value x = b.input("x", DType::Float32, {64, 10000});
  b.output(b.reduceSum(x, {1}));
  Graph g = b.build();
  ShardedLowering l = lowerSharded(g, {1, {{"x", 1, {}}}});
  CompileOptions co;
  co.target = currentTarget();
  multigpu::ShardedProgram p = compileSharded(l, co);
  ncclUniqueId id = multigpu::Communicator::newUniqueId();
  multigpu::Communicator comm = multigpu::Communicator::initRank(id, 1, 0, 0);
  multigpu::ShardedExecutor ex(p, {&comm});
  std::vector<HostTensor> in = makeRandomInputs(g, 2);
  std::vector<HostTensor> want = evaluateReference(g, in);
  cuda::ContextGuard guard(comm.context());
  DeviceBuffer din(in[0].bytes.size()), dout(want[0].bytes.size());
  din.upload(in[0].data(), in[0].bytes.size());
  CUstream stream = nullptr;
  cuda::check(cuda::driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  ex.launch({{{din.data()}, {dout.data()}, stream}});
  cuda::check(cuda::driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
  std::vector<HostTensor> got = want;
  dout.download(got[0].data(), got[0].bytes.size());
  cuda::driver().cuStreamDestroy(stream);
  CpuCheckReport r = compareOutputs(g, got, {}, want);
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(ShardGpu, OneRankCases) {
  REQUIRE_GPUS(1);
  runCases(1, false);
}

TEST(ShardGpu, TwoGpusOneProcess) {
  REQUIRE_GPUS(2);
  runCases(2, false);
}

TEST(ShardGpu, TwoGpusDeterministicIsBitwiseRepeatable) {
  REQUIRE_GPUS(2);
  runCases(2, true);
}

// One thread per GPU, each with its own communicator from one unique id (the
// one-process-per-GPU API, in threads so one test binary drives both).
TEST(ShardGpu, TwoGpusCommunicatorPerRank) {
  REQUIRE_GPUS(2);
  GraphBuilder b("per_rank");
  Value x = b.input("x", DType::Float32, {128, 30001});
  b.output(b.reduceSum(x, {1}));
  Graph g = b.build();
  ShardedLowering l = lowerSharded(g, {2, {{"x", 1, {10000, 20001}}}});
  CompileOptions co;
  co.target = currentTarget();
  multigpu::ShardedProgram p = compileSharded(l, co);
  std::vector<HostTensor> in = makeRandomInputs(g, 4);
  std::vector<HostTensor> want = evaluateReference(g, in);
  ncclUniqueId id = multigpu::Communicator::newUniqueId();
  std::vector<std::vector<HostTensor>> got(2, want);
  std::vector<std::string> errors(2);
  auto rankMain = [&](int r) {
    try {
      multigpu::Communicator comm = multigpu::Communicator::initRank(id, 2, r, r);
      multigpu::ShardedExecutor ex(p, {&comm});
      cuda::ContextGuard guard(comm.context());
      HostTensor slice = sliceForRank(in[0], 1, l.shard.offsets[static_cast<size_t>(r)],
                                      l.shard.sizes[static_cast<size_t>(r)]);
      DeviceBuffer din(slice.bytes.size()), dout(want[0].bytes.size());
      din.upload(slice.data(), slice.bytes.size());
      CUstream stream = nullptr;
      cuda::check(cuda::driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
      ex.launch({{{din.data()}, {dout.data()}, stream}});
      cuda::check(cuda::driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
      dout.download(got[static_cast<size_t>(r)][0].data(), want[0].bytes.size());
      cuda::driver().cuStreamDestroy(stream);
    } catch (const std::exception& e) {
      errors[static_cast<size_t>(r)] = e.what();
    }
  };
  std::thread t0(rankMain, 0), t1(rankMain, 1);
  t0.join();
  t1.join();
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(errors[static_cast<size_t>(r)], "") << "rank " << r;
    CpuCheckReport rep = compareOutputs(g, got[static_cast<size_t>(r)], {}, want);
    EXPECT_TRUE(rep.ok) << "rank " << r << ": " << rep.message;
  }
}

}  // namespace
