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
//   warps, the warps' totals through shared memory.
//   Along y: a Hillis-Steele scan over the column's BY threads in shared memory.
//
// Accumulators are scalars (int, long long, float, double). A call that uses shared
// memory begins with a barrier (the previous user is done with it); all threads of the
// block call.
#pragma once

#include "polyred_reduce.cuh"

namespace polyred_dev {

// Shared memory one block scan uses, in accumulators: the warps' totals of each row
// (along x), or the whole tile (along y). (codegen/shared_memory.cc mirrors this.)
template <int BX, int BY, bool AlongX>
constexpr int scan_smem() {
  return AlongX ? BY * (BX > 32 ? BX / 32 : 1) : BX * BY;
}

namespace detail {

template <class T>
__device__ __forceinline__ T shuffle_up(T v, unsigned mask, int delta, int width) {
  static_assert(!is_tuple_accumulator_v<T>, "polyred: scans take scalar accumulators");
  return __shfl_up_sync(mask, v, delta, width);
}

// The block's lanes in its warp: all 32, or the first BX * BY of a smaller block.
template <int Threads>
__device__ __forceinline__ unsigned block_warp_mask() {
  return Threads >= 32 ? 0xffffffffu : (1u << Threads) - 1u;
}

}  // namespace detail

// Returns carry (+) the values v of the threads before this one in its row (along x)
// or column (along y), in order; `carry` becomes carry (+) all of them. Every thread of
// a row holds the same carry, so every thread's new carry is the same too.
template <class T, class Op, int BX, int BY, bool AlongX>
__device__ __forceinline__ T block_scan_exclusive(T v, Op op, T identity, T& carry, T* smem) {
  POLYRED_CHECK_BLOCK_SHAPE(BX, BY);
  const int t = thread_linear<BX>(), x = t % BX, y = t / BX;
  T before, total;
  if constexpr (AlongX) {
    constexpr int W = BX < 32 ? BX : 32;  // the row's lanes in one warp
    const unsigned mask = detail::block_warp_mask<BX * BY>();
    const int lane = x % W;
    T inclusive = v;
#pragma unroll
    for (int d = 1; d < W; d *= 2) {
      const T other = detail::shuffle_up(inclusive, mask, d, W);
      if (lane >= d) inclusive = op(other, inclusive);
    }
    const T earlier = detail::shuffle_up(inclusive, mask, 1, W);
    before = lane > 0 ? earlier : identity;
    total = __shfl_sync(mask, inclusive, W - 1, W);
    if constexpr (BX > 32) {
      constexpr int kWarps = BX / 32;
      const int warp = x / 32;
      T* totals = smem + y * kWarps;
      __syncthreads();
      if (lane == 31) totals[warp] = inclusive;
      __syncthreads();
      T warps_before = identity;
      for (int k = 0; k < warp; ++k) warps_before = op(warps_before, totals[k]);
      total = warps_before;
      for (int k = warp; k < kWarps; ++k) total = op(total, totals[k]);
      before = op(warps_before, before);
    }
  } else {
    __syncthreads();
    smem[t] = v;
    __syncthreads();
    T inclusive = v;
    for (int d = 1; d < BY; d *= 2) {
      const T other = y >= d ? smem[t - d * BX] : identity;
      __syncthreads();
      if (y >= d) inclusive = op(other, inclusive);
      smem[t] = inclusive;
      __syncthreads();
    }
    before = y > 0 ? smem[t - BX] : identity;
    total = smem[(BY - 1) * BX + x];
  }
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
  *reinterpret_cast<volatile T*>(slot) = v;
  __threadfence();
  atomicExch(flag, status);
}

// The fold of the chunks before `chunk` of one row (flags, aggregates and prefixes
// hold the row's chunks): publishes this chunk's aggregate, walks back to the nearest
// chunk whose inclusive prefix is published (chunk 0 publishes its own at once), folds
// the aggregates after it onto it left to right, and publishes this chunk's inclusive
// prefix. Every inclusive prefix is thus the same left fold a0 (+) a1 (+) ... of the
// aggregates, whichever chunk the walk stopped at: the result is bitwise repeatable,
// however the blocks' timing goes. One thread per row.
template <class T, class Op>
__device__ T look_back(T aggregate, Op op, T identity, unsigned* flags, T* aggregates, T* prefixes, int chunk) {
  if (chunk == 0) {
    publish(prefixes, aggregate, flags, 2u);
    return identity;
  }
  publish(aggregates + chunk, aggregate, flags + chunk, 1u);
  int k = chunk - 1;
  for (;; --k) {
    unsigned status;
    while ((status = *reinterpret_cast<volatile unsigned*>(flags + k)) == 0u) {
    }
    if (status == 2u) break;
  }
  __threadfence();
  T before = *reinterpret_cast<volatile T*>(prefixes + k);
  for (int m = k + 1; m < chunk; ++m) before = op(before, *reinterpret_cast<volatile T*>(aggregates + m));
  publish(prefixes + chunk, op(before, aggregate), flags + chunk, 2u);
  return before;
}

}  // namespace detail

// The carry into this block's chunk, in every thread of each row (along x: the rows
// y; along y: the columns x): `partial`, each thread's fold of its elements of the
// chunk, is combined over the row, then the row's head thread looks back. flags,
// aggregates and prefixes are the i-tile's, row r's `gx` chunks at r * gx.
template <class T, class Op, int BX, int BY, bool AlongX>
__device__ __forceinline__ T scan_look_back(T partial, Op op, T identity, int chunk, int gx, unsigned* flags,
                                            T* aggregates, T* prefixes, T* smem, T* totals) {
  T aggregate;
  if constexpr (AlongX) aggregate = block_allreduce_x<T, Op, BX, BY>(partial, op, smem, totals);
  else aggregate = block_allreduce_y<T, Op, BX, BY>(partial, op, smem, totals);
  const int t = thread_linear<BX>(), x = t % BX, y = t / BX;
  const int row = AlongX ? y : x;
  __syncthreads();  // every thread has its aggregate before the heads reuse `totals`
  if ((AlongX ? x : y) == 0)
    totals[row] = detail::look_back(aggregate, op, identity, flags + row * gx, aggregates + row * gx,
                                    prefixes + row * gx, chunk);
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
