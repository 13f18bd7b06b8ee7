// polyred device library: the row cache of row-resident kernels.
//
// A row-resident kernel (softmax, layer norm, logsumexp over rows that one block
// reduces) makes several passes over its row; every pass but the first used to re-read
// the row's inputs from global memory (the L2 while the resident rows fit it). With a
// row cache, the first pass keeps what each thread loaded in shared memory and the
// later passes read it back from there: the row crosses the L2 once.
//
// Every pass of a row-resident kernel visits the same elements in the same order in
// each thread (the generator checks that the passes' loops and offsets are identical),
// so the cache needs no barrier and no row coordinates: the n-th cached load of a
// thread in a pass takes slot n of that thread. A value's region holds
// `slots * threads` packs; slot n of thread t is pack n * threads + t (a warp's packs
// are adjacent: conflict-free 16-byte accesses). A thread with more loads than slots
// (never with the generator's bound, which is checked at run time all the same) reads
// the rest from global memory: the cache can be too small, never wrong.
//
// With `cache=regs` a region is an array of each thread's own instead (a row whose share
// per thread is a few vectors: layer norm over 1024 halves, 4 vectors a thread).
//
// Contents: pr_cache_slot (where slot n of this thread is, or null past the region),
// pr_register_slot (the same in a thread's own array),
// pr_load_lanes_kept / pr_load_kept (pass 0: load, keep the raw storage values, return
// them converted), pr_load_lanes_cached / pr_load_cached (later passes),
// pr_keep_lanes / pr_kept_lanes (a result of an earlier pass, `cache=regs` only).
#pragma once

#include "polyred_elementwise.cuh"

// Slot `n` of thread `t` in a region of `slots` slots per thread, or null if n is past
// them (the load then goes to global memory).
template <class P>
__device__ __forceinline__ P* pr_cache_slot(P* region, int n, int slots, int threads, int t) {
  return n < slots ? region + (long long)n * threads + t : nullptr;
}

// Slot `n` of a thread's own region of N slots (`cache=regs`), or null past them. The
// generator makes n a constant once the pass loops are unrolled, so the array stays in
// registers.
template <int N, class P>
__device__ __forceinline__ P* pr_register_slot(P (&region)[N], int n) {
  return n < N ? region + n : nullptr;
}

template <int V, class S, class C>
__device__ __forceinline__ void pr_load_lanes_kept(const S* p, long long k, C (&out)[V], bool vector, int lo, int hi,
                                                   PrPack<V, S>* slot) {
  PrPack<V, S> pack;
  if (vector) {
    pack = *reinterpret_cast<const PrPack<V, S>*>(p + k);
  } else {  // element by element: lanes outside [lo, hi) keep S() (they are never folded)
#pragma unroll
    for (int l = 0; l < V; ++l) pack.v[l] = l >= lo && l < hi ? p[k + l] : S();
  }
  if (slot) *slot = pack;
#pragma unroll
  for (int l = 0; l < V; ++l) out[l] = pr_value(pack.v[l]);
}

template <int V, class S, class C>
__device__ __forceinline__ void pr_load_lanes_cached(const S* p, long long k, C (&out)[V], bool vector, int lo, int hi,
                                                     const PrPack<V, S>* slot) {
  if (!slot) return pr_load_lanes(p, k, out, vector, lo, hi);
  const PrPack<V, S> pack = *slot;
#pragma unroll
  for (int l = 0; l < V; ++l) out[l] = pr_value(pack.v[l]);
}

template <class S>
__device__ __forceinline__ auto pr_load_kept(const S* p, long long k, S* slot) {
  const S s = p[k];
  if (slot) *slot = s;
  return pr_value(s);
}

template <class S>
__device__ __forceinline__ auto pr_load_cached(const S* p, long long k, const S* slot) {
  return slot ? pr_value(*slot) : pr_value(p[k]);
}

// A result's lanes kept at the value's storage type S (exact: the value is already
// rounded to it) by the first pass computing it, and read back by a later pass instead
// of computing it again (codegen/row_cache.h). Unlike a load, a result cannot be had
// anew from memory, so its slot must exist: the generator sizes the regions for every
// statement of a thread, and a missing slot stops the kernel rather than read garbage.
template <int V, class S, class C>
__device__ __forceinline__ void pr_keep_lanes(const C (&in)[V], PrPack<V, S>* slot) {
  if (!slot) __trap();
  PrPack<V, S> pack;
#pragma unroll
  for (int l = 0; l < V; ++l) pack.v[l] = pr_storage<S>(in[l]);
  *slot = pack;
}

template <int V, class S, class C>
__device__ __forceinline__ void pr_kept_lanes(const PrPack<V, S>* slot, C (&out)[V]) {
  if (!slot) __trap();
  const PrPack<V, S> pack = *slot;
#pragma unroll
  for (int l = 0; l < V; ++l) out[l] = pr_value(pack.v[l]);
}
