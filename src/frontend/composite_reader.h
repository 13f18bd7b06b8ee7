// AKG/MindSpore "composite" JSON frontend: takes the text of one fused sub-graph as
// MindSpore's graph-kernel fusion dumps it (format: tests/data/akg/README.md)
// and gives a verified Graph.
//
// Malformed or inconsistent input throws polyred::Error naming the file, the op (as
// "<name> #<index in op_desc>") and the reason; valid input outside polyred's scope
// (MatMul, Gather, padding, complex numbers, unknown op names) throws
// polyred::UnsupportedError. No other exception escapes, whatever the bytes.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "frontend/composite_names.h"
#include "ir/graph.h"

namespace polyred {

// Parses composite JSON text; `fileLabel` names the source in error messages.
Graph parseComposite(const std::string& jsonText, const std::string& fileLabel);

// Reads and parses a composite file; errors name `path`.
Graph readCompositeFile(const std::string& path);

// The built-in reduction with combiner `c` over an input of dtype `in` whose result
// is stored as `out` (default `in`); c != None. The accumulator follows both
// (ir/reduction.h, accumulatorType).
Reduction builtinReduction(BuiltinCombiner c, DType in, std::optional<DType> out = std::nullopt);

}  // namespace polyred
