#include "poly/vectorize.h"

#include <isl/aff.h>
#include <isl/set.h>

#include <algorithm>
#include <regex>

#include "poly/isl_support.h"
#include "support/error.h"

namespace polyred {

std::string Vectorization::laneOffset(const std::string& offset, int width, int lane) {
  std::string i = "(" + std::to_string(width) + "*i" + (lane > 0 ? " + " + std::to_string(lane) : "") + ")";
  return std::regex_replace(offset, std::regex("\\bi\\b"), i);
}

namespace {

constexpr int kVectorBytes = 16;

// Whether offset(V*iv + v) == offset(V*iv) + step*v (step 1: contiguous, 0: invariant)
// for every iv < M/V and lane v, and (contiguous) offset(V*iv) is a multiple of V.
bool laneStep(isl_ctx* ctx, const std::string& offset, int64_t vectors, int width, int step) {
  std::string dom = " : 0 <= iv < " + std::to_string(vectors) + " and 0 <= v < " + std::to_string(width) + " }";
  auto at = [&](const std::string& lane) {
    return std::regex_replace(offset, std::regex("\\bi\\b"), "(" + std::to_string(width) + "*iv" + lane + ")");
  };
  std::string lhs = "{ [iv, v] -> [(" + at(" + v") + ")]" + dom;
  std::string rhs = "{ [iv, v] -> [(" + at("") + " + " + std::to_string(step) + "*v)]" + dom;
  isl_pw_aff* a = isl_pw_aff_read_from_str(ctx, lhs.c_str());
  isl_pw_aff* b = isl_pw_aff_read_from_str(ctx, rhs.c_str());
  POLYRED_CHECK(a && b, "isl could not parse the offset " << offset);
  isl_set* differ = isl_pw_aff_ne_set(a, b);
  bool same = isl_set_is_empty(differ) == isl_bool_true;
  isl_set_free(differ);
  if (!same || step == 0) return same;
  std::string misaligned = "{ [iv] : 0 <= iv < " + std::to_string(vectors) + " and (" + at("") + ") mod " +
                           std::to_string(width) + " != 0 }";
  isl_set* bad = isl_set_read_from_str(ctx, misaligned.c_str());
  POLYRED_CHECK(bad, "isl could not parse " << misaligned);
  bool aligned = isl_set_is_empty(bad) == isl_bool_true;
  isl_set_free(bad);
  return aligned;
}

}  // namespace

Vectorization chooseVectorization(const KernelPlan& plan) {
  Vectorization none;
  if (plan.form != CanonicalForm::Elementwise || plan.stores.empty()) return none;
  int widest = 1;  // bytes of the widest element among the stores (always contiguous)
  for (const ElementwiseOutput& s : plan.stores) widest = std::max(widest, dtypeBytes(plan.body[static_cast<size_t>(s.value)].dtype));
  IslContext ctx;
  // Try the widest vector the stores allow, then narrower ones as loads join.
  for (int width = std::min(8, kVectorBytes / widest); width >= 2; width /= 2) {
    if (plan.M % width != 0) continue;
    Vectorization r;
    r.width = width;
    bool fits = true;
    for (const BodyValue& v : plan.body) {
      if (v.kind != BodyValue::Kind::Load) continue;
      int64_t vectors = plan.M / width;
      if (laneStep(ctx.get(), v.offset, vectors, width, 0)) {
        r.loads.push_back(LaneAccess::Invariant);
      } else if (laneStep(ctx.get(), v.offset, vectors, width, 1)) {
        r.loads.push_back(LaneAccess::Contiguous);
        fits = fits && dtypeBytes(v.dtype) * width <= kVectorBytes;
      } else {
        r.loads.push_back(LaneAccess::Gather);
      }
    }
    if (fits) return r;
  }
  return none;
}

}  // namespace polyred
