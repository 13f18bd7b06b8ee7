#include "poly/cache_hints.h"

#include <algorithm>
#include <isl/map.h>

#include "support/isl_support.h"

namespace polyred {

namespace {

// Whether offset(i, j) (isl text) maps the points 0 <= i < M, 0 <= j < N one-to-one.
bool readsEachElementOnce(isl_ctx* ctx, const std::string& offset, int64_t M, int64_t N) {
  const std::string text = "{ [i, j] -> [o] : o = " + offset + " and 0 <= i < " + std::to_string(M) +
                           " and 0 <= j < " + std::to_string(N) + " }";
  isl_map* access = isl_map_read_from_str(ctx, text.c_str());
  POLYRED_CHECK(access, "isl could not parse the access " << text);
  const bool once = isl_map_is_injective(access) == isl_bool_true;
  isl_map_free(access);
  return once;
}

// Whether a single-pass kernel's loads stream (auto): a reduction without point stores
// whose reads fill between a quarter of the L2 and four times the L2. H100, 2026-11-26,
// `polyred run --config=evict=stream` against `evict=off` (us): sum f32 [16226304]
// 33.90 -> 29.50, sum f32 [768,21128] over the rows 34.26 -> 29.36, var_mean f32
// [32,64,56,56] 19.01 -> 17.49, deep_fm's 60 MB sum of squares 31.78 -> 27.68; 4-6 MB
// reads within 1.5%; sum f32 [1024,131072] (537 MB) 188.1 -> 196.3, f16 (268 MB)
// 100.8 -> 105.2; deep_fm's 105 MB y-reduce with lanes 54.2 -> 50.4 (scalar y-reduces,
// below 8192 columns, carry no hint) (docs/results/notes-2026-11-26.md).
// Where a later kernel re-reads the input, the hint costs: softmax f32 [64,65536] as
// three kernels over x took 29.7 us with plain loads, 36.9 with the reductions' .cs.
bool streamsSinglePass(const KernelPlan& plan, int64_t bytesRead, int64_t l2Bytes) {
  if (plan.form == CanonicalForm::Elementwise || !plan.stores.empty()) return false;
  return bytesRead >= l2Bytes / 4 && bytesRead <= 4 * l2Bytes;
}

}  // namespace

bool CacheHints::any() const {
  return streamingStores || std::find(lastUse.begin(), lastUse.end(), true) != lastUse.end();
}

std::string CacheHints::describe(const KernelPlan& plan) const {
  if (!any()) return "";
  std::string loads;
  for (size_t v = 0; v < lastUse.size(); ++v)
    if (lastUse[v]) loads += (loads.empty() ? "" : ", ") + plan.body[v].label;
  return ", evict first:" + (loads.empty() ? "" : " the last loads of " + loads + (streamingLoads ? " (.cs)" : "") +
                                 (streamingStores ? ";" : "")) +
         (streamingStores ? " the stores" : "");
}

CacheHints chooseCacheHints(const KernelPlan& plan, CacheHintMode mode, const KernelReads& reads, int64_t l2Bytes) {
  CacheHints hints;
  hints.lastUse.assign(plan.body.size(), false);
  const int last = plan.passes() - 1;
  const bool streamedSinglePass = last == 0 && streamsSinglePass(plan, reads.bytes, l2Bytes);
  if (mode == CacheHintMode::Off || (mode == CacheHintMode::Auto && last == 0 && !streamedSinglePass)) return hints;
  IslContext ctx;
  const std::vector<bool> evaluated = plan.valuesOfPass(last);
  for (size_t v = 0; v < plan.body.size(); ++v) {
    const BodyValue& b = plan.body[v];
    if (evaluated[v] && b.kind == BodyValue::Kind::Load && b.temporary < 0 && !reads.sharedWithOtherKernels[v])
      hints.lastUse[v] = readsEachElementOnce(ctx.get(), b.offset, plan.M, plan.N);
  }
  hints.streamingStores = std::any_of(plan.stores.begin(), plan.stores.end(),
                                      [&](const ElementwiseOutput& s) { return s.pass == last; });
  // Where the last pass also stores, its last loads go as ld.global.cs, else with the
  // L2 policy (H100, 2026-11-26, `polyred run --config=evict=stream` against the
  // policy, us): softmax f16 [4096,50257] 354.3 -> 346.0, [4096,32768] 231.2 -> 210.1,
  // f32 [16384,4096] 253.2 -> 226.5, softmax via logsumexp 365.5 -> 355.1, the bert
  // softmax and dropout-grad files 18.58 -> 18.37 and 21.84 -> 21.40; without stores
  // cross-entropy 230.5 -> 255.0 and logsumexp 198.4 -> 199.7 (docs/results.md).
  hints.streamingLoads =
      mode == CacheHintMode::Stream || (mode == CacheHintMode::Auto && (hints.streamingStores || streamedSinglePass));
  return hints;
}

}  // namespace polyred
