// Host tensors: a dtype, a row-major shape and the packed bytes of the elements.
//
// This is the currency between the CPU stages and the runtime: the reference
// interpreter takes and returns HostTensors, random inputs are HostTensors, and the
// runtime copies them to and from device buffers byte for byte. Element access goes
// through Scalar (loadScalar/storeScalar), so a value set here is rounded or wrapped
// exactly as a kernel storing it would.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/dtype.h"
#include "ir/graph.h"

namespace polyred {

struct HostTensor {
  DType dtype = DType::Float32;
  Shape shape;
  std::vector<uint8_t> bytes;

  static HostTensor zeros(DType t, Shape s);
  // A tensor holding `values` in row-major order, each converted to `t` with
  // Scalar::convert (rounded or wrapped). Throws polyred::Error on a count mismatch.
  static HostTensor fromValues(DType t, Shape s, const std::vector<double>& values);

  int64_t size() const;  // number of elements
  Scalar get(int64_t i) const;
  void set(int64_t i, const Scalar& v);  // converts v to dtype

  void* data() { return bytes.data(); }
  const void* data() const { return bytes.data(); }
  int64_t byteSize() const { return static_cast<int64_t>(bytes.size()); }
};

}  // namespace polyred
