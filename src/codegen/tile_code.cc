#include "codegen/tile_code.h"

#include "codegen/cuda_expr.h"
#include "support/printable.h"

namespace polyred {

std::string tileDeclarations(const PolyKernel& k, const std::string& indent) {
  const TransposeTiling& t = k.tiling;
  const std::string layout = t.flat() ? std::to_string(t.Va) + " lanes of " + std::to_string(t.flatPitch)
                                      : std::to_string(t.TA) + " rows of " + std::to_string(t.pitch());
  std::string d;
  for (size_t v = 0; v < k.plan.body.size(); ++v)
    if (t.stages(v))
      d += indent + "__shared__ " + computeType(k.plan.body[v].dtype) + " tile" + std::to_string(v) + "[" +
           std::to_string(t.slots()) + "];  // " + layout + "\n";
  return d;
}

void emitTileStage(std::ostream& os, const PolyKernel& k, const AstUser& u, const std::string& indent,
                   const std::string& vectorCondition) {
  const KernelPlan& p = k.plan;
  const int Vb = k.tiling.Vb;
  const size_t firstSlot = u.offsets.size() - static_cast<size_t>(Vb);
  const std::string lanes = std::to_string(Vb);
  std::string in = indent;
  if (Vb > 1) {  // the lanes' slots, once for every staged load
    os << in << "{\n";
    in += "  ";
    os << in << "const int stage_slot[" << lanes << "] = {";
    for (int l = 0; l < Vb; ++l) os << (l ? ", " : "") << "(int)(" << toC(u.offsets.at(firstSlot + static_cast<size_t>(l))) << ")";
    os << "};\n";
  }
  size_t load = 0;
  for (size_t v = 0; v < p.body.size(); ++v) {
    if (!k.tiling.stages(v)) continue;
    const std::string at = toC(u.offsets.at(load++)), ptr = loadPointer(p.body[v]), tile = "tile" + std::to_string(v);
    const std::string label = printable(p.body[v].label, 400);
    if (Vb == 1) {
      os << in << tile << "[" << toC(u.offsets.at(firstSlot)) << "] = pr_load(" << ptr << ", " << at << ");  // " << label << "\n";
      continue;
    }
    os << in << "{  // " << label << "\n"
       << in << "  " << computeType(p.body[v].dtype) << " s[" << lanes << "];\n"
       << in << "  pr_load_lanes<" << lanes << ">(" << ptr << ", " << at << ", s, " << vectorCondition << ");\n"
       << in << "  #pragma unroll\n"
       << in << "  for (int l = 0; l < " << lanes << "; ++l) " << tile << "[stage_slot[l]] = s[l];\n"
       << in << "}\n";
  }
  if (Vb > 1) os << indent << "}\n";
}

}  // namespace polyred
