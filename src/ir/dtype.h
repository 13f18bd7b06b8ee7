// Element types of tensors and the host-side helpers to store and load them.
//
// Every value a CPU stage handles is carried as a Scalar: float types as double,
// integer and bool types as int64 (exact), complex64 as two doubles (real in f,
// imaginary in im; each part a float32 value once stored). Storing a Scalar into a typed buffer rounds
// (float16/bfloat16/float32: round to nearest even) or wraps (integers: two's
// complement, as the framework's declared type does). uint64 values past int64's range
// are carried as their two's complement bit pattern (Scalar::i < 0): the ops that read
// an order or a quotient from them are refused on uint64 (unsignedRefusal, ir/ops.h),
// and conversions read them as unsigned.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace polyred {

// The values are stable (the C API's polyred_dtype casts to them): new types are appended.
enum class DType : uint8_t {
  Bool, Int8, UInt8, Int32, Int64, Float16, BFloat16, Float32, Float64, Complex64, UInt16, UInt32, UInt64
};

inline constexpr DType kAllDTypes[] = {DType::Bool,    DType::Int8,     DType::UInt8,
                                       DType::Int32,   DType::Int64,    DType::Float16,
                                       DType::BFloat16, DType::Float32, DType::Float64};
// kAllDTypes lists the real types; complex64 (two float32 words: real, imaginary; 8
// bytes, aligned 8) is the one complex type, accepted by the ops of docs/format.md
// that define it and refused by the others.
// The wide unsigned types, with PyTorch's limited op set (unsignedRefusal, ir/ops.h):
// arithmetic wraps modulo 2^n, comparisons are unsigned.
inline constexpr DType kWideUnsignedDTypes[] = {DType::UInt16, DType::UInt32, DType::UInt64};

std::string_view dtypeName(DType t);             // "float32", as in composite JSON
std::optional<DType> parseDType(std::string_view name);
int dtypeBytes(DType t);
bool isFloat(DType t);
bool isInteger(DType t);  // int8..int64, uint8..uint64 (not bool, not complex)
bool isUnsigned(DType t);  // uint8, uint16, uint32, uint64
bool isComplex(DType t);  // complex64
// The part type of a complex dtype (float32 for complex64).
inline DType complexPartType(DType) { return DType::Float32; }
// The CUDA C++ type that stores a value of this dtype in memory.
std::string_view cudaStorageType(DType t);

// A host-side scalar value: double for float dtypes, int64 for integer and bool (uint64:
// its bit pattern), (f, im) for complex64.
struct Scalar {
  DType type = DType::Float32;
  double f = 0;
  int64_t i = 0;
  double im = 0;  // complex: the imaginary part (f is the real part)

  static Scalar ofFloat(DType t, double v) { return Scalar{t, v, 0}; }
  static Scalar ofInt(DType t, int64_t v) { return Scalar{t, 0, v}; }
  static Scalar ofBool(bool v) { return Scalar{DType::Bool, 0, v ? 1 : 0}; }
  static Scalar ofComplex(DType t, double re, double im) { return Scalar{t, re, 0, im}; }
  // Converts a number to `t` with the target's semantics: to a float type, rounded
  // once to nearest even (integers too: int64 -> float32 is not rounded through
  // double first); a float to an integer type, truncated toward zero and saturated to
  // the type's range (NaN -> 0); an integer to an integer type, wrapped; to bool,
  // nonzero; to complex64, the real part (rounded to float32), imaginary 0. A complex
  // value converts to complex64 by rounding each part, to a real type through its real
  // part (graphs cannot ask for that: the verifier refuses a complex -> real Cast), to
  // bool as `value != 0`.
  static Scalar convert(double v, DType t);
  static Scalar convert(int64_t v, DType t);
  Scalar castTo(DType t) const;

  double asDouble() const { return isFloat(type) || isComplex(type) ? f : static_cast<double>(i); }
  bool asBool() const { return isComplex(type) ? (f != 0 || im != 0) : isFloat(type) ? f != 0 : i != 0; }
  // Bitwise equality of the stored representation (NaN == NaN).
  bool identical(const Scalar& o) const;
  std::string toString() const;
};

// Conversions between float and the 16-bit float formats (round to nearest even).
uint16_t floatToHalfBits(float v);
float halfBitsToFloat(uint16_t h);
uint16_t floatToBFloat16Bits(float v);
float bfloat16BitsToFloat(uint16_t h);
// Rounds a double to the precision of a float dtype, returned as double.
double roundToFloatType(double v, DType t);
// Wraps an integer to the value range of an integer dtype (bool: v != 0).
int64_t wrapToIntType(int64_t v, DType t);
// The value range of an integer dtype (bool: [0, 1]); for uint64, the part of its range
// an int64 holds, [0, 2^63 - 1] (its conversions handle the rest).
struct IntRange {
  int64_t lo, hi;
};
IntRange intRange(DType t);

// Reads/writes one element of a packed buffer of dtype `t`.
Scalar loadScalar(const void* base, DType t, int64_t index);
void storeScalar(void* base, DType t, int64_t index, const Scalar& v);

}  // namespace polyred
