// Values and HostTensor (interp/reference_values.h): the byte layouts of every dtype
// read into widened elements and written back.
#include "interp/reference_values.h"

#include <cstring>

namespace polyred::reference_values {

// Strides that read `v` broadcast (numpy, right-aligned) to `target`.
std::vector<int64_t> broadcastStrides(const Values& v, const Shape& target) {
  std::vector<int64_t> strides(target.size(), 0);
  if (v.splat) return strides;
  std::vector<int64_t> own = rowMajorStrides(v.shape);
  size_t lead = target.size() - v.shape.size();
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (v.shape[d] != 1) strides[lead + d] = own[d];
  return strides;
}

namespace {

template <class T>
T loadAt(const uint8_t* p, int64_t k) {
  T v;
  std::memcpy(&v, p + k * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}
template <class T>
void storeAt(uint8_t* p, int64_t k, T v) {
  std::memcpy(p + k * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

template <class Dst, class Read>
void fillFrom(std::vector<Dst>& dst, Read read) {
  for (size_t k = 0; k < dst.size(); ++k) dst[k] = read(static_cast<int64_t>(k));
}

template <class Src, class Write>
void writeAll(const std::vector<Src>& src, bool splat, int64_t n, Write write) {
  for (int64_t k = 0; k < n; ++k) write(k, src[splat ? 0 : k]);
}

}  // namespace

Values fromHost(const HostTensor& h) {
  Values v = Values::make(h.dtype, h.shape, false);
  const uint8_t* p = h.bytes.data();
  switch (h.dtype) {
    case DType::Float64: fillFrom(v.f, [p](int64_t k) { return loadAt<double>(p, k); }); break;
    case DType::Float32: fillFrom(v.f, [p](int64_t k) { return double{loadAt<float>(p, k)}; }); break;
    case DType::Float16:
      fillFrom(v.f, [p](int64_t k) { return double{halfBitsToFloat(loadAt<uint16_t>(p, k))}; });
      break;
    case DType::BFloat16:
      fillFrom(v.f, [p](int64_t k) { return double{bfloat16BitsToFloat(loadAt<uint16_t>(p, k))}; });
      break;
    case DType::Bool: fillFrom(v.i, [p](int64_t k) { return int64_t{loadAt<uint8_t>(p, k) != 0}; }); break;
    case DType::Int8: fillFrom(v.i, [p](int64_t k) { return int64_t{loadAt<int8_t>(p, k)}; }); break;
    case DType::UInt8: fillFrom(v.i, [p](int64_t k) { return int64_t{loadAt<uint8_t>(p, k)}; }); break;
    case DType::Int32: fillFrom(v.i, [p](int64_t k) { return int64_t{loadAt<int32_t>(p, k)}; }); break;
    case DType::Int64: fillFrom(v.i, [p](int64_t k) { return loadAt<int64_t>(p, k); }); break;
    case DType::UInt16: fillFrom(v.i, [p](int64_t k) { return int64_t{loadAt<uint16_t>(p, k)}; }); break;
    case DType::UInt32: fillFrom(v.i, [p](int64_t k) { return int64_t{loadAt<uint32_t>(p, k)}; }); break;
    case DType::UInt64:  // the bit pattern (ir/dtype.h)
      fillFrom(v.i, [p](int64_t k) { return static_cast<int64_t>(loadAt<uint64_t>(p, k)); });
      break;
    case DType::Complex64:
      fillFrom(v.f, [p](int64_t k) { return double{loadAt<float>(p, 2 * k)}; });
      fillFrom(v.im, [p](int64_t k) { return double{loadAt<float>(p, 2 * k + 1)}; });
      break;
  }
  return v;
}

HostTensor toHost(const Values& v) {
  HostTensor h = HostTensor::zeros(v.dtype, v.shape);
  uint8_t* p = h.bytes.data();
  int64_t n = h.size();
  switch (v.dtype) {
    case DType::Float64: writeAll(v.f, v.splat, n, [p](int64_t k, double x) { storeAt(p, k, x); }); break;
    case DType::Float32:
      writeAll(v.f, v.splat, n, [p](int64_t k, double x) { storeAt(p, k, static_cast<float>(x)); });
      break;
    case DType::Float16:
      writeAll(v.f, v.splat, n,
               [p](int64_t k, double x) { storeAt(p, k, floatToHalfBits(static_cast<float>(x))); });
      break;
    case DType::BFloat16:
      writeAll(v.f, v.splat, n,
               [p](int64_t k, double x) { storeAt(p, k, floatToBFloat16Bits(static_cast<float>(x))); });
      break;
    case DType::Bool:
    case DType::UInt8:
      writeAll(v.i, v.splat, n, [p](int64_t k, int64_t x) { storeAt(p, k, static_cast<uint8_t>(x)); });
      break;
    case DType::Int8:
      writeAll(v.i, v.splat, n, [p](int64_t k, int64_t x) { storeAt(p, k, static_cast<int8_t>(x)); });
      break;
    case DType::Int32:
      writeAll(v.i, v.splat, n, [p](int64_t k, int64_t x) { storeAt(p, k, static_cast<int32_t>(x)); });
      break;
    case DType::Int64:
    case DType::UInt64: writeAll(v.i, v.splat, n, [p](int64_t k, int64_t x) { storeAt(p, k, x); }); break;
    case DType::UInt16:
      writeAll(v.i, v.splat, n, [p](int64_t k, int64_t x) { storeAt(p, k, static_cast<uint16_t>(x)); });
      break;
    case DType::UInt32:
      writeAll(v.i, v.splat, n, [p](int64_t k, int64_t x) { storeAt(p, k, static_cast<uint32_t>(x)); });
      break;
    case DType::Complex64:
      writeAll(v.f, v.splat, n, [p](int64_t k, double x) { storeAt(p, 2 * k, static_cast<float>(x)); });
      writeAll(v.im, v.splat, n, [p](int64_t k, double x) { storeAt(p, 2 * k + 1, static_cast<float>(x)); });
      break;
  }
  return h;
}

}  // namespace polyred::reference_values
