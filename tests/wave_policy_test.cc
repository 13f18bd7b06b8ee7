// The binding policy's wave rules (poly/binding.cc): blocks that split the reduced axis
// fill the fewest waves that reach 90% of their slots (one wave of longer blocks rather
// than several of shorter ones), threads whose loops are short take an even split (an
// uneven one runs the common trip, then one guarded instance), and row-resident
// x-reduces that would leave more than half of a wave's threads idle take 2 items per
// thread instead of 4, and elementwise kernels give each thread one instance (no loop).
// Each case is also checked against the reference on the CPU.
#include <gtest/gtest.h>

#include "codegen/cpu_block_sample.h"
#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "lowering_helpers.h"
#include "poly/binding.h"
#include "row_resident_graphs.h"

namespace polyred {
namespace {

Graph columnSums(DType t, int64_t rows, int64_t cols) {
  GraphBuilder b("column_sums");
  b.output(b.reduceSum(b.input("x", t, {rows, cols}), {0}));
  return b.build();
}

CompiledGraph compiledAndChecked(const Graph& g, const char* knobs = "") {
  CompiledGraph c = test_support::compileWithKnobs(g, knobs);
  const CpuCheckReport r = checkOnCpu(c, 3, 1 << 16, false);
  EXPECT_TRUE(r.ok) << g.name << " " << knobs << ": " << r.message;
  return c;
}

const Binding& onlyBinding(const CompiledGraph& c) {
  EXPECT_EQ(c.kernels.size(), 1u);
  return c.kernels.at(0).binding;
}

double waveShare(const Binding& b, const Target& t) {
  const int64_t resident = residentBlocks(t, b.threadsPerBlock());
  const int64_t blocks = b.GX * b.GY, waves = (blocks + resident - 1) / resident;
  return static_cast<double>(blocks) / static_cast<double>(waves * resident);
}

TEST(WavePolicy, ColumnsSplitIntoOneWaveOfLongerBlocks) {
  // f32 [3000,4096] over its rows: 128 column tiles of (32,8). 33 blocks a column would
  // fill four waves exactly; 8 fill one to 97% and give each thread 47 rows.
  const CompiledGraph c = compiledAndChecked(columnSums(DType::Float32, 3000, 4096), "vector=1");
  const Binding& b = onlyBinding(c);
  const Target target;
  EXPECT_EQ(b.tiles, 128);
  EXPECT_EQ(b.GX, 8);
  EXPECT_LE(b.GX * b.GY, residentBlocks(target, b.threadsPerBlock())) << "one wave";
  EXPECT_GE(waveShare(b, target), 0.9);
}

TEST(WavePolicy, FewestWavesThatFillNinetyPercent) {
  // f32 [16384,cols] over its rows, column tiles of (32,8), 1056 slots a wave: 40 tiles
  // take 26 blocks a column (1040 slots, 98%) rather than 132 (five full waves), 100
  // tiles 10 (95%) rather than 21, 520 tiles 2 (98%).
  for (const auto& [cols, gx] : {std::pair<int64_t, int64_t>{1280, 26}, {3200, 10}, {16640, 2}}) {
    const CompiledGraph c = compiledAndChecked(columnSums(DType::Float32, 16384, cols), "vector=1");
    const Binding& b = onlyBinding(c);
    EXPECT_EQ(b.GX, gx) << cols << " columns";
    EXPECT_GE(waveShare(b, Target{}), 0.9) << cols << " columns";
  }
  // 1500 tiles ([1024,48000]): one block a column takes two waves at 71%, under the
  // share; two take three waves at 95%.
  const CompiledGraph wide = compiledAndChecked(columnSums(DType::Float32, 1024, 48000), "vector=1");
  EXPECT_EQ(onlyBinding(wide).GX, 2);
}

TEST(WavePolicy, RowsOneWideBlockCoversInOneWaveStayWhole) {
  auto channelSums = [](std::vector<int64_t> shape) {
    GraphBuilder g("channel_sums");
    g.output(g.reduceSum(g.input("x", DType::Float32, shape), {0, 2, 3}));
    return g.build();
  };
  // [32,256,13,13] over (0,2,3): the wave rule splits each row of 5408 over three blocks
  // of 256; one block of 1024 covers it in 6 instances a thread, 256 blocks in one wave
  // (264 resident): no cross-block combine.
  const Binding wide = onlyBinding(compiledAndChecked(channelSums({32, 256, 13, 13})));
  EXPECT_EQ(wide.BX, 1024);
  EXPECT_EQ(wide.GX, 1);
  // 384 channels: blocks of 1024 would take two waves, blocks of 512 (11 instances a
  // thread) one.
  const Binding half = onlyBinding(compiledAndChecked(channelSums({32, 384, 13, 13})));
  EXPECT_EQ(half.BX, 512);
  EXPECT_EQ(half.GX, 1);
  auto rowSums = [](std::vector<int64_t> shape) {
    GraphBuilder g("row_sums");
    g.output(g.reduceSum(g.input("x", DType::Float32, shape), {1}));
    return g.build();
  };
  // Rows of 16384 vectors, 16 a thread even at 1024: the split stays.
  EXPECT_GT(onlyBinding(compiledAndChecked(rowSums({16, 65536}))).GX, 1);
  // Fewer than 16 rows at 8 vectors a thread: the split stays.
  EXPECT_GT(onlyBinding(compiledAndChecked(rowSums({8, 30000}))).GX, 1);
  // Rows off the vector boundary (masked lanes): 8 vectors a thread keep the split, 3
  // take the wide block.
  const CompiledGraph masked = compiledAndChecked(rowSums({32, 30001}));
  ASSERT_TRUE(masked.kernels.at(0).vector.masked());
  EXPECT_GT(onlyBinding(masked).GX, 1);
  const CompiledGraph shortMasked = compiledAndChecked(rowSums({64, 9001}));
  ASSERT_TRUE(shortMasked.kernels.at(0).vector.masked());
  EXPECT_EQ(onlyBinding(shortMasked).BX, 1024);
  EXPECT_EQ(onlyBinding(shortMasked).GX, 1);
  // The `split` knob keeps the split and the block asked for, and so does a variant
  // that sets the items per thread.
  const Binding asked = onlyBinding(compiledAndChecked(channelSums({32, 256, 13, 13}), "split=3"));
  EXPECT_EQ(asked.BX, 256);
  EXPECT_EQ(asked.GX, 3);
  EXPECT_GT(onlyBinding(compiledAndChecked(channelSums({32, 256, 13, 13}), "items=8")).GX, 1);
}

TEST(WavePolicy, ShortUnevenLoopsTakeAnEvenSplit) {
  // [32,64,56,56] over (0,2,3): 25088 vectors a channel, 98 for each of 256 thread
  // indices. The wave rule's 13 blocks leave each thread 7 or 8 (a loop whose last
  // instances run one after another); 7 blocks give every thread 14, a constant trip.
  auto channelSums = [](std::vector<int64_t> shape) {
    GraphBuilder g("channel_sums");
    g.output(g.reduceSum(g.input("x", DType::Float32, shape), {0, 2, 3}));
    return g.build();
  };
  const CompiledGraph even = compiledAndChecked(channelSums({32, 64, 56, 56}));
  EXPECT_EQ(onlyBinding(even).GX, 7);
  EXPECT_NE(even.program.kernels.at(0).source.find("(c1 <= 13)"), std::string::npos) << "a constant trip of 14";
  // [16,64,112,112]: 16 blocks leave 12-13 vectors a thread, a loop long enough to keep.
  EXPECT_EQ(onlyBinding(compiledAndChecked(channelSums({16, 64, 112, 112}))).GX, 16);
  // [96,128,28,28]: 18816 vectors a channel do not divide among 256 thread indices.
  EXPECT_EQ(onlyBinding(compiledAndChecked(channelSums({96, 128, 28, 28}))).GX, 8);
  // The `split` knob sets the split, at most one instance a thread (98 blocks here).
  EXPECT_EQ(onlyBinding(compiledAndChecked(channelSums({32, 64, 56, 56}), "split=10")).GX, 10);
  EXPECT_EQ(onlyBinding(compiledAndChecked(channelSums({32, 64, 56, 56}), "split=5000")).GX, 98);
}

// A split the row's instances do not divide: the grid-stride loop is the trip every
// thread runs (a constant) and then the last instance under its guard (poly/schedule.cc,
// commonIterationsEnd), each loop unrolled; the results match on the CPU.
TEST(WavePolicy, UnevenSplitsRunTheCommonTripThenOneGuardedInstance) {
  GraphBuilder g("channel_sums");
  g.output(g.reduceSum(g.input("x", DType::Float32, {32, 64, 56, 56}), {0, 2, 3}));
  // 13 blocks of 256 along 25088 vectors: 7 strides of 3328 whole, then 1792 left.
  const CompiledGraph uneven = compiledAndChecked(g.build(), "split=13");
  const std::string& source = uneven.program.kernels.at(0).source;
  EXPECT_NE(source.find("(c1 <= 6); c1 += 1)"), std::string::npos) << source;
  EXPECT_NE(source.find("if (((256 * bx) + tx) <= 1791)"), std::string::npos) << source;
  EXPECT_EQ(test_support::occurrences(source, "#pragma unroll 4\n"), 2u) << "one loop per alignment version";
  // Down columns (a y-reduce: threads along j are threadIdx.y), plain and as Welford.
  const CompiledGraph columns = compiledAndChecked(columnSums(DType::Float32, 3000, 4096), "vector=1");
  EXPECT_EQ(onlyBinding(columns).GX, 8) << "3000 rows over 8 x 8 threads: 46 strides, then 56 rows";
  EXPECT_NE(columns.program.kernels.at(0).source.find("(c1 <= 45); c1 += 1)"), std::string::npos);
  GraphBuilder w("welford_columns");
  auto [var, mean] = w.varMean(w.input("x", DType::Float32, {3000, 96}), {0});
  w.output(var);
  w.output(mean);
  compiledAndChecked(w.build(), "split=7");
}

TEST(WavePolicy, SparseRowResidentRowsTakeTwoItems) {
  // softmax f16 [32768,128]: 16 vectors of 8 a row; at 4 items, 4 threads a row and
  // 131072 threads in all, under half a wave (270336 on 132 SMs): 2 items, 8 threads.
  const CompiledGraph sparse = compiledAndChecked(testgraphs::softmax(DType::Float16, {32768, 128}, 1));
  EXPECT_EQ(onlyBinding(sparse).BX, 8);
  EXPECT_EQ(onlyBinding(sparse).GX, 1);
  // f32 [8192,512] (128 vectors a row, 32 threads at 4 items): 262144 threads, most of
  // a wave: 4 items stay.
  const CompiledGraph full = compiledAndChecked(testgraphs::softmax(DType::Float32, {8192, 512}, 1));
  EXPECT_EQ(onlyBinding(full).BX, 32);
  // `items` given: the configured shape.
  const CompiledGraph set = compiledAndChecked(testgraphs::softmax(DType::Float16, {32768, 128}, 1), "items=4");
  EXPECT_EQ(onlyBinding(set).BX, 4);
}

// An elementwise kernel's grid covers its instances, one (a vector of lanes) a thread, so
// its loop is a guard: f32 [4097,4100] in vectors of 4 is 4199425 instances, 16405
// blocks of 256, well past the four waves (4224 blocks) the grid once stopped at.
TEST(WavePolicy, ElementwiseKernelsGiveEachThreadOneInstance) {
  GraphBuilder g("scaled_add");
  Value x = g.input("x", DType::Float32, {4097, 4100}), y = g.input("y", DType::Float32, {4097, 4100});
  g.output(g.add(g.mul(x, x), y));
  const CompiledGraph c = compiledAndChecked(g.build());
  const Binding& b = onlyBinding(c);
  EXPECT_EQ(c.kernels.at(0).vector.width, 4);
  EXPECT_EQ(b.BX, 256);
  EXPECT_EQ(b.GX, 16405);
  const std::string& source = c.program.kernels.at(0).source;
  EXPECT_EQ(source.find("for (int c0"), std::string::npos) << source;
  EXPECT_NE(source.find("if (((256 * bx) + tx) <= 4199424)"), std::string::npos) << source;
}

// The CPU check of a kernel of millions of blocks runs a sample of them: the first, the
// last and distinct others in increasing order, drawn without listing every block.
TEST(WavePolicy, CpuCheckSamplesAmongMillionsOfBlocks) {
  GraphBuilder g("negate");
  g.output(g.neg(g.input("x", DType::Int8, {int64_t{3} << 30})));
  const CompiledGraph c = test_support::compileWithKnobs(g.build(), "");
  const PolyKernel& k = c.kernels.at(0);
  ASSERT_GT(k.binding.GX, int64_t{1} << 20);
  bool sampled = false;
  const std::vector<std::pair<int64_t, int64_t>> blocks = blocksToRun(k, int64_t{1} << 16, sampled);
  ASSERT_TRUE(sampled);
  ASSERT_GE(blocks.size(), 2u);
  EXPECT_LT(blocks.size(), 1000u);
  EXPECT_EQ(blocks.front().first, 0);
  EXPECT_EQ(blocks.back().first, k.binding.GX - 1);
  for (size_t n = 1; n < blocks.size(); ++n) EXPECT_LT(blocks[n - 1].first, blocks[n].first) << "distinct, in order";
}

}  // namespace
}  // namespace polyred
