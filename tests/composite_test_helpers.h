// Helpers shared by the tests that write composite JSON documents by hand.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frontend/composite_reader.h"
#include "interp/host_tensor.h"
#include "support/error.h"

namespace polyred::test_support {

// A tensor descriptor as MindSpore writes it.
inline nlohmann::json desc(const std::string& name, const Shape& shape, const std::string& dtype) {
  return {{"data_type", dtype}, {"format", "DefaultFormat"}, {"shape", shape}, {"tensor_name", name}};
}

// What parsing `json` throws: the Error's message, "internal error: ..." for an internal
// one (a bug, never what bad input should give), or "" when it parses.
inline std::string errorOf(const std::string& json) {
  try {
    parseComposite(json, "t.info");
  } catch (const InternalError& e) {
    return std::string("internal error: ") + e.what();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

inline std::vector<double> valuesOf(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t k = 0; k < t.size(); ++k) v.push_back(t.get(k).asDouble());
  return v;
}

}  // namespace polyred::test_support
