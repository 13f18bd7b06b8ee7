// Sharded lowering (shard_lowering.h): cuts the graph at the cross-rank reductions
// and builds each rank's local graphs with its local shapes.
#include "shard/shard_lowering.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "support/error.h"
#include "support/printable.h"

namespace polyred {
namespace {

class LocalBuilder {
 public:
  LocalBuilder(const Graph& g, const ShardedLowering& s, int rank, const std::vector<int>& combineOf)
      : g_(g), s_(s), rank_(rank), combineOf_(combineOf) {}

  // targets: original tensors to output; partials: whether the targets are cross-rank
  // Reduce outputs to be output as their partials (a round) or final outputs.
  LocalGraph build(const std::vector<TensorId>& targets, bool partials, const std::string& name) {
    std::vector<bool> needNode(g_.nodes.size(), false), needInput(g_.inputs.size(), false),
        needConstant(g_.tensors.size(), false), needCombined(s_.combines.size(), false);
    std::vector<TensorId> stack;
    auto visit = [&](TensorId t, bool isTarget) {
      const Tensor& tensor = g_.tensor(t);
      int c = combineOf_[static_cast<size_t>(t)];
      if (tensor.role == TensorRole::Input) {
        needInput[static_cast<size_t>(g_.inputIndex(t))] = true;
      } else if (tensor.role == TensorRole::Constant) {
        needConstant[static_cast<size_t>(t)] = true;
      } else if (c >= 0 && !(partials && isTarget)) {
        needCombined[static_cast<size_t>(c)] = true;
      } else if (!needNode[static_cast<size_t>(tensor.producer)]) {
        needNode[static_cast<size_t>(tensor.producer)] = true;
        for (TensorId in : g_.nodes[static_cast<size_t>(tensor.producer)].inputs) stack.push_back(in);
      }
    };
    for (TensorId t : targets) visit(t, true);
    while (!stack.empty()) {
      TensorId t = stack.back();
      stack.pop_back();
      visit(t, false);
    }

    LocalGraph out;
    Graph& lg = out.graph;
    lg.name = name;
    lg.sourceFile = g_.sourceFile;
    std::map<TensorId, TensorId> map;
    auto addTensor = [&](TensorId old, Tensor t) {
      t.producer = -1;
      lg.tensors.push_back(std::move(t));
      TensorId id = static_cast<TensorId>(lg.tensors.size() - 1);
      if (old >= 0) map[old] = id;
      return id;
    };
    for (size_t k = 0; k < g_.inputs.size(); ++k) {
      if (!needInput[k]) continue;
      lg.inputs.push_back(addTensor(g_.inputs[k], localTensor(g_.inputs[k])));
      out.inputs.push_back({LocalInput::Kind::GraphInput, static_cast<int>(k)});
    }
    std::vector<TensorId> combinedInput(s_.combines.size(), -1);
    for (size_t c = 0; c < s_.combines.size(); ++c) {
      if (!needCombined[c]) continue;
      const CombineStep& step = s_.combines[c];
      Tensor t;
      t.name = step.name + ".combined";
      t.shape = step.shape;
      t.dtype = step.reduction.accType;
      t.role = TensorRole::Input;
      combinedInput[c] = addTensor(-1, t);
      lg.inputs.push_back(combinedInput[c]);
      out.inputs.push_back({LocalInput::Kind::Combined, static_cast<int>(c)});
    }
    auto addNode = [&](Node n, TensorId old, Tensor t) {
      t.producer = static_cast<int32_t>(lg.nodes.size());
      lg.tensors.push_back(std::move(t));
      n.output = static_cast<TensorId>(lg.tensors.size() - 1);
      map[old] = n.output;
      lg.nodes.push_back(std::move(n));
    };
    for (size_t t = 0; t < g_.tensors.size(); ++t)
      if (needConstant[t]) addTensor(static_cast<TensorId>(t), localTensor(static_cast<TensorId>(t)));
    // The finalize of each combined accumulator: a cast back to the Reduce's type.
    for (size_t c = 0; c < s_.combines.size(); ++c) {
      if (!needCombined[c]) continue;
      const CombineStep& step = s_.combines[c];
      Node cast;
      cast.kind = OpKind::Cast;
      cast.name = step.name + ".finalize";
      cast.inputs = {combinedInput[c]};
      addNode(cast, step.tensor, localTensor(step.tensor));
    }
    for (size_t n = 0; n < g_.nodes.size(); ++n) {
      if (!needNode[n]) continue;
      const Node& node = g_.nodes[n];
      Node copy = node;
      for (TensorId& in : copy.inputs) in = map.at(in);
      Tensor t = localTensor(node.output);
      if (partials && combineOf_[static_cast<size_t>(node.output)] >= 0) {
        t.name += ".partial";  // stops at the accumulator
        t.dtype = node.reduction->accType;
      }
      addNode(copy, node.output, t);
    }
    for (TensorId t : targets) {
      if (!map.count(t) || lg.tensor(map.at(t)).producer < 0)
        throw UnsupportedError(g_.sourceFile, "",
                               "output " + quotedName("%" + g_.tensor(t).name) +
                                   " is a graph input or constant: nothing to compute across ranks");
      lg.outputs.push_back(Output{map.at(t), std::nullopt});
    }
    lg.verify();
    return out;
  }

 private:
  Tensor localTensor(TensorId t) const {
    Tensor copy = g_.tensor(t);
    int a = s_.layout.tensorAxis[static_cast<size_t>(t)];
    if (a >= 0) copy.shape[static_cast<size_t>(a)] = s_.shard.sizes[static_cast<size_t>(rank_)];
    return copy;
  }

  const Graph& g_;
  const ShardedLowering& s_;
  int rank_;
  const std::vector<int>& combineOf_;
};

}  // namespace

ShardedLowering lowerSharded(const Graph& g, const ShardSpec& spec, const ShardLoweringOptions& options) {
  g.verify();
  for (const Output& o : g.outputs)
    if (o.aliasOfInput) throw UnsupportedError(g.sourceFile, "", "an in-place output cannot be sharded");
  ShardedLowering s;
  s.shard = resolveShard(g, spec);
  s.layout = propagateShard(g, s.shard);
  std::vector<int> combineOf(g.tensors.size(), -1);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (!s.layout.communicates[n]) continue;
    const Node& node = g.nodes[n];
    CombineStep c;
    c.tensor = node.output;
    c.name = g.tensor(node.output).name;
    c.reduction = *node.reduction;
    c.outType = g.tensor(node.output).dtype;
    c.shape = g.tensor(node.output).shape;
    c.choice = chooseCollective(c.reduction, options.deterministic);
    c.round = s.layout.level[static_cast<size_t>(node.output)] - 1;
    combineOf[static_cast<size_t>(node.output)] = static_cast<int>(s.combines.size());
    s.combines.push_back(std::move(c));
  }
  const int ranks = s.shard.ranks;
  s.rounds.resize(static_cast<size_t>(s.layout.rounds));
  for (size_t k = 0; k < s.rounds.size(); ++k) {
    ShardRound& round = s.rounds[k];
    std::vector<TensorId> targets;
    for (size_t c = 0; c < s.combines.size(); ++c)
      if (s.combines[c].round == static_cast<int>(k)) {
        round.combines.push_back(static_cast<int>(c));
        targets.push_back(s.combines[c].tensor);
      }
    for (int r = 0; r < ranks; ++r)
      round.perRank.push_back(LocalBuilder(g, s, r, combineOf)
                                  .build(targets, true, g.name + ".rank" + std::to_string(r) + ".round" +
                                                            std::to_string(k)));
  }
  std::vector<TensorId> outputs;
  for (const Output& o : g.outputs) {
    outputs.push_back(o.tensor);
    s.outputAxis.push_back(s.layout.tensorAxis[static_cast<size_t>(o.tensor)]);
  }
  for (int r = 0; r < ranks; ++r)
    s.finalPerRank.push_back(
        LocalBuilder(g, s, r, combineOf).build(outputs, false, g.name + ".rank" + std::to_string(r) + ".final"));
  return s;
}

std::string ShardedLowering::toString() const {
  std::ostringstream os;
  os << "sharded over " << shard.ranks << " ranks, sizes";
  for (int64_t v : shard.sizes) os << " " << v;
  os << "\n";
  for (size_t k = 0; k < rounds.size(); ++k) {
    os << "round " << k << ": local partials, then\n";
    for (int c : rounds[k].combines) {
      const CombineStep& step = combines[static_cast<size_t>(c)];
      os << "  combine %" << printable(step.name) << " (" << printable(step.reduction.name) << ", "
         << polyred::toString(step.shape) << " in " << dtypeName(step.reduction.accType) << "): "
         << collectiveName(step.choice.collective) << " -- " << printable(step.choice.why) << "\n";
    }
  }
  os << "final: epilogue on every rank; outputs";
  for (size_t o = 0; o < outputAxis.size(); ++o)
    os << (o ? "," : "") << " " << (outputAxis[o] < 0 ? "whole" : "gathered along axis " + std::to_string(outputAxis[o]));
  os << "\n";
  return os.str();
}

}  // namespace polyred
