// Composite JSON reader: takes composite text and gives a verified Graph (see the
// header for the error contract).
//
// An op's "attr" is a list of {"name", "value"}; null, a missing key and {} mean none
// (docs/format.md, "Attributes"). Honoured attributes: "axis" and "keep_dims"
// (reductions), "dst_type" (Cast, checked against the declared output dtype), "shape"
// (Reshape/BroadcastTo, checked against the declared output shape), "perm" (Transpose),
// "fake_output" (InplaceAssign).
// A tensor's "format" is checked to be a plain row-major one (DefaultFormat, ND, NCHW,
// ...) or FRACTAL_NZ, which only TransData may read or write (its shapes and axes are
// not the logical ones); other blocked layouts are out of scope. Every other attribute (is_backed_cast,
// enable_atomic_add, parallel_fusion_type, stitch, cross_batch, n, dyn_input_sizes,
// keep_value_node_input, ...) is a scheduling hint that does not change what is
// computed, and so are the top-level keys other than "op", "input_desc", "op_desc", "output_desc"
// and polyred's own "reductions" and "tuple_reductions" (process, platform, parallel_fusion, buffer_stitch, ...).
//
// Conventions of MindSpore's dumps that the reader follows:
// - A tensor descriptor with "value" is a constant scalar (a number, a one-element
//   list, or the strings "inf"/"-inf"/"nan" for float types), at the top level or
//   inline in an op's input_desc; one name may be given again with the same value. A
//   longer list is read only as StridedSliceOnnx's parameters (frontend/composite_descs).
// - A reduction over every axis without keep_dims declares its output as [1] where
//   polyred's IR says []: the reader reduces to [] and reshapes to [1]; the [] tensor
//   is named "<output>_rank0".
// - Reducing a rank-0 tensor reduces nothing: it is read as a Cast (a copy that takes
//   the declared output dtype), as the framework returns the input unchanged.
// - Assign(dst, value) yields value and writes it into the input dst; its result is an
//   in-place output (Output::aliasOfInput). MindSpore's InplaceAssign(x, y, z) writes y
//   into x and yields z: it is read as Assign(x, y) with a result named
//   "<output>_written", while the op's declared output name stands for z (MindSpore's
//   shape inference of InplaceAssign returns z's shape and dtype). Every write is kept:
//   one that output_desc does not list is appended after the listed outputs.
#include "frontend/composite_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

#include "frontend/builder.h"
#include "frontend/composite_expansions.h"
#include "frontend/composite_index_attrs.h"
#include "frontend/composite_index_ops.h"
#include "frontend/composite_layer_ops.h"
#include "frontend/composite_json.h"
#include "frontend/composite_declarations.h"
#include "frontend/composite_descs.h"
#include "frontend/composite_tuple_ops.h"
#include "frontend/composite_names.h"
#include "frontend/composite_plain_attrs.h"
#include "ir/symbolic_dims.h"
#include "support/error.h"
#include "support/printable.h"
#include "support/suggest.h"

namespace polyred {

namespace {

using Json = nlohmann::json;


std::string describe(DType t, const Shape& s) { return std::string(dtypeName(t)) + toString(s); }

class Reader : public ExpansionSink, CompositeAttrAccess {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  Graph read(const Json& doc) {
    if (!doc.is_object()) fail("the top level must be a JSON object");
    g_.sourceFile = file_;
    g_.name = readString(field(doc, "op"), "op");
    descs_.acceptSymbols(&g_.symbols);
    readInputs(optionalField(doc, "input_desc"));
    if (const Json* r = optionalField(doc, "reductions")) reductions_ = readReductionDeclarations(*r, file_);
    if (const Json* t = optionalField(doc, "tuple_reductions")) tuples_ = readTupleDeclarations(*t, file_);
    size_t index = 0;
    for (const Json& op : array(field(doc, "op_desc"), "op_desc")) readOp(op, index++);
    op_.clear();
    readOutputs(field(doc, "output_desc"));
    inferSymbolicDims(g_);
    g_.verify();
    return std::move(g_);
  }

 private:
  using Attrs = CompositeAttrs;

  [[noreturn]] void fail(const std::string& reason) const override { throw Error(file_, op_, reason); }
  [[noreturn]] void unsupported(const std::string& reason) const {
    throw UnsupportedError(file_, op_, reason);
  }

  // ---- tensors ----

  TensorId defineTensor(Tensor t) {
    auto id = static_cast<TensorId>(g_.tensors.size());
    if (!byName_.emplace(t.name, id).second) fail("tensor name " + quotedName(t.name) + " is defined twice");
    g_.tensors.push_back(std::move(t));
    return id;
  }

  TensorId constantFor(const TensorDesc& d) {
    if (!d.values.empty())
      unsupported("value of " + quotedName(d.name) + " has " + std::to_string(d.values.size()) +
                  " elements; polyred folds only scalar constants (lists only as StridedSliceOnnx's parameters)");
    auto it = byName_.find(d.name);
    if (it == byName_.end()) {
      Tensor t;
      t.name = d.name;
      t.shape = d.shape;
      t.dtype = d.dtype;
      t.role = TensorRole::Constant;
      t.constant = d.value;
      return defineTensor(std::move(t));
    }
    const Tensor& t = g_.tensor(it->second);
    if (t.role != TensorRole::Constant || t.shape != d.shape || t.dtype != d.dtype ||
        !t.constant->identical(*d.value))
      fail("tensor name " + quotedName(d.name) + " is given two different definitions");
    return it->second;
  }

  void checkMatches(TensorId id, const TensorDesc& d) const {
    const Tensor& t = g_.tensor(id);
    if (t.shape != d.shape || t.dtype != d.dtype)
      fail("tensor " + quotedName(d.name) + " is declared " + describe(d.dtype, d.shape) + " here but is " +
           describe(t.dtype, t.shape));
  }

  TensorId resolve(const TensorDesc& d) {
    if (d.value || !d.values.empty()) return constantFor(d);
    auto it = byName_.find(d.name);
    if (it == byName_.end())
      fail("reads tensor " + quotedName(d.name) + ", which no input or earlier op defines");
    checkMatches(it->second, d);
    checkLayout(it->second, d.fractal);
    return it->second;
  }

  // A FRACTAL_NZ tensor's axes are blocked ones: only TransData reads or writes it (its
  // graph inputs and outputs are plain memory).
  void checkLayout(TensorId id, bool fractal) {
    if (fractal) fractal_.insert(id);
    if (fractal_.count(id) && !op_.empty() && op_.rfind("TransData #", 0) != 0)
      unsupported("tensor " + quotedName(g_.tensor(id).name) + " has layout FRACTAL_NZ; only TransData reads or "
                  "writes blocked layouts");
  }

  std::string freshName(const std::string& base) const {
    std::string name = base;
    for (int k = 1; byName_.count(name); ++k) name = base + "_" + std::to_string(k);
    return name;
  }

  void readInputs(const Json* inputDesc) {
    for (const TensorDesc& d : descs_.readDescLists(inputDesc, "input_desc")) {
      if (d.value || !d.values.empty()) {
        constantFor(d);
        continue;
      }
      Tensor t;
      t.name = d.name;
      t.shape = d.shape;
      t.dtype = d.dtype;
      t.role = TensorRole::Input;
      t.symbolic = d.symbolic;
      g_.inputs.push_back(defineTensor(std::move(t)));
      checkLayout(g_.inputs.back(), d.fractal);
    }
  }

  // ---- ops ----

  // An op's "attr" is a list of {"name", "value"} objects, or, for an op without
  // attributes, missing, null or an empty object (AKG's complex-number files write
  // {}). AKG's parser reads only the list form and skips any other value; a non-empty
  // object is refused rather than skipped, as dropping an "axis" would change the result.
  Attrs readAttrs(const Json& op) const {
    Attrs attrs;
    const Json* list = optionalField(op, "attr");
    if (!list || (list->is_object() && list->empty())) return attrs;
    if (list->is_object())
      fail("attr must be a list of {\"name\", \"value\"} objects, not an object of names to values");
    for (const Json& a : array(*list, "attr")) {
      object(a, "an attr");
      std::string name = readString(field(a, "name"), "attr name");
      if (!attrs.emplace(name, &field(a, "value")).second)
        fail("attribute " + quotedName(name) + " is given twice");
    }
    return attrs;
  }
  TensorId addNode(Node n, const TensorDesc& out) {
    if (out.value) fail("output " + quotedName(out.name) + " cannot carry a constant value");
    Tensor t;
    t.name = out.name;
    t.shape = out.shape;
    t.dtype = out.dtype;
    t.producer = static_cast<int32_t>(g_.nodes.size());
    if (n.kind == OpKind::Iota) t.symbolic = out.symbolic;  // its shape is its own (ir/symbolic_dims)
    n.name = op_;
    n.output = defineTensor(std::move(t));
    checkLayout(n.output, out.fractal);
    g_.nodes.push_back(std::move(n));
    return g_.nodes.back().output;
  }

  void arity(const std::vector<TensorId>& ins, size_t want, const std::string& roles) const {
    if (ins.size() != want)
      fail("takes " + std::to_string(want) + " inputs (" + roles + "), got " + std::to_string(ins.size()));
  }

  [[noreturn]] void rejectOp(const std::string& name) const {
    if (std::optional<std::string_view> why = outOfScopeReason(name))
      unsupported(printable(name) + " is outside polyred's scope (" + std::string(*why) + ")");
    std::string near = closestName(name, acceptedOpNames());
    unsupported(printable(name) + " is outside polyred's scope (not an op polyred knows" +
                (near.empty() ? "" : "; did you mean " + near + "?") + ")");
  }

  // Every op name the reader accepts, for suggestions.
  static std::vector<std::string> acceptedOpNames() {
    std::vector<std::string> names = {"InplaceAssign", "UserReduce", "UserScan"};
    for (const CompositeOpName& o : compositeOpNames()) names.emplace_back(o.name);
    for (const CompositeReduceName& o : compositeReduceNames()) names.emplace_back(o.name);
    for (std::string_view n : expandedOpNames()) names.emplace_back(n);
    for (std::string_view n : indexOpNames()) names.emplace_back(n);
    for (std::string_view n : tupleOpNames()) names.emplace_back(n);
    for (std::string_view n : layerOpNames()) names.emplace_back(n);
    return names;
  }

  void readOp(const Json& op, size_t index) {
    op_ = "op_desc[" + std::to_string(index) + "]";
    object(op, "an op");
    const std::string name = readString(field(op, "name"), "op name");
    op_ = name + " #" + std::to_string(index);
    const CompositeReduceName* reduce = findCompositeReduce(name);
    const CompositeOpName* plain = findCompositeOp(name);
    const bool expanded = isExpandedOp(name), indexOp = isIndexOp(name), tupleOp = isTupleOp(name);
    const bool userReduce = name == "UserReduce", userScan = name == "UserScan", layerOp = isLayerOp(name);
    if (!reduce && !plain && !expanded && !indexOp && !tupleOp && !layerOp && !userReduce && !userScan &&
        name != "InplaceAssign")
      rejectOp(name);

    const Attrs attrs = readAttrs(op);
    if (name == "StridedSliceOnnx") return readStridedSliceOnnx(op);
    if (name == "StandardNormal") return readStandardNormal(op, attrs);
    std::vector<TensorId> ins;
    for (const TensorDesc& d : descs_.readDescLists(optionalField(op, "input_desc"), "input_desc"))
      ins.push_back(resolve(d));
    if (tupleOp) {
      readTupleOp(name, attrs, ins, op);
      return;
    }
    if (name == "Split") {
      readSplit(attrs, ins, op);
      return;
    }
    if (layerOp) {
      readLayerOp(name, attrs, ins, op);
      return;
    }
    const TensorDesc out = readOutputDesc(op);
    if (reduce) readReduce([&](DType in) { return builtinReduction(reduce->combiner, in, out.dtype); }, attrs, ins, out);
    else if (userReduce) readReduce([&](DType) { return declaredReduction(attrs); }, attrs, ins, out);
    else if (userScan) readUserScan(attrs, ins, out);
    else if (plain) readPlain(plain->kind, attrs, ins, out);
    else if (expanded) readExpanded(name, attrs, ins, out);
    else if (indexOp) readIndexOp(name, attrs, ins, out);
    else readInplaceAssign(attrs, ins, out);
  }

  TensorDesc readOutputDesc(const Json& op) const {
    const Json& outs = array(field(op, "output_desc"), "output_desc");
    if (outs.size() != 1) fail("must have exactly one output, has " + std::to_string(outs.size()));
    return descs_.readDesc(outs.front());
  }

  // Attributes by frontend/composite_plain_attrs; the inputs' checks here.
  void readPlain(OpKind kind, const Attrs& attrs, const std::vector<TensorId>& ins,
                 const TensorDesc& out) {
    Node n;
    n.kind = kind;
    n.inputs = ins;
    if (kind == OpKind::Assign) arity(ins, 2, "destination, value");
    if (kind == OpKind::ScatterAdd && ins.size() != 2 && ins.size() != 3)
      fail("takes 2 or 3 inputs (values, indices, optionally a base), got " + std::to_string(ins.size()));
    readPlainOpAttrs(kind, attrs, out, descs_, n, file_, op_);
    if (kind == OpKind::Gather) readGather(attrs, n);
    TensorId result = addNode(std::move(n), out);
    if (kind == OpKind::Assign) writes_.emplace_back(result, ins[0]);
  }

  // Gather(params, indices; axis): the axis as an attribute or, as MindSpore passes it,
  // a constant third input; negative counts from the end; batch_dims only 0.
  void readGather(const Attrs& attrs, Node& n) const {
    if (n.inputs.size() < 2 || n.inputs.size() > 3) arity(n.inputs, 2, "params, indices");
    int64_t axis = 0;
    if (n.inputs.size() == 3) {
      const Tensor& a = g_.tensor(n.inputs[2]);
      if (a.role != TensorRole::Constant || isFloat(a.dtype)) fail("the third input (the axis) must be an integer constant");
      axis = a.constant->i;
      n.inputs.pop_back();
    } else if (const Json* v = attr(attrs, "axis")) {
      axis = readInt(*v, "axis");
    }
    if (const Json* v = attr(attrs, "batch_dims"); v && readInt(*v, "batch_dims") != 0)
      fail("batch_dims other than 0 is not supported");
    const auto rank = static_cast<int64_t>(g_.tensor(n.inputs[0]).shape.size());
    if (axis < -rank || axis >= rank) fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    n.axes = {axis < 0 ? axis + rank : axis};
  }

  // UserReduce's "reduction": a scalar reduction declared under "reductions".
  Reduction declaredReduction(const Attrs& attrs) const {
    const std::string which = readString(required(attrs, "reduction"), "reduction");
    auto r = reductions_.find(which);
    if (r == reductions_.end()) fail("no reduction " + quotedName(which) + " is declared under \"reductions\"");
    return r->second;
  }

  // UserScan (polyred's own op): a Scan (ir/ops.h) of a reduction declared under
  // "reductions"; axis, exclusive and reverse as CumSum's.
  void readUserScan(const Attrs& attrs, const std::vector<TensorId>& ins, const TensorDesc& out) {
    arity(ins, 1, "the tensor to scan");
    const auto rank = static_cast<int64_t>(g_.tensor(ins[0]).shape.size());
    const int64_t axis = readInt(required(attrs, "axis"), "axis");
    if (axis < -rank || axis >= rank) fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    Node n;
    n.kind = OpKind::Scan;
    n.inputs = ins;
    n.axes = {axis < 0 ? axis + rank : axis};
    for (auto [flag, key] : {std::pair{&n.exclusive, "exclusive"}, std::pair{&n.reverse, "reverse"}})
      if (const Json* v = attr(attrs, key)) *flag = readBool(*v, key);
    n.reduction = declaredReduction(attrs);
    addNode(std::move(n), out);
  }

  // ReduceSum & co. and UserReduce: `reduction` gives the Reduction for the input's dtype.
  template <class ReductionOf>
  void readReduce(const ReductionOf& reduction, const Attrs& attrs, const std::vector<TensorId>& ins,
                  const TensorDesc& out) {
    arity(ins, 1, "the tensor to reduce");
    const Tensor& x = g_.tensor(ins[0]);
    Node n;
    n.inputs = ins;
    n.axes = readReductionAxes(attrs, x.shape.size(), file_, op_);
    const Json* keep = attr(attrs, "keep_dims");
    n.keepDims = keep && readBool(*keep, "keep_dims");
    if (n.axes.empty()) {
      n.kind = OpKind::Cast;  // a rank-0 input: reducing no axis copies it
    } else {
      n.kind = OpKind::Reduce;
      n.reduction = reduction(x.dtype);
    }
    const Shape shape = reducedShape(x.shape, n.axes, n.keepDims);
    const std::string mismatch = "output is declared " + toString(out.shape) + " but reducing axes " +
                                 toString(n.axes) + " of " + toString(x.shape) + " gives " + toString(shape);
    addAsDeclared(std::move(n), shape, out, freshName(out.name + "_rank0"), mismatch);
  }

  // Adds `n`, which computes `shape`, as the declared `out`. A full reduction's []
  // result that MindSpore declares [1] goes through a tensor of shape [] named
  // `scalarName` and a Reshape; any other difference fails with `mismatch`.
  void addAsDeclared(Node n, const Shape& shape, const TensorDesc& out, const std::string& scalarName,
                     const std::string& mismatch) {
    if (shape == out.shape) {
      addNode(std::move(n), out);
      return;
    }
    if (!shape.empty() || out.shape != Shape{1}) fail(mismatch);
    Node reshape;
    reshape.kind = OpKind::Reshape;
    reshape.inputs = {addNode(std::move(n), TensorDesc::plain(scalarName, {}, out.dtype))};
    addNode(std::move(reshape), out);
  }

  // ---- ops computed by expansion (frontend/composite_expansions) ----

  const Tensor& tensor(TensorId id) const override { return g_.tensor(id); }
  TensorId constant(Scalar value) override {
    Tensor c;
    c.name = freshName(op_ + " constant");
    c.dtype = value.type;
    c.role = TensorRole::Constant;
    c.constant = value;
    return defineTensor(std::move(c));
  }
  TensorId add(Node n, Shape shape, DType t) override {
    TensorDesc d = TensorDesc::plain(addedName(n), std::move(shape), t);
    return addNode(std::move(n), d);
  }
  std::string addedName(const Node& n) const { return freshName(op_ + " " + std::string(opName(n.kind))); }

  // Split: one output per part (frontend/composite_index_ops).
  void readSplit(const Attrs& attrs, const std::vector<TensorId>& ins, const Json& op) {
    const IndexOpAttrs a = readIndexOpAttrs("Split", attrs, file_, op_);
    std::vector<IndexOpResult> parts;
    try {
      parts = expandSplit(ins, a, *this, op_);
    } catch (const Error& err) {
      throw err.inFile(file_);
    }
    std::vector<TupleOpOutput> results;
    for (IndexOpResult& p : parts) results.push_back({std::move(p.last), p.shape, p.dtype});
    addTupleOutputs("Split", std::move(results), op);
  }

  // PadAkg, Pad, UnPadAkg, OneHot, ElemAny, ElemAll, Tile, Slice, StridedSlice, Concat,
  // LayoutTransform (frontend/composite_index_ops).
  void readIndexOp(const std::string& name, const Attrs& attrs, const std::vector<TensorId>& ins,
                   const TensorDesc& out) {
    IndexOpAttrs a = readIndexOpAttrs(name, attrs, file_, op_);  // all but dst_type, a dtype
    if (const Json* v = attr(attrs, "dst_type")) a.dstType = descs_.dtypeNamed(readString(*v, "dst_type"));
    expandIndexInto(name, ins, std::move(a), out);
  }

  // Inputs `from` on, which must be integer constant lists (inline values).
  std::vector<std::vector<int64_t>> constantLists(const std::vector<TensorDesc>& in, size_t from) const {
    std::vector<std::vector<int64_t>> lists;
    for (size_t k = from; k < in.size(); ++k) {
      if (!isInteger(in[k].dtype) || (!in[k].value && in[k].values.empty()))
        fail("input " + std::to_string(k) + " (" + quotedName(in[k].name) + ") must be an integer constant list");
      lists.emplace_back();
      for (const Scalar& e : in[k].values.empty() ? std::vector<Scalar>{*in[k].value} : in[k].values)
        lists.back().push_back(e.i);
    }
    return lists;
  }

  // StridedSliceOnnx(x, begin, end[, axes[, steps]]): the parameters are constant lists,
  // read as the StridedSlice they describe (composite_index_attrs).
  void readStridedSliceOnnx(const Json& op) {
    const std::vector<TensorDesc> in = descs_.readDescLists(optionalField(op, "input_desc"), "input_desc");
    if (in.size() < 3 || in.size() > 5) fail("takes 3 to 5 inputs (x, begin, end, axes, steps), got " + std::to_string(in.size()));
    const TensorId x = resolve(in[0]);
    expandIndexInto("StridedSlice", {x}, stridedSliceOnnxAttrs(g_.tensor(x).shape, constantLists(in, 1), file_, op_),
                    readOutputDesc(op));
  }

  // StandardNormal(; seed, seed2): no tensor operand; MindSpore's shape input, if
  // written, is a constant list (composite_index_ops).
  void readStandardNormal(const Json& op, const Attrs& attrs) {
    IndexOpAttrs a = readIndexOpAttrs("StandardNormal", attrs, file_, op_);
    for (std::vector<int64_t>& shape : constantLists(descs_.readDescLists(optionalField(op, "input_desc"), "input_desc"), 0))
      a.givenShapes.push_back(std::move(shape));
    expandIndexInto("StandardNormal", {}, std::move(a), readOutputDesc(op));
  }

  void expandIndexInto(const std::string& name, const std::vector<TensorId>& ins, IndexOpAttrs a, const TensorDesc& out) {
    a.declaredShape = out.shape;
    a.declaredType = out.dtype;
    if (name == "TransData" && (out.fractal != (a.dstFormat == "FRACTAL_NZ") || ins.size() != 1 ||
                                (fractal_.count(ins[0]) > 0) != (a.srcFormat == "FRACTAL_NZ")))
      fail("its input and output must be declared in the layouts src_format and dst_format name");
    IndexOpResult r;
    try {
      r = expandIndexOp(name, ins, a, *this, op_);
    } catch (const Error& err) {
      throw err.inFile(file_);
    }
    if (r.shape != out.shape || r.dtype != out.dtype)
      fail("output is declared " + std::string(dtypeName(out.dtype)) + toString(out.shape) + " but " + name +
           " computes " + std::string(dtypeName(r.dtype)) + toString(r.shape));
    addNode(std::move(r.last), out);
  }

  // ExpandDims, BiasAdd, LayerNorm, Shape, ... (frontend/composite_layer_ops).
  void readLayerOp(const std::string& name, const Attrs& attrs, const std::vector<TensorId>& ins, const Json& op) {
    std::vector<DeclaredOutput> declared;
    for (const Json& o : array(field(op, "output_desc"), "output_desc")) {
      const TensorDesc d = descs_.readDesc(o);
      declared.push_back({d.shape, d.dtype});
    }
    addTupleOutputs(name, expandLayerOp(name, ins, attrs, declared, *this, file_, op_), op);
  }

  // Argmax, Argmin, ArgMaxWithValue, ArgMinWithValue (frontend/composite_tuple_ops):
  // one Reduce node per declared output, in order.
  void readTupleOp(const std::string& name, const Attrs& attrs, const std::vector<TensorId>& ins, const Json& op) {
    TupleOpAttrs a;
    if (const Json* v = attr(attrs, "keep_dims")) a.keepDims = readBool(*v, "keep_dims");
    std::vector<TupleOpOutput> results;
    if (name == "TupleReduce") {
      const std::string which = readString(required(attrs, "reduction"), "reduction");
      auto t = tuples_.find(which);
      if (t == tuples_.end()) fail("no tuple reduction " + quotedName(which) + " is declared under \"tuple_reductions\"");
      if (ins.empty()) fail("needs at least one input");
      const std::vector<int64_t> axes = readReductionAxes(attrs, g_.tensor(ins[0]).shape.size(), file_, op_);
      try {
        results = expandDeclaredTuple(t->second, ins, axes, a.keepDims, *this, op_);
      } catch (const Error& err) {
        throw err.inFile(file_);
      }
      return addTupleOutputs(name, std::move(results), op);
    }
    if (const Json* v = attr(attrs, "axis")) a.axis = readInt(*v, "axis");
    if (const Json* v = attr(attrs, "output_type")) a.outputType = descs_.dtypeNamed(readString(*v, "output_type"));
    try {
      results = expandTupleOp(name, ins, a, *this, op_);
    } catch (const Error& err) {
      throw err.inFile(file_);
    }
    addTupleOutputs(name, std::move(results), op);
  }

  void addTupleOutputs(const std::string& name, std::vector<TupleOpOutput> results, const Json& op) {
    const Json& outs = array(field(op, "output_desc"), "output_desc");
    if (outs.size() != results.size())
      fail("must have " + std::to_string(results.size()) + " output(s), has " + std::to_string(outs.size()));
    for (size_t k = 0; k < results.size(); ++k) {
      const TensorDesc out = descs_.readDesc(outs[k]);
      TupleOpOutput& r = results[k];
      if (r.dtype != out.dtype)
        fail("output " + std::to_string(k) + " is declared " + std::string(dtypeName(out.dtype)) + " but " + name +
             " computes " + std::string(dtypeName(r.dtype)));
      const std::string mismatch = "output " + std::to_string(k) + " is declared " + toString(out.shape) + " but " +
                                   name + " computes " + toString(r.shape);
      const std::string scalarName = addedName(r.node);
      addAsDeclared(std::move(r.node), r.shape, out, scalarName, mismatch);
    }
  }

  void readExpanded(const std::string& name, const Attrs& attrs, const std::vector<TensorId>& ins,
                    const TensorDesc& out) {
    ExpansionAttrs e;
    if (!ins.empty()) {
      const Json* axis = attr(attrs, "axis");
      e.axisGiven = axis && !(axis->is_array() && axis->empty());
      e.axes = readReductionAxes(attrs, g_.tensor(ins[0]).shape.size(), file_, op_);
    }
    const Json* keep = attr(attrs, "keep_dims");
    e.keepDims = keep && readBool(*keep, "keep_dims");
    Node last;
    try {
      last = expandOp(name, ins, e, *this, op_);
    } catch (const Error& err) {
      throw err.inFile(file_);
    }
    const Shape shape = expandedShape(last, *this);
    const std::string mismatch = "output is declared " + toString(out.shape) + " but " + name + " computes " + toString(shape);
    const std::string scalarName = addedName(last);
    addAsDeclared(std::move(last), shape, out, scalarName, mismatch);
  }

  void readInplaceAssign(const Attrs& attrs, const std::vector<TensorId>& ins,
                         const TensorDesc& out) {
    arity(ins, 3, "destination, value, result");
    // Older MindSpore marks a placeholder result ("fake_output", declared [1]) that
    // need not match z; polyred has no tensor without a value to bind it to.
    const Json* fake = attr(attrs, "fake_output");
    const Tensor& z = g_.tensor(ins[2]);
    if (fake && readBool(*fake, "fake_output") && (z.shape != out.shape || z.dtype != out.dtype))
      unsupported("an InplaceAssign fake output that differs from its third input");
    const Tensor& value = g_.tensor(ins[1]);
    TensorDesc written = TensorDesc::plain(freshName(out.name + "_written"), value.shape, value.dtype);
    Node assign;
    assign.kind = OpKind::Assign;
    assign.inputs = {ins[0], ins[1]};
    writes_.emplace_back(addNode(std::move(assign), written), ins[0]);
    checkMatches(ins[2], out);
    if (!byName_.emplace(out.name, ins[2]).second)
      fail("tensor name " + quotedName(out.name) + " is defined twice");
  }

  // ---- outputs ----

  std::optional<TensorId> writeTarget(TensorId result) const {
    for (const auto& [written, dst] : writes_)
      if (written == result) return dst;
    return std::nullopt;
  }

  void readOutputs(const Json& outputDesc) {
    for (const Json& j : array(outputDesc, "output_desc")) {
      TensorDesc d = descs_.readDesc(j);
      auto it = byName_.find(d.name);
      if (it == byName_.end()) fail("output " + quotedName(d.name) + " is not defined by any input or op");
      checkMatches(it->second, d);
      if (d.fractal != (fractal_.count(it->second) > 0))
        fail("output " + quotedName(d.name) + " is declared in a layout other than the one its op gives");
      g_.outputs.push_back({it->second, writeTarget(it->second)});
    }
    for (const auto& write : writes_) {  // (result, destination); clang cannot capture a structured binding
      bool listed = std::any_of(g_.outputs.begin(), g_.outputs.end(),
                                [&](const Output& o) { return o.tensor == write.first; });
      if (!listed) g_.outputs.push_back({write.first, write.second});
    }
  }

  std::string file_;
  std::string op_;  // the op being read, for error messages
  std::set<TensorId> fractal_;  // tensors in FRACTAL_NZ (TransData's side of it)
  CompositeDescReader descs_{file_, op_};
  Graph g_;
  std::unordered_map<std::string, TensorId> byName_;
  std::vector<std::pair<TensorId, TensorId>> writes_;  // Assign result, destination input
  ReductionDeclarations reductions_;  // "reductions" (frontend/composite_declarations)
  TupleDeclarations tuples_;          // "tuple_reductions"
};

}  // namespace


Reduction builtinReduction(BuiltinCombiner c, DType in, std::optional<DType> out) {
  switch (c) {
    case BuiltinCombiner::Sum: return Reduction::sum(in, out);
    case BuiltinCombiner::Prod: return Reduction::prod(in, out);
    case BuiltinCombiner::Max: return Reduction::max(in, out);
    case BuiltinCombiner::Min: return Reduction::min(in, out);
    case BuiltinCombiner::And: return Reduction::logicalAnd(in, out);
    case BuiltinCombiner::Or: return Reduction::logicalOr(in, out);
    case BuiltinCombiner::None: break;
  }
  POLYRED_CHECK(false, "builtinReduction of a user-defined combiner");
}

Graph parseComposite(const std::string& jsonText, const std::string& fileLabel) {
  Json doc = parseCompositeJson(jsonText, fileLabel);
  // Every access above is type-checked; this guard keeps the no-foreign-exception
  // contract should a future edit miss one.
  try {
    return Reader(fileLabel).read(doc);
  } catch (const Json::exception& e) {
    throw Error(fileLabel, "", std::string("malformed composite JSON: ") + e.what());
  }
}

Graph readCompositeFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(path, "", "is a directory, not a composite file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path, "", std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(path, "", "cannot read the file");
  if (text.str().empty()) throw Error(path, "", "the file is empty");
  return parseComposite(text.str(), path);
}

}  // namespace polyred
