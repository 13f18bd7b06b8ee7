// Split-axis propagation (shard_propagation.h).
#include "shard/shard_propagation.h"

#include <algorithm>

#include "support/error.h"
#include "support/printable.h"

namespace polyred {

ShardLayout propagateShard(const Graph& g, const ResolvedShard& shard) {
  ShardLayout L;
  L.tensorAxis.assign(g.tensors.size(), -1);
  L.level.assign(g.tensors.size(), 0);
  L.communicates.assign(g.nodes.size(), false);
  for (size_t k = 0; k < g.inputs.size(); ++k) L.tensorAxis[static_cast<size_t>(g.inputs[k])] = shard.inputAxis[k];
  auto axisOf = [&](TensorId t) -> int& { return L.tensorAxis[static_cast<size_t>(t)]; };
  auto name = [&](TensorId t) { return quotedName("%" + g.tensor(t).name); };

  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    const Shape& os = g.tensor(node.output).shape;
    const int outRank = static_cast<int>(os.size());
    int level = 0;
    for (TensorId in : node.inputs) level = std::max(level, L.level[static_cast<size_t>(in)]);
    auto fail = [&](const std::string& why) { throw Error(g.sourceFile, node.name, why); };
    auto unsupported = [&](const std::string& why) { throw UnsupportedError(g.sourceFile, node.name, why); };

    if (isElementwise(node.kind)) {
      if (node.kind == OpKind::Assign) unsupported("an in-place output (Assign) cannot be sharded");
      int pos = -1;
      TensorId splitOperand = -1;
      for (TensorId in : node.inputs) {
        int a = axisOf(in);
        if (a < 0) continue;
        int p = outRank - static_cast<int>(g.tensor(in).shape.size()) + a;
        if (pos >= 0 && p != pos)
          fail("operands " + name(splitOperand) + " and " + name(in) + " are split along different axes");
        if (g.tensor(in).shape[static_cast<size_t>(a)] != os[static_cast<size_t>(p)])
          unsupported(name(in) + " is split along an axis that this op broadcasts");
        pos = p;
        splitOperand = in;
      }
      if (pos >= 0) {
        for (TensorId in : node.inputs) {
          if (axisOf(in) >= 0) continue;
          const Shape& s = g.tensor(in).shape;
          int q = pos - (outRank - static_cast<int>(s.size()));
          if (q < 0 || s[static_cast<size_t>(q)] == 1) continue;
          if (g.tensor(in).role == TensorRole::Constant) {
            axisOf(in) = q;  // a uniform value: every rank takes its slice of it
            continue;
          }
          fail(name(in) + " (extent " + std::to_string(s[static_cast<size_t>(q)]) +
               " along the sharded axis) meets the sharded " + name(splitOperand) +
               " here but is not sharded" +
               (g.inputIndex(in) >= 0 ? "; shard it too (--shard=" + printable(g.tensor(in).name) + ":" +
                                            std::to_string(q) + ")"
                                      : ""));
        }
      }
      axisOf(node.output) = pos;
    } else if (node.kind == OpKind::BroadcastTo) {
      TensorId in = node.inputs[0];
      int a = axisOf(in);
      if (a >= 0) {
        int p = outRank - static_cast<int>(g.tensor(in).shape.size()) + a;
        if (g.tensor(in).shape[static_cast<size_t>(a)] != os[static_cast<size_t>(p)])
          unsupported(name(in) + " is broadcast along its sharded axis");
        axisOf(node.output) = p;
      }
    } else if (node.kind == OpKind::Transpose) {
      int a = axisOf(node.inputs[0]);
      if (a >= 0)
        for (int k = 0; k < outRank; ++k)
          if (node.perm[static_cast<size_t>(k)] == a) axisOf(node.output) = k;
    } else if (node.kind == OpKind::Reshape || node.kind == OpKind::Window || node.kind == OpKind::Gather) {
      if (axisOf(node.inputs[0]) >= 0 || (node.kind == OpKind::Gather && axisOf(node.inputs[1]) >= 0))
        unsupported("a " + std::string(opName(node.kind)) + " of " + name(node.inputs[0]) +
                    ", which is split across ranks, is not supported (shard another axis or input)");
    } else if (node.kind == OpKind::Scan) {
      // Along another axis each rank scans its slice on its own; along the sharded axis
      // a rank would need the carry of the ranks before it (an exclusive scan of the
      // ranks' totals: not built).
      const int a = axisOf(node.inputs[0]);
      if (a >= 0 && a == node.axes.at(0))
        unsupported("a scan along the sharded axis of " + name(node.inputs[0]) +
                    " is not supported across ranks (each rank would need the carry of the ranks before it); "
                    "shard another axis");
      axisOf(node.output) = a;
    } else if (node.kind == OpKind::Iota) {
      // Global coordinates, the same on every rank: not split (meeting a split tensor
      // along the axis is then refused by the elementwise rule).
    } else if (node.kind == OpKind::Reduce) {
      int a = axisOf(node.inputs[0]);
      if (a >= 0) {
        if (std::find(node.axes.begin(), node.axes.end(), a) != node.axes.end()) {
          L.communicates[n] = true;
          ++level;
        } else if (node.keepDims) {
          axisOf(node.output) = a;
        } else {
          int below = 0;
          for (int64_t r : node.axes) below += r < a ? 1 : 0;
          axisOf(node.output) = a - below;
        }
      }
    } else {
      unsupported("op " + std::string(opName(node.kind)) + " is not supported across ranks");
    }
    L.level[static_cast<size_t>(node.output)] = level;
    L.rounds = std::max(L.rounds, level);
  }
  return L;
}

}  // namespace polyred
