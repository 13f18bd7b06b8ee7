#include "ir/reduction_laws.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <sstream>

#include "support/error.h"
#include "support/printable.h"

namespace polyred {

namespace {

constexpr int kSingles = 8;   // partials of one element
constexpr int kFolds = 8;     // partials of two or three elements
constexpr int kTriples = 24;  // associativity samples
constexpr int kPairs = 16;    // commutativity and one-element samples
constexpr double kRelative = 1e-6;

// One element: small integers half of the time (ties, exact arithmetic), else reals in
// [-4, 4], rounded to `t`.
Scalar sampleElement(DType t, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> coin(0, 1), small(-8, 8), signedInt(-100, 100), unsignedInt(0, 200);
  std::uniform_real_distribution<double> real(-4, 4);
  switch (t) {
    case DType::Bool: return Scalar::ofBool(coin(rng) == 1);
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
    case DType::UInt64: return Scalar::ofInt(t, unsignedInt(rng));
    case DType::Int8:
    case DType::Int32:
    case DType::Int64: return Scalar::ofInt(t, signedInt(rng));
    default: break;
  }
  auto value = [&] { return coin(rng) ? static_cast<double>(small(rng)) : real(rng); };
  if (isComplex(t)) {
    Scalar re = Scalar::convert(value(), DType::Float32), im = Scalar::convert(value(), DType::Float32);
    return Scalar::ofComplex(t, re.f, im.f);
  }
  return Scalar::convert(value(), t);
}

bool closeReals(double u, double v) {
  if (std::isnan(u) || std::isnan(v)) return std::isnan(u) && std::isnan(v);
  if (u == v) return true;  // infinities of one sign included
  return std::abs(u - v) <= kRelative * std::max({1.0, std::abs(u), std::abs(v)});
}

bool same(const Scalar& u, const Scalar& v) {
  if (isComplex(u.type)) return closeReals(u.f, v.f) && closeReals(u.im, v.im);
  if (isFloat(u.type)) return closeReals(u.f, v.f);
  return u.i == v.i;
}

bool same(const TupleValue& u, const TupleValue& v) {
  for (size_t k = 0; k < u.size(); ++k)
    if (!same(u[k], v[k])) return false;
  return true;
}

std::string show(const Scalar& v) { return v.toString(); }

std::string show(const TupleValue& v) {
  std::string s = "(";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + v[k].toString();
  return s + ")";
}

// The law checks over one kind of value (a tuple or a scalar): `combine` merges two
// partials, `pool[0]` is the identity and the rest are partials the reduction built.
template <class V>
class LawChecker {
 public:
  LawChecker(std::function<V(const V&, const V&)> combine, std::vector<V> pool, std::string what, std::string where)
      : combine_(std::move(combine)), pool_(std::move(pool)), what_(std::move(what)), where_(std::move(where)) {}

  void identity() const {
    const V& id = pool_[0];
    for (const V& p : pool_) {
      expect(combine_(id, p), p, "its identity " + show(id) + " is not neutral on the left: combine(identity, " + show(p) +
                                     ")");
      expect(combine_(p, id), p, "its identity " + show(id) + " is not neutral on the right: combine(" + show(p) +
                                     ", identity)");
    }
  }

  void associative(std::mt19937_64& rng) const {
    for (int k = 0; k < kTriples; ++k) {
      const V &a = pick(rng), &b = pick(rng), &c = pick(rng);
      V left = combine_(combine_(a, b), c), right = combine_(a, combine_(b, c));
      if (!same(left, right))
        fail("its combine is not associative: with a = " + show(a) + ", b = " + show(b) + ", c = " + show(c) +
             ", combine(combine(a, b), c) = " + show(left) + " but combine(a, combine(b, c)) = " + show(right));
    }
  }

  void commutative(std::mt19937_64& rng, const std::string& claim) const {
    for (int k = 0; k < kPairs; ++k) {
      const V &a = pick(rng), &b = pick(rng);
      V ab = combine_(a, b), ba = combine_(b, a);
      if (!same(ab, ba))
        fail("its combine is not commutative" + claim + ": with a = " + show(a) + ", b = " + show(b) + ", combine(a, b) = " +
             show(ab) + " but combine(b, a) = " + show(ba));
    }
  }

  const V& pick(std::mt19937_64& rng) const {
    return pool_[std::uniform_int_distribution<size_t>(0, pool_.size() - 1)(rng)];
  }

  [[noreturn]] void fail(const std::string& law) const {
    throw Error("", where_, what_ + ": " + law + " (sampled; a parallel reduction needs the law, docs/tuple_reductions.md)");
  }

 private:
  void expect(const V& got, const V& want, const std::string& law) const {
    if (!same(got, want)) fail(law + " = " + show(got) + ", not " + show(want));
  }

  std::function<V(const V&, const V&)> combine_;
  std::vector<V> pool_;
  std::string what_, where_;
};

// Field dtypes widened as the reference evaluates them (float32 in float64).
DType lawType(DType t) { return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16 ? DType::Float64 : t; }

}  // namespace

void checkTupleLaws(const TupleReduction& t, const std::string& where) {
  std::mt19937_64 rng(0x5eed2026);
  auto lifted = [&] {
    std::vector<Scalar> in;
    for (DType d : t.inputs) in.push_back(sampleElement(d, rng));
    return liftTuple(t, in, /*widen=*/true);
  };
  auto combine = [&t](const TupleValue& a, const TupleValue& b) { return combineTuples(t, a, b, /*widen=*/true); };
  std::vector<TupleValue> pool = {tupleIdentity(t, /*widen=*/true)};
  for (int k = 0; k < kSingles; ++k) pool.push_back(lifted());
  for (int k = 0; k < kFolds; ++k) {
    TupleValue p = lifted();
    for (int more = 1 + k % 2; more > 0; --more) p = combine(p, lifted());
    pool.push_back(std::move(p));
  }
  LawChecker<TupleValue> laws(combine, std::move(pool), "tuple reduction " + quotedName(t.name), where);
  laws.identity();
  laws.associative(rng);
  if (t.commutative) laws.commutative(rng, " (it is declared commutative)");
}

void checkCombinerLaws(const Reduction& r, DType element, const std::string& where) {
  if (r.isTuple() || r.builtin() != BuiltinCombiner::None || !r.combiner) return;
  std::mt19937_64 rng(0x5eed2026);
  const DType type = lawType(r.accType);
  auto combine = [&r, type](const Scalar& a, const Scalar& b) { return evalScalarExpr(*r.combiner, a, b, type); };
  const Scalar identity = r.identity.castTo(type);
  std::vector<Scalar> pool = {identity};
  for (int k = 0; k < kSingles + kFolds; ++k) {
    Scalar p = identity;
    for (int n = 1 + k % 3; n > 0; --n) p = combine(p, sampleElement(element, rng));
    pool.push_back(p);
  }
  LawChecker<Scalar> laws(combine, pool, "reduction " + quotedName(r.name), where);
  laws.identity();
  laws.associative(rng);
  laws.commutative(rng, "");
  for (int k = 0; k < kPairs; ++k) {
    const Scalar& p = laws.pick(rng);
    const Scalar x = sampleElement(element, rng);
    Scalar merged = combine(p, combine(identity, x)), folded = combine(p, x);
    if (!same(merged, folded))
      laws.fail("its combine does not merge partials as it folds elements: with partial p = " + show(p) + " and element x = " +
                show(x) + ", combine(p, combine(identity, x)) = " + show(merged) + " but combine(p, x) = " +
                show(folded) + " (a tree combines partials with the same expression)");
  }
}

}  // namespace polyred
