// The attributes of the index ops (frontend/composite_index_ops.h), read from an op's
// composite JSON attributes: which each op needs (PadAkg's head and tail, Pad's
// paddings pairs, Tile's multiples, Slice's begin and size, StridedSlice's begin, end,
// strides and masks, Split's output_num, LayoutTransform's formats) and their types.
//
// Takes: the op's name and attributes, and the file and op that errors name. Gives:
// IndexOpAttrs, or Error naming the file, the op and the missing or malformed
// attribute. ElemAny's dst_type, a dtype name, is left to the reader (which knows the
// dtypes polyred refuses as out of scope).
#pragma once

#include <string>

#include "frontend/composite_index_ops.h"
#include "frontend/composite_json.h"

namespace polyred {

IndexOpAttrs readIndexOpAttrs(const std::string& name, const CompositeAttrs& attrs, const std::string& file,
                              const std::string& op);

// StridedSliceOnnx's parameter lists (begin, end, then optionally axes -- default
// 0..k-1, negative from the end -- and steps -- default 1) as StridedSlice's attributes
// for an input of shape `shape`: listed axes take begin/end/step, the others the whole
// axis (mask bits). ONNX's clamping for negative steps: a begin past either end is
// clamped to [0, n - 1] (TensorFlow's rule would give an empty slice below 0).
IndexOpAttrs stridedSliceOnnxAttrs(const Shape& shape, const std::vector<std::vector<int64_t>>& lists,
                                   const std::string& file, const std::string& op);

}  // namespace polyred
