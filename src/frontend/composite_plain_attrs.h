// The attributes of the composite ops that map onto one IR node (frontend/composite_names,
// "plain" ops) and of the reductions, read from an op's composite JSON attributes.
//
// Takes: the op's kind and attributes, its declared output, the reader's descriptor
// reader (for dtype names), and the file and op that errors name. Gives: the Node fields
// the attributes set -- Transpose's perm, Window's begin and steps, Iota's axis,
// ScatterAdd's indexed_axes -- having checked Cast's dst_type and Reshape's and
// BroadcastTo's shape against the declared output; a reduction's axes, normalized; or
// Error naming the file, the op and the missing or malformed attribute. What needs the
// op's inputs (their number, Gather's constant axis) stays with the reader.
#pragma once

#include <string>
#include <vector>

#include "frontend/composite_descs.h"
#include "frontend/composite_json.h"
#include "ir/graph.h"

namespace polyred {

void readPlainOpAttrs(OpKind kind, const CompositeAttrs& attrs, const TensorDesc& out, const CompositeDescReader& descs,
                      Node& n, const std::string& file, const std::string& op);

// A reduction's "axis": an int, a list, or absent/empty (every axis); negative ones
// count from the end of a `rank`-dimensional input.
std::vector<int64_t> readReductionAxes(const CompositeAttrs& attrs, size_t rank, const std::string& file,
                                       const std::string& op);

}  // namespace polyred
