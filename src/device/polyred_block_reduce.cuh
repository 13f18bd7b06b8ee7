// polyred device reduction library, within one block: the building blocks that a
// generated kernel's block reductions call (compiled with it by NVRTC; see
// src/runtime/nvrtc.h). Combining across blocks: polyred_reduce.cuh.
//
// Contents (namespace polyred_dev, all __device__ __forceinline__ templates):
//   - accumulator types: int, long long, float, double only (float16/bfloat16 inputs
//     accumulate in float, bool/int8/uint8 in int; the generator converts with
//     to_float / float_to); anything else is a static_assert, never wrong code;
//     complex64 (pr_complex) is a commutative tuple flagged polyred_complex: Sum and
//     Prod use its + and *, a Sum has atomics (two float atomicAdds);
//   - combiners Sum, Prod, Max, Min (NaN-propagating on floats, like torch.amax), And,
//     Or (logical, 0/1), with combiner_kind<Op> naming them; a user combiner is any
//     functor `T operator()(T, T) const` (associative and commutative);
//   - tuple accumulators (argmax's (value, index), Welford's (count, mean, m2), ...):
//     a generated struct with `static constexpr bool polyred_tuple = true` and
//     `polyred_commutative`, 8-byte aligned, combined by a functor like any combiner;
//     warp shuffles move it word by word (shuffle_xor / shuffle_down). Across blocks a
//     tuple always takes the deterministic protocol (polyred_reduce.cuh), whose last
//     block combines the partials in block order;
//   - tree policies (CUB-style, a trailing template argument of every block
//     reduction): AnyOrder (the default: xor butterflies, which combine lanes out of
//     order, for scalars and commutative tuples) and InOrder (every step joins two
//     adjacent ranges of lanes with the lower range on the left: shuffle-down trees,
//     an operand-swapping butterfly where every lane needs the total, partials through
//     shared memory in warp order). A non-commutative tuple takes InOrder only
//     (static_assert); the generator gives its threads contiguous chunks of j in order;
//   - block reductions along x, along y or over the whole block, for any BX x BY block
//     of 1..1024 threads (index arithmetic in polyred_reduce_layout.cuh), and
//     "allreduce" forms that leave the total in every thread of the row/column;
//   - 16-byte (or narrower) vector loads.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "polyred_elementwise.cuh"  // pr_max / pr_min of floats
#include "polyred_reduce_layout.cuh"

namespace polyred_dev {

// ---------------------------------------------------------------------------------
// Type traits (NVRTC has no <type_traits> without extra headers).

template <class A, class B> inline constexpr bool is_same_v = false;
template <class A> inline constexpr bool is_same_v<A, A> = true;

// The accumulator types every building block accepts.
template <class T>
inline constexpr bool is_accumulator_v = is_same_v<T, int> || is_same_v<T, long long> ||
                                         is_same_v<T, float> || is_same_v<T, double>;
template <class T>
inline constexpr bool is_float_accumulator_v = is_same_v<T, float> || is_same_v<T, double>;

// Tuple accumulators (see the contents above).
template <class T, class = void> struct is_tuple_accumulator { static constexpr bool value = false; };
template <class T> struct is_tuple_accumulator<T, decltype(void(T::polyred_tuple))> {
  static constexpr bool value = T::polyred_tuple;
};
template <class T> inline constexpr bool is_tuple_accumulator_v = is_tuple_accumulator<T>::value;
// complex64 (pr_complex, polyred_elementwise.cuh): a commutative tuple whose sum has
// atomics (two float atomicAdds) and whose Sum / Prod are its + and *.
template <class T, class = void> struct is_complex_accumulator { static constexpr bool value = false; };
template <class T> struct is_complex_accumulator<T, decltype(void(T::polyred_complex))> {
  static constexpr bool value = T::polyred_complex;
};
template <class T> inline constexpr bool is_complex_accumulator_v = is_complex_accumulator<T>::value;
template <class T> constexpr bool commutative_tuple() {
  if constexpr (is_tuple_accumulator_v<T>) return T::polyred_commutative;
  else return false;
}

// Tree policies of the block reductions (see the contents above).
struct AnyOrder {
  static constexpr bool ordered = false;
};
struct InOrder {
  static constexpr bool ordered = true;
};

// What a block reduction accepts: a scalar accumulator or a tuple, a non-commutative
// tuple only with the InOrder policy.
#define POLYRED_CHECK_BLOCK_ACCUMULATOR(T, Order)                                            \
  static_assert(::polyred_dev::is_accumulator_v<T> || ::polyred_dev::commutative_tuple<T>() || \
                    (::polyred_dev::is_tuple_accumulator_v<T> && Order::ordered),                   \
                "polyred: a block reduction takes int, long long, float, double or a tuple; "      \
                "a non-commutative tuple needs the InOrder policy")

#define POLYRED_CHECK_ACCUMULATOR(T)                                                      \
  static_assert(::polyred_dev::is_accumulator_v<T>,                                     \
                "polyred: accumulator type must be int, long long, float or double")
#define POLYRED_CHECK_BLOCK_SHAPE(BX, BY)                                                 \
  static_assert(::polyred_dev::valid_block_shape(BX, BY),                               \
                "polyred: block shape must have 1..1024 threads")

// ---------------------------------------------------------------------------------
// float16 / bfloat16 conversions (inputs widen to float, outputs round to nearest even).

__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(float v) { return v; }

// float_to<__half>(v), float_to<__nv_bfloat16>(v), float_to<float>(v).
template <class T> __device__ T float_to(float v) {
  static_assert(sizeof(T) == 0, "polyred: float_to converts to __half, __nv_bfloat16 or float");
}
template <> __device__ __forceinline__ __half float_to<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 float_to<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <> __device__ __forceinline__ float float_to<float>(float v) { return v; }

// ---------------------------------------------------------------------------------
// Combiners. Integer Sum and Prod wrap (two's complement), like the hardware atomics.

enum class CombinerKind { Generic, Sum, Prod, Max, Min, And, Or };

// The unsigned type of the same width (wrapping arithmetic, atomics on bit patterns).
template <class T> struct bits_of;
template <> struct bits_of<int> { using type = unsigned; };
template <> struct bits_of<float> { using type = unsigned; };
template <> struct bits_of<long long> { using type = unsigned long long; };
template <> struct bits_of<double> { using type = unsigned long long; };
template <class T> using bits_t = typename bits_of<T>::type;

// The value's bit pattern, and back.
__device__ __forceinline__ unsigned to_bits(int v) { return static_cast<unsigned>(v); }
__device__ __forceinline__ unsigned to_bits(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned long long to_bits(long long v) { return static_cast<unsigned long long>(v); }
__device__ __forceinline__ unsigned long long to_bits(double v) {
  return static_cast<unsigned long long>(__double_as_longlong(v));
}
template <class T> __device__ T from_bits(bits_t<T> b);
template <> __device__ __forceinline__ int from_bits<int>(unsigned b) { return static_cast<int>(b); }
template <> __device__ __forceinline__ float from_bits<float>(unsigned b) { return __uint_as_float(b); }
template <> __device__ __forceinline__ long long from_bits<long long>(unsigned long long b) {
  return static_cast<long long>(b);
}
template <> __device__ __forceinline__ double from_bits<double>(unsigned long long b) {
  return __longlong_as_double(static_cast<long long>(b));
}

// a + b (integers wrap).
template <class T> struct Sum {
  using value_type = T;
  __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (is_float_accumulator_v<T> || is_complex_accumulator_v<T>) return a + b;
    else return static_cast<T>(static_cast<bits_t<T>>(a) + static_cast<bits_t<T>>(b));
  }
};
// a * b (integers wrap).
template <class T> struct Prod {
  using value_type = T;
  __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (is_float_accumulator_v<T> || is_complex_accumulator_v<T>) return a * b;
    else return static_cast<T>(static_cast<bits_t<T>>(a) * static_cast<bits_t<T>>(b));
  }
};
// max(a, b); NaN if either is NaN; max(-0, +0) = +0 in either order.
template <class T> struct Max {
  using value_type = T;
  __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (is_same_v<T, float>) {
      return ::pr_max(a, b);  // branch-free (polyred_elementwise.cuh)
    } else {
      if constexpr (is_float_accumulator_v<T>)
        if (a == b) return signbit(a) ? b : a;
      return (a != a || a > b) ? a : b;
    }
  }
};
// min(a, b); NaN if either is NaN; min(-0, +0) = -0 in either order.
template <class T> struct Min {
  using value_type = T;
  __device__ __forceinline__ T operator()(T a, T b) const {
    if constexpr (is_same_v<T, float>) {
      return ::pr_min(a, b);
    } else {
      if constexpr (is_float_accumulator_v<T>)
        if (a == b) return signbit(a) ? a : b;
      return (a != a || a < b) ? a : b;
    }
  }
};
// (a != 0) && (b != 0), as 0 or 1.
template <class T> struct And {
  using value_type = T;
  __device__ __forceinline__ T operator()(T a, T b) const { return (a != T(0) && b != T(0)) ? T(1) : T(0); }
};
// (a != 0) || (b != 0), as 0 or 1.
template <class T> struct Or {
  using value_type = T;
  __device__ __forceinline__ T operator()(T a, T b) const { return (a != T(0) || b != T(0)) ? T(1) : T(0); }
};

// Which built-in combiner Op is (Generic for user functors).
template <class Op> struct combiner_kind { static constexpr CombinerKind value = CombinerKind::Generic; };
template <class T> struct combiner_kind<Sum<T>> { static constexpr CombinerKind value = CombinerKind::Sum; };
template <class T> struct combiner_kind<Prod<T>> { static constexpr CombinerKind value = CombinerKind::Prod; };
template <class T> struct combiner_kind<Max<T>> { static constexpr CombinerKind value = CombinerKind::Max; };
template <class T> struct combiner_kind<Min<T>> { static constexpr CombinerKind value = CombinerKind::Min; };
template <class T> struct combiner_kind<And<T>> { static constexpr CombinerKind value = CombinerKind::And; };
template <class T> struct combiner_kind<Or<T>> { static constexpr CombinerKind value = CombinerKind::Or; };
template <class Op> inline constexpr CombinerKind combiner_kind_v = combiner_kind<Op>::value;

// ---------------------------------------------------------------------------------
// Thread coordinates. A kernel (or a part of a horizontally fused kernel) is written
// for a BX x BY block and launched with blocks of exactly BX * BY threads, shaped
// (BX, BY, 1) or flat (BX * BY, 1, 1): parts of different shapes that share one launch
// all run on flat blocks. Both give the same linear index, from which every function
// here takes x = t % BX and y = t / BX from it.

template <int BX>
__device__ __forceinline__ int thread_linear() { return static_cast<int>(threadIdx.y * BX + threadIdx.x); }
template <int BX>
__device__ __forceinline__ int thread_x() { return thread_linear<BX>() % BX; }
template <int BX>
__device__ __forceinline__ int thread_y() { return thread_linear<BX>() / BX; }

// ---------------------------------------------------------------------------------
// Warp shuffles of any accumulator: the intrinsic for a scalar, word by word for a
// tuple (a trivially copyable struct whose size is a multiple of 4 bytes).

// `shuffle` moves one 32-bit word (any of the __shfl_*_sync intrinsics, bound to its
// lane arguments); a tuple goes word by word.
template <class T, class WordShuffle>
__device__ __forceinline__ T shuffle_any(T v, WordShuffle shuffle) {
  if constexpr (is_tuple_accumulator_v<T>) {
    static_assert(sizeof(T) % 4 == 0, "polyred: a tuple accumulator's size must be a multiple of 4 bytes");
    constexpr int kWords = static_cast<int>(sizeof(T) / 4);
    // Word aliases of the struct, as CUB's ShuffleIndex does (NVRTC has no memcpy).
    T r;
    const unsigned* in = reinterpret_cast<const unsigned*>(&v);
    unsigned* out = reinterpret_cast<unsigned*>(&r);
#pragma unroll
    for (int k = 0; k < kWords; ++k) out[k] = shuffle(in[k]);
    return r;
  } else {
    return shuffle(v);
  }
}

template <class T>
__device__ __forceinline__ T shuffle_xor(T v, unsigned mask, int offset) {
  return shuffle_any(v, [&](auto w) { return __shfl_xor_sync(mask, w, offset); });
}

template <class T>
__device__ __forceinline__ T shuffle_down(T v, unsigned mask, int offset) {
  return shuffle_any(v, [&](auto w) { return __shfl_down_sync(mask, w, offset); });
}

// ---------------------------------------------------------------------------------
// Warp-level trees (the lane arithmetic is in polyred_reduce_layout.cuh).

// Xor butterfly over aligned groups of Width lanes (a power of two <= 32); `mask` names
// the group's lanes. Every lane of the group ends with the group's combination.
template <int Width, class T, class Op>
__device__ __forceinline__ T warp_butterfly(T v, Op op, unsigned mask) {
#pragma unroll
  for (int offset = Width / 2; offset > 0; offset /= 2) v = op(v, shuffle_xor(v, mask, offset));
  return v;
}

// Ordered xor butterfly over aligned groups of Width lanes: offsets 1, 2, 4, ..., so
// every step joins two adjacent aligned ranges, the lane in the upper range putting
// its partner's value on the left. Every lane of the group ends with the group's
// combination in lane order (the allreduce forms need it in every lane).
template <int Width, class T, class Op>
__device__ __forceinline__ T warp_butterfly_in_order(T v, Op op, unsigned mask, int lane) {
#pragma unroll
  for (int offset = 1; offset < Width; offset *= 2) {
    const T other = shuffle_xor(v, mask, offset);
    v = (lane & offset) ? op(other, v) : op(v, other);
  }
  return v;
}

// Shuffle-down tree over the run `s` of consecutive lanes (any start, any length <=
// MaxLen); `mask` names every lane of the warp that calls it. The run's head (rel 0)
// ends with the run's combination; other lanes hold partial values. The lane at rel
// absorbs rel + offset on the right: the tree keeps lane order (InOrder uses it).
template <int MaxLen, class T, class Op>
__device__ __forceinline__ T warp_run_tree(T v, Op op, unsigned mask, Segment s) {
#pragma unroll
  for (int offset = 1; offset < MaxLen; offset *= 2) {
    const T other = shuffle_down(v, mask, offset);
    if (tree_absorbs(s, offset)) v = op(v, other);
  }
  return v;
}

// ---------------------------------------------------------------------------------
// Block-level reductions.

namespace detail {

// Combines each row of W consecutive threads (linear index t, R rows); the result is
// valid in each row's first thread. EntryBarrier: start with __syncthreads() before the
// first shared-memory write, so the previous user of smem is done with it. Order:
// AnyOrder or InOrder; beyond level 1 both keep lane order (segments' partials go to
// smem in warp order and are combined from the first).
template <class T, class Op, int W, int R, bool EntryBarrier, class Order = AnyOrder>
__device__ __forceinline__ T reduce_rows(T v, Op op, T* smem, int t) {
  constexpr RowsLayout L = RowsLayout::make(W, R);
  __builtin_assume(t >= 0 && t < L.threads());
  if constexpr (L.single_butterfly()) {
    const unsigned group = group_lane_mask(W, t % kWarpSize);
    if constexpr (Order::ordered) return warp_butterfly_in_order<W>(v, op, group, t % kWarpSize);
    else return warp_butterfly<W>(v, op, group);
  } else {
    const int warp = t / kWarpSize;
    const unsigned mask = warp_lane_mask(L.threads(), warp);
    if constexpr (L.warp_aligned() && !Order::ordered) v = warp_butterfly<kWarpSize>(v, op, mask);
    else v = warp_run_tree<L.max_run()>(v, op, mask, L.segment(t));
    if constexpr (EntryBarrier) __syncthreads();
    if (L.segment(t).rel == 0) smem[L.partial_slot(t)] = v;
    __syncthreads();
    if constexpr (L.finish_in_warp) {
      if (L.warp_has_row_head(warp)) {
        if (L.loads_partial(t)) v = smem[L.finishing_slot(t)];
        v = warp_run_tree<L.max_segments>(v, op, mask, L.finishing_segment(t));
      }
    } else {
      const int row = L.row_of(t);
      if (t == row * W) {
        const T* partials = smem + row * L.max_segments;
        v = partials[0];
        for (int k = 1; k < L.segments(row); ++k) v = op(v, partials[k]);
      }
    }
    return v;
  }
}

}  // namespace detail

// Combines v along x for each y; the result is valid in the threads with x == 0. All
// threads of the block (BX * BY of them) must call it.
template <class T, class Op, int BX, int BY, class Order = AnyOrder>
__device__ __forceinline__ T block_reduce_x(T v, Op op, T* smem) {
  POLYRED_CHECK_BLOCK_ACCUMULATOR(T, Order);
  POLYRED_CHECK_BLOCK_SHAPE(BX, BY);
  return detail::reduce_rows<T, Op, BX, BY, true, Order>(v, op, smem, thread_linear<BX>());
}

// Combines v along y for each x; the result is valid in the threads with y == 0. All
// threads of the block (BX * BY of them) must call it.
// The staging keeps y order: column c's value of row y lands in thread c * BY + y.
template <class T, class Op, int BX, int BY, class Order = AnyOrder>
__device__ __forceinline__ T block_reduce_y(T v, Op op, T* smem) {
  POLYRED_CHECK_BLOCK_ACCUMULATOR(T, Order);
  POLYRED_CHECK_BLOCK_SHAPE(BX, BY);
  constexpr ColumnsLayout C = ColumnsLayout::make(BX, BY);
  if constexpr (BY == 1) {
    return v;
  } else if constexpr (!C.staged()) {
    return detail::reduce_rows<T, Op, BY, BX, true, Order>(v, op, smem, thread_y<BX>());
  } else {
    const int t = thread_linear<BX>(), x = t % BX, y = t / BX;
    __syncthreads();  // the previous user of smem is done with it
    smem[C.store_slot(x, y)] = v;
    __syncthreads();
    T column = smem[C.gather_slot(t)];
    column = detail::reduce_rows<T, Op, BY, BX, false, Order>(column, op, smem + C.partials_offset(), t);
    if (t % BY == 0) smem[C.gather_slot(t)] = column;
    __syncthreads();
    return smem[C.result_slot(x)];
  }
}

namespace detail {

// block_reduce_y_lanes' staging: lane l of thread (x, y) at smem[l * y_lane_stride + y *
// (BX + 1) + x], between two barriers (the first: the previous user of smem is done with it).
template <class T, int BX, int BY, int V>
__device__ __forceinline__ void stage_y_lanes(const T (&v)[V], T* smem) {
  constexpr int kLaneStride = y_lane_stride(BX, BY, V);
  const int t = thread_linear<BX>(), x = t % BX, y = t / BX;
  __syncthreads();
#pragma unroll
  for (int l = 0; l < V; ++l) smem[l * kLaneStride + y * (BX + 1) + x] = v[l];
  __syncthreads();
}

// Lane `lane` of thread x's column, staged by stage_y_lanes, folded over y in order.
template <class T, class Op, int BX, int BY, int V>
__device__ __forceinline__ T fold_staged_column(const T* smem, int lane, int x, Op op) {
  const T* rows = smem + lane * y_lane_stride(BX, BY, V) + x;
  T total = rows[0];
  for (int r = 1; r < BY; ++r) total = op(total, rows[r * (BX + 1)]);
  return total;
}

}  // namespace detail

// Combines each of a thread's V lanes along y -- lane l of thread x is column x * V + l
// -- for all lanes at once: every thread stages its V values (lane-major rows of BX + 1,
// so a warp's writes and reads hit distinct banks), one barrier, then thread c folds
// column c over y in order 0, 1, ..., BY - 1 and leaves the total in row 0, one more
// barrier, and the threads with y == 0 read their lanes' totals back. Two barriers for
// all V lanes, where V calls of block_reduce_y take three each (H100, 2026-11-27,
// docs/results/notes-2026-11-27.md). The fold keeps y order, so Order is satisfied either way.
// smem holds smem_y_lanes<BX, BY, V>() elements. All threads of the block must call it.
template <class T, class Op, int BX, int BY, int V, class Order = AnyOrder>
__device__ __forceinline__ void block_reduce_y_lanes(T (&v)[V], Op op, T* smem) {
  POLYRED_CHECK_BLOCK_ACCUMULATOR(T, Order);
  POLYRED_CHECK_BLOCK_SHAPE(BX, BY);
  if constexpr (BY > 1) {
    const int t = thread_linear<BX>(), x = t % BX, y = t / BX;
    detail::stage_y_lanes<T, BX, BY, V>(v, smem);
    constexpr int kLaneStride = y_lane_stride(BX, BY, V);
    for (int c = t; c < BX * V; c += BX * BY) {
      const int lane = c / BX, column = c % BX;
      smem[lane * kLaneStride + column] = detail::fold_staged_column<T, Op, BX, BY, V>(smem, lane, column, op);
    }
    __syncthreads();
    if (y == 0) {
#pragma unroll
      for (int l = 0; l < V; ++l) v[l] = smem[l * kLaneStride + x];
    }
  }
}

// Combines v over all threads of the block; the result is valid in thread (0, 0).
// All threads of the block (BX * BY of them) must call it.
template <class T, class Op, int BX, int BY, class Order = AnyOrder>
__device__ __forceinline__ T block_reduce_all(T v, Op op, T* smem) {
  POLYRED_CHECK_BLOCK_ACCUMULATOR(T, Order);
  POLYRED_CHECK_BLOCK_SHAPE(BX, BY);
  return detail::reduce_rows<T, Op, BX * BY, 1, true, Order>(v, op, smem, thread_linear<BX>());
}

// Row-resident kernels: like block_reduce_x / block_reduce_y, but every thread of the
// row (column) gets the total, for a later pass over the row to read. `totals` holds
// BY (BX) values and belongs to this call site alone. A row of at most a warp reduces
// by xor butterfly, which already leaves the total in every lane; otherwise the head
// thread publishes it. Reuse of `totals` by a later tile is ordered by the barriers of
// the block reductions in between. All threads of the block must call these.
template <class T, class Op, int BX, int BY, class Order = AnyOrder>
__device__ __forceinline__ T block_allreduce_x(T v, Op op, T* smem, T* totals) {
  if constexpr (RowsLayout::make(BX, BY).single_butterfly()) {
    return block_reduce_x<T, Op, BX, BY, Order>(v, op, smem);
  } else {
    v = block_reduce_x<T, Op, BX, BY, Order>(v, op, smem);
    if (thread_x<BX>() == 0) totals[thread_y<BX>()] = v;
    __syncthreads();
    return totals[thread_y<BX>()];
  }
}

template <class T, class Op, int BX, int BY, class Order = AnyOrder>
__device__ __forceinline__ T block_allreduce_y(T v, Op op, T* smem, T* totals) {
  v = block_reduce_y<T, Op, BX, BY, Order>(v, op, smem);
  if (thread_y<BX>() == 0) totals[thread_x<BX>()] = v;
  __syncthreads();
  return totals[thread_x<BX>()];
}


// ---------------------------------------------------------------------------------
// Vector loads, for addresses the generator proved aligned to sizeof(T) * N bytes.

// N values of type T, aligned as one 4-, 8- or 16-byte access.
template <class T, int N> struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

// Loads p[0..N) with one access (p aligned to sizeof(T) * N).
template <class T, int N>
__device__ __forceinline__ Vec<T, N> load_vec(const T* p) {
  static_assert(sizeof(T) * N == 4 || sizeof(T) * N == 8 || sizeof(T) * N == 16,
                "polyred: load_vec needs a 4-, 8- or 16-byte vector");
  return *reinterpret_cast<const Vec<T, N>*>(p);
}


}  // namespace polyred_dev
