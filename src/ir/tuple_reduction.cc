#include "ir/tuple_reduction.h"

#include <cmath>
#include <limits>
#include <sstream>

#include <array>

#include "support/error.h"
#include "support/printable.h"

namespace polyred {

namespace {

bool allowedFieldType(DType t) {
  return t == DType::Bool || t == DType::Int32 || t == DType::Int64 || t == DType::Float32 || t == DType::Float64;
}

// The result type of `op` over operands of `types`, and the type its operands are
// converted to (Select: that of its branches; its condition is bool).
struct OpTyping {
  DType result;
  DType operand;
};
OpTyping typeOp(OpKind op, std::span<const DType> types, bool widen) {
  if (op == OpKind::Select) {
    DType t = promoteTupleTypes(types[1], types[2], widen);
    return {t, t};
  }
  DType t = types[0];
  for (DType u : types) t = promoteTupleTypes(t, u, widen);
  if (isPredicate(op)) return {DType::Bool, types[0]};
  if (isLogical(op)) return {DType::Bool, DType::Bool};
  if (isComparison(op)) return {DType::Bool, t};
  if (isFloatMath(op)) t = promoteTupleTypes(t, DType::Float32, widen);
  return {t, t};
}

// One evaluation (a lift, a combine, a finalize): the operands, and the values of the
// subexpressions that several parents share (argmax's "a wins" condition decides both
// fields; logsumexp's comparison picks three values), computed once per evaluation:
// the reference folds every element through here, and the trees are evaluated by
// recursion.
struct Env {
  std::span<const Scalar> side[3];
  bool widen = false;
  std::vector<std::pair<const ScalarExpr*, Scalar>> shared;
};

Scalar eval(const ScalarExpr& e, Env& env);

// A shared subexpression's value, from the evaluation's memo after its first use.
Scalar evalOperand(const ScalarExprPtr& o, Env& env) {
  if (o.use_count() < 2 || o->kind != ScalarExpr::Kind::Op) return eval(*o, env);
  for (const auto& [node, value] : env.shared)
    if (node == o.get()) return value;
  Scalar v = eval(*o, env);
  env.shared.emplace_back(o.get(), v);
  return v;
}

Scalar eval(const ScalarExpr& e, Env& env) {
  switch (e.kind) {
    case ScalarExpr::Kind::Arg: {
      const Scalar& v = env.side[e.arg][static_cast<size_t>(e.field)];
      return v.castTo(widenedTupleType(v.type, env.widen));
    }
    case ScalarExpr::Kind::Const: return e.value.castTo(widenedTupleType(e.value.type, env.widen));
    case ScalarExpr::Kind::Op: {
      std::array<Scalar, 3> vals;
      std::array<DType, 3> types;
      for (size_t k = 0; k < e.operands.size(); ++k) {
        vals[k] = evalOperand(e.operands[k], env);
        types[k] = vals[k].type;
      }
      std::span<const DType> ts(types.data(), e.operands.size());
      OpTyping typing = typeOp(e.op, ts, env.widen);
      for (size_t k = 0; k < e.operands.size(); ++k)
        vals[k] = vals[k].castTo(e.op == OpKind::Select && k == 0 ? DType::Bool : typing.operand);
      return evalElementwise(e.op, std::span<const Scalar>(vals.data(), e.operands.size()), typing.result);
    }
  }
  POLYRED_CHECK(false, "bad tuple expression");
}

// Checks one expression: operands on the allowed sides, ops and arities; gives its type.
std::string str(const ScalarExpr& e) {
  switch (e.kind) {
    case ScalarExpr::Kind::Arg:
      return e.arg == 2 ? "in" + std::to_string(e.field) : std::string(e.arg == 0 ? "a" : "b") + ".f" + std::to_string(e.field);
    case ScalarExpr::Kind::Const: return e.value.toString();
    case ScalarExpr::Kind::Op: {
      std::string s(opName(e.op));
      s += "(";
      for (size_t i = 0; i < e.operands.size(); ++i) s += (i ? ", " : "") + str(*e.operands[i]);
      return s + ")";
    }
  }
  return "?";
}

DType check(const ScalarExpr& e, const std::vector<DType> sides[3], bool allowed[3], const std::string& where) {
  switch (e.kind) {
    case ScalarExpr::Kind::Arg: {
      if (e.arg < 0 || e.arg > 2 || !allowed[e.arg])
        throw Error("", "", where + ": operand " + str(e) + " is not available here");
      if (e.field < 0 || static_cast<size_t>(e.field) >= sides[e.arg].size())
        throw Error("", "", where + ": operand " + str(e) + " names a missing " +
                                   (e.arg == 2 ? "input" : "field"));
      return sides[e.arg][static_cast<size_t>(e.field)];
    }
    case ScalarExpr::Kind::Const: return e.value.type;
    case ScalarExpr::Kind::Op: {
      if (!isElementwise(e.op) || expressionArity(e.op) != static_cast<int>(e.operands.size()))
        throw Error("", "", where + ": " + std::string(opName(e.op)) + " with " + std::to_string(e.operands.size()) +
                                   " operands cannot appear in a tuple reduction");
      std::vector<DType> types;
      for (const ScalarExprPtr& o : e.operands) types.push_back(check(*o, sides, allowed, where));
      if (isPredicate(e.op) && !isFloat(types[0]))
        throw Error("", "", where + ": " + std::string(opName(e.op)) + " needs a float operand");
      return typeOp(e.op, types, false).result;
    }
  }
  return DType::Bool;
}

// a.f0, b.f1, in0: every operand names its side and field.
ScalarExprPtr arg(int side, int field) { return ScalarExpr::tupleArg(side, field); }
ScalarExprPtr op(OpKind k, std::vector<ScalarExprPtr> xs) { return ScalarExpr::apply(k, std::move(xs)); }
ScalarExprPtr cst(Scalar v) { return ScalarExpr::constant(v); }

}  // namespace

DType promoteTupleTypes(DType a, DType b, bool widen) {
  if (a == DType::Float64 || b == DType::Float64) return DType::Float64;
  if (isFloat(a) || isFloat(b)) return widen ? DType::Float64 : DType::Float32;
  if (a == DType::Int64 || b == DType::Int64) return DType::Int64;
  return DType::Int32;
}

TupleOpTyping tupleOpTyping(OpKind op, std::span<const DType> types, bool widen) {
  OpTyping t = typeOp(op, types, widen);
  return {t.result, t.operand};
}

DType tupleExprType(const ScalarExpr& e, std::span<const DType> a, std::span<const DType> b, std::span<const DType> in) {
  switch (e.kind) {
    case ScalarExpr::Kind::Arg: return (e.arg == 0 ? a : e.arg == 1 ? b : in)[static_cast<size_t>(e.field)];
    case ScalarExpr::Kind::Const: return e.value.type;
    case ScalarExpr::Kind::Op: {
      std::vector<DType> types;
      for (const ScalarExprPtr& o : e.operands) types.push_back(tupleExprType(*o, a, b, in));
      return typeOp(e.op, types, false).result;
    }
  }
  return DType::Bool;
}

void TupleReduction::validate(const std::string& where) const {
  if (fields.empty()) throw Error("", where, "a tuple reduction needs at least one field");
  if (results.empty()) throw Error("", where, "a tuple reduction needs at least one result");
  if (inputs.empty()) throw Error("", where, "a tuple reduction needs at least one element input");
  std::vector<DType> f;
  for (const TupleField& x : fields) {
    if (!allowedFieldType(x.dtype))
      throw Error("", where, "field " + quotedName(x.name) + " is " + std::string(dtypeName(x.dtype)) +
                                 "; tuple fields are bool, int32, int64, float32 or float64");
    if (!x.lift || !x.combine) throw Error("", where, "field " + quotedName(x.name) + " lacks a lift or a combine");
    if ((x.combineLater != nullptr) != hasCombineLater())
      throw Error("", where, "field " + quotedName(x.name) + ": a later-combine is given for every field or for none");
    f.push_back(x.dtype);
  }
  const std::vector<DType> liftSides[3] = {{}, {}, inputs};
  const std::vector<DType> combineSides[3] = {f, f, {}};
  bool liftAllowed[3] = {false, false, true}, combineAllowed[3] = {true, true, false}, finalAllowed[3] = {true, false, false};
  for (const TupleField& x : fields) {
    check(*x.lift, liftSides, liftAllowed, "the lift of field " + quotedName(x.name));
    check(*x.combine, combineSides, combineAllowed, "the combine of field " + quotedName(x.name));
    if (x.combineLater)
      check(*x.combineLater, combineSides, combineAllowed, "the later-combine of field " + quotedName(x.name));
  }
  for (const TupleResult& r : results) {
    if (!r.finalize) throw Error("", where, "result " + quotedName(r.name) + " lacks an expression");
    check(*r.finalize, combineSides, finalAllowed, "result " + quotedName(r.name));
  }
}

std::string TupleReduction::toString() const {
  std::ostringstream os;
  os << "tuple " << name << (commutative ? "" : " (ordered)") << " {";
  for (size_t k = 0; k < fields.size(); ++k) {
    const TupleField& x = fields[k];
    os << (k ? "; " : " ") << "f" << k << " " << x.name << ":" << dtypeName(x.dtype) << " = "
       << x.identity.toString() << ", lift " << str(*x.lift) << ", combine "
       << str(*x.combine);
    if (x.combineLater) os << ", later " << str(*x.combineLater);
  }
  for (size_t r = 0; r < results.size(); ++r)
    os << "; result " << results[r].name << " = " << str(*results[r].finalize);
  return os.str() + " }";
}

TupleValue tupleIdentity(const TupleReduction& t, bool widen) {
  TupleValue v;
  for (const TupleField& x : t.fields) v.push_back(x.identity.castTo(widenedTupleType(x.dtype, widen)));
  return v;
}

TupleValue liftTuple(const TupleReduction& t, std::span<const Scalar> inputs, bool widen) {
  Env env{{{}, {}, inputs}, widen, {}};
  TupleValue v;
  for (const TupleField& x : t.fields) v.push_back(eval(*x.lift, env).castTo(widenedTupleType(x.dtype, widen)));
  return v;
}

TupleValue combineTuples(const TupleReduction& t, const TupleValue& a, const TupleValue& b, bool widen) {
  Env env{{a, b, {}}, widen, {}};
  TupleValue v;
  v.reserve(t.fields.size());
  for (const TupleField& x : t.fields) v.push_back(eval(*x.combine, env).castTo(widenedTupleType(x.dtype, widen)));
  return v;
}

TupleValue combineLaterTuples(const TupleReduction& t, const TupleValue& a, const TupleValue& b, bool widen) {
  POLYRED_CHECK(t.hasCombineLater(), "tuple " << t.name << " has no later-combine");
  Env env{{a, b, {}}, widen, {}};
  TupleValue v;
  v.reserve(t.fields.size());
  for (const TupleField& x : t.fields) v.push_back(eval(*x.combineLater, env).castTo(widenedTupleType(x.dtype, widen)));
  return v;
}

Scalar finalizeTuple(const TupleReduction& t, const TupleValue& total, int result, bool widen) {
  Env env{{total, {}, {}}, widen, {}};
  return eval(*t.results.at(static_cast<size_t>(result)).finalize, env);
}

DType tupleResultType(const TupleReduction& t, int result) {
  std::vector<DType> f;
  for (const TupleField& x : t.fields) f.push_back(x.dtype);
  return tupleExprType(*t.results.at(static_cast<size_t>(result)).finalize, f, {}, t.inputs);
}

// ---- Built-in tuple reductions ----------------------------------------------------

DType argIndexType(DType index, int64_t extent) {
  return index == DType::Int64 && extent < std::numeric_limits<int32_t>::max() ? DType::Int32 : index;
}

std::shared_ptr<const TupleReduction> argExtremumTuple(bool max, DType in, DType output, int64_t extent) {
  POLYRED_CHECK(output == DType::Int32 || output == DType::Int64, "argmax/argmin index must be int32 or int64");
  const DType index = argIndexType(output, extent);
  auto t = std::make_shared<TupleReduction>();
  t->name = max ? "argmax" : "argmin";
  t->inputs = {in, index};
  const DType v = defaultAccType(in);
  ScalarExprPtr av = arg(0, 0), ai = arg(0, 1), bv = arg(1, 0), bi = arg(1, 1);
  ScalarExprPtr better = op(max ? OpKind::Greater : OpKind::Less, {av, bv});
  ScalarExprPtr tie = op(OpKind::Equal, {av, bv});
  ScalarExprPtr first = op(OpKind::Less, {ai, bi});
  // With every element of b after a's, a tie or two NaNs keep a: b wins only where it
  // is strictly better, or NaN while a is not.
  ScalarExprPtr laterWins = op(max ? OpKind::Greater : OpKind::Less, {bv, av});
  ScalarExprPtr pickA;
  if (isFloat(v)) {
    ScalarExprPtr aNan = op(OpKind::IsNan, {av}), bNan = op(OpKind::IsNan, {bv});
    ScalarExprPtr nanWins = op(OpKind::LogicalAnd, {aNan, op(OpKind::LogicalNot, {bNan})});
    tie = op(OpKind::LogicalOr, {tie, op(OpKind::LogicalAnd, {aNan, bNan})});
    pickA = op(OpKind::LogicalOr, {op(OpKind::LogicalOr, {nanWins, better}), op(OpKind::LogicalAnd, {tie, first})});
    // "b better or NaN" as one unordered compare, not (b <= a) for max, where "b > a or b
    // is NaN" took two (a NaN a is ruled out first). The whole-vector tree runs it V - 1
    // times per vector. (The same form in the combine made its PTX longer.)
    ScalarExprPtr betterOrNan = op(OpKind::LogicalNot, {op(max ? OpKind::LessEqual : OpKind::GreaterEqual, {bv, av})});
    laterWins = op(OpKind::LogicalAnd, {op(OpKind::LogicalNot, {aNan}), betterOrNan});
  } else {
    pickA = op(OpKind::LogicalOr, {better, op(OpKind::LogicalAnd, {tie, first})});
  }
  Scalar worst;
  if (isFloat(v)) worst = Scalar::ofFloat(v, max ? -INFINITY : INFINITY);
  else {
    IntRange r = intRange(in == DType::Bool ? DType::Bool : in);
    worst = Scalar::ofInt(v, max ? r.lo : r.hi);
  }
  const int64_t lastIndex = index == DType::Int32 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max();
  t->fields.push_back({"value", v, worst, arg(2, 0), op(OpKind::Select, {pickA, av, bv}), op(OpKind::Select, {laterWins, bv, av})});
  t->fields.push_back({"index", index, Scalar::ofInt(index, lastIndex), arg(2, 1), op(OpKind::Select, {pickA, ai, bi}),
                       op(OpKind::Select, {laterWins, bi, ai})});
  t->results.push_back({"index", ai});
  t->results.push_back({"value", av});
  t->commutative = true;  // a total order: NaN above all numbers, ties broken by index
  return t;
}

std::shared_ptr<const TupleReduction> welfordTuple(DType in, int64_t correction) {
  auto t = std::make_shared<TupleReduction>();
  t->name = "welford";
  t->inputs = {in};
  const DType f = in == DType::Float64 ? DType::Float64 : DType::Float32;
  auto c = [f](double x) { return cst(Scalar::ofFloat(f, x)); };
  ScalarExprPtr na = arg(0, 0), ma = arg(0, 1), qa = arg(0, 2), nb = arg(1, 0), mb = arg(1, 1), qb = arg(1, 2);
  ScalarExprPtr n = op(OpKind::Add, {na, nb});
  ScalarExprPtr empty = op(OpKind::Equal, {n, c(0)});
  ScalarExprPtr delta = op(OpKind::Sub, {mb, ma});
  // share = nb / n;  mean = ma + delta * share;  m2 = qa + qb + delta^2 * (na * share)
  // (Chan et al.). One division per combine: folding one element into a thread's
  // accumulator is a chain of these, and a division is the longest step in it.
  ScalarExprPtr share = op(OpKind::Div, {nb, n});
  ScalarExprPtr mean = op(OpKind::Add, {ma, op(OpKind::Mul, {delta, share})});
  ScalarExprPtr cross = op(OpKind::Mul, {op(OpKind::Mul, {delta, delta}), op(OpKind::Mul, {na, share})});
  ScalarExprPtr m2 = op(OpKind::Add, {op(OpKind::Add, {qa, qb}), cross});
  t->fields.push_back({"count", f, Scalar::ofFloat(f, 0), c(1), n});
  t->fields.push_back({"mean", f, Scalar::ofFloat(f, 0), arg(2, 0), op(OpKind::Select, {empty, ma, mean})});
  t->fields.push_back({"m2", f, Scalar::ofFloat(f, 0), c(0), op(OpKind::Select, {empty, qa, m2})});
  t->results.push_back({"variance", op(OpKind::Div, {arg(0, 2), op(OpKind::Sub, {arg(0, 0), c(static_cast<double>(correction))})})});
  t->results.push_back({"mean", arg(0, 1)});
  return t;
}

std::shared_ptr<const TupleReduction> logSumExpTuple(DType in) {
  auto t = std::make_shared<TupleReduction>();
  t->name = "logsumexp";
  t->inputs = {in};
  const DType f = in == DType::Float64 ? DType::Float64 : DType::Float32;
  ScalarExprPtr ma = arg(0, 0), sa = arg(0, 1), mb = arg(1, 0), sb = arg(1, 1);
  ScalarExprPtr m = op(OpKind::Maximum, {ma, mb});
  // sum = hi.sum + lo.sum * exp(lo.max - hi.max): one Exp per combine, the larger side
  // keeping its sum as is. Equal maxima add up directly (two empty sides would give
  // -inf - -inf = NaN); a NaN max makes the exponent NaN, hence the sum.
  ScalarExprPtr aHigher = op(OpKind::GreaterEqual, {ma, mb});
  ScalarExprPtr hiSum = op(OpKind::Select, {aHigher, sa, sb}), loSum = op(OpKind::Select, {aHigher, sb, sa});
  ScalarExprPtr loMax = op(OpKind::Select, {aHigher, mb, ma});  // a NaN max reaches m, hence the sum
  ScalarExprPtr rescaled = op(OpKind::Mul, {loSum, op(OpKind::Exp, {op(OpKind::Sub, {loMax, m})})});
  ScalarExprPtr sum = op(OpKind::Select, {op(OpKind::Equal, {ma, mb}), op(OpKind::Add, {sa, sb}), op(OpKind::Add, {hiSum, rescaled})});
  t->fields.push_back({"max", f, Scalar::ofFloat(f, -INFINITY), arg(2, 0), m});
  t->fields.push_back({"sum", f, Scalar::ofFloat(f, 0), cst(Scalar::ofFloat(f, 1)), sum});
  t->results.push_back({"logsumexp", op(OpKind::Add, {arg(0, 0), op(OpKind::Log, {arg(0, 1)})})});
  return t;
}

namespace {
// A tuple reduction's meaning without its names.
std::string structureOf(const TupleReduction& t) {
  std::string s = t.commutative ? "commutative" : "ordered";
  for (DType d : t.inputs) s += " " + std::string(dtypeName(d));
  for (const TupleField& f : t.fields)
    s += "; " + std::string(dtypeName(f.dtype)) + " " + f.identity.toString() + " " + toString(*f.lift) + " " +
         toString(*f.combine);
  for (const TupleResult& r : t.results) s += "; " + toString(*r.finalize);
  return s;
}
}  // namespace

bool isLogSumExpTuple(const TupleReduction& t) {
  return t.inputs.size() == 1 && isFloat(t.inputs[0]) && structureOf(t) == structureOf(*logSumExpTuple(t.inputs[0]));
}

}  // namespace polyred
