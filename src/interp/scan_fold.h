// The fold of a Scan (ir/ops.h) as the reference interpreters compute it.
//
// Takes: the scan's Reduction and its elements in scan order. Gives: the running value
// after each element, cast to the output dtype. Float sums and products accumulate in
// double whatever the accumulator type, complex64 ones in double parts (the reduction
// oracle's rules, reference.h); every
// other fold is Reduction::combine in the accumulator type (integer sums wrap there
// exactly as a kernel's accumulator does; max and min return an operand).
// interp/reference.cc runs it over whole tensors (referenceScan), interp/
// point_reference.cc over the prefix of one element.
#pragma once

#include "interp/host_tensor.h"
#include "ir/graph.h"
#include "ir/reduction.h"

namespace polyred {

class ScanFold {
 public:
  explicit ScanFold(const Reduction& r);
  void add(const Scalar& x);  // x of any dtype: converted to the accumulator type first
  Scalar value(DType out) const;

 private:
  const Reduction& r_;
  bool inDouble_ = false;  // a float or complex sum or product
  double f_ = 0, im_ = 0;
  Scalar acc_;
};

// The Scan node `n` over x (its input), with results of dtype `out`.
HostTensor referenceScan(const Node& n, const HostTensor& x, DType out);

// Where the scan's elements lie in memory: element k of a run along the axis is at
// base + k * stride (row-major), `extent` of them; runs are counted by `runs`.
struct ScanLayout {
  int64_t extent = 1, stride = 1, runs = 1;
  // The start of run `r` (its element 0, before any reversal).
  int64_t base(int64_t r) const { return r / stride * extent * stride + r % stride; }
};
ScanLayout scanLayout(const Shape& shape, int64_t axis);

}  // namespace polyred
