// polyred device library: block scans, the building block of the scan kernel.
//
// A scan kernel (canon/flatten.h, flattenScan) runs each row -- x-reduce form: BX
// threads along the row, BY rows per block; y-reduce form: BY threads down each of BX
// columns -- in tiles of one element (or one vector of V lanes) per thread, every
// thread of the block in every tile. Per tile, each thread folds its lanes in order,
// `block_scan_exclusive` gives it the fold of everything before it in its row (the
// earlier tiles, carried, and the row's earlier threads of this tile) and advances the
// carry past the tile; the thread then finishes its lanes from there. Lanes outside
// the row contribute the identity, so the combiner must merely be associative: every
// combination keeps thread order (a non-commutative combiner is fine).
//
//   Along x: an inclusive warp scan by __shfl_up_sync over the row's lanes of the warp
//   (rows narrower than a warp are segments of BX lanes), then, for rows of several
//   warps, the warps' totals through shared memory, scanned by shuffles again.
//   Along y: the tile transposed through shared memory, so that a column's threads
//   are consecutive lanes, and scanned by shuffles the same way (H100: a Hillis-Steele
//   scan in shared memory took two barriers per step; docs/results/notes-2026-11-27.md).
//
// Accumulators are scalars (int, long long, float, double) or complex64. A call that uses shared
// memory begins with a barrier (the previous user is done with it); all threads of the
// block call.
#pragma once

#include "polyred_reduce.cuh"

namespace polyred_dev {

// Shared memory one block scan uses, in accumulators: the warps' totals of each row
// (along x); along y the tile, transposed through rows padded to BX + 1 (no bank
// conflicts either way), the columns' totals and, for columns longer than a warp, the
// totals of their warp-long segments. (codegen/shared_memory.cc mirrors this.)
template <int BX, int BY, bool AlongX>
constexpr int scan_smem() {
  return AlongX ? BY * (BX > 32 ? BX / 32 : 1) : BY * (BX + 1) + BX + (BY > 32 ? BX * (BY / 32) : 0);
}

namespace detail {

// Shuffles within segments of `width` lanes (polyred_block_reduce.cuh's shuffle_any: complex64
// word by word).
template <class T>
__device__ __forceinline__ T shuffle_up(T v, unsigned mask, int delta, int width) {
  static_assert(!is_tuple_accumulator_v<T> || is_complex_accumulator_v<T>,
                "polyred: scans take scalar or complex64 accumulators");
  return shuffle_any(v, [&](auto w) { return __shfl_up_sync(mask, w, delta, width); });
}

template <class T>
__device__ __forceinline__ T shuffle(T v, unsigned mask, int lane, int width) {
  static_assert(!is_tuple_accumulator_v<T> || is_complex_accumulator_v<T>,
                "polyred: scans take scalar or complex64 accumulators");
  return shuffle_any(v, [&](auto w) { return __shfl_sync(mask, w, lane, width); });
}

// A value other blocks read (or wrote) while this kernel runs: volatile, part by part
// for complex64.
template <class T>
__device__ __forceinline__ void store_volatile(T* p, T v) {
  if constexpr (is_complex_accumulator_v<T>) {
    reinterpret_cast<volatile float*>(p)[0] = v.re;
    reinterpret_cast<volatile float*>(p)[1] = v.im;
  } else {
    *reinterpret_cast<volatile T*>(p) = v;
  }
}

template <class T>
__device__ __forceinline__ T load_volatile(const T* p) {
  if constexpr (is_complex_accumulator_v<T>) {
    T r;
    r.re = reinterpret_cast<const volatile float*>(p)[0];
    r.im = reinterpret_cast<const volatile float*>(p)[1];
    return r;
  } else {
    return *reinterpret_cast<const volatile T*>(p);
  }
}

// The block's lanes in its warp: all 32, or the first BX * BY of a smaller block.
template <int Threads>
__device__ __forceinline__ constexpr unsigned block_warp_mask() {
  return Threads >= 32 ? 0xffffffffu : (1u << Threads) - 1u;
}

// The inclusive scan of v over the W-lane segments of the warp (W a power of two up
// to 32): lane k of a segment gets v_0 (+) ... (+) v_k, combined in lane order.
template <class T, class Op, int W>
__device__ __forceinline__ T warp_scan_inclusive(T v, Op op, unsigned mask, int lane) {
#pragma unroll
  for (int d = 1; d < W; d *= 2) {
    const T other = shuffle_up(v, mask, d, W);
    if (lane >= d) v = op(other, v);
  }
  return v;
}

// Along x: each row's warps scan their lanes by shuffles, then every warp scans the
// row's warp totals (one per lane) the same way -- no thread loops over them.
template <class T, class Op, int BX, int BY>
__device__ __forceinline__ void block_scan_x(T v, Op op, T identity, T* smem, T& before, T& total) {
  const int t = thread_linear<BX>(), x = t % BX, y = t / BX;
  constexpr int W = BX < 32 ? BX : 32;  // the row's lanes in one warp
  const unsigned mask = block_warp_mask<BX * BY>();
  const int lane = x % W;
  const T inclusive = warp_scan_inclusive<T, Op, W>(v, op, mask, lane);
  const T earlier = shuffle_up(inclusive, mask, 1, W);
  before = lane > 0 ? earlier : identity;
  total = shuffle(inclusive, mask, W - 1, W);
  if constexpr (BX > 32) {
    constexpr int kWarps = BX / 32;  // a row's warps are whole warps of the block
    const int warp = x / 32;
    T* totals = smem + y * kWarps;
    __syncthreads();
    if (lane == 31) totals[warp] = inclusive;
    __syncthreads();
    const T warps = warp_scan_inclusive<T, Op, 32>(lane < kWarps ? totals[lane] : identity, op, 0xffffffffu, lane);
    const T warps_before = shuffle(warps, 0xffffffffu, warp > 0 ? warp - 1 : 0, 32);
    if (warp > 0) before = op(warps_before, before);
    total = shuffle(warps, 0xffffffffu, kWarps - 1, 32);
  }
}

// Along y: the tile goes through shared memory transposed, so that each column's BY
// values lie in consecutive lanes and are scanned by shuffles (segments of 32 lanes
// for columns longer than a warp, then the segments' totals); each thread reads back
// what comes before it and its column's total. Three barriers (four past 32 rows),
// whatever BY.
template <class T, class Op, int BX, int BY>
__device__ __forceinline__ void block_scan_y(T v, Op op, T identity, T* smem, T& before, T& total) {
  constexpr int kStride = BX + 1, W = BY < 32 ? BY : 32, kSegments = BY > 32 ? BY / 32 : 1;
  T* tile = smem;
  T* column_totals = smem + BY * kStride;
  T* segment_totals = column_totals + BX;
  const int t = thread_linear<BX>(), x = t % BX, y = t / BX;
  const int column = t / BY, row = t % BY, lane = row % W, segment = row / W;  // this thread's place transposed
  const unsigned mask = block_warp_mask<BX * BY>();
  __syncthreads();
  tile[y * kStride + x] = v;
  __syncthreads();
  const T mine = tile[row * kStride + column];
  const T inclusive = warp_scan_inclusive<T, Op, W>(mine, op, mask, lane);
  const T earlier = shuffle_up(inclusive, mask, 1, W);
  T exclusive = lane > 0 ? earlier : identity;
  T column_total = shuffle(inclusive, mask, W - 1, W);
  if constexpr (kSegments > 1) {
    if (lane == W - 1) segment_totals[column * kSegments + segment] = inclusive;
    __syncthreads();
    T segments_before = identity;
    for (int s = 0; s < segment; ++s) segments_before = op(segments_before, segment_totals[column * kSegments + s]);
    column_total = segments_before;
    for (int s = segment; s < kSegments; ++s) column_total = op(column_total, segment_totals[column * kSegments + s]);
    exclusive = op(segments_before, exclusive);
  }
  tile[row * kStride + column] = exclusive;
  if (row == BY - 1) column_totals[column] = column_total;
  __syncthreads();
  before = tile[y * kStride + x];
  total = column_totals[x];
}

}  // namespace detail

// Returns carry (+) the values v of the threads before this one in its row (along x)
// or column (along y), in order; `carry` becomes carry (+) all of them. Every thread of
// a row holds the same carry, so every thread's new carry is the same too.
template <class T, class Op, int BX, int BY, bool AlongX>
__device__ __forceinline__ T block_scan_exclusive(T v, Op op, T identity, T& carry, T* smem) {
  POLYRED_CHECK_BLOCK_SHAPE(BX, BY);
  T before, total;
  if constexpr (AlongX) detail::block_scan_x<T, Op, BX, BY>(v, op, identity, smem, before, total);
  else detail::block_scan_y<T, Op, BX, BY>(v, op, identity, smem, before, total);
  const T result = op(carry, before);
  carry = op(carry, total);
  return result;
}

// ---------------------------------------------------------------------------------
// Rows over several blocks (Binding::scanChunk): the blocks of an i-tile take the chunks
// of its rows in the order they arrive (scan_take_chunk), so a block only ever waits
// for blocks that already run; each folds its chunk, finds the carry into it by a
// decoupled look-back (scan_look_back), then scans its chunk from there.
// Workspace (zeros when allocated; every launch leaves the counters and flags as it
// found them): per i-tile a chunk counter and an arrival ticket; per row and chunk a
// flag (0: nothing yet, 1: the chunk's aggregate is published, 2: its inclusive prefix),
// the aggregate and the inclusive prefix (written before their flag, never reset).

// The chunk this block scans: 0, 1, ... in arrival order. All threads call it.
__device__ __forceinline__ int scan_take_chunk(unsigned* counter) {
  __shared__ unsigned chunk;
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) chunk = atomicAdd(counter, 1u);
  __syncthreads();
  return static_cast<int>(chunk);
}

namespace detail {

template <class T>
__device__ __forceinline__ void publish(T* slot, T v, unsigned* flag, unsigned status) {
  store_volatile(slot, v);
  __threadfence();
  atomicExch(flag, status);
}

// The fold of the chunks before `chunk` of one row (flags, aggregates and prefixes
// hold the row's chunks), by one warp of kLanes lanes: publishes this chunk's
// aggregate; reads the flags of the kLanes chunks before it at once (then of the
// kLanes before those, ...) until one of them has its inclusive prefix published
// (chunk 0 publishes its own at once); folds the aggregates after the nearest such
// chunk onto its prefix, left to right; and publishes this chunk's inclusive prefix.
// Every inclusive prefix is thus the same left fold a0 (+) a1 (+) ... of the
// aggregates, whichever chunk the walk stopped at: the result is bitwise repeatable,
// however the blocks' timing goes. All lanes return it.
template <class T, class Op, int kLanes>
__device__ T warp_look_back(T aggregate, Op op, T identity, unsigned* flags, T* aggregates, T* prefixes, int chunk,
                            int lane) {
  constexpr unsigned mask = block_warp_mask<kLanes>();
  if (chunk == 0) {
    if (lane == 0) publish(prefixes, aggregate, flags, 2u);
    return identity;
  }
  if (lane == 0) publish(aggregates + chunk, aggregate, flags + chunk, 1u);
  int end = chunk, found;  // the window of flags read: [end - kLanes, end)
  for (;;) {
    const int k = end - kLanes + lane;
    unsigned status = k < 0 ? 1u : 0u;  // before chunk 0: nothing to wait for, no prefix
    do {
      if (status == 0u) status = *reinterpret_cast<volatile unsigned*>(flags + k);
    } while (__any_sync(mask, status == 0u));
    const unsigned prefixed = __ballot_sync(mask, status == 2u);
    if (prefixed != 0u) {
      found = end - kLanes + (31 - __clz(prefixed));
      break;
    }
    end -= kLanes;
  }
  __syncwarp(mask);
  __threadfence();  // what the flags published, before reading it (every lane reads)
  T before = load_volatile(prefixes + found);
  for (int base = found + 1; base < chunk; base += kLanes) {
    const int m = base + lane, count = chunk - base < kLanes ? chunk - base : kLanes;
    const T a = m < chunk ? load_volatile(aggregates + m) : identity;
    for (int j = 0; j < count; ++j) before = op(before, shuffle(a, mask, j, kLanes));
  }
  if (lane == 0) publish(prefixes + chunk, op(before, aggregate), flags + chunk, 2u);
  return before;
}

}  // namespace detail

// The carry into this block's chunk, in every thread of each row (along x: the rows
// y; along y: the columns x): `partial`, each thread's fold of its elements of the
// chunk, is combined over the row, then a warp per row looks back (warps take rows in
// turn when rows outnumber them). flags, aggregates and prefixes are the i-tile's, row
// r's `gx` chunks at r * gx; `totals` holds a value per row.
template <class T, class Op, int BX, int BY, bool AlongX>
__device__ __forceinline__ T scan_look_back(T partial, Op op, T identity, int chunk, int gx, unsigned* flags,
                                            T* aggregates, T* prefixes, T* smem, T* totals) {
  T aggregate;
  if constexpr (AlongX) aggregate = block_allreduce_x<T, Op, BX, BY>(partial, op, smem, totals);
  else aggregate = block_allreduce_y<T, Op, BX, BY>(partial, op, smem, totals);
  constexpr int kRows = AlongX ? BY : BX, kThreads = BX * BY, kLanes = kThreads < 32 ? kThreads : 32;
  constexpr int kWarps = kThreads / kLanes;
  const int t = thread_linear<BX>(), x = t % BX, y = t / BX;
  const int row = AlongX ? y : x;
  __syncthreads();  // every thread has its aggregate before `totals` is reused
  if ((AlongX ? x : y) == 0) totals[row] = aggregate;
  __syncthreads();
  const int warp = t / kLanes, lane = t % kLanes;
  for (int r = warp; r < kRows; r += kWarps) {
    const T before = detail::warp_look_back<T, Op, kLanes>(totals[r], op, identity, flags + r * gx,
                                                           aggregates + r * gx, prefixes + r * gx, chunk, lane);
    __syncwarp(detail::block_warp_mask<kLanes>());  // every lane has read totals[r]
    if (lane == 0) totals[r] = before;
  }
  __syncthreads();
  return totals[row];
}

// After the look-back: the last block of the i-tile to arrive -- every block has read
// what it needed -- resets the tile's `count` flags and its chunk counter for the next
// launch (the arrival ticket resets itself). All threads call it.
template <int Threads>
__device__ __forceinline__ void scan_arrive(unsigned* ticket, unsigned* counter, unsigned* flags, int count,
                                            unsigned gx) {
  if (!block_arrive_last(ticket, gx)) return;
  const int t = static_cast<int>(threadIdx.y * blockDim.x + threadIdx.x);
  for (int k = t; k < count; k += Threads) flags[k] = 0u;
  if (t == 0) *counter = 0u;
}

}  // namespace polyred_dev
