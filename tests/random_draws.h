// What random graphs are drawn from (tests/random_graphs.h): the dtypes, the seeded
// draws (support/splitmix64: the same sequence on every platform), the reductions of
// each dtype, and the size profiles of the CPU and the GPU tests.
#pragma once

#include <cstdint>
#include <numeric>
#include <vector>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/reduction.h"
#include "support/splitmix64.h"

namespace polyred::random_graphs {

inline const std::vector<DType> kDTypes = {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64,
                                    DType::Int32,   DType::Int8,    DType::Bool};

// Draws over support/splitmix64 (the same sequence on every platform).
class Rng {
 public:
  explicit Rng(uint64_t seed) : bits_(seed) {}
  uint64_t next() { return bits_.next(); }
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }
  bool percent(int p) { return below(100) < static_cast<size_t>(p); }
  template <class T>
  T pick(const std::vector<T>& xs) { return xs[below(xs.size())]; }

 private:
  SplitMix64 bits_;
};

inline std::vector<BuiltinCombiner> reductionsFor(DType t) {
  if (t == DType::Bool) return {BuiltinCombiner::And, BuiltinCombiner::Or};
  return {BuiltinCombiner::Sum, BuiltinCombiner::Prod, BuiltinCombiner::Max, BuiltinCombiner::Min};
}

// A reduction result type other than the input's, as frameworks declare them: a
// float16 sum stored as float32, a float32 sum stored as float16, an int8 sum as int32.
inline DType resultType(DType in) {
  switch (in) {
    case DType::Float16:
    case DType::BFloat16: return DType::Float32;
    case DType::Float32: return DType::Float16;
    case DType::Float64: return DType::Float32;
    case DType::Int32: return DType::Int64;
    default: return DType::Int32;
  }
}

// Another float type, for a round trip or a differently typed input.
inline DType otherFloat(DType t) {
  switch (t) {
    case DType::Float32: return DType::Float16;
    case DType::Float64: return DType::Float32;
    case DType::Float16: return DType::BFloat16;
    default: return DType::Float16;
  }
}

// The sizes a generator draws: ranks, the dims of every axis, a cap on the elements.
struct SizeProfile {
  std::vector<size_t> ranks;
  std::vector<int64_t> dims;
  int64_t maxElements = 0;
  // Float products over long rows take factors closer to 1, so that they stay finite
  // (off for the CPU sizes, whose graphs stay as they were).
  bool productsScaleWithLength = false;
  // Steps also draw from more ops (moreOpsStep), for the GPU: the CPU sizes' graphs
  // stay as they were.
  bool moreOps = false;
};

// Small shapes: the CPU check of one graph stays fast. Rank 1 is always an all-reduce.
inline SizeProfile cpuSizes() { return {{1, 2, 2, 3, 3, 3, 4, 4}, {1, 2, 3, 5, 7, 31, 32, 33, 64, 100, 127, 129}, 200000}; }

// Shapes for the GPU: ranks up to 6 and dims that make rows longer than a block, many
// blocks per row, vector lanes off their boundary and grids of several waves -- up to
// 2^22 elements, which the reference on the host still checks in about a second.
inline SizeProfile gpuSizes() {
  return {{1, 2, 2, 3, 3, 4, 4, 5, 6},
          {1, 2, 3, 5, 7, 31, 32, 33, 64, 100, 127, 129, 255, 1000, 1025, 4097, 8192, 30001, 65537},
          int64_t{1} << 22,
          true,
          true};
}

// The elements one reduced value combines (all of them for an empty axis list;
// negative axes count from the end).
inline int64_t reducedLength(const Shape& s, const std::vector<int64_t>& axes) {
  if (axes.empty()) return numElements(s);
  int64_t n = 1;
  for (int64_t a : axes) n *= s[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(s.size()) : a)];
  return n;
}

// The permutation that reverses `rank` axes.
inline std::vector<int64_t> reversed(size_t rank) {
  std::vector<int64_t> perm(rank);
  std::iota(perm.rbegin(), perm.rend(), 0);
  return perm;
}

}  // namespace polyred::random_graphs
