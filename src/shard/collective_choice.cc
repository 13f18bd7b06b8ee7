// Collective choice per reduction (collective_choice.h).
#include "shard/collective_choice.h"

#include "support/error.h"

namespace polyred {

std::string_view collectiveName(Collective c) {
  return c == Collective::AllReduce ? "all-reduce" : "all-gather + rank-order combine";
}

bool ncclHasType(DType t) { return t != DType::Bool && t != DType::UInt16 && !isComplex(t); }

CollectiveChoice chooseCollective(const Reduction& r, bool deterministic) {
  CollectiveChoice c;
  const BuiltinCombiner b = r.builtin();
  if (deterministic) {
    c.why = "deterministic mode: partials gathered and combined in rank order";
    return c;
  }
  if (!ncclHasType(r.accType)) {
    c.why = "NCCL has no data type for the accumulator " + std::string(dtypeName(r.accType));
    return c;
  }
  switch (b) {
    case BuiltinCombiner::Sum:
    case BuiltinCombiner::Prod:
      c.collective = Collective::AllReduce;
      c.op = b;
      c.why = std::string("NCCL ") + (b == BuiltinCombiner::Sum ? "ncclSum" : "ncclProd") + " in " +
              std::string(dtypeName(r.accType));
      return c;
    case BuiltinCombiner::Max:
    case BuiltinCombiner::Min:
      if (isFloat(r.accType)) {
        c.why = "NCCL's float max/min does not propagate NaN (polyred's does): gathered and combined";
        return c;
      }
      c.collective = Collective::AllReduce;
      c.op = b;
      c.why = std::string("NCCL ") + (b == BuiltinCombiner::Max ? "ncclMax" : "ncclMin") + " in " +
              std::string(dtypeName(r.accType));
      return c;
    case BuiltinCombiner::And:
    case BuiltinCombiner::Or:
      c.why = "NCCL has no logical and/or: gathered and combined";
      return c;
    case BuiltinCombiner::None:
      break;
  }
  c.why = "user-defined combiner " + r.name + ": gathered and combined";
  return c;
}

Graph combineGraph(const std::string& name, const Reduction& r, const Shape& shape, int ranks) {
  Graph g;
  g.name = name;
  Tensor in;
  in.name = "partials";
  in.shape = shape;
  in.shape.insert(in.shape.begin(), ranks);
  in.dtype = r.accType;
  in.role = TensorRole::Input;
  g.tensors.push_back(in);
  g.inputs.push_back(0);
  Tensor out;
  out.name = "combined";
  out.shape = shape;
  out.dtype = r.accType;
  out.producer = 0;
  g.tensors.push_back(out);
  Node n;
  n.kind = OpKind::Reduce;
  n.name = "combine_" + r.name;
  n.inputs = {0};
  n.output = 1;
  n.axes = {0};
  n.reduction = r;
  g.nodes.push_back(n);
  g.outputs.push_back(Output{1, std::nullopt});
  g.verify();
  return g;
}

}  // namespace polyred
