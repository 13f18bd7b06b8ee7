// Composite JSON writer: takes a Graph and gives composite JSON text in the form
// MindSpore dumps (one line, keys sorted), which parseComposite reads back to an
// equal graph.
//
// Tuple reductions (Argmax & co., Welford, logsumexp, user declarations) are written as
// TupleReduce ops with their declarations under "tuple_reductions", and scalar
// reductions other than the built-in ops with their default accumulator as UserReduce
// ops with theirs under "reductions" (polyred's own extensions); reading back gives a
// graph that computes the same outputs.
// Throws polyred::Error if the graph does not verify, and polyred::UnsupportedError
// for what the format cannot express: a scalar reduction accumulating in a type a
// declaration cannot name, an expression op without a composite name, a complex
// constant with an imaginary part.
#pragma once

#include <string>

#include "ir/graph.h"

namespace polyred {

std::string writeComposite(const Graph& g);

}  // namespace polyred
