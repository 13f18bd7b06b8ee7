#include "codegen/lane_values.h"

#include "codegen/gather_lanes.h"
#include "support/printable.h"

namespace polyred {

size_t emitLaneValues(std::ostream& os, const LaneValuesSite& site) {
  const PolyKernel& k = site.kernel;
  const KernelPlan& p = k.plan;
  const AstUser& u = site.instance;
  const std::vector<bool>& evaluated = site.evaluated;
  const std::string& vectorOk = site.vectorOk;
  const bool masked = site.masked;
  const int V = k.vector.width;
  const std::string in = site.indent, w = std::to_string(V);
  const std::string each = "#pragma unroll\n" + in + "  for (int l = 0; l < " + w + "; ++l) ";
  size_t load = 0, offset = site.firstOffset;
  for (size_t v = 0; v < p.body.size(); ++v) {
    const BodyValue& b = p.body[v];
    if (!evaluated[v]) {
      if (b.hasOffset()) ++load;  // another pass's access
      continue;
    }
    std::string name = "v" + std::to_string(v);
    os << in << "  " << computeType(b.dtype) << " " << name << "[" << V << "]" << (masked ? " = {}" : "") << ";  // "
       << printable(b.label, 400) << "\n" << in << "  ";
    switch (b.kind) {
      case BodyValue::Kind::Load: {
        if (k.tiling.stages(v)) {  // a tiled transpose's tile (poly/transpose_tiling.h)
          ++load;
          os << "{ const long long slot = " << toC(u.offsets.at(offset++)) << ";\n" << each << name << "[l] = tile" << v
             << "[slot + l * " << k.tiling.elemLaneStride() << "]; }\n";
          break;
        }
        if (b.gathers()) {  // codegen/gather_lanes.h
          const LaneAccess access = k.vector.accesses[load++];
          GatherLanes g{b, name, loadPointer(b), access, V, {}, masked, in};
          for (int l = 0; l < (access == LaneAccess::Gather ? V : 1); ++l) g.offsets.push_back(toC(u.offsets.at(offset++)));
          os << gatherLanes(g, [&](const std::string& at) {
            return site.loads.lanes(static_cast<int>(v), u.pass, g.pointer, at, name, vectorOk, masked);
          });
          break;
        }
        std::string ptr = loadPointer(b);
        switch (k.vector.accesses[load++]) {
          case LaneAccess::Contiguous:
            os << site.loads.lanes(static_cast<int>(v), u.pass, ptr, toC(u.offsets.at(offset++)), name, vectorOk, masked);
            break;
          case LaneAccess::Invariant:  // (a scan's tile padding may lie outside the tensor)
            os << "{ const " << computeType(b.dtype) << " s = " << (site.guardInvariant ? "lo >= hi ? " + computeType(b.dtype) + "() : " : "")
               << "pr_load(" << ptr << ", " << toC(u.offsets.at(offset++)) << ");\n" << each << name << "[l] = s; }\n";
            break;
          case LaneAccess::Gather:
            for (int l = 0; l < V; ++l)
              os << (masked ? "if (" + std::to_string(l) + " >= lo && " + std::to_string(l) + " < hi) " : "") << name
                 << "[" << l << "] = pr_load(" << ptr << ", " << toC(u.offsets.at(offset++)) << "); ";
            os << "\n";
            break;
        }
        break;
      }
      case BodyValue::Kind::Constant: os << each << name << "[l] = " << emitLiteral(b.value) << ";\n"; break;
      case BodyValue::Kind::Op: {
        std::vector<std::string> a;
        std::vector<DType> ts;
        for (int o : b.operands) {
          a.push_back("v" + std::to_string(o) + "[l]");
          ts.push_back(p.body[static_cast<size_t>(o)].dtype);
        }
        os << each << name << "[l] = " << emitElementwise(b.op, a, ts, b.dtype, site.facts(v)) << ";\n";
        break;
      }
      case BodyValue::Kind::Scanned: os << each << name << "[l] = " << site.scanned << "[l];\n"; break;
    case BodyValue::Kind::Reduced:  // an earlier pass's total
        os << each << name << "[l] = " << site.total(b.reduction) << ";\n";
        break;
      case BodyValue::Kind::Index: {  // a coordinate: lane l is at base + l, or its own
        const std::string type = computeType(b.dtype);
        switch (k.vector.accesses[load++]) {
          case LaneAccess::Contiguous:
            os << "{ const long long base = " << toC(u.offsets.at(offset++)) << ";\n" << each << name << "[l] = (" << type
               << ")(base + l); }\n";
            break;
          case LaneAccess::Invariant:
            os << each << name << "[l] = (" << type << ")(" << toC(u.offsets.at(offset++)) << ");\n";
            break;
          case LaneAccess::Gather:
            for (int l = 0; l < V; ++l) os << name << "[" << l << "] = (" << type << ")(" << toC(u.offsets.at(offset++)) << "); ";
            os << "\n";
            break;
        }
        break;
      }
    }
  }
  return offset;
}

}  // namespace polyred
