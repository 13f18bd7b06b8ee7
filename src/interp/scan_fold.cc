#include "interp/scan_fold.h"

namespace polyred {

ScanFold::ScanFold(const Reduction& r) : r_(r), acc_(r.identity.castTo(r.accType)) {
  const BuiltinCombiner c = r.builtin();
  inDouble_ = (isFloat(r.accType) || isComplex(r.accType)) && (c == BuiltinCombiner::Sum || c == BuiltinCombiner::Prod);
  f_ = acc_.f;
  im_ = acc_.im;
}

void ScanFold::add(const Scalar& x) {
  const Scalar v = x.type == r_.accType ? x : x.castTo(r_.accType);
  if (!inDouble_) {
    acc_ = r_.combine(acc_, v);
  } else if (r_.builtin() == BuiltinCombiner::Sum) {
    f_ += v.f;
    im_ += v.im;
  } else if (!isComplex(r_.accType)) {
    f_ *= v.f;
  } else {  // the textbook product, as interp/reference.cc's foldComplex
    const double re = f_ * v.f - im_ * v.im;
    im_ = f_ * v.im + im_ * v.f;
    f_ = re;
  }
}

Scalar ScanFold::value(DType out) const {
  if (!inDouble_) return acc_.castTo(out);
  if (isComplex(r_.accType)) return Scalar::ofComplex(DType::Complex64, f_, im_).castTo(out);
  return Scalar::ofFloat(DType::Float64, f_).castTo(out);
}

ScanLayout scanLayout(const Shape& shape, int64_t axis) {
  ScanLayout l;
  l.extent = shape.at(static_cast<size_t>(axis));
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) l.stride *= shape[d];
  const int64_t total = numElements(shape);
  l.runs = l.extent == 0 ? 0 : total / l.extent;
  return l;
}

HostTensor referenceScan(const Node& n, const HostTensor& x, DType out) {
  HostTensor result = HostTensor::zeros(out, x.shape);
  const ScanLayout l = scanLayout(x.shape, n.axes.at(0));
  for (int64_t run = 0; run < l.runs; ++run) {
    ScanFold fold(*n.reduction);
    const int64_t base = l.base(run);
    for (int64_t k = 0; k < l.extent; ++k) {
      const int64_t at = base + (n.reverse ? l.extent - 1 - k : k) * l.stride;
      if (n.exclusive) result.set(at, fold.value(out));
      fold.add(x.get(at));
      if (!n.exclusive) result.set(at, fold.value(out));
    }
  }
  return result;
}

}  // namespace polyred
