// Ordered (non-commutative) tuple reductions shared by the CPU tests
// (tests/tuple_ordered_test.cc) and the GPU tests (tests/gpu/tuple_ordered_gpu_test.cc).
// Each is associative with exact integer arithmetic, so a lowering that combines any two
// elements out of order gives a detectably different answer, compared exactly:
//   affine   composition of affine maps v -> A*v + B in int64 (wrapping):
//            (a, b) then (c, d) = (a*c, b*c + d); lift (2x + 1, x*x) (odd A: the
//            product never collapses to 0 mod 2^64; B not tied to A: with B = x the
//            maps would share the fixed point -1/2 and commute); results B (the image
//            of 0) and A;
//   hash     the polynomial hash h = h*P + x, folded as (h1, P^n1) + (h2, P^n2) =
//            (h1 * P^n2 + h2, P^n1 * P^n2); result h;
//   first    the first non-zero value (0 if none);
//   last     the last value (0 for an empty row).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "frontend/builder.h"
#include "interp/host_tensor.h"
#include "ir/tuple_reduction.h"

namespace polyred::ordered_tuples {

inline ScalarExprPtr a(int f) { return ScalarExpr::tupleArg(0, f); }
inline ScalarExprPtr b(int f) { return ScalarExpr::tupleArg(1, f); }
inline ScalarExprPtr in(int k) { return ScalarExpr::tupleArg(2, k); }
inline ScalarExprPtr i64(int64_t v) { return ScalarExpr::constant(Scalar::ofInt(DType::Int64, v)); }
inline ScalarExprPtr op(OpKind k, std::vector<ScalarExprPtr> args) { return ScalarExpr::apply(k, std::move(args)); }

inline std::shared_ptr<TupleReduction> ordered(const char* name, DType input) {
  auto t = std::make_shared<TupleReduction>();
  t->name = name;
  t->inputs = {input};
  t->commutative = false;
  return t;
}

inline std::shared_ptr<const TupleReduction> affineTuple() {
  auto t = ordered("affine", DType::Int32);
  t->fields.push_back({"A", DType::Int64, Scalar::ofInt(DType::Int64, 1),
                       op(OpKind::Add, {op(OpKind::Mul, {in(0), i64(2)}), i64(1)}), op(OpKind::Mul, {a(0), b(0)})});
  t->fields.push_back({"B", DType::Int64, Scalar::ofInt(DType::Int64, 0), op(OpKind::Mul, {in(0), in(0)}),
                       op(OpKind::Add, {op(OpKind::Mul, {a(1), b(0)}), b(1)})});
  t->results.push_back({"B", a(1)});
  t->results.push_back({"A", a(0)});
  return t;
}

constexpr int64_t kHashBase = 1000003;

inline std::shared_ptr<const TupleReduction> hashTuple() {
  auto t = ordered("hash", DType::Int32);
  t->fields.push_back({"h", DType::Int64, Scalar::ofInt(DType::Int64, 0), in(0),
                       op(OpKind::Add, {op(OpKind::Mul, {a(0), b(1)}), b(0)})});
  t->fields.push_back({"pow", DType::Int64, Scalar::ofInt(DType::Int64, 1), i64(kHashBase),
                       op(OpKind::Mul, {a(1), b(1)})});
  t->results.push_back({"h", a(0)});
  return t;
}

// (seen, value): `first` keeps a's value once a has seen one, `last` takes b's.
inline std::shared_ptr<const TupleReduction> pickTuple(bool first) {
  auto t = ordered(first ? "first_nonzero" : "last", DType::Int32);
  ScalarExprPtr seen = first ? op(OpKind::NotEqual, {in(0), ScalarExpr::constant(Scalar::ofInt(DType::Int32, 0))})
                             : ScalarExpr::constant(Scalar::ofBool(true));
  t->fields.push_back({"seen", DType::Bool, Scalar::ofBool(false), seen, op(OpKind::LogicalOr, {a(0), b(0)})});
  ScalarExprPtr pick = first ? op(OpKind::Select, {a(0), a(1), b(1)}) : op(OpKind::Select, {b(0), b(1), a(1)});
  t->fields.push_back({"value", DType::Int32, Scalar::ofInt(DType::Int32, 0), in(0), pick});
  t->results.push_back({"value", a(1)});
  return t;
}

// All four over `axes` of int32 inputs x (dense) and z (sparse, for `first`); outputs:
// affine B, affine A, hash, first non-zero of z, last of x.
inline Graph orderedGraph(const Shape& shape, const std::vector<int64_t>& axes) {
  GraphBuilder g("ordered");
  Value x = g.input("x", DType::Int32, shape), z = g.input("z", DType::Int32, shape);
  auto affine = affineTuple();
  g.output(g.reduceTuple({x}, affine, 0, axes, false, DType::Int64));
  g.output(g.reduceTuple({x}, affine, 1, axes, false, DType::Int64));
  g.output(g.reduceTuple({x}, hashTuple(), 0, axes, false, DType::Int64));
  g.output(g.reduceTuple({z}, pickTuple(true), 0, axes, false, DType::Int32));
  g.output(g.reduceTuple({x}, pickTuple(false), 0, axes, false, DType::Int32));
  return g.build();
}

// x: values in [-1000, 1000); z: zero except with probability `density` (an odd value).
inline std::vector<HostTensor> orderedInputs(const Shape& shape, uint64_t seed, double density) {
  HostTensor x = HostTensor::zeros(DType::Int32, shape), z = HostTensor::zeros(DType::Int32, shape);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> value(-1000, 999);
  for (int64_t k = 0; k < x.size(); ++k) x.set(k, Scalar::ofInt(DType::Int32, value(rng)));
  std::bernoulli_distribution present(density);
  for (int64_t k = 0; k < z.size(); ++k)
    if (present(rng)) z.set(k, Scalar::ofInt(DType::Int32, value(rng) | 1));
  return {x, z};
}

}  // namespace polyred::ordered_tuples
