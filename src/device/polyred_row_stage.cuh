// polyred device library: rows staged in shared memory by the bulk-copy engine (sm_90).
//
// A row-resident kernel (softmax, logsumexp, cross-entropy over rows one block reduces)
// reads its row in every pass. Staged, a block brings its row into shared memory with
// cp.async.bulk copies (the TMA's 1-D form) that one thread issues before the first
// pass; the first pass reads each vector there once its chunk has landed (one mbarrier
// per chunk), the later passes read it there without waiting. The copies need no
// registers and no issue slots, so the row's DRAM traffic runs while the block's
// threads compute -- where the default re-reads its row from the L2 (an issue-bound
// pass per re-read) and the row cache (polyred_row_cache.cuh) keeps what the first
// pass's own loads brought.
//
// Layout: element e of the row is at byte `shift + e * sizeof(S)` of the buffer, where
// shift is the row's global address mod 16, so a 16-byte-aligned global vector is a
// 16-byte-aligned shared one. The 16-byte-aligned middle of the row goes by bulk copies
// of 2^chunkShift bytes (the generator's choice; their sizes and both ends are multiples
// of 16, as the copy requires); the head and tail, under 16 bytes each, are loaded by
// threads.
//
// Protocol, per row (every thread of the block, block-uniform control flow):
//   pr_stage_init        once per kernel: thread 0 initializes the chunks' mbarriers
//   pr_stage_row         barrier (after the first row: the previous row's readers are
//                        done), thread 0 arms
//                        every chunk's barrier and issues its copy, threads load the
//                        head and tail, barrier
//   pr_load*_staged<true>   the first pass: wait for the vector's chunk, read
//   pr_stage_wait_all    after the first pass: this thread has seen every chunk land
//   pr_load*_staged<false>  the later passes (after the first pass's block reduction,
//                        whose barrier orders them after every wait)
// Each row completes one phase of every chunk barrier (chunks without bytes arrive
// with no transaction), so the row's parity alternates 0, 1, 0, ...
#pragma once

#include "polyred_elementwise.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "polyred_row_stage.cuh: bulk copies (cp.async.bulk) need sm_90 or later"
#endif

struct PrRowStage {
  unsigned char* buf;        // the row's buffer in shared memory
  unsigned long long* bars;  // one mbarrier per chunk
  unsigned chunks;           // chunk barriers (a bound for the longest row)
  unsigned chunkShift;       // a chunk is 2^chunkShift bytes
  long long row;             // the global element offset of the row's element 0
  unsigned shift;            // buffer byte of element 0
  unsigned mid;              // buffer byte where the bulk copies start (16-byte aligned)
  unsigned parity;           // the phase the current row's copies complete
  unsigned bias;             // shift - row * sizeof(S), mod 2^32: element k is at byte bias + k * sizeof(S)
  unsigned landedLo;         // bytes [landedLo, landedHi) of the current row have landed, as far as
  unsigned landedHi;         //   this thread has waited (the first pass's chunks it last waited for)
};

__device__ __forceinline__ unsigned pr_smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void pr_mbar_wait(unsigned long long* bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred done;\n pr_wait_%=:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra pr_wait_%=;\n}" ::"r"(pr_smem_addr(bar)),
      "r"(parity)
      : "memory");
}

// Thread 0 initializes the barriers (the other threads first use them after
// pr_stage_row's last barrier); every thread of the block calls it.
__device__ __forceinline__ PrRowStage pr_stage_init(unsigned char* buf, unsigned long long* bars, unsigned chunks,
                                                    unsigned chunkShift) {
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    for (unsigned c = 0; c < chunks; ++c)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(pr_smem_addr(bars + c)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  return PrRowStage{buf, bars, chunks, chunkShift, 0, 0, 0, 1, 0, 0, 0};  // parity 1: the first row flips it to 0
}

// Stages `n` elements from p + row. Every thread of the block calls it (`threads` of
// them, at least 64: threads 0..15 load the head, 32..47 the tail).
template <class S>
__device__ __forceinline__ void pr_stage_row(PrRowStage& st, const S* p, long long row, long long n, int thread) {
  // The previous row's readers are done with the buffer (the first row has none: its
  // copies start as soon as thread 0 gets here).
  if (st.parity == 0) __syncthreads();
  const unsigned long long start = reinterpret_cast<unsigned long long>(p + row);
  const unsigned long long end = start + static_cast<unsigned long long>(n) * sizeof(S);
  const unsigned long long a0 = min(end, (start + 15) & ~15ull), a1 = max(a0, end & ~15ull);
  st.row = row;
  st.shift = static_cast<unsigned>(start % 16);
  st.mid = st.shift + static_cast<unsigned>(a0 - start);
  st.parity ^= 1u;
  st.bias = st.shift - static_cast<unsigned>(row) * static_cast<unsigned>(sizeof(S));
  // Computed here, once a row: without the opaque step the compiler recomputed the bias
  // (and the row's start address it comes from) in every iteration of the pass loops.
  // Volatile asm is the one thing it may not rematerialize.
  asm volatile("" : "+r"(st.bias));
  st.landedLo = st.landedHi = 0;  // nothing of this row has been waited for
  if (thread == 0) {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // after the generic reads of the last row
    for (unsigned c = 0; c < st.chunks; ++c) {
      const unsigned long long b0 = min(a1, a0 + (static_cast<unsigned long long>(c) << st.chunkShift));
      const unsigned long long b1 = min(a1, b0 + (1ull << st.chunkShift));
      const unsigned bytes = static_cast<unsigned>(b1 - b0);
      const unsigned bar = pr_smem_addr(st.bars + c);
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
      if (bytes)
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                pr_smem_addr(st.buf + st.mid + (b0 - a0))),
            "l"(b0), "r"(bytes), "r"(bar)
            : "memory");
    }
  }
  const long long head = static_cast<long long>(a0 - start) / sizeof(S), tail = static_cast<long long>(a1 - start) / sizeof(S);
  S* const row0 = reinterpret_cast<S*>(st.buf + st.shift);
  if (thread < head) row0[thread] = p[row + thread];
  if (thread >= 32 && tail + (thread - 32) < n) row0[tail + thread - 32] = p[row + tail + thread - 32];
  __syncthreads();
}

// The buffer byte of global element k of the staged row: shift + (k - row) * sizeof(S),
// which is below 2^32, so the low 32 bits of k and of the row suffice (one multiply-add;
// the 64-bit form took a dozen instructions a vector).
template <class S>
__device__ __forceinline__ unsigned pr_stage_byte(const PrRowStage& st, long long k) {
  return st.bias + static_cast<unsigned>(k) * static_cast<unsigned>(sizeof(S));
}

// The chunk that holds the byte (the head's bytes count as chunk 0's, the tail's as the
// last's: threads loaded them before pr_stage_row's barrier), and the bytes it covers.
__device__ __forceinline__ unsigned pr_stage_chunk(const PrRowStage& st, unsigned byte) {
  return byte < st.mid ? 0u : min(st.chunks - 1, (byte - st.mid) >> st.chunkShift);
}
__device__ __forceinline__ unsigned pr_stage_chunk_begin(const PrRowStage& st, unsigned c) {
  return c == 0 ? 0u : st.mid + (c << st.chunkShift);
}
__device__ __forceinline__ unsigned pr_stage_chunk_end(const PrRowStage& st, unsigned c) {
  return c + 1 >= st.chunks ? ~0u : st.mid + ((c + 1) << st.chunkShift);
}

// Waits until bytes [b0, b1] have landed. A thread's first pass walks its row forward,
// so most vectors lie in the chunks it waited for last: two compares, no barrier. (The
// chunk's barrier found and waited on for every vector, with the 64-bit byte arithmetic,
// were 55 of the 83 instructions a vector of softmax f16 [4096,50257]'s first pass took;
// now the pass takes 48 with its half-pair maximum. SASS, sm_90, 2026-11-29.)
__device__ __forceinline__ void pr_stage_wait(PrRowStage& st, unsigned b0, unsigned b1) {
  if (b0 >= st.landedLo && b1 < st.landedHi) return;
  const unsigned c0 = pr_stage_chunk(st, b0), c1 = pr_stage_chunk(st, b1);
  pr_mbar_wait(st.bars + c0, st.parity);
  if (c1 != c0) pr_mbar_wait(st.bars + c1, st.parity);
  st.landedLo = pr_stage_chunk_begin(st, c0);
  st.landedHi = pr_stage_chunk_end(st, c1);
}

__device__ __forceinline__ void pr_stage_wait_all(const PrRowStage& st) {
  for (unsigned c = 0; c < st.chunks; ++c) pr_mbar_wait(st.bars + c, st.parity);
}

// pr_load_lanes / pr_load from the staged row (p: the global tensor, for the type).
// A whole vector (16-byte aligned) lies in one chunk; lanes read one by one (a tensor
// off the 16-byte boundary) may straddle two, so their first and last lanes both wait.
template <int V, bool Wait, class S, class C>
__device__ __forceinline__ void pr_load_lanes_staged(PrRowStage& st, const S*, long long k, C (&out)[V],
                                                     bool vector, int lo = 0, int hi = V) {
  if (Wait && hi > lo) pr_stage_wait(st, pr_stage_byte<S>(st, k + lo), pr_stage_byte<S>(st, k + hi - 1));
  if (vector) {
    const PrPack<V, S> pack = *reinterpret_cast<const PrPack<V, S>*>(st.buf + pr_stage_byte<S>(st, k));
#pragma unroll
    for (int l = 0; l < V; ++l) out[l] = pr_value(pack.v[l]);
  } else {  // element by element: only lanes [lo, hi) (a masked vector's lanes in its row)
    const S* row0 = reinterpret_cast<const S*>(st.buf + st.shift);
#pragma unroll
    for (int l = 0; l < V; ++l) out[l] = l >= lo && l < hi ? pr_value(row0[k - st.row + l]) : C();
  }
}

// pr_load_pairs from the staged row.
template <int V, bool Wait>
__device__ __forceinline__ void pr_load_pairs_staged(PrRowStage& st, const __half*, long long k, __half2 (&out)[V / 2],
                                                     bool vector, int lo = 0, int hi = V) {
  if (Wait && hi > lo) pr_stage_wait(st, pr_stage_byte<__half>(st, k + lo), pr_stage_byte<__half>(st, k + hi - 1));
  if (vector) pr_pairs_at<V>(reinterpret_cast<const __half*>(st.buf + pr_stage_byte<__half>(st, k)), true, out);
  else pr_pairs_of_lanes<V>(reinterpret_cast<const __half*>(st.buf + st.shift), k - st.row, out, lo, hi);
}

template <bool Wait, class S>
__device__ __forceinline__ auto pr_load_staged(PrRowStage& st, const S*, long long k) {
  const unsigned byte = pr_stage_byte<S>(st, k);
  if (Wait) pr_stage_wait(st, byte, byte);
  return pr_value(*reinterpret_cast<const S*>(st.buf + byte));
}
