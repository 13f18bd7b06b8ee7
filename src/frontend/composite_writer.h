// Composite JSON writer: takes a Graph and gives composite JSON text in the form
// MindSpore dumps (one line, keys sorted), which parseComposite reads back to an
// equal graph.
//
// Throws polyred::Error if the graph does not verify, and polyred::UnsupportedError
// for what the format cannot express: a reduction other than the built-in ones with
// their default accumulator.
#pragma once

#include <string>

#include "ir/graph.h"

namespace polyred {

std::string writeComposite(const Graph& g);

}  // namespace polyred
