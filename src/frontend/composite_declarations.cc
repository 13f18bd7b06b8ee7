#include "frontend/composite_declarations.h"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "frontend/composite_json.h"
#include "frontend/composite_names.h"
#include "ir/reduction_laws.h"
#include "support/error.h"
#include "support/printable.h"

namespace polyred {

namespace {

using Json = nlohmann::json;

// Reads one declaration: a tuple's (operands a<k>, b<k>, in<m>) or, with `scalar`, a
// scalar combiner's (operands a, b).
class DeclReader {
 public:
  DeclReader(const std::string& file, std::string where, bool scalar = false)
      : file_(file), where_(std::move(where)), scalar_(scalar) {}

  [[noreturn]] void fail(const std::string& reason) const { throw Error(file_, where_, reason); }

  const Json& field(const Json& j, const char* key) const {
    if (!j.is_object()) fail("expected an object with \"" + std::string(key) + "\"");
    auto it = j.find(key);
    if (it == j.end()) fail("needs \"" + std::string(key) + "\"");
    return *it;
  }

  std::string str(const Json& j, const std::string& what) const {
    if (!j.is_string()) fail(what + " must be a string");
    return j.get<std::string>();
  }

  DType dtype(const Json& j, const std::string& what) const {
    std::string s = str(j, what);
    std::optional<DType> t = parseDType(s);
    if (!t) fail(what + ": unknown data type " + quotedName(s));
    return *t;
  }

  Scalar value(const Json& j, DType t, const std::string& what) const {
    if (std::optional<Scalar> v = scalarFromJson(j, t)) return *v;
    fail(what + " must be a number (or \"inf\", \"-inf\", \"nan\" for a float type)");
  }

  // "a3", "b0", "in1"; a scalar combiner's "a", "b"
  ScalarExprPtr operand(const std::string& s, const std::string& what) const {
    if (scalar_) {
      if (s != "a" && s != "b") fail(what + ": operand " + quotedName(s) + " is not a or b");
      return ScalarExpr::argument(s == "a" ? 0 : 1);
    }
    int side = -1;
    size_t digits = 0;
    if (s.rfind("in", 0) == 0) side = 2, digits = 2;
    else if (!s.empty() && s[0] == 'a') side = 0, digits = 1;
    else if (!s.empty() && s[0] == 'b') side = 1, digits = 1;
    const std::string number = side < 0 ? "" : s.substr(digits);
    if (number.empty() || number.size() > 4 || number.find_first_not_of("0123456789") != std::string::npos)
      fail(what + ": operand " + quotedName(s) + " is not a<k>, b<k> or in<k>");
    return ScalarExpr::tupleArg(side, std::stoi(number));
  }

  ScalarExprPtr expr(const Json& j, const std::string& what, int depth = 0) const {
    if (depth > 64) fail(what + ": expression nested too deeply");
    if (j.is_string()) return operand(j.get<std::string>(), what);
    if (j.is_object()) {
      DType t = dtype(field(j, "data_type"), what + " constant's data_type");
      return ScalarExpr::constant(value(field(j, "value"), t, what + " constant"));
    }
    if (!j.is_array() || j.empty())
      fail(what + " must be an operand string, a constant object or [op, operands...]");
    const std::string name = str(j[0], what + " op name");
    const CompositeOpName* op = findCompositeOp(name);
    if (!op || !isElementwise(op->kind) || op->kind == OpKind::Cast || op->kind == OpKind::AddN ||
        op->kind == OpKind::Assign)
      fail(what + ": " + quotedName(name) + " is not an elementwise op a reduction's expression can use");
    std::vector<ScalarExprPtr> operands;
    for (size_t k = 1; k < j.size(); ++k) operands.push_back(expr(j[k], what, depth + 1));
    // TupleReduction::validate checks a tuple's arity with the operand types; a scalar
    // combiner's is checked here (every value has the accumulator's type).
    if (operands.size() > 3 || (scalar_ && expressionArity(op->kind) != static_cast<int>(operands.size())))
      fail(what + ": " + name + " with " + std::to_string(operands.size()) + " operands");
    auto e = std::make_shared<ScalarExpr>();
    e->kind = ScalarExpr::Kind::Op;
    e->op = op->kind;
    e->operands = std::move(operands);
    return e;
  }

  // {"name": ..., "data_type": ..., "identity": ..., "combine": [...]}
  Reduction readScalar(const Json& d) const {
    Reduction r;
    r.name = str(field(d, "name"), "name");
    r.accType = dtype(field(d, "data_type"), "data_type");
    if (!isDeclarableAccumulator(r.accType))
      fail("data_type " + std::string(dtypeName(r.accType)) + ": " + kDeclarableAccumulators);
    r.identity = value(field(d, "identity"), r.accType, "identity");
    r.combiner = expr(field(d, "combine"), "combine");
    if (usesPredicate(*r.combiner) && !isFloat(r.accType))
      fail("combine: IsNan, IsInf and IsFinite need a float data_type");
    try {
      checkCombinerLaws(r, r.accType, r.name);
    } catch (const Error& e) {
      fail(e.reason());
    }
    return r;
  }

  std::shared_ptr<const TupleReduction> readTuple(const Json& d) const {
    auto t = std::make_shared<TupleReduction>();
    t->name = str(field(d, "name"), "name");
    const Json& inputs = field(d, "inputs");
    if (!inputs.is_array()) fail("\"inputs\" must be a list of data types");
    for (const Json& i : inputs) t->inputs.push_back(dtype(i, "an input"));
    if (auto c = d.find("commutative"); c != d.end()) {
      if (!c->is_boolean()) fail("\"commutative\" must be true or false");
      t->commutative = c->get<bool>();
    } else {
      fail("needs \"commutative\" (true or false): polyred does not guess it");
    }
    const Json& fields = field(d, "fields");
    if (!fields.is_array()) fail("\"fields\" must be a list");
    for (const Json& f : fields) {
      TupleField x;
      x.name = str(field(f, "name"), "a field's name");
      const std::string what = "field " + quotedName(x.name);
      x.dtype = dtype(field(f, "data_type"), what + "'s data_type");
      x.identity = value(field(f, "identity"), x.dtype, what + "'s identity");
      x.lift = expr(field(f, "lift"), what + "'s lift");
      x.combine = expr(field(f, "combine"), what + "'s combine");
      t->fields.push_back(std::move(x));
    }
    const Json& results = field(d, "results");
    if (!results.is_array()) fail("\"results\" must be a list");
    for (const Json& r : results) {
      TupleResult x;
      x.name = str(field(r, "name"), "a result's name");
      x.finalize = expr(field(r, "value"), "result " + quotedName(x.name));
      t->results.push_back(std::move(x));
    }
    try {
      t->validate(t->name);
      checkTupleLaws(*t, t->name);
    } catch (const Error& e) {
      fail(e.reason());
    }
    return t;
  }

 private:
  static bool usesPredicate(const ScalarExpr& e) {
    if (e.kind != ScalarExpr::Kind::Op) return false;
    if (isPredicate(e.op)) return true;
    for (const ScalarExprPtr& o : e.operands)
      if (usesPredicate(*o)) return true;
    return false;
  }

  const std::string& file_;
  std::string where_;
  bool scalar_;
};

}  // namespace

TupleDeclarations readTupleDeclarations(const nlohmann::json& list, const std::string& file) {
  if (!list.is_array()) throw Error(file, "tuple_reductions", "must be a list of declarations");
  TupleDeclarations decls;
  for (size_t k = 0; k < list.size(); ++k) {
    DeclReader r(file, "tuple_reductions[" + std::to_string(k) + "]");
    std::shared_ptr<const TupleReduction> t = r.readTuple(list[k]);
    if (!decls.emplace(t->name, t).second) r.fail("tuple reduction " + quotedName(t->name) + " is declared twice");
  }
  return decls;
}

bool isDeclarableAccumulator(DType t) {
  return t == DType::Int32 || t == DType::Int64 || t == DType::Float32 || t == DType::Float64;
}

ReductionDeclarations readReductionDeclarations(const nlohmann::json& list, const std::string& file) {
  if (!list.is_array()) throw Error(file, "reductions", "must be a list of declarations");
  ReductionDeclarations decls;
  for (size_t k = 0; k < list.size(); ++k) {
    DeclReader r(file, "reductions[" + std::to_string(k) + "]", /*scalar=*/true);
    Reduction red = r.readScalar(list[k]);
    const std::string name = red.name;
    if (!decls.emplace(name, std::move(red)).second) r.fail("reduction " + quotedName(name) + " is declared twice");
  }
  return decls;
}

namespace {

// `scalar`: a scalar combiner's operands are "a" and "b".
Json exprJson(const ScalarExpr& e, const std::string& where, bool scalar = false) {
  switch (e.kind) {
    case ScalarExpr::Kind::Arg:
      if (scalar) return e.arg == 0 ? "a" : "b";
      return (e.arg == 0 ? "a" : e.arg == 1 ? "b" : "in") + std::to_string(e.field);
    case ScalarExpr::Kind::Const:
      return {{"data_type", std::string(dtypeName(e.value.type))}, {"value", scalarToJson(e.value)}};
    case ScalarExpr::Kind::Op: {
      const CompositeOpName* op = compositeOpFor(e.op);
      if (!op) throw UnsupportedError("", where, std::string("op ") + std::string(opName(e.op)) + " has no composite name");
      Json list = Json::array({std::string(op->name)});
      for (const ScalarExprPtr& o : e.operands) list.push_back(exprJson(*o, where, scalar));
      return list;
    }
  }
  POLYRED_CHECK(false, "unknown expression kind");
}

}  // namespace

Json writeTupleDeclaration(const TupleReduction& t, const std::string& name) {
  const std::string where = "tuple reduction " + quotedName(name);
  Json inputs = Json::array(), fields = Json::array(), results = Json::array();
  for (DType i : t.inputs) inputs.push_back(std::string(dtypeName(i)));
  for (const TupleField& f : t.fields)
    fields.push_back({{"name", f.name}, {"data_type", std::string(dtypeName(f.dtype))},
                      {"identity", scalarToJson(f.identity)}, {"lift", exprJson(*f.lift, where)},
                      {"combine", exprJson(*f.combine, where)}});
  for (const TupleResult& r : t.results) results.push_back({{"name", r.name}, {"value", exprJson(*r.finalize, where)}});
  return {{"name", name}, {"inputs", std::move(inputs)}, {"commutative", t.commutative},
          {"fields", std::move(fields)}, {"results", std::move(results)}};
}

Json writeReductionDeclaration(const Reduction& r, const std::string& name) {
  return {{"name", name}, {"data_type", std::string(dtypeName(r.accType))}, {"identity", scalarToJson(r.identity)},
          {"combine", exprJson(*r.combiner, "reduction " + quotedName(name), /*scalar=*/true)}};
}

}  // namespace polyred
