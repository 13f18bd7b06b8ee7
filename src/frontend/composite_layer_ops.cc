#include "frontend/composite_layer_ops.h"

#include <algorithm>
#include <utility>

#include "frontend/builder.h"
#include "frontend/composite_scans_scatters.h"
#include "support/error.h"
#include "support/printable.h"

namespace polyred {

namespace {

constexpr std::string_view kLayerOps[] = {
    "ExpandDims",  "Squeeze",   "Flatten",           "BiasAdd",     "ZerosLike", "OnesLike",
    "ReLU6",       "HSigmoid",  "HSwish",            "Mish",        "LeakyReLU", "SquaredDifference",
    "ClipByValue", "Clip",      "SquareSumV1",       "SquareSumAll", "LayerNorm", "Shape",
    "ConstantOfShape", "TupleGetItem",
    // AKG's own: a select on a comparison, a format change that moves no data, an
    // offset that keeps a later log or division off zero
    "SelectGT", "SelectGE", "SelectLT", "SelectLE", "EquivFormat", "AddMinValue",
    // read by frontend/composite_scans_scatters
    "CumSum", "CumProd", "UnsortedSegmentSum", "TensorScatterAdd"};

// The most values ConstantOfShape may list one by one: each becomes a Select.
constexpr size_t kMaxListedValues = 64;

class LayerExpansion : public AttributedExpansion {
 public:
  LayerExpansion(ExpansionSink& sink, const std::string& file, const std::string& op, const CompositeAttrs& attrs,
                 const std::vector<DeclaredOutput>& declared)
      : AttributedExpansion(sink, file, op, attrs), declared_(declared) {}

  std::vector<TupleOpOutput> expand(std::string_view name, const std::vector<TensorId>& ins) {
    if (isScanScatterOp(name)) return {readScanScatter(name, ins, attrs_, sink_, file_, op_)};
    if (name == "SquareSumAll") return squareSumAll(ins);
    if (name == "LayerNorm") return layerNorm(ins);
    return {one(name, ins)};
  }

 private:
  void needInputs(const std::vector<TensorId>& ins, size_t n, const std::string& roles) const {
    if (ins.size() != n) fail("takes " + std::to_string(n) + " inputs (" + roles + "), got " + std::to_string(ins.size()));
  }
  TupleOpOutput result(Node last, Shape shape, DType t) const { return {std::move(last), std::move(shape), t}; }
  // The node computing `last`'s value as an output: itself in its own dtype.
  TupleOpOutput finish(Node last, DType compute, DType t) {
    Shape shape = info(last.inputs[0]).shape;
    for (TensorId in : last.inputs) shape = *broadcastShapes(shape, info(in).shape);
    if (compute == t) return result(std::move(last), shape, t);
    return result(node(OpKind::Cast, {add(std::move(last), shape, compute)}), shape, t);
  }
  TupleOpOutput reshaped(TensorId x, Shape shape) {
    return result(node(OpKind::Reshape, {x}), std::move(shape), info(x).dtype);
  }
  void needFloat(TensorId x) const {
    if (!isFloat(info(x).dtype))
      fail("takes a float input, got " + std::string(dtypeName(info(x).dtype)) + " (Cast it to float32 first)");
  }
  // An axis in [-bound, bound) counted from the end when negative.
  int64_t axisIn(int64_t axis, int64_t bound, const char* what) const {
    if (axis < -bound || axis >= bound)
      fail(std::string(what) + " " + std::to_string(axis) + " is out of range [" + std::to_string(-bound) + ", " +
           std::to_string(bound) + ")");
    return axis < 0 ? axis + bound : axis;
  }
  TupleOpOutput one(std::string_view name, const std::vector<TensorId>& ins) {
    if (name == "ExpandDims") return expandDims(ins);
    if (name == "Squeeze") return squeeze(ins);
    if (name == "Flatten") return flatten(ins);
    if (name == "BiasAdd") return biasAdd(ins);
    if (name == "ZerosLike" || name == "OnesLike") return filledLike(ins, name == "OnesLike" ? 1 : 0);
    if (name == "SquaredDifference") return squaredDifference(ins);
    if (name == "ClipByValue" || name == "Clip") return clip(ins);
    if (name == "SquareSumV1") return squareSum(ins);
    if (name == "Shape") return shapeOf(ins);
    if (name == "ConstantOfShape") return constantOfShape(ins);
    if (name == "TupleGetItem") return tupleGetItem(ins);
    if (name.starts_with("Select")) return selectOnComparison(name, ins);
    if (name == "EquivFormat") return equivFormat(ins);
    if (name == "AddMinValue") return addMinValue(ins);
    return activation(name, ins);
  }

  TupleOpOutput expandDims(const std::vector<TensorId>& ins) {
    if (ins.empty() || ins.size() > 2) needInputs(ins, 1, "the tensor; the axis as an attribute or a constant input");
    Shape shape = info(ins[0]).shape;
    const auto rank = static_cast<int64_t>(shape.size());
    const int64_t axis = axisIn(intParameter("axis", ins, 1, 0), rank + 1, "axis");
    shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(axis), 1);
    return reshaped(ins[0], shape);
  }

  TupleOpOutput squeeze(const std::vector<TensorId>& ins) {
    needInputs(ins, 1, "the tensor");
    const Shape& in = info(ins[0]).shape;
    const auto rank = static_cast<int64_t>(in.size());
    std::vector<int64_t> axes;
    if (const Json* v = attr(attrs_, "axis")) axes = v->is_array() ? readIntList(*v, "axis") : std::vector{readInt(*v, "axis")};
    std::vector<bool> dropped(in.size(), axes.empty());
    for (int64_t a : axes) {
      const int64_t d = axisIn(a, rank, "axis");
      if (in[static_cast<size_t>(d)] != 1)
        fail("axis " + std::to_string(a) + " has extent " + std::to_string(in[static_cast<size_t>(d)]) + ", not 1");
      dropped[static_cast<size_t>(d)] = true;
    }
    Shape out;
    for (size_t d = 0; d < in.size(); ++d)
      if (!dropped[d] || in[d] != 1) out.push_back(in[d]);
    return reshaped(ins[0], out);
  }

  TupleOpOutput flatten(const std::vector<TensorId>& ins) {
    needInputs(ins, 1, "the tensor");
    const Shape& in = info(ins[0]).shape;
    if (in.empty()) fail("takes a tensor of rank at least 1");
    return reshaped(ins[0], {in[0], numElements(in) / in[0]});
  }

  TupleOpOutput biasAdd(const std::vector<TensorId>& ins) {
    needInputs(ins, 2, "the tensor, the bias");
    const Tensor x = info(ins[0]);  // a copy: adding nodes below may move the graph's tensors
    const Shape& b = info(ins[1]).shape;
    if (x.shape.size() < 2) fail("takes a tensor of rank at least 2, got rank " + std::to_string(x.shape.size()));
    std::string format = "NCHW";
    if (const Json* v = attr(attrs_, "data_format")) format = readString(*v, "data_format");
    if (format != "NCHW" && format != "NHWC" && format != "NCDHW")
      fail("data_format " + quotedName(format) + " is not one of NCHW, NHWC, NCDHW");
    const size_t channel = format == "NHWC" ? x.shape.size() - 1 : 1;
    if (b.size() != 1 || b[0] != x.shape[channel])
      fail("the bias must be 1-D with the channel extent " + std::to_string(x.shape[channel]) + ", got " + toString(b));
    Shape along(x.shape.size() - channel, 1);  // the bias on the channel axis, broadcast over the rest
    along[0] = b[0];
    TensorId bias = add(node(OpKind::Reshape, {ins[1]}), along, info(ins[1]).dtype);
    return finish(node(OpKind::Add, {ins[0], bias}), x.dtype, x.dtype);
  }

  TupleOpOutput filledLike(const std::vector<TensorId>& ins, double value) {
    needInputs(ins, 1, "the tensor");
    const Tensor x = info(ins[0]);
    return result(node(OpKind::BroadcastTo, {constant(value, x.dtype)}), x.shape, x.dtype);
  }

  TupleOpOutput squaredDifference(const std::vector<TensorId>& ins) {
    needInputs(ins, 2, "x, y");
    TensorId d = apply(OpKind::Sub, {ins[0], ins[1]});
    return finish(node(OpKind::Mul, {d, d}), info(d).dtype, info(d).dtype);
  }

  TupleOpOutput clip(const std::vector<TensorId>& ins) {
    needInputs(ins, 3, "x, the lower bound, the upper bound");
    TensorId low = apply(OpKind::Maximum, {ins[0], ins[1]});
    return finish(node(OpKind::Minimum, {low, ins[2]}), info(low).dtype, info(low).dtype);
  }

  std::vector<int64_t> axesAttr(size_t rank) const {
    std::vector<int64_t> axes;
    if (const Json* v = attr(attrs_, "axis")) axes = v->is_array() ? readIntList(*v, "axis") : std::vector{readInt(*v, "axis")};
    try {
      return normalizeAxes(std::move(axes), rank, op_);
    } catch (const Error& e) {
      throw e.inFile(file_);
    }
  }

  TupleOpOutput squareSum(const std::vector<TensorId>& ins) {
    needInputs(ins, 1, "the tensor");
    const std::vector<int64_t> axes = axesAttr(info(ins[0]).shape.size());
    const Json* keep = attr(attrs_, "keep_dims");
    TensorId total = reduce(apply(OpKind::Mul, {ins[0], ins[0]}), BuiltinCombiner::Sum, axes, keep && readBool(*keep, "keep_dims"));
    return reshaped(total, info(total).shape);
  }

  std::vector<TupleOpOutput> squareSumAll(const std::vector<TensorId>& ins) {
    needInputs(ins, 2, "x, y");
    std::vector<TupleOpOutput> sums;
    for (TensorId x : ins) {
      std::vector<int64_t> every(info(x).shape.size());
      for (size_t d = 0; d < every.size(); ++d) every[d] = static_cast<int64_t>(d);
      TensorId total = reduce(apply(OpKind::Mul, {x, x}), BuiltinCombiner::Sum, every, false);
      sums.push_back(reshaped(total, {}));
    }
    return sums;
  }

  TupleOpOutput activation(std::string_view name, const std::vector<TensorId>& ins) {
    needInputs(ins, 1, "the tensor");
    const DType t = info(ins[0]).dtype;
    if (name != "ReLU6" && name != "LeakyReLU") needFloat(ins[0]);
    const TensorId x = inComputeType(ins[0]);
    const DType ct = info(x).dtype;
    auto c = [&](double v) { return constant(v, ct); };
    auto relu6 = [&](TensorId v) { return apply(OpKind::Minimum, {apply(OpKind::Maximum, {v, c(0)}), c(6)}); };
    if (name == "ReLU6") return finish(node(OpKind::Minimum, {apply(OpKind::Maximum, {x, c(0)}), c(6)}), ct, t);
    if (name == "LeakyReLU") {
      TensorId scaled = apply(OpKind::Mul, {x, c(floatAttr("alpha", 0.2))});
      return finish(node(OpKind::Select, {apply(OpKind::Greater, {x, c(0)}), x, scaled}), ct, t);
    }
    if (name == "HSigmoid") return finish(node(OpKind::Div, {relu6(apply(OpKind::Add, {x, c(3)})), c(6)}), ct, t);
    if (name == "HSwish") {
      TensorId gate = apply(OpKind::Div, {relu6(apply(OpKind::Add, {x, c(3)})), c(6)});
      return finish(node(OpKind::Mul, {x, gate}), ct, t);
    }
    // Mish
    TensorId softplus = apply(OpKind::Log, {apply(OpKind::Add, {c(1), apply(OpKind::Exp, {x})})});
    return finish(node(OpKind::Mul, {x, apply(OpKind::Tanh, {softplus})}), ct, t);
  }

  std::vector<TupleOpOutput> layerNorm(const std::vector<TensorId>& ins) {
    needInputs(ins, 3, "x, gamma, beta");
    for (TensorId in : ins) needFloat(in);
    const Tensor x = info(ins[0]);  // a copy: adding nodes below may move the graph's tensors
    const auto rank = static_cast<int64_t>(x.shape.size());
    const int64_t normFrom = axisIn(intAttr("begin_norm_axis", 1), rank, "begin_norm_axis");
    const int64_t paramsFrom = axisIn(intAttr("begin_params_axis", 1), rank, "begin_params_axis");
    const Shape params(x.shape.begin() + static_cast<std::ptrdiff_t>(paramsFrom), x.shape.end());
    for (size_t k : {size_t{1}, size_t{2}})
      if (info(ins[k]).shape != params)
        fail(std::string(k == 1 ? "gamma" : "beta") + " has shape " + toString(info(ins[k]).shape) +
             "; begin_params_axis " + std::to_string(paramsFrom) + " asks for " + toString(params));
    if (declared_.size() != 3) fail("has three outputs (y, mean, variance), " + std::to_string(declared_.size()) + " declared");
    std::vector<int64_t> axes;
    int64_t count = 1;
    for (int64_t d = normFrom; d < rank; ++d) {
      axes.push_back(d);
      count *= x.shape[static_cast<size_t>(d)];
    }
    const TensorId xc = inComputeType(ins[0]);
    const DType ct = info(xc).dtype;
    auto c = [&](double v) { return constant(v, ct); };
    TensorId mean = apply(OpKind::Div, {reduce(xc, BuiltinCombiner::Sum, axes, true), c(static_cast<double>(count))});
    TensorId centered = apply(OpKind::Sub, {xc, mean});
    TensorId squares = apply(OpKind::Mul, {centered, centered});
    TensorId var = apply(OpKind::Div, {reduce(squares, BuiltinCombiner::Sum, axes, true), c(static_cast<double>(count))});
    TensorId inv = apply(OpKind::Rsqrt, {apply(OpKind::Add, {var, c(floatAttr("epsilon", 1e-7))})});
    TensorId scaled = apply(OpKind::Mul, {apply(OpKind::Mul, {centered, inv}), inComputeType(ins[1])});
    std::vector<TupleOpOutput> outs;
    outs.push_back(finish(node(OpKind::Add, {scaled, inComputeType(ins[2])}), ct, declaredFloat(0)));
    for (auto [k, stat] : {std::pair{size_t{1}, mean}, {size_t{2}, var}}) {
      const DType want = declaredFloat(k);
      outs.push_back(want == ct ? reshaped(stat, info(stat).shape)
                                : result(node(OpKind::Cast, {stat}), info(stat).shape, want));
    }
    return outs;
  }
  DType declaredFloat(size_t k) const {
    if (!isFloat(declared_[k].dtype)) fail("output " + std::to_string(k) + " must be a float type");
    return declared_[k].dtype;
  }

  // Shape(x): Select(Iota == 0, extent 0, Select(Iota == 1, extent 1, ...)).
  TupleOpOutput shapeOf(const std::vector<TensorId>& ins) {
    needInputs(ins, 1, "the tensor");
    const Shape extents = info(ins[0]).shape;
    const DType t = declared_.empty() ? DType::Int64 : declared_[0].dtype;
    if (t != DType::Int32 && t != DType::Int64) fail("the output must be int32 or int64, is " + std::string(dtypeName(t)));
    return listed(std::vector<double>(extents.begin(), extents.end()), {static_cast<int64_t>(extents.size())}, t);
  }

  // The values in row-major order over `shape`: one Select per value past the first.
  TupleOpOutput listed(const std::vector<double>& values, const Shape& shape, DType t) {
    if (values.empty()) fail("has no values to give");
    if (values.size() == 1) return result(node(OpKind::BroadcastTo, {constant(values[0], t)}), shape, t);
    if (values.size() > kMaxListedValues)
      fail(std::to_string(values.size()) + " values listed one by one; polyred folds at most " +
           std::to_string(kMaxListedValues) + " (give one value to fill the shape)");
    const Shape flat = {static_cast<int64_t>(values.size())};
    TensorId at = iota(flat, 0);
    TensorId later = constant(values.back(), t);
    for (size_t k = values.size() - 1; k-- > 0;) {
      TensorId here = apply(OpKind::Equal, {at, constant(static_cast<double>(k), DType::Int64)});
      later = add(node(OpKind::Select, {here, constant(values[k], t), later}), flat, t);
    }
    return shape == flat ? result(node(OpKind::Cast, {later}), shape, t) : reshaped(later, shape);
  }

  // ConstantOfShape: the declared shape (MindSpore infers it from the "shape" attribute,
  // or from the shape input's values, which only value inference knows).
  TupleOpOutput constantOfShape(const std::vector<TensorId>& ins) {
    if (ins.size() > 1) needInputs(ins, 1, "the shape");
    if (declared_.size() != 1) fail("has one output");
    const DeclaredOutput& out = declared_[0];
    if (const Json* v = attr(attrs_, "shape"); v && readIntList(*v, "shape") != out.shape)
      fail("attribute shape " + toString(readIntList(*v, "shape")) + " disagrees with the declared output shape " +
           toString(out.shape));
    if (!ins.empty() && numElements(info(ins[0]).shape) != static_cast<int64_t>(out.shape.size()))
      fail("the shape input has " + std::to_string(numElements(info(ins[0]).shape)) + " values for a rank-" +
           std::to_string(out.shape.size()) + " output");
    std::vector<double> values{0};
    if (const Json* v = attr(attrs_, "value")) {
      values.clear();
      if (v->is_array()) {
        for (const Json& e : *v) values.push_back(readScalarValue(e, DType::Float64, "value entry").asDouble());
      } else {
        values.push_back(readScalarValue(*v, DType::Float64, "value").asDouble());
      }
    }
    if (values.size() != 1 && static_cast<int64_t>(values.size()) != numElements(out.shape))
      fail("value has " + std::to_string(values.size()) + " entries for " + std::to_string(numElements(out.shape)) +
           " elements (give one, or one per element)");
    return listed(values, out.shape, out.dtype);
  }

  TupleOpOutput tupleGetItem(const std::vector<TensorId>& ins) {
    if (ins.empty() || ins.size() > 2) needInputs(ins, 1, "the tuple; the index as an attribute or a constant input");
    const int64_t index = intParameter("index", ins, 1, 0);
    if (index != 0)
      fail("index " + std::to_string(index) + " of a one-tensor tuple (a multi-output op's outputs are named tensors here)");
    return result(node(OpKind::Cast, {ins[0]}), info(ins[0]).shape, info(ins[0]).dtype);
  }

  // SelectGT(a, b, c, d) = a > b ? c : d (GE, LT, LE alike), broadcast as numpy's
  // where. AKG computes the choice arithmetically (a clamped, scaled a - b: 1 or 0 but
  // for differences under 2^-126, and NaN-blind); polyred compares, as AKG's own test
  // oracle does (docs/format.md).
  TupleOpOutput selectOnComparison(std::string_view name, const std::vector<TensorId>& ins) {
    needInputs(ins, 4, "a, b, the value where the comparison holds, the value where it does not");
    const OpKind compare = name == "SelectGT"   ? OpKind::Greater
                           : name == "SelectGE" ? OpKind::GreaterEqual
                           : name == "SelectLT" ? OpKind::Less
                                                : OpKind::LessEqual;
    TensorId holds = apply(compare, {ins[0], ins[1]});
    const DType t = info(ins[2]).dtype;
    return finish(node(OpKind::Select, {holds, ins[2], ins[3]}), t, t);
  }

  // The input itself: AKG's EquivFormat changes a tensor's format tag only. The declared
  // output may name another shape of the same elements (a reshape).
  TupleOpOutput equivFormat(const std::vector<TensorId>& ins) {
    needInputs(ins, 1, "the tensor");
    Shape shape = info(ins[0]).shape;
    if (declared_.size() == 1) {
      if (numElements(declared_[0].shape) != numElements(shape))
        fail("declares an output of shape " + toString(declared_[0].shape) + " for an input of shape " + toString(shape) +
             ": a format change keeps the element count");
      shape = declared_[0].shape;
    }
    return reshaped(ins[0], shape);
  }

  // AKG's AddMinValue: x + 2^-126 in float32, x + 2^-24 in float16 (each type's smallest
  // positive value AKG's hardware keeps), other types unchanged.
  TupleOpOutput addMinValue(const std::vector<TensorId>& ins) {
    needInputs(ins, 1, "the tensor");
    const DType t = info(ins[0]).dtype;
    if (t == DType::Float32) return finish(node(OpKind::Add, {ins[0], constant(0x1p-126, t)}), t, t);
    if (t == DType::Float16) return finish(node(OpKind::Add, {ins[0], constant(0x1p-24, t)}), t, t);
    return reshaped(ins[0], info(ins[0]).shape);
  }

  const std::vector<DeclaredOutput>& declared_;
};

}  // namespace

std::span<const std::string_view> layerOpNames() { return kLayerOps; }

bool isLayerOp(std::string_view name) {
  return std::find(std::begin(kLayerOps), std::end(kLayerOps), name) != std::end(kLayerOps);
}

std::vector<TupleOpOutput> expandLayerOp(std::string_view name, const std::vector<TensorId>& ins,
                                         const CompositeAttrs& attrs, const std::vector<DeclaredOutput>& declared,
                                         ExpansionSink& sink, const std::string& file, const std::string& op) {
  return LayerExpansion(sink, file, op, attrs, declared).expand(name, ins);
}

}  // namespace polyred
