#include "codegen/tuple_emitter.h"

#include <map>
#include <sstream>
#include <utility>

#include "codegen/cuda_emitter.h"
#include "ir/tuple_counts.h"
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

// Prints one device function's expressions, each operation that occurs more than once
// (by its printed text) computed once, as a `const` local declared before the
// statements: a Welford combine's count sum, its share and its mean difference, an
// argmax combine's winner test shared by its two fields. A select whose arms are such
// locals no longer guards them with a branch: where one of them was a division, the
// branch kept the compiler from batching a loop's loads (docs/design/pipeline-and-ir.md, "Tuple
// reductions"). Divisions of two counts print as pr_div_counts (ir/tuple_counts.h).
// Usage: count() every expression, then print() each; locals() holds the declarations
// the printed expressions use.
class SharedExprPrinter {
 public:
  SharedExprPrinter(const Sides& sides, std::vector<bool> counts, std::string indent)
      : sides_(sides), counts_(std::move(counts)), indent_(std::move(indent)) {}

  // Counts the operations of `e`; those under an operation met before are not counted
  // again (that operation becomes one local, which uses them once).
  void count(const ScalarExpr& e) {
    POLYRED_CHECK(!printing_, "a tuple expression counted after printing began");
    if (e.kind != ScalarExpr::Kind::Op || ++uses_[printOp(e).full] > 1) return;
    for (const ScalarExprPtr& o : e.operands) count(*o);
  }
  Typed print(const ScalarExpr& e) {
    printing_ = true;
    Printed p = walk(e);
    return {p.code, p.type};
  }
  const std::string& locals() const { return locals_; }

 private:
  struct Printed {
    std::string code;  // with the locals declared so far
    std::string full;  // without them: the key an operation is known by
    DType type;
  };

  Printed walk(const ScalarExpr& e) {
    switch (e.kind) {
      case ScalarExpr::Kind::Arg: {
        const size_t f = static_cast<size_t>(e.field);
        const std::string& name = sides_.names[e.arg].at(f);
        return {name, name, sides_.types[e.arg].at(f)};
      }
      case ScalarExpr::Kind::Const: {
        const std::string literal = emitLiteral(e.value);
        return {literal, literal, e.value.type};
      }
      case ScalarExpr::Kind::Op: return walkOp(e);
    }
    return {"", "", DType::Bool};
  }

  // The operation, a local where it is shared.
  Printed walkOp(const ScalarExpr& e) {
    Printed p = printOp(e);
    if (auto u = uses_.find(p.full); u != uses_.end() && u->second > 1) {
      auto [at, added] = names_.try_emplace(p.full, "v" + std::to_string(names_.size()));
      if (added) locals_ += indent_ + "const " + computeType(p.type) + " " + at->second + " = " + p.code + ";\n";
      p.code = at->second;
    }
    return p;
  }

  // The operation over its operands as printed.
  Printed printOp(const ScalarExpr& e) {
    // Memoized while counting, when no operation has a name yet: counting stays linear in
    // the tree's size.
    if (!printing_)
      if (auto known = unnamed_.find(&e); known != unnamed_.end()) return known->second;
    std::vector<Printed> ops;
    std::vector<DType> types;
    for (const ScalarExprPtr& o : e.operands) {
      ops.push_back(walk(*o));
      types.push_back(ops.back().type);
    }
    TupleOpTyping t = tupleOpTyping(e.op, types);
    std::vector<std::string> code, full;
    std::vector<DType> argTypes;
    for (size_t k = 0; k < ops.size(); ++k) {
      DType to = e.op == OpKind::Select && k == 0 ? DType::Bool : t.operand;
      if (isPredicate(e.op)) to = ops[k].type;  // IsNan & co. take their operand as is
      code.push_back(emitCast(ops[k].code, ops[k].type, to));
      full.push_back(emitCast(ops[k].full, ops[k].type, to));
      argTypes.push_back(to);
    }
    OperandFacts facts;
    facts.divisionOfCounts = e.op == OpKind::Div && dividesCounts(*e.operands[0], *e.operands[1], counts_);
    Printed p{emitElementwise(e.op, code, argTypes, t.result, facts),
              emitElementwise(e.op, full, argTypes, t.result, facts), t.result};
    if (!printing_) unnamed_.emplace(&e, p);
    return p;
  }

  const Sides& sides_;
  const std::vector<bool> counts_;
  const std::string indent_;
  std::map<std::string, int> uses_;
  std::map<std::string, std::string> names_;
  std::map<const ScalarExpr*, Printed> unnamed_;
  bool printing_ = false;  // count() every expression before the first print()
  std::string locals_;
};

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
// "r.f<k> = <field k>;" for each field, after the locals they share.
std::string fieldAssignments(const std::vector<const ScalarExpr*>& fields, const std::vector<DType>& types,
                             const Sides& sides, const std::vector<bool>& counts, const std::string& indent) {
  SharedExprPrinter printer(sides, counts, indent);
  for (const ScalarExpr* e : fields) printer.count(*e);
  std::string assignments;
  for (size_t k = 0; k < fields.size(); ++k) {
    Typed e = printer.print(*fields[k]);
    assignments += indent + "r.f" + std::to_string(k) + " = " + emitCast(e.code, e.type, types[k]) + ";\n";
  }
  return printer.locals() + assignments;
}

// `counts`: countFields of the tuple.
std::string finalizeDefinition(const Reduction& red, int r, int holder, const std::vector<bool>& counts) {
  const std::vector<DType> f = fieldTypes(*red.tuple);
  Sides fin;
  fin.names[0] = fieldNames("a", f.size());
  fin.types[0] = f;
  SharedExprPrinter printer(fin, counts, "  ");
  const ScalarExpr& result = *red.tuple->results.at(static_cast<size_t>(red.result)).finalize;
  printer.count(result);
  Typed e = printer.print(result);
  const std::string head = "__device__ __forceinline__ " + computeType(e.type) + " finalize" + std::to_string(r) +
                           "(const " + tupleTypeName(holder) + "& a) {";
  if (printer.locals().empty()) return head + " return " + e.code + "; }\n\n";
  return head + "\n" + printer.locals() + "  return " + e.code + ";\n}\n\n";
}
}  // namespace

std::string tupleDefinitions(const Reduction& red, int r, int holder) {
  if (holder != r)
    return "// result " + std::to_string(red.result) + " of the tuple accumulated by reduction " + std::to_string(holder) +
           "\n" + finalizeDefinition(red, r, holder, countFields(*red.tuple));
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
  const std::vector<bool> counts = countFields(t);
  auto fieldsOf = [&](ScalarExprPtr TupleField::*expr) {
    std::vector<const ScalarExpr*> e;
    for (const TupleField& x : t.fields) e.push_back((x.*expr).get());
    return e;
  };
  auto combiner = [&](const std::string& name, ScalarExprPtr TupleField::*expr) {
    os << "struct " << name << R << " {\n  __device__ __forceinline__ " << T << " operator()(const " << T << "& a, const "
       << T << "& b) const {\n    " << T << " r;\n";
    os << fieldAssignments(fieldsOf(expr), f, combine, counts, "    ");
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
  os << fieldAssignments(fieldsOf(&TupleField::lift), f, lift, counts, "  ");
  os << "  return r;\n}\n";
  os << finalizeDefinition(red, r, r, counts);
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
  // f16 [4096,50257] with lse=online 10% (H200, 2026-11-29: 231.7 -> 255.5 us).
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
