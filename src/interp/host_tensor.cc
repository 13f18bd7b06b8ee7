#include "interp/host_tensor.h"

#include "support/error.h"

namespace polyred {

HostTensor HostTensor::zeros(DType t, Shape s) {
  HostTensor h;
  h.dtype = t;
  h.bytes.assign(static_cast<size_t>(numElements(s) * dtypeBytes(t)), 0);
  h.shape = std::move(s);
  return h;
}

HostTensor HostTensor::fromValues(DType t, Shape s, const std::vector<double>& values) {
  HostTensor h = zeros(t, std::move(s));
  if (static_cast<int64_t>(values.size()) != h.size())
    throw Error("HostTensor::fromValues: " + std::to_string(values.size()) + " values for shape " +
                toString(h.shape));
  for (size_t k = 0; k < values.size(); ++k) h.set(static_cast<int64_t>(k), Scalar::convert(values[k], t));
  return h;
}

int64_t HostTensor::size() const { return byteSize() / dtypeBytes(dtype); }

Scalar HostTensor::get(int64_t i) const {
  POLYRED_CHECK(i >= 0 && i < size(), "HostTensor::get index " << i << " out of range " << size());
  return loadScalar(bytes.data(), dtype, i);
}

void HostTensor::set(int64_t i, const Scalar& v) {
  POLYRED_CHECK(i >= 0 && i < size(), "HostTensor::set index " << i << " out of range " << size());
  storeScalar(bytes.data(), dtype, i, v);
}

}  // namespace polyred
