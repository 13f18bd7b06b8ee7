// The sharding description: which graph inputs are split across how many ranks, along
// which axis, and how (even or given sizes).
//
// Takes: text such as "x:0", "x:-1:3,5" (INPUT:AXIS[:SIZES], several joined by ';') or
// InputShard values from the C++/C API, plus the Graph they refer to. Gives: a
// ResolvedShard -- per graph input its split axis (or none) and one size per rank --
// or polyred::Error naming the graph's file, the input and the reason (unknown input,
// axis out of range, sizes not summing to the extent, more ranks than elements, a rank
// with nothing, inputs split with different sizes).
//
// Every rank holds the whole of each input that is not split (replicated).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "interp/host_tensor.h"
#include "ir/graph.h"

namespace polyred {

struct InputShard {
  std::string input;           // a graph input's name
  int64_t axis = 0;            // negative counts from the end
  std::vector<int64_t> sizes;  // one per rank; empty = even split (the first ranks one more)
};

struct ShardSpec {
  int ranks = 1;
  std::vector<InputShard> inputs;
};

// Parses "INPUT:AXIS[:SIZES]" with SIZES a comma list; several specs joined by ';'.
// Throws Error (reason names the text) when malformed.
std::vector<InputShard> parseShardText(const std::string& text);

// The even split of `extent` over `ranks`: extent / ranks each, the first extent % ranks
// ranks one more.
std::vector<int64_t> evenSplit(int64_t extent, int ranks);

struct ResolvedShard {
  int ranks = 1;
  std::vector<int64_t> sizes;    // per rank, along the split axis (the same for every split input)
  std::vector<int64_t> offsets;  // per rank: the first index it holds
  std::vector<int> inputAxis;    // per graph input (g.inputs order): split axis, or -1
  int64_t extent() const;        // the split axis' global extent
};

// Validates `spec` against `g`. Throws Error naming g.sourceFile and the input.
ResolvedShard resolveShard(const Graph& g, const ShardSpec& spec);

// The slice of `t` that rank `r` holds (t itself for an input that is not split).
HostTensor sliceForRank(const HostTensor& t, int axis, int64_t offset, int64_t size);
// The inverse: the ranks' slices joined along `axis`, in rank order.
HostTensor joinRanks(const std::vector<HostTensor>& slices, int axis);

}  // namespace polyred
