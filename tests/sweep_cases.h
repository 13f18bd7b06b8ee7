// The reduction sweep's cases, shared by the CPU half (tests/sweep_cpu_test.cc, in CI)
// and the GPU half (tests/gpu/sweep_gpu_test.cc): every built-in reduction x every dtype
// x each canonical form, as single-Reduce graphs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "canon/kernel_plan.h"
#include "frontend/builder.h"
#include "support/error.h"

namespace polyred::sweep {

enum class SweepOp : uint8_t { Sum, Prod, Min, Max, And, Or };
inline constexpr SweepOp kSweepOps[] = {SweepOp::Sum, SweepOp::Prod, SweepOp::Min,
                                 SweepOp::Max, SweepOp::And,  SweepOp::Or};

inline std::string sweepOpName(SweepOp op) {
  switch (op) {
    case SweepOp::Sum: return "sum";
    case SweepOp::Prod: return "prod";
    case SweepOp::Min: return "min";
    case SweepOp::Max: return "max";
    case SweepOp::And: return "and";
    case SweepOp::Or: return "or";
  }
  return "?";
}

inline Reduction reductionFor(SweepOp op, DType t) {
  switch (op) {
    case SweepOp::Sum: return Reduction::sum(t);
    case SweepOp::Prod: return Reduction::prod(t);
    case SweepOp::Min: return Reduction::min(t);
    case SweepOp::Max: return Reduction::max(t);
    case SweepOp::And: return Reduction::logicalAnd(t);
    case SweepOp::Or: return Reduction::logicalOr(t);
  }
  throw InternalError("bad SweepOp");
}

inline DType outputTypeFor(SweepOp op, DType t) {
  return op == SweepOp::And || op == SweepOp::Or ? DType::Bool : t;
}

// One graph of the sweep: a single Reduce of one input. `kept` is the extent of the
// axis that is not reduced (1 for all-reduce).
struct SweepCase {
  SweepOp op;
  DType dtype;
  CanonicalForm form;
  int64_t kept;
  int64_t reduced;
};

inline Shape inputShape(const SweepCase& c) {
  switch (c.form) {
    case CanonicalForm::XReduce: return {c.kept, c.reduced};
    case CanonicalForm::YReduce: return {c.reduced, c.kept};
    default: return {c.reduced};
  }
}

inline std::string describe(const SweepCase& c) {
  return sweepOpName(c.op) + " " + std::string(dtypeName(c.dtype)) + " " + std::string(formName(c.form)) + " " +
         toString(inputShape(c)) + " axis " + (c.form == CanonicalForm::XReduce ? "1" : "0") + " -> " +
         std::string(dtypeName(outputTypeFor(c.op, c.dtype)));
}

inline Graph sweepGraph(const SweepCase& c) {
  GraphBuilder b("sweep_" + sweepOpName(c.op) + "_" + std::string(dtypeName(c.dtype)));
  Value x = b.input("x", c.dtype, inputShape(c));
  int64_t axis = c.form == CanonicalForm::XReduce ? 1 : 0;
  b.output(b.reduce(x, reductionFor(c.op, c.dtype), {axis}, false, outputTypeFor(c.op, c.dtype)));
  return b.build();
}

inline constexpr CanonicalForm kForms[] = {CanonicalForm::AllReduce, CanonicalForm::XReduce, CanonicalForm::YReduce};
inline constexpr int64_t kReducedExtents[] = {1, 2, 31, 32, 33, 1000, 4097};
inline constexpr int64_t kXKept = 3, kYKept = 5;

inline SweepCase makeCase(SweepOp op, DType t, CanonicalForm form, int64_t reduced) {
  int64_t kept = form == CanonicalForm::XReduce ? kXKept : form == CanonicalForm::YReduce ? kYKept : 1;
  return {op, t, form, kept, reduced};
}

// Every form at every reduced extent, then many rows (x) or columns (y) of a short
// reduction, where the kept axis is what is tiled over blocks.
inline std::vector<SweepCase> casesFor(SweepOp op, DType t) {
  std::vector<SweepCase> cases;
  for (CanonicalForm form : kForms)
    for (int64_t n : kReducedExtents) cases.push_back(makeCase(op, t, form, n));
  cases.push_back({op, t, CanonicalForm::XReduce, 1000, 33});
  cases.push_back({op, t, CanonicalForm::YReduce, 1000, 33});
  return cases;
}

}  // namespace polyred::sweep
