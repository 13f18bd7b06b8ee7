#include "codegen/tuple_emitter.h"

#include <sstream>

#include "codegen/cuda_emitter.h"
#include "ir/tuple_reduction.h"
#include "support/error.h"
#include "support/printable.h"

namespace polyred {

namespace {

struct Typed {
  std::string code;
  DType type;
};

// The names of the three operand sides and their types.
struct Sides {
  std::vector<std::string> names[3];
  std::vector<DType> types[3];
};

Typed emitExpr(const ScalarExpr& e, const Sides& s) {
  switch (e.kind) {
    case ScalarExpr::Kind::Arg: {
      const size_t f = static_cast<size_t>(e.field);
      return {s.names[e.arg].at(f), s.types[e.arg].at(f)};
    }
    case ScalarExpr::Kind::Const: return {emitLiteral(e.value), e.value.type};
    case ScalarExpr::Kind::Op: {
      std::vector<Typed> ops;
      std::vector<DType> types;
      for (const ScalarExprPtr& o : e.operands) {
        ops.push_back(emitExpr(*o, s));
        types.push_back(ops.back().type);
      }
      TupleOpTyping t = tupleOpTyping(e.op, types);
      std::vector<std::string> args;
      std::vector<DType> argTypes;
      for (size_t k = 0; k < ops.size(); ++k) {
        DType to = e.op == OpKind::Select && k == 0 ? DType::Bool : t.operand;
        if (isPredicate(e.op)) to = ops[k].type;  // IsNan & co. take their operand as is
        args.push_back(emitCast(ops[k].code, ops[k].type, to));
        argTypes.push_back(to);
      }
      return {emitElementwise(e.op, args, argTypes, t.result), t.result};
    }
  }
  return {"", DType::Bool};
}

std::vector<DType> fieldTypes(const TupleReduction& t) {
  std::vector<DType> f;
  for (const TupleField& x : t.fields) f.push_back(x.dtype);
  return f;
}

std::vector<std::string> fieldNames(const std::string& var, size_t n) {
  std::vector<std::string> v;
  for (size_t k = 0; k < n; ++k) v.push_back(var + ".f" + std::to_string(k));
  return v;
}

}  // namespace

std::string tupleTypeName(int r) { return "Tuple" + std::to_string(r); }

namespace {
std::string finalizeDefinition(const Reduction& red, int r, int holder) {
  const std::vector<DType> f = fieldTypes(*red.tuple);
  Sides fin;
  fin.names[0] = fieldNames("a", f.size());
  fin.types[0] = f;
  Typed e = emitExpr(*red.tuple->results.at(static_cast<size_t>(red.result)).finalize, fin);
  return "__device__ __forceinline__ " + computeType(e.type) + " finalize" + std::to_string(r) + "(const " +
         tupleTypeName(holder) + "& a) { return " + e.code + "; }\n\n";
}
}  // namespace

std::string tupleDefinitions(const Reduction& red, int r, int holder) {
  if (holder != r)
    return "// result " + std::to_string(red.result) + " of the tuple accumulated by reduction " + std::to_string(holder) +
           "\n" + finalizeDefinition(red, r, holder);
  const TupleReduction& t = *red.tuple;
  const std::string T = tupleTypeName(r), R = std::to_string(r);
  const std::vector<DType> f = fieldTypes(t);
  std::ostringstream os;
  os << "// tuple reduction " << printable(t.toString(), 400) << "\n";
  os << "struct alignas(8) " << T << " {\n  static constexpr bool polyred_tuple = true;\n"
     << "  static constexpr bool polyred_commutative = " << (t.commutative ? "true" : "false") << ";\n";
  for (size_t k = 0; k < f.size(); ++k) os << "  " << computeType(f[k]) << " f" << k << ";\n";
  os << "};\n";
  // The host sizes workspaces and shared memory with tupleBytes: hold the device to it.
  os << "static_assert(sizeof(" << T << ") == " << tupleBytes(red) << ", \"polyred: tuple layout differs from the host's\");\n";
  Sides combine;
  combine.names[0] = fieldNames("a", f.size());
  combine.names[1] = fieldNames("b", f.size());
  combine.types[0] = combine.types[1] = f;
  auto combiner = [&](const std::string& name, ScalarExprPtr TupleField::*expr) {
    os << "struct " << name << R << " {\n  __device__ __forceinline__ " << T << " operator()(const " << T << "& a, const "
       << T << "& b) const {\n    " << T << " r;\n";
    for (size_t k = 0; k < f.size(); ++k) {
      Typed e = emitExpr(*(t.fields[k].*expr), combine);
      os << "    r.f" << k << " = " << emitCast(e.code, e.type, f[k]) << ";\n";
    }
    os << "    return r;\n  }\n};\n";
  };
  combiner("Combine", &TupleField::combine);
  if (t.hasCombineLater()) combiner("CombineLater", &TupleField::combineLater);
  Sides lift;
  os << "__device__ __forceinline__ " << T << " lift" << R << "(";
  for (size_t m = 0; m < t.inputs.size(); ++m) {
    lift.names[2].push_back("in" + std::to_string(m));
    lift.types[2].push_back(t.inputs[m]);
    os << (m ? ", " : "") << computeType(t.inputs[m]) << " in" << m;
  }
  os << ") {\n  " << T << " r;\n";
  for (size_t k = 0; k < f.size(); ++k) {
    Typed e = emitExpr(*t.fields[k].lift, lift);
    os << "  r.f" << k << " = " << emitCast(e.code, e.type, f[k]) << ";\n";
  }
  os << "  return r;\n}\n";
  os << finalizeDefinition(red, r, r);
  return os.str();
}

std::string tupleIdentityLiteral(const Reduction& red, int r) {
  std::string s = tupleTypeName(r) + "{";
  for (size_t k = 0; k < red.tuple->fields.size(); ++k) {
    const TupleField& x = red.tuple->fields[k];
    s += (k ? ", " : "") + emitLiteral(x.identity.castTo(x.dtype));
  }
  return s + "}";
}

std::string tupleLiftCall(int r, const std::vector<std::string>& args) {
  std::string s = "lift" + std::to_string(r) + "(";
  for (size_t k = 0; k < args.size(); ++k) s += (k ? ", " : "") + args[k];
  return s + ")";
}

std::string tupleFinalizeCall(int r, const std::string& total) {
  return "finalize" + std::to_string(r) + "(" + total + ")";
}

int64_t tupleBytes(const Reduction& red) {
  int64_t size = 0;
  for (const TupleField& x : red.tuple->fields) {
    const int64_t b = x.dtype == DType::Bool ? 1 : dtypeBytes(x.dtype);
    size = (size + b - 1) / b * b + b;
  }
  return (size + 7) / 8 * 8;
}

namespace {
// Lanes outside the row ([lo, hi) in scope) set to `value`.
std::string lanesOutsideTheRow(const std::string& in, const std::string& V, const std::string& lanes,
                               const std::string& value) {
  return in + "#pragma unroll\n" + in + "for (int l = 0; l < " + V + "; ++l) if (l < lo || l >= hi) " + lanes +
         "[l] = " + value + ";\n";
}

std::string logSumExpLanes(const TupleLaneTree& t, const std::string& in) {
  const std::string V = std::to_string(t.width), lanes = "t" + std::to_string(t.reduction);
  std::ostringstream os;
  os << in << "{\n" << in << "  float " << lanes << "[" << V << "];\n";
  os << in << "  #pragma unroll\n" << in << "  for (int l = 0; l < " << V << "; ++l) " << lanes << "[l] = " << t.laneInput << ";\n";
  // Lanes outside the row are -inf, set on the partial vectors' path only (as the tree's
  // identities): a select per lane in every vector cost a staged softmax via logsumexp
  // f16 [4096,50257] with lse=online 10% (H200, session 42: 231.7 -> 255.5 us).
  if (t.masked)
    os << in << "  if (!whole) {\n"
       << lanesOutsideTheRow(in + "    ", V, lanes, "(-__int_as_float(0x7f800000))") << in << "  }\n";
  os << in << "  pr_fold_logsumexp_lanes(" << lanes << ", " << t.accumulator << ".f0, " << t.accumulator << ".f1);\n";
  os << in << "}\n";
  return os.str();
}
}  // namespace

std::string tupleLaneTree(const TupleLaneTree& t, const std::string& in) {
  if (t.fold == TupleLaneFold::LogSumExp) return logSumExpLanes(t, in);
  const std::string V = std::to_string(t.width), R = std::to_string(t.reduction), lanes = "t" + R;
  const std::string combine = "Combine" + R + "()", later = "CombineLater" + R + "()";
  std::ostringstream os;
  auto tree = [&](const std::string& in, const std::string& op) {
    os << in << "#pragma unroll\n" << in << "for (int s = 1; s < " << V << "; s *= 2)\n";
    os << in << "  #pragma unroll\n" << in << "  for (int l = 0; l + s < " << V << "; l += 2 * s) " << lanes << "[l] = "
       << op << "(" << lanes << "[l], " << lanes << "[l + s]);\n";
  };
  os << in << "{\n" << in << "  " << t.tupleType << " " << lanes << "[" << V << "];\n";
  os << in << "  #pragma unroll\n" << in << "  for (int l = 0; l < " << V << "; ++l) " << lanes << "[l] = " << t.laneElement << ";\n";
  if (!t.masked) {
    tree(in + "  ", t.later ? later : combine);
  } else if (!t.later) {
    os << in << "  if (!whole) {\n";
    os << lanesOutsideTheRow(in + "    ", V, lanes, t.identity);
    os << in << "  }\n";
    tree(in + "  ", combine);
  } else {
    os << in << "  if (whole) {\n";
    tree(in + "    ", later);
    os << in << "  } else {\n";
    os << lanesOutsideTheRow(in + "    ", V, lanes, t.identity);
    tree(in + "    ", combine);
    os << in << "  }\n";
  }
  os << in << "  " << t.accumulator << " = " << combine << "(" << t.accumulator << ", " << lanes << "[0]);\n" << in << "}\n";
  return os.str();
}

}  // namespace polyred
