// Symbolic dimensions: inference of every tensor's symbolic axes from the inputs', and
// instantiation at concrete values (see symbolic_dims.h for the rules).
#include "ir/symbolic_dims.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

#include "support/error.h"

namespace polyred {

namespace {

// Primes near 2^17 and 2^16: large enough that the binding chooses as for many rows,
// small enough that a tensor with two symbols stays below kMaxElements.
constexpr std::array<int64_t, kMaxSymbols> kProbes0 = {131071, 131063, 131059, 131041, 131023, 131011, 131009, 130987};
constexpr std::array<int64_t, kMaxSymbols> kProbes1 = {65521, 65519, 65497, 65479, 65449, 65447, 65437, 65423};

std::string dimString(const Graph& g, const SymbolicDim& d, int64_t value) {
  if (d.isConstant()) return std::to_string(value);
  const std::string& name = g.symbols.at(static_cast<size_t>(d.symbol));
  return d.coefficient == 1 ? name : std::to_string(d.coefficient) + "*" + name;
}

class Inference {
 public:
  explicit Inference(Graph& g) : g_(g) {}

  void run() {
    if (g_.symbols.size() > static_cast<size_t>(kMaxSymbols))
      throw Error(g_.sourceFile, "", "at most " + std::to_string(kMaxSymbols) + " size symbols are supported");
    for (TensorId in : g_.inputs) checkInput(in);
    for (const Node& n : g_.nodes) {
      node_ = &n;
      g_.tensor(n.output).symbolic = outputDims(n);
    }
    for (size_t t = 0; t < g_.tensors.size(); ++t) checkConstantAxes(static_cast<TensorId>(t));
  }

 private:
  [[noreturn]] void fail(const std::string& reason) const {
    throw Error(g_.sourceFile, node_ ? node_->name : "", reason);
  }

  std::vector<SymbolicDim> dimsOf(TensorId id) const {
    const Tensor& t = g_.tensor(id);
    return t.symbolic.empty() ? std::vector<SymbolicDim>(t.shape.size()) : t.symbolic;
  }

  void checkInput(TensorId id) {
    Tensor& t = g_.tensor(id);
    if (t.symbolic.empty()) return;
    POLYRED_CHECK(t.symbolic.size() == t.shape.size(), "symbolic dims of " << t.name << " do not match its rank");
    for (size_t k = 0; k < t.shape.size(); ++k) {
      const SymbolicDim& d = t.symbolic[k];
      if (d.isConstant()) continue;
      POLYRED_CHECK(d.symbol < static_cast<int>(g_.symbols.size()) && d.coefficient >= 1 &&
                        t.shape[k] == d.coefficient * symbolProbe(d.symbol),
                    "input " << t.name << " axis " << k << " is not at its symbol's probe value");
    }
  }

  // A constant axis that is a multiple of a probe might be the symbol itself (a shape
  // computed from a probe value): refused, never guessed.
  void checkConstantAxes(TensorId id) const {
    const Tensor& t = g_.tensor(id);
    const std::vector<SymbolicDim> dims = dimsOf(id);
    for (size_t k = 0; k < dims.size(); ++k)
      for (size_t l = k + 1; l < dims.size(); ++l)
        if (!dims[k].isConstant() && dims[k].symbol == dims[l].symbol)
          throw Error(g_.sourceFile, t.producer >= 0 ? g_.nodes[static_cast<size_t>(t.producer)].name : "",
                      "size symbol " + g_.symbols[static_cast<size_t>(dims[k].symbol)] + " in two axes of tensor " +
                          t.name + " is not supported yet");
    for (size_t k = 0; k < t.shape.size(); ++k)
      for (size_t s = 0; s < g_.symbols.size(); ++s)
        if (dims[k].isConstant() && t.shape[k] > 0 && t.shape[k] % symbolProbe(static_cast<int>(s)) == 0)
          throw Error(g_.sourceFile, t.producer >= 0 ? g_.nodes[static_cast<size_t>(t.producer)].name : "",
                      "cannot decide whether axis " + std::to_string(k) + " of tensor " + t.name + " (" +
                          std::to_string(t.shape[k]) + ") is a multiple of the size symbol " + g_.symbols[s] +
                          ": write the symbol in the input shapes it comes from");
  }

  std::vector<SymbolicDim> outputDims(const Node& n) {
    const Tensor& out = g_.tensor(n.output);
    bool symbolicInput = false;
    for (TensorId in : n.inputs) symbolicInput = symbolicInput || g_.tensor(in).hasSymbolicDim();
    if (n.kind == OpKind::Iota) return declared(n.output);
    if (!symbolicInput) return {};
    if (isElementwise(n.kind)) return broadcast(n, out.shape.size());
    switch (n.kind) {
      case OpKind::BroadcastTo: return broadcast(n, out.shape.size());
      case OpKind::Reduce: return reduced(n);
      case OpKind::Reshape: return reshaped(n);
      case OpKind::Gather: return gathered(n);
      default:
        fail("a symbolic size in " + std::string(opName(n.kind)) + " is not supported yet (only elementwise ops, "
             "BroadcastTo, Reshape, reductions over constant axes and Gather by symbolic indices take symbolic "
             "tensors)");
    }
  }

  // Numpy broadcasting, right-aligned: a symbolic axis matches the same symbol times
  // the same coefficient, or a constant 1.
  std::vector<SymbolicDim> broadcast(const Node& n, size_t rank) {
    const Tensor& out = g_.tensor(n.output);
    std::vector<SymbolicDim> dims(rank);
    for (size_t k = 0; k < rank; ++k) {
      std::optional<SymbolicDim> symbolic;
      for (TensorId in : n.inputs) {
        const Tensor& t = g_.tensor(in);
        if (t.shape.size() + k < rank) continue;
        const size_t axis = t.shape.size() + k - rank;
        const SymbolicDim d = dimsOf(in)[axis];
        if (d.isConstant()) continue;
        if (symbolic && *symbolic != d)
          fail("cannot decide whether " + dimString(g_, *symbolic, 0) + " and " + dimString(g_, d, 0) +
               " broadcast (axis " + std::to_string(k) + " of " + out.name + ")");
        symbolic = d;
      }
      if (!symbolic) continue;
      for (TensorId in : n.inputs) {
        const Tensor& t = g_.tensor(in);
        if (t.shape.size() + k < rank) continue;
        const size_t axis = t.shape.size() + k - rank;
        if (dimsOf(in)[axis].isConstant() && t.shape[axis] != 1)
          fail("cannot decide whether " + dimString(g_, *symbolic, 0) + " broadcasts with the constant " +
               std::to_string(t.shape[axis]) + " (axis " + std::to_string(k) + " of " + out.name +
               "); only 1 broadcasts against a symbolic size");
      }
      dims[k] = *symbolic;
    }
    return dims;
  }

  std::vector<SymbolicDim> reduced(const Node& n) {
    const std::vector<SymbolicDim> in = dimsOf(n.inputs.at(0));
    std::vector<SymbolicDim> dims;
    for (size_t k = 0; k < in.size(); ++k) {
      const bool isReduced = std::find(n.axes.begin(), n.axes.end(), static_cast<int64_t>(k)) != n.axes.end();
      if (isReduced && !in[k].isConstant())
        fail("symbolic size " + dimString(g_, in[k], 0) + " in the reduced axis " + std::to_string(k) + " of " +
             std::string(opName(n.kind)) + " is not supported yet");
      if (!isReduced) dims.push_back(in[k]);
      else if (n.keepDims) dims.push_back({});
    }
    return dims;
  }

  // An Iota reads nothing: its declared shape says which axes are symbolic (the
  // positions 0..S-1 of a sequence), checked like an input's.
  std::vector<SymbolicDim> declared(TensorId out) {
    if (g_.tensor(out).symbolic.empty()) return {};
    checkInput(out);
    return g_.tensor(out).symbolic;
  }

  // Gather(params, indices; axis): params[:axis] + indices + params[axis+1:]. The
  // indices may be symbolic (an embedding's rows of tokens); the params may not (their
  // gathered extent bounds every index).
  std::vector<SymbolicDim> gathered(const Node& n) {
    const std::vector<SymbolicDim> params = dimsOf(n.inputs.at(0)), indices = dimsOf(n.inputs.at(1));
    for (const SymbolicDim& d : params)
      if (!d.isConstant())
        fail("symbolic size " + dimString(g_, d, 0) + " in the params of Gather is not supported yet (only in its "
             "indices)");
    const auto axis = static_cast<size_t>(n.axes.empty() ? 0 : n.axes[0]);
    std::vector<SymbolicDim> dims(params.begin(), params.begin() + static_cast<std::ptrdiff_t>(axis));
    dims.insert(dims.end(), indices.begin(), indices.end());
    dims.insert(dims.end(), params.begin() + static_cast<std::ptrdiff_t>(axis) + 1, params.end());
    return dims;
  }

  // Row-major reshape of a tensor with one symbolic axis: c * S elements. The output
  // axis that holds S is the one whose probe-valued size the probe divides; exactly one
  // does unless c itself is a multiple of the probe, which is refused as undecidable.
  std::vector<SymbolicDim> reshaped(const Node& n) {
    const Tensor& in = g_.tensor(n.inputs.at(0));
    const Tensor& out = g_.tensor(n.output);
    const std::vector<SymbolicDim> inDims = dimsOf(n.inputs.at(0));
    int symbol = -1;
    int64_t constantPart = 1;
    for (size_t k = 0; k < inDims.size(); ++k) {
      if (inDims[k].isConstant()) {
        constantPart *= in.shape[k];
        continue;
      }
      if (symbol >= 0) fail("a Reshape of a tensor with two symbolic axes is not supported yet");
      symbol = inDims[k].symbol;
      constantPart *= inDims[k].coefficient;
    }
    const int64_t probe = symbolProbe(symbol);
    if (constantPart % probe == 0) fail("cannot decide which axis of the Reshape's result holds " + g_.symbols[static_cast<size_t>(symbol)]);
    std::vector<SymbolicDim> dims(out.shape.size());
    int found = -1;
    for (size_t k = 0; k < out.shape.size(); ++k)
      if (out.shape[k] > 0 && out.shape[k] % probe == 0) {
        if (found >= 0) fail("cannot decide which axis of the Reshape's result holds " + g_.symbols[static_cast<size_t>(symbol)]);
        found = static_cast<int>(k);
      }
    if (found < 0)
      fail("the Reshape's result " + toString(out.shape) + " has no axis for the size symbol " +
           g_.symbols[static_cast<size_t>(symbol)] + " (it would be split across axes)");
    dims[static_cast<size_t>(found)] = {symbol, out.shape[static_cast<size_t>(found)] / probe};
    return dims;
  }

  Graph& g_;
  const Node* node_ = nullptr;
};

}  // namespace

int64_t symbolProbe(int symbol, int set) {
  POLYRED_CHECK(symbol >= 0 && symbol < kMaxSymbols, "symbol index " << symbol << " out of range");
  return (set == 0 ? kProbes0 : kProbes1)[static_cast<size_t>(symbol)];
}

std::vector<int64_t> probeValues(const Graph& g, int set) {
  std::vector<int64_t> v;
  for (size_t s = 0; s < g.symbols.size(); ++s) v.push_back(symbolProbe(static_cast<int>(s), set));
  return v;
}

bool isSymbolName(const std::string& name) {
  if (name.empty() || name.size() > 64 || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

bool Tensor::hasSymbolicDim() const {
  return std::any_of(symbolic.begin(), symbolic.end(), [](const SymbolicDim& d) { return !d.isConstant(); });
}

void inferSymbolicDims(Graph& g) {
  if (!g.symbols.empty()) Inference(g).run();
}

Graph instantiate(const Graph& g, const std::vector<int64_t>& values) {
  POLYRED_CHECK(values.size() == g.symbols.size(), "instantiate: " << values.size() << " values for "
                                                                   << g.symbols.size() << " symbols");
  Graph r = g;
  for (Tensor& t : r.tensors) {
    for (size_t k = 0; k < t.symbolic.size(); ++k) {
      const SymbolicDim& d = t.symbolic[k];
      if (d.isConstant()) continue;
      const int64_t v = values[static_cast<size_t>(d.symbol)];
      if (v < 0) throw Error(g.sourceFile, "", "size " + g.symbols[static_cast<size_t>(d.symbol)] + " = " + std::to_string(v) + " is negative");
      t.shape[k] = d.coefficient * v;
    }
    t.symbolic.clear();
    numElements(t.shape);  // throws if the values make a tensor too large
  }
  r.symbols.clear();
  return r;
}

std::string symbolicShapeString(const Graph& g, const Tensor& t) {
  std::string s = "[";
  for (size_t k = 0; k < t.shape.size(); ++k)
    s += (k ? ", " : "") + dimString(g, t.symbolic.empty() ? SymbolicDim{} : t.symbolic[k], t.shape[k]);
  return s + "]";
}

}  // namespace polyred
