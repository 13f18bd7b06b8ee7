// Random fused sub-graphs for property tests: a seeded generator builds graphs with
// GraphBuilder -- shapes from a size profile (small ones for the CPU check, larger ones
// for the GPU) whose dims include 1 and non-powers of two, random reduced-axis sets
// (sometimes all, sometimes negative), chains of 0-5 elementwise producers, broadcasts
// (suffix shapes, size-1 dims, BroadcastTo, scalars), a transpose or a reshape before
// the reduction, every built-in reduction in float32/float16/bfloat16/float64/int32/
// int8/bool, sometimes two reductions over the same axes, epilogues and keep_dims --
// plus elementwise-only graphs, tuple reductions (argmax/argmin with or without the
// value, var_mean, logsumexp: tupleGraph), user-declared reductions (a scalar combiner,
// ordered tuples: userReductionGraph), index ops before a reduction (Iota masks,
// Windows: indexOpsGraph), noise (StandardNormal) added to a chain's first value,
// complex64 sums and products (complexGraph), softmax and
// layer norm (rowPassesGraph), segment sums (scatterGraph), scans (scanGraph); independent graphs side by
// side (parallel files) are in
// tests/random_parallel_graphs.h.
// The GPU profile also draws division, float math (Sqrt, Log, Rsqrt, Reciprocal, Tanh,
// Sin, Cos, Erf, Pow), and for integers Div, Sign, Pow, the spellings of a negation and
// exact comparisons.
// Used by tests/pipeline_property_test.cc (CPU) and tests/gpu/random_graphs_gpu_test.cc;
// the dtypes, draws and size profiles are in tests/random_draws.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "frontend/builder.h"
#include "frontend/composite_reader.h"
#include "ordered_tuples.h"
#include "random_draws.h"
#include "random_graph_features.h"
#include "random_in_place.h"
#include "user_reductions.h"
#include "ir/graph.h"

namespace polyred::random_graphs {

// Builds one random graph from a seed (a generator is used once).
class GraphGenerator {
 public:
  explicit GraphGenerator(uint64_t seed, SizeProfile sizes = cpuSizes())
      : rng_(seed), noiseRng_(seed ^ 0x5eed0f0015eULL), b_("random_" + std::to_string(seed)), sizes_(std::move(sizes)), inPlace_(seed) {}

  Generated reductionGraph() {
    DType t = rng_.pick(kDTypes);
    f_.dtype = t;
    f_.reduction = rng_.pick(reductionsFor(t));
    Shape s = randomShape();
    std::vector<int64_t> axes = randomAxes(s.size());
    f_.keepDims = rng_.percent(30);
    f_.outType = rng_.percent(20);
    DType out = f_.outType ? resultType(t) : t;
    Value v = producers(s, t);
    const int64_t length = reducedLength(s, axes);
    Value r1 = b_.reduce(reductionInput(v, f_.reduction, t, length), builtinReduction(f_.reduction, t, out), axes, f_.keepDims, out);
    std::vector<Value> results = {r1};
    if (rng_.percent(30)) {
      f_.twoReductions = true;
      BuiltinCombiner second = rng_.pick(reductionsFor(t));
      Value in = rng_.percent(50) ? v : producers(s, t);
      results.push_back(b_.reduce(reductionInput(in, second, t, length), builtinReduction(second, t, out), axes, f_.keepDims, out));
    }
    if (rng_.percent(40)) {
      f_.epilogue = true;
      emit(epilogue(results, out));
      if (rng_.percent(50)) emit(r1);
    } else {
      emit(r1);
    }
    if (results.size() > 1) emit(results[1]);
    if (rng_.percent(15)) {  // an intermediate is an output too
      f_.intermediateOutput = true;
      emit(v);
    }
    return {b_.build(), f_};
  }

  // A tuple reduction (ir/tuple_reduction.h) over a producer chain: argmax or argmin
  // over one axis, with or without the value, in any dtype; var_mean (Welford, either
  // correction) or logsumexp over random axes of a float; keep_dims sometimes; the
  // chain's value as an output too sometimes.
  Generated tupleGraph() {
    DType t = rng_.pick(kDTypes);
    f_.dtype = t;
    Shape s = randomShape();
    const size_t kind = isFloat(t) ? rng_.below(4) : rng_.below(2);
    // An argmax index is compared exactly, and rows of float16 values hold many equal
    // maxima: its chain takes only ops that round once, as the host's do (no Exp, no
    // float math), so that an ulp of libm difference cannot move it to another tie.
    exactChain_ = kind <= 1;
    Value v = producers(s, t);
    const auto rank = static_cast<int64_t>(s.size());
    f_.keepDims = rng_.percent(30);
    if (kind <= 1) {
      int64_t axis = static_cast<int64_t>(rng_.below(s.size()));
      if (rng_.percent(25)) {
        f_.negativeAxes = true;
        axis -= rank;
      }
      const DType index = rng_.percent(50) ? DType::Int32 : DType::Int64;
      const bool max = kind == 0;
      f_.tuple = max ? "argmax" : "argmin";
      if (rng_.percent(50)) {
        emit(max ? b_.argmax(v, axis, index, f_.keepDims) : b_.argmin(v, axis, index, f_.keepDims));
      } else {
        f_.tuple += " with value";
        auto [i, value] = max ? b_.argmaxWithValue(v, axis, index, f_.keepDims) : b_.argminWithValue(v, axis, index, f_.keepDims);
        emit(i);
        emit(value);
      }
    } else if (kind == 2) {
      f_.tuple = "var_mean";
      auto [var, mean] = b_.varMean(v, randomAxes(s.size()), rng_.percent(50) ? 1 : 0, f_.keepDims);
      emit(var);
      emit(mean);
    } else {
      f_.tuple = "logsumexp";
      emit(b_.logSumExp(v, randomAxes(s.size()), f_.keepDims));
    }
    if (rng_.percent(15)) {
      f_.intermediateOutput = true;
      emit(v);
    }
    return {b_.build(), f_};
  }

  // A user-declared reduction over a producer chain and random axes: the scalar
  // combiner max(|a|, |b|) of a float32 chain, or an ordered (non-commutative) tuple of
  // an int32 chain -- affine maps composed in order, a polynomial hash, the last value.
  Generated userReductionGraph() {
    const bool scalar = rng_.percent(50);
    const DType t = scalar ? DType::Float32 : DType::Int32;
    f_.dtype = t;
    Shape s = randomShape();
    std::vector<int64_t> axes = randomAxes(s.size());
    f_.keepDims = rng_.percent(30);
    Value v = producers(s, t);
    if (scalar) {
      f_.tuple = "max_abs";
      emit(b_.reduce(v, test_support::maxAbsReduction(), axes, f_.keepDims));
    } else {
      const size_t which = rng_.below(3);
      f_.tuple = which == 0 ? "affine" : which == 1 ? "hash" : "last";
      auto tuple = which == 0 ? ordered_tuples::affineTuple() : which == 1 ? ordered_tuples::hashTuple() : ordered_tuples::pickTuple(false);
      emit(b_.reduceTuple({v}, tuple, 0, axes, f_.keepDims, which == 2 ? DType::Int32 : DType::Int64));
    }
    if (rng_.percent(15)) {
      f_.intermediateOutput = true;
      emit(v);
    }
    return {b_.build(), f_};
  }

  // A gather's table: half the time a graph input; else computed by elementwise ops
  // (canon/gather_sources pushes the gather in), a Transpose or a crop of a larger input
  // (the gather moves below either).
  Value computedTable(DType t, const Shape& table) {
    const size_t how = rng_.below(8);
    if (how < 4) {
      const Value in = freshInput(t, table);
      inPlace_.noteGatherTable(in);
      return in;
    }
    if (how < 6) return chain(freshInput(t, table), t, 1 + rng_.below(3));
    if (how == 6) {
      std::vector<int64_t> perm(table.size());
      for (size_t k = 0; k < perm.size(); ++k) perm[k] = static_cast<int64_t>(k);
      for (size_t k = perm.size(); k > 1; --k) std::swap(perm[k - 1], perm[rng_.below(k)]);
      Shape source(table.size());
      for (size_t k = 0; k < perm.size(); ++k) source[static_cast<size_t>(perm[k])] = table[k];
      return b_.transpose(freshInput(t, source), perm);
    }
    Shape larger = table;  // a crop, half the time strided (backwards too, wrapping around)
    std::vector<int64_t> begin(table.size()), steps;
    for (size_t d = 0; d < table.size(); ++d) {
      begin[d] = static_cast<int64_t>(rng_.below(3));
      larger[d] += begin[d] + static_cast<int64_t>(rng_.below(3));
    }
    if (rng_.percent(50))
      for (size_t d = 0; d < table.size(); ++d) steps.push_back(rng_.pick<int64_t>({-2, -1, 1, 2}));
    return b_.window(freshInput(t, larger), table, begin, steps);
  }

  // Index ops in the producers, then a reduction over random axes: values kept at one
  // coordinate along a random axis (Iota == k, as OneHot expands) and others elsewhere,
  // half the time plus a Gather of a table's rows along a random axis (the table half
  // the time computed: computedTable), seen through a Window -- a crop, a shifted
  // crop that wraps around, or a view up to half again as large (PadAkg's reads).
  Generated indexOpsGraph() {
    const DType t = rng_.pick<DType>({DType::Float32, DType::Float16, DType::Int32, DType::Int8});
    f_.dtype = t;
    f_.reduction = rng_.pick(reductionsFor(t));
    Shape s = randomShape();
    Value v = producers(s, t);
    const size_t axis = rng_.below(s.size());
    const DType indexType = rng_.percent(50) ? DType::Int32 : DType::Int64;
    Value coordinate = b_.iota(s, static_cast<int64_t>(axis), indexType);
    Value k = b_.constant(Scalar::ofInt(indexType, static_cast<int64_t>(rng_.below(static_cast<size_t>(s[axis])))));
    Value masked = b_.select(b_.binary(OpKind::Equal, coordinate, k), v, operand(s, t));
    if (rng_.percent(50)) {  // plus rows of a table picked by random indices (many out of range: 0)
      const size_t along = rng_.below(s.size());
      Shape table = s;
      table[along] = 1 + static_cast<int64_t>(rng_.below(2 * static_cast<size_t>(s[along])));
      Value params = computedTable(t, table);
      Value rows = b_.gather(params, freshInput(indexType, {s[along]}), static_cast<int64_t>(along));
      masked = b_.add(masked, rows);
    }
    Shape view = s;
    std::vector<int64_t> begin(s.size());
    int64_t elements = 1;
    for (size_t d = 0; d < s.size(); ++d) {
      const auto extent = static_cast<size_t>(s[d]);
      view[d] = 1 + static_cast<int64_t>(rng_.below(extent + extent / 2));
      begin[d] = static_cast<int64_t>(rng_.below(extent));
      elements *= view[d];
    }
    if (elements > sizes_.maxElements) view = s;
    std::vector<int64_t> steps;  // a third of the windows step (backwards too), as StridedSlice's
    if (rng_.percent(33))
      for (size_t d = 0; d < s.size(); ++d) steps.push_back(rng_.pick<int64_t>({-3, -2, -1, 1, 1, 2}));
    Value w = b_.window(masked, view, begin, steps);
    std::vector<int64_t> axes = randomAxes(view.size());
    f_.keepDims = rng_.percent(30);
    emit(b_.reduce(reductionInput(w, f_.reduction, t, reducedLength(view, axes)), builtinReduction(f_.reduction, t),
                        axes, f_.keepDims));
    return {b_.build(), f_};
  }

  // ScatterAdd of a producer chain: the first r axes of a random shape indexed (r from
  // 0 to the rank), 1 to 150 output rows (random int ids lie in [-100, 100), so some are
  // dropped); 40% add into a base (TensorScatterAdd: a graph input, or a computed one),
  // half of those over two indexed axes, and 30% of those into a graph input written in
  // place with the result; else 30% read again by a product or a sum over random axes. 32/64-bit sums into graph inputs are atomic scatters into the output;
  // 16/8-bit ones, computed bases and sums read again go through a temporary
  // (canon/scatter_fallback; float ones are masked sums in deterministic mode).
  // Sometimes a reduction of the same values beside it.
  Generated scatterGraph() {
    const DType t = rng_.pick<DType>({DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Float16,
                                      DType::BFloat16, DType::Int8, DType::UInt8});
    f_.dtype = t;
    bool temporary = t == DType::Float16 || t == DType::BFloat16 || t == DType::Int8 || t == DType::UInt8;
    const Shape s = randomShape();
    Value v = producers(s, t);
    const auto r = static_cast<std::ptrdiff_t>(rng_.below(s.size() + 1));
    Value ids = freshInput(rng_.percent(50) ? DType::Int32 : DType::Int64, Shape(s.begin(), s.begin() + r));
    const int64_t rows = 1 + static_cast<int64_t>(rng_.below(150));
    std::optional<Value> sums, inputBase;
    if (rng_.percent(40)) {
      Shape out = {rows};
      if (rng_.percent(50)) out.push_back(1 + static_cast<int64_t>(rng_.below(4)));
      const auto indexed = static_cast<int64_t>(out.size());
      out.insert(out.end(), s.begin() + r, s.end());
      const bool computed = rng_.percent(30);
      temporary = temporary || computed;
      if (!computed) inputBase = freshInput(t, out);
      sums = b_.scatterAdd(computed ? producers(out, t) : *inputBase, v, ids, indexed);
    } else {
      sums = b_.scatterAdd(v, ids, rows);
    }
    if (inputBase && rng_.percent(30)) {
      inPlace_.noteWritten(*inputBase);
      b_.outputInto(*sums, *inputBase);  // a table update: atomically in place (16/8-bit: through a temporary)
    } else if (rng_.percent(30)) {
      temporary = true;
      const size_t rank = b_.info(*sums).shape.size();
      emit(rng_.percent(50) ? b_.mul(*sums, *sums) : b_.reduceSum(*sums, randomAxes(rank), false));
      if (rng_.percent(50)) emit(*sums);
    } else {
      emit(*sums);
    }
    f_.tuple = temporary ? "scatter through a temporary" : "atomic scatter";
    if (rng_.percent(30)) emit(b_.reduceSum(v, randomAxes(s.size()), false));
    return {b_.build(), f_};
  }

  // A running fold (Scan) of a producer chain along a random axis: every built-in
  // combiner in every dtype but complex, sometimes exclusive or reversed; the scan
  // stored as it is, read again at its own points by an elementwise consumer (stored by
  // the scan kernel), or reduced over random axes (materialized for a later kernel);
  // sometimes a second scan of the same chain along the same axis, and the chain itself
  // as an output. Features::tuple names what reads the scan.
  Generated scanGraph() {
    const DType t = rng_.pick(kDTypes);
    f_.dtype = t;
    f_.reduction = rng_.pick(reductionsFor(t));
    const Shape s = randomShape();
    const auto axis = static_cast<int64_t>(rng_.below(s.size()));
    Value v = producers(s, t);
    const bool exclusive = rng_.percent(30), reverse = rng_.percent(30);
    Value scanned = b_.scan(reductionInput(v, f_.reduction, t, s[static_cast<size_t>(axis)]),
                            builtinReduction(f_.reduction, t), axis, exclusive, reverse);
    switch (rng_.below(3)) {
      case 0:
        f_.tuple = "scan";
        emit(scanned);
        break;
      case 1:  // at the scan's own points: a store of the scan kernel
        f_.tuple = "scan read at its points";
        emit(t == DType::Bool ? b_.binary(OpKind::LogicalAnd, scanned, v) : b_.mul(scanned, producers(s, t)));
        break;
      default: {  // read by a reduction: the scan is materialized
        f_.tuple = "scan reduced";
        const BuiltinCombiner r = rng_.pick(reductionsFor(t));
        if (r == BuiltinCombiner::Prod) {
          emit(scanned);  // (a product of partial products leaves every tolerance)
          break;
        }
        emit(b_.reduce(scanned, builtinReduction(r, t), randomAxes(s.size()), rng_.percent(30)));
        break;
      }
    }
    if (rng_.percent(25)) {
      f_.twoReductions = true;
      const BuiltinCombiner second = rng_.pick(reductionsFor(t));
      emit(b_.scan(reductionInput(v, second, t, s[static_cast<size_t>(axis)]), builtinReduction(second, t), axis,
                        rng_.percent(50), reverse));
    }
    if (rng_.percent(15)) {
      f_.intermediateOutput = true;
      emit(v);
    }
    return {b_.build(), f_};
  }

  // complex64 (ir/dtype): a value built from two float32 producer chains, through
  // complex arithmetic (Add, Sub, Mul, Neg, Conj with another complex value), summed
  // or multiplied over random axes (the factors of a product 1 + a small term, as
  // reductionInput makes them), the result as is and as its real or imaginary part.
  Generated complexGraph() {
    f_.dtype = DType::Complex64;
    Shape s = randomShape();
    auto fresh = [&] { return b_.complex(producers(s, DType::Float32), freshInput(DType::Float32, s)); };
    Value z = fresh();
    for (size_t k = rng_.below(4); k > 0; --k) {
      switch (rng_.below(5)) {
        case 0: z = b_.add(z, fresh()); break;
        case 1: z = b_.sub(z, fresh()); break;
        case 2: z = b_.mul(z, fresh()); break;
        case 3: z = b_.neg(z); break;
        default: z = b_.conj(z); break;
      }
    }
    std::vector<int64_t> axes = randomAxes(s.size());
    f_.keepDims = rng_.percent(30);
    const bool product = rng_.percent(40);
    f_.tuple = product ? "complex prod" : "complex sum";
    Value r;
    if (product) {
      const double scale = 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(1, reducedLength(s, axes)))) / 4;
      Value small = b_.complex(b_.constant(Scalar::ofFloat(DType::Float32, scale)), b_.constant(Scalar::ofFloat(DType::Float32, 0)));
      Value one = b_.complex(b_.constant(Scalar::ofFloat(DType::Float32, 1)), b_.constant(Scalar::ofFloat(DType::Float32, 0)));
      r = b_.reduce(b_.add(b_.mul(z, small), one), Reduction::prod(DType::Complex64), axes, f_.keepDims);
    } else {
      r = b_.reduceSum(z, axes, f_.keepDims);
    }
    emit(r);
    if (rng_.percent(50)) emit(rng_.percent(50) ? b_.creal(r) : b_.cimag(r));
    return {b_.build(), f_};
  }

  // Dependent reductions over the same axes, which run as passes of one row-resident
  // kernel where the rows fit a block: softmax (max; sum of exp(x - max); the quotient
  // stored) or layer norm (mean; variance of x - mean; the normalized values stored),
  // of a float producer chain, in float32 as MindSpore writes them, over random axes.
  // On the GPU sizes, half of them are 66-300 rows of 8193-30000 elements: the long
  // rows sm_90 stages in shared memory (codegen/row_stage.h).
  Generated rowPassesGraph() {
    const DType t = rng_.pick<DType>({DType::Float32, DType::Float16, DType::BFloat16});
    f_.dtype = t;
    Shape s;
    std::vector<int64_t> axes;
    if (sizes_.moreOps && rng_.percent(50)) {
      const int64_t n = rng_.pick<int64_t>({8193, 16384, 20001, 30000});
      s = {std::clamp<int64_t>(sizes_.maxElements / n, 66, 300), n};
      axes = {1};
    } else {
      s = randomShape();
      axes = randomAxes(s.size());
    }
    const bool softmax = rng_.percent(60);
    f_.tuple = softmax ? "softmax" : "layer norm";
    Value x = producers(s, t);
    if (t != DType::Float32) x = b_.cast(x, DType::Float32);
    Value y;
    if (softmax) {
      Value e = b_.unary(OpKind::Exp, b_.sub(x, b_.reduce(x, Reduction::max(DType::Float32), axes, true)));
      y = b_.binary(OpKind::Div, e, b_.reduceSum(e, axes, true));
    } else {
      Value inverseLength = b_.constant(Scalar::ofFloat(DType::Float32, 1.0 / static_cast<double>(reducedLength(s, axes))));
      Value centered = b_.sub(x, b_.binary(OpKind::Mul, b_.reduceSum(x, axes, true), inverseLength));
      Value variance = b_.binary(OpKind::Mul, b_.reduceSum(b_.binary(OpKind::Mul, centered, centered), axes, true),
                                 inverseLength);
      Value epsilon = b_.constant(Scalar::ofFloat(DType::Float32, 1e-5));
      y = b_.binary(OpKind::Mul, centered, b_.unary(OpKind::Rsqrt, b_.add(variance, epsilon)));
    }
    emit(t != DType::Float32 ? b_.cast(y, t) : y);
    return {b_.build(), f_};
  }

  Generated elementwiseGraph() {
    DType t = rng_.pick(kDTypes);
    f_.dtype = t;
    Value v = producers(randomShape(), t);
    emit(v);
    if (rng_.percent(50)) emit(step(v, t));
    return {b_.build(), f_};
  }

 private:
  Shape randomShape() {
    for (;;) {
      Shape s(rng_.pick(sizes_.ranks));
      int64_t elements = 1;  // multiplied as drawn: a rank-6 shape could overflow
      for (int64_t& d : s) {
        d = rng_.pick(sizes_.dims);
        elements = std::min(elements * d, sizes_.maxElements + 1);
      }
      if (elements > sizes_.maxElements) continue;
      for (int64_t d : s) f_.sizeOneDim = f_.sizeOneDim || d == 1;
      return s;
    }
  }

  // A non-empty subset of the axes; sometimes all (as an empty list), sometimes negative.
  std::vector<int64_t> randomAxes(size_t rank) {
    auto r = static_cast<int64_t>(rank);
    if (rng_.percent(10)) {
      f_.allAxes = true;
      return {};
    }
    std::vector<int64_t> axes;
    for (int64_t a = 0; a < r; ++a)
      if (rng_.percent(50)) axes.push_back(a);
    if (axes.empty()) axes.push_back(static_cast<int64_t>(rng_.below(rank)));
    f_.allAxes = static_cast<int64_t>(axes.size()) == r;
    if (rng_.percent(25)) {
      f_.negativeAxes = true;
      for (int64_t& a : axes) a -= r;
    }
    return axes;
  }

  Value freshInput(DType t, Shape s) {
    const Value in = b_.input("in" + std::to_string(inputs_++), t, std::move(s));
    inPlace_.noteInput(in);
    return in;
  }

  // A graph output, now and then written in place of an input (tests/random_in_place.h).
  void emit(Value v) { f_.inPlace = inPlace_.emit(b_, v) || f_.inPlace; }

  Value constant(DType t) {
    if (t == DType::Bool) return b_.constant(Scalar::ofBool(rng_.percent(50)));
    if (isFloat(t)) return b_.constant(Scalar::ofFloat(t, rng_.pick<double>({0.5, -0.25, 1.5})));
    return b_.constant(Scalar::ofInt(t, rng_.pick<int64_t>({3, -2, 1})));
  }

  // A shape that broadcasts to `s`: a suffix of it, or `s` with some dims set to 1.
  Shape broadcastableTo(const Shape& s) {
    if (rng_.percent(50)) return Shape(s.begin() + static_cast<long>(1 + rng_.below(s.size())), s.end());
    Shape r = s;
    r[rng_.below(r.size())] = 1;
    for (int64_t& d : r)
      if (rng_.percent(30)) d = 1;
    return r;
  }

  // The second operand of a binary op on a value of shape `s`.
  Value operand(const Shape& s, DType t) {
    size_t r = rng_.below(100);
    if (r < 50 || s.empty()) return freshInput(t, s);
    if (r < 90) f_.broadcast = true;
    if (r < 75) return freshInput(t, broadcastableTo(s));
    if (r < 90) return b_.broadcastTo(freshInput(t, broadcastableTo(s)), s);
    return constant(t);
  }

  // The value a producer chain starts from; a broadcast one repeats values along the
  // reduced axes.
  Value start(const Shape& s, DType t) {
    if (!s.empty() && rng_.percent(10)) {
      f_.broadcast = true;
      return b_.broadcastTo(freshInput(t, broadcastableTo(s)), s);
    }
    if (t == DType::Bool && rng_.percent(40))
      return b_.binary(OpKind::Greater, freshInput(DType::Float32, s),
                       b_.constant(Scalar::ofFloat(DType::Float32, -0.5)));
    if (isFloat(t) && rng_.percent(30)) return b_.cast(freshInput(otherFloat(t), s), t);
    // Noise added (StandardNormal's PhiloxNormal of Iotas), drawn from a stream of its
    // own so that the graphs of the other seeds stay what earlier sessions ran.
    if (isFloat(t) && noiseRng_.percent(5)) {
      inexact_ = true;  // log and sincos on the device: an ulp from the host
      f_.noise = true;
      return b_.add(freshInput(t, s), b_.standardNormal(s, static_cast<int64_t>(noiseRng_.below(1000)), 0, t));
    }
    return freshInput(t, s);
  }

  // One elementwise op applied to `v` (of dtype t), keeping values O(1)-ish for floats.
  Value step(Value v, DType t) {
    const Shape s = b_.info(v).shape;
    if (sizes_.moreOps && !exactChain_ && t != DType::Bool && rng_.percent(35)) return moreOpsStep(v, t, s);
    if (t == DType::Bool) {
      switch (rng_.below(4)) {
        case 0: return b_.binary(OpKind::LogicalAnd, v, operand(s, t));
        case 1: return b_.binary(OpKind::LogicalOr, v, operand(s, t));
        case 2: return b_.unary(OpKind::LogicalNot, v);
        default: return b_.select(b_.binary(OpKind::Less, freshInput(DType::Float32, s), constant(DType::Float32)), v,
                                  operand(s, t));
      }
    }
    std::vector<OpKind> ops = {OpKind::Add, OpKind::Sub, OpKind::Mul,  OpKind::Maximum, OpKind::Minimum,
                               OpKind::Neg, OpKind::Abs, OpKind::Cast, OpKind::Select};
    if (isFloat(t) && !exactChain_) ops.push_back(OpKind::Exp);
    OpKind op = rng_.pick(ops);
    switch (op) {
      case OpKind::Neg:
      case OpKind::Abs: return b_.unary(op, v);
      case OpKind::Exp:
        inexact_ = true;
        return b_.unary(op, b_.mul(v, b_.constant(Scalar::ofFloat(t, 0.125))));
      case OpKind::Cast: return b_.cast(b_.cast(v, roundTripType(t)), t);
      // After inexact float math, no threshold on the value itself: one ulp from the
      // host's flips the choice (seed 59 of the GPU sizes: Abs(Atan(x)) in float16 against
      // an input, one element of 128000 picked the other operand).
      case OpKind::Select:
        return b_.select(b_.binary(OpKind::Greater, inexact_ ? freshInput(t, s) : v, operand(s, t)), v, operand(s, t));
      default: return b_.binary(op, v, operand(s, t));
    }
  }

  // The type a Cast step goes through and back: a narrower float (the rounding a
  // framework's float16 intermediate does), but not after float math whose result may
  // be an ulp off the host's, which would then round to the other side of a narrow
  // value (one element in 32385 of a float32 Tanh after a float16 round trip, seen on
  // the GPU): those go through float64. The CPU sizes keep the narrow type always.
  DType roundTripType(DType t) const {
    if (!isFloat(t)) return DType::Float64;
    return sizes_.moreOps && inexact_ ? DType::Float64 : otherFloat(t);
  }

  // |x| + 1: a divisor that is never 0 (for integers too: |INT_MIN| wraps to INT_MIN).
  Value awayFromZero(Value x, DType t) { return b_.add(b_.unary(OpKind::Abs, x), b_.constant(isFloat(t) ? Scalar::ofFloat(t, 1) : Scalar::ofInt(t, 1))); }

  // The ops step() does not draw: float math on arguments where it is smooth and
  // bounded, division, powers, and for integers the other spellings of a negation,
  // Sign, exact comparisons, floor division and remainders. No Floor, Ceil, Round,
  // FloorDiv or remainders of computed floats: a result one ulp from the host's would
  // jump across an integer.
  Value moreOpsStep(Value v, DType t, const Shape& s) {
    if (isFloat(t)) {
      inexact_ = true;
      switch (rng_.below(12)) {
        case 10: return b_.unary(rng_.pick<OpKind>({OpKind::Atan, OpKind::Asinh, OpKind::Erfc}), v);
        case 11: return b_.binary(OpKind::Atan2, v, operand(s, t));
        case 0: return b_.binary(OpKind::Div, v, awayFromZero(operand(s, t), t));
        case 1: return b_.unary(OpKind::Sqrt, b_.unary(OpKind::Abs, v));
        case 2: return b_.unary(OpKind::Log, awayFromZero(v, t));
        case 3: return b_.unary(OpKind::Rsqrt, awayFromZero(v, t));
        case 4: return b_.unary(OpKind::Reciprocal, awayFromZero(v, t));
        case 5: return b_.unary(OpKind::Tanh, v);
        case 6: return b_.unary(rng_.percent(50) ? OpKind::Sin : OpKind::Cos, v);
        case 7: return b_.unary(OpKind::Erf, v);
        case 8: return b_.binary(OpKind::Pow, awayFromZero(v, t), b_.constant(Scalar::ofFloat(t, rng_.pick<double>({0.5, 2, 1.5}))));
        default: return b_.binary(OpKind::Sub, b_.constant(Scalar::ofFloat(t, 0)), v);
      }
    }
    switch (rng_.below(8)) {
      // Divisors of either sign and 0 (whose results are defined: ir/ops.h).
      case 7: return b_.binary(rng_.pick<OpKind>({OpKind::FloorDiv, OpKind::FloorMod, OpKind::Mod}), v, operand(s, t));
      case 0: return b_.binary(OpKind::Div, v, awayFromZero(operand(s, t), t));
      case 1: return b_.unary(OpKind::Sign, v);
      case 2: return b_.binary(OpKind::Pow, v, b_.constant(Scalar::ofInt(t, rng_.pick<int64_t>({0, 1, 2, 3}))));
      case 3: return b_.binary(OpKind::Sub, b_.constant(Scalar::ofInt(t, 0)), v);
      case 4: return b_.binary(OpKind::Mul, v, b_.constant(Scalar::ofInt(t, -1)));
      case 5: return b_.binary(OpKind::Div, v, b_.constant(Scalar::ofInt(t, rng_.pick<int64_t>({-1, 3, -7}))));
      default: {
        const OpKind cmp = rng_.pick<OpKind>({OpKind::Equal, OpKind::NotEqual, OpKind::LessEqual, OpKind::GreaterEqual});
        return b_.select(b_.binary(cmp, v, operand(s, t)), v, operand(s, t));
      }
    }
  }

  Value chain(Value v, DType t, size_t steps) {
    for (size_t k = 0; k < steps; ++k) v = step(v, t);
    return v;
  }

  // A chain of 0-5 producers whose result has shape `s`, with a transpose or a reshape
  // somewhere in the middle half of the time.
  Value producers(const Shape& s, DType t) {
    size_t steps = rng_.below(6);
    f_.maxChain = std::max(f_.maxChain, static_cast<int>(steps));
    size_t before = rng_.below(steps + 1);
    size_t movement = rng_.below(4);
    if (movement == 0 && s.size() >= 2) {
      std::vector<int64_t> perm(s.size());
      std::iota(perm.begin(), perm.end(), 0);
      while (std::is_sorted(perm.begin(), perm.end()))
        for (size_t k = perm.size(); k > 1; --k) std::swap(perm[k - 1], perm[rng_.below(k)]);
      Shape pre(s.size());
      for (size_t k = 0; k < s.size(); ++k) pre[static_cast<size_t>(perm[k])] = s[k];
      f_.transpose = true;
      return chain(b_.transpose(chain(start(pre, t), t, before), perm), t, steps - before);
    }
    if (movement == 1) {
      f_.reshape = true;
      return chain(b_.reshape(chain(start(reshapeSource(s), t), t, before), s), t, steps - before);
    }
    return chain(start(s, t), t, steps);
  }

  // A shape with the same elements as `s` that a reshape turns into `s`: adjacent axes
  // merged, one axis split in two, or everything flattened.
  Shape reshapeSource(const Shape& s) {
    size_t kind = rng_.below(3);
    if (kind == 0 && s.size() >= 2) {
      size_t k = rng_.below(s.size() - 1);
      Shape r(s.begin(), s.begin() + static_cast<long>(k));
      r.push_back(s[k] * s[k + 1]);
      r.insert(r.end(), s.begin() + static_cast<long>(k + 2), s.end());
      return r;
    }
    if (kind == 1) {
      for (size_t k = 0; k < s.size(); ++k)
        for (int64_t p = 2; p < s[k]; ++p)
          if (s[k] % p == 0) {
            Shape r(s.begin(), s.begin() + static_cast<long>(k));
            r.push_back(p);
            r.push_back(s[k] / p);
            r.insert(r.end(), s.begin() + static_cast<long>(k + 1), s.end());
            return r;
          }
    }
    return {numElements(s)};
  }

  // Products stay finite and within compare.h's tolerances when the factors are +-1
  // (integers, whose products wrap) or 1 + a small term of random sign (floats: the
  // chain value times a fresh symmetric input, so that log|product| is a random walk
  // even where the chain's values all have one sign).
  Value reductionInput(Value v, BuiltinCombiner reduction, DType t, int64_t length) {
    if (reduction != BuiltinCombiner::Prod) return v;
    if (!isFloat(t))
      return b_.select(b_.binary(OpKind::Greater, v, b_.constant(Scalar::ofInt(t, 0))),
                       b_.constant(Scalar::ofInt(t, 1)), b_.constant(Scalar::ofInt(t, -1)));
    double scale = t == DType::BFloat16 ? 0x1p-5 : t == DType::Float16 ? 0x1p-7 : 0x1p-11;
    // log|product| is a walk of `length` steps of about `scale`: kept within about 1.
    if (sizes_.productsScaleWithLength)
      while (scale * scale * static_cast<double>(length) > 1) scale /= 2;
    Value term = b_.mul(b_.mul(v, freshInput(t, b_.info(v).shape)), b_.constant(Scalar::ofFloat(t, scale)));
    return b_.add(term, b_.constant(Scalar::ofFloat(t, 1)));
  }

  // Elementwise ops on the reduction results (of dtype t), applied once per kept row.
  // Float results are never cast to integers or compared: the kernel's and the
  // reference's accumulation orders differ in the last bits.
  Value epilogue(const std::vector<Value>& results, DType t) {
    Value r = results[0];
    const Shape s = b_.info(r).shape;
    switch (rng_.below(results.size() > 1 ? 5 : 4)) {
      case 0:
        if (t == DType::Bool) return b_.unary(OpKind::LogicalNot, r);
        return b_.mul(r, constant(t));
      case 1: return b_.cast(r, t == DType::Bool ? DType::Int32 : isFloat(t) ? otherFloat(t) : DType::Float32);
      case 2: {
        Shape flat = {numElements(s)};
        return b_.reshape(r, rng_.percent(50) || s.size() <= 1 ? flat : Shape(s.rbegin(), s.rend()));
      }
      case 3: {
        if (s.empty()) return b_.neg(b_.cast(r, DType::Float32));
        // An input read at row i, through a broadcast or a transpose.
        Value x = freshInput(t, broadcastableTo(s));
        if (s.size() >= 2 && rng_.percent(50))
          x = b_.transpose(freshInput(t, Shape(s.rbegin(), s.rend())), reversed(s.size()));
        return b_.binary(t == DType::Bool ? OpKind::LogicalOr : OpKind::Add, r, x);
      }
      default: return b_.binary(t == DType::Bool ? OpKind::LogicalAnd : OpKind::Maximum, r, results[1]);
    }
  }

  Rng rng_;
  Rng noiseRng_;  // whether a chain starts with noise, and its seed
  GraphBuilder b_;
  SizeProfile sizes_;
  Features f_;
  bool inexact_ = false;  // float math whose GPU result may be an ulp off the host's was generated
  bool exactChain_ = false;  // steps draw only ops whose GPU results equal the host's
  int inputs_ = 0;
  InPlaceOutputs inPlace_;
};

}  // namespace polyred::random_graphs
