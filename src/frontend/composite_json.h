// Shared reading of composite JSON text and values.
//
// parseCompositeJson takes the text of a file and gives its JSON tree; malformed text,
// and nesting deeper than real files need, is a polyred::Error naming the file.
// scalarFromJson takes a JSON value and the dtype it is read as. Gives: the Scalar (booleans,
// integers -- unsigned ones past int64 through double --, floats, and "inf", "-inf",
// "nan" for float types), or nothing when the value is not a number; the caller says
// why in its own terms (the reader's constants, the tuple declarations' identities).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/dtype.h"

namespace polyred {

nlohmann::json parseCompositeJson(const std::string& text, const std::string& file);

inline std::optional<Scalar> scalarFromJson(const nlohmann::json& j, DType t) {
  if (j.is_boolean()) return Scalar::convert(int64_t{j.get<bool>()}, t);
  if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()})
    return Scalar::convert(static_cast<double>(j.get<uint64_t>()), t);
  if (j.is_number_integer()) return Scalar::convert(j.get<int64_t>(), t);
  if (j.is_number_float()) return Scalar::convert(j.get<double>(), t);
  if (j.is_string() && isFloat(t)) {
    const std::string s = j.get<std::string>();
    if (s == "inf") return Scalar::convert(std::numeric_limits<double>::infinity(), t);
    if (s == "-inf") return Scalar::convert(-std::numeric_limits<double>::infinity(), t);
    if (s == "nan") return Scalar::convert(std::numeric_limits<double>::quiet_NaN(), t);
  }
  return std::nullopt;
}

// The inverse, for the writer: a bool, an integer, a float, or "inf", "-inf", "nan"
// (JSON numbers cannot hold them). Throws UnsupportedError for a complex64 value with a
// nonzero imaginary part, which composite JSON cannot hold.
nlohmann::json scalarToJson(const Scalar& v);

}  // namespace polyred
