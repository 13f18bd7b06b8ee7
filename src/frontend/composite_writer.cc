// Composite JSON writer: takes a Graph and gives composite text (see the header).
//
// Inputs are written first in the top-level input_desc, then every constant (with its
// "value") in tensor order, so that reading back recreates the constants in the same
// order; ops repeat a constant's "value" where they use it, as MindSpore does. An
// in-place output whose tensor is not an Assign into that same input (the builder's
// outputInto) becomes an explicit Assign op, the only way the format expresses a write;
// reading back then shows that Assign node. Likewise the reader makes every Assign an
// in-place output and reads a Reduce over no axes (of a rank-0 tensor) as a Cast, so
// graphs built by hand in those shapes come back in the reader's form. Non-finite
// float constants, which JSON numbers cannot hold, are written as the strings "inf",
// "-inf" and "nan". Tuple reductions become TupleReduce ops with their declarations
// (writeTupleReduce below); a scalar reduction that is not a built-in op with the
// reader's accumulator becomes a UserReduce with its declaration under "reductions".
#include "frontend/composite_writer.h"

#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "frontend/composite_json.h"
#include "frontend/composite_names.h"
#include "frontend/composite_reader.h"
#include "frontend/composite_declarations.h"
#include "ir/tuple_reduction.h"
#include "support/error.h"
#include "support/printable.h"

namespace polyred {

namespace {

using Json = nlohmann::json;

Json attrJson(const char* name, const char* dataType, Json value) {
  return {{"data_type", dataType}, {"name", name}, {"value", std::move(value)}};
}

// The declarations written under one top-level key ("reductions", "tuple_reductions"):
// each distinct reduction (by Key) once, under its own name made unique among them (two
// may share a name, e.g. argmax over two input dtypes).
template <class Key>
class DeclarationTable {
 public:
  // The name `key` is declared under; write(name) gives a new declaration's JSON.
  template <class Write>
  std::string declare(const Key& key, const std::string& base, const Write& write) {
    if (auto it = nameOf_.find(key); it != nameOf_.end()) return it->second;
    std::string name = base;
    for (int k = 2; names_.count(name); ++k) name = base + "_" + std::to_string(k);
    list_.push_back(write(name));
    names_.insert(name);
    nameOf_.emplace(key, name);
    return name;
  }
  // Under `key` in `doc`, if any was declared.
  void writeInto(Json& doc, const char* key) {
    if (!list_.empty()) doc[key] = std::move(list_);
  }

 private:
  std::map<Key, std::string> nameOf_;
  std::set<std::string> names_;
  Json list_ = Json::array();
};

class Writer {
 public:
  explicit Writer(const Graph& g) : g_(g) {
    for (const Tensor& t : g.tensors) names_.insert(t.name);
  }

  std::string write() {
    g_.verify();
    Json doc = {{"composite", true}, {"op", g_.name}, {"platform", "AKG"}, {"process", "cuda"}};
    doc["input_desc"] = inputDescs();
    Json ops = Json::array();
    for (const Node& n : g_.nodes) {
      if (n.kind == OpKind::Reduce && n.reduction->isTuple()) writeTupleReduce(n, ops);
      else ops.push_back(nodeJson(n));
    }
    Json outs = Json::array();
    for (const Output& o : g_.outputs) outs.push_back(outputDesc(o, ops));
    doc["op_desc"] = std::move(ops);
    doc["output_desc"] = std::move(outs);
    scalarDeclarations_.writeInto(doc, "reductions");
    tupleDeclarations_.writeInto(doc, "tuple_reductions");
    try {
      return doc.dump();
    } catch (const Json::type_error& e) {
      throw Error(g_.sourceFile, "", std::string("a name is not valid UTF-8: ") + e.what());
    }
  }

 private:
  static Json desc(const std::string& name, const Shape& shape, DType t) {
    return {{"data_type", std::string(dtypeName(t))}, {"format", "DefaultFormat"}, {"shape", shape},
            {"tensor_name", name}};
  }
  Json tensorDesc(TensorId id) const {
    const Tensor& t = g_.tensor(id);
    Json d = desc(t.name, t.shape, t.dtype);
    if (t.role == TensorRole::Constant) d["value"] = scalarToJson(*t.constant);
    return d;
  }

  // MindSpore writes null, not [], for a kernel without arguments.
  Json inputDescs() const {
    Json list = Json::array();
    for (TensorId id : g_.inputs) list.push_back(Json::array({tensorDesc(id)}));
    for (size_t i = 0; i < g_.tensors.size(); ++i)
      if (g_.tensors[i].role == TensorRole::Constant)
        list.push_back(Json::array({tensorDesc(static_cast<TensorId>(i))}));
    return list.empty() ? Json(nullptr) : list;
  }

  // AddN passes its operands as one argument; every other op one per input.
  static Json opJson(std::string_view name, Json inputs, bool oneArgument, Json out, Json attrs) {
    Json args = Json::array();
    for (size_t k = 0; k < inputs.size(); ++k) {
      inputs[k]["name"] = "input_" + std::to_string(k);
      if (oneArgument) {
        if (args.empty()) args.push_back(Json::array());
        args.back().push_back(inputs[k]);
      } else {
        args.push_back(Json::array({inputs[k]}));
      }
    }
    out["name"] = "output_0";
    return {{"attr", attrs.empty() ? Json(nullptr) : std::move(attrs)}, {"impl_path", ""},
            {"input_desc", std::move(args)}, {"name", std::string(name)},
            {"output_desc", Json::array({std::move(out)})}};
  }

  Json nodeJson(const Node& n) {
    Json inputs = Json::array();
    for (TensorId id : n.inputs) inputs.push_back(tensorDesc(id));
    const Tensor& out = g_.tensor(n.output);
    Json attrs = nodeAttrs(n, out);
    std::string_view name;
    if (n.kind == OpKind::Scan) {
      name = scanName(n);
      if (name == "UserScan") attrs.push_back(attrJson("reduction", "str", declareScalarReduction(n)));
    } else if (n.kind != OpKind::Reduce) {
      name = plainName(n.kind);
    } else if (std::optional<std::string_view> builtin = builtinReduceName(n)) {
      name = *builtin;
    } else {
      name = "UserReduce";
      attrs.push_back(attrJson("reduction", "str", declareScalarReduction(n)));
    }
    return opJson(name, std::move(inputs), n.kind == OpKind::AddN, tensorDesc(n.output), std::move(attrs));
  }

  static Json nodeAttrs(const Node& n, const Tensor& out) {
    Json attrs = Json::array();
    switch (n.kind) {
      case OpKind::Cast: attrs.push_back(attrJson("dst_type", "str", std::string(dtypeName(out.dtype)))); break;
      case OpKind::Reshape:
      case OpKind::BroadcastTo: attrs.push_back(attrJson("shape", "listInt", out.shape)); break;
      case OpKind::Transpose: attrs.push_back(attrJson("perm", "listInt", n.perm)); break;
      case OpKind::Window:
        attrs.push_back(attrJson("begin", "listInt", n.begin));
        if (!n.steps.empty()) attrs.push_back(attrJson("steps", "listInt", n.steps));
        break;
      case OpKind::Iota:
      case OpKind::Gather: attrs.push_back(attrJson("axis", "int", n.axes.at(0))); break;
      case OpKind::ScatterAdd:
        if (!n.axes.empty()) attrs.push_back(attrJson("indexed_axes", "int", n.axes[0]));
        break;
      case OpKind::Scan:
        attrs.push_back(attrJson("axis", "int", n.axes.at(0)));
        attrs.push_back(attrJson("exclusive", "bool", n.exclusive));
        attrs.push_back(attrJson("reverse", "bool", n.reverse));
        break;
      case OpKind::Reduce:
        attrs.push_back(attrJson("axis", "listInt", n.axes));
        attrs.push_back(attrJson("keep_dims", "bool", n.keepDims));
        break;
      default: break;
    }
    return attrs;
  }

  static std::string_view plainName(OpKind k) {
    const CompositeOpName* o = compositeOpFor(k);
    POLYRED_CHECK(o, "no composite name for op " << opName(k));
    return o->name;
  }

  // MindSpore's CumSum / CumProd where the reader would read the scan back as it is;
  // any other scan is a UserScan of a declared reduction.
  std::string_view scanName(const Node& n) const {
    const BuiltinCombiner c = n.reduction->builtin();
    if (c != BuiltinCombiner::Sum && c != BuiltinCombiner::Prod) return "UserScan";
    const DType in = g_.tensor(n.inputs[0]).dtype, out = g_.tensor(n.output).dtype;
    const Reduction canonical = builtinReduction(c, in, in);
    const bool same = in == out && canonical.name == n.reduction->name && canonical.accType == n.reduction->accType &&
                      canonical.identity.identical(n.reduction->identity);
    return !same ? "UserScan" : c == BuiltinCombiner::Sum ? "CumSum" : "CumProd";
  }

  // Only a built-in reduction with the accumulator the reader would pick reads back
  // as itself (ReduceSum & co.); any other is declared (declareScalarReduction).
  std::optional<std::string_view> builtinReduceName(const Node& n) const {
    const Reduction& r = *n.reduction;
    BuiltinCombiner c = r.builtin();
    for (const CompositeReduceName& op : compositeReduceNames()) {
      if (op.combiner != c) continue;
      Reduction canonical = builtinReduction(c, g_.tensor(n.inputs[0]).dtype, g_.tensor(n.output).dtype);
      if (canonical.name == r.name && canonical.accType == r.accType &&
          canonical.identity.identical(r.identity))
        return op.name;
    }
    return std::nullopt;
  }

  // The name node n's scalar reduction is declared under in "reductions": one
  // declaration per distinct (name, accumulator, identity, combiner).
  std::string declareScalarReduction(const Node& n) {
    const Reduction& r = *n.reduction;
    const DType acc = r.accType;
    if (!isDeclarableAccumulator(acc))
      throw UnsupportedError(g_.sourceFile, n.name,
                             "reduction " + quotedName(r.name) + " accumulates in " + std::string(dtypeName(acc)) +
                                 "; " + kDeclarableAccumulators);
    const std::string key = r.name + "|" + std::string(dtypeName(acc)) + "|" + r.identity.toString() + "|" +
                            toString(*r.combiner);
    try {
      return scalarDeclarations_.declare(
          key, r.name, [&](const std::string& name) { return writeReductionDeclaration(r, name); });
    } catch (const UnsupportedError& e) {
      throw UnsupportedError(g_.sourceFile, n.name, e.reason());
    }
  }

  // A tuple reduction is one TupleReduce op (frontend/composite_tuple_ops.h) for the
  // Reduce nodes that share its tuple, inputs, axes and keep_dims (one per result; a
  // repeated result gets an op of its own), written where the first of them is: one
  // output per result, in order. A result no node takes gets an
  // output of its own (reading back adds its node, unused); a node that casts its
  // result to another dtype (argmax's int64 index carried in int32) reads its result
  // through a Cast.
  void writeTupleReduce(const Node& first, Json& ops) {
    if (writtenTupleNodes_.count(&first)) return;  // with an earlier node of its group
    const TupleReduction& t = *first.reduction->tuple;
    std::vector<const Node*> byResult(t.results.size(), nullptr);
    for (const Node& n : g_.nodes) {
      if (n.kind != OpKind::Reduce || n.reduction->tuple.get() != &t || n.inputs != first.inputs ||
          n.axes != first.axes || n.keepDims != first.keepDims)
        continue;
      const Node*& slot = byResult.at(static_cast<size_t>(n.reduction->result));
      if (slot || writtenTupleNodes_.count(&n)) continue;  // a second node of one result: an op of its own
      slot = &n;
      writtenTupleNodes_.insert(&n);
    }
    const Shape& shape = g_.tensor(first.output).shape;
    Json inputs = Json::array(), outputs = Json::array(), casts = Json::array();
    for (TensorId id : first.inputs) inputs.push_back(tensorDesc(id));
    for (size_t r = 0; r < t.results.size(); ++r) {
      const DType type = tupleResultType(t, static_cast<int>(r));
      const Node* n = byResult[r];
      if (n && g_.tensor(n->output).dtype == type) {
        outputs.push_back(tensorDesc(n->output));
        continue;
      }
      Json result = desc(freshName((n ? g_.tensor(n->output).name + "_" : "") + t.results[r].name), shape, type);
      outputs.push_back(result);
      if (!n) continue;
      const std::string to(dtypeName(g_.tensor(n->output).dtype));
      casts.push_back(opJson("Cast", Json::array({result}), false, tensorDesc(n->output),
                             Json::array({attrJson("dst_type", "str", to)})));
    }
    for (size_t k = 0; k < outputs.size(); ++k) outputs[k]["name"] = "output_" + std::to_string(k);
    const std::string declared = tupleDeclarations_.declare(
        &t, t.name, [&](const std::string& name) { return writeTupleDeclaration(t, name); });
    Json attrs = Json::array({attrJson("reduction", "str", declared), attrJson("axis", "listInt", first.axes),
                              attrJson("keep_dims", "bool", first.keepDims)});
    Json op = opJson("TupleReduce", std::move(inputs), false, Json::object(), std::move(attrs));
    op["output_desc"] = std::move(outputs);
    ops.push_back(std::move(op));
    for (Json& c : casts) ops.push_back(std::move(c));
  }

  Json outputDesc(const Output& o, Json& ops) {
    if (!o.aliasOfInput || isAssignInto(o.tensor, *o.aliasOfInput)) return tensorDesc(o.tensor);
    const Tensor& value = g_.tensor(o.tensor);
    const std::string written = freshName(value.name + "_written");
    Json out = desc(written, value.shape, value.dtype);
    Json inputs = Json::array({tensorDesc(*o.aliasOfInput), tensorDesc(o.tensor)});
    ops.push_back(opJson("Assign", std::move(inputs), false, out, Json::array()));
    return out;
  }

  bool isAssignInto(TensorId result, TensorId dst) const {
    const Node* n = g_.producer(result);
    return n && n->kind == OpKind::Assign && n->inputs[0] == dst;
  }

  std::string freshName(const std::string& base) {
    std::string name = base;
    for (int k = 1; names_.count(name); ++k) name = base + "_" + std::to_string(k);
    names_.insert(name);
    return name;
  }

  const Graph& g_;
  std::set<const Node*> writtenTupleNodes_;  // Reduce nodes whose TupleReduce op is written
  DeclarationTable<std::string> scalarDeclarations_;  // keyed by declareScalarReduction
  DeclarationTable<const TupleReduction*> tupleDeclarations_;
  std::set<std::string> names_;
};

}  // namespace

std::string writeComposite(const Graph& g) { return Writer(g).write(); }

}  // namespace polyred
