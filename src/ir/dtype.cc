#include "ir/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "support/error.h"

namespace polyred {

namespace {
struct DTypeInfo {
  DType type;
  std::string_view name;
  int bytes;
  std::string_view cuda;
};
constexpr DTypeInfo kInfo[] = {
    {DType::Bool, "bool", 1, "bool"},
    {DType::Int8, "int8", 1, "signed char"},
    {DType::UInt8, "uint8", 1, "unsigned char"},
    {DType::Int32, "int32", 4, "int"},
    {DType::Int64, "int64", 8, "long long"},
    {DType::Float16, "float16", 2, "__half"},
    {DType::BFloat16, "bfloat16", 2, "__nv_bfloat16"},
    {DType::Float32, "float32", 4, "float"},
    {DType::Float64, "float64", 8, "double"},
    {DType::Complex64, "complex64", 8, "pr_complex"},
    {DType::UInt16, "uint16", 2, "unsigned short"},
    {DType::UInt32, "uint32", 4, "unsigned int"},
    {DType::UInt64, "uint64", 8, "unsigned long long"},
};
const DTypeInfo& info(DType t) { return kInfo[static_cast<int>(t)]; }
}  // namespace

std::string_view dtypeName(DType t) { return info(t).name; }
int dtypeBytes(DType t) { return info(t).bytes; }
std::string_view cudaStorageType(DType t) { return info(t).cuda; }

std::optional<DType> parseDType(std::string_view name) {
  for (const auto& i : kInfo)
    if (i.name == name) return i.type;
  return std::nullopt;
}

bool isFloat(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 ||
         t == DType::Float64;
}
bool isInteger(DType t) { return !isFloat(t) && t != DType::Bool && t != DType::Complex64; }
bool isComplex(DType t) { return t == DType::Complex64; }
bool isUnsigned(DType t) {
  return t == DType::UInt8 || t == DType::UInt16 || t == DType::UInt32 || t == DType::UInt64;
}

uint16_t floatToHalfBits(float v) {
  uint32_t x = std::bit_cast<uint32_t>(v);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow->inf
  if (absx < 0x38800000u) {  // result is subnormal or zero in half
    // Add the value to 0.5 (in float) so the FPU rounds the mantissa for us.
    float f = std::bit_cast<float>(absx) + 0.5f;
    return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(f) - 0x3f000000u));
  }
  uint32_t mant_odd = (absx >> 13) & 1u;
  absx += 0xc8000fffu + mant_odd;  // rebias exponent, round to nearest even
  return static_cast<uint16_t>(sign | (absx >> 13));
}

float halfBitsToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float f = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -f : f;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t floatToBFloat16Bits(float v) {
  uint32_t x = std::bit_cast<uint32_t>(v);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

float bfloat16BitsToFloat(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

double roundToFloatType(double v, DType t) {
  switch (t) {
    case DType::Float64: return v;
    case DType::Float32: return static_cast<float>(v);
    case DType::Float16: return halfBitsToFloat(floatToHalfBits(static_cast<float>(v)));
    case DType::BFloat16: return bfloat16BitsToFloat(floatToBFloat16Bits(static_cast<float>(v)));
    default: POLYRED_CHECK(false, "roundToFloatType on non-float dtype");
  }
}

int64_t wrapToIntType(int64_t v, DType t) {
  switch (t) {
    case DType::Bool: return v != 0;
    case DType::Int8: return static_cast<int8_t>(static_cast<uint8_t>(v));
    case DType::UInt8: return static_cast<uint8_t>(v);
    case DType::Int32: return static_cast<int32_t>(static_cast<uint32_t>(v));
    case DType::Int64: return v;
    case DType::UInt16: return static_cast<uint16_t>(v);
    case DType::UInt32: return static_cast<uint32_t>(v);
    case DType::UInt64: return v;  // the bit pattern (dtype.h)
    default: POLYRED_CHECK(false, "wrapToIntType on float dtype");
  }
}

IntRange intRange(DType t) {
  switch (t) {
    case DType::Bool: return {0, 1};
    case DType::Int8: return {-128, 127};
    case DType::UInt8: return {0, 255};
    case DType::Int32: return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    case DType::Int64: return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
    case DType::UInt16: return {0, std::numeric_limits<uint16_t>::max()};
    case DType::UInt32: return {0, std::numeric_limits<uint32_t>::max()};
    case DType::UInt64: return {0, std::numeric_limits<int64_t>::max()};
    default: POLYRED_CHECK(false, "intRange of a float dtype");
  }
}

// Float to integer: truncates toward zero; values past the target's range and
// infinities saturate to its bounds; NaN gives 0. This is CUDA's cvt.rzi.sat and
// PyTorch's CUDA result, and the device library's pr_f2int.
static int64_t floatToInt(double v, DType t) {
  if (std::isnan(v)) return 0;
  if (t == DType::UInt64) {  // [0, 2^64 - 1], as its bit pattern
    if (v >= 0x1p64) return -1;
    if (v <= 0) return 0;
    return static_cast<int64_t>(static_cast<uint64_t>(v));
  }
  const IntRange r = intRange(t);
  if (v >= static_cast<double>(r.hi)) return r.hi;
  if (v <= static_cast<double>(r.lo)) return r.lo;
  return static_cast<int64_t>(v);
}

// The integer v rounded once, to nearest even, to a `bits`-bit significand (exact
// as a double for bits <= 53). Rounding through double first would round twice.
// a is the magnitude, `negative` its sign.
static double roundIntegerToSignificand(uint64_t a, bool negative, int bits) {
  const int width = static_cast<int>(std::bit_width(a));
  if (width <= bits) return negative ? -static_cast<double>(a) : static_cast<double>(a);
  const int shift = width - bits;
  uint64_t keep = a >> shift;
  const uint64_t rest = a & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
  if (rest > half || (rest == half && (keep & 1))) ++keep;
  const double r = std::ldexp(static_cast<double>(keep), shift);
  return negative ? -r : r;
}
static double roundIntegerToSignificand(int64_t v, int bits) {
  return roundIntegerToSignificand(v < 0 ? 0ull - static_cast<uint64_t>(v) : static_cast<uint64_t>(v), v < 0, bits);
}

static int significandBits(DType t) {
  switch (t) {
    case DType::Float16: return 11;
    case DType::BFloat16: return 8;
    case DType::Float32: return 24;
    default: return 53;
  }
}

Scalar Scalar::convert(double v, DType t) {
  if (isComplex(t)) return ofComplex(t, roundToFloatType(v, DType::Float32), 0);
  if (isFloat(t)) return ofFloat(t, roundToFloatType(v, t));
  if (t == DType::Bool) return ofBool(v != 0);
  return ofInt(t, floatToInt(v, t));
}

Scalar Scalar::convert(int64_t v, DType t) {
  // Rounded once to t's precision, the result converts to t exactly (or overflows).
  if (isComplex(t)) return ofComplex(t, convert(v, DType::Float32).f, 0);
  if (isFloat(t)) return ofFloat(t, roundToFloatType(roundIntegerToSignificand(v, significandBits(t)), t));
  return ofInt(t, wrapToIntType(v, t));
}

Scalar Scalar::castTo(DType t) const {
  if (isComplex(type)) {
    if (isComplex(t)) return ofComplex(t, roundToFloatType(f, DType::Float32), roundToFloatType(im, DType::Float32));
    if (t == DType::Bool) return ofBool(f != 0 || im != 0);
    return convert(f, t);  // the real part (see the header)
  }
  // A uint64 past int64's range reads as unsigned where the target keeps its magnitude.
  if (type == DType::UInt64 && i < 0 && (isFloat(t) || isComplex(t))) {
    const DType rounding = isComplex(t) ? DType::Float32 : t;
    return convert(roundIntegerToSignificand(static_cast<uint64_t>(i), false, significandBits(rounding)), t);
  }
  return isFloat(type) ? convert(f, t) : convert(i, t);
}

bool Scalar::identical(const Scalar& o) const {
  if (type != o.type) return false;
  if (isComplex(type)) {
    auto same = [](double a, double b) {
      return (std::isnan(a) && std::isnan(b)) || std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
    };
    return same(f, o.f) && same(im, o.im);
  }
  if (!isFloat(type)) return i == o.i;
  if (std::isnan(f) && std::isnan(o.f)) return true;
  return std::bit_cast<uint64_t>(f) == std::bit_cast<uint64_t>(o.f);
}

std::string Scalar::toString() const {
  std::ostringstream os;
  os.precision(17);
  if (isComplex(type)) {
    os << "(" << f << (std::signbit(im) ? " - " : " + ") << std::fabs(im) << "j)";
    return os.str();
  }
  if (type == DType::UInt64) return std::to_string(static_cast<uint64_t>(i));
  if (!isFloat(type)) return std::to_string(i);
  os << f;
  return os.str();
}

Scalar loadScalar(const void* base, DType t, int64_t index) {
  const char* p = static_cast<const char*>(base) + index * dtypeBytes(t);
  auto rd = [p](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t) {
    case DType::Bool: return Scalar::ofBool(rd(uint8_t{}) != 0);
    case DType::Int8: return Scalar::ofInt(t, rd(int8_t{}));
    case DType::UInt8: return Scalar::ofInt(t, rd(uint8_t{}));
    case DType::Int32: return Scalar::ofInt(t, rd(int32_t{}));
    case DType::Int64: return Scalar::ofInt(t, rd(int64_t{}));
    case DType::UInt16: return Scalar::ofInt(t, rd(uint16_t{}));
    case DType::UInt32: return Scalar::ofInt(t, rd(uint32_t{}));
    case DType::UInt64: return Scalar::ofInt(t, static_cast<int64_t>(rd(uint64_t{})));
    case DType::Float16: return Scalar::ofFloat(t, halfBitsToFloat(rd(uint16_t{})));
    case DType::BFloat16: return Scalar::ofFloat(t, bfloat16BitsToFloat(rd(uint16_t{})));
    case DType::Float32: return Scalar::ofFloat(t, rd(float{}));
    case DType::Float64: return Scalar::ofFloat(t, rd(double{}));
    case DType::Complex64: {
      float re = rd(float{}), im;
      std::memcpy(&im, p + 4, sizeof im);
      return Scalar::ofComplex(t, re, im);
    }
  }
  POLYRED_CHECK(false, "bad dtype");
}

void storeScalar(void* base, DType t, int64_t index, const Scalar& value) {
  Scalar v = value.castTo(t);
  char* p = static_cast<char*>(base) + index * dtypeBytes(t);
  auto wr = [p](auto x) { std::memcpy(p, &x, sizeof x); };
  switch (t) {
    case DType::Bool: wr(static_cast<uint8_t>(v.i != 0)); return;
    case DType::Int8: wr(static_cast<int8_t>(v.i)); return;
    case DType::UInt8: wr(static_cast<uint8_t>(v.i)); return;
    case DType::Int32: wr(static_cast<int32_t>(v.i)); return;
    case DType::Int64: wr(static_cast<int64_t>(v.i)); return;
    case DType::UInt16: wr(static_cast<uint16_t>(v.i)); return;
    case DType::UInt32: wr(static_cast<uint32_t>(v.i)); return;
    case DType::UInt64: wr(static_cast<uint64_t>(v.i)); return;
    case DType::Float16: wr(floatToHalfBits(static_cast<float>(v.f))); return;
    case DType::BFloat16: wr(floatToBFloat16Bits(static_cast<float>(v.f))); return;
    case DType::Float32: wr(static_cast<float>(v.f)); return;
    case DType::Float64: wr(v.f); return;
    case DType::Complex64: {
      const float parts[2] = {static_cast<float>(v.f), static_cast<float>(v.im)};
      std::memcpy(p, parts, sizeof parts);
      return;
    }
  }
}

}  // namespace polyred
