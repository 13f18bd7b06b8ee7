#include "frontend/composite_names.h"

#include <algorithm>

namespace polyred {

namespace {

constexpr CompositeOpName kOpNames[] = {
    {"Neg", OpKind::Neg}, {"Abs", OpKind::Abs}, {"Exp", OpKind::Exp}, {"Log", OpKind::Log},
    {"Sqrt", OpKind::Sqrt}, {"Rsqrt", OpKind::Rsqrt}, {"Reciprocal", OpKind::Reciprocal},
    {"Tanh", OpKind::Tanh}, {"Sin", OpKind::Sin}, {"Cos", OpKind::Cos}, {"Erf", OpKind::Erf},
    {"Erfc", OpKind::Erfc}, {"Expm1", OpKind::Expm1}, {"Log1p", OpKind::Log1p}, {"Asin", OpKind::Asin},
    {"ACos", OpKind::Acos}, {"Atan", OpKind::Atan}, {"Asinh", OpKind::Asinh}, {"Acosh", OpKind::Acosh},
    {"Sign", OpKind::Sign}, {"Floor", OpKind::Floor}, {"Ceil", OpKind::Ceil},
    {"Round", OpKind::Round}, {"LogicalNot", OpKind::LogicalNot}, {"IsNan", OpKind::IsNan},
    {"IsInf", OpKind::IsInf}, {"IsFinite", OpKind::IsFinite}, {"Add", OpKind::Add},
    {"Sub", OpKind::Sub}, {"Mul", OpKind::Mul}, {"RealDiv", OpKind::Div}, {"Div", OpKind::Div},
    {"FloorDiv", OpKind::FloorDiv}, {"FloorMod", OpKind::FloorMod}, {"Mod", OpKind::Mod},
    {"Atan2", OpKind::Atan2}, {"Pow", OpKind::Pow}, {"Maximum", OpKind::Maximum}, {"Minimum", OpKind::Minimum},
    {"Equal", OpKind::Equal}, {"NotEqual", OpKind::NotEqual}, {"Less", OpKind::Less},
    {"LessEqual", OpKind::LessEqual}, {"Greater", OpKind::Greater},
    {"GreaterEqual", OpKind::GreaterEqual}, {"LogicalAnd", OpKind::LogicalAnd},
    {"LogicalOr", OpKind::LogicalOr}, {"Select", OpKind::Select}, {"Cast", OpKind::Cast},
    {"AddN", OpKind::AddN}, {"Assign", OpKind::Assign}, {"BroadcastTo", OpKind::BroadcastTo},
    {"Reshape", OpKind::Reshape}, {"Transpose", OpKind::Transpose},
    // complex64 (docs/format.md)
    {"Complex", OpKind::Complex}, {"CReal", OpKind::CReal}, {"CImag", OpKind::CImag}, {"Conj", OpKind::Conj},
    // polyred's own (what PadAkg, UnPadAkg, OneHot, StandardNormal and UnsortedSegmentSum
    // expand into; written back as is)
    {"Window", OpKind::Window}, {"Iota", OpKind::Iota}, {"Gather", OpKind::Gather}, {"ScatterAdd", OpKind::ScatterAdd},
    {"PhiloxNormal", OpKind::PhiloxNormal},
    // older MindSpore's name for Add (after it: the writer writes "Add")
    {"TensorAdd", OpKind::Add},
};

constexpr CompositeReduceName kReduceNames[] = {
    {"ReduceSum", BuiltinCombiner::Sum}, {"ReduceMax", BuiltinCombiner::Max},
    {"ReduceMin", BuiltinCombiner::Min}, {"ReduceProd", BuiltinCombiner::Prod},
    {"ReduceAll", BuiltinCombiner::And}, {"ReduceAny", BuiltinCombiner::Or},
};

// Ops MindSpore fuses that polyred leaves to other compilers, and why.
struct OutOfScopeOp {
  std::string_view name;
  std::string_view why;
};
constexpr std::string_view kMatrixProduct =
    "matrix products are outside polyred's scope: it compiles elementwise ops and reductions; "
    "leave the product to a GEMM/convolution library and fuse what feeds or follows it";
constexpr OutOfScopeOp kOutOfScopeOps[] = {
    {"MatMul", kMatrixProduct}, {"BatchMatMul", kMatrixProduct}, {"Conv2D", kMatrixProduct},
    {"Custom", "a user-written kernel"},
};

// Element types MindSpore has and polyred does not.
constexpr std::string_view kUnsupportedDTypes[] = {"int16", "complex128"};

// The entry of `table` called `name`, or null.
template <class Entry, size_t N>
const Entry* findNamed(const Entry (&table)[N], std::string_view name) {
  auto it = std::find_if(std::begin(table), std::end(table),
                         [&](const Entry& e) { return e.name == name; });
  return it == std::end(table) ? nullptr : it;
}

// Layouts in which a tensor's shape is its logical, row-major shape.
constexpr std::string_view kPlainFormats[] = {"DefaultFormat", "ND", "NCHW", "NHWC", "NCDHW",
                                              "NDHWC"};

}  // namespace

std::span<const CompositeOpName> compositeOpNames() { return kOpNames; }
std::span<const CompositeReduceName> compositeReduceNames() { return kReduceNames; }
const CompositeOpName* findCompositeOp(std::string_view name) { return findNamed(kOpNames, name); }
const CompositeOpName* compositeOpFor(OpKind kind) {
  for (const CompositeOpName& o : kOpNames)
    if (o.kind == kind) return &o;
  return nullptr;
}
const CompositeReduceName* findCompositeReduce(std::string_view name) { return findNamed(kReduceNames, name); }

std::optional<std::string_view> outOfScopeReason(std::string_view op) {
  if (const OutOfScopeOp* o = findNamed(kOutOfScopeOps, op)) return o->why;
  return std::nullopt;
}

bool isKnownUnsupportedDType(std::string_view name) {
  return std::find(std::begin(kUnsupportedDTypes), std::end(kUnsupportedDTypes), name) != std::end(kUnsupportedDTypes);
}

bool isPlainFormat(std::string_view format) {
  return std::find(std::begin(kPlainFormats), std::end(kPlainFormats), format) != std::end(kPlainFormats);
}

}  // namespace polyred
