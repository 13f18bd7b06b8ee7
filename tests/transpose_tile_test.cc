// Tiled transposes (poly/transpose_tiling.h): which elementwise kernels go through
// shared-memory tiles, with which tiles and which loads staged, and that the tiled
// kernels -- run by the CPU executor, which checks each shared slot is staged before a
// barrier and read after it -- match the reference on every permutation of a rank-4
// tensor, partial tiles, mixed loads and blocks that loop over tiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <sstream>
#include <string>

#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "lowering_helpers.h"

namespace polyred {
namespace {

CompiledGraph compiledAndChecked(const Graph& g, const std::string& knobs = "") {
  CompiledGraph c = test_support::compileWithKnobs(g, knobs);
  const CpuCheckReport r = checkOnCpu(c, 7, 1 << 20, false);
  EXPECT_TRUE(r.ok) << g.name << " " << knobs << ": " << r.message;
  return c;
}

const PolyKernel& onlyKernel(const CompiledGraph& c) {
  EXPECT_EQ(c.kernels.size(), 1u);
  return c.kernels.front();
}

// vgg16's Fused_Cast_Transpose: f32 [n,3,h,w] cast to f16 and stored as [n,h,w,3].
Graph castTranspose(int64_t n, int64_t h, int64_t w) {
  GraphBuilder b("cast_transpose");
  b.output(b.transpose(b.cast(b.input("x", DType::Float32, {n, 3, h, w}), DType::Float16), {0, 2, 3, 1}));
  return b.build();
}

Graph transposed(DType t, const Shape& shape, const std::vector<int64_t>& perm) {
  GraphBuilder b("transposed");
  b.output(b.transpose(b.input("x", t, shape), perm));
  return b.build();
}

TEST(TransposeTile, CastTransposeStagesItsInputInFlatTilesOfThreeChannels) {
  const CompiledGraph c = compiledAndChecked(castTranspose(4, 224, 225), "transpose=on");
  const PolyKernel& k = onlyKernel(c);
  const TransposeTiling& t = k.tiling;
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t.dims, (std::vector<int64_t>{4, 50400, 3})) << "h and w read as one axis";
  EXPECT_EQ(t.a, 2);
  EXPECT_EQ(t.b, 1);
  EXPECT_EQ(t.TA, 3);
  EXPECT_EQ(t.TB, 512);
  EXPECT_TRUE(t.flat()) << "rows of 3 stores: the tile is one run of 1536 outputs";
  EXPECT_EQ(t.stagedLoads(), 1);
  EXPECT_EQ(t.tiles(), 4 * 99) << "50400 = 98 * 512 + 224: a partial tile per image";
  EXPECT_EQ(t.Va, 8) << "f16 stores: 8 lanes along the run";
  EXPECT_EQ(t.Vb, 4) << "f32 loads: 4 lanes along b";
  EXPECT_EQ(k.vector.width, 8);
  EXPECT_EQ(k.binding.BX, 192) << "3 * 512 / 4 vectors of Stage, 1536 / 8 of Elem: 192 threads, none idle";
  EXPECT_GE(t.flatPitch, 1536 / 8);
  EXPECT_EQ(t.slots(), 8 * t.flatPitch);
  const std::string& source = c.program.kernels.front().source;
  EXPECT_EQ(test_support::occurrences(source, "__syncthreads()"), 1u) << "one tile per block: no barrier before a next one";
  EXPECT_NE(source.find("__shared__ float tile"), std::string::npos) << source;
}

TEST(TransposeTile, EveryPermutationOfARank4TensorMatches) {
  // Odd extents: partial tiles along both tiled axes; 9240 points (tiled under auto).
  const Shape shape = {5, 6, 7, 44};
  std::vector<int64_t> perm = {0, 1, 2, 3};
  int tiledKernels = 0;
  do {
    SCOPED_TRACE("perm " + std::to_string(perm[0]) + std::to_string(perm[1]) + std::to_string(perm[2]) +
                 std::to_string(perm[3]));
    const CompiledGraph c = compiledAndChecked(transposed(DType::Float32, shape, perm), "transpose=on");
    const TransposeTiling& t = onlyKernel(c).tiling;
    // The input's innermost axis stays innermost: nothing to transpose.
    EXPECT_EQ(t.empty(), perm.back() == 3);
    tiledKernels += t.empty() ? 0 : 1;
  } while (std::next_permutation(perm.begin(), perm.end()));
  EXPECT_EQ(tiledKernels, 18);
}

TEST(TransposeTile, OnlyTheTransposingLoadsAreStaged) {
  // x is read transposed, y in the output's layout, bias broadcast along the stores.
  GraphBuilder b("mixed");
  Value x = b.input("x", DType::Float16, {96, 130});
  Value y = b.input("y", DType::Float32, {130, 96});
  Value bias = b.input("bias", DType::Float32, {130, 1});
  Value sum = b.add(b.add(b.cast(b.transpose(x, {1, 0}), DType::Float32), y), b.broadcastTo(bias, {130, 96}));
  b.output(b.cast(sum, DType::Float16));
  const CompiledGraph c = compiledAndChecked(b.build(), "transpose=on");
  const PolyKernel& k = onlyKernel(c);
  ASSERT_FALSE(k.tiling.empty());
  EXPECT_EQ(k.tiling.stagedLoads(), 1);
  EXPECT_EQ(k.tiling.TA, 32);
  EXPECT_EQ(k.tiling.TB, 64);
  for (size_t v = 0; v < k.plan.body.size(); ++v) {
    if (k.tiling.staged[v]) EXPECT_EQ(k.plan.body[v].label, "x");
  }
}

TEST(TransposeTile, TwoTransposedInputsOfDifferentTypes) {
  GraphBuilder b("two_transposed");
  Value x = b.input("x", DType::Int32, {64, 3, 3, 70});
  Value y = b.input("y", DType::Float16, {64, 3, 3, 70});
  Value s = b.add(b.cast(b.transpose(x, {0, 3, 1, 2}), DType::Float32), b.cast(b.transpose(y, {0, 3, 1, 2}), DType::Float32));
  b.output(s);
  const CompiledGraph c = compiledAndChecked(b.build(), "transpose=on");
  const TransposeTiling& t = onlyKernel(c).tiling;
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t.dims, (std::vector<int64_t>{64, 70, 9})) << "[64,70,3,3] with its last two axes as one";
  EXPECT_EQ(t.TA, 9);
  EXPECT_EQ(t.TB, 70) << "the whole of b: 9 x 128 would pass it";
  EXPECT_EQ(t.pitch(), 71);
  EXPECT_EQ(t.stagedLoads(), 2);
}

TEST(TransposeTile, BlocksThatLoopOverTilesWaitBeforeTheNextTile) {
  // 1100 tiles of 32 x 32 (scalar: 1024 instances) on blocks of 1024 threads: at most
  // 4 waves of 264 resident blocks (132 SMs), so blocks take several tiles.
  const CompiledGraph c =
      compiledAndChecked(transposed(DType::Float32, {1100, 32, 32}, {0, 2, 1}), "threads=1024,vector=1");
  const PolyKernel& k = onlyKernel(c);
  ASSERT_FALSE(k.tiling.empty());
  EXPECT_LT(k.binding.GX, k.binding.tiles);
  EXPECT_EQ(test_support::occurrences(c.program.kernels.front().source, "__syncthreads()"), 2u);
}

TEST(TransposeTile, AutoTilesLargeKernelsWhoseStoresRunAlongAWarpOrFlat) {
  // 8 MB moved, rows of 1024 stores: tiled.
  EXPECT_FALSE(onlyKernel(compiledAndChecked(transposed(DType::Float32, {1024, 1024}, {1, 0}))).tiling.empty());
  // 25 MB in rows of 3 stores (NCHW -> NHWC): a flat tile.
  EXPECT_TRUE(onlyKernel(compiledAndChecked(castTranspose(16, 224, 224))).tiling.flat());
  // 3 MB in rows of 3 whose staged loads run along an axis not next to them ([4096,
  // 64, 3] read from [3, 64, 4096]): no flat run, and rows of 3 were slower tiled.
  const Graph apart = transposed(DType::Float32, {3, 64, 4096}, {2, 1, 0});
  EXPECT_TRUE(onlyKernel(compiledAndChecked(apart)).tiling.empty());
  const TransposeTiling forced = onlyKernel(compiledAndChecked(apart, "transpose=on")).tiling;
  ASSERT_FALSE(forced.empty());
  EXPECT_FALSE(forced.flat());
}

TEST(TransposeTile, SmallKernelsTheOffKnobAndPlainLayoutsKeepTheLoop) {
  // 48 KB moved: under auto's 2 MB.
  EXPECT_TRUE(onlyKernel(compiledAndChecked(transposed(DType::Float32, {60, 100}, {1, 0}))).tiling.empty());
  EXPECT_FALSE(onlyKernel(compiledAndChecked(transposed(DType::Float32, {60, 100}, {1, 0}), "transpose=on")).tiling.empty());
  EXPECT_TRUE(onlyKernel(compiledAndChecked(transposed(DType::Float32, {1024, 1024}, {1, 0}), "transpose=off")).tiling.empty());
  GraphBuilder b("plain");
  Value x = b.input("x", DType::Float32, {300, 400});
  b.output(b.mul(x, x));
  EXPECT_TRUE(onlyKernel(compiledAndChecked(b.build())).tiling.empty());
}

TEST(TransposeTile, VectorLanesAlongBothAxesWhereTheyDivide) {
  // f16 [1024,2048] -> [2048,1024] (8 MB: tiled under auto): 16-byte lanes both ways.
  const CompiledGraph even = compiledAndChecked(transposed(DType::Float16, {1024, 2048}, {1, 0}));
  const PolyKernel& k = onlyKernel(even);
  ASSERT_FALSE(k.tiling.empty());
  EXPECT_EQ(k.tiling.Va, 8);
  EXPECT_EQ(k.tiling.Vb, 8);
  EXPECT_EQ(k.vector.width, 8) << "Elem's lanes are the kernel's";
  EXPECT_EQ(k.tiling.elemLaneStride(), k.tiling.pitch() * (32 / 8));
  EXPECT_EQ(k.tiling.slotOf(0, 1), 64 / 8) << "Stage's lanes 64 / 8 columns apart";
  EXPECT_NE(even.program.kernels.front().source.find("pr_aligned<8>(in0)"), std::string::npos)
      << "the staged input's alignment is checked";
  // [300,1030] -> [1030,300] f16: 300 = 4 * 75 along a, 1030 = 2 * 515 along b.
  const CompiledGraph odd = compiledAndChecked(transposed(DType::Float16, {300, 1030}, {1, 0}), "transpose=on");
  EXPECT_EQ(onlyKernel(odd).tiling.Va, 4);
  EXPECT_EQ(onlyKernel(odd).tiling.Vb, 2);
  // int8: 16 lanes along b; vector=1 turns every lane off.
  EXPECT_EQ(onlyKernel(compiledAndChecked(transposed(DType::Int8, {2048, 2048}, {1, 0}))).tiling.Vb, 16);
  const CompiledGraph scalar = compiledAndChecked(transposed(DType::Float16, {1024, 2048}, {1, 0}), "vector=1");
  EXPECT_EQ(onlyKernel(scalar).tiling.Va, 1);
  EXPECT_EQ(onlyKernel(scalar).tiling.Vb, 1);
}

TEST(TransposeTile, AShortBTakesWideTiles) {
  // vgg16's [512,256,3,3] -> [512,3,3,256]: b (the 9 of 3 x 3) is short, so a tile
  // takes 9 x 227.. -> 128 of a, not a warp's 32 (288 points for 256 threads).
  const CompiledGraph c = compiledAndChecked(transposed(DType::Float16, {64, 256, 3, 3}, {0, 2, 3, 1}), "transpose=on");
  const TransposeTiling& t = onlyKernel(c).tiling;
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t.dims, (std::vector<int64_t>{64, 9, 256}));
  EXPECT_EQ(t.TB, 9);
  EXPECT_EQ(t.TA, 128);
  EXPECT_EQ(t.pitch(), 9);
}

TEST(TransposeTile, ShortRowsOfStoresTakeFlatTilesWithoutBankConflictsWhereALayoutHasNone) {
  // f16 [n, A, 2000] -> [n, 2000, A] for A of 1 to 31 channels: every one a flat tile
  // (the whole of a, b just outside it), checked against the reference (the CPU model
  // fails a slot staged twice or read unstaged) -- 8-lane vectors where A * TB and A *
  // 2000 allow, odd A's partial vectors left to fewer lanes.
  for (int64_t A = 2; A < 32; ++A) {
    SCOPED_TRACE("A = " + std::to_string(A));
    const CompiledGraph c = compiledAndChecked(transposed(DType::Float16, {3, A, 2000}, {0, 2, 1}), "transpose=on");
    const TransposeTiling& t = onlyKernel(c).tiling;
    ASSERT_FALSE(t.empty());
    EXPECT_TRUE(t.flat());
    EXPECT_EQ(t.TA, A);
    EXPECT_EQ(onlyKernel(c).vector.width, t.Va);
    // The layouts of 4 and 8 lanes both ways have a conflict-free pitch for these.
    if (t.Va == t.Vb && (A == 3 || A == 5 || A == 8)) {
      EXPECT_EQ(t.stageBankConflicts(4), 0) << t.describe(onlyKernel(c).plan);
    }
  }
  // Rows of 8 and 16 halves stride Stage's stores by a multiple of the banks; the
  // swizzle spreads them.
  const TransposeTiling eight = onlyKernel(compiledAndChecked(transposed(DType::Float16, {6, 8, 2048}, {0, 2, 1}), "transpose=on")).tiling;
  EXPECT_TRUE(eight.flatSwizzle);
  EXPECT_EQ(eight.stageBankConflicts(4), 0);
  TransposeTiling plain = eight;
  plain.flatSwizzle = false;
  plain.flatPitch = plain.TB * plain.TA / plain.Va;
  EXPECT_EQ(plain.stageBankConflicts(4), 7 * 64) << "without it: 8 ways on every access";
  // The slots a tile's points take are distinct and inside the tile.
  std::vector<bool> used(static_cast<size_t>(eight.slots()), false);
  for (int64_t b = 0; b < eight.TB; ++b)
    for (int64_t a = 0; a < eight.TA; ++a) {
      const int64_t slot = eight.slotOf(a, b);
      ASSERT_TRUE(slot >= 0 && slot < eight.slots()) << a << ", " << b;
      EXPECT_FALSE(used[static_cast<size_t>(slot)]) << a << ", " << b;
      used[static_cast<size_t>(slot)] = true;
    }
}

TEST(TransposeTile, LoadsThatAreNotAffineInTheOutputsCoordinatesAreReadDirectly) {
  // A transpose then a reshape that cuts the transposed rows in two: x's offset is not
  // affine over the output's [600, 20] coordinates, so nothing is staged.
  GraphBuilder b("reshaped");
  b.output(b.reshape(b.transpose(b.input("x", DType::Float32, {40, 300}), {1, 0}), {600, 20}));
  EXPECT_TRUE(onlyKernel(compiledAndChecked(b.build(), "transpose=on")).tiling.empty());
  // Beside a staged load it is read directly, from the tiled point.
  GraphBuilder m("reshaped_beside_staged");
  Value direct = m.reshape(m.transpose(m.input("x", DType::Float32, {40, 300}), {1, 0}), {600, 20});
  Value staged = m.transpose(m.input("y", DType::Float32, {20, 600}), {1, 0});
  m.output(m.add(direct, staged));
  const CompiledGraph c = compiledAndChecked(m.build(), "transpose=on");
  const PolyKernel& k = onlyKernel(c);
  ASSERT_FALSE(k.tiling.empty());
  EXPECT_EQ(k.tiling.stagedLoads(), 1);
}

TEST(TransposeTile, NvrtcCompilesTiledKernelsAndWideOnes) {
  test_support::expectNvrtcCompiles(compiledAndChecked(castTranspose(4, 40, 41), "transpose=on"), "cast-transpose");
  test_support::expectNvrtcCompiles(
      compiledAndChecked(transposed(DType::Float32, {1100, 32, 32}, {0, 2, 1}), "threads=1024,vector=1"), "looping blocks");
  test_support::expectNvrtcCompiles(compiledAndChecked(transposed(DType::Float16, {6, 16, 1000}, {0, 2, 1}), "transpose=on"),
                                    "a swizzled flat tile");
  // 2^31 + 10 million elements (compiled, not run): offsets need 64 bits.
  CompileOptions on;
  on.config.transposeTiles = TransposeTileMode::On;
  CompiledGraph wide = compileGraph(transposed(DType::Float16, {3, 50000, 3, 4800}, {3, 1, 2, 0}), on);
  ASSERT_FALSE(onlyKernel(wide).tiling.empty());
  EXPECT_TRUE(onlyKernel(wide).index64);
  test_support::expectNvrtcCompiles(wide, "past 2^31 elements");
}

TEST(TransposeTile, TheBindingDumpDescribesTheTiles) {
  CompileOptions o;
  o.config.transposeTiles = TransposeTileMode::On;
  std::ostringstream dumped;
  o.dump = {"binding"};
  o.dumpTo = &dumped;
  compileGraph(castTranspose(2, 64, 64), o);
  EXPECT_NE(dumped.str().find("tiles of 3 x 512 over [2,4096,3]"), std::string::npos) << dumped.str();
}

}  // namespace
}  // namespace polyred
