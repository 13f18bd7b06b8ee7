// The reference interpreter, one element at a time: for checks of graphs too large
// to evaluate whole, and for the magnitude that sets a reduction's error bound.
//
// Takes a Graph and its inputs; gives value(t, k), the element k (row-major) of
// tensor t, with exactly the semantics of interp/reference.h (same scalar ops,
// casts, broadcasting, reduction order and double accumulation of float sums), by
// pulling only the elements k depends on. Reduction results are memoized per output
// element, so a softmax row's max and sum are computed once for the whole row. Memory
// is the memo (bounded: it is cleared when it grows past a few million entries, which
// costs time, never correctness), not copies of the tensors.
//
// magnitude(t, k) is a running bound on the size of the numbers whose rounding errors
// reach element k (compare.h uses it to scale the absolute tolerance):
//   inputs and constants        |v|
//   Add, Sub, AddN              sum of the operands' magnitudes (cancellation keeps it)
//   Mul                         product of the operands' magnitudes
//   Div                         m(a) / |b|
//   Neg, Abs, Maximum, Minimum,
//   Select, Assign, float Cast,
//   movement ops                the largest operand magnitude
//   Reduce sum                  sum of the terms' magnitudes
//   Reduce prod                 product of max(1, term magnitude): a bound on every
//                               partial product, in any order
//   Reduce max / min            the largest term magnitude
//   anything else               |v| (the op's own result: transcendental functions,
//                               comparisons, casts to integers, user combiners)
// A sum's or product's magnitude bounds every partial result, in any order, so it
// tells when an accumulator may have overflowed (compare.h). Non-finite operand
// magnitudes count as 0: a NaN or inf result is compared exactly anyway.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "interp/host_tensor.h"
#include "ir/graph.h"
#include "support/budget.h"

namespace polyred {

class PointReference {
 public:
  // Memoized elements kept at most (a few hundred MiB); past it, every memo is dropped.
  static constexpr size_t kMemoEntries = size_t{1} << 22;

  // `inputs` in g.inputs order (checked like evaluateReference); both must outlive
  // this object. `deadline` (optional) is polled while reductions accumulate.
  PointReference(const Graph& g, const std::vector<HostTensor>& inputs, const Deadline* deadline = nullptr,
                 size_t memoEntries = kMemoEntries);
  ~PointReference();

  Scalar value(TensorId t, int64_t k);
  double magnitude(TensorId t, int64_t k);
  // Scan elements folded so far, every run and refold counted (what tests bound).
  int64_t scanStepsFolded() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace polyred
