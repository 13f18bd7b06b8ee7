// What a random graph (tests/random_graphs.h) exercises -- its Features -- and how the
// property tests report them: by name (flags, describe) and failing seeds (seedList);
// which seeds they run (seedsFrom).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "frontend/composite_reader.h"  // builtinReduction
#include "ir/graph.h"

namespace polyred::random_graphs {

// What a generated graph exercises, for the coverage test and failure messages.
struct Features {
  DType dtype = DType::Float32;
  BuiltinCombiner reduction = BuiltinCombiner::None;  // None for elementwise-only and tuple graphs
  std::string tuple;  // the tuple reduction of tupleGraph(), e.g. "argmax"
  int maxChain = 0;
  bool broadcast = false, transpose = false, reshape = false, allAxes = false, negativeAxes = false,
       keepDims = false, outType = false, twoReductions = false, epilogue = false, intermediateOutput = false,
       sizeOneDim = false;
  bool inPlace = false;  // an output written in place of an input (Assign)
  bool noise = false;  // StandardNormal added to a value (rarer: not among flags())
};

struct Generated {
  Graph graph;
  Features features;
};

// The boolean features of a graph, by name.
inline std::vector<std::pair<std::string, bool>> flags(const Features& f) {
  return {{"broadcast", f.broadcast},
          {"transpose", f.transpose},
          {"reshape", f.reshape},
          {"all axes", f.allAxes},
          {"negative axes", f.negativeAxes},
          {"keep_dims", f.keepDims},
          {"output dtype", f.outType},
          {"two reductions", f.twoReductions},
          {"epilogue", f.epilogue},
          {"intermediate output", f.intermediateOutput},
          {"size-1 dim", f.sizeOneDim},
          {"in place", f.inPlace}};
}

inline std::string describe(const Features& f) {
  std::string s = std::string(dtypeName(f.dtype)) + " " +
                  (!f.tuple.empty()                       ? f.tuple
                   : f.reduction == BuiltinCombiner::None ? "elementwise"
                                                          : builtinReduction(f.reduction, f.dtype).name);
  s += ", chain <= " + std::to_string(f.maxChain);
  for (const auto& [name, on] : flags(f))
    if (on) s += ", " + name;
  if (f.noise) s += ", noise";
  return s;
}

// " 3 17 42": failing seeds, for a test's message.
inline std::string seedList(const std::vector<uint64_t>& seeds) {
  std::string s;
  for (uint64_t x : seeds) s += " " + std::to_string(x);
  return s;
}

// The seeds a property test runs: 1..defaultCount, or FIRST:COUNT from the environment
// variable `env` -- to look past the seeds CI runs (POLYRED_RANDOM_SEEDS for the CPU
// tests, POLYRED_RANDOM_GPU_SEEDS for the GPU ones). A malformed value is ignored.
struct SeedRange {
  uint64_t first = 1;
  int count = 0;
};
inline SeedRange seedsFrom(const char* env, int defaultCount) {
  SeedRange r{1, defaultCount};
  if (const char* value = std::getenv(env)) {
    unsigned long long first = 0;
    int count = 0;
    if (std::sscanf(value, "%llu:%d", &first, &count) == 2 && count > 0) r = {first, count};
  }
  return r;
}

}  // namespace polyred::random_graphs
