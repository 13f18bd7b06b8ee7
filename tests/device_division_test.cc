// pr_div_invariant and pr_div_invariant_lanes (src/device/polyred_division.cuh), run on
// the CPU (the header compiles as plain C++): within an ulp of IEEE division on ordinary
// values and at the edges of the float range, bit for bit on special ones; the vector
// form bit for bit the scalar one on each lane. pr_div_coarse, rounded to float16 and
// bfloat16: the correctly rounded 16-bit quotient or its neighbour, bit for bit on
// special values.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <utility>

#include "device/polyred_division.cuh"
#include "ir/dtype.h"

namespace {

// Distance in ulps between two finite floats of the same sign (or zeros).
int64_t ulpsApart(float x, float y) {
  auto ordered = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? int64_t{INT32_MIN} - i : int64_t{i};
  };
  return std::llabs(ordered(x) - ordered(y));
}

uint32_t bitsOf(float f) {
  uint32_t i;
  std::memcpy(&i, &f, sizeof i);
  return i;
}

// Random quotients a / b: softmax's case (a in [0, 1], b a sum of such terms) on even
// draws, any exponents on odd ones.
class RandomQuotients {
 public:
  explicit RandomQuotients(uint64_t seed) : rng_(seed) {}
  std::pair<float, float> draw(int k) {
    const bool softmax = k % 2 == 0;
    const float a = softmax ? unit_(rng_) : anyFloat();
    const float b = softmax ? 1.0f + 50000.0f * unit_(rng_) : anyFloat();
    return {a, b};
  }

 private:
  float anyFloat() { return std::ldexp(mantissa_(rng_), exponent_(rng_)) * (sign_(rng_) ? -1.0f : 1.0f); }
  std::mt19937_64 rng_;
  std::uniform_real_distribution<float> unit_{0.0f, 1.0f}, mantissa_{1.0f, 2.0f};
  std::uniform_int_distribution<int> exponent_{-140, 120}, sign_{0, 1};
};

TEST(DeviceDivision, WithinAnUlpOfIeeeDivisionOnOrdinaryValues) {
  RandomQuotients quotients(11);
  int64_t exact = 0, total = 0, worst = 0;
  for (int k = 0; k < 2000000; ++k) {
    const auto [a, b] = quotients.draw(k);
    const float ieee = a / b, q = pr_div_invariant(a, pr_invariant_divisor(b));
    if (!std::isfinite(ieee)) continue;
    ASSERT_EQ(std::signbit(q), std::signbit(ieee)) << a << " / " << b;
    const int64_t d = ulpsApart(q, ieee);
    ASSERT_LE(d, 1) << a << " / " << b << ": " << q << " against " << ieee;
    worst = std::max(worst, d);
    exact += d == 0;
    ++total;
  }
  std::printf("pr_div_invariant: %lld of %lld quotients bit for bit, worst %lld ulp\n", static_cast<long long>(exact),
              static_cast<long long>(total), static_cast<long long>(worst));
  EXPECT_GT(exact, total * 99 / 100);
}

TEST(DeviceDivision, SpecialValuesDivideAsIeeeBitForBit) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float tiny = std::numeric_limits<float>::denorm_min(), big = std::numeric_limits<float>::max();
  const float values[] = {0.0f, -0.0f, 1.0f, -3.5f, inf, -inf, nan, tiny, -tiny, 1e-38f, big, -big, static_cast<float>(7e-46), 3e38f};
  for (float a : values)
    for (float b : values) {
      const float ieee = a / b, q = pr_div_invariant(a, pr_invariant_divisor(b));
      if (std::isnan(ieee)) {
        EXPECT_TRUE(std::isnan(q)) << a << " / " << b;
        continue;
      }
      if (std::isfinite(ieee) && ieee != 0.0f)
        EXPECT_LE(ulpsApart(q, ieee), 1) << a << " / " << b;
      else
        EXPECT_EQ(bitsOf(q), bitsOf(ieee)) << a << " / " << b << ": " << q << " against " << ieee;
    }
}

TEST(DeviceDivision, QuotientsAtTheEdgesOfTheRangeAreWithinAnUlp) {
  // Where a * (1/b) alone underflows to 0 or overflows to infinity the product is the
  // quotient (no branch): a / b is then at most the next float (the smallest subnormal,
  // the largest float). Quotients swept across both edges, each within an ulp (the
  // infinity counted as the float after the largest), zeros and infinities bit for bit.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> spread(0.5, 2.0);
  int underflows = 0, overflows = 0;
  for (int k = 0; k < 200000; ++k) {
    const float b = static_cast<float>((k % 2 ? 3.0 : 0.37) * spread(rng));
    const bool high = k % 4 < 2;
    const double target = high ? 3.4028234663852886e38 : 1.401298464324817e-45;  // FLT_MAX, 2^-149
    const float a = static_cast<float>(target * b * spread(rng) * (k % 3 ? 1.0 : -1.0));
    if (!std::isfinite(a)) continue;
    const float ieee = a / b, q = pr_div_invariant(a, pr_invariant_divisor(b));
    ASSERT_LE(ulpsApart(q, ieee), 1) << a << " / " << b << ": " << q << " against " << ieee;
    if (ieee == 0.0f || std::isinf(ieee)) {
      ASSERT_EQ(std::signbit(q), std::signbit(ieee)) << a << " / " << b;
    }
    (high ? overflows : underflows) += std::isinf(ieee) || ieee == 0.0f;
  }
  EXPECT_GT(underflows, 1000);
  EXPECT_GT(overflows, 1000);
}

TEST(DeviceDivision, LanesDivideAsEachLaneAlone) {
  // Ordinary vectors take the one-test path; a vector with one special lane (a zero or
  // underflowing product, an infinity, NaN, a subnormal) or a special divisor takes
  // each lane's own division -- either way every lane is pr_div_invariant's, bit for bit.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float specials[] = {0.0f, -0.0f, inf, -inf, nan, std::numeric_limits<float>::denorm_min(), 1e-40f, 3e38f};
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  int ordinary = 0, special = 0;
  for (int k = 0; k < 20000; ++k) {
    float a[8], q[8];
    const float divisor = k % 97 == 0 ? specials[k % 8] : 1.0f + 50000.0f * unit(rng);
    for (int l = 0; l < 8; ++l) a[l] = unit(rng) * (k % 3 ? 1.0f : -1e30f);
    const bool withSpecial = k % 5 == 0;
    if (withSpecial) a[k % 8] = specials[(k / 5) % 8];
    pr_div_invariant_lanes<8>(q, a, pr_invariant_divisor(divisor));
    for (int l = 0; l < 8; ++l) {
      const float one = pr_div_invariant(a[l], pr_invariant_divisor(divisor));
      ASSERT_EQ(bitsOf(q[l]), bitsOf(one)) << "lane " << l << ": " << a[l] << " / " << divisor;
    }
    (withSpecial || k % 97 == 0 ? special : ordinary)++;
  }
  EXPECT_GT(ordinary, 10000);
  EXPECT_GT(special, 4000);
}

// Distance between two 16-bit floats' bit patterns as ordered values (same sign).
int sixteenBitStepsApart(uint16_t x, uint16_t y) {
  auto ordered = [](uint16_t h) { return (h & 0x8000) ? -static_cast<int>(h & 0x7fff) : static_cast<int>(h); };
  return std::abs(ordered(x) - ordered(y));
}

TEST(DeviceDivision, CoarseQuotientsRoundTo16BitsAsTheQuotientOrItsNeighbour) {
  // pr_div_coarse(a, d) = a * (1/b): within 2^-23 relative of a / b, so rounded to a
  // 16-bit float it is the IEEE quotient's rounding, or a neighbour where a / b lies at
  // a rounding boundary -- softmax's quotients, then any exponents, both 16-bit types.
  RandomQuotients quotients(23);
  int64_t same = 0, total = 0;
  for (int k = 0; k < 2000000; ++k) {
    const auto [a, b] = quotients.draw(k);
    const float ieee = a / b, q = pr_div_coarse(a, pr_invariant_divisor(b));
    for (const bool half : {true, false}) {
      const uint16_t want = half ? polyred::floatToHalfBits(ieee) : polyred::floatToBFloat16Bits(ieee);
      const uint16_t got = half ? polyred::floatToHalfBits(q) : polyred::floatToBFloat16Bits(q);
      ASSERT_LE(sixteenBitStepsApart(got, want), 1)
          << a << " / " << b << (half ? " in float16: " : " in bfloat16: ") << got << " against " << want;
      same += got == want;
      ++total;
    }
  }
  std::printf("pr_div_coarse: %lld of %lld 16-bit quotients bit for bit\n", static_cast<long long>(same),
              static_cast<long long>(total));
  EXPECT_GT(same, total * 999 / 1000);  // a neighbour only at rounding boundaries
}

TEST(DeviceDivision, CoarseQuotientsOfSpecialValuesAreIeeeBitForBit) {
  // Zeros, infinities and NaN of the dividend or the divisor, subnormal and huge
  // divisors (whose reciprocal is not usable: the IEEE division), rounded to 16 bits.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float tiny = std::numeric_limits<float>::denorm_min(), big = std::numeric_limits<float>::max();
  const float values[] = {0.0f, -0.0f, 1.0f, -3.5f, inf, -inf, nan, tiny, -tiny, 1e-38f, big, -big, 3e38f, 65504.0f};
  for (float a : values)
    for (float b : values) {
      const float ieee = a / b, q = pr_div_coarse(a, pr_invariant_divisor(b));
      if (std::isnan(ieee)) {
        EXPECT_TRUE(std::isnan(q)) << a << " / " << b;
        continue;
      }
      EXPECT_LE(sixteenBitStepsApart(polyred::floatToHalfBits(q), polyred::floatToHalfBits(ieee)), 1) << a << " / " << b;
      EXPECT_LE(sixteenBitStepsApart(polyred::floatToBFloat16Bits(q), polyred::floatToBFloat16Bits(ieee)), 1)
          << a << " / " << b;
      if (ieee == 0.0f || std::isinf(ieee)) {
        EXPECT_EQ(bitsOf(q), bitsOf(ieee)) << a << " / " << b << ": " << q << " against " << ieee;
      }
    }
}

TEST(DeviceDivision, CoarseLanesDivideAsEachLaneAlone) {
  const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::denorm_min(), 1e-40f, 3e38f, 1.0f};
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (int k = 0; k < 20000; ++k) {
    float a[4], q[4];
    const float divisor = k % 31 == 0 ? specials[k % 8] : 1.0f + 50000.0f * unit(rng);
    for (int l = 0; l < 4; ++l) a[l] = k % 7 == 0 && l == 1 ? specials[(k / 7) % 8] : unit(rng);
    pr_div_coarse_lanes<4>(q, a, pr_invariant_divisor(divisor));
    for (int l = 0; l < 4; ++l) {
      const float one = pr_div_coarse(a[l], pr_invariant_divisor(divisor));
      ASSERT_EQ(bitsOf(q[l]), bitsOf(one)) << "lane " << l << ": " << a[l] << " / " << divisor;
    }
  }
}

}  // namespace
