// polyred device reduction library: what generated kernels include. The block
// reductions, combiners, accumulator types and tree policies are in
// polyred_block_reduce.cuh; this file combines the blocks of one launch that share
// output slots (compiled with the kernel by NVRTC; see src/runtime/nvrtc.h).
//
// Protocol for a reduction split over several blocks (one launch, no memset ever):
// the runtime owns a workspace per (kernel, stream), filled once at allocation with
// the accumulator slots' identities and zero tickets; every launch leaves it as it
// found it, so repeated launches and CUDA-graph replays just work. The blocks that
// share output slots form a group of `blocks_per_group` blocks with one ticket.
//   Atomic (fast, order of combination varies run to run):
//     1. partial = block_reduce_{x,y,all}(per-thread value)
//     2. one thread per output slot: atomic_combine(&ws_acc[slot], partial, op)
//        (a y-reduce whose threads own several columns does 1 and 2 in one call,
//        block_contribute_y_lanes: each column from a thread of its own)
//     3. last = block_arrive_last(&ws_ticket[group], blocks_per_group)
//        (= __syncthreads(); thread (0,0): arrive_last(...), an acquire-release
//           increment; broadcast through shared memory)
//     4. if (last): value = take_and_reset(&ws_acc[slot], identity) by the slot's
//        thread, apply the epilogue, store to the output.
//   Deterministic (bitwise identical run to run):
//     1. partial as above; one thread per slot stores it (plain store) to
//        ws_partials[slot * blocks_per_group + index of the block in its group] (x-
//        and all-reduces), ws_partials[index of the block * slots + slot] (y-reduces,
//        whose warps own consecutive slots; with lanes, block_store_y_lanes)
//     2. last = block_arrive_last(&ws_ticket[group], blocks_per_group)
//     3. if (last): value = combine_partials_fixed_order{,_x}(&ws_partials[slot *
//        blocks_per_group], blocks_per_group, identity, op, smem) or
//        combine_block_partials_y{,_lanes}(ws_partials, slots, blocks_per_group, slot,
//        ...): a fixed tree over partials 0..n-1 (one warp's when blocks_per_group <=
//        32 and the slot's threads are a warp); epilogue; store.
//        Partials need no reset (always overwritten).
// The tickets reset themselves (arrive_last); the atomic slots are reset by
// take_and_reset. Every thread of the block must reach block_arrive_last and the
// block reductions (they contain __syncthreads()).
#pragma once

#include "polyred_block_reduce.cuh"
#include "polyred_lane_folds.cuh"

namespace polyred_dev {

namespace detail {
template <class T> struct signed_bits_of;
template <> struct signed_bits_of<float> { using type = int; };
template <> struct signed_bits_of<double> { using type = long long; };

// The maximum (kMax) or minimum of float or double v and *addr in one hardware integer
// atomic, as Max / Min define them. The bit patterns of floats of one sign are ordered
// as integers: as signed integers upwards for signs clear, as unsigned ones downwards
// for signs set, and every pattern with the sign clear is a larger signed and a smaller
// unsigned integer than every pattern with it set. So a maximum takes the signed
// atomicMax for v with its sign clear (no negative value in *addr survives it) and the
// unsigned atomicMin for v with it set (no value with the sign clear yields to it);
// a minimum the mirror image. max(-0, +0) = +0 and min(-0, +0) = -0 fall out of the
// same order. NaN must win whatever *addr holds and then stay: a maximum writes it as
// the largest signed pattern (0x7fff...: CUDA's NaN, what max.NaN gives), a minimum as
// the largest unsigned one (0xffff...), both NaNs.
template <bool kMax, class T>
__device__ __forceinline__ void ordered_atomic_extremum(T* addr, T v) {
  using U = bits_t<T>;
  using S = typename signed_bits_of<T>::type;
  constexpr U kSign = U(1) << (8 * sizeof(T) - 1);
  U bits = to_bits(v);
  if (v != v) bits = kMax ? kSign - 1 : ~U(0);
  S* as_signed = reinterpret_cast<S*>(addr);
  U* as_unsigned = reinterpret_cast<U*>(addr);
  if ((bits & kSign) == 0) {
    if constexpr (kMax) atomicMax(as_signed, static_cast<S>(bits));
    else atomicMin(as_signed, static_cast<S>(bits));
  } else {
    if constexpr (kMax) atomicMin(as_unsigned, bits);
    else atomicMax(as_unsigned, bits);
  }
}
}  // namespace detail

// Combines v into *addr atomically: hardware atomics for built-in combiners where they
// exist (integer atomics on the bit patterns for float maxima and minima), otherwise a
// compare-and-swap loop on the bit pattern (no early exit, so NaN and every other value
// go through `op`). For And / Or, *addr must hold 0 or 1 (the identities do, and every
// combination keeps it so).
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
  } else if constexpr (kind == CombinerKind::Max || kind == CombinerKind::Min) {
    detail::ordered_atomic_extremum<kind == CombinerKind::Max>(addr, v);
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
// slower on var_mean's 832 blocks, docs/results/notes-2026-11-26.md.)
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

// A multi-block y-reduce's contribution when its threads own V columns each (lanes):
// the block's lanes are staged as block_reduce_y_lanes stages them, and thread c of the
// block folds column c of the tile over y in order -- lane c % V of thread c / V -- and
// hands its total to sink(c, total), for the tile's columns below `columns` (a last
// tile may be short). So a warp's threads hold consecutive columns: their atomics or
// partial stores cover consecutive addresses, where thread x's V lanes, V apart, put
// each warp-wide atomic over V cache lines (H200, 2026-11-30, docs/results/notes-2026-11-30.md:
// a column sum f32 [8192,1024], 1024 blocks, 19.8 -> 15.6 us; wide_deep's f16
// [16000,1024] column sums 19.9 -> 15.7). The staging's lane stride (y_lane_stride)
// keeps a warp's folds, V lanes of 32 / V threads, on distinct banks. Leaves v as it
// is. All threads of the block must call it.
template <class T, class Op, int BX, int BY, int V, class Order, class Sink>
__device__ __forceinline__ void contribute_y_lanes(const T (&v)[V], Op op, T* smem, long long columns, Sink sink) {
  POLYRED_CHECK_BLOCK_ACCUMULATOR(T, Order);
  POLYRED_CHECK_BLOCK_SHAPE(BX, BY);
  detail::stage_y_lanes<T, BX, BY, V>(v, smem);
  for (int c = thread_linear<BX>(); c < BX * V; c += BX * BY)
    if (c < columns) sink(c, detail::fold_staged_column<T, Op, BX, BY, V>(smem, c % V, c / V, op));
}

// contribute_y_lanes into the tile's atomic slots (`slots`: the tile's first column).
template <class T, class Op, int BX, int BY, int V, class Order = AnyOrder>
__device__ __forceinline__ void block_contribute_y_lanes(const T (&v)[V], Op op, T* smem, T* slots,
                                                         long long columns) {
  contribute_y_lanes<T, Op, BX, BY, V, Order>(v, op, smem, columns,
                                              [&](int c, T total) { atomic_combine(slots + c, total, op); });
}

// contribute_y_lanes as this block's partials (`partials`: its partial of the tile's
// first column; the deterministic protocol).
template <class T, class Op, int BX, int BY, int V, class Order = AnyOrder>
__device__ __forceinline__ void block_store_y_lanes(const T (&v)[V], Op op, T* smem, T* partials, long long columns) {
  contribute_y_lanes<T, Op, BX, BY, V, Order>(v, op, smem, columns, [&](int c, T total) { partials[c] = total; });
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

// How many partials a thread of the last block loads before it folds them. The last
// block's fold is on the critical path of every multi-block kernel: one load at a time
// paid an L2 round trip per partial (ncu, max f16 [21128,768] over its rows, 4 lanes:
// 22 dependent loads a thread while the rest of the GPU idled; docs/results/notes-2026-11-28.md).
// 32 bytes a thread keep eight words in flight without raising the kernel's
// register count, which its main loop's occupancy depends on.
inline constexpr int kFoldBatchBytes = 32;
template <class T>
inline constexpr int fold_batch_v = sizeof(T) >= kFoldBatchBytes ? 1 : static_cast<int>(kFoldBatchBytes / sizeof(T));

// Folds partials[i] for i = begin, begin + step, ... < end into acc in index order;
// loads bypass L1 (other blocks wrote them) and go fold_batch_v<T> at a time.
template <class T, class Op>
__device__ __forceinline__ T fold_range(const T* partials, int begin, int end, int step, T acc, Op op) {
  constexpr int kBatch = fold_batch_v<T>;
  for (int i = begin; i < end; i += kBatch * step) {
    T v[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k)
      if (i + k * step < end) v[k] = load_cg(partials + i + k * step);
#pragma unroll
    for (int k = 0; k < kBatch; ++k)
      if (i + k * step < end) acc = op(acc, v[k]);
  }
  return acc;
}

// Contiguous chunk number `part` of `parts` chunks of [0, n): [begin, end).
struct Chunk {
  int begin, end;
};
__device__ __forceinline__ Chunk chunk_of(int n, int part, int parts) {
  const int size = (n + parts - 1) / parts;
  return {part * size, min_int(n, (part + 1) * size)};
}

// The share of partials[0..n) of thread `lane` of `lanes`, folded from identity in index
// order: under InOrder the lane-th contiguous chunk (chunks follow the lanes' order),
// else every lanes-th partial from the lane-th on.
template <class Order, class T, class Op>
__device__ __forceinline__ T fold_partials(const T* partials, int n, int lane, int lanes, T identity, Op op) {
  if constexpr (Order::ordered) {
    const Chunk c = chunk_of(n, lane, lanes);
    return fold_range(partials, c.begin, c.end, 1, identity, op);
  } else {
    return fold_range(partials, lane, n, lanes, identity, op);
  }
}

}  // namespace detail

// The deterministic cross-block combines below take MaxPartials, a compile-time bound
// on n (0: unknown). When the partials fit one warp (MaxPartials <= 32) and the row is
// whole warps, the row's first warp combines them alone -- lane k loads partial k, one
// warp tree -- with no shared memory or barrier: the last block's combine is on the
// critical path of every multi-block kernel (var_mean, 2026-11-26).
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

// Deterministic cross-block combine of a y-reduce, whose blocks store their partials
// block by block: block b's partial of row r (a column of the tensor) at partials[b *
// stride + r], so that a warp's threads, which own consecutive rows, load consecutive
// partials (stored row by row, a warp's loads of one block's partials lay `n` apart,
// 32 sectors each: max f32 [8192,768] over its rows, H100, docs/results/notes-2026-11-28.md).
// Thread (x, y) folds the y-th contiguous chunk of the blocks in block order for its V
// rows first_row .. first_row + V - 1 (rows from rows_end on combine nothing), then the
// block reduces over y in y order: a fixed tree that keeps block order, so InOrder
// tuples take it too. LanesTogether: the V lanes reduce in one block_reduce_y_lanes
// (smem holds smem_y_lanes<BX, BY, V>()), else one block_reduce_y each. The totals are
// valid in y == 0. All threads of the block must call it.
template <class T, class Op, int BX, int BY, int V, bool LanesTogether, class Order = AnyOrder>
__device__ __forceinline__ void combine_block_partials_y_lanes(const T* partials, long long stride, int n,
                                                               long long first_row, long long rows_end, T identity,
                                                               Op op, T* smem, T (&acc)[V]) {
  const detail::Chunk blocks = detail::chunk_of(n, thread_y<BX>(), BY);
  // Blocks a batch: the thread's V lanes of each, fold_batch_v<T> loads in all -- one
  // block at a time from four lanes up, which keep four loads in flight already (two
  // blocks of four float lanes took a kernel from 32 to 40 registers, 6 blocks of 256
  // an SM instead of 8).
  constexpr int kBatch = V < 4 && detail::fold_batch_v<T> > V ? detail::fold_batch_v<T> / V : 1;
#pragma unroll
  for (int l = 0; l < V; ++l) acc[l] = identity;
  for (int b = blocks.begin; b < blocks.end; b += kBatch) {
    T v[kBatch][V];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const T* at = partials + (b + k) * stride + first_row;
#pragma unroll
      for (int l = 0; l < V; ++l)
        if (b + k < blocks.end && first_row + l < rows_end) v[k][l] = detail::load_cg(at + l);
    }
#pragma unroll
    for (int k = 0; k < kBatch; ++k)
#pragma unroll
      for (int l = 0; l < V; ++l)
        if (b + k < blocks.end && first_row + l < rows_end) acc[l] = op(acc[l], v[k][l]);
  }
  if constexpr (V > 1 && LanesTogether) {
    block_reduce_y_lanes<T, Op, BX, BY, V, Order>(acc, op, smem);
  } else {
#pragma unroll
    for (int l = 0; l < V; ++l) acc[l] = block_reduce_y<T, Op, BX, BY, Order>(acc[l], op, smem);
  }
}

// The same for one row per thread.
template <class T, class Op, int BX, int BY, class Order = AnyOrder>
__device__ __forceinline__ T combine_block_partials_y(const T* partials, long long stride, int n, long long row,
                                                      long long rows_end, T identity, Op op, T* smem) {
  T acc[1];
  combine_block_partials_y_lanes<T, Op, BX, BY, 1, false, Order>(partials, stride, n, row, rows_end, identity, op,
                                                                  smem, acc);
  return acc[0];
}

}  // namespace polyred_dev
