// Split-axis propagation: where the sharded axis goes through the graph.
//
// Takes: a Graph and a ResolvedShard (shard_spec.h). Gives: a ShardLayout -- for every
// tensor the axis along which each rank holds a slice of it (-1: every rank holds the
// whole tensor, or it does not vary along the sharded axis), which Reduce nodes reduce
// over the sharded axis (their partials must be combined across ranks) and each
// tensor's level (how many such combines lie on its longest path from the inputs).
//
// Rules: elementwise ops broadcast numpy-style, so the axis is matched right-aligned;
// every operand that is not split must have extent 1 along it (a Constant is split
// freely: its value is uniform). Transpose permutes the axis; a Reduce that keeps it
// renumbers it, one that reduces it communicates; a Scan along another axis keeps
// it, one along it is out of scope (UnsupportedError). A Reshape or Window of a split
// tensor is out of scope (UnsupportedError); a tensor that is not split but meets a
// split one along the axis is an Error naming both (shard it too).
#pragma once

#include <vector>

#include "ir/graph.h"
#include "shard/shard_spec.h"

namespace polyred {

struct ShardLayout {
  std::vector<int> tensorAxis;      // per TensorId
  std::vector<bool> communicates;   // per node: a Reduce over the sharded axis
  std::vector<int> level;           // per TensorId
  int rounds = 0;                   // the largest level: rounds of partial combines
};

ShardLayout propagateShard(const Graph& g, const ResolvedShard& shard);

}  // namespace polyred
