// GPU half of the tiled-transpose tests (tests/transpose_tile_test.cc is the CPU half):
// elementwise transposes through shared-memory tiles -- vgg16's cast-transposes, every
// permutation of a rank-4 tensor in four dtypes, partial tiles, vector lanes, blocks
// that loop over tiles, a tiled kernel beside a reduction in one launch -- compared with
// the reference interpreter, on aligned tensors and on tensors one element into their
// allocation (the lanes' element-by-element code). Every case must actually be tiled.
// Without a GPU every test is skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "driver/gpu_run.h"
#include "gpu/gpu_compile.h"

namespace polyred {
namespace {

struct Case {
  std::string name;
  Graph graph;
  std::string knobs;
};

Graph castTranspose(const Shape& shape, const std::vector<int64_t>& perm) {
  GraphBuilder b("cast_transpose");
  b.output(b.transpose(b.cast(b.input("x", DType::Float32, shape), DType::Float16), perm));
  return b.build();
}

Graph transposed(DType t, const Shape& shape, const std::vector<int64_t>& perm) {
  GraphBuilder b("transposed");
  b.output(b.transpose(b.input("x", t, shape), perm));
  return b.build();
}

// A tiled transpose and an independent row sum: one launch of two parts.
Graph besideARowSum() {
  GraphBuilder b("beside_row_sum");
  b.output(b.transpose(b.input("x", DType::Float16, {64, 512, 49}), {0, 2, 1}));
  b.output(b.reduceSum(b.input("y", DType::Float32, {300, 700}), {1}));
  return b.build();
}

std::vector<Case> cases() {
  std::vector<Case> c = {
      {"vgg16 cast-transpose f32 [64,3,224,224] -> f16 [64,224,224,3]", castTranspose({64, 3, 224, 224}, {0, 2, 3, 1}), ""},
      {"vgg16 transpose f16 [512,3,3,512] perm 0312", transposed(DType::Float16, {512, 3, 3, 512}, {0, 3, 1, 2}), ""},
      {"vgg16 transpose f16 [64,512,7,7] perm 0231", transposed(DType::Float16, {64, 512, 7, 7}, {0, 2, 3, 1}), ""},
      {"2-D f32 [4097,1025] (partial tiles both ways)", transposed(DType::Float32, {4097, 1025}, {1, 0}), ""},
      {"2-D f16 [4096,2048] (8 lanes both ways)", transposed(DType::Float16, {4096, 2048}, {1, 0}), ""},
      {"2-D int8 [2000,1040] (partial tiles, 16 and 8 lanes)", transposed(DType::Int8, {2000, 1040}, {1, 0}), ""},
      {"cast f32 -> f16 [1024,3,64,64] NHWC (4 lanes along b, none along a)", castTranspose({1024, 3, 64, 64}, {0, 2, 3, 1}), ""},
      {"blocks looping over tiles: f32 [4000,64,64] perm 021, threads=1024",
       transposed(DType::Float32, {4000, 64, 64}, {0, 2, 1}), "threads=1024"},
      {"beside a row sum (horizontal fusion)", besideARowSum(), ""},
      {"flat tiles, rows of 8 (swizzled): f16 [256,8,2048] perm 021", transposed(DType::Float16, {256, 8, 2048}, {0, 2, 1}), ""},
      {"flat tiles, rows of 16: f16 [64,16,1000] perm 021", transposed(DType::Float16, {64, 16, 1000}, {0, 2, 1}), ""},
      {"flat tiles, rows of 9, odd b: f32 [100,9,777] perm 021", transposed(DType::Float32, {100, 9, 777}, {0, 2, 1}), ""},
      {"flat tiles, rows of 5: int8 [33,5,4099] perm 021", transposed(DType::Int8, {33, 5, 4099}, {0, 2, 1}), ""},
  };
  const DType types[] = {DType::Float32, DType::Float16, DType::Int8, DType::Float64};
  std::vector<int64_t> perm = {0, 1, 2, 3};
  int k = 0;
  do {
    if (perm.back() == 3) continue;  // not a transpose of the innermost axis
    const DType t = types[static_cast<size_t>(k++) % 4];
    c.push_back({"rank-4 " + std::string(dtypeName(t)) + " [13,30,7,66] perm " + std::to_string(perm[0]) +
                     std::to_string(perm[1]) + std::to_string(perm[2]) + std::to_string(perm[3]),
                 transposed(t, {13, 30, 7, 66}, perm), ""});
  } while (std::next_permutation(perm.begin(), perm.end()));
  return c;
}

TEST(TransposeTileGpu, TiledTransposesMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    CompileOptions o;
    o.target = currentTarget();
    o.config = KernelConfig::parse(c.knobs, "test");
    o.config.transposeTiles = TransposeTileMode::On;  // (auto leaves short rows and small kernels to the 1-D loop)
    CompiledGraph compiled = compileGraph(c.graph, o);
    const bool tiled = std::any_of(compiled.kernels.begin(), compiled.kernels.end(),
                                   [](const PolyKernel& k) { return !k.tiling.empty(); });
    ASSERT_TRUE(tiled) << "no kernel was tiled: the case tests nothing";
    EXPECT_EQ(compiled.program.kernels.size(), 1u);
    // Aligned tensors take the vector lanes; tensors one element into their
    // allocation (a view with a storage offset) the element-by-element code.
    for (int misalign : {0, 1}) {
      GpuRunOptions run;
      run.time = false;
      run.misalignElements = misalign;
      GpuRunReport r = runOnGpu(compiled, run);
      EXPECT_TRUE(r.ok) << (misalign ? "misaligned: " : "") << r.check;
    }
  }
}

}  // namespace
}  // namespace polyred
