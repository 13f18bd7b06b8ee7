#include "frontend/composite_plain_attrs.h"

#include <algorithm>

#include "frontend/builder.h"  // normalizeAxes
#include "support/error.h"

namespace polyred {

namespace {

class PlainAttrReader : CompositeAttrAccess {
 public:
  PlainAttrReader(const std::string& file, const std::string& op) : file_(file), op_(op) {}

  void read(OpKind kind, const CompositeAttrs& attrs, const TensorDesc& out, const CompositeDescReader& descs,
            Node& n) const {
    switch (kind) {
      case OpKind::Cast: checkDstType(attrs, out.dtype, descs); break;
      case OpKind::Reshape:
      case OpKind::BroadcastTo: checkShapeAttr(attrs, out.shape); break;
      case OpKind::Transpose: n.perm = readPerm(attrs); break;
      case OpKind::Window:
        n.begin = readIntList(required(attrs, "begin"), "begin");
        if (const Json* v = attr(attrs, "steps")) n.steps = readIntList(*v, "steps");
        break;
      case OpKind::Iota: n.axes = {readInt(required(attrs, "axis"), "axis")}; break;
      case OpKind::ScatterAdd:
        if (const Json* k = attr(attrs, "indexed_axes")) n.axes = {readInt(*k, "indexed_axes")};
        break;
      default: break;
    }
  }

  std::vector<int64_t> reductionAxes(const CompositeAttrs& attrs, size_t rank) const {
    std::vector<int64_t> axes;
    if (const Json* axis = attr(attrs, "axis"))
      axes = axis->is_number_integer() ? std::vector<int64_t>{readInt(*axis, "axis")}
                                       : readIntList(*axis, "axis (an integer or a list)");
    try {
      return normalizeAxes(std::move(axes), rank, op_);
    } catch (const Error& e) {
      throw e.inFile(file_);
    }
  }

 private:
  [[noreturn]] void fail(const std::string& reason) const override { throw Error(file_, op_, reason); }

  void checkDstType(const CompositeAttrs& attrs, DType declared, const CompositeDescReader& descs) const {
    const Json* dst = attr(attrs, "dst_type");
    if (!dst) return;
    DType t = descs.dtypeNamed(readString(*dst, "dst_type"));
    if (t != declared)
      fail("dst_type is " + std::string(dtypeName(t)) + " but the output is declared " +
           std::string(dtypeName(declared)));
  }

  // MindSpore writes -1 for a dimension left to inference, and [] for a scalar that
  // the output declares as [1]; otherwise the attribute must equal the output shape.
  void checkShapeAttr(const CompositeAttrs& attrs, const Shape& declared) const {
    const Json* s = attr(attrs, "shape");
    if (!s) return;
    std::vector<int64_t> want = readIntList(*s, "attribute shape");
    bool scalarAsOne = want.empty() && declared == Shape{1};
    bool matches = want.size() == declared.size() &&
                   std::equal(want.begin(), want.end(), declared.begin(),
                              [](int64_t w, int64_t d) { return w == -1 || w == d; });
    if (!scalarAsOne && !matches)
      fail("attribute shape " + toString(want) + " disagrees with the declared output shape " +
           toString(declared));
  }

  std::vector<int64_t> readPerm(const CompositeAttrs& attrs) const {
    const Json* perm = attr(attrs, "perm");
    if (!perm) fail("Transpose needs a \"perm\" attribute");
    return readIntList(*perm, "perm");
  }

  const std::string& file_;
  const std::string& op_;
};

}  // namespace

void readPlainOpAttrs(OpKind kind, const CompositeAttrs& attrs, const TensorDesc& out, const CompositeDescReader& descs,
                      Node& n, const std::string& file, const std::string& op) {
  PlainAttrReader(file, op).read(kind, attrs, out, descs, n);
}

std::vector<int64_t> readReductionAxes(const CompositeAttrs& attrs, size_t rank, const std::string& file,
                                       const std::string& op) {
  return PlainAttrReader(file, op).reductionAxes(attrs, rank);
}

}  // namespace polyred
