// C++ builder API: write graphs in code.
//
//   GraphBuilder b("layer_norm_sum");
//   Value x = b.input("x", DType::Float16, {8192, 768});
//   Value s = b.reduce(b.cast(x, DType::Float32), Reduction::sum(DType::Float32), {0});
//   b.output(s);
//   Graph g = b.build();   // verified
//
// Shapes and dtypes of results are inferred; build() runs the verifier.
//
// Symbolic sizes (ir/symbolic_dims.h): an input may name a size symbol in its shape,
//   Value x = b.symbolicInput("x", DType::Float32, {"S", 768});
// and b.symbolSize("S") is that size's probe value, to write in the target shape of a
// Reshape or BroadcastTo ({b.symbolSize("S") * 12, 64}); the shapes info() reports
// hold the probe values. build() derives every tensor's symbolic axes.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/tuple_reduction.h"

namespace polyred {

struct Value {
  TensorId id = -1;
};

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name);

  Value input(const std::string& name, DType t, Shape shape);
  // An input axis: a constant, or the size symbol of that name (declared on first use).
  struct InputDim {
    InputDim(int64_t v) : value(v) {}  // NOLINT: shapes are written as brace lists
    InputDim(const char* s) : symbol(s) {}  // NOLINT
    InputDim(std::string s) : symbol(std::move(s)) {}  // NOLINT
    int64_t value = 0;
    std::string symbol;
  };
  Value symbolicInput(const std::string& name, DType t, const std::vector<InputDim>& shape);
  // The probe value of size symbol `name` (declared on first use).
  int64_t symbolSize(const std::string& name);
  Value constant(Scalar v, Shape shape = {});
  Value unary(OpKind k, Value x);
  Value binary(OpKind k, Value a, Value b);  // numpy broadcasting
  Value select(Value cond, Value a, Value b);
  Value cast(Value x, DType t);
  Value addN(const std::vector<Value>& xs);
  Value broadcastTo(Value x, Shape shape);
  Value reshape(Value x, Shape shape);
  Value transpose(Value x, std::vector<int64_t> perm);
  // out[idx] = x[(begin[d] + steps[d] * idx[d]) mod x.shape[d]], out of shape `shape` (a
  // slice when the window lies inside x; padding reads wrap and are meant to be
  // Select-ed away); no steps: 1 on every axis, negative ones walk backwards.
  Value window(Value x, Shape shape, std::vector<int64_t> begin, std::vector<int64_t> steps = {});
  Value iota(Shape shape, int64_t axis, DType t = DType::Int64);  // out[idx] = idx[axis]
  // Standard normal values of dtype t (a float type), a pure function of the seeds and
  // each element's row-major position: PhiloxNormal(position, philoxKey(seed, seed2))
  // (ir/philox.h), as MindSpore's StandardNormal is read.
  Value standardNormal(Shape shape, int64_t seed, int64_t seed2 = 0, DType t = DType::Float32);
  // params[a.., indices[i..], b..] along `axis` (0 where an index is out of range).
  Value gather(Value params, Value indices, int64_t axis);
  // A segment sum: out = 0, then out[indices[i..], rest] += values[i.., rest] for
  // indices in [0, rows) (others are dropped); out has shape [rows] + values[r:] where
  // r is the indices' rank (ir/ops.h, ScatterAdd).
  Value scatterAdd(Value values, Value indices, int64_t rows);
  // base, plus values[i.., rest] added at the row indices[i..] of base's first
  // `indexedAxes` axes flattened (TensorScatterAdd; index_add along axis 0).
  Value scatterAdd(Value base, Value values, Value indices, int64_t indexedAxes);
  // Negative axes count from the end; an empty list reduces every axis. The output
  // dtype defaults to the input's.
  Value reduce(Value x, Reduction r, std::vector<int64_t> axes, bool keepDims = false,
               std::optional<DType> outType = std::nullopt);
  Value reduceSum(Value x, std::vector<int64_t> axes, bool keepDims = false);
  // The running fold of `r` along `axis` (negative counts from the end): inclusive, or
  // exclusive (the identity first); reverse runs from the end (ir/ops.h, Scan). The
  // output dtype defaults to the input's.
  Value scan(Value x, Reduction r, int64_t axis, bool exclusive = false, bool reverse = false,
             std::optional<DType> outType = std::nullopt);
  Value reduceMax(Value x, std::vector<int64_t> axes, bool keepDims = false);

  // Tuple reductions (ir/tuple_reduction.h). argmax/argmin reduce one axis (negative
  // counts from the end) with PyTorch's rules: ties give the smallest index, NaN wins
  // and gives the first NaN's index; the index is `index` (int32 or int64).
  // argmaxWithValue/argminWithValue give {index, value} (value in x's dtype).
  Value argmax(Value x, int64_t axis, DType index = DType::Int32, bool keepDims = false);
  Value argmin(Value x, int64_t axis, DType index = DType::Int32, bool keepDims = false);
  std::pair<Value, Value> argmaxWithValue(Value x, int64_t axis, DType index = DType::Int32, bool keepDims = false);
  std::pair<Value, Value> argminWithValue(Value x, int64_t axis, DType index = DType::Int32, bool keepDims = false);
  // Welford over `axes` (float input): {variance with m2 / (n - correction), mean},
  // both in x's dtype; accumulates in float32 (float64 for float64 input).
  std::pair<Value, Value> varMean(Value x, std::vector<int64_t> axes, int64_t correction = 1, bool keepDims = false);
  // log(sum(exp(x))) over `axes` by the online max-and-sum (float input), in x's dtype.
  Value logSumExp(Value x, std::vector<int64_t> axes, bool keepDims = false);
  // Result `result` of the tuple reduction `t` over the element inputs `ins` (one shape).
  Value reduceTuple(std::vector<Value> ins, std::shared_ptr<const TupleReduction> t, int result,
                    std::vector<int64_t> axes, bool keepDims, DType outType);

  void output(Value v);
  void outputInto(Value v, Value input);  // Assign: write v into input's buffer

  // Convenience shorthands.
  Value add(Value a, Value b) { return binary(OpKind::Add, a, b); }
  Value mul(Value a, Value b) { return binary(OpKind::Mul, a, b); }
  Value sub(Value a, Value b) { return binary(OpKind::Sub, a, b); }
  Value neg(Value x) { return unary(OpKind::Neg, x); }
  // complex64: Complex(real, imag) from two float32 (broadcasting); CReal / CImag the
  // float32 parts; reduceSum / reduce(x, Reduction::prod(DType::Complex64), ...) reduce it.
  Value complex(Value re, Value im) { return binary(OpKind::Complex, re, im); }
  Value creal(Value z) { return unary(OpKind::CReal, z); }
  Value cimag(Value z) { return unary(OpKind::CImag, z); }
  Value conj(Value z) { return unary(OpKind::Conj, z); }

  const Tensor& info(Value v) const { return g_.tensor(v.id); }
  Graph build() const;  // verifies; throws polyred::Error

 private:
  Value addNode(Node n, Shape shape, DType t);
  int symbolIndex(const std::string& name);
  // Argmax/argmin along one axis: the index, and with `withValue` the value too.
  std::vector<Value> argExtremum(bool max, bool withValue, const std::string& op, Value x, int64_t axis,
                                 DType index, bool keepDims);
  std::string freshName(const std::string& base);
  Graph g_;
  int counter_ = 0;
};

// Normalizes reduction axes (negative -> counted from the end, empty -> all, sorted,
// unique); throws polyred::Error naming `op` if an axis is out of range.
std::vector<int64_t> normalizeAxes(std::vector<int64_t> axes, size_t rank, const std::string& op);

}  // namespace polyred
