// Sharded lowering: a graph over tensors split across ranks becomes, per rank, local
// graphs that the normal pipeline compiles, plus the combine steps between them.
//
// Takes: a Graph and a ShardSpec. Gives: a ShardedLowering --
//   rounds    one per level of cross-rank reductions (shard_propagation.h). Round k's
//             local graph (one per rank: uneven splits give ranks other shapes)
//             computes the fused local part of every Reduce over the sharded axis of
//             level k+1 and stops at the accumulator: its outputs are the partials, in
//             the reduction's accType (f16/bf16 inputs keep f32 partials; a mean keeps
//             the sum, its count is the graph's constant divisor in the epilogue);
//   combines  per such Reduce, the collective (collective_choice.h) that turns the
//             ranks' partials into the combined accumulator, the same on every rank;
//   final     per rank, the rest of the graph: each combined accumulator enters as an
//             input ("NAME.combined") and is cast back to the Reduce's declared type,
//             then the epilogue (elementwise ops after the reduction). Its outputs are
//             the graph's, each either whole on every rank (outputAxis -1) or the
//             rank's slice along outputAxis (gathered by the caller in rank order).
// A graph whose reductions all keep the sharded axis has no rounds: each rank computes
// its slice of the outputs.
// Each local graph's inputs are bound by LocalInput to a graph input (the rank's slice
// or the whole, replicated tensor) or to a combine's result.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "shard/collective_choice.h"
#include "shard/shard_propagation.h"
#include "shard/shard_spec.h"

namespace polyred {

struct CombineStep {
  TensorId tensor = -1;  // the Reduce node's output in the original graph
  std::string name;      // its name
  Reduction reduction;
  DType outType = DType::Float32;  // the Reduce node's declared type
  Shape shape;                     // of the partials and the result
  CollectiveChoice choice;
  int round = 0;
};

struct LocalInput {
  enum class Kind : uint8_t { GraphInput, Combined };
  Kind kind = Kind::GraphInput;
  int index = 0;  // into the original Graph::inputs, or ShardedLowering::combines
};

struct LocalGraph {
  Graph graph;
  std::vector<LocalInput> inputs;  // graph.inputs[k] is bound to inputs[k]
};

struct ShardRound {
  std::vector<int> combines;        // the local graphs' outputs are these combines' partials
  std::vector<LocalGraph> perRank;  // one per rank
};

struct ShardedLowering {
  ResolvedShard shard;
  ShardLayout layout;
  std::vector<CombineStep> combines;
  std::vector<ShardRound> rounds;
  std::vector<LocalGraph> finalPerRank;  // outputs = the original graph's, in order
  std::vector<int> outputAxis;           // per original output: its split axis, or -1
  std::string toString() const;          // for --dump and the CLI
};

struct ShardLoweringOptions {
  bool deterministic = false;  // every combine gathers and folds in rank order
};

// Throws Error / UnsupportedError (naming the file, op or input) for a sharding the
// graph cannot take.
ShardedLowering lowerSharded(const Graph& g, const ShardSpec& spec, const ShardLoweringOptions& options = {});

}  // namespace polyred
