// Where a load of a kernel's body reads: global memory (with poly/cache_hints.h's hint
// on a last use), the row cache (codegen/row_cache.h) or the staged row
// (codegen/row_stage.h).
//
// Takes: the kernel, its row cache and row stage (either may be empty), and the pieces
// of one load the emitter has printed (pointer, offset, destination, lane guards).
// Gives: the device-library call, as C text.
#pragma once

#include <string>

#include "codegen/row_cache.h"
#include "codegen/row_stage.h"
#include "poly/poly_kernel.h"

namespace polyred {

struct RowLoads {
  const PolyKernel& kernel;
  const RowCache& cache;
  const RowStage& stage;

  // A contiguous vector load of V lanes into `dest` by body value `value` in `pass`
  // (statement), ending in ";\n". `vectorOk`: when the lanes load as one access;
  // masked: lanes [lo, hi) of a vector off the row's boundary.
  std::string lanes(int value, int pass, const std::string& pointer, const std::string& offset,
                    const std::string& dest, const std::string& vectorOk, bool masked) const;
  // The same masked load from global memory as pr_load_lanes_flat, whose vector may lie
  // across rows (`inBuffer`: when it lies inside the tensor), or "" where the value comes
  // from the row cache or the staged row.
  std::string flatLanes(int value, int pass, const std::string& pointer, const std::string& offset,
                        const std::string& dest, const std::string& inBuffer) const;
  // The same load of a float16 value into `dest`, `__half2 hv<v>[V/2]`, as half pairs
  // (pr_load_pairs: the lanes as they lie in memory); "" where the value comes from the
  // row cache, which has no pair form.
  std::string pairs(int value, int pass, const std::string& pointer, const std::string& offset,
                    const std::string& dest, const std::string& vectorOk, bool masked) const;
  // A scalar load (an expression).
  std::string scalar(int value, int pass, const std::string& pointer, const std::string& offset) const;

 private:
  std::string vectorCall(const std::string& function, int value, int pass, const std::string& pointer,
                         const std::string& offset, const std::string& dest, const std::string& vectorOk,
                         bool masked) const;
};

}  // namespace polyred
