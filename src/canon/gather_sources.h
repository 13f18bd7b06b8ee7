// Gathers of computed params: the gather pushed into the elementwise ops that compute
// them, so that every Gather the kernels see reads a graph input.
//
// Takes: a verified Graph. Gives: the same graph, except that each Gather whose params
// are computed (Cast(table), table * scale + bias, a constant fill) is rewritten as
//     in_range = 0 <= indices < extent            (broadcast over the other axes)
//     value    = f(gathered operands)              (f: the producers' elementwise ops)
//     out      = Select(in_range, value, 0)
// where each operand that varies along the gathered axis is itself gathered (down to
// the graph inputs it reads), and one that is broadcast along it is reshaped to
// broadcast over the index's axes. The Select keeps Gather's 0 outside the params
// (f(0) need not be 0). Why: the kernels address a gathered load in the params'
// memory (canon/flatten), which a computed tensor does not have; computing f at the
// gathered points instead costs what loading the computed params would, and needs no
// temporary. A Reshape on the way (GatherNd merges params' axes by one) first sinks
// below the elementwise op it reshapes when that op's operands all have its shape:
// Reshape(f(a, b)) = f(Reshape(a), Reshape(b)). Params computed by anything else (a
// reduction, a scan, a transpose, another Gather, a Reshape of a broadcasting op) are
// refused with UnsupportedError naming the op.
#pragma once

#include "ir/graph.h"

namespace polyred {

Graph gathersFromInputs(const Graph& g);

}  // namespace polyred
