// Cache hints (poly/cache_hints.h): in a kernel of several passes the last pass's loads
// that read each element once, and its stores, evict first from the L2; a load of a
// tensor that every row reads (a broadcast weight) stays plain; single-pass kernels get
// hints with `evict=on`/`stream`, none with `evict=off`, and by default only reductions
// without point stores whose reads fill between a quarter of the L2 and four times it
// (their loads as ld.global.cs); the last loads of a kernel of several passes go as
// ld.global.cs where the last pass stores, with the L2 policy where it does not. Hinted programs match the
// reference on the CPU and compile under NVRTC (tests/gpu/row_resident_gpu_test.cc and
// the tuple GPU tests run them).
#include <gtest/gtest.h>

#include <string>

#include "driver/pipeline.h"
#include "lowering_helpers.h"
#include "row_resident_graphs.h"

namespace polyred {
namespace {

// The body value that loads graph input `input` (there is one per input here).
size_t loadOf(const KernelPlan& plan, int input) {
  for (size_t v = 0; v < plan.body.size(); ++v)
    if (plan.body[v].kind == BodyValue::Kind::Load && plan.body[v].input == input) return v;
  ADD_FAILURE() << "no load of input " << input;
  return 0;
}

// y = (x - mean(x)) * w over the last axis: two passes, w [N] read by every row.
Graph centeredTimesWeight(const Shape& shape) {
  GraphBuilder b("centered_times_weight");
  Value x = b.input("x", DType::Float32, shape);
  Value w = b.input("w", DType::Float32, {shape.back()});
  Value mean = b.mul(b.reduceSum(x, {-1}, true),
                     b.constant(Scalar::ofFloat(DType::Float32, 1.0 / static_cast<double>(shape.back()))));
  b.output(b.mul(b.sub(x, mean), w));
  return b.build();
}

TEST(CacheHints, SoftmaxRowsEvictFirstInTheirLastPass) {
  for (const Shape& shape : {Shape{300, 1024}, Shape{300, 1001}}) {  // aligned rows, masked rows
    // Without the row cache, which keeps aligned rows in registers (every pass re-reads).
    CompiledGraph c = test_support::compileWithKnobs(testgraphs::softmax(DType::Float16, shape, 1), "cache=off");
    ASSERT_EQ(c.kernels.size(), 1u);
    const PolyKernel& k = c.kernels[0];
    ASSERT_EQ(k.plan.passes(), 3);
    EXPECT_TRUE(k.hints.lastUse[loadOf(k.plan, 0)]);
    EXPECT_TRUE(k.hints.streamingStores);
    const std::string& source = c.program.kernels[0].source;
    const std::string V = std::to_string(k.vector.width);
    ASSERT_GT(k.vector.width, 1);
    // (as floats -- masked rows' max pass across rows -- or, where a half-pair op reads
    // them, as half pairs: codegen/lane_values.h)
    auto loads = [&](const std::string& args) {
      return test_support::occurrences(source, "pr_load_lanes<" + args + ">(") +
             test_support::occurrences(source, "pr_load_lanes_flat<" + args + ">(") +
             test_support::occurrences(source, "pr_load_pairs<" + args + ">(");
    };
    EXPECT_EQ(loads(V), 2u) << source;  // passes 0 and 1
    // pass 2, as ld.global.cs: the pass also stores
    EXPECT_EQ(loads(V + ", PrLoadHint::Streaming"), 1u) << source;
    EXPECT_EQ(test_support::occurrences(source, "pr_store_lanes<" + V + ", true>("), 1u) << source;
    test_support::expectMatchesOnCpuAndCompiles(c, /*seed=*/5);
  }
}

TEST(CacheHints, ABroadcastWeightKeepsPlainLoads) {
  CompiledGraph c = test_support::compileWithKnobs(centeredTimesWeight({256, 1024}), "");
  ASSERT_EQ(c.kernels.size(), 1u);
  const PolyKernel& k = c.kernels[0];
  ASSERT_EQ(k.plan.passes(), 2);
  EXPECT_TRUE(k.hints.lastUse[loadOf(k.plan, 0)]);   // x: each element read once per pass
  EXPECT_FALSE(k.hints.lastUse[loadOf(k.plan, 1)]);  // w: every row reads it
  EXPECT_NE(k.hints.describe(k.plan).find("the last loads of x (.cs); the stores"), std::string::npos)
      << k.hints.describe(k.plan);
  test_support::expectMatchesOnCpuAndCompiles(c, /*seed=*/5);
}

// A row-resident kernel whose last pass stores nothing (the max, then the sum of the
// shifted row, as logsumexp's two passes) keeps the L2 policy on its last loads.
TEST(CacheHints, WithoutStoresTheLastLoadsKeepThePolicy) {
  GraphBuilder b("shifted_sum");
  Value x = b.input("x", DType::Float16, {256, 1024});
  b.output(b.reduceSum(b.sub(x, b.reduceMax(x, {1}, true)), {1}, false));
  CompiledGraph c = test_support::compileWithKnobs(b.build(), "");
  ASSERT_EQ(c.kernels.size(), 1u);
  const PolyKernel& k = c.kernels[0];
  ASSERT_EQ(k.plan.passes(), 2);
  EXPECT_FALSE(k.hints.streamingStores);
  EXPECT_FALSE(k.hints.streamingLoads);
  const std::string& source = c.program.kernels[0].source;
  EXPECT_EQ(test_support::occurrences(source, "PrLoadHint::EvictFirst>("), 1u) << source;
  EXPECT_EQ(source.find("PrLoadHint::Streaming"), std::string::npos) << source;
  test_support::expectMatchesOnCpuAndCompiles(c, /*seed=*/5);
}

TEST(CacheHints, SinglePassKernelsOnlyWhenAskedAndNoneWhenOff) {
  GraphBuilder b("row_sum");
  b.output(b.reduceSum(b.input("x", DType::Float32, {64, 4096}), {1}, false));
  const Graph rowSum = b.build();
  CompiledGraph automatic = test_support::compileWithKnobs(rowSum, "");
  ASSERT_EQ(automatic.kernels.size(), 1u);
  EXPECT_FALSE(automatic.kernels[0].hints.any());
  EXPECT_EQ(automatic.program.kernels[0].source.find("PrLoadHint::"), std::string::npos);

  CompiledGraph on = test_support::compileWithKnobs(rowSum, "evict=on");
  EXPECT_TRUE(on.kernels[0].hints.lastUse[loadOf(on.kernels[0].plan, 0)]);
  EXPECT_NE(on.program.kernels[0].source.find("PrLoadHint::EvictFirst>("), std::string::npos);
  test_support::expectMatchesOnCpuAndCompiles(on, /*seed=*/5);

  CompiledGraph stream = test_support::compileWithKnobs(rowSum, "evict=stream");
  EXPECT_TRUE(stream.kernels[0].hints.streamingLoads);
  EXPECT_NE(stream.program.kernels[0].source.find("PrLoadHint::Streaming>("), std::string::npos);
  test_support::expectMatchesOnCpuAndCompiles(stream, /*seed=*/5);

  CompiledGraph off = test_support::compileWithKnobs(testgraphs::softmax(DType::Float16, {300, 1024}, 1), "evict=off");
  EXPECT_FALSE(off.kernels[0].hints.any());
  EXPECT_EQ(off.program.kernels[0].source.find("PrLoadHint::"), std::string::npos);
  EXPECT_EQ(off.program.kernels[0].source.find(", true>("), std::string::npos);  // the stores
}

// Compiled with the default knobs for a GPU whose L2 holds l2Bytes.
CompiledGraph compileForL2(const Graph& g, int64_t l2Bytes) {
  CompileOptions o;
  o.target.l2Bytes = l2Bytes;
  return compileGraph(g, o);
}

TEST(CacheHints, SinglePassReductionsStreamReadsBetweenAQuarterAndFourTimesTheL2) {
  constexpr int64_t kL2 = int64_t{1} << 20;
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
    bool streams;
  };
  // f32: [64,4096] reads 1 MiB, [16,4096] 256 KiB (the quarter), [15,4096] just below,
  // [1024,4096] 16 MiB (over four times), [1024,1024] 4 MiB (four times). A y-reduce over
  // fewer than 8192 rows is scalar (poly/vectorize.cc, laneLimitFor), and scalar loads
  // carry no hints.
  const Case cases[] = {{{64, 4096}, {1}, true},    {{16, 16384}, {0}, true},     {{64, 4096}, {0, 1}, true},
                        {{16, 4096}, {1}, true},    {{15, 4096}, {1}, false},     {{1024, 4096}, {1}, false},
                        {{1024, 1024}, {1}, true},  {{64, 4096}, {0}, false}};
  for (const Case& c : cases) {
    GraphBuilder b("sum");
    b.output(b.reduceSum(b.input("x", DType::Float32, c.shape), c.axes, false));
    CompiledGraph compiled = compileForL2(b.build(), kL2);
    ASSERT_EQ(compiled.kernels.size(), 1u);
    const PolyKernel& k = compiled.kernels[0];
    const std::string what = k.plan.name + " over " + std::to_string(c.shape[0]) + " rows";
    EXPECT_EQ(k.hints.lastUse[loadOf(k.plan, 0)], c.streams) << what;
    EXPECT_EQ(k.hints.streamingLoads, c.streams) << what;
    EXPECT_FALSE(k.hints.streamingStores) << what;
    EXPECT_EQ(compiled.program.kernels[0].source.find("PrLoadHint::Streaming>(") != std::string::npos, c.streams)
        << what;
    if (c.streams && c.shape[0] == 64) test_support::expectMatchesOnCpuAndCompiles(compiled, /*seed=*/3);
  }
}

TEST(CacheHints, SinglePassKernelsThatStorePointsOrOnlyBroadcastKeepPlainAccesses) {
  constexpr int64_t kL2 = int64_t{1} << 20;
  {  // a row sum that also stores x * 2 at every point
    GraphBuilder b("sum_and_double");
    Value x = b.input("x", DType::Float32, {64, 4096});
    b.output(b.reduceSum(x, {1}, false));
    b.output(b.mul(x, b.constant(Scalar::ofFloat(DType::Float32, 2.0))));
    CompiledGraph c = compileForL2(b.build(), kL2);
    ASSERT_EQ(c.kernels.size(), 1u);
    EXPECT_FALSE(c.kernels[0].hints.any());
  }
  {  // elementwise
    GraphBuilder b("scale");
    b.output(b.mul(b.input("x", DType::Float32, {64, 4096}), b.constant(Scalar::ofFloat(DType::Float32, 2.0))));
    CompiledGraph c = compileForL2(b.build(), kL2);
    ASSERT_EQ(c.kernels.size(), 1u);
    EXPECT_FALSE(c.kernels[0].hints.any());
  }
  {  // sum(x * w) over the rows, w [4096] read by every row: x streams, w stays plain
    GraphBuilder b("weighted_row_sum");
    Value x = b.input("x", DType::Float32, {64, 4096});
    Value w = b.input("w", DType::Float32, {4096});
    b.output(b.reduceSum(b.mul(x, w), {1}, false));
    CompiledGraph c = compileForL2(b.build(), kL2);
    ASSERT_EQ(c.kernels.size(), 1u);
    const PolyKernel& k = c.kernels[0];
    EXPECT_TRUE(k.hints.lastUse[loadOf(k.plan, 0)]);
    EXPECT_FALSE(k.hints.lastUse[loadOf(k.plan, 1)]);
    test_support::expectMatchesOnCpuAndCompiles(c, /*seed=*/4);
  }
}

TEST(CacheHints, AnInputThatAnotherKernelAlsoReadsKeepsPlainLoads) {
  // softmax f32 [64,65536]: rows too long for one block and too few to fill the GPU one
  // block each, so a max kernel, a sum kernel and an elementwise kernel each read x
  // (16 MiB, in the window of the default 50 MiB L2).
  CompiledGraph c = test_support::compileWithKnobs(testgraphs::softmax(DType::Float32, {64, 65536}, 1), "");
  ASSERT_EQ(c.kernels.size(), 3u);
  for (const PolyKernel& k : c.kernels) EXPECT_FALSE(k.hints.any()) << k.plan.name;
  ASSERT_EQ(c.program.kernels.size(), 3u);
  for (const KernelSpec& spec : c.program.kernels) EXPECT_EQ(spec.source.find("PrLoadHint::"), std::string::npos);
  // x alone, in the same window, streams.
  GraphBuilder b("row_max");
  b.output(b.reduceMax(b.input("x", DType::Float32, {64, 65536}), {1}, false));
  CompiledGraph alone = test_support::compileWithKnobs(b.build(), "");
  ASSERT_EQ(alone.kernels.size(), 1u);
  EXPECT_TRUE(alone.kernels[0].hints.streamingLoads);
}

TEST(CacheHints, EveryVectorSizeCompiles) {
  // Lanes of 2, 4, 8 and 16 bytes (vector=2 of int8, float16 and float32; 16-byte lanes
  // of float16) with the hints on every access they apply to, loads with the L2 policy
  // (evict=on) and as ld.global.cs (evict=stream). Unstaged: a staged row's later loads
  // read shared memory (codegen/row_stage.h).
  std::vector<std::pair<DType, std::string>> cases;
  for (const std::string mode : {"evict=on,stage=off", "evict=stream,stage=off"})
    for (const auto& [t, vector] : std::vector<std::pair<DType, std::string>>{
             {DType::Int8, ",vector=2"}, {DType::Float16, ",vector=2"}, {DType::Float32, ",vector=2"}, {DType::Float16, ""}})
      cases.emplace_back(t, mode + vector);
  for (const auto& [t, knobs] : cases) {
    SCOPED_TRACE(std::string(dtypeName(t)) + " " + knobs);
    GraphBuilder b("shifted_rows");
    Value x = b.input("x", t, {128, 4096});
    b.output(b.sub(x, b.reduceMax(x, {1}, true)));  // two passes: the max, then x - max stored
    CompiledGraph c = test_support::compileWithKnobs(b.build(), knobs);  // (int8's max and shift: two kernels)
    ASSERT_FALSE(c.kernels.empty());
    EXPECT_TRUE(c.kernels.back().hints.streamingStores);
    const std::string& source = c.program.kernels.back().source;
    EXPECT_NE(source.find(", true>("), std::string::npos) << source;  // the streaming stores
    const bool stream = knobs.starts_with("evict=stream");
    EXPECT_NE(source.find(stream ? "PrLoadHint::Streaming>(" : "PrLoadHint::EvictFirst>("), std::string::npos) << source;
    test_support::expectMatchesOnCpuAndCompiles(c, /*seed=*/5);
  }
}

// An elementwise kernel whose loads are wider than its stores loads 32-byte vectors
// (poly/vectorize.h); hinted, each goes as two hinted 16-byte halves.
TEST(CacheHints, WideElementwiseLoadsCompileWithEveryHint) {
  for (const std::string knobs : {"evict=on", "evict=stream"}) {
    SCOPED_TRACE(knobs);
    GraphBuilder b("narrowing_cast");
    Value x = b.input("x", DType::Float32, {256, 1000});
    b.output(b.cast(b.mul(x, x), DType::Float16));
    CompiledGraph c = test_support::compileWithKnobs(b.build(), knobs);
    ASSERT_EQ(c.kernels.size(), 1u);
    ASSERT_EQ(c.kernels[0].vector.width, 8);  // 8 floats: 32 bytes a vector
    const std::string& source = c.program.kernels[0].source;
    const bool stream = knobs == "evict=stream";
    EXPECT_NE(source.find(stream ? "pr_load_lanes<8, PrLoadHint::Streaming>(" : "pr_load_lanes<8, PrLoadHint::EvictFirst>("),
              std::string::npos)
        << source;
    test_support::expectMatchesOnCpuAndCompiles(c, /*seed=*/5);
  }
}

TEST(CacheHints, TheKnobParsesAndPrints) {
  EXPECT_EQ(KernelConfig::parse("evict=on", "test").cacheHints, CacheHintMode::On);
  EXPECT_EQ(KernelConfig::parse("evict=off", "test").toString(), "threads=256,items=auto,vector=auto,evict=off");
  EXPECT_TRUE(KernelConfig::parse("evict=auto", "test").isDefault());
  EXPECT_EQ(KernelConfig::parse("evict=stream", "test").cacheHints, CacheHintMode::Stream);
  EXPECT_EQ(KernelConfig::parse("evict=stream", "test").toString(), "threads=256,items=auto,vector=auto,evict=stream");
  EXPECT_THROW(KernelConfig::parse("evict=maybe", "test"), Error);
}

}  // namespace
}  // namespace polyred
