#include "codegen/alignment_check.h"

#include <set>

#include "codegen/cuda_expr.h"

namespace polyred {

std::string alignmentCheck(const PolyKernel& k) {
  const KernelPlan& p = k.plan;
  const std::string w = std::to_string(k.vector.width);
  std::string cond;
  size_t load = 0;
  std::set<std::string> pointers, staged;
  for (size_t v = 0; v < p.body.size() && k.vector.width > 1; ++v)
    if (p.body[v].hasOffset() && k.vector.accesses[load++] == LaneAccess::Contiguous &&
        p.body[v].kind == BodyValue::Kind::Load)
      pointers.insert(loadPointer(p.body[v]));
  for (const ElementwiseOutput& s : p.stores)  // (a scan's materialized result: a temporary)
    if (k.vector.width > 1) pointers.insert(storePointer(s));
  for (size_t v = 0; v < p.body.size() && k.tiling.Vb > 1; ++v)  // a tiled transpose's Stage lanes
    if (k.tiling.stages(v)) staged.insert(loadPointer(p.body[v]));
  for (const std::string& ptr : pointers) cond += (cond.empty() ? "" : " && ") + ("pr_aligned<" + w + ">(" + ptr + ")");
  for (const std::string& ptr : staged)
    cond += (cond.empty() ? "" : " && ") + ("pr_aligned<" + std::to_string(k.tiling.Vb) + ">(" + ptr + ")");
  return "const bool vector_ok = " + cond + ";  // else element by element";
}

}  // namespace polyred
