#include "codegen/gather_lanes.h"

#include "codegen/cuda_expr.h"

namespace polyred {

std::string gatherScalar(const BodyValue& b, const std::string& pointer, const std::string& offset,
                         const std::string& prefix) {
  return "pr_gather(" + pointer + ", " + offset + ", (long long)" + prefix + std::to_string(b.operands.at(0)) + ", " +
         std::to_string(b.gatherStride) + "LL, " + std::to_string(b.gatherExtent) + "LL)";
}

std::string gatherLanes(const GatherLanes& g, const std::function<std::string(const std::string&)>& vectorLoad) {
  const BodyValue& b = g.load;
  const std::string index = "v" + std::to_string(b.operands.at(0)), type = computeType(b.dtype);
  const std::string stride = std::to_string(b.gatherStride) + "LL", extent = std::to_string(b.gatherExtent) + "LL";
  const std::string each = "#pragma unroll\n" + g.indent + "  for (int l = 0; l < " + std::to_string(g.width) + "; ++l) ";
  std::string out;
  if (g.access == LaneAccess::Gather) {
    for (int l = 0; l < g.width; ++l) {
      const std::string lane = std::to_string(l);
      out += (g.masked ? "if (" + lane + " >= lo && " + lane + " < hi) " : "") + g.name + "[" + lane + "] = pr_gather(" +
             g.pointer + ", " + g.offsets.at(static_cast<size_t>(l)) + ", (long long)" + index + "[" + lane + "], " +
             stride + ", " + extent + "); ";
    }
    return out + "\n";
  }
  out = "{ const long long at = (long long)" + index + "[0];\n" + g.indent + "  ";
  if (g.access == LaneAccess::Invariant)
    return out + "const " + type + " s = pr_gather(" + g.pointer + ", " + g.offsets.at(0) + ", at, " + stride + ", " +
           extent + ");\n" + g.indent + "  " + each + g.name + "[l] = s; }\n";
  return out + "if (at >= 0 && at < " + extent + ") " + vectorLoad("(" + g.offsets.at(0) + ") + at * " + stride) +
         g.indent + "  else for (int l = 0; l < " + std::to_string(g.width) + "; ++l) " + g.name + "[l] = (" + type +
         ")0; }\n";
}

}  // namespace polyred
