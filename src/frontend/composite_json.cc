// Composite JSON text to a JSON tree, refusing hostile nesting (composite_json.h).
#include "frontend/composite_json.h"

#include <cmath>
#include <string>

#include "support/error.h"

namespace polyred {

namespace {

// Real files nest five levels deep; the cap keeps every recursive walk of a hostile
// document (parsing, copying, freeing) far from the stack limit.
constexpr int kMaxNesting = 64;

// Refuses nesting deeper than kMaxNesting before nlohmann sees the text. Brackets in
// strings do not count; on malformed text the count is right up to the first error,
// which is all the parser will read.
void checkNesting(const std::string& text, const std::string& file) {
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\') ++i;
      else if (c == '"') inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting)
        throw Error(file, "", "JSON nested deeper than " + std::to_string(kMaxNesting) +
                                  " levels at byte " + std::to_string(i));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

}  // namespace

nlohmann::json parseCompositeJson(const std::string& text, const std::string& file) {
  checkNesting(text, file);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(file, "", std::string("malformed JSON: ") + e.what());
  }
}

nlohmann::json scalarToJson(const Scalar& v) {
  if (v.type == DType::Bool) return v.i != 0;
  if (isComplex(v.type) && v.im != 0)
    throw UnsupportedError("", "", "a complex64 constant with a nonzero imaginary part (" + v.toString() +
                                       ") has no composite JSON form; build it with Complex from two float32");
  if (v.type == DType::UInt64) return static_cast<uint64_t>(v.i);  // its bit pattern read as unsigned
  if (!isFloat(v.type) && !isComplex(v.type)) return v.i;
  if (std::isnan(v.f)) return "nan";
  if (std::isinf(v.f)) return v.f > 0 ? "inf" : "-inf";
  return v.f;
}

}  // namespace polyred
