// Gathers of computed params: each gather moved towards the graph inputs until its
// kernel can load its params.
//
// Takes: a verified Graph. Gives: the same graph, rewritten in rounds until no gather
// can move further:
//   - params computed by elementwise ops (Cast(table), table * scale + bias, a constant
//     fill): the gather is pushed into them,
//         in_range = 0 <= indices < extent            (broadcast over the other axes)
//         value    = f(gathered operands)              (f: the producers' elementwise ops)
//         out      = Select(in_range, value, 0)
//     each operand that varies along the gathered axis gathered itself, one broadcast
//     along it reshaped to broadcast over the index's axes (f(0) need not be 0: the
//     Select keeps Gather's 0 outside). A Reshape on the way (GatherNd merges params'
//     axes by one) first sinks below the elementwise op it reshapes when that op's
//     operands all have its shape: Reshape(f(a, b)) = f(Reshape(a), Reshape(b));
//   - a Transpose or a Window: the gather moves below it (the index mapped through the
//     window's begin, step and wrap-around, -1 outside it);
//   - a gather along the axes the inner gather's index brought in: the indices are
//     gathered instead.
// Why: the kernels address a gathered load in the params' memory (canon/flatten), which
// a computed tensor does not have; computing f at the gathered points costs what loading
// the computed params would, and needs no temporary. What is left -- a reduction's or a
// scan's result, a gather along another axis, a Reshape that does not sink -- the
// partitioner materializes into a temporary the gather loads (canon/flatten,
// temporaryGathered). A gather of a ScatterAdd's or an Assign's result is refused with
// UnsupportedError naming both ops.
#pragma once

#include "ir/graph.h"

namespace polyred {

Graph gathersFromInputs(const Graph& g);

}  // namespace polyred
