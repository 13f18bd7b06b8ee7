// The device reduction library (src/device/*.cuh) and the NVRTC wrapper, without a GPU:
//  - DeviceLibraryLogic: replays the block reductions' trees on the CPU through the very
//    index functions the device code uses (polyred_reduce_layout.cuh), for every block
//    shape of up to 1024 threads, and checks each row / column / block total exactly,
//    every shuffle's source lane and mask, and every shared-memory slot;
//  - DeviceLibraryCompile: every (accumulator type, combiner) pair through every
//    building block compiles with NVRTC to a CUBIN for sm_90, with the expected atomic
//    instructions in the PTX; unsupported uses fail with the library's static_assert;
//  - Nvrtc: the wrapper itself.
// The division by an invariant (polyred_division.cuh) has its own file,
// device_division_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <limits>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "device/polyred_reduce_layout.cuh"
#include "runtime/nvrtc.h"

using namespace polyred;
namespace dev = polyred_dev;

namespace {

// ------------------------------------------------------------------------------------
// CPU replay of the block reductions (sum of 64-bit values, wrapping: a value counted
// twice or missed changes the total; with the InOrder policy, products of 2x2 matrices:
// a value combined out of order changes it too).

using Combine = uint64_t (*)(uint64_t, uint64_t);
uint64_t add(uint64_t a, uint64_t b) { return a + b; }
// 2x2 matrices of 16-bit entries (row-major in the four 16-bit words), product mod 2^16:
// associative, not commutative.
uint64_t matmul16(uint64_t a, uint64_t b) {
  auto at = [](uint64_t m, int k) { return static_cast<uint16_t>(m >> (16 * k)); };
  auto entry = [&](int r, int c) {
    const uint32_t sum = uint32_t{at(a, 2 * r)} * at(b, c) + uint32_t{at(a, 2 * r + 1)} * at(b, 2 + c);
    return static_cast<uint64_t>(static_cast<uint16_t>(sum));
  };
  return entry(0, 0) | entry(0, 1) << 16 | entry(1, 0) << 32 | entry(1, 1) << 48;
}
// [[1, a], [b, 1 + ab]] from the bits of r: determinant 1, so products of many never
// degenerate to 0 mod 2^16 (random matrices would, and hide a reordering).
uint64_t unimodular(uint64_t r) {
  const uint64_t a = r & 0xffff, b = r >> 16 & 0xffff;
  return 1 | a << 16 | b << 32 | static_cast<uint64_t>(static_cast<uint16_t>(1 + a * b)) << 48;
}

// Shared memory of the replay: remembers which slots were written, checks bounds.
struct SharedMemory {
  std::vector<uint64_t> value;
  std::vector<bool> written;
  explicit SharedMemory(int n) : value(n), written(n) {}
  void store(int slot, uint64_t v) {
    ASSERT_GE(slot, 0);
    ASSERT_LT(slot, static_cast<int>(value.size()));
    value[slot] = v;
    written[slot] = true;
  }
  uint64_t load(int slot) const {
    EXPECT_GE(slot, 0);
    EXPECT_LT(slot, static_cast<int>(value.size()));
    if (slot < 0 || slot >= static_cast<int>(value.size())) return 0;
    EXPECT_TRUE(written[slot]) << "slot " << slot << " read before written";
    return value[slot];
  }
};

// warp_butterfly<width> in every warp; `mask(t)` is the mask thread t passes. Ordered:
// warp_butterfly_in_order (offsets upwards, the upper lane's partner on the left).
template <class MaskOf>
void replayButterfly(std::vector<uint64_t>& v, int threads, int width, MaskOf mask, Combine op = add,
                     bool ordered = false) {
  for (int offset = ordered ? 1 : width / 2; ordered ? offset < width : offset > 0;
       offset = ordered ? offset * 2 : offset / 2) {
    const std::vector<uint64_t> before = v;
    for (int t = 0; t < threads; ++t) {
      const int lane = t % dev::kWarpSize, src = t - lane + (lane ^ offset);
      ASSERT_LT(src, threads);
      ASSERT_TRUE(mask(t) >> (src % dev::kWarpSize) & 1u) << "source lane outside the mask";
      ASSERT_TRUE(mask(t) >> lane & 1u);
      ASSERT_EQ(mask(t), mask(src)) << "partners pass different masks";
      v[t] = ordered && (lane & offset) ? op(before[src], before[t]) : op(before[t], before[src]);
    }
  }
}

// warp_run_tree<maxLen> over the threads for which `active(t)` (whole warps), each with
// its run segment(t) and the warp mask of the block.
template <class Active, class SegmentOf>
void replayRunTree(std::vector<uint64_t>& v, int threads, int maxLen, Active active, SegmentOf segment,
                   Combine op = add) {
  for (int offset = 1; offset < maxLen; offset *= 2) {
    const std::vector<uint64_t> before = v;
    for (int t = 0; t < threads; ++t) {
      if (!active(t)) continue;
      const dev::Segment s = segment(t);
      if (!dev::tree_absorbs(s, offset)) continue;
      const int lane = t % dev::kWarpSize, src = t + offset;
      const unsigned mask = dev::warp_lane_mask(threads, t / dev::kWarpSize);
      ASSERT_LT(lane + offset, dev::kWarpSize) << "partner in another warp";
      ASSERT_TRUE(mask >> (lane + offset) & 1u) << "source lane outside the mask";
      ASSERT_TRUE(active(src)) << "source lane does not run the shuffle";
      const dev::Segment p = segment(src);
      ASSERT_EQ(p.rel, s.rel + offset) << "partner outside the run";
      ASSERT_EQ(p.len, s.len);
      v[t] = op(before[t], before[src]);
    }
  }
}

// detail::reduce_rows<W, R, Order>: rows of W consecutive threads; partials in smem
// from `base`. Returns the threads' values afterwards.
std::vector<uint64_t> replayRows(int width, int rows, std::vector<uint64_t> v, SharedMemory& smem, int base,
                                 Combine op = add, bool ordered = false) {
  const dev::RowsLayout L = dev::RowsLayout::make(width, rows);
  const int threads = L.threads();
  if (L.single_butterfly()) {
    replayButterfly(v, threads, width, [&](int t) { return dev::group_lane_mask(width, t % dev::kWarpSize); }, op,
                    ordered);
    return v;
  }
  if (L.warp_aligned() && !ordered) {
    replayButterfly(v, threads, dev::kWarpSize,
                    [&](int t) { return dev::warp_lane_mask(threads, t / dev::kWarpSize); }, op);
  } else {
    replayRunTree(v, threads, L.max_run(), [](int) { return true; }, [&](int t) { return L.segment(t); }, op);
  }
  std::vector<bool> slotUsed(L.partial_slots());
  for (int t = 0; t < threads; ++t) {
    if (L.segment(t).rel != 0) continue;
    const int slot = L.partial_slot(t);
    EXPECT_GE(slot, 0);
    EXPECT_LT(slot, L.partial_slots());
    EXPECT_FALSE(slotUsed[slot]) << "two segments write slot " << slot;
    slotUsed[slot] = true;
    smem.store(base + slot, v[t]);
  }
  if (L.finish_in_warp) {
    auto active = [&](int t) { return L.warp_has_row_head(t / dev::kWarpSize); };
    for (int t = 0; t < threads; ++t) {
      if (!L.loads_partial(t)) continue;
      EXPECT_TRUE(active(t)) << "a finishing lane in a warp that skips level 2";
      EXPECT_LT(L.finishing_slot(t) - L.row_of(t) * L.max_segments, L.segments(L.row_of(t)));
      v[t] = smem.load(base + L.finishing_slot(t));
    }
    replayRunTree(v, threads, L.max_segments, active, [&](int t) { return L.finishing_segment(t); }, op);
  } else {
    for (int row = 0; row < rows; ++row) {
      uint64_t acc = smem.load(base + row * L.max_segments);
      for (int k = 1; k < L.segments(row); ++k) acc = op(acc, smem.load(base + row * L.max_segments + k));
      v[row * width] = acc;
    }
  }
  return v;
}

std::vector<uint64_t> randomValues(int n, uint64_t seed) {
  std::vector<uint64_t> v(n);
  for (auto& x : v) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x = seed ^ (seed >> 29);
  }
  return v;
}

// Checks block_reduce_x, block_reduce_y and block_reduce_all on one block shape (with
// `ordered`, the InOrder trees against folds in lane order).
void checkShape(int bx, int by, Combine op = add, bool ordered = false) {
  SCOPED_TRACE("block " + std::to_string(bx) + "x" + std::to_string(by) + (ordered ? " in order" : ""));
  const int threads = bx * by;
  std::vector<uint64_t> in = randomValues(threads, threads * 7919 + bx);
  if (ordered)
    for (uint64_t& x : in) x = unimodular(x);

  {  // x: row y's total in thread (0, y)
    const dev::RowsLayout L = dev::RowsLayout::make(bx, by);
    SharedMemory smem(std::max(1, L.partial_slots()));
    const std::vector<uint64_t> out = replayRows(bx, by, in, smem, 0, op, ordered);
    for (int y = 0; y < by; ++y) {
      uint64_t want = in[y * bx];
      for (int x = 1; x < bx; ++x) want = op(want, in[y * bx + x]);
      ASSERT_EQ(out[y * bx], want) << "block_reduce_x, row " << y;
    }
  }
  {  // all: the block's total in thread (0, 0)
    const dev::RowsLayout L = dev::RowsLayout::make(threads, 1);
    SharedMemory smem(std::max(1, L.partial_slots()));
    uint64_t want = in[0];
    for (int t = 1; t < threads; ++t) want = op(want, in[t]);
    ASSERT_EQ(replayRows(threads, 1, in, smem, 0, op, ordered)[0], want) << "block_reduce_all";
  }
  {  // y: column x's total in thread (x, 0)
    const dev::ColumnsLayout C = dev::ColumnsLayout::make(bx, by);
    SharedMemory smem(std::max(1, C.smem_elements()));
    std::vector<uint64_t> out(threads);
    if (by == 1) {
      out = in;
    } else if (!C.staged()) {
      out = replayRows(by, 1, in, smem, 0, op, ordered);
    } else {
      for (int t = 0; t < threads; ++t) {
        const int slot = C.store_slot(t % bx, t / bx);
        ASSERT_LT(slot, C.partials_offset());
        ASSERT_FALSE(smem.written[slot]) << "two threads stage to slot " << slot;
        smem.store(slot, in[t]);
      }
      std::vector<uint64_t> gathered(threads);
      for (int t = 0; t < threads; ++t) gathered[t] = smem.load(C.gather_slot(t));
      gathered = replayRows(by, bx, gathered, smem, C.partials_offset(), op, ordered);
      for (int t = 0; t < threads; t += by) smem.store(C.gather_slot(t), gathered[t]);
      for (int t = 0; t < threads; ++t) out[t] = smem.load(C.result_slot(t % bx));
    }
    for (int x = 0; x < bx; ++x) {
      uint64_t want = in[x];
      for (int y = 1; y < by; ++y) want = op(want, in[y * bx + x]);
      ASSERT_EQ(out[x], want) << "block_reduce_y, column " << x;
    }
  }
}

// The shared-memory sizes are compile-time constants in plain C++ too.
static_assert(dev::smem_x<32, 1>() == 1 && dev::smem_x<1024, 1>() == 32 && dev::smem_x<256, 4>() == 32);
static_assert(dev::smem_all<16, 2>() == 1 && dev::smem_all<33, 7>() == 8);
static_assert(dev::smem_y<32, 1>() == 1 && dev::smem_y<32, 8>() == 32 * 9);

}  // namespace

TEST(DeviceLibraryLogic, EveryBlockShapeCombinesEachValueOnce) {
  for (int bx = 1; bx <= dev::kMaxBlockThreads; ++bx)
    for (int by = 1; bx * by <= dev::kMaxBlockThreads; ++by) {
      checkShape(bx, by);
      if (::testing::Test::HasFatalFailure() || ::testing::Test::HasNonfatalFailure()) return;
    }
}

// InOrder: every step joins adjacent ranges with the lower one on the left, so a
// non-commutative combine (2x2 matrix products) gives the in-order fold exactly.
TEST(DeviceLibraryLogic, InOrderTreesKeepLaneOrderForEveryBlockShape) {
  for (int bx = 1; bx <= dev::kMaxBlockThreads; ++bx)
    for (int by = 1; bx * by <= dev::kMaxBlockThreads; ++by) {
      checkShape(bx, by, matmul16, true);
      if (::testing::Test::HasFatalFailure() || ::testing::Test::HasNonfatalFailure()) return;
    }
}

// And the replay does tell orders apart: the default butterflies, replayed with the
// same non-commutative combine, miss the in-order fold.
TEST(DeviceLibraryLogic, ButterfliesReorderLanes) {
  std::vector<uint64_t> in = randomValues(32, 5);
  for (uint64_t& x : in) x = unimodular(x);
  std::vector<uint64_t> v = in;
  replayButterfly(v, 32, 32, [](int) { return 0xffffffffu; }, matmul16);
  uint64_t want = in[0];
  for (int t = 1; t < 32; ++t) want = matmul16(want, in[t]);
  EXPECT_NE(v[0], want);
}

TEST(DeviceLibraryLogic, MasksNameExactlyTheLanesPresent) {
  EXPECT_EQ(dev::warp_lane_mask(1024, 31), 0xffffffffu);
  EXPECT_EQ(dev::warp_lane_mask(231, 7), 0x7fu);  // 33x7: the last warp has 7 threads
  EXPECT_EQ(dev::warp_lane_mask(1, 0), 0x1u);
  EXPECT_EQ(dev::group_lane_mask(8, 19), 0xff0000u);
  EXPECT_EQ(dev::group_lane_mask(32, 5), 0xffffffffu);
  EXPECT_EQ(dev::group_lane_mask(1, 6), 0x40u);
}

TEST(DeviceLibraryLogic, ColumnStagingHasAtMostOneTwoWayConflictForPowerOfTwoShapes) {
  // An odd pitch makes the staging store conflict-free but then the gather may meet a
  // 2-way conflict (and vice versa); the pitch search keeps the total at 3 wavefronts.
  for (int bx = 2; bx <= 512; bx *= 2)
    for (int by = 2; bx * by <= 1024; by *= 2) {
      const dev::ColumnsLayout C = dev::ColumnsLayout::make(bx, by);
      for (int warp = 0; warp * dev::kWarpSize < bx * by; ++warp)
        EXPECT_LE(C.store_conflicts(warp) + C.gather_conflicts(warp), 3) << bx << "x" << by << " warp " << warp;
      EXPECT_LE(C.partials_offset(), bx * by + 32 + bx) << bx << "x" << by;
    }
}

// ------------------------------------------------------------------------------------
// NVRTC compilation of the library.

namespace {

struct AccType {
  const char* cuda;  // spelled in CUDA C++
  const char* tag;   // in kernel names
};
const AccType kAccTypes[] = {{"int", "i32"}, {"long long", "i64"}, {"float", "f32"}, {"double", "f64"}};
// The built-in combiners, then a user-defined one (LargerMagnitude, in kPrelude).
const char* const kCombiners[] = {"Sum", "Prod", "Max", "Min", "And", "Or", "LargerMagnitude"};

const char* const kPrelude = R"(
#include "polyred_reduce.cuh"
using namespace polyred_dev;
// A user-defined combiner: the argument of larger magnitude.
template <class T> struct LargerMagnitude {
  __device__ T operator()(T a, T b) const { return (a < T(0) ? -a : a) >= (b < T(0) ? -b : b) ? a : b; }
};
template <int BX, int BY> constexpr int smem_any() {
  constexpr int x = smem_x<BX, BY>(), y = smem_y<BX, BY>(), all = smem_all<BX, BY>();
  return x > y ? (x > all ? x : all) : (y > all ? y : all);
}
)";

constexpr int kCc = 90;  // sm_90 (H100 / H200)

NvrtcResult compile(const std::string& source, const std::string& name) {
  return compileCuda(source, name, kCc / 10, kCc % 10);
}

// The PTX of one kernel (from its .entry to the next).
std::string kernelPtx(const std::string& ptx, const std::string& kernel) {
  const size_t start = ptx.find(".entry " + kernel + "(");
  if (start == std::string::npos) return "";
  const size_t end = ptx.find(".entry ", start + 1);
  return ptx.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// One kernel per (block shape, accumulator type) running block_reduce_x, _y and _all
// with every combiner, one smem buffer reused by all 21 calls.
std::string blockReductionSource(const std::vector<std::pair<int, int>>& shapes) {
  std::string s = std::string(kPrelude) + R"(
template <class T, int BX, int BY, template <class> class Op>
__device__ void reduce_three_ways(const T* in, T* out, T* smem) {
  const int t = threadIdx.y * BX + threadIdx.x;
  const T v = in[t];
  out[t] = block_reduce_x<T, Op<T>, BX, BY>(v, Op<T>{}, smem);
  out[BX * BY + t] = block_reduce_y<T, Op<T>, BX, BY>(v, Op<T>{}, smem);
  out[2 * BX * BY + t] = block_reduce_all<T, Op<T>, BX, BY>(v, Op<T>{}, smem);
}
template <class T, int BX, int BY>
__device__ void reduce_with_every_combiner(const T* in, T* out) {
  __shared__ T smem[smem_any<BX, BY>()];
)";
  int k = 0;
  for (const char* op : kCombiners)
    s += "  reduce_three_ways<T, BX, BY, " + std::string(op) + ">(in, out + " + std::to_string(3 * k++) +
         " * BX * BY, smem);\n";
  s += "}\n";
  for (auto [bx, by] : shapes)
    for (const AccType& t : kAccTypes) {
      const std::string shape = std::to_string(bx) + "x" + std::to_string(by);
      s += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(bx * by) + ") reduce_" + t.tag + "_" +
           shape + "(const " + t.cuda + "* in, " + t.cuda + "* out) { reduce_with_every_combiner<" + t.cuda +
           ", " + std::to_string(bx) + ", " + std::to_string(by) + ">(in, out); }\n";
    }
  return s;
}

// One kernel per (type, combiner) running the atomic protocol and the deterministic
// one (all three fixed-order combines) on a 128x2 block.
std::string crossBlockSource() {
  std::string s = std::string(kPrelude) + R"(
template <class T, class Op>
__device__ void cross_block(T* ws_acc, T* ws_partials, unsigned* ws_tickets, T* out, const T* in, T identity) {
  constexpr int BX = 128, BY = 2;
  __shared__ T smem[smem_any<BX, BY>()];
  const int t = threadIdx.y * BX + threadIdx.x;
  const T partial = block_reduce_all<T, Op, BX, BY>(in[blockIdx.x * BX * BY + t], Op{}, smem);
  if (t == 0) atomic_combine(&ws_acc[0], partial, Op{});
  if (block_arrive_last(&ws_tickets[0], gridDim.x) && t == 0) out[0] = take_and_reset(&ws_acc[0], identity);
  if (t == 0) ws_partials[blockIdx.x] = partial;
  if (block_arrive_last(&ws_tickets[1], gridDim.x)) {
    const T all = combine_partials_fixed_order<T, Op, BX, BY>(ws_partials, gridDim.x, identity, Op{}, smem);
    const T row = combine_partials_fixed_order_x<T, Op, BX, BY>(ws_partials + threadIdx.y, gridDim.x, identity, Op{}, smem);
    const T column = combine_block_partials_y<T, Op, BX, BY>(ws_partials, 1, gridDim.x, threadIdx.x, BX, identity, Op{}, smem);
    T columns[4];
    combine_block_partials_y_lanes<T, Op, BX, BY, 4, false>(ws_partials, 1, gridDim.x, 4 * threadIdx.x, BX, identity, Op{}, smem, columns);
    if (t == 0) out[1] = all;
    if (threadIdx.x == 0) out[2 + threadIdx.y] = row;
    if (threadIdx.y == 0) out[4 + threadIdx.x] = column;
    if (threadIdx.y == 0) out[140 + threadIdx.x] = columns[1];
    if (gridDim.x <= 32) {  // the one-warp combines (at most 32 partials)
      const T all_in_warp = combine_partials_fixed_order<T, Op, BX, BY, AnyOrder, 32>(ws_partials, gridDim.x, identity, Op{}, smem);
      const T row_in_warp = combine_partials_fixed_order_x<T, Op, BX, BY, AnyOrder, 32>(ws_partials + threadIdx.y, gridDim.x, identity, Op{}, smem);
      if (t == 0) out[132] = all_in_warp;
      if (threadIdx.x == 0) out[133 + threadIdx.y] = row_in_warp;
    }
  }
}
)";
  for (const AccType& t : kAccTypes)
    for (const char* op : kCombiners) {
      const std::string T = t.cuda;
      s += "extern \"C\" __global__ void __launch_bounds__(256) cross_" + std::string(t.tag) + "_" + op + "(" + T +
           "* a, " + T + "* p, unsigned* k, " + T + "* o, const " + T + "* in, " + T + " id) { cross_block<" + T +
           ", " + op + "<" + T + ">>(a, p, k, o, in, id); }\n";
    }
  return s;
}

// The atomic instructions atomic_combine must use for (type, combiner); "cas" = a
// compare-and-swap loop. A float maximum takes the signed integer maximum (values with
// the sign clear) and the unsigned minimum (sign set); a minimum the mirror image.
std::vector<std::string> expectedAtomics(const std::string& tag, const std::string& op) {
  const bool wide = tag == "i64" || tag == "f64";
  const std::string b = wide ? "b64" : "b32", bits = wide ? "64" : "32";
  if (op == "Sum") {
    if (tag == "i32") return {"add.(s32|u32)"};
    if (tag == "i64") return {"add.u64"};
    return {"add." + tag};
  }
  if (op == "Max" || op == "Min") {
    const std::string same = op == "Max" ? "max" : "min", other = op == "Max" ? "min" : "max";
    if (tag == "i32" || tag == "i64") return {same + ".s" + bits};
    if (tag == "f32" || tag == "f64") return {same + ".s" + bits, other + ".u" + bits};
  }
  if (op == "And") return {"and." + b};
  if (op == "Or") return {"or." + b};
  return {"cas." + b};
}

}  // namespace

TEST(Nvrtc, TrivialKernelCompilesToCubin) {
  const NvrtcResult r = compile(R"(extern "C" __global__ void k(float* x) { x[threadIdx.x] *= 2.0f; })", "trivial.cu");
  ASSERT_GE(r.cubin.size(), 4u);
  EXPECT_EQ(std::string(r.cubin.data(), 4), "\x7f" "ELF");
  EXPECT_NE(r.ptx.find(".target sm_90"), std::string::npos);
  EXPECT_FALSE(nvrtcVersion().empty());
}

TEST(Nvrtc, SyntaxErrorThrowsCompileErrorWithLogAndSource) {
  const std::string source = "extern \"C\" __global__ void broken(float* x) { x[0] = ; }\n";
  try {
    compile(source, "broken.cu");
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    const std::string what = e.what();
    EXPECT_NE(e.log().find("expected an expression"), std::string::npos) << e.log();
    EXPECT_NE(what.find(e.log()), std::string::npos);
    EXPECT_NE(what.find("broken.cu"), std::string::npos);
    EXPECT_NE(what.find("1: extern \"C\" __global__ void broken"), std::string::npos) << what;
  }
}

TEST(Nvrtc, CudaRootComesFromTheEnvironment) {
  const std::string source = "#include <cuda_fp16.h>\n__global__ void k(__half* h) { h[0] = __float2half(1.0f); }\n";
  compile(source, "fp16.cu");
  setenv("POLYRED_CUDA_ROOT", "/nonexistent-cuda", 1);
  EXPECT_THROW(compile(source, "fp16.cu"), CompileError);
  unsetenv("POLYRED_CUDA_ROOT");
}

TEST(DeviceLibraryCompile, BlockReductionsForEveryTypeCombinerAndShape) {
  // Two programs compiled concurrently (NVRTC is thread-safe across programs).
  const std::vector<std::vector<std::pair<int, int>>> programs = {
      {{32, 1}, {128, 1}, {256, 4}, {96, 3}, {1, 1}, {31, 33}},
      {{16, 8}, {1, 256}, {33, 7}, {1024, 1}, {7, 1}, {3, 341}},
  };
  std::vector<std::future<NvrtcResult>> results;
  for (size_t i = 0; i < programs.size(); ++i)
    results.push_back(std::async(std::launch::async, [&, i] {
      return compile(blockReductionSource(programs[i]), "block_reductions_" + std::to_string(i) + ".cu");
    }));
  for (size_t i = 0; i < programs.size(); ++i) {
    const NvrtcResult r = results[i].get();
    EXPECT_FALSE(r.cubin.empty());
    EXPECT_EQ(r.log, "");
    for (auto [bx, by] : programs[i])
      for (const AccType& t : kAccTypes) {
        const std::string kernel = std::string("reduce_") + t.tag + "_" + std::to_string(bx) + "x" + std::to_string(by);
        EXPECT_FALSE(kernelPtx(r.ptx, kernel).empty()) << kernel;
      }
  }
}

// Tuple accumulators (generated Tuple<r> structs): every block reduction and allreduce
// for odd block shapes, an 8-byte and a 24-byte tuple, shuffled word by word.
TEST(DeviceLibraryCompile, TupleBlockReductionsForOddShapes) {
  std::string source = std::string(kPrelude) + R"(
struct alignas(8) ArgT { static constexpr bool polyred_tuple = true; static constexpr bool polyred_commutative = true;
  float v; int i; };
struct ArgOp { __device__ ArgT operator()(const ArgT& a, const ArgT& b) const {
  const bool pick = a.v > b.v || (a.v == b.v && a.i < b.i); return pick ? a : b; } };
struct alignas(8) WelT { static constexpr bool polyred_tuple = true; static constexpr bool polyred_commutative = true;
  double n, m, q; };
struct WelOp { __device__ WelT operator()(const WelT& a, const WelT& b) const {
  const double n = a.n + b.n, d = b.m - a.m;
  return n == 0 ? a : WelT{n, a.m + d * b.n / n, a.q + b.q + d * d * (a.n * b.n / n)}; } };
)";
  const std::vector<std::pair<int, int>> shapes = {{32, 1}, {96, 3}, {31, 33}, {1, 256}, {7, 1}, {16, 8}};
  for (auto [bx, by] : shapes)
    for (const char* t : {"ArgT", "WelT"}) {
      const std::string T = t, Op = T == "ArgT" ? "ArgOp" : "WelOp", dims = std::to_string(bx) + ", " + std::to_string(by);
      const std::string name = "tuple_" + T + "_" + std::to_string(bx) + "x" + std::to_string(by);
      source += "extern \"C\" __global__ void " + name + "(" + T + "* p) {\n"
                "  __shared__ " + T + " sx[smem_x<" + dims + ">()], sy[smem_y<" + dims + ">()], sa[smem_all<" + dims + ">()];\n"
                "  __shared__ " + T + " tx[" + std::to_string(by) + "], ty[" + std::to_string(bx) + "];\n"
                "  const int t = threadIdx.y * " + std::to_string(bx) + " + threadIdx.x;\n"
                "  " + T + " v = p[t];\n"
                "  p[t] = block_reduce_x<" + T + ", " + Op + ", " + dims + ">(v, " + Op + "(), sx);\n"
                "  p[t + 2048] = block_reduce_y<" + T + ", " + Op + ", " + dims + ">(v, " + Op + "(), sy);\n"
                "  p[t + 4096] = block_reduce_all<" + T + ", " + Op + ", " + dims + ">(v, " + Op + "(), sa);\n"
                "  p[t + 6144] = block_allreduce_x<" + T + ", " + Op + ", " + dims + ">(v, " + Op + "(), sx, tx);\n"
                "  p[t + 8192] = block_allreduce_y<" + T + ", " + Op + ", " + dims + ">(v, " + Op + "(), sy, ty);\n}\n";
    }
  const NvrtcResult r = compile(source, "tuple_block_reductions.cu");
  EXPECT_EQ(r.log, "");
  for (auto [bx, by] : shapes)
    for (const char* t : {"ArgT", "WelT"}) {
      const std::string kernel = "tuple_" + std::string(t) + "_" + std::to_string(bx) + "x" + std::to_string(by);
      EXPECT_FALSE(kernelPtx(r.ptx, kernel).empty()) << kernel;
    }
  EXPECT_NE(kernelPtx(r.ptx, "tuple_WelT_96x3").find("shfl.sync"), std::string::npos);
}

// A non-commutative tuple (affine maps) through every block reduction, allreduce and
// fixed-order combine with the InOrder policy.
TEST(DeviceLibraryCompile, InOrderReductionsOfANonCommutativeTuple) {
  std::string source = std::string(kPrelude) + R"(
struct alignas(8) Aff { static constexpr bool polyred_tuple = true; static constexpr bool polyred_commutative = false;
  long long a, b; };
struct Compose { __device__ Aff operator()(const Aff& x, const Aff& y) const { return Aff{x.a * y.a, x.b * y.a + y.b}; } };
)";
  const std::vector<std::pair<int, int>> shapes = {{32, 1}, {96, 3}, {31, 33}, {1, 256}, {7, 1}, {16, 8}, {256, 4}};
  for (auto [bx, by] : shapes) {
    const std::string dims = std::to_string(bx) + ", " + std::to_string(by), name = "ordered_" + std::to_string(bx) + "x" + std::to_string(by);
    const std::string args = "<Aff, Compose, " + dims + ", InOrder>", argsFew = "<Aff, Compose, " + dims + ", InOrder, 31>";
    source += "extern \"C\" __global__ void " + name + "(Aff* p) {\n"
              "  __shared__ Aff sx[smem_x<" + dims + ">()], sy[smem_y<" + dims + ">()], sa[smem_all<" + dims + ">()];\n"
              "  __shared__ Aff tx[" + std::to_string(by) + "], ty[" + std::to_string(bx) + "];\n"
              "  const int t = threadIdx.y * " + std::to_string(bx) + " + threadIdx.x;\n"
              "  const Aff v = p[t], id{1, 0};\n"
              "  p[t] = block_reduce_x" + args + "(v, Compose(), sx);\n"
              "  p[t + 2048] = block_reduce_y" + args + "(v, Compose(), sy);\n"
              "  p[t + 4096] = block_reduce_all" + args + "(v, Compose(), sa);\n"
              "  p[t + 6144] = block_allreduce_x" + args + "(v, Compose(), sx, tx);\n"
              "  p[t + 8192] = block_allreduce_y" + args + "(v, Compose(), sy, ty);\n"
              "  p[t + 10240] = combine_partials_fixed_order" + args + "(p + 12288, 77, id, Compose(), sa);\n"
              "  p[t + 14336] = combine_partials_fixed_order_x" + args + "(p + 12288, 77, id, Compose(), sx);\n"
              "  p[t + 16384] = combine_block_partials_y" + args + "(p + 12288, 1, 77, threadIdx.x, 128, id, Compose(), sy);\n"
              "  p[t + 18432] = combine_partials_fixed_order" + argsFew + "(p + 12288, 31, id, Compose(), sa);\n"
              "  p[t + 20480] = combine_partials_fixed_order_x" + argsFew + "(p + 12288, 31, id, Compose(), sx);\n}\n";
  }
  const NvrtcResult r = compile(source, "ordered_block_reductions.cu");
  EXPECT_EQ(r.log, "");
  for (auto [bx, by] : shapes)
    EXPECT_FALSE(kernelPtx(r.ptx, "ordered_" + std::to_string(bx) + "x" + std::to_string(by)).empty());
}

TEST(DeviceLibraryCompile, CrossBlockProtocolsForEveryTypeAndCombiner) {
  const NvrtcResult r = compile(crossBlockSource(), "cross_block.cu");
  EXPECT_EQ(r.log, "");
  for (const AccType& t : kAccTypes)
    for (const char* op : kCombiners) {
      const std::string kernel = std::string("cross_") + t.tag + "_" + op;
      const std::string ptx = kernelPtx(r.ptx, kernel);
      ASSERT_FALSE(ptx.empty()) << kernel;
      const std::vector<std::string> atomics = expectedAtomics(t.tag, op);
      for (const std::string& atomic : atomics)
        EXPECT_TRUE(std::regex_search(ptx, std::regex("(atom|red)\\.global\\." + atomic)))
            << kernel << " should use " << atomic;
      if (atomics[0].rfind("cas", 0) != 0) {
        EXPECT_EQ(ptx.find(".cas."), std::string::npos) << kernel;
      }
      EXPECT_NE(ptx.find("atom.acq_rel.gpu.global.inc.u32"), std::string::npos) << kernel;  // arrive_last
      EXPECT_EQ(ptx.find("membar.gl"), std::string::npos) << kernel;  // no fence beside the acquire-release
      EXPECT_NE(ptx.find("atom.global.exch.b" + std::string(t.tag[1] == '3' ? "32" : "64")), std::string::npos)
          << kernel;  // take_and_reset
      EXPECT_NE(ptx.find("ld.global.cg"), std::string::npos) << kernel;  // partials bypass L1
    }
}

TEST(DeviceLibraryCompile, ConversionsAndVectorLoads) {
  const std::string source = std::string(kPrelude) + R"(
extern "C" __global__ void widen(const __half* h, const __nv_bfloat16* b, const float* f, const double* d,
                                 __half* ho, __nv_bfloat16* bo, float* fo, double* dout) {
  const Vec<__half, 8> hv = load_vec<__half, 8>(h);
  const Vec<__nv_bfloat16, 4> bv = load_vec<__nv_bfloat16, 4>(b);
  const Vec<float, 4> fv = load_vec<float, 4>(f);
  const Vec<double, 2> dv = load_vec<double, 2>(d);
  float acc = 0.0f;
  for (int i = 0; i < 8; ++i) acc += to_float(hv.v[i]);
  for (int i = 0; i < 4; ++i) acc += to_float(bv.v[i]) + to_float(fv.v[i]);
  ho[0] = float_to<__half>(acc);
  bo[0] = float_to<__nv_bfloat16>(acc);
  fo[0] = float_to<float>(acc);
  dout[0] = dv.v[0] + dv.v[1];
}
)";
  const NvrtcResult r = compile(source, "vectors.cu");
  EXPECT_NE(r.ptx.find("ld.global.v4.f32"), std::string::npos);                        // 4 floats
  EXPECT_NE(r.ptx.find("ld.global.v2.f64"), std::string::npos);                        // 2 doubles
  EXPECT_TRUE(std::regex_search(r.ptx, std::regex("ld\\.global\\.v4\\.(u32|b32)")));  // 8 halves
  EXPECT_TRUE(std::regex_search(r.ptx, std::regex("ld\\.global\\.v4\\.(u16|b16)")));  // 4 bfloat16
}

TEST(DeviceLibraryCompile, UnsupportedUsesFailWithTheLibrarysMessage) {
  const std::map<std::string, std::string> cases = {
      {"__global__ void k(__half* p) { atomic_combine(p, __half(), Sum<__half>{}); }",
       "polyred: accumulator type must be int, long long, float or double"},
      {"struct Pair { double a, b; };\n"
       "struct AddPairs { __device__ Pair operator()(Pair x, Pair y) const { return {x.a + y.a, x.b + y.b}; } };\n"
       "__global__ void k(Pair* p) { atomic_combine(p, Pair{}, AddPairs{}); }",
       "polyred: accumulator type must be int, long long, float or double"},
      {"__global__ void k(short* p) { __shared__ short s[4]; p[0] = block_reduce_x<short, Sum<short>, 32, 1>(p[0], {}, s); }",
       "polyred: a block reduction takes int, long long, float, double or a tuple; a non-commutative tuple needs the InOrder policy"},
      // A tuple accumulator declared ordered (non-commutative) with the default policy:
      // the butterflies would combine its lanes out of order.
      {"struct alignas(8) Last { static constexpr bool polyred_tuple = true; static constexpr bool polyred_commutative = false;"
       " float v; int seen; };\n"
       "struct TakeLater { __device__ Last operator()(Last a, Last b) const { return b.seen ? b : a; } };\n"
       "__global__ void k(Last* p) { __shared__ Last s[32]; p[0] = block_reduce_x<Last, TakeLater, 32, 1>(p[0], {}, s); }",
       "polyred: a block reduction takes int, long long, float, double or a tuple; a non-commutative tuple needs the InOrder policy"},
      // Tuples never take atomics (their blocks combine through the partials).
      {"struct alignas(8) Arg { static constexpr bool polyred_tuple = true; static constexpr bool polyred_commutative = true;"
       " float v; int i; };\n"
       "struct Pick { __device__ Arg operator()(Arg a, Arg b) const { return a.v >= b.v ? a : b; } };\n"
       "__global__ void k(Arg* p) { atomic_combine(p, Arg{}, Pick{}); }",
       "polyred: accumulator type must be int, long long, float or double"},
      {"__global__ void k(float* p) { __shared__ float s[64]; p[0] = block_reduce_y<float, Sum<float>, 64, 32>(p[0], {}, s); }",
       "polyred: block shape must have 1..1024 threads"},
      {"__global__ void k(float* p) { atomic_combine(p, 1.0f, Max<double>{}); }",
       "polyred: combiner type differs from the accumulator type"},
      {"__global__ void k(const double* p, double* o) { o[0] = load_vec<double, 4>(p).v[0]; }",
       "polyred: load_vec needs a 4-, 8- or 16-byte vector"},
  };
  for (const auto& [body, message] : cases) {
    try {
      compile(std::string(kPrelude) + body, "unsupported.cu");
      ADD_FAILURE() << "compiled: " << body;
    } catch (const CompileError& e) {
      EXPECT_NE(e.log().find(message), std::string::npos) << body << "\n" << e.log();
    }
  }
}
