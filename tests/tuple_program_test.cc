// The host evaluators' tuple programs (ir/tuple_program) against the tree evaluation
// they replace: each kind must give what liftTuple, combineTuples(acc, liftTuple(x)),
// combineTuples and combineLaterTuples give, bit for bit (NaN payloads aside:
// Scalar::identical), step after step, for the built-in tuples in every input type, the
// ordered test tuples, and
// random tuple declarations over every field and input type and most elementwise ops,
// on elements drawn heavily from edge values (NaN, infinities, signed zeros, integer
// extremes), with and without the reference's widening of float32.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>

#include "ir/tuple_program.h"
#include "ir/tuple_reduction.h"
#include "ordered_tuples.h"
#include "support/error.h"

namespace polyred {
namespace {

Scalar drawValue(std::mt19937_64& rng, DType t) {
  static const double kFloats[] = {0.0, -0.0, 1.0, -1.0, 0.5, 3.0, -7.25, 1e30, -1e-30, 65504.0, 1e-45,
                                   std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                                   std::numeric_limits<double>::quiet_NaN()};
  static const int64_t kInts[] = {0, 1, -1, 2, 7, -9, 255, std::numeric_limits<int32_t>::max(),
                                  std::numeric_limits<int32_t>::min(), std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min()};
  std::uniform_int_distribution<int> pick(0, 3);
  if (isFloat(t)) {
    if (pick(rng) == 0) return Scalar::convert(std::normal_distribution<double>(0.0, 100.0)(rng), t);
    return Scalar::convert(kFloats[rng() % std::size(kFloats)], t);
  }
  if (pick(rng) == 0) return Scalar::convert(static_cast<int64_t>(rng() % 2001) - 1000, t);
  return Scalar::convert(kInts[rng() % std::size(kInts)], t);
}

void expectIdentical(const TupleValue& tree, const TupleValue& fast, const char* what, int step) {
  ASSERT_EQ(tree.size(), fast.size()) << what;
  for (size_t k = 0; k < tree.size(); ++k)
    ASSERT_TRUE(tree[k].identical(fast[k])) << what << ", step " << step << ", field " << k << ": tree "
                                            << dtypeName(tree[k].type) << " " << tree[k].toString() << ", program "
                                            << dtypeName(fast[k].type) << " " << fast[k].toString();
}

// Folds `steps` random elements both ways from the identity; at every step the lift,
// the fold, the combine of the accumulator with the lifted element and (where the tuple
// has one) the later-combine must agree.
void expectProgramsAgree(const TupleReduction& t, uint64_t seed, int steps, bool widen) {
  SCOPED_TRACE(t.toString() + (widen ? " (widened)" : ""));
  std::mt19937_64 rng(seed);
  TupleProgram lift(t, TupleProgram::Kind::Lift, widen), fold(t, TupleProgram::Kind::Fold, widen),
      combine(t, TupleProgram::Kind::Combine, widen);
  std::optional<TupleProgram> later;
  if (t.hasCombineLater()) later.emplace(t, TupleProgram::Kind::CombineLater, widen);
  TupleValue tree = tupleIdentity(t, widen), fast = tree;
  std::vector<Scalar> element(t.inputs.size());
  for (int s = 0; s < steps; ++s) {
    for (size_t m = 0; m < element.size(); ++m) element[m] = drawValue(rng, t.inputs[m]);
    // Every kind, both ways; an evaluation that throws must throw both ways.
    auto both = [&](const char* what, auto treeWay, auto programWay) {
      std::optional<TupleValue> a, b;
      try {
        a = treeWay();
      } catch (const Error&) {
      }
      try {
        b = programWay();
      } catch (const Error&) {
      }
      EXPECT_EQ(a.has_value(), b.has_value()) << what << " threw one way only, step " << s;
      if (a && b) expectIdentical(*a, *b, what, s);
      return a && b ? a : std::nullopt;
    };
    std::optional<TupleValue> lifted = both(
        "lift", [&] { return liftTuple(t, element, widen); },
        [&] {
          TupleValue v;
          lift.run(v, element);
          return v;
        });
    if (!lifted) return;
    if (!both("combine", [&] { return combineTuples(t, tree, *lifted, widen); },
              [&] {
                TupleValue v = tree;
                combine.run(v, *lifted);
                return v;
              }))
      return;
    if (later && !both("later-combine", [&] { return combineLaterTuples(t, tree, *lifted, widen); },
                       [&] {
                         TupleValue v = tree;
                         later->run(v, *lifted);
                         return v;
                       }))
      return;
    std::optional<TupleValue> folded = both(
        "fold", [&] { return combineTuples(t, tree, liftTuple(t, element, widen), widen); },
        [&] {
          fold.run(fast, element);
          return fast;
        });
    if (!folded || ::testing::Test::HasFailure()) return;
    tree = *folded;
  }
}

TEST(TupleProgram, BuiltInTuplesAsTheTreeEvaluation) {
  uint64_t seed = 1;
  for (bool widen : {true, false}) {
    for (DType in : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64, DType::Int8, DType::Int32,
                     DType::Int64, DType::UInt8, DType::Bool})
      for (bool max : {true, false})
        for (DType index : {DType::Int32, DType::Int64})
          expectProgramsAgree(*argExtremumTuple(max, in, index, 1000), seed++, 300, widen);
    for (DType in : {DType::Float16, DType::Float32, DType::Float64}) {
      expectProgramsAgree(*welfordTuple(in, 1), seed++, 300, widen);
      expectProgramsAgree(*logSumExpTuple(in), seed++, 300, widen);
    }
    expectProgramsAgree(*ordered_tuples::affineTuple(), seed++, 300, widen);
    expectProgramsAgree(*ordered_tuples::hashTuple(), seed++, 300, widen);
    expectProgramsAgree(*ordered_tuples::pickTuple(true), seed++, 300, widen);
    expectProgramsAgree(*ordered_tuples::pickTuple(false), seed++, 300, widen);
  }
}

// A random tuple declaration: 1-3 fields and 1-2 inputs of random types, lifts over
// the inputs and combines over both sides, trees of up to a few levels of random ops,
// with some subtrees shared by several parents. Declarations that do not type are
// dropped (validate()).
class RandomTuples {
 public:
  explicit RandomTuples(uint64_t seed) : rng_(seed) {}

  std::shared_ptr<const TupleReduction> draw() {
    static const DType kFields[] = {DType::Bool, DType::Int32, DType::Int64, DType::Float32, DType::Float64};
    static const DType kInputs[] = {DType::Bool,    DType::Int8,     DType::Int32,   DType::Int64,
                                    DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
    auto t = std::make_shared<TupleReduction>();
    t->name = "random";
    const int inputs = 1 + static_cast<int>(rng_() % 2), fields = 1 + static_cast<int>(rng_() % 3);
    for (int m = 0; m < inputs; ++m) t->inputs.push_back(kInputs[rng_() % std::size(kInputs)]);
    for (int k = 0; k < fields; ++k) {
      TupleField f;
      f.name = "f" + std::to_string(k);
      f.dtype = kFields[rng_() % std::size(kFields)];
      f.identity = drawValue(rng_, f.dtype);
      t->fields.push_back(f);
    }
    for (TupleField& f : t->fields) {
      shared_.clear();
      f.lift = expr(3, /*combine=*/false, *t);
    }
    shared_.clear();
    for (TupleField& f : t->fields) f.combine = expr(3, /*combine=*/true, *t);
    t->results.push_back({"r", ScalarExpr::tupleArg(0, 0)});
    return t;
  }

 private:
  ScalarExprPtr expr(int depth, bool combine, const TupleReduction& t) {
    if (!shared_.empty() && rng_() % 5 == 0) return shared_[rng_() % shared_.size()];
    if (depth == 0 || rng_() % 4 == 0) {
      if (rng_() % 5 == 0) {
        static const DType kConsts[] = {DType::Bool, DType::Int32, DType::Int64, DType::Float32, DType::Float64};
        const DType c = kConsts[rng_() % std::size(kConsts)];
        return ScalarExpr::constant(drawValue(rng_, c));
      }
      if (!combine) return ScalarExpr::tupleArg(2, static_cast<int>(rng_() % t.inputs.size()));
      return ScalarExpr::tupleArg(static_cast<int>(rng_() % 2), static_cast<int>(rng_() % t.fields.size()));
    }
    static const OpKind kOps[] = {OpKind::Neg,     OpKind::Abs,      OpKind::Exp,          OpKind::Log,
                                  OpKind::Sqrt,    OpKind::Floor,    OpKind::Round,        OpKind::Sign,
                                  OpKind::IsNan,   OpKind::IsInf,    OpKind::LogicalNot,   OpKind::Add,
                                  OpKind::Sub,     OpKind::Mul,      OpKind::Div,          OpKind::FloorDiv,
                                  OpKind::FloorMod, OpKind::Mod,     OpKind::Pow,          OpKind::Maximum,
                                  OpKind::Minimum, OpKind::Equal,    OpKind::NotEqual,     OpKind::Less,
                                  OpKind::LessEqual, OpKind::Greater, OpKind::GreaterEqual, OpKind::LogicalAnd,
                                  OpKind::LogicalOr, OpKind::Select};
    const OpKind op = kOps[rng_() % std::size(kOps)];
    std::vector<ScalarExprPtr> operands;
    for (int k = 0; k < expressionArity(op); ++k) operands.push_back(expr(depth - 1, combine, t));
    ScalarExprPtr e = ScalarExpr::apply(op, std::move(operands));
    if (rng_() % 3 == 0) shared_.push_back(e);
    return e;
  }

  std::mt19937_64 rng_;
  std::vector<ScalarExprPtr> shared_;  // subtrees a later operand may reuse
};

TEST(TupleProgram, RandomTupleDeclarationsAsTheTreeEvaluation) {
  RandomTuples draw(20261129);
  int checked = 0;
  for (int n = 0; n < 3000 && checked < 600; ++n) {
    std::shared_ptr<const TupleReduction> t = draw.draw();
    try {
      t->validate("random tuple");
    } catch (const Error&) {
      continue;
    }
    expectProgramsAgree(*t, static_cast<uint64_t>(n), 40, n % 2 == 0);
    ++checked;
  }
  EXPECT_GE(checked, 300) << "too few random declarations typed";
}

// A program is built for the types of its first call's values; values of other types
// (an accumulator the caller converted) build it again instead of misreading them.
TEST(TupleProgram, ValuesOfOtherTypesRebuildTheProgram) {
  const std::shared_ptr<const TupleReduction> t = welfordTuple(DType::Float32, 0);
  TupleProgram fold(*t, TupleProgram::Kind::Fold, /*widen=*/false);
  TupleValue fast = tupleIdentity(*t, false), tree = fast;
  const std::vector<Scalar> x{Scalar::ofFloat(DType::Float32, 2.5)};
  fold.run(fast, x);
  tree = combineTuples(*t, tree, liftTuple(*t, x, false), false);
  TupleValue wideFast = fast, wideTree = tree;
  for (Scalar& v : wideFast) v = v.castTo(DType::Float64);
  for (Scalar& v : wideTree) v = v.castTo(DType::Float64);
  const std::vector<Scalar> y{Scalar::ofFloat(DType::Float64, 1.0 / 3.0)};
  fold.run(wideFast, y);
  wideTree = combineTuples(*t, wideTree, liftTuple(*t, y, false), false);
  expectIdentical(wideTree, wideFast, "fold of float64 values", 1);
}

}  // namespace
}  // namespace polyred
