// polyred's composite extension "tuple_reductions": user-defined tuple reductions
// declared in the JSON document, used by TupleReduce ops (docs/format.md).
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

#include "ir/tuple_reduction.h"

namespace polyred {

using TupleDeclarations = std::map<std::string, std::shared_ptr<const TupleReduction>>;

TupleDeclarations readTupleDeclarations(const nlohmann::json& list, const std::string& file);

// `t` as a declaration named `name`. Throws UnsupportedError if an expression uses an
// op that has no composite name.
nlohmann::json writeTupleDeclaration(const TupleReduction& t, const std::string& name);

}  // namespace polyred
