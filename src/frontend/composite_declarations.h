// polyred's composite extensions "reductions" and "tuple_reductions": user-defined
// scalar and tuple reductions declared in the JSON document, used by UserReduce and
// TupleReduce ops (docs/format.md).
//
// readReductionDeclarations takes the value of the top-level key "reductions" (a list of
// scalar declarations); gives the Reductions by name (ir/reduction.h), their combiner's
// laws sampled (ir/reduction_laws.h). writeReductionDeclaration is its inverse. One:
//   {"name": "absmax", "data_type": "float32", "identity": 0,
//    "combine": ["Maximum", ["Abs", "a"], ["Abs", "b"]]}
// with operands "a" (the accumulator, or the earlier partial) and "b" (the element, or
// the later partial), every value of the accumulator's type.
//
// readTupleDeclarations takes the value of the top-level key "tuple_reductions" (a list
// of declarations); gives the TupleReductions by name (ir/tuple_reduction.h), validated.
// writeTupleDeclaration is its inverse (the composite writer's). A declaration:
//   {"name": "argmax_first", "inputs": ["float32", "int32"], "commutative": true,
//    "fields": [{"name": "value", "data_type": "float32", "identity": "-inf",
//                "lift": "in0", "combine": ["Select", ["Greater", "a0", "b0"], "a0", "b0"]}, ...],
//    "results": [{"name": "index", "value": "a1"}, ...]}
// Expressions: "a<k>" / "b<k>" (field k of the earlier / later partial), "in<m>"
// (element input m), {"value": v, "data_type": t} (a constant; v a number or
// "inf"/"-inf"/"nan"), or [Op, operand...] with Op a composite elementwise op name.
// Throws polyred::Error (exit 2) naming the file and the declaration for anything
// malformed: a missing or mistyped key, an unknown op or dtype, a duplicate name, or
// what TupleReduction::validate refuses.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "ir/reduction.h"
#include "ir/tuple_reduction.h"

namespace polyred {

using TupleDeclarations = std::map<std::string, std::shared_ptr<const TupleReduction>>;
using ReductionDeclarations = std::map<std::string, Reduction>;

ReductionDeclarations readReductionDeclarations(const nlohmann::json& list, const std::string& file);

// The accumulators a declared scalar reduction may name: the device library's (int32,
// int64, float32, float64). kDeclarableAccumulators says so in an error message.
bool isDeclarableAccumulator(DType t);
inline constexpr const char* kDeclarableAccumulators =
    "a declared reduction accumulates in int32, int64, float32 or float64";

// `r` (a scalar reduction) as a declaration named `name`. Throws UnsupportedError if its
// combiner uses an op that has no composite name.
nlohmann::json writeReductionDeclaration(const Reduction& r, const std::string& name);

TupleDeclarations readTupleDeclarations(const nlohmann::json& list, const std::string& file);

// `t` as a declaration named `name`. Throws UnsupportedError if an expression uses an
// op that has no composite name.
nlohmann::json writeTupleDeclaration(const TupleReduction& t, const std::string& name);

}  // namespace polyred
