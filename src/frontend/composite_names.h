// The names of the composite format: which op and reduction names polyred reads (and
// the writer writes), which MindSpore ops and dtypes it refuses and why, and which
// layouts are plain row-major. One table each, shared by the reader, the writer, the
// fuzzing mutator and the format documentation test.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "ir/ops.h"
#include "ir/reduction.h"

namespace polyred {

// The composite op names of every op kind except Reduce. Two names may map to one kind
// (RealDiv and Div); the writer uses the first.
struct CompositeOpName {
  std::string_view name;
  OpKind kind;
};
std::span<const CompositeOpName> compositeOpNames();
const CompositeOpName* findCompositeOp(std::string_view name);  // null if none
const CompositeOpName* compositeOpFor(OpKind kind);              // the first name of `kind`; null if none

// The composite reduction ops and the built-in combiner each one means.
struct CompositeReduceName {
  std::string_view name;
  BuiltinCombiner combiner;
};
std::span<const CompositeReduceName> compositeReduceNames();
const CompositeReduceName* findCompositeReduce(std::string_view name);  // null if none

// Why a MindSpore op polyred knows of is left to other compilers; nullopt for others.
std::optional<std::string_view> outOfScopeReason(std::string_view op);

// Element types MindSpore has and polyred does not (int16, uint32, complex64, ...).
bool isKnownUnsupportedDType(std::string_view name);

// Layouts in which a tensor's shape is its logical, row-major shape.
bool isPlainFormat(std::string_view format);

}  // namespace polyred
