// Tensor descriptors of composite JSON -- {"tensor_name", "shape", "data_type",
// "format", "value"} -- read with every check, for the composite reader.
//
// Takes one descriptor (or an input_desc: a list of arguments, each a list of
// descriptors) and gives TensorDescs. Refused, naming the file, the op being read and
// the tensor: a missing or mistyped key, an empty name, more than kMaxRank dimensions,
// zero or too many elements, an unknown data type (exit 2; one polyred knows of but
// does not support, and a blocked layout other than FRACTAL_NZ, as out of scope), and a
// value that is not a number. A "value" is a constant: a scalar (a number, a bool, the
// strings inf/-inf/nan for float types, or a one-element list), or a list with one
// value per element, kept apart in `values` for the ops that read such a list as
// parameters (StridedSliceOnnx's begin, end, axes, strides); as data it is refused.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "frontend/composite_json.h"
#include "ir/graph.h"

namespace polyred {

// Far above any real tensor; bounds the rank-quadratic checks of the verifier.
constexpr size_t kMaxRank = 64;

struct TensorDesc {
  std::string name;
  Shape shape;
  DType dtype = DType::Float32;
  std::optional<Scalar> value;  // a scalar constant
  std::vector<Scalar> values;   // a list constant of two or more elements
  bool fractal = false;         // format FRACTAL_NZ: the shape is the blocked one
  // Axes written as a size symbol's name ("shape": ["S", 768]): the shape holds the
  // symbol's probe value there (ir/symbolic_dims.h). Empty when every axis is a number.
  std::vector<SymbolicDim> symbolic;

  // A plain tensor the reader introduces itself (no value, row-major).
  static TensorDesc plain(std::string name, Shape shape, DType dtype) {
    TensorDesc d;
    d.name = std::move(name);
    d.shape = std::move(shape);
    d.dtype = dtype;
    return d;
  }
};

class CompositeDescReader : public CheckedJsonAccess {
 public:
  // `file` and `op` are the reader's own: messages name the op being read when they are.
  CompositeDescReader(const std::string& file, const std::string& op) : file_(file), op_(op) {}
  // Shapes may name size symbols, declared in `symbols` on first use (the file's table).
  void acceptSymbols(std::vector<std::string>* symbols) { symbols_ = symbols; }

  TensorDesc readDesc(const Json& j) const;
  // input_desc is a list of arguments, each a list of descriptors (AddN's one argument
  // holds all its operands); null means none.
  std::vector<TensorDesc> readDescLists(const Json* lists, const std::string& what) const;
  // A data type name; out-of-scope ones (int16, complex128, ...) are UnsupportedError.
  DType dtypeNamed(const std::string& name) const;

 private:
  [[noreturn]] void fail(const std::string& reason) const override;
  [[noreturn]] void unsupported(const std::string& reason) const;
  Shape readShape(const Json& j, TensorDesc& d) const;
  int symbolIndex(const std::string& name, const std::string& tensor) const;
  void readFormat(const Json& j, TensorDesc& d) const;
  void readValue(const Json& j, TensorDesc& d) const;

  const std::string& file_;
  const std::string& op_;
  std::vector<std::string>* symbols_ = nullptr;
};

}  // namespace polyred
