#include "frontend/composite_descs.h"

#include <algorithm>

#include "frontend/composite_names.h"
#include "ir/symbolic_dims.h"
#include "support/error.h"
#include "support/printable.h"

namespace polyred {

void CompositeDescReader::fail(const std::string& reason) const { throw Error(file_, op_, reason); }
void CompositeDescReader::unsupported(const std::string& reason) const { throw UnsupportedError(file_, op_, reason); }

int CompositeDescReader::symbolIndex(const std::string& name, const std::string& tensor) const {
  if (!isSymbolName(name))
    fail("shape of " + quotedName(tensor) + ": size symbol " + quotedName(name) + " is not an identifier");
  auto it = std::find(symbols_->begin(), symbols_->end(), name);
  if (it != symbols_->end()) return static_cast<int>(it - symbols_->begin());
  if (symbols_->size() >= static_cast<size_t>(kMaxSymbols))
    fail("at most " + std::to_string(kMaxSymbols) + " size symbols are supported");
  symbols_->push_back(name);
  return static_cast<int>(symbols_->size() - 1);
}

// A list of sizes; with a symbol table, a string entry names a size symbol.
Shape CompositeDescReader::readShape(const Json& j, TensorDesc& d) const {
  const std::string& tensor = d.name;
  const std::string what = "shape of " + quotedName(tensor);
  if (j.is_array() && j.size() > kMaxRank)
    fail(what + " has " + std::to_string(j.size()) + " dimensions; at most " + std::to_string(kMaxRank) +
         " are accepted");
  Shape s;
  std::vector<SymbolicDim> symbolic;
  for (const Json& e : array(j, what)) {
    if (e.is_string() && symbols_) {  // "S", or "12*S": a constant times the symbol
      const std::string text = e.get<std::string>();
      const size_t star = text.find('*');
      int64_t coefficient = 1;
      if (star != std::string::npos) {
        const std::string digits = text.substr(0, star);
        if (digits.empty() || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), ::isdigit) ||
            std::stoll(digits) < 1)
          fail(what + ": " + quotedName(text) + " is not a size symbol or a positive integer times one (\"12*S\")");
        coefficient = std::stoll(digits);
      }
      const int symbol = symbolIndex(star == std::string::npos ? text : text.substr(star + 1), tensor);
      s.push_back(coefficient * symbolProbe(symbol));
      symbolic.push_back({symbol, coefficient});
      continue;
    }
    s.push_back(readInt(e, what + " entry"));
    symbolic.push_back({});
  }
  if (std::any_of(symbolic.begin(), symbolic.end(), [](const SymbolicDim& x) { return !x.isConstant(); }))
    d.symbolic = std::move(symbolic);
  int64_t n = 0;
  try {
    n = numElements(s);
  } catch (const Error& e) {
    fail("tensor " + quotedName(tensor) + ": " + e.reason());
  }
  if (n == 0) fail("tensor " + quotedName(tensor) + " has zero elements " + toString(s));
  return s;
}

DType CompositeDescReader::dtypeNamed(const std::string& name) const {
  if (auto t = parseDType(name)) return *t;
  if (isKnownUnsupportedDType(name)) unsupported("data type " + name + " is outside polyred's scope");
  throw Error(file_, op_, "unknown data_type " + quotedName(name));
}

// Plain row-major layouts, and FRACTAL_NZ (whose declared shape is its blocked one,
// row-major in memory: only TransData reads or writes it, the reader checks).
void CompositeDescReader::readFormat(const Json& j, TensorDesc& d) const {
  const std::string format = readString(j, "format of " + quotedName(d.name));
  d.fractal = format == "FRACTAL_NZ";
  if (!isPlainFormat(format) && !d.fractal)
    unsupported("tensor " + quotedName(d.name) + " has layout " + format +
                "; blocked layouts other than FRACTAL_NZ (through TransData) are outside polyred's scope");
}

// A scalar (a one-element list too) into d.value; a longer list, one value per element
// of d's shape, into d.values.
void CompositeDescReader::readValue(const Json& j, TensorDesc& d) const {
  const std::string what = "value of " + quotedName(d.name);
  if (!j.is_array()) {
    d.value = readScalarValue(j, d.dtype, what);
    return;
  }
  if (j.empty()) fail(what + " is an empty list");
  if (j.size() == 1) {
    d.value = readScalarValue(j.front(), d.dtype, what);
    return;
  }
  if (static_cast<int64_t>(j.size()) != numElements(d.shape))
    fail(what + " has " + std::to_string(j.size()) + " elements for the shape " + toString(d.shape));
  for (const Json& e : j) d.values.push_back(readScalarValue(e, d.dtype, what + " entry"));
}

TensorDesc CompositeDescReader::readDesc(const Json& j) const {
  object(j, "a tensor descriptor");
  TensorDesc d;
  d.name = readString(field(j, "tensor_name"), "tensor_name");
  if (d.name.empty()) fail("empty tensor_name");
  d.shape = readShape(field(j, "shape"), d);
  d.dtype = dtypeNamed(readString(field(j, "data_type"), "data_type of " + quotedName(d.name)));
  if (const Json* format = optionalField(j, "format")) readFormat(*format, d);
  if (const Json* v = optionalField(j, "value")) readValue(*v, d);
  return d;
}

std::vector<TensorDesc> CompositeDescReader::readDescLists(const Json* lists, const std::string& what) const {
  std::vector<TensorDesc> descs;
  if (!lists) return descs;
  for (const Json& argument : array(*lists, what))
    for (const Json& d : array(argument, what + " entry")) descs.push_back(readDesc(d));
  return descs;
}

}  // namespace polyred
