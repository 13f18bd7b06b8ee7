// Shared reading of composite JSON text and values.
//
// parseCompositeJson takes the text of a file and gives its JSON tree; malformed text,
// and nesting deeper than real files need, is a polyred::Error naming the file.
// scalarFromJson takes a JSON value and the dtype it is read as. Gives: the Scalar (booleans,
// integers -- unsigned ones past int64 through double --, floats, and "inf", "-inf",
// "nan" for float types), or nothing when the value is not a number; the caller says
// why in its own terms (the reader's constants, the tuple declarations' identities).
// CheckedJsonAccess: type-tested access to JSON values for a reader that says, through
// fail(), where a malformed value is (file and op), so nothing is read unchecked;
// CompositeAttrAccess adds an op's attributes (name -> value) to it.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/dtype.h"

namespace polyred {

nlohmann::json parseCompositeJson(const std::string& text, const std::string& file);

inline std::optional<Scalar> scalarFromJson(const nlohmann::json& j, DType t) {
  if (j.is_boolean()) return Scalar::convert(int64_t{j.get<bool>()}, t);
  if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()}) {
    if (t == DType::UInt64) return Scalar::ofInt(t, static_cast<int64_t>(j.get<uint64_t>()));  // its bit pattern
    return Scalar::convert(static_cast<double>(j.get<uint64_t>()), t);
  }
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

class CheckedJsonAccess {
 protected:
  using Json = nlohmann::json;
  virtual ~CheckedJsonAccess() = default;
  [[noreturn]] virtual void fail(const std::string& reason) const = 0;

  // A missing key and JSON null are both absent.
  const Json* optionalField(const Json& obj, const char* key) const {
    auto it = obj.find(key);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
  }
  const Json& field(const Json& obj, const char* key) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail(std::string("missing field \"") + key + "\"");
    return *it;
  }
  const Json& array(const Json& j, const std::string& what) const {
    if (!j.is_array()) fail(what + " must be a list");
    return j;
  }
  const Json& object(const Json& j, const std::string& what) const {
    if (!j.is_object()) fail(what + " must be an object");
    return j;
  }
  std::string readString(const Json& j, const std::string& what) const {
    if (!j.is_string()) fail(what + " must be a string");
    return j.get<std::string>();
  }
  bool readBool(const Json& j, const std::string& what) const {
    if (!j.is_boolean()) fail(what + " must be true or false");
    return j.get<bool>();
  }
  int64_t readInt(const Json& j, const std::string& what) const {
    if (!j.is_number_integer()) fail(what + " must be an integer");
    if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()})
      fail(what + " is out of range");
    return j.get<int64_t>();
  }
  std::vector<int64_t> readIntList(const Json& j, const std::string& what) const {
    std::vector<int64_t> r;
    for (const Json& e : array(j, what)) r.push_back(readInt(e, what + " entry"));
    return r;
  }
  Scalar readScalarValue(const Json& j, DType t, const std::string& what) const {
    std::optional<Scalar> v = scalarFromJson(j, t);
    if (!v) fail(what + " must be a number");
    return *v;
  }
};

// An op's attributes by name (each name once; JSON null counts as absent).
using CompositeAttrs = std::map<std::string, const nlohmann::json*>;

class CompositeAttrAccess : public CheckedJsonAccess {
 protected:
  static const Json* attr(const CompositeAttrs& attrs, const std::string& name) {
    auto it = attrs.find(name);
    return it == attrs.end() || it->second->is_null() ? nullptr : it->second;
  }
  const Json& required(const CompositeAttrs& attrs, const std::string& name) const {
    const Json* a = attr(attrs, name);
    if (!a) fail("needs a \"" + name + "\" attribute");
    return *a;
  }
};

}  // namespace polyred
