#include "driver/symbolic_kernels.h"

#include <algorithm>

#include <isl/aff.h>

#include "ir/symbolic_dims.h"
#include "support/error.h"
#include "support/isl_support.h"

namespace polyred {

namespace {

// An offset (isl text over i and j) as isl prints the function it denotes: the
// flattening writes "131071000*floor(i/131071) + 1000*(i mod 131071) + j" for what is
// 1000i + j at every probe. Text isl cannot read is compared as it is.
std::string canonicalOffset(isl_ctx* ctx, const std::string& offset) {
  if (offset.empty()) return offset;
  const std::string text = "{ [i, j] -> [(" + offset + ")] }";
  isl_pw_aff* f = isl_pw_aff_read_from_str(ctx, text.c_str());
  if (!f) return offset;
  f = isl_pw_aff_coalesce(f);
  std::string canonical = takeIslString(isl_pw_aff_to_str(f));  // (to_str keeps f)
  isl_pw_aff_free(f);
  return canonical;
}

bool sameOffset(const std::string& a, const std::string& b) {
  if (a == b) return true;
  IslContext ctx;
  return canonicalOffset(ctx.get(), a) == canonicalOffset(ctx.get(), b);
}

bool sameValue(const BodyValue& a, const BodyValue& b) {
  return a.kind == b.kind && a.dtype == b.dtype && a.input == b.input && a.temporary == b.temporary &&
         sameOffset(a.offset, b.offset) && a.value.identical(b.value) && a.op == b.op && a.operands == b.operands &&
         a.reduction == b.reduction && a.gatherStride == b.gatherStride && a.gatherExtent == b.gatherExtent;
}

bool sameValues(const std::vector<BodyValue>& a, const std::vector<BodyValue>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (!sameValue(a[k], b[k])) return false;
  return true;
}

bool sameStores(const std::vector<ElementwiseOutput>& a, const std::vector<ElementwiseOutput>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    const ElementwiseOutput &x = a[k], &y = b[k];
    if (x.value != y.value || x.output != y.output || !sameOffset(x.offset, y.offset) || x.pass != y.pass ||
        x.scatterIndex != y.scatterIndex || x.scatterStride != y.scatterStride || x.scatterExtent != y.scatterExtent ||
        x.scatterBase != y.scatterBase || x.temporary != y.temporary || x.zeroWhereNonzero != y.zeroWhereNonzero)
      return false;
  }
  return true;
}

bool sameReductions(const std::vector<ReductionOutput>& a, const std::vector<ReductionOutput>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    const ReductionOutput &x = a[k], &y = b[k];
    if (x.reduction.name != y.reduction.name || x.reduction.accType != y.reduction.accType || x.value != y.value ||
        x.values != y.values || x.output != y.output || x.temporary != y.temporary || x.outType != y.outType ||
        x.stage != y.stage || x.sharesAccumulatorOf != y.sharesAccumulatorOf || x.scan != y.scan ||
        x.exclusive != y.exclusive)
      return false;
  }
  return true;
}

// Every field of the plans but M (and the texts for people: why, labels).
bool sameButRows(const KernelPlan& a, const KernelPlan& b) {
  return a.name == b.name && a.form == b.form && a.N == b.N && a.elementsPerN == b.elementsPerN &&
         a.maskedLanes == b.maskedLanes && sameValues(a.body, b.body) && sameReductions(a.reductions, b.reductions) &&
         sameStores(a.stores, b.stores) && sameValues(a.epilogue, b.epilogue) &&
         sameStores(a.epilogueStores, b.epilogueStores);
}

// The symbols s for which x0 and x1 are the same multiple of s's probes in the first
// and second sets, with that multiple: how a row count or a temporary's size follows
// a symbol.
std::vector<SymbolicRows> multiplesOfProbes(int64_t x0, int64_t x1, const Graph& g) {
  std::vector<SymbolicRows> found;
  for (size_t s = 0; s < g.symbols.size(); ++s) {
    const int64_t p0 = symbolProbe(static_cast<int>(s), 0), p1 = symbolProbe(static_cast<int>(s), 1);
    if (x0 % p0 == 0 && x1 % p1 == 0 && x0 / p0 == x1 / p1)
      found.push_back(SymbolicRows{static_cast<int>(s), g.symbols[s], x0 / p0});
  }
  return found;
}

// The symbol whose probes give M at both sets, with the same coefficient.
std::optional<SymbolicRows> rowsOf(const KernelPlan& a, const KernelPlan& b, const Graph& g) {
  const std::vector<SymbolicRows> found = multiplesOfProbes(a.M, b.M, g);
  if (found.size() != 1) return std::nullopt;
  return found.front();
}

[[noreturn]] void refuse(const Graph& g, const std::string& kernel, const std::string& reason) {
  throw Error(g.sourceFile, kernel, reason);
}

void checkKernelKind(const KernelPlan& p, const Graph& g) {
  const std::string symbol = p.symbolicRows->name;
  if (p.form != CanonicalForm::XReduce && p.form != CanonicalForm::Elementwise)
    refuse(g, p.name, "symbolic size " + symbol + " in the rows of a " + std::string(formName(p.form)) +
                          " kernel is not supported yet (only x-reduces and elementwise kernels)");
  if (p.hasScan() || p.hasScatterStore())
    refuse(g, p.name, "symbolic size " + symbol + " in a scan or scatter kernel is not supported yet");
  if (p.hasOrderedReduction() || p.needsBlockOrderCombine())
    refuse(g, p.name, "symbolic size " + symbol + " in a kernel with a tuple or complex-product reduction is not supported yet");
}

// A temporary whose size differs at the two probe sets: the same number of elements
// per unit of one symbol at both, allocated at launch. A scatter's kept-zero
// temporary or a staged in-place output (copied whole after the launches) sized by a
// symbol is refused: their kernels are never symbolic.
void markSymbolicTemporary(Temporary& a, const Temporary& b, int index, const KernelPartition& partition,
                           const Graph& g) {
  if (a.elements == b.elements) return;
  const std::vector<SymbolicRows> found = multiplesOfProbes(a.elements, b.elements, g);
  if (found.size() > 1) refuse(g, "", "a temporary between kernels is sized by two size symbols: not supported yet");
  if (found.empty())
    refuse(g, "", "a temporary between kernels is not a constant times one size symbol: not supported yet");
  a.symbol = found.front().symbol;
  a.elementsPerSymbol = found.front().coefficient;
  const bool staged = std::any_of(partition.staged.begin(), partition.staged.end(),
                                  [&](const StagedOutput& o) { return o.temporary == index; });
  if (a.keptZero || staged)
    refuse(g, "", "a scatter's or an in-place output's temporary is sized by a size symbol: not supported yet");
}

}  // namespace

void markSymbolicKernels(KernelPartition& atProbes, const KernelPartition& atSecondProbes, const Graph& g) {
  const KernelPartition &a = atProbes, &b = atSecondProbes;
  if (a.kernels.size() != b.kernels.size() || a.temporaries.size() != b.temporaries.size() ||
      a.staged.size() != b.staged.size())
    refuse(g, "", "the kernels of this graph depend on the values of its size symbols: not supported yet");
  for (size_t t = 0; t < a.temporaries.size(); ++t)
    markSymbolicTemporary(atProbes.temporaries[t], b.temporaries[t], static_cast<int>(t), atProbes, g);
  for (size_t k = 0; k < a.kernels.size(); ++k) {
    KernelPlan& p = atProbes.kernels[k];
    const KernelPlan& q = b.kernels[k];
    if (!sameButRows(p, q))
      refuse(g, p.name, "a size symbol reaches more than the rows of this kernel (its reduced axis, or an axis "
                        "that does not flatten into the outermost rows): not supported yet");
    if (p.M == q.M) continue;
    p.symbolicRows = rowsOf(p, q, g);
    if (!p.symbolicRows)
      refuse(g, p.name, "the rows of this kernel are not a constant times one size symbol: not supported yet");
    p.pointShape.clear();  // holds the probe value
    checkKernelKind(p, g);
  }
}

void checkSymbolicBinding(const KernelPlan& plan, const Binding& b, const Vectorization& vec,
                          const TransposeTiling& tiling, const Graph& g) {
  if (!plan.symbolicRows) return;
  POLYRED_CHECK(tiling.empty() && (vec.axis != 'i' || vec.width == 1), "symbolic rows tiled or vectorized");
  if (b.multiBlock() || b.multiBlockScan())
    refuse(g, plan.name, "symbolic size " + plan.symbolicRows->name + ": this kernel splits its rows across blocks, "
                         "whose workspace would be sized by the symbol: not supported yet");
}

}  // namespace polyred
