#include "interp/random_inputs.h"

#include <cstring>

#include "support/splitmix64.h"

namespace polyred {

namespace {

// A float in the range, rounded later to the tensor's dtype. Symmetric values are
// k * 2^-23 for k in [-2^23, 2^23) \ {0}: exact in float32 and never 0 in any float
// dtype (the smallest, 2^-23, is above float16's smallest subnormal).
double randomFloat(SplitMix64& rng, ValueRange r) {
  if (r == ValueRange::Positive) return 0.5 + 1.5 * rng.unit();
  for (;;) {
    auto k = static_cast<int64_t>(rng.next() >> 40) - (int64_t{1} << 23);
    if (k != 0) return static_cast<double>(k) * 0x1p-23;
  }
}

int64_t randomInt(SplitMix64& rng, DType t, ValueRange r) {
  bool positiveOnly = r == ValueRange::Positive || isUnsigned(t);
  int64_t low = positiveOnly ? 1 : -100;
  return low + static_cast<int64_t>(rng.next() % static_cast<uint64_t>(100 - low));
}

template <class T, class Draw>
void fill(HostTensor& h, Draw draw) {
  for (int64_t k = 0; k < h.size(); ++k) {
    T v = draw();
    std::memcpy(h.bytes.data() + k * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
  }
}

}  // namespace

HostTensor makeRandomTensor(DType t, const Shape& s, uint64_t seed, ValueRange r) {
  HostTensor h = HostTensor::zeros(t, s);
  SplitMix64 rng(seed);
  auto f = [&] { return randomFloat(rng, r); };
  auto i = [&] { return randomInt(rng, t, r); };
  switch (t) {
    case DType::Float64: fill<double>(h, f); break;
    case DType::Float32: fill<float>(h, [&] { return static_cast<float>(f()); }); break;
    case DType::Float16: fill<uint16_t>(h, [&] { return floatToHalfBits(static_cast<float>(f())); }); break;
    case DType::BFloat16: fill<uint16_t>(h, [&] { return floatToBFloat16Bits(static_cast<float>(f())); }); break;
    case DType::Bool: fill<uint8_t>(h, [&] { return static_cast<uint8_t>(rng.next() % 10 != 0); }); break;
    case DType::Int8: fill<int8_t>(h, [&] { return static_cast<int8_t>(i()); }); break;
    case DType::UInt8: fill<uint8_t>(h, [&] { return static_cast<uint8_t>(i()); }); break;
    case DType::Int32: fill<int32_t>(h, [&] { return static_cast<int32_t>(i()); }); break;
    case DType::Int64: fill<int64_t>(h, i); break;
    case DType::UInt16: fill<uint16_t>(h, [&] { return static_cast<uint16_t>(i()); }); break;
    case DType::UInt32: fill<uint32_t>(h, [&] { return static_cast<uint32_t>(i()); }); break;
    case DType::UInt64: fill<uint64_t>(h, [&] { return static_cast<uint64_t>(i()); }); break;
    case DType::Complex64:  // both parts drawn as float32 values (real, then imaginary)
      for (int64_t k = 0; k < 2 * h.size(); ++k) {
        const float v = static_cast<float>(f());
        std::memcpy(h.bytes.data() + k * 4, &v, 4);
      }
      break;
  }
  return h;
}

std::vector<HostTensor> makeRandomInputs(const Graph& g, uint64_t seed, ValueRange r) {
  std::vector<HostTensor> inputs;
  SplitMix64 streams(seed);
  for (TensorId id : g.inputs) {
    const Tensor& t = g.tensor(id);
    inputs.push_back(makeRandomTensor(t.dtype, t.shape, streams.next(), r));
  }
  return inputs;
}

}  // namespace polyred
