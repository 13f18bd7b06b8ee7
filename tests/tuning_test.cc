// Code variants and tuning without a GPU: the knobs' parser, every candidate config
// lowering correctly (the CPU executor against the reference, NVRTC compiling it), the
// rule that picks a winner, and the tuning database's file handling -- round trip,
// corrupt and foreign entries ignored with a warning, never a crash.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "driver/tune_run.h"
#include "frontend/builder.h"
#include "runtime/nvrtc.h"
#include "support/error.h"
#include "tune/config_search.h"
#include "tune/tuning_db.h"

namespace polyred {
namespace {

namespace fs = std::filesystem;

TEST(KernelConfig, ParsesKnobsAndRejectsNonsense) {
  EXPECT_EQ(KernelConfig::parse("items=auto,vector=auto", "x"), KernelConfig{});
  EXPECT_EQ(KernelConfig{}.toString(), "threads=256,items=auto,vector=auto");
  KernelConfig c = KernelConfig::parse("items=32,vector=1", "--config");
  EXPECT_EQ(c.threadsPerBlock, 256);
  EXPECT_EQ(c.itemsPerThread, 32);
  EXPECT_EQ(c.maxVectorWidth, 1);
  EXPECT_EQ(KernelConfig::parse(c.toString(), "x"), c);
  EXPECT_TRUE(KernelConfig::parse("", "x").isDefault());
  KernelConfig unrolled = KernelConfig::parse("unroll=8", "x");
  EXPECT_EQ(unrolled.unroll, 8);
  EXPECT_EQ(unrolled.toString(), "threads=256,items=auto,vector=auto,unroll=8");
  EXPECT_EQ(KernelConfig::parse(unrolled.toString(), "x"), unrolled);
  EXPECT_EQ(KernelConfig{}.unroll, KernelConfig::kAuto);  // the launch policy's (loopUnrollFor)
  KernelConfig partials = KernelConfig::parse("combine=partials", "x");
  EXPECT_EQ(partials.combine, CombineMode::Partials);
  EXPECT_EQ(partials.toString(), "threads=256,items=auto,vector=auto,combine=partials");
  EXPECT_EQ(KernelConfig::parse(partials.toString(), "x"), partials);
  EXPECT_EQ(KernelConfig::parse("combine=atomic", "x").combine, CombineMode::Atomic);
  EXPECT_TRUE(KernelConfig::parse("combine=auto", "x").isDefault());
  KernelConfig split = KernelConfig::parse("split=10", "x");
  EXPECT_EQ(split.splitBlocks, 10);
  EXPECT_EQ(split.toString(), "threads=256,items=auto,vector=auto,split=10");
  EXPECT_EQ(KernelConfig::parse(split.toString(), "x"), split);
  EXPECT_TRUE(KernelConfig::parse("split=auto", "x").isDefault());
  for (const char* bad : {"threads=300", "threads=2048", "threads=auto", "items=0", "vector=3", "lanes=4", "items", "items=4x",
                          "unroll=0", "unroll=33", "combine=cas", "combine=1", "split=0", "split=65536", "split=-2"})
    EXPECT_THROW(KernelConfig::parse(bad, "--config"), Error) << bad;
}

// A column reduction (y-reduce, lanes along the kept axis), a row reduction with a
// fused producer and an epilogue, and an elementwise graph.
std::vector<Graph> variantGraphs() {
  std::vector<Graph> graphs;
  GraphBuilder y("columns");
  Value x = y.input("x", DType::Float16, {4096, 512});
  y.output(y.reduceMax(x, {0}));
  y.output(y.reduceSum(y.cast(x, DType::Float32), {0}));
  graphs.push_back(y.build());
  GraphBuilder r("rows");
  Value a = r.input("a", DType::Float32, {96, 8192});
  Value b = r.input("b", DType::Float32, {8192});
  r.output(r.mul(r.reduceSum(r.mul(a, b), {1}), r.constant(Scalar::ofFloat(DType::Float32, 0.5))));
  graphs.push_back(r.build());
  GraphBuilder e("elementwise");
  e.output(e.add(e.input("p", DType::BFloat16, {1024, 768}), e.input("q", DType::BFloat16, {768})));
  graphs.push_back(e.build());
  return graphs;
}

TEST(KernelConfig, EveryCandidateLowersCorrectly) {
  for (const Graph& g : variantGraphs())
    for (bool deterministic : {false, true}) {
      std::set<std::string> programs;
      const bool reduction = g.name != "elementwise";
      for (const KernelConfig& config : candidateConfigs(reduction)) {
        CompileOptions o;
        o.config = config;
        o.deterministic = deterministic;
        CompiledGraph c = compileGraph(g, o);
        CpuCheckReport r = checkOnCpu(c, 3, 1 << 18, deterministic);
        EXPECT_TRUE(r.ok) << g.name << " " << config.toString() << ": " << r.message;
        // The knob's block size bounds the block, except that with `items` left to the
        // policy a small launch's rows may take up to 512 threads in one block
        // (smallLaunchConfig in poly/binding.cc), and with `split` left to it too, rows
        // one block of up to 1024 (unsplitRows).
        const bool itemsAuto = config.itemsPerThread == KernelConfig::kAuto;
        const int most = itemsAuto && config.splitBlocks == KernelConfig::kAuto ? 1024
                         : itemsAuto                                           ? std::max(config.threadsPerBlock, 512)
                                                                               : config.threadsPerBlock;
        for (const KernelSpec& k : c.program.kernels) {
          EXPECT_LE(k.launch.block[0] * k.launch.block[1], static_cast<uint32_t>(most));
          if (!deterministic) programs.insert(k.source);
        }
      }
      if (!deterministic) {
        EXPECT_GE(programs.size(), reduction ? 4u : 2u) << g.name << ": the knobs change the code";
      }
    }
  // NVRTC compiles the extreme configs.
  for (const Graph& g : variantGraphs())
    for (const char* knobs : {"threads=512,items=64,vector=1", "threads=128,items=4"}) {
      CompileOptions o;
      o.config = KernelConfig::parse(knobs, "test");
      for (const KernelSpec& k : compileGraph(g, o).program.kernels)
        EXPECT_NO_THROW(compileCuda(k.source, k.name, 9, 0)) << g.name << " " << knobs;
    }
}

// A transposing graph that auto leaves to the 1-D loop (rows of 3 stores) gets a tiled
// candidate, and a graph without a transpose no such configs.
TEST(ConfigSearch, TransposingGraphsAlsoTryTiles) {
  GraphBuilder b("nchw_to_nhwc");
  b.output(b.transpose(b.input("x", DType::Float32, {8, 3, 64, 64}), {0, 2, 3, 1}));
  const TuneCandidates t = compileTuneCandidates(b.build(), CompileOptions{}, 2);
  ASSERT_FALSE(t.programs.empty());
  EXPECT_TRUE(t.programs[0].kernels.at(0).tiling.empty()) << "auto: rows of 3";
  bool tiled = false;
  for (size_t k = 0; k < t.programs.size(); ++k)
    if (!t.programs[k].kernels.at(0).tiling.empty()) {
      tiled = true;
      EXPECT_EQ(t.configsOf[k].front().transposeTiles, TransposeTileMode::On);
    }
  EXPECT_TRUE(tiled);
  GraphBuilder plain("plain");
  Value x = plain.input("x", DType::Float32, {8, 3, 64, 64});
  plain.output(plain.mul(x, x));
  for (const std::vector<KernelConfig>& group : compileTuneCandidates(plain.build(), CompileOptions{}, 2).configsOf)
    for (const KernelConfig& c : group) EXPECT_EQ(c.transposeTiles, TransposeTileMode::Auto);
}

// The tuner compiles its candidate configs in parallel: any thread count gives the
// programs and config groups of one thread, in the same order (and compileGraph is
// safe to run on several threads at once: nothing in the pipeline is shared).
TEST(ConfigSearch, ParallelCandidatesAreTheSerialOnes) {
  std::vector<Graph> graphs = variantGraphs();
  GraphBuilder w("welford");
  Value x = w.input("x", DType::Float32, {32, 64, 56, 56});
  auto [var, mean] = w.varMean(x, {0, 2, 3});
  w.output(var);
  w.output(mean);
  graphs.push_back(w.build());
  for (const Graph& g : graphs) {
    const TuneCandidates serial = compileTuneCandidates(g, CompileOptions{}, 1);
    const TuneCandidates parallel = compileTuneCandidates(g, CompileOptions{}, 8);
    ASSERT_EQ(parallel.programs.size(), serial.programs.size()) << g.name;
    EXPECT_GE(serial.programs.size(), 2u) << g.name << ": the candidates differ";
    for (size_t k = 0; k < serial.programs.size(); ++k) {
      const std::vector<KernelSpec>& a = serial.programs[k].program.kernels;
      const std::vector<KernelSpec>& b = parallel.programs[k].program.kernels;
      ASSERT_EQ(a.size(), b.size()) << g.name << " program " << k;
      for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].source, b[i].source) << g.name << " program " << k;
      ASSERT_EQ(parallel.configsOf[k].size(), serial.configsOf[k].size()) << g.name << " program " << k;
      for (size_t i = 0; i < serial.configsOf[k].size(); ++i)
        EXPECT_EQ(parallel.configsOf[k][i].toString(), serial.configsOf[k][i].toString());
    }
  }
}

// `polyred tune --candidates`: the caller's configs replace the built-in grid; the
// default is still first, and configs giving the same program share it.
TEST(ConfigSearch, CallersCandidatesReplaceTheGrid) {
  GraphBuilder b("channel_sums");
  b.output(b.reduceSum(b.input("x", DType::Float32, {32, 64, 56, 56}), {0, 2, 3}));
  const std::vector<KernelConfig> asked = {KernelConfig::parse("split=2", "t"), KernelConfig::parse("split=3", "t"),
                                           KernelConfig::parse("split=2,unroll=4", "t")};
  const TuneCandidates t = compileTuneCandidates(b.build(), CompileOptions{}, 2, asked);
  ASSERT_EQ(t.programs.size(), 3u) << "the default, split=2 (twice: unroll 4 is the default's), split=3";
  EXPECT_TRUE(t.configsOf[0].front().isDefault());
  EXPECT_EQ(t.configsOf[1].size(), 2u);
  EXPECT_EQ(t.configsOf[1].front().toString(), "threads=256,items=auto,vector=auto,split=2");
  EXPECT_EQ(t.programs[1].program.kernels.at(0).launch.grid[0], 2u);
  EXPECT_EQ(t.programs[2].program.kernels.at(0).launch.grid[0], 3u);
}

TEST(ConfigSearch, DefaultFirstAndKeptUnlessClearlyBeaten) {
  std::vector<KernelConfig> configs = candidateConfigs(true);
  ASSERT_GE(configs.size(), 10u);
  // the last reduction candidates: fewer blocks with more loads in flight, the two ways
  // to combine split blocks, then one block a row of 512 and of 1024 threads
  ASSERT_GE(configs.size(), 5u);
  EXPECT_EQ(configs[configs.size() - 5].toString(), "threads=256,items=16,vector=16,unroll=16");
  EXPECT_EQ(configs[configs.size() - 4].toString(), "threads=256,items=auto,vector=auto,combine=atomic");
  EXPECT_EQ(configs[configs.size() - 3].toString(), "threads=256,items=auto,vector=auto,combine=partials");
  EXPECT_EQ(configs[configs.size() - 2].toString(), "threads=512,items=auto,vector=auto,split=1");
  EXPECT_EQ(configs.back().toString(), "threads=1024,items=auto,vector=auto,split=1");
  EXPECT_EQ(candidateConfigs(false).size(), 5u);  // the default, then block size x lanes
  // Graphs with a transposing elementwise kernel also try tiles everywhere and nowhere.
  const std::vector<KernelConfig> transposes = candidateConfigs(false, false, true);
  ASSERT_EQ(transposes.size(), 7u);
  EXPECT_EQ(transposes[5].toString(), "threads=256,items=auto,vector=auto,transpose=on");
  EXPECT_EQ(transposes[6].toString(), "threads=256,items=auto,vector=auto,transpose=off");
  EXPECT_EQ(KernelConfig::parse(transposes[6].toString(), "t"), transposes[6]);
  // Graphs with a row-resident kernel also try its row cache, with 512 and 1024 threads,
  // the pass loops unrolled by 1, 2 and 4 with the default block, no cache hints, and
  // the row stage off and on, the row in registers and no row cache.
  // Graphs with a logsumexp reduction also try its rows split and online.
  const std::vector<KernelConfig> logSumExp = candidateConfigs(true, false, false, true);
  ASSERT_EQ(logSumExp.size(), configs.size() + 2);
  EXPECT_EQ(logSumExp[configs.size()].toString(), "threads=256,items=auto,vector=auto,lse=split");
  EXPECT_EQ(logSumExp.back().toString(), "threads=256,items=auto,vector=auto,lse=online");
  const std::vector<KernelConfig> rowResident = candidateConfigs(true, true);
  ASSERT_EQ(rowResident.size(), configs.size() + 10);
  EXPECT_EQ(rowResident[configs.size() + 5].cacheHints, CacheHintMode::Off);
  EXPECT_EQ(rowResident[configs.size() + 5].toString(), "threads=256,items=auto,vector=auto,evict=off");
  EXPECT_EQ(rowResident[configs.size() + 6].toString(), "threads=256,items=auto,vector=auto,stage=off");
  EXPECT_EQ(rowResident[configs.size() + 7].toString(), "threads=256,items=auto,vector=auto,stage=on");
  EXPECT_EQ(rowResident[configs.size() + 8].toString(), "threads=256,items=auto,vector=auto,cache=regs");
  EXPECT_EQ(rowResident.back().toString(), "threads=256,items=auto,vector=auto,cache=off");
  for (size_t k = configs.size(); k < configs.size() + 2; ++k) EXPECT_EQ(rowResident[k].rowCache, RowCacheMode::On);
  EXPECT_EQ(rowResident[configs.size() + 1].threadsPerBlock, 1024);
  const int unrolls[] = {1, 2, 4};
  for (int u = 0; u < 3; ++u) {
    const KernelConfig& c = rowResident[configs.size() + 2 + static_cast<size_t>(u)];
    EXPECT_EQ(c.unroll, unrolls[u]);
    EXPECT_EQ(c.threadsPerBlock, KernelConfig{}.threadsPerBlock);
    EXPECT_EQ(c.rowCache, RowCacheMode::Auto);
  }
  EXPECT_TRUE(configs.front().isDefault());
  EXPECT_EQ(std::set<std::string>({configs[0].toString()}).count(configs[1].toString()), 0u);
  KernelConfig other = configs[3];
  EXPECT_EQ(pickBest({{configs[0], 10.0}, {other, 9.8}}, 0.03), 0u);        // within the noise
  EXPECT_EQ(pickBest({{configs[0], 10.0}, {other, 9.0}}, 0.03), 1u);        // clearly faster
  EXPECT_EQ(pickBest({{configs[0], 10.0}, {other, std::nullopt}}, 0.03), 0u);  // failed: never chosen
  EXPECT_THROW(pickBest({{configs[0], std::nullopt}}, 0.03), InternalError);
}

class TuningDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("polyred-tuning-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                         "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json");
    fs::remove(path_);
  }
  void TearDown() override { fs::remove(path_); }
  void write(const std::string& text) { std::ofstream(path_) << text; }
  TuningDb load(std::vector<std::string>& warnings) { return TuningDb::load(path_, warnings); }

  fs::path path_;
  TuningKey key_{"abc123", "NVIDIA H100 80GB HBM3", 9, 0, false};
};

TEST_F(TuningDbTest, RoundTripAndExactKeys) {
  std::vector<std::string> warnings;
  TuningDb db = load(warnings);  // missing file: empty, no warning
  EXPECT_EQ(db.size(), 0u);
  EXPECT_TRUE(warnings.empty());
  TuningEntry e{KernelConfig::parse("threads=512,items=32", "t"), 20.0, 15.0, 12, "2026-11-23 17:00:00 UTC"};
  db.put(key_, e);
  db.save();
  TuningDb again = load(warnings);
  EXPECT_TRUE(warnings.empty());
  auto found = again.find(key_);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->config, e.config);
  EXPECT_DOUBLE_EQ(found->tunedMicros, 15.0);
  TuningKey otherGpu = key_;
  otherGpu.gpuName = "NVIDIA H200";
  EXPECT_FALSE(again.find(otherGpu).has_value()) << "a config measured on another GPU is never used";
  TuningKey otherArch = key_;
  otherArch.ccMinor = 1;
  EXPECT_FALSE(again.find(otherArch).has_value());
  TuningKey deterministic = key_;
  deterministic.deterministic = true;
  EXPECT_FALSE(again.find(deterministic).has_value());
}

TEST_F(TuningDbTest, CorruptOrForeignContentIsIgnoredWithAWarning) {
  const std::string good = "\"" + key_.toString() +
                           "\": {\"graph_sha256\": \"abc123\", \"gpu\": \"NVIDIA H100 80GB HBM3\", \"cc\": \"9.0\", "
                           "\"deterministic\": false, \"config\": \"items=16\"}";
  struct Case {
    std::string text;
    bool keepsGood;
  };
  for (const Case& c : {Case{"not json {", false}, Case{"[1, 2]", false},
                        Case{"{\"format\": \"polyred-tuning-db\", \"version\": 99, \"entries\": {}}", false},
                        Case{"{\"format\": \"other\", \"version\": 1, \"entries\": {}}", false},
                        Case{"{\"format\": \"polyred-tuning-db\", \"version\": 1, \"entries\": {" + good +
                                 ", \"bad\": {\"config\": \"items=16\"}}}",
                             true},
                        Case{"{\"format\": \"polyred-tuning-db\", \"version\": 1, \"entries\": {" + good +
                                 ", \"" + key_.toString() + "x\": {\"graph_sha256\": \"abc123\", \"gpu\": \"NVIDIA H100 80GB "
                                 "HBM3\", \"cc\": \"9.0\", \"deterministic\": false, \"config\": \"items=16\"}}}",
                             true},
                        Case{"{\"format\": \"polyred-tuning-db\", \"version\": 1, \"entries\": {\"" + key_.toString() +
                                 "\": {\"graph_sha256\": \"abc123\", \"gpu\": \"NVIDIA H100 80GB HBM3\", \"cc\": \"9.0\", "
                                 "\"deterministic\": false, \"config\": \"threads=3\"}}}",
                             false}}) {
    write(c.text);
    std::vector<std::string> warnings;
    TuningDb db = load(warnings);
    EXPECT_EQ(warnings.size(), 1u) << c.text;
    EXPECT_EQ(db.find(key_).has_value(), c.keepsGood) << c.text;
  }
}

TEST_F(TuningDbTest, AppliesOnlyToItsGraphAndTarget) {
  Graph g = variantGraphs()[0];
  Target t;
  t.name = "NVIDIA H100 80GB HBM3";
  std::vector<std::string> warnings;
  TuningDb db = load(warnings);
  KernelConfig tuned = KernelConfig::parse("threads=512,items=64,vector=1", "t");
  db.put(tuningKeyOf(g, t, false), TuningEntry{tuned, 10, 8, 5, "now"});
  CompileOptions o;
  o.target = t;
  ASSERT_TRUE(applyTuning(g, db, o));
  EXPECT_EQ(o.config, tuned);
  CompileOptions other;
  other.target = t;
  EXPECT_FALSE(applyTuning(variantGraphs()[1], db, other));
  EXPECT_TRUE(other.config.isDefault());
  CompileOptions det = other;
  det.deterministic = true;
  EXPECT_FALSE(applyTuning(g, db, det));
}

// How split blocks combine (Binding::partials): by default through partials where a
// combiner has no hardware atomic (float max and min, products, user combiners), by
// atomics where one exists; the `combine` knob overrides either way. The generated
// kernel and the CPU executor follow the binding (the check agrees with the reference
// either way), and a kernel that must use the partials (a tuple) keeps them under
// combine=atomic.
TEST(KernelConfig, SplitBlocksCombineThroughPartialsWhereNoAtomicExists) {
  auto columns = [](const char* name, auto reduce, DType t) {
    GraphBuilder b(name);
    b.output(reduce(b, b.input("x", t, {8192, 768})));
    return b.build();
  };
  const Graph maxF32 = columns("max_f32", [](GraphBuilder& b, Value x) { return b.reduceMax(x, {0}); }, DType::Float32);
  const Graph maxI32 = columns("max_i32", [](GraphBuilder& b, Value x) { return b.reduceMax(x, {0}); }, DType::Int32);
  const Graph sumF16 = columns("sum_f16", [](GraphBuilder& b, Value x) { return b.reduceSum(x, {0}); }, DType::Float16);
  const Graph prodI32 =
      columns("prod_i32", [](GraphBuilder& b, Value x) { return b.reduce(x, Reduction::prod(DType::Int32), {0}); }, DType::Int32);
  const Graph argmax = columns("argmax", [](GraphBuilder& b, Value x) { return b.argmax(x, 0); }, DType::Float32);
  auto bind = [](const Graph& g, const char* knobs) {
    CompileOptions o;
    o.config = KernelConfig::parse(knobs, "test");
    CompiledGraph c = compileGraph(g, o);
    EXPECT_EQ(c.kernels.size(), 1u) << g.name;
    EXPECT_GT(c.kernels[0].binding.GX, 1) << g.name << ": the test needs blocks that split j";
    CpuCheckReport r = checkOnCpu(c, /*seed=*/7, /*maxPoints=*/1 << 16, /*deterministic=*/false);
    EXPECT_TRUE(r.ok) << g.name << " " << knobs << ": " << r.message;
    const std::string& source = c.program.kernels[0].source;
    // (y-reduce lanes combine inside block_contribute_y_lanes)
    const bool atomics = source.find("atomic_combine") != std::string::npos ||
                         source.find("block_contribute_y_lanes") != std::string::npos;
    EXPECT_EQ(!atomics, c.kernels[0].binding.partials || c.kernels[0].plan.needsBlockOrderCombine()) << g.name << " " << knobs;
    return c.kernels[0].binding.partials;
  };
  EXPECT_FALSE(bind(maxF32, ""));  // integer atomics on the float's bit pattern
  EXPECT_TRUE(bind(prodI32, ""));
  EXPECT_FALSE(bind(maxI32, ""));
  EXPECT_FALSE(bind(sumF16, ""));
  EXPECT_FALSE(bind(maxF32, "combine=atomic"));
  EXPECT_TRUE(bind(maxF32, "combine=partials"));
  EXPECT_TRUE(bind(sumF16, "combine=partials"));
  EXPECT_TRUE(bind(maxI32, "combine=partials"));
  bind(argmax, "combine=atomic");  // still combines in block order (checked inside)
}

}  // namespace
}  // namespace polyred

namespace polyred {
namespace {

// A y-reduce over a short reduced axis (39, as in deep_fm's [8000,39,80] sums): the
// default block keeps 8 threads along j; with `items` set, the threads along j only
// number what gives each that many items, the rest of the block running along i -- at
// 64 items one thread per column group, no block reduction -- and the result agrees.
TEST(KernelConfig, ItemsShapeTheBlockOfAShortYReduce) {
  GraphBuilder b("short_columns");
  Value x = b.input("x", DType::Float32, {300, 39, 80});
  b.output(b.reduceSum(x, {1}));
  const Graph g = b.build();
  auto blockOf = [&](const std::string& knobs) {
    CompileOptions o;
    o.config = KernelConfig::parse(knobs, "test");
    CompiledGraph c = compileGraph(g, o);
    EXPECT_EQ(c.kernels.size(), 1u);
    EXPECT_EQ(c.kernels[0].plan.form, CanonicalForm::YReduce);
    CpuCheckReport r = checkOnCpu(c, /*seed=*/5, /*maxPoints=*/0, /*deterministic=*/false);
    EXPECT_TRUE(r.ok) << knobs << ": " << r.message;
    return std::pair<int, int>(c.kernels[0].binding.BX, c.kernels[0].binding.BY);
  };
  EXPECT_EQ(blockOf(""), (std::pair<int, int>(32, 8)));
  EXPECT_EQ(blockOf("items=64"), (std::pair<int, int>(256, 1)));
  EXPECT_EQ(blockOf("items=16"), (std::pair<int, int>(64, 4)));
  EXPECT_EQ(blockOf("items=64,threads=512"), (std::pair<int, int>(512, 1)));
}

}  // namespace
}  // namespace polyred
