#include "canon/kernel_plan.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <utility>

#include "ir/tuple_reduction.h"
#include "support/printable.h"

namespace polyred {

int KernelPlan::passes() const {
  int last = 0;
  for (const ReductionOutput& r : reductions) last = std::max(last, r.stage);
  for (const ElementwiseOutput& s : stores) last = std::max(last, s.pass);
  return last + 1;
}

bool KernelPlan::hasTupleReduction() const {
  return std::any_of(reductions.begin(), reductions.end(), [](const ReductionOutput& r) { return r.reduction.isTuple(); });
}

bool KernelPlan::hasComplexProduct() const {
  return std::any_of(reductions.begin(), reductions.end(), [](const ReductionOutput& r) {
    return !r.reduction.isTuple() && isComplex(r.reduction.accType) && r.reduction.builtin() != BuiltinCombiner::Sum;
  });
}

bool KernelPlan::hasCompareAndSwapCombine() const {
  return std::any_of(reductions.begin(), reductions.end(), [](const ReductionOutput& r) {
    if (r.reduction.isTuple()) return false;
    switch (r.reduction.builtin()) {
      case BuiltinCombiner::Sum:
      case BuiltinCombiner::And:
      case BuiltinCombiner::Or: return false;
      case BuiltinCombiner::Max:
      case BuiltinCombiner::Min: return false;  // floats' too: integer atomics on their bit patterns
      default: return true;  // Prod, None (a user combiner)
    }
  });
}

bool KernelPlan::hasComplexValue() const {
  for (const ReductionOutput& r : reductions)
    if (!r.reduction.isTuple() && isComplex(r.reduction.accType)) return true;
  for (const BodyValue& v : body)
    if (isComplex(v.dtype)) return true;
  for (const BodyValue& v : epilogue)
    if (isComplex(v.dtype)) return true;
  return false;
}

bool KernelPlan::hasOrderedReduction() const {
  return std::any_of(reductions.begin(), reductions.end(),
                     [](const ReductionOutput& r) { return r.reduction.isTuple() && !r.reduction.tuple->commutative; });
}

bool KernelPlan::hasScatterStore() const {
  return std::any_of(stores.begin(), stores.end(), [](const ElementwiseOutput& s) { return s.scatters(); });
}

bool KernelPlan::hasScan() const {
  return std::any_of(reductions.begin(), reductions.end(), [](const ReductionOutput& r) { return r.scan; });
}

bool KernelPlan::hasStage(int s) const {
  return std::any_of(reductions.begin(), reductions.end(), [&](const ReductionOutput& r) { return r.stage == s; });
}

std::vector<bool> KernelPlan::valuesBeforeScan(int pass) const {
  std::vector<bool> values = valuesOfPass(pass);
  for (size_t v = static_cast<size_t>(reductions.at(0).value) + 1; v < values.size(); ++v) values[v] = false;
  return values;
}

std::vector<bool> KernelPlan::valuesAfterScan(int pass) const {
  std::vector<bool> values = valuesOfPass(pass);
  for (size_t v = 0; v <= static_cast<size_t>(reductions.at(0).value) && v < values.size(); ++v) values[v] = false;
  return values;
}

std::vector<bool> KernelPlan::valuesOfPass(int pass, const std::vector<bool>* givenValues) const {
  std::vector<bool> used(body.size(), false);
  for (const ReductionOutput& r : reductions)
    if (r.stage == pass) {
      used[static_cast<size_t>(r.value)] = true;
      for (int v : r.values) used[static_cast<size_t>(v)] = true;
    }
  for (const ElementwiseOutput& s : stores)
    if (s.pass == pass) {
      used[static_cast<size_t>(s.value)] = true;
      if (s.scatters()) used[static_cast<size_t>(s.scatterIndex)] = true;
    }
  for (size_t v = body.size(); v-- > 0;)  // operands precede their users
    if (used[v] && !(givenValues && givenValues->at(v)))
      for (int o : body[v].operands) used[static_cast<size_t>(o)] = true;
  return used;
}

int KernelPlan::loadsOfPass(int pass) const {
  std::vector<bool> used = valuesOfPass(pass);
  int n = 0;
  for (size_t v = 0; v < body.size(); ++v) n += used[v] && body[v].hasOffset();
  return n;
}

std::string_view formName(CanonicalForm f) {
  switch (f) {
    case CanonicalForm::Elementwise: return "elementwise";
    case CanonicalForm::AllReduce: return "all-reduce";
    case CanonicalForm::XReduce: return "x-reduce";
    case CanonicalForm::YReduce: return "y-reduce";
  }
  return "?";
}

namespace {
void printValues(std::ostream& os, const Graph& g, const std::vector<BodyValue>& values, const char* prefix) {
  for (size_t v = 0; v < values.size(); ++v) {
    const BodyValue& b = values[v];
    os << "  " << prefix << v << ":" << dtypeName(b.dtype) << " = ";
    switch (b.kind) {
      case BodyValue::Kind::Load:
        if (b.temporary >= 0) os << "load temporary" << b.temporary << "[" << b.offset << "]";
        else os << "load %" << printable(g.tensor(g.inputs[static_cast<size_t>(b.input)]).name) << "[" << b.offset << "]";
        if (b.gathers())
          os << " gathered by " << prefix << b.operands[0] << " (stride " << b.gatherStride << ", extent "
             << b.gatherExtent << ")";
        break;
      case BodyValue::Kind::Constant: os << "const " << b.value.toString(); break;
      case BodyValue::Kind::Reduced: os << "r" << b.reduction; break;
      case BodyValue::Kind::Scanned: os << "the running r" << b.reduction; break;
      case BodyValue::Kind::Index: os << "index[" << b.offset << "]"; break;
      case BodyValue::Kind::Op:
        os << opName(b.op) << "(";
        for (size_t k = 0; k < b.operands.size(); ++k) os << (k ? ", " : "") << prefix << b.operands[k];
        os << ")";
        break;
    }
    os << "    // %" << b.label << "\n";
  }
}
}  // namespace

std::string KernelPlan::toString(const Graph& g) const {
  std::ostringstream os;
  os << "kernel " << name << ": " << formName(form) << ", i < " << M << ", j < " << N << "\n";
  os << "  // " << why << "\n";
  printValues(os, g, body, "v");
  for (size_t r = 0; r < reductions.size(); ++r) {
    const ReductionOutput& ro = reductions[r];
    if (ro.reduction.isTuple()) {
      os << "  r" << r << ":" << dtypeName(ro.outType) << " = reduce." << printable(ro.reduction.name) << "<result "
         << ro.reduction.result << " of " << printable(ro.reduction.tuple->toString()) << "> over j of";
      for (int v : ro.values) os << " v" << v;
      if (ro.sharesAccumulatorOf >= 0) os << " (the accumulator of r" << ro.sharesAccumulatorOf << ")";
    } else {
      os << "  r" << r << ":" << dtypeName(ro.outType) << " = " << (ro.scan ? "scan." : "reduce.")
         << printable(ro.reduction.name) << "<acc " << dtypeName(ro.reduction.accType) << ", identity "
         << ro.reduction.identity.toString() << ", combiner " << polyred::toString(*ro.reduction.combiner)
         << "> over j of v" << ro.value << (ro.scan ? (ro.exclusive ? ", exclusive" : ", inclusive") : "");
    }
    if (passes() > 1) os << " (pass " << ro.stage << ")";
    if (ro.output >= 0) os << "  -> out %" << printable(g.tensor(g.outputs[static_cast<size_t>(ro.output)].tensor).name) << "[i]";
    if (ro.temporary >= 0) os << "  -> temporary" << ro.temporary << "[i]";
    os << "\n";
  }
  for (const ElementwiseOutput& s : stores) {
    if (s.zeroWhereNonzero) {
      os << "  temporary" << s.temporary << "[" << s.offset << "] = 0 where v" << s.value
         << " != 0 (left zero for the next launch)\n";
      continue;
    }
    if (s.output < 0) os << "  temporary" << s.temporary << "[" << s.offset;  // a scan's result, gathered params, a scatter
    else os << "  out %" << printable(g.tensor(g.outputs[static_cast<size_t>(s.output)].tensor).name) << "[" << s.offset;
    if (s.scatters())
      os << " + " << s.scatterStride << "*v" << s.scatterIndex << "] += v" << s.value << " (atomic; dropped unless 0 <= v"
         << s.scatterIndex << " < " << s.scatterExtent << "; it starts as "
         << (s.scatterBase >= 0 ? "a copy of input " + std::to_string(s.scatterBase) : std::string("zeros")) << ")";
    else os << "] = v" << s.value;
    os << (passes() > 1 ? " (pass " + std::to_string(s.pass) + ")" : "") << "\n";
  }
  if (!epilogue.empty()) os << "  epilogue (once per i, after the reductions):\n";
  printValues(os, g, epilogue, "e");
  for (const ElementwiseOutput& s : epilogueStores)
    os << "  out %" << printable(g.tensor(g.outputs[static_cast<size_t>(s.output)].tensor).name) << "[i] = e" << s.value << "\n";
  return os.str();
}

std::string KernelPartition::toString(const Graph& g) const {
  std::string s;
  auto stages = [&](size_t t) {
    return std::any_of(staged.begin(), staged.end(), [&](const StagedOutput& st) { return st.temporary == static_cast<int>(t); });
  };
  for (size_t t = 0; t < temporaries.size(); ++t)
    s += "temporary" + std::to_string(t) + ": %" + printable(g.tensor(temporaries[t].tensor).name) + " (" +
         std::to_string(temporaries[t].elements) + " x " + std::string(dtypeName(temporaries[t].dtype)) + "), " +
         (stages(t) ? "an in-place output staged" : "materialized for later kernels") +
         (temporaries[t].keptZero ? ", kept zero between launches" : "") + "\n";
  for (const StagedOutput& st : staged)
    s += "out %" + printable(g.tensor(g.outputs[static_cast<size_t>(st.output)].tensor).name) + " is written into temporary" +
         std::to_string(st.temporary) + " and copied in place after the last launch: " + st.why + "\n";
  for (const auto& k : kernels) s += k.toString(g);
  return s;
}

int KernelPartition::stagingTemporary(int o) const {
  for (const StagedOutput& st : staged)
    if (st.output == o) return st.temporary;
  return -1;
}

namespace {

// A loaded tensor: (0, graph input) or (1, temporary).
std::pair<int, int> loadedTensor(const BodyValue& b) {
  return b.temporary >= 0 ? std::pair{1, b.temporary} : std::pair{0, b.input};
}

std::set<std::pair<int, int>> tensorsLoaded(const KernelPlan& plan) {
  std::set<std::pair<int, int>> loaded;
  for (const BodyValue& b : plan.body)
    if (b.kind == BodyValue::Kind::Load) loaded.insert(loadedTensor(b));
  return loaded;
}

}  // namespace

KernelReads kernelReads(const KernelPartition& partition, size_t k, const Graph& g) {
  const KernelPlan& plan = partition.kernels.at(k);
  KernelReads reads;
  for (const auto& [isTemporary, id] : tensorsLoaded(plan)) {
    if (isTemporary) {
      const Temporary& t = partition.temporaries.at(static_cast<size_t>(id));
      reads.bytes += t.elements * dtypeBytes(t.dtype);
    } else {
      const Tensor& t = g.tensor(g.inputs.at(static_cast<size_t>(id)));
      reads.bytes += numElements(t.shape) * dtypeBytes(t.dtype);
    }
  }
  std::set<std::pair<int, int>> elsewhere;
  for (size_t other = 0; other < partition.kernels.size(); ++other)
    if (other != k) elsewhere.merge(tensorsLoaded(partition.kernels[other]));
  for (const BodyValue& b : plan.body)
    reads.sharedWithOtherKernels.push_back(b.kind == BodyValue::Kind::Load && elsewhere.count(loadedTensor(b)) > 0);
  return reads;
}

}  // namespace polyred
