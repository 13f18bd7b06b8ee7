// Counter-based normal random numbers: the host definition of PhiloxNormal (ir/ops.h),
// what MindSpore's StandardNormal is read into (frontend/composite_index_ops).
//
// A value is a pure function of (counter, key). Counters come in blocks of 4 (float16,
// bfloat16 and float32 results) or 2 (float64): Philox4x32-10 (Salmon et al., "Parallel
// random numbers: as easy as 1, 2, 3", SC'11) encrypts the block's number (its low and
// high words, then two zero words) under the key (its low and high words), and the
// Box-Muller transform turns each pair of uniforms (u1, u2) into two standard normal
// values, sqrt(-2 ln u1) cos(2 pi u2) and sqrt(-2 ln u1) sin(2 pi u2), as curand's
// normal4 does: counters 4b .. 4b+3 take cos and sin of the words (w0, w1), then of
// (w2, w3); a float64 pair 2b, 2b+1 takes cos and sin of (w0 w1, w2 w3). A thread that
// draws consecutive counters encrypts a block and transforms a pair once (the device
// keeps the last block's words and values). The uniforms are exact in the result's
// float type, so host and device start from the same u1 and u2:
//   float16/bfloat16/float32 results: u = ((w >> 8) | 1) * 2^-24 of one word each (so
//     |z| <= 5.77, the probability of a larger |z| being 8e-9);
//   float64 results: u = (2 m + 1) * 2^-53 with m the top 52 bits of two words each.
// The device library computes the transform in the result's compute type (float32 or
// float64, device/polyred_elementwise.cuh); the host in double, rounded once.
#pragma once

#include <array>
#include <cstdint>

#include "ir/dtype.h"

namespace polyred {

using PhiloxWords = std::array<uint32_t, 4>;

// Ten Philox rounds of `counter` under the key (k0, k1).
PhiloxWords philox4x32_10(PhiloxWords counter, uint32_t k0, uint32_t k1);

// The standard normal value at `counter` under `key` (both read as unsigned 64-bit
// words), not yet rounded to `result` (a float dtype, which picks the uniforms).
double philoxNormal(int64_t counter, int64_t key, DType result);

// The key of MindSpore's StandardNormal(seed, seed2): Philox's two key words are
// low32(seed) ^ high32(seed2) and high32(seed) ^ low32(seed2) -- for seeds below 2^32,
// seed and seed2 themselves.
int64_t philoxKey(int64_t seed, int64_t seed2);

}  // namespace polyred
