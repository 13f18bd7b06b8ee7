// Symbolic dimensions: sizes named by a symbol and fixed only when a kernel runs.
//
// A graph with symbols (Graph::symbols) is a template. Every tensor's `shape` holds each
// symbolic dimension at its symbol's probe value (a large prime, symbolProbe), and
// Tensor::symbolic says which dimensions are `coefficient * symbol`. The frontends mark
// the inputs' symbolic dimensions; inferSymbolicDims derives every other tensor's from
// the shape rules and refuses (polyred::Error naming the file and op) what it cannot
// decide: a symbol broadcast against a constant other than 1, two different symbols in
// one axis, one symbol in two axes of a tensor, a reduction over a symbolic axis, ops whose attributes depend on sizes
// (Window, Gather, Scan, ...), and a constant dimension that is a multiple of a probe
// (it might be the symbol). instantiate() gives the concrete graph at given values: what
// the reference runs, and (at a second set of probes) what canonicalization is checked
// against (driver/symbolic_kernels).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace polyred {

// At most this many symbols per graph.
inline constexpr int kMaxSymbols = 8;

// The probe value of symbol `symbol` in probe set `set` (0: the template's; 1: the
// second set). Distinct primes, so that a product of constants and one probe says
// which symbol it holds.
int64_t symbolProbe(int symbol, int set = 0);
std::vector<int64_t> probeValues(const Graph& g, int set);

// A valid symbol name: a C identifier (it names a kernel parameter, size_<name>).
bool isSymbolName(const std::string& name);

// Derives Tensor::symbolic of every non-input tensor of a template graph (the inputs'
// are given) and checks them; throws polyred::Error as described above. A graph
// without symbols is left as it is.
void inferSymbolicDims(Graph& g);

// `g` at the symbol values `values` (one per Graph::symbols, each >= 0): symbolic
// dimensions become coefficient * value, and the result has no symbols.
Graph instantiate(const Graph& g, const std::vector<int64_t>& values);

// "[S, 768]" for a tensor of a template graph ("[2*S, 384]" for a coefficient).
std::string symbolicShapeString(const Graph& g, const Tensor& t);

}  // namespace polyred
