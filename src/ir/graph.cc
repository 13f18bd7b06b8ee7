#include "ir/graph.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "ir/reduction_laws.h"
#include "ir/tuple_reduction.h"
#include "support/error.h"
#include "support/printable.h"

namespace polyred {

int64_t numElements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) throw Error("negative dimension in shape " + toString(s));
    if (d != 0 && n > kMaxElements / d)
      throw Error("shape " + toString(s) + " has more than 2^48 elements");
    n *= d;
  }
  return n;
}

std::vector<int64_t> rowMajorStrides(const Shape& s) {
  std::vector<int64_t> strides(s.size());
  int64_t step = 1;
  for (size_t d = s.size(); d-- > 0;) {
    strides[d] = step;
    step *= s[d];
  }
  return strides;
}

std::string toString(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

ScatterRows scatterRows(const Graph& g, const Node& scatter) {
  const Shape& out = g.tensor(scatter.output).shape;
  ScatterRows r;
  r.indexedAxes = scatter.axes.empty() ? 1 : scatter.axes[0];
  r.rows = 1;
  for (int64_t d = 0; d < r.indexedAxes; ++d) r.rows *= out[static_cast<size_t>(d)];
  r.rowSize = r.rows == 0 ? 0 : numElements(out) / r.rows;
  return r;
}

TensorId gatherSource(const Graph& g, const Node& gather) {
  TensorId t = gather.inputs.at(0);
  for (const Node* p = g.producer(t); p && p->kind == OpKind::Reshape; p = g.producer(t)) t = p->inputs.at(0);
  return t;
}

std::optional<Shape> broadcastShapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape r(n);
  for (size_t k = 0; k < n; ++k) {
    int64_t da = k < n - a.size() ? 1 : a[k - (n - a.size())];
    int64_t db = k < n - b.size() ? 1 : b[k - (n - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    r[k] = da == 1 ? db : da;
  }
  return r;
}

int Graph::inputIndex(TensorId t) const {
  auto it = std::find(inputs.begin(), inputs.end(), t);
  return it == inputs.end() ? -1 : static_cast<int>(it - inputs.begin());
}

std::optional<TensorId> Graph::findTensor(const std::string& n) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == n) return static_cast<TensorId>(i);
  return std::nullopt;
}

namespace {

class Verifier {
 public:
  explicit Verifier(const Graph& g) : g_(g) {}

  void run() {
    if (g_.outputs.empty()) fail("", "the graph has no outputs");
    std::set<std::string> names;
    for (size_t i = 0; i < g_.tensors.size(); ++i) {
      const Tensor& t = g_.tensors[i];
      if (!names.insert(t.name).second) fail("", "duplicate tensor name " + quotedName(t.name));
      int64_t n = numElementsOrFail(t);
      if (n == 0) fail("", "tensor " + quotedName(t.name) + " has zero elements " + polyred::toString(t.shape));
      if (t.role == TensorRole::Constant && !t.constant)
        fail("", "constant tensor " + quotedName(t.name) + " has no value");
    }
    std::vector<bool> defined(g_.tensors.size(), false);
    for (TensorId id : g_.inputs) {
      checkId(id, "");
      defined[static_cast<size_t>(id)] = true;
    }
    for (size_t i = 0; i < g_.tensors.size(); ++i)
      if (g_.tensors[i].role == TensorRole::Constant) defined[i] = true;
    for (size_t n = 0; n < g_.nodes.size(); ++n) {
      const Node& node = g_.nodes[n];
      for (TensorId in : node.inputs) {
        checkId(in, node.name);
        if (!defined[static_cast<size_t>(in)])
          fail(node.name, "reads tensor " + quotedName(g_.tensor(in).name) + " before it is defined");
      }
      checkId(node.output, node.name);
      if (defined[static_cast<size_t>(node.output)])
        fail(node.name, "tensor " + quotedName(g_.tensor(node.output).name) + " is defined twice");
      if (g_.tensor(node.output).producer != static_cast<int32_t>(n))
        fail(node.name, "output tensor does not point back to its producer");
      defined[static_cast<size_t>(node.output)] = true;
      checkNode(node);
    }
    std::map<TensorId, TensorId> writtenInPlace;  // input -> the output written into it
    for (const Output& o : g_.outputs) {
      checkId(o.tensor, "");
      if (!defined[static_cast<size_t>(o.tensor)]) fail("", "output " + quotedName(g_.tensor(o.tensor).name) + " is never computed");
      if (o.aliasOfInput) {
        checkId(*o.aliasOfInput, "");
        if (auto [it, first] = writtenInPlace.emplace(*o.aliasOfInput, o.tensor); !first)
          fail("", "outputs " + quotedName(g_.tensor(it->second).name) + " and " + quotedName(g_.tensor(o.tensor).name) +
                       " are both written in place of input " + quotedName(g_.tensor(*o.aliasOfInput).name) +
                       " (which one it would hold is undefined)");
        const Tensor& dst = g_.tensor(*o.aliasOfInput);
        const Tensor& src = g_.tensor(o.tensor);
        if (dst.role != TensorRole::Input) fail("", "in-place output target " + quotedName(dst.name) + " is not an input");
        if (dst.shape != src.shape || dst.dtype != src.dtype)
          fail("", "in-place output " + quotedName(src.name) + " does not match its target " + quotedName(dst.name));
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& op, const std::string& reason) const {
    throw Error(g_.sourceFile, op, reason);
  }
  int64_t numElementsOrFail(const Tensor& t) const {
    try {
      return numElements(t.shape);
    } catch (const Error& e) {
      fail("", "tensor " + quotedName(t.name) + ": " + e.reason());
    }
  }
  void checkId(TensorId id, const std::string& op) const {
    if (id < 0 || static_cast<size_t>(id) >= g_.tensors.size()) fail(op, "refers to an unknown tensor");
  }
  const Tensor& in(const Node& n, size_t k) const { return g_.tensor(n.inputs[k]); }
  const Tensor& out(const Node& n) const { return g_.tensor(n.output); }
  void arity(const Node& n, size_t want) const {
    if (n.inputs.size() != want)
      fail(n.name, "takes " + std::to_string(want) + " input(s), got " + std::to_string(n.inputs.size()));
  }
  void sameDType(const Node& n, const Tensor& a, const Tensor& b) const {
    if (a.dtype != b.dtype)
      fail(n.name, "dtype mismatch: " + quotedName(a.name) + " is " + std::string(dtypeName(a.dtype)) + ", " +
                       quotedName(b.name) + " is " + std::string(dtypeName(b.dtype)));
  }
  void shapeIs(const Node& n, const Shape& want) const {
    if (out(n).shape != want)
      fail(n.name, "output shape " + polyred::toString(out(n).shape) + " should be " + polyred::toString(want));
  }
  Shape broadcastAll(const Node& n, size_t from) const {
    Shape s = in(n, from).shape;
    for (size_t k = from + 1; k < n.inputs.size(); ++k) {
      auto b = broadcastShapes(s, in(n, k).shape);
      if (!b) fail(n.name, "shapes " + polyred::toString(s) + " and " + polyred::toString(in(n, k).shape) + " do not broadcast");
      s = *b;
    }
    return s;
  }

  bool touchesComplex(const Node& n) const {
    for (TensorId t : n.inputs)
      if (isComplex(g_.tensor(t).dtype)) return true;
    return isComplex(out(n).dtype);
  }
  [[noreturn]] void refuseComplex(const Node& n, const std::string& why) const {
    fail(n.name, std::string(opName(n.kind)) + " on complex64 is refused: " + why);
  }

  // complex64 (docs/format.md): Complex builds it from two float32, CReal/CImag/Abs
  // take float32 out of it, Add/Sub/Mul/Div/Neg/Conj/Select/AddN/Assign, movement ops
  // and sum/prod reductions and scans keep it; a Cast may make it from a real type; every other
  // op refuses it, naming the op and the dtype.
  void checkComplex(const Node& n) const {
    auto dtypeIs = [&](const Tensor& t, DType want, const char* what) {
      if (t.dtype != want)
        fail(n.name, std::string(opName(n.kind)) + " " + what + " should be " + std::string(dtypeName(want)) + ", got " +
                         std::string(dtypeName(t.dtype)));
    };
    switch (n.kind) {
      case OpKind::Complex:
        arity(n, 2);
        dtypeIs(in(n, 0), DType::Float32, "real part");
        dtypeIs(in(n, 1), DType::Float32, "imaginary part");
        shapeIs(n, broadcastAll(n, 0));
        dtypeIs(out(n), DType::Complex64, "output");
        return;
      case OpKind::CReal:
      case OpKind::CImag:
        arity(n, 1);
        dtypeIs(in(n, 0), DType::Complex64, "input");
        shapeIs(n, in(n, 0).shape);
        dtypeIs(out(n), DType::Float32, "output");
        return;
      case OpKind::Conj:
        arity(n, 1);
        dtypeIs(in(n, 0), DType::Complex64, "input");
        return;  // checkUnary checks the rest
      case OpKind::Abs:
        if (n.inputs.empty() || !isComplex(in(n, 0).dtype)) return;
        arity(n, 1);
        shapeIs(n, in(n, 0).shape);
        dtypeIs(out(n), DType::Float32, "output (the magnitude of a complex64)");
        return;
      default: break;
    }
    if (!touchesComplex(n)) return;
    if (n.kind == OpKind::Cast) {
      if (isComplex(in(n, 0).dtype) && !isComplex(out(n).dtype))
        refuseComplex(n, "a Cast from complex64 to " + std::string(dtypeName(out(n).dtype)) +
                             " would drop the imaginary part; take CReal, CImag or Abs explicitly");
      return;
    }
    if (n.kind == OpKind::Reduce || n.kind == OpKind::Scan) {
      if (n.reduction && n.reduction->isTuple()) refuseComplex(n, "tuple reductions take real element inputs");
      BuiltinCombiner c = n.reduction ? n.reduction->builtin() : BuiltinCombiner::None;
      if (c != BuiltinCombiner::Sum && c != BuiltinCombiner::Prod)
        fail(n.name, "a " + printable(n.reduction ? n.reduction->name : std::string("reduction")) +
                         " reduction of complex64 is refused: complex numbers are not ordered; only sum and prod "
                         "reduce complex64");
      if (!isComplex(n.reduction->accType) || !isComplex(out(n).dtype) || !isComplex(in(n, 0).dtype))
        refuseComplex(n, "a complex sum or product reads complex64, accumulates in complex64 and gives complex64");
      return;
    }
    if (opCategory(n.kind) == OpCategory::Movement || n.kind == OpKind::AddN || n.kind == OpKind::Assign) return;
    if (!acceptsComplex(n.kind)) refuseComplex(n, "the op is not defined on complex numbers");
    if (n.kind == OpKind::Select) return;
    for (TensorId t : n.inputs)
      if (!isComplex(g_.tensor(t).dtype)) refuseComplex(n, "every operand must be complex64");
  }

  void checkNode(const Node& n) const {
    if (n.kind == OpKind::PhiloxNormal) return checkPhiloxNormal(n);
    checkComplex(n);
    checkUnsigned(n);
    if (n.kind == OpKind::Complex || isComplexPart(n.kind) ||
        (n.kind == OpKind::Abs && !n.inputs.empty() && isComplex(in(n, 0).dtype)))
      return;  // checked completely by checkComplex
    switch (opCategory(n.kind)) {
      case OpCategory::Unary: checkUnary(n); return;
      case OpCategory::Binary: checkBinary(n); return;
      case OpCategory::OtherElementwise: checkOtherElementwise(n); return;
      case OpCategory::Movement: checkMovement(n); return;
      case OpCategory::Reduction: checkReduce(n); return;
    }
  }

  // The ops and reductions of uint16/uint32/uint64 operands that polyred does not
  // define (unsignedRefusal, unsignedReductionRefusal).
  void checkUnsigned(const Node& n) const {
    if (n.inputs.empty()) return;
    const size_t typed = n.kind == OpKind::Select && n.inputs.size() > 1 ? 1 : 0;
    const DType t = in(n, typed).dtype;
    std::optional<std::string> why;
    if (n.kind == OpKind::Reduce || n.kind == OpKind::Scan) {
      if (n.reduction)
        why = unsignedReductionRefusal(n.reduction->builtin(), n.reduction->isTuple(), t, out(n).dtype);
    } else if (isElementwise(n.kind)) {
      why = unsignedRefusal(n.kind, t);
    }
    if (why) fail(n.name, *why);
  }

  void checkUnary(const Node& n) const {
    arity(n, 1);
    shapeIs(n, in(n, 0).shape);
    // MindSpore promotes integer inputs of these ops to float32; polyred asks for the
    // promotion to be written, so that no op silently changes the dtype it was given.
    if (isFloatMath(n.kind) && !isFloat(in(n, 0).dtype))
      fail(n.name, std::string(opName(n.kind)) + " takes a float input, got " + std::string(dtypeName(in(n, 0).dtype)) +
                       ": Cast it to float32 first (MindSpore computes it in float32)");
    DType want = isPredicate(n.kind) || isLogical(n.kind) ? DType::Bool : in(n, 0).dtype;
    if (out(n).dtype != want) fail(n.name, "output dtype should be " + std::string(dtypeName(want)));
  }

  void checkBinary(const Node& n) const {
    arity(n, 2);
    sameDType(n, in(n, 0), in(n, 1));
    shapeIs(n, broadcastAll(n, 0));
    if (isFloatMath(n.kind) && !isFloat(in(n, 0).dtype))
      fail(n.name, std::string(opName(n.kind)) + " takes float inputs, got " + std::string(dtypeName(in(n, 0).dtype)) +
                       ": Cast them to float32 first (MindSpore computes it in float32)");
    DType want = isComparison(n.kind) || isLogical(n.kind) ? DType::Bool : in(n, 0).dtype;
    if (out(n).dtype != want) fail(n.name, "output dtype should be " + std::string(dtypeName(want)));
  }

  // PhiloxNormal(counter, key): int64 operands, a float result (ir/philox.h).
  void checkPhiloxNormal(const Node& n) const {
    arity(n, 2);
    for (size_t k = 0; k < 2; ++k)
      if (in(n, k).dtype != DType::Int64)
        fail(n.name, std::string(k == 0 ? "the counter " : "the key ") + quotedName(in(n, k).name) +
                         " should be int64, got " + std::string(dtypeName(in(n, k).dtype)));
    shapeIs(n, broadcastAll(n, 0));
    if (!isFloat(out(n).dtype))
      fail(n.name, "output dtype should be a float type (normal values), got " + std::string(dtypeName(out(n).dtype)));
  }

  void checkOtherElementwise(const Node& n) const {
    switch (n.kind) {
      case OpKind::Cast: arity(n, 1); shapeIs(n, in(n, 0).shape); return;
      case OpKind::Assign:
        arity(n, 2);
        sameDType(n, in(n, 0), in(n, 1));
        if (in(n, 0).shape != in(n, 1).shape) fail(n.name, "Assign needs equal shapes");
        shapeIs(n, in(n, 1).shape);
        sameDType(n, in(n, 1), out(n));
        return;
      case OpKind::AddN:
        if (n.inputs.empty()) fail(n.name, "AddN needs at least one input");
        for (size_t k = 1; k < n.inputs.size(); ++k) sameDType(n, in(n, 0), in(n, k));
        shapeIs(n, broadcastAll(n, 0));
        sameDType(n, in(n, 0), out(n));
        return;
      case OpKind::Select:
        arity(n, 3);
        if (in(n, 0).dtype != DType::Bool) fail(n.name, "Select condition must be bool");
        sameDType(n, in(n, 1), in(n, 2));
        shapeIs(n, broadcastAll(n, 0));
        sameDType(n, in(n, 1), out(n));
        return;
      default: fail(n.name, "unexpected op kind");
    }
  }

  void checkMovement(const Node& n) const {
    if (n.kind == OpKind::Iota) return checkIota(n);
    if (n.kind == OpKind::Gather) return checkGather(n);
    if (n.kind == OpKind::ScatterAdd) return checkScatterAdd(n);
    arity(n, 1);
    sameDType(n, in(n, 0), out(n));
    const Shape& is = in(n, 0).shape;
    const Shape& os = out(n).shape;
    switch (n.kind) {
      case OpKind::Reshape:
        if (numElements(is) != numElements(os))
          fail(n.name, "cannot reshape " + polyred::toString(is) + " to " + polyred::toString(os));
        return;
      case OpKind::BroadcastTo: {
        auto b = broadcastShapes(is, os);
        if (!b || *b != os)
          fail(n.name, "cannot broadcast " + polyred::toString(is) + " to " + polyred::toString(os));
        return;
      }
      case OpKind::Transpose: {
        if (n.perm.size() != is.size()) fail(n.name, "perm length differs from the input rank");
        std::vector<bool> seen(is.size(), false);
        Shape want;
        for (int64_t p : n.perm) {
          if (p < 0 || p >= static_cast<int64_t>(is.size()) || seen[static_cast<size_t>(p)])
            fail(n.name, "perm is not a permutation of the input axes");
          seen[static_cast<size_t>(p)] = true;
          want.push_back(is[static_cast<size_t>(p)]);
        }
        shapeIs(n, want);
        return;
      }
      case OpKind::Window:
        if (n.begin.size() != is.size() || os.size() != is.size())
          fail(n.name, "Window needs one begin per axis and an output of the input's rank");
        for (size_t d = 0; d < is.size(); ++d) {
          if (is[d] == 0 && os[d] > 0) fail(n.name, "Window reads an empty axis");
          if (n.begin[d] < -kMaxWindowOffset || n.begin[d] > kMaxWindowOffset)
            fail(n.name, "Window begin " + std::to_string(n.begin[d]) + " is out of range");
        }
        if (!n.steps.empty() && n.steps.size() != is.size()) fail(n.name, "Window needs one step per axis, or none");
        for (int64_t s : n.steps)
          if (s == 0 || s < -kMaxWindowStep || s > kMaxWindowStep)
            fail(n.name, "Window step " + std::to_string(s) + " is 0 or out of range");
        return;
      default: fail(n.name, "unexpected op kind");
    }
  }

  // Far beyond any tensor extent; keeps begin + step * extent arithmetic far from overflow.
  static constexpr int64_t kMaxWindowOffset = int64_t{1} << 48;
  static constexpr int64_t kMaxWindowStep = int64_t{1} << 20;

  // out shape = params[:axis] + indices + params[axis+1:], params' dtype.
  void checkGather(const Node& n) const {
    arity(n, 2);
    const Tensor& params = in(n, 0);
    const DType index = in(n, 1).dtype;
    if (index != DType::Int32 && index != DType::Int64)
      fail(n.name, "Gather's indices must be int32 or int64, got " + std::string(dtypeName(index)));
    const int64_t rank = static_cast<int64_t>(params.shape.size());
    if (n.axes.size() != 1 || n.axes[0] < 0 || n.axes[0] >= rank)
      fail(n.name, "Gather needs an axis of its rank-" + std::to_string(rank) + " params");
    const auto axis = static_cast<std::ptrdiff_t>(n.axes[0]);
    Shape want(params.shape.begin(), params.shape.begin() + axis);
    want.insert(want.end(), in(n, 1).shape.begin(), in(n, 1).shape.end());
    want.insert(want.end(), params.shape.begin() + axis + 1, params.shape.end());
    sameDType(n, params, out(n));
    shapeIs(n, want);
    if (isComplex(params.dtype)) fail(n.name, "Gather of complex64 is not supported");
    // Computed params are pushed into the gather before partitioning (canon/gather_sources).
    const TensorId source = gatherSource(g_, n);
    for (const Output& o : g_.outputs)  // other points' writes would race with its reads
      if (o.aliasOfInput == source)
        fail(n.name, "Gather reads params that the graph also writes in place (Assign)");
  }

  // values shape = indices shape + out.shape[k:], out has values' dtype (a number);
  // the base, if any, is the output's shape and dtype.
  void checkScatterAdd(const Node& n) const {
    if (n.inputs.size() != 2 && n.inputs.size() != 3)
      fail(n.name, "ScatterAdd takes values, indices and optionally a base, got " + std::to_string(n.inputs.size()) +
                       " inputs");
    const Tensor& values = in(n, 0);
    const DType index = in(n, 1).dtype;
    if (index != DType::Int32 && index != DType::Int64)
      fail(n.name, "ScatterAdd's indices must be int32 or int64, got " + std::string(dtypeName(index)));
    if (values.dtype == DType::Bool || isComplex(values.dtype))
      fail(n.name, "ScatterAdd adds numbers, got " + std::string(dtypeName(values.dtype)));
    const Shape& os = out(n).shape;
    const int64_t k = n.axes.empty() ? 1 : n.axes[0];
    if (n.axes.size() > 1 || k < 1 || k > static_cast<int64_t>(os.size()))
      fail(n.name, "ScatterAdd indexes 1 to rank leading axes of its rank-" + std::to_string(os.size()) + " output" +
                       (os.empty() ? " (a scalar has none)" : ", not " + std::to_string(k)));
    Shape want = in(n, 1).shape;
    want.insert(want.end(), os.begin() + k, os.end());
    if (values.shape != want)
      fail(n.name, "ScatterAdd's values have shape " + polyred::toString(values.shape) + ", expected " +
                       polyred::toString(want) + " (the indices' shape, then the output's axes after the indexed ones)");
    sameDType(n, values, out(n));
    if (n.inputs.size() == 3) {
      sameDType(n, in(n, 2), out(n));
      if (in(n, 2).shape != os)
        fail(n.name, "ScatterAdd's base has shape " + polyred::toString(in(n, 2).shape) + ", not the output's " +
                         polyred::toString(os));
    }
  }

  void checkIota(const Node& n) const {
    arity(n, 0);
    const Shape& os = out(n).shape;
    if (n.axes.size() != 1 || n.axes[0] < 0 || n.axes[0] >= static_cast<int64_t>(os.size()))
      fail(n.name, "Iota needs one axis of its output");
    DType t = out(n).dtype;
    if (t != DType::Int32 && t != DType::Int64) fail(n.name, "Iota gives int32 or int64");
    if (t == DType::Int32 && os[static_cast<size_t>(n.axes[0])] > (int64_t{1} << 31))
      fail(n.name, "Iota along an axis of more than 2^31 elements must be int64");
  }

  // A scan: one input, a scalar reduction whose accumulator holds the output type, one
  // axis, the output shaped as the input.
  void checkScan(const Node& n) const {
    arity(n, 1);
    if (!n.reduction || n.reduction->isTuple()) fail(n.name, "a scan folds a scalar reduction (not a tuple)");
    try {
      checkCombinerLaws(*n.reduction, in(n, 0).dtype, n.name);
    } catch (const Error& e) {
      fail(n.name, e.reason());
    }
    const BuiltinCombiner c = n.reduction->builtin();
    const bool exact = c != BuiltinCombiner::Sum && c != BuiltinCombiner::Prod && c != BuiltinCombiner::None;
    if (!exact && !accumulatorHolds(n.reduction->accType, out(n).dtype))
      fail(n.name, "a " + printable(n.reduction->name) + " scan accumulating in " +
                       std::string(dtypeName(n.reduction->accType)) + " cannot produce " +
                       std::string(dtypeName(out(n).dtype)) + " results");
    const auto rank = static_cast<int64_t>(in(n, 0).shape.size());
    if (n.axes.size() != 1 || n.axes[0] < 0 || n.axes[0] >= rank)
      fail(n.name, "a scan runs along one axis in [0, " + std::to_string(rank) + ")");
    shapeIs(n, in(n, 0).shape);
  }

  void checkReduce(const Node& n) const {
    if (n.kind == OpKind::Scan) return checkScan(n);
    if (n.reduction && n.reduction->isTuple()) {
      checkTupleReduce(n);
      return;
    }
    arity(n, 1);
    if (!n.reduction) fail(n.name, "reduction without a combiner");
    try {
      checkCombinerLaws(*n.reduction, in(n, 0).dtype, n.name);
    } catch (const Error& e) {
      fail(n.name, e.reason());
    }
    DType acc = n.reduction->accType, outType = out(n).dtype;
    BuiltinCombiner c = n.reduction->builtin();
    bool exact = c == BuiltinCombiner::Max || c == BuiltinCombiner::Min || c == BuiltinCombiner::And ||
                 c == BuiltinCombiner::Or;  // their result is an operand: any output type holds it
    if (!exact && !accumulatorHolds(acc, outType))
      fail(n.name, "a " + printable(n.reduction->name) + " accumulating in " + std::string(dtypeName(acc)) +
                       " cannot produce a " + std::string(dtypeName(outType)) +
                       " result: it would wrap or round in the narrower type first (accumulate in " +
                       (isFloat(outType) ? "float64 or int64" : "a type at least as wide") + ")");
    checkReducedShape(n);
  }

  // A tuple reduction: its inputs are the tuple's element inputs (one shape, the
  // declared dtypes), its output a finalize result (cast to the output dtype).
  void checkTupleReduce(const Node& n) const {
    const TupleReduction& t = *n.reduction->tuple;
    arity(n, t.inputs.size());
    try {
      t.validate(n.name);
      // Sampled once per declaration: the results of one tuple (argmax's index and
      // value) are nodes of their own that share it.
      if (lawsChecked_.insert(&t).second) checkTupleLaws(t, n.name);
    } catch (const Error& e) {
      fail(n.name, e.reason());
    }
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (in(n, k).shape != in(n, 0).shape) fail(n.name, "the element inputs of a tuple reduction must have one shape");
      if (in(n, k).dtype != t.inputs[k])
        fail(n.name, "element input " + std::to_string(k) + " should be " + std::string(dtypeName(t.inputs[k])));
    }
    if (n.reduction->result < 0 || static_cast<size_t>(n.reduction->result) >= t.results.size())
      fail(n.name, "the tuple reduction has no result " + std::to_string(n.reduction->result));
    checkReducedShape(n);
  }

  void checkReducedShape(const Node& n) const {
    const Shape& is = in(n, 0).shape;
    Shape want;
    int64_t prev = -1;
    for (int64_t a : n.axes) {
      if (a < 0 || a >= static_cast<int64_t>(is.size()))
        fail(n.name, "axis " + std::to_string(a) + " out of range for rank " + std::to_string(is.size()));
      if (a <= prev) fail(n.name, "axes must be sorted and unique");
      prev = a;
    }
    for (size_t d = 0; d < is.size(); ++d) {
      bool reduced = std::find(n.axes.begin(), n.axes.end(), static_cast<int64_t>(d)) != n.axes.end();
      if (!reduced) want.push_back(is[d]);
      else if (n.keepDims) want.push_back(1);
    }
    shapeIs(n, want);
  }

  const Graph& g_;
  mutable std::set<const TupleReduction*> lawsChecked_;  // tuples whose laws were sampled
};

}  // namespace

void Graph::verify() const { Verifier(*this).run(); }

std::string Graph::toString() const {
  std::ostringstream os;
  auto t = [&](TensorId id) {
    const Tensor& x = tensor(id);
    return "%" + printable(x.name) + ":" + std::string(dtypeName(x.dtype)) + polyred::toString(x.shape);
  };
  os << "graph " << printable(name) << "\n";
  for (TensorId id : inputs) os << "  input " << t(id) << "\n";
  for (const Tensor& x : tensors)
    if (x.role == TensorRole::Constant) os << "  const %" << printable(x.name) << " = " << x.constant->toString() << "\n";
  for (const Node& n : nodes) {
    os << "  " << t(n.output) << " = " << opName(n.kind);
    if (n.kind == OpKind::Reduce) {
      if (n.reduction->isTuple())
        os << "." << printable(n.reduction->tuple->name) << "<result " << n.reduction->result << ": "
           << printable(n.reduction->tuple->toString()) << ">";
      else
        os << "." << printable(n.reduction->name) << "<acc " << dtypeName(n.reduction->accType) << ">";
      os << " axes " << polyred::toString(n.axes) << (n.keepDims ? " keep_dims" : "");
    }
    if (n.kind == OpKind::Scan)
      os << "." << printable(n.reduction->name) << "<acc " << dtypeName(n.reduction->accType) << "> axis "
         << n.axes.at(0) << (n.exclusive ? " exclusive" : "") << (n.reverse ? " reverse" : "");
    if (n.kind == OpKind::Transpose) os << " perm " << polyred::toString(n.perm);
    if (n.kind == OpKind::Window) os << " begin " << polyred::toString(n.begin);
    if (n.kind == OpKind::Window && !n.steps.empty()) os << " steps " << polyred::toString(n.steps);
    if (n.kind == OpKind::Iota || n.kind == OpKind::Gather) os << " axis " << (n.axes.empty() ? -1 : n.axes[0]);
    if (n.kind == OpKind::ScatterAdd && !n.axes.empty()) os << " indexed_axes " << n.axes[0];
    os << "(";
    for (size_t k = 0; k < n.inputs.size(); ++k) os << (k ? ", " : "") << "%" << printable(tensor(n.inputs[k]).name);
    os << ")\n";
  }
  for (const Output& o : outputs) {
    os << "  output %" << printable(tensor(o.tensor).name);
    if (o.aliasOfInput) os << " -> in-place into %" << printable(tensor(*o.aliasOfInput).name);
    os << "\n";
  }
  return os.str();
}

}  // namespace polyred
