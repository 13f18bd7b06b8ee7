// The reference interpreter's tensors (interp/reference.cc): Values, one tensor's
// elements widened as Scalar carries them (float to double, integers and bools to
// int64; a splat is one element standing for all), the strided walk that visits
// several broadcast operands row by row, and the conversions to and from HostTensor.
// Private to the interpreter.
#pragma once

#include <cstdint>
#include <vector>

#include "interp/host_tensor.h"
#include "ir/dtype.h"

namespace polyred::reference_values {

// One tensor's elements, widened like Scalar. A splat stores a single element that
// stands for every element of `shape`: constants stay one element however large the
// shape they broadcast to.
struct Values {
  DType dtype = DType::Float32;
  Shape shape;
  bool floating = true;  // isFloat(dtype): elements live in f, else in i
  bool complex = false;  // isComplex(dtype): real parts in f, imaginary parts in im
  bool splat = false;
  std::vector<double> f;
  std::vector<int64_t> i;
  std::vector<double> im;

  static Values make(DType t, Shape s, bool splat) {
    Values v;
    v.dtype = t;
    v.floating = isFloat(t);
    v.complex = isComplex(t);
    v.splat = splat;
    size_t n = splat ? 1 : static_cast<size_t>(numElements(s));
    if (v.floating || v.complex) v.f.resize(n);
    else v.i.resize(n);
    if (v.complex) v.im.resize(n);
    v.shape = std::move(s);
    return v;
  }
  Scalar at(int64_t k) const {
    if (complex) return Scalar::ofComplex(dtype, f[k], im[k]);
    return floating ? Scalar::ofFloat(dtype, f[k]) : Scalar::ofInt(dtype, i[k]);
  }
  void put(int64_t k, const Scalar& v) {
    if (complex) {
      f[k] = v.f;
      im[k] = v.im;
    } else if (floating) {
      f[k] = v.f;
    } else {
      i[k] = v.i;
    }
  }
};

// Strides that read `v` broadcast (numpy, right-aligned) to `target`.
std::vector<int64_t> broadcastStrides(const Values& v, const Shape& target);

// Visits the index space of a shape in row-major order for several operands at once,
// each with its own strides (0 along broadcast dims). Size-1 dims are dropped and
// neighbouring dims that every operand steps through contiguously are merged, so the
// innermost row handed to the callback is as long as possible.
class StridedWalk {
 public:
  StridedWalk(const Shape& shape, const std::vector<std::vector<int64_t>>& strides)
      : strides_(strides.size()), inner_(strides.size(), 0) {
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1) continue;
      if (!dims_.empty() && mergesWithPrevious(strides, shape, d)) {
        dims_.back() *= shape[d];
        for (size_t k = 0; k < strides.size(); ++k) strides_[k].back() = strides[k][d];
      } else {
        dims_.push_back(shape[d]);
        for (size_t k = 0; k < strides.size(); ++k) strides_[k].push_back(strides[k][d]);
      }
    }
    if (dims_.empty()) return;  // a single element: one row of length 1
    rowLength_ = dims_.back();
    dims_.pop_back();
    for (size_t k = 0; k < strides_.size(); ++k) {
      inner_[k] = strides_[k].back();
      strides_[k].pop_back();
    }
  }

  // Stride of operand k along the row.
  int64_t inner(size_t k) const { return inner_[k]; }

  // Calls rowFn(offsets, rowLength) once per row; offsets[k] is operand k's offset of
  // the row's first element.
  template <class RowFn>
  void forEachRow(RowFn&& rowFn) const {
    std::vector<int64_t> index(dims_.size(), 0), offset(strides_.size(), 0);
    do rowFn(offset.data(), rowLength_);
    while (advance(index, offset));
  }

 private:
  bool mergesWithPrevious(const std::vector<std::vector<int64_t>>& strides, const Shape& shape,
                          size_t d) const {
    for (size_t k = 0; k < strides.size(); ++k)
      if (strides_[k].back() != strides[k][d] * shape[d]) return false;
    return true;
  }

  // Odometer step over the outer dims; false once every row was visited.
  bool advance(std::vector<int64_t>& index, std::vector<int64_t>& offset) const {
    for (size_t d = dims_.size(); d-- > 0;) {
      for (size_t k = 0; k < offset.size(); ++k) offset[k] += strides_[k][d];
      if (++index[d] < dims_[d]) return true;
      for (size_t k = 0; k < offset.size(); ++k) offset[k] -= strides_[k][d] * dims_[d];
      index[d] = 0;
    }
    return false;
  }

  std::vector<int64_t> dims_;                  // outer dims, after merging
  std::vector<std::vector<int64_t>> strides_;  // [operand][outer dim]
  std::vector<int64_t> inner_;                 // [operand] stride along the row
  int64_t rowLength_ = 1;
};

Values fromHost(const HostTensor& h);
// Values already hold representable numbers, so the narrowing stores are exact.
HostTensor toHost(const Values& v);

}  // namespace polyred::reference_values
