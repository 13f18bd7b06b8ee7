// polyred device reduction library: the hand-written building blocks that generated
// kernels call (compiled with them by NVRTC; see src/runtime/nvrtc.h).
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
//     tuple always takes the deterministic protocol below, whose last block combines
//     the partials in block order;
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
//   - cross-block combining inside one launch (atomic or deterministic) that needs no
//     memset: see "Protocol" below;
//   - 16-byte (or narrower) vector loads.
//
// Protocol for a reduction split over several blocks (one launch, no memset ever):
// the runtime owns a workspace per (kernel, stream), filled once at allocation with
// the accumulator slots' identities and zero tickets; every launch leaves it as it
// found it, so repeated launches and CUDA-graph replays just work. The blocks that
// share output slots form a group of `blocks_per_group` blocks with one ticket.
//   Atomic (fast, order of combination varies run to run):
//     1. partial = block_reduce_{x,y,all}(per-thread value)
//     2. one thread per output slot: atomic_combine(&ws_acc[slot], partial, op)
//     3. last = block_arrive_last(&ws_ticket[group], blocks_per_group)
//        (= __syncthreads(); thread (0,0): arrive_last(...), an acquire-release
//           increment; broadcast through shared memory)
//     4. if (last): value = take_and_reset(&ws_acc[slot], identity) by the slot's
//        thread, apply the epilogue, store to the output.
//   Deterministic (bitwise identical run to run):
//     1. partial as above; one thread per slot stores it (plain store) to
//        ws_partials[slot * blocks_per_group + index of the block in its group]
//     2. last = block_arrive_last(&ws_ticket[group], blocks_per_group)
//     3. if (last): value = combine_partials_fixed_order{,_x,_y}(&ws_partials[slot *
//        blocks_per_group], blocks_per_group, identity, op, smem): a fixed tree over
//        partials 0..n-1 (one warp's when blocks_per_group <= 32); epilogue; store.
//        Partials need no reset (always overwritten).
// The tickets reset themselves (arrive_last); the atomic slots are reset by
// take_and_reset. Every thread of the block must reach block_arrive_last and the
// block reductions (they contain __syncthreads()).
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

// Combines each of a thread's V lanes along y -- lane l of thread x is column x * V + l
// -- for all lanes at once: every thread stages its V values (lane-major rows of BX + 1,
// so a warp's writes and reads hit distinct banks), one barrier, then thread c folds
// column c over y in order 0, 1, ..., BY - 1 and leaves the total in row 0, one more
// barrier, and the threads with y == 0 read their lanes' totals back. Two barriers for
// all V lanes, where V calls of block_reduce_y take three each (H100, 2026-11-27,
// docs/results.md session 29). The fold keeps y order, so Order is satisfied either way.
// smem holds smem_y_lanes<BX, BY, V>() elements. All threads of the block must call it.
template <class T, class Op, int BX, int BY, int V, class Order = AnyOrder>
__device__ __forceinline__ void block_reduce_y_lanes(T (&v)[V], Op op, T* smem) {
  POLYRED_CHECK_BLOCK_ACCUMULATOR(T, Order);
  POLYRED_CHECK_BLOCK_SHAPE(BX, BY);
  if constexpr (BY > 1) {
    constexpr int kStride = BX + 1;
    const int t = thread_linear<BX>(), x = t % BX, y = t / BX;
    __syncthreads();  // the previous user of smem is done with it
#pragma unroll
    for (int l = 0; l < V; ++l) smem[(l * BY + y) * kStride + x] = v[l];
    __syncthreads();
    for (int c = t; c < BX * V; c += BX * BY) {
      const int lane = c / BX, column = c % BX;
      T* rows = smem + lane * BY * kStride + column;
      T total = rows[0];
      for (int r = 1; r < BY; ++r) total = op(total, rows[r * kStride]);
      rows[0] = total;
    }
    __syncthreads();
    if (y == 0) {
#pragma unroll
      for (int l = 0; l < V; ++l) v[l] = smem[l * BY * kStride + x];
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
// Cross-block combining (see "Protocol" at the top of this file).

// Combines v into *addr atomically: hardware atomics for built-in combiners where they
// exist, otherwise a compare-and-swap loop on the bit pattern (no early exit, so NaN
// and every other value go through `op`). For And / Or, *addr must hold 0 or 1 (the
// identities do, and every combination keeps it so).
template <class T, class Op>
__device__ __forceinline__ void atomic_combine(T* addr, T v, Op op) {
  if constexpr (is_complex_accumulator_v<T>) {
    static_assert(combiner_kind_v<Op> == CombinerKind::Sum,
                  "polyred: only a complex sum has atomics; a complex product takes the deterministic protocol");
    atomicAdd(&addr->re, v.re);
    atomicAdd(&addr->im, v.im);
    return;
  } else {
  POLYRED_CHECK_ACCUMULATOR(T);
  constexpr CombinerKind kind = combiner_kind_v<Op>;
  if constexpr (kind != CombinerKind::Generic)
    static_assert(is_same_v<typename Op::value_type, T>, "polyred: combiner type differs from the accumulator type");
  if constexpr (kind == CombinerKind::Sum && is_same_v<T, long long>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(addr), to_bits(v));
  } else if constexpr (kind == CombinerKind::Sum) {
    atomicAdd(addr, v);
  } else if constexpr (kind == CombinerKind::Max && !is_float_accumulator_v<T>) {
    atomicMax(addr, v);
  } else if constexpr (kind == CombinerKind::Min && !is_float_accumulator_v<T>) {
    atomicMin(addr, v);
  } else if constexpr (kind == CombinerKind::And || kind == CombinerKind::Or) {
    // 0/1 values (0.0/1.0 for floats): bitwise and/or of the patterns is the logical op.
    const bits_t<T> bits = to_bits(v != T(0) ? T(1) : T(0));
    if constexpr (kind == CombinerKind::And) atomicAnd(reinterpret_cast<bits_t<T>*>(addr), bits);
    else atomicOr(reinterpret_cast<bits_t<T>*>(addr), bits);
  } else {
    bits_t<T>* word = reinterpret_cast<bits_t<T>*>(addr);
    bits_t<T> seen = *reinterpret_cast<volatile bits_t<T>*>(word);
    for (;;) {
      const bits_t<T> prev = atomicCAS(word, seen, to_bits(op(from_bits<T>(seen), v)));
      if (prev == seen) return;
      seen = prev;
    }
  }
  }
}

// Counts one arriving block on *ticket; true for the last of `expected` arrivals, which
// also resets *ticket to 0 (atomicInc wraps). Call from one thread; *ticket must start
// below `expected` (0 does). The increment is an acquire-release atomic at GPU scope:
// its release publishes what the calling thread -- and, through a barrier before it,
// its whole block -- wrote earlier; its acquire, in the last block, orders the reads
// after it behind every earlier arrival's writes. (A __threadfence in every thread
// before a relaxed increment, and again in the last block, did the same: 0.6 us
// slower on var_mean's 832 blocks, docs/results.md session 13.)
__device__ __forceinline__ bool arrive_last(unsigned* ticket, unsigned expected) {
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(ticket), "r"(expected - 1u) : "memory");
  return old == expected - 1u;
}

// Block-wide arrive_last: counts the block once, after all its threads' earlier global
// writes and atomics (the barrier orders them before thread 0's release), and returns
// the same answer in every thread; in the last block the second barrier orders every
// thread's following reads after thread 0's acquire. All threads must call it.
__device__ __forceinline__ bool block_arrive_last(unsigned* ticket, unsigned expected) {
  __shared__ unsigned last_flag;
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0)  // linear thread 0 in both block shapes
    last_flag = arrive_last(ticket, expected) ? 1u : 0u;
  __syncthreads();
  return last_flag != 0u;
}

// Reads the combined value at *addr and puts `identity` back, in one atomic exchange.
template <class T>
__device__ __forceinline__ T take_and_reset(T* addr, T identity) {
  if constexpr (is_complex_accumulator_v<T>) {
    T r = identity;
    r.re = atomicExch(&addr->re, identity.re);
    r.im = atomicExch(&addr->im, identity.im);
    return r;
  } else {
  POLYRED_CHECK_ACCUMULATOR(T);
  return from_bits<T>(atomicExch(reinterpret_cast<bits_t<T>*>(addr), to_bits(identity)));
  }
}

namespace detail {

// *p bypassing L1 (other blocks wrote it): one __ldcg for a scalar, word by word for a
// tuple (a struct whose size is a multiple of 4 bytes).
template <class T>
__device__ __forceinline__ T load_cg(const T* p) {
  if constexpr (is_tuple_accumulator_v<T>) {
    T r;
    const unsigned* in = reinterpret_cast<const unsigned*>(p);
    unsigned* out = reinterpret_cast<unsigned*>(&r);
#pragma unroll
    for (int k = 0; k < static_cast<int>(sizeof(T) / 4); ++k) out[k] = __ldcg(in + k);
    return r;
  } else {
    return __ldcg(p);
  }
}

// Combines partials[i] for i = first, first + stride, ... < n in index order, starting
// from identity; loads bypass L1 (other blocks wrote them).
template <class T, class Op>
__device__ __forceinline__ T fold_strided(const T* partials, int n, int first, int stride, T identity, Op op) {
  T acc = identity;
  for (int i = first; i < n; i += stride) acc = op(acc, load_cg(partials + i));
  return acc;
}

// Combines the contiguous chunk number `part` of `parts` chunks of partials[0..n) in
// index order, starting from identity (InOrder: chunks follow the lanes' order).
template <class T, class Op>
__device__ __forceinline__ T fold_chunk(const T* partials, int n, int part, int parts, T identity, Op op) {
  const int chunk = (n + parts - 1) / parts;
  const int end = min_int(n, (part + 1) * chunk);
  T acc = identity;
  for (int i = part * chunk; i < end; ++i) acc = op(acc, load_cg(partials + i));
  return acc;
}

// The thread's share of partials[0..n) as fold_strided (AnyOrder) or fold_chunk (InOrder).
template <class Order, class T, class Op>
__device__ __forceinline__ T fold_partials(const T* partials, int n, int lane, int lanes, T identity, Op op) {
  if constexpr (Order::ordered) return fold_chunk(partials, n, lane, lanes, identity, op);
  else return fold_strided(partials, n, lane, lanes, identity, op);
}

}  // namespace detail

// The deterministic cross-block combines below take MaxPartials, a compile-time bound
// on n (0: unknown). When the partials fit one warp (MaxPartials <= 32) and the row is
// whole warps, the row's first warp combines them alone -- lane k loads partial k, one
// warp tree -- with no shared memory or barrier: the last block's combine is on the
// critical path of every multi-block kernel (var_mean, session 13).
namespace detail {

template <int MaxPartials, int RowWidth>
inline constexpr bool partials_fit_one_warp = MaxPartials > 0 && MaxPartials <= kWarpSize && RowWidth % kWarpSize == 0;

// partials[0..n) combined by the lanes of one full warp (lane k takes partial k), in a
// fixed tree (in lane order under InOrder); the result is valid in lane 0.
template <class Order, class T, class Op>
__device__ __forceinline__ T combine_partials_in_warp(const T* partials, int n, int lane, T identity, Op op) {
  const T v = lane < n ? load_cg(partials + lane) : identity;
  if constexpr (Order::ordered) return warp_butterfly_in_order<kWarpSize>(v, op, 0xffffffffu, lane);
  else return warp_butterfly<kWarpSize>(v, op, 0xffffffffu);
}

}  // namespace detail

// Deterministic cross-block combine: all threads of the block combine partials[0..n)
// (n <= MaxPartials when that is given) with a fixed assignment and tree; the result
// is valid in thread (0, 0).
template <class T, class Op, int BX, int BY, class Order = AnyOrder, int MaxPartials = 0>
__device__ __forceinline__ T combine_partials_fixed_order(const T* partials, int n, T identity, Op op, T* smem) {
  if constexpr (detail::partials_fit_one_warp<MaxPartials, BX * BY>) {
    const int t = thread_linear<BX>();
    return t < kWarpSize ? detail::combine_partials_in_warp<Order>(partials, n, t, identity, op) : identity;
  } else {
    const T acc = detail::fold_partials<Order>(partials, n, thread_linear<BX>(), BX * BY, identity, op);
    return block_reduce_all<T, Op, BX, BY, Order>(acc, op, smem);
  }
}

// Deterministic cross-block combine per y: each row combines its own partials[0..n)
// (its own pointer; n <= MaxPartials when that is given); the result is valid in x == 0.
template <class T, class Op, int BX, int BY, class Order = AnyOrder, int MaxPartials = 0>
__device__ __forceinline__ T combine_partials_fixed_order_x(const T* partials, int n, T identity, Op op, T* smem) {
  if constexpr (detail::partials_fit_one_warp<MaxPartials, BX>) {
    const int x = thread_x<BX>();
    return x < kWarpSize ? detail::combine_partials_in_warp<Order>(partials, n, x, identity, op) : identity;
  } else {
    const T acc = detail::fold_partials<Order>(partials, n, thread_x<BX>(), BX, identity, op);
    return block_reduce_x<T, Op, BX, BY, Order>(acc, op, smem);
  }
}

// Deterministic cross-block combine per x: each column combines its own partials[0..n)
// (its own pointer); the result is valid in y == 0. A column's threads are not one
// warp, so MaxPartials chooses nothing here (it is accepted for a uniform call).
template <class T, class Op, int BX, int BY, class Order = AnyOrder, int MaxPartials = 0>
__device__ __forceinline__ T combine_partials_fixed_order_y(const T* partials, int n, T identity, Op op, T* smem) {
  const T acc = detail::fold_partials<Order>(partials, n, thread_y<BX>(), BY, identity, op);
  return block_reduce_y<T, Op, BX, BY, Order>(acc, op, smem);
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
