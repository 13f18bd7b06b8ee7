#include "frontend/composite_index_attrs.h"

#include <algorithm>
#include <utility>

#include "support/error.h"
#include "support/printable.h"

namespace polyred {

namespace {

class IndexAttrReader : CompositeAttrAccess {
 public:
  IndexAttrReader(std::string file, std::string op) : file_(std::move(file)), op_(std::move(op)) {}

  IndexOpAttrs read(const std::string& name, const CompositeAttrs& attrs) const {
    IndexOpAttrs a;
    if (name == "LayoutTransform" || name == "TransData") {
      a.srcFormat = readString(required(attrs, "src_format"), "src_format");
      a.dstFormat = readString(required(attrs, "dst_format"), "dst_format");
    }
    if (const Json* v = attr(attrs, "head")) a.head = readIntList(*v, "head");
    if (const Json* v = attr(attrs, "tail")) a.tail = readIntList(*v, "tail");
    if (const Json* v = attr(attrs, "pad_val")) a.padValue = readScalarValue(*v, DType::Float64, "pad_val").asDouble();
    if (const Json* v = attr(attrs, "depth")) a.depth = readInt(*v, "depth");
    if (const Json* v = attr(attrs, "axis")) a.axis = readInt(*v, "axis");
    if ((name == "PadAkg" || name == "UnPadAkg") && !attr(attrs, "tail")) fail("needs a \"tail\" attribute");
    if (name == "PadAkg" && !attr(attrs, "head")) fail("needs a \"head\" attribute");
    if (name == "Pad") readPaddings(required(attrs, "paddings"), a);
    if (name == "Tile") a.multiples = readIntList(required(attrs, "multiples"), "multiples");
    if (name == "Slice" || name == "StridedSlice") a.begin = readIntList(required(attrs, "begin"), "begin");
    if (name == "Slice") a.size = readIntList(required(attrs, "size"), "size");
    if (name == "StridedSlice") {
      a.end = readIntList(required(attrs, "end"), "end");
      a.strides = readIntList(required(attrs, "strides"), "strides");
      for (auto [key, mask] : {std::pair{"begin_mask", &a.beginMask}, {"end_mask", &a.endMask},
                               {"ellipsis_mask", &a.ellipsisMask}, {"new_axis_mask", &a.newAxisMask},
                               {"shrink_axis_mask", &a.shrinkAxisMask}})
        if (const Json* v = attr(attrs, key)) *mask = readInt(*v, key);
    }
    if (name == "Split") a.outputNum = readInt(required(attrs, "output_num"), "output_num");
    if (name == "Pool2D") readPool(attrs, a.pool);
    if (name == "StandardNormal") readSeeds(attrs, a);
    return a;
  }

 private:
  [[noreturn]] void fail(const std::string& reason) const override { throw Error(file_, op_, reason); }

  void readPool(const CompositeAttrs& attrs, IndexOpAttrs::Pool& p) const {
    if (const Json* v = attr(attrs, "global")) p.global = readBool(*v, "global");
    p.type = readString(required(attrs, "pool_type"), "pool_type");
    if (p.type != "max" && p.type != "avg") fail("pool_type " + quotedName(p.type) + " is not max or avg");
    if (const Json* v = attr(attrs, "data_layout")) p.layout = readString(*v, "data_layout");
    if (p.global) return;
    p.kernel = readIntList(required(attrs, "kernel_size"), "kernel_size");
    p.strides = readIntList(required(attrs, "strides"), "strides");
    p.pad = {0, 0, 0, 0};
    if (const Json* v = attr(attrs, "pad")) p.pad = readIntList(*v, "pad");
    if (p.kernel.size() != 2 || p.strides.size() != 2 || p.pad.size() != 4)
      fail("kernel_size and strides take 2 entries and pad 4 ([top, left, bottom, right])");
  }

  // StandardNormal's seeds (non-negative, as MindSpore checks them; default 0) and shape.
  void readSeeds(const CompositeAttrs& attrs, IndexOpAttrs& a) const {
    for (auto [key, seed] : {std::pair{"seed", &a.seed}, {"seed2", &a.seed2}}) {
      if (const Json* v = attr(attrs, key)) *seed = readInt(*v, key);
      if (*seed < 0) fail(std::string(key) + " is negative (" + std::to_string(*seed) + "); seeds are non-negative");
    }
    if (const Json* v = attr(attrs, "shape")) a.givenShapes.push_back(readIntList(*v, "shape"));
  }

  // Pad's "paddings": one [before, after] pair per axis, read as PadAkg's head and tail.
  void readPaddings(const Json& v, IndexOpAttrs& a) const {
    for (const Json& pair : array(v, "paddings")) {
      std::vector<int64_t> p = readIntList(pair, "paddings entry");
      if (p.size() != 2) fail("each paddings entry is [before, after], got " + std::to_string(p.size()) + " numbers");
      a.head.push_back(p[0]);
      a.tail.push_back(p[1]);
    }
  }

  std::string file_, op_;
};

}  // namespace

IndexOpAttrs readIndexOpAttrs(const std::string& name, const CompositeAttrs& attrs, const std::string& file,
                              const std::string& op) {
  return IndexAttrReader(file, op).read(name, attrs);
}

IndexOpAttrs stridedSliceOnnxAttrs(const Shape& shape, const std::vector<std::vector<int64_t>>& lists,
                                   const std::string& file, const std::string& op) {
  auto fail = [&](const std::string& why) { throw Error(file, op, why); };
  const auto rank = static_cast<int64_t>(shape.size());
  const size_t k = lists.at(0).size();
  for (const std::vector<int64_t>& l : lists)
    if (l.size() != k) fail("begin, end, axes and steps need the same number of entries");
  IndexOpAttrs a;
  a.begin.assign(shape.size(), 0);
  a.end.assign(shape.size(), 0);
  a.strides.assign(shape.size(), 1);
  a.beginMask = a.endMask = rank >= 63 ? -1 : (int64_t{1} << rank) - 1;  // untouched axes: whole
  for (size_t e = 0; e < k; ++e) {
    int64_t axis = lists.size() > 2 ? lists[2][e] : static_cast<int64_t>(e);
    if (axis < -rank || axis >= rank) fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    if (axis < 0) axis += rank;
    if (!(a.beginMask >> axis & 1)) fail("axis " + std::to_string(axis) + " is listed twice");
    a.beginMask &= ~(int64_t{1} << axis);
    a.endMask &= ~(int64_t{1} << axis);
    const auto d = static_cast<size_t>(axis);
    const int64_t step = lists.size() > 3 ? lists[3][e] : 1, n = shape[d];
    int64_t begin = lists[0][e];
    if (step < 0) begin = std::clamp(begin < 0 ? begin + n : begin, int64_t{0}, n - 1);
    a.begin[d] = begin;
    a.end[d] = lists[1][e];
    a.strides[d] = step;
  }
  return a;
}

}  // namespace polyred
