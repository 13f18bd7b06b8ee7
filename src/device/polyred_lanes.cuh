// Vector lanes of generated kernels: V consecutive elements of the contiguous axis
// moved as one aligned access (two for an elementwise kernel's loads wider than its
// stores), with the element-by-element path of the same code for pointers that are not
// aligned (poly/vectorize.h decides V and each access's kind); half pairs for f16
// chains (codegen/lane_values.h); the L2 cache hints of loads and stores; the lanes'
// stores. Included at the end of polyred_elementwise.cuh: it builds on the scalar
// loads, stores and conversions there.
#pragma once

// --- vector accesses of elementwise kernels (V consecutive lanes) --------------------
// A kernel checks once whether every pointer it accesses contiguously is aligned to a
// whole vector, or to 16 bytes where the vector is wider; the lanes then move as one
// 4/8/16-byte access (two 16-byte ones for the 32-byte loads of an elementwise kernel
// whose stores are narrower, poly/vectorize.cc), else element by element.
template <int V, class S>
constexpr int pr_vector_alignment() {
  return V * sizeof(S) < 16 ? static_cast<int>(V * sizeof(S)) : 16;
}

template <int V, class S>
struct alignas(pr_vector_alignment<V, S>()) PrPack {
  S v[V];
};

template <int V, class S>
__device__ __forceinline__ bool pr_aligned(const S* p) {
  return reinterpret_cast<unsigned long long>(p) % pr_vector_alignment<V, S>() == 0;
}

__device__ __forceinline__ float pr_value(__half x) { return __half2float(x); }
__device__ __forceinline__ float pr_value(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class S>
__device__ __forceinline__ S pr_value(S x) { return x; }

template <class S, class C>
__device__ __forceinline__ S pr_storage(C x) { return (S)x; }
template <>
__device__ __forceinline__ __half pr_storage<__half, float>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 pr_storage<__nv_bfloat16, float>(float x) { return __float2bfloat16_rn(x); }

// Cache hints (poly/cache_hints.h): a load that is the kernel's last read of its bytes
// carries an L2 cache policy of evict-first (sm_80+: createpolicy, ld.global.nc with
// L2::cache_hint; plain before), and a store of bytes the kernel never reads again goes
// as st.global.cs ("cache streaming"), so that what later passes of a row-resident
// kernel read again stays in the L2 longer. The same bits move either way.
// Measured on the H100 (docs/results/notes-2026-11-25.md): ld.global.cs loads, which leave
// the read-only path, cost cross-entropy 7%; the policy on st.global cost softmax 4%.
__device__ __forceinline__ unsigned long long pr_l2_evict_first_policy() {
  unsigned long long policy = 0;
#if __CUDA_ARCH__ >= 800
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
#endif
  return policy;
}

// (P is a PrPack: aligned to its size, so its bits may be moved as the int vector of
// that size, as the plain vector accesses below move them.)
template <class P>
__device__ __forceinline__ P pr_load_evict_first(const P* p) {
  static_assert(sizeof(P) == 16 || sizeof(P) == 8 || sizeof(P) == 4 || sizeof(P) == 2,
                "a hinted load moves 2, 4, 8 or 16 bytes");
#if __CUDA_ARCH__ >= 800
  const unsigned long long policy = pr_l2_evict_first_policy();
  if constexpr (sizeof(P) == 16) {
    int4 b;
    asm("ld.global.nc.L2::cache_hint.v4.s32 {%0, %1, %2, %3}, [%4], %5;"
        : "=r"(b.x), "=r"(b.y), "=r"(b.z), "=r"(b.w) : "l"(p), "l"(policy));
    return *reinterpret_cast<const P*>(&b);
  } else if constexpr (sizeof(P) == 8) {
    int2 b;
    asm("ld.global.nc.L2::cache_hint.v2.s32 {%0, %1}, [%2], %3;" : "=r"(b.x), "=r"(b.y) : "l"(p), "l"(policy));
    return *reinterpret_cast<const P*>(&b);
  } else if constexpr (sizeof(P) == 4) {
    int b;
    asm("ld.global.nc.L2::cache_hint.s32 %0, [%1], %2;" : "=r"(b) : "l"(p), "l"(policy));
    return *reinterpret_cast<const P*>(&b);
  } else {
    unsigned short b;
    asm("ld.global.nc.L2::cache_hint.b16 %0, [%1], %2;" : "=h"(b) : "l"(p), "l"(policy));
    return *reinterpret_cast<const P*>(&b);
  }
#else
  return *p;
#endif
}

template <class P>
__device__ __forceinline__ void pr_store_streaming(P* p, const P& v) {
  static_assert(sizeof(P) == 16 || sizeof(P) == 8 || sizeof(P) == 4 || sizeof(P) == 2,
                "a hinted store moves 2, 4, 8 or 16 bytes");
  if constexpr (sizeof(P) == 16) __stcs(reinterpret_cast<int4*>(p), *reinterpret_cast<const int4*>(&v));
  else if constexpr (sizeof(P) == 8) __stcs(reinterpret_cast<int2*>(p), *reinterpret_cast<const int2*>(&v));
  else if constexpr (sizeof(P) == 4) __stcs(reinterpret_cast<int*>(p), *reinterpret_cast<const int*>(&v));
  else __stcs(reinterpret_cast<short*>(p), *reinterpret_cast<const short*>(&v));
}

// A load that is the kernel's last read of its bytes as ld.global.cs ("cache
// streaming", evict first from the L1 and the L2, off the read-only path).
template <class P>
__device__ __forceinline__ P pr_load_streaming(const P* p) {
  static_assert(sizeof(P) == 16 || sizeof(P) == 8 || sizeof(P) == 4 || sizeof(P) == 2,
                "a hinted load moves 2, 4, 8 or 16 bytes");
  P v;
  if constexpr (sizeof(P) == 16) *reinterpret_cast<int4*>(&v) = __ldcs(reinterpret_cast<const int4*>(p));
  else if constexpr (sizeof(P) == 8) *reinterpret_cast<int2*>(&v) = __ldcs(reinterpret_cast<const int2*>(p));
  else if constexpr (sizeof(P) == 4) *reinterpret_cast<int*>(&v) = __ldcs(reinterpret_cast<const int*>(p));
  else *reinterpret_cast<short*>(&v) = __ldcs(reinterpret_cast<const short*>(p));
  return v;
}

// How a vector load is hinted (poly/cache_hints.h); element-by-element lanes at a row's
// ends are not.
enum class PrLoadHint { Plain, EvictFirst, Streaming };

// The V elements at p + k (aligned to the vector, or to 16 bytes where it is wider) as
// one access; a 32-byte vector (an elementwise kernel's load wider than its stores) as
// two, the compiler's split of a plain one, or two hinted 16-byte halves.
template <int V, PrLoadHint Hint, class S>
__device__ __forceinline__ PrPack<V, S> pr_load_pack(const S* p, long long k) {
  static_assert(V * sizeof(S) <= 32, "a vector moves as at most two 16-byte accesses");
  if constexpr (Hint != PrLoadHint::Plain && V * sizeof(S) > 16) {
    constexpr int H = V / 2;
    const PrPack<H, S> low = pr_load_pack<H, Hint>(p, k), high = pr_load_pack<H, Hint>(p, k + H);
    PrPack<V, S> pack;
#pragma unroll
    for (int l = 0; l < H; ++l) {
      pack.v[l] = low.v[l];
      pack.v[H + l] = high.v[l];
    }
    return pack;
  } else {
    const PrPack<V, S>* at = reinterpret_cast<const PrPack<V, S>*>(p + k);
    if constexpr (Hint == PrLoadHint::EvictFirst) return pr_load_evict_first(at);
    else if constexpr (Hint == PrLoadHint::Streaming) return pr_load_streaming(at);
    else return *at;
  }
}

template <int V, PrLoadHint Hint = PrLoadHint::Plain, class S, class C>
__device__ __forceinline__ void pr_load_lanes(const S* p, long long k, C (&out)[V], bool vector, int lo = 0, int hi = V) {
  if (vector) {
    const PrPack<V, S> pack = pr_load_pack<V, Hint>(p, k);
#pragma unroll
    for (int l = 0; l < V; ++l) out[l] = pr_value(pack.v[l]);
  } else {  // element by element: only lanes [lo, hi) (a masked vector's lanes in its row)
#pragma unroll
    for (int l = 0; l < V; ++l) out[l] = l >= lo && l < hi ? pr_load(p, k + l) : C();
  }
}

// pr_load_lanes for a masked vector of a row off the vector boundary (codegen/lane_values:
// the kernel's rows do not start on vectors): `vector` when the aligned vector lies inside
// the tensor (pr_in_buffer) -- whole in its row or not; the lanes outside the row hold
// other rows' elements, which every consumer masks by [lo, hi) -- else lanes [lo, hi)
// element by element. Both ways fill the pack and convert it after: nothing inside the
// branch waits for the load, so the next vector's load need not wait either.
template <int V>
__device__ __forceinline__ bool pr_in_buffer(long long k, long long n) {
  return k >= 0 && k <= n - V;
}
template <int V, PrLoadHint Hint = PrLoadHint::Plain, class S, class C>
__device__ __forceinline__ void pr_load_lanes_flat(const S* p, long long k, C (&out)[V], bool vector, int lo, int hi) {
  PrPack<V, S> pack;
  if (vector) {
    pack = pr_load_pack<V, Hint>(p, k);
  } else {
#pragma unroll
    for (int l = 0; l < V; ++l) pack.v[l] = l >= lo && l < hi ? p[k + l] : S();
  }
#pragma unroll
  for (int l = 0; l < V; ++l) out[l] = pr_value(pack.v[l]);
}

// --- Half pairs (codegen/lane_values.h) ---------------------------------------------
// pr_load_pairs: the V lanes of a float16 vector as V/2 __half2, pair j holding lanes 2j
// (low) and 2j + 1 (high) as they lie in memory -- no conversion; lanes outside [lo, hi)
// of an element-by-element load are +0.
// From global memory the vector is loaded as pr_load_lanes loads it (one access, with
// the load's cache hint) and its halves paired by bit operations the compiler folds
// away. From shared memory (a staged row) the access is written in PTX
// (pr_ld_shared_words): built in C++, the compiler split it into V or V/2 loads, which
// made the staged softmax kernels 8-10% slower (H200, 2026-11-29); volatile, so that it
// stays after the chunk waits before it (polyred_row_stage.cuh).
template <int W>
__device__ __forceinline__ void pr_ld_shared_words(const void* p, unsigned (&w)[W]) {
  static_assert(W == 1 || W == 2 || W == 4, "a vector access moves 1, 2 or 4 words");
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
  if constexpr (W == 4)
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "r"(a));
  else if constexpr (W == 2) asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "r"(a));
  else asm volatile("ld.shared.u32 %0, [%1];" : "=r"(w[0]) : "r"(a));
}
// The pairs of the vector at `at` (aligned to its V * 2 bytes), in global memory (with
// the load's cache hint) or in shared memory.
template <int V, PrLoadHint Hint = PrLoadHint::Plain>
__device__ __forceinline__ void pr_pairs_at(const __half* at, bool shared, __half2 (&out)[V / 2]) {
  unsigned w[V / 2];
  if (shared) {
    pr_ld_shared_words<V / 2>(at, w);
  } else {
    const PrPack<V, __half> pack = pr_load_pack<V, Hint>(at, 0);
#pragma unroll
    for (int j = 0; j < V / 2; ++j)
      w[j] = static_cast<unsigned>(__half_as_ushort(pack.v[2 * j])) |
             static_cast<unsigned>(__half_as_ushort(pack.v[2 * j + 1])) << 16;
  }
#pragma unroll
  for (int j = 0; j < V / 2; ++j) out[j] = *reinterpret_cast<const __half2*>(&w[j]);
}
// Element by element: lanes [lo, hi) of the vector at row + k (a tensor off the vector
// boundary, a masked vector at a row's ends), the others +0. (Out of line, returning the
// pairs through the stack, it cost the staged softmax kernels 1-5%, H200.)
template <int V>
__device__ __forceinline__ void pr_pairs_of_lanes(const __half* row, long long k, __half2 (&out)[V / 2], int lo, int hi) {
#pragma unroll
  for (int j = 0; j < V / 2; ++j) {
    const int l = 2 * j;
    out[j] = __halves2half2(l >= lo && l < hi ? row[k + l] : __ushort_as_half(0),
                            l + 1 >= lo && l + 1 < hi ? row[k + l + 1] : __ushort_as_half(0));
  }
}
template <int V, PrLoadHint Hint = PrLoadHint::Plain>
__device__ __forceinline__ void pr_load_pairs(const __half* p, long long k, __half2 (&out)[V / 2], bool vector, int lo = 0,
                                              int hi = V) {
  static_assert(V % 2 == 0, "half pairs need an even vector width");
  if (vector) pr_pairs_at<V, Hint>(p + k, false, out);
  else pr_pairs_of_lanes<V>(p, k, out, lo, hi);
}

// The float lanes of half pairs (exact).
template <int V>
__device__ __forceinline__ void pr_unpair(const __half2 (&pairs)[V / 2], float (&out)[V]) {
#pragma unroll
  for (int j = 0; j < V / 2; ++j) {
    out[2 * j] = __low2float(pairs[j]);
    out[2 * j + 1] = __high2float(pairs[j]);
  }
}

// max (min) of a float accumulator and the V lanes of a float16 vector held as half
// pairs, as folding the lanes one by one with pr_max (pr_min): the maximum of halves is
// one of them, so taking it in half is exact, and max.NaN.f16x2 propagates NaN and
// orders -0 below +0 as pr_max does on sm_90 (measured on the H200, 2026-11-29: every
// pair of +-0, +-1, +-inf and NaN in both orders; EdgeValuesGpu's rows of 64 matched
// bit for bit while global loads also took pairs; NaN payloads are canonical either
// way). V/2 - 1 pair maxima, two conversions and two float maxima, where the lanes one
// by one cost V of each. (Before sm_90 the lanes fold one by one.) With lo and hi, the
// lanes [lo, hi) only (a masked vector's lanes in its row), one by one.
template <bool Max>
struct PrExtremum {  // pr_max or pr_min, of floats and of half pairs
  __device__ __forceinline__ float operator()(float a, float b) const { return Max ? pr_max(a, b) : pr_min(a, b); }
  __device__ __forceinline__ __half2 operator()(__half2 a, __half2 b) const {
    return Max ? __hmax2_nan(a, b) : __hmin2_nan(a, b);
  }
};
template <bool Max, int V>
__device__ __forceinline__ float pr_fold_extremum_pairs(float acc, const __half2 (&pairs)[V / 2]) {
  const PrExtremum<Max> e;
#if __CUDA_ARCH__ >= 900
  __half2 m = pairs[0];
#pragma unroll
  for (int j = 1; j < V / 2; ++j) m = e(m, pairs[j]);
  return e(e(acc, __low2float(m)), __high2float(m));
#else
#pragma unroll
  for (int j = 0; j < V / 2; ++j) acc = e(e(acc, __low2float(pairs[j])), __high2float(pairs[j]));
  return acc;
#endif
}
template <bool Max, int V>
__device__ __forceinline__ float pr_fold_extremum_pairs(float acc, const __half2 (&pairs)[V / 2], int lo, int hi) {
  const PrExtremum<Max> e;
#pragma unroll
  for (int j = 0; j < V / 2; ++j) {
    if (2 * j >= lo && 2 * j < hi) acc = e(acc, __low2float(pairs[j]));
    if (2 * j + 1 >= lo && 2 * j + 1 < hi) acc = e(acc, __high2float(pairs[j]));
  }
  return acc;
}
template <int V, class... LaneRange>
__device__ __forceinline__ float pr_fold_max_pairs(float acc, const __half2 (&pairs)[V / 2], LaneRange... lanes) {
  return pr_fold_extremum_pairs<true, V>(acc, pairs, lanes...);
}
template <int V, class... LaneRange>
__device__ __forceinline__ float pr_fold_min_pairs(float acc, const __half2 (&pairs)[V / 2], LaneRange... lanes) {
  return pr_fold_extremum_pairs<false, V>(acc, pairs, lanes...);
}

// Streaming: the vector store goes as st.global.cs (the cache hint above).
template <int V, bool Streaming = false, class S, class C>
__device__ __forceinline__ void pr_store_lanes(S* p, long long k, const C (&in)[V], bool vector, int lo = 0, int hi = V) {
  if (vector) {
    PrPack<V, S> pack;
#pragma unroll
    for (int l = 0; l < V; ++l) pack.v[l] = pr_storage<S>(in[l]);
    PrPack<V, S>* at = reinterpret_cast<PrPack<V, S>*>(p + k);
    if (Streaming) pr_store_streaming(at, pack);
    else *at = pack;
  } else {  // element by element: only lanes [lo, hi) (a masked vector's lanes in its row)
#pragma unroll
    for (int l = 0; l < V; ++l)
      if (l >= lo && l < hi) pr_store(p, k + l, in[l]);
  }
}

// pr_zero_where_set for the lanes [lo, hi) of a vector loaded from p + k.
template <int V, class S, class C>
__device__ __forceinline__ void pr_zero_where_set_lanes(S* p, long long k, const C (&loaded)[V], int lo = 0, int hi = V) {
#pragma unroll
  for (int l = 0; l < V; ++l)
    if (l >= lo && l < hi) pr_zero_where_set(p, k + l, loaded[l]);
}
