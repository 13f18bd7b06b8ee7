#include "ir/philox.h"

#include <cmath>

namespace polyred {

namespace {

constexpr uint32_t kMultiplier0 = 0xD2511F53u, kMultiplier1 = 0xCD9E8D57u;
constexpr uint32_t kKeyStep0 = 0x9E3779B9u, kKeyStep1 = 0xBB67AE85u;

PhiloxWords philoxRound(const PhiloxWords& c, uint32_t k0, uint32_t k1) {
  const uint64_t p0 = uint64_t{kMultiplier0} * c[0], p1 = uint64_t{kMultiplier1} * c[2];
  const auto hi = [](uint64_t p) { return static_cast<uint32_t>(p >> 32); };
  const auto lo = [](uint64_t p) { return static_cast<uint32_t>(p); };
  return {hi(p1) ^ c[1] ^ k0, lo(p1), hi(p0) ^ c[3] ^ k1, lo(p0)};
}

// u in (0, 1), exact in float32: an odd multiple of 2^-24.
double uniform24(uint32_t w) { return std::ldexp(static_cast<double>((w >> 8) | 1u), -24); }

// u in (0, 1), exact in float64: an odd multiple of 2^-53 from the top 52 bits of (a, b).
double uniform53(uint32_t a, uint32_t b) {
  const uint64_t m = (uint64_t{a} << 20) | (b >> 12);
  return std::ldexp(static_cast<double>(2 * m + 1), -53);
}

}  // namespace

PhiloxWords philox4x32_10(PhiloxWords counter, uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kKeyStep0;
      k1 += kKeyStep1;
    }
    counter = philoxRound(counter, k0, k1);
  }
  return counter;
}

double philoxNormal(int64_t counter, int64_t key, DType result) {
  const bool wide = result == DType::Float64;
  const int perBlock = wide ? 2 : 4;  // values a Philox block gives
  const uint64_t block = static_cast<uint64_t>(counter) / perBlock, k = static_cast<uint64_t>(key);
  const auto lane = static_cast<int>(static_cast<uint64_t>(counter) % perBlock);
  const PhiloxWords w = philox4x32_10({static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0},
                                      static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32));
  const int pair = wide ? 0 : lane / 2;  // the words of (u1, u2)
  const double u1 = wide ? uniform53(w[0], w[1]) : uniform24(w[2 * pair]);
  const double u2 = wide ? uniform53(w[2], w[3]) : uniform24(w[2 * pair + 1]);
  const double angle = 2.0 * M_PI * u2;
  return std::sqrt(-2.0 * std::log(u1)) * (lane % 2 ? std::sin(angle) : std::cos(angle));
}

int64_t philoxKey(int64_t seed, int64_t seed2) {
  const auto s = static_cast<uint64_t>(seed), s2 = static_cast<uint64_t>(seed2);
  return static_cast<int64_t>(s ^ ((s2 << 32) | (s2 >> 32)));
}

}  // namespace polyred
