// Outputs of a random graph (tests/random_graphs.h) written in place of its inputs.
//
// About a third of the outputs are written into an input of their shape and dtype
// that no other output writes -- an Assign, as optimizer updates do
// (canon/in_place_hazards decides whether the kernels may write it straight there) --
// or, where the graph has no such input, into a new input that nothing reads. Its own
// random stream, so that a seed's graph is otherwise the one it always was.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "frontend/builder.h"
#include "random_draws.h"

namespace polyred::random_graphs {

class InPlaceOutputs {
 public:
  explicit InPlaceOutputs(uint64_t seed) : rng_(seed ^ 0x1d91acef00dULL) {}

  void noteInput(Value in) { inputs_.push_back(in); }
  void noteWritten(Value in) { written_.insert(in.id); }  // an output the generator writes in place itself
  // A Gather's table: polyred refuses outputs written in place of it (other points'
  // writes would race with the gather's reads: ir/graph.cc), so none goes there.
  void noteGatherTable(Value in) { written_.insert(in.id); }

  // b.output(v), or b.outputInto(v, some input); true for the latter.
  bool emit(GraphBuilder& b, Value v) {
    if (!rng_.percent(35)) return b.output(v), false;
    for (Value in : inputs_) {
      const Tensor &x = b.info(in), &y = b.info(v);
      if (in.id == v.id || written_.count(in.id) || x.shape != y.shape || x.dtype != y.dtype) continue;
      written_.insert(in.id);
      return b.outputInto(v, in), true;
    }
    if (!rng_.percent(50)) return b.output(v), false;
    const Value buffer = b.input("buffer" + std::to_string(written_.size()), b.info(v).dtype, b.info(v).shape);
    written_.insert(buffer.id);
    return b.outputInto(v, buffer), true;
  }

 private:
  Rng rng_;
  std::vector<Value> inputs_;
  std::set<TensorId> written_;
};

}  // namespace polyred::random_graphs
