#include "codegen/lane_values.h"

#include <algorithm>

#include "codegen/gather_lanes.h"
#include "codegen/loop_invariants.h"
#include "support/printable.h"

namespace polyred {

namespace {

// 16-bit float ops computed on half pairs: the sum, difference or product of two
// halves rounded once to half is what float computes and pr_fit_float16 rounds (float's
// 24-bit significand is at least 2 * 11 + 2, so rounding twice is as rounding once),
// bit for bit, NaN, infinities and subnormals included. A pair op is one instruction
// for two lanes where float costs three per lane (the op and the two conversions of
// the rounding). The _rn intrinsics are never contracted into a fused multiply-add.
const char* halfPairOp(OpKind op) {
  switch (op) {
    case OpKind::Add: return "__hadd2_rn";
    case OpKind::Sub: return "__hsub2_rn";
    case OpKind::Mul: return "__hmul2_rn";
    default: return nullptr;
  }
}

bool packsHalves(const KernelPlan& p, const BodyValue& b, int V) {
  if (V % 2 || b.kind != BodyValue::Kind::Op || b.dtype != DType::Float16 || !halfPairOp(b.op) ||
      b.operands.size() != 2)
    return false;
  return std::all_of(b.operands.begin(), b.operands.end(),
                     [&](int o) { return p.body[static_cast<size_t>(o)].dtype == DType::Float16; });
}

// The float16 loads of `pass` that a half-pair op or a pair fold reads: loaded as pairs,
// they reach those readers with no conversion (a float lane costs one, packing two
// lanes back into a pair another).
std::vector<bool> loadsWantingPairs(const LaneValuesSite& site) {
  const PolyKernel& k = site.kernel;
  const KernelPlan& p = k.plan;
  const int V = k.vector.width;
  std::vector<bool> wanted(p.body.size(), false);
  for (size_t v = 0; v < p.body.size(); ++v)
    if (site.evaluated[v] && packsHalves(p, p.body[v], V))
      for (int o : p.body[v].operands) wanted[static_cast<size_t>(o)] = true;
  for (size_t r = 0; r < p.reductions.size(); ++r)
    if (int s = pairFoldSource(site, r); s >= 0) wanted[static_cast<size_t>(s)] = true;
  for (size_t v = 0; v < p.body.size(); ++v)
    wanted[v] = wanted[v] && p.body[v].kind == BodyValue::Kind::Load && !p.body[v].gathers();
  return wanted;
}

// hv<v>[k] = op(pair k of each operand) -- an operand's own pairs where it has them,
// else its two float lanes packed (exactly: a Float16 value holds a half) -- then the
// float lanes v<v>[l] every other consumer reads (the compiler drops them when none does).
void emitPackedHalfOp(std::ostream& os, const BodyValue& b, size_t v, int V, const std::vector<bool>& packed,
                      const std::string& in) {
  const std::string pairs = std::to_string(V / 2), name = std::to_string(v);
  auto pairOf = [&](int o) {
    const std::string k = std::to_string(o);
    return packed[static_cast<size_t>(o)] ? "hv" + k + "[k]" : "__floats2half2_rn(v" + k + "[2 * k], v" + k + "[2 * k + 1])";
  };
  os << "__half2 hv" << name << "[" << pairs << "];\n"
     << in << "  #pragma unroll\n"
     << in << "  for (int k = 0; k < " << pairs << "; ++k) {\n"
     << in << "    hv" << name << "[k] = " << halfPairOp(b.op) << "(" << pairOf(b.operands[0]) << ", " << pairOf(b.operands[1])
     << ");\n"
     << in << "    v" << name << "[2 * k] = __low2float(hv" << name << "[k]);\n"
     << in << "    v" << name << "[2 * k + 1] = __high2float(hv" << name << "[k]);\n"
     << in << "  }\n";
}

// A float quotient by a divisor the loop does not change (dividesByInvariant) divides
// the whole vector in one call, pr_div_invariant_lanes or pr_div_coarse_lanes
// (device/polyred_division.cuh): bit for bit the scalar function on each lane, the
// divisor tested once for the vector.
bool dividesLanesByInvariant(const KernelPlan& p, const BodyValue& b, OperandFacts facts) {
  return b.op == OpKind::Div && dividesByInvariant(p.body[static_cast<size_t>(b.operands[0])].dtype, facts);
}

// v<v> = v<a> / v<d> lane by lane, then rounded to a 16-bit result's dtype unless only
// stores read it (OperandFacts::roundedByStore), as emitElementwise's quotient.
void emitInvariantDivision(std::ostream& os, const BodyValue& b, size_t v, int V, OperandFacts facts,
                           const std::string& in) {
  const std::string name = "v" + std::to_string(v);
  // The divisor is computed from totals and constants only: the same in every lane.
  const std::string divisor = "v" + std::to_string(b.operands[1]) + "[0]";
  os << invariantDivisionFunction(facts) << "_lanes<" << V << ">(" << name << ", v" << b.operands[0] << ", "
     << invariantDivisorArgument(facts, divisor) << ");\n";
  if (b.dtype != DType::Float32 && !facts.roundedByStore)
    os << in << "  #pragma unroll\n" << in << "  for (int l = 0; l < " << V << "; ++l) " << name
       << "[l] = " << emitCast(name + "[l]", DType::Float32, b.dtype) << ";\n";
}

// A masked contiguous load of value v as pr_load_lanes_flat (LaneValuesSite::alignedOk),
// or "" where the site does not take them or the tensor's size is unknown.
std::string flatLoad(const LaneValuesSite& site, size_t v, const std::string& pointer, const std::string& at,
                     const std::string& dest) {
  if (!site.masked || !site.graph) return "";
  const int64_t elements = loadedTensorElements(*site.graph, site.kernel.plan.body.at(v));
  if (elements <= 0) return "";
  const std::string inBuffer = "pr_in_buffer<" + std::to_string(site.kernel.vector.width) + ">(" + at + ", " +
                               std::to_string(elements) + "LL)";
  return site.loads.flatLanes(static_cast<int>(v), site.instance.pass, pointer, at, dest,
                              conjunction(site.alignedOk, inBuffer));
}

}  // namespace

size_t emitLaneValues(std::ostream& os, const LaneValuesSite& site) {
  const PolyKernel& k = site.kernel;
  const KernelPlan& p = k.plan;
  const AstUser& u = site.instance;
  const std::vector<bool>& evaluated = site.evaluated;
  const std::vector<bool>& annotated = site.annotated.empty() ? evaluated : site.annotated;
  const RowCache& cache = site.loads.cache;
  const std::string& vectorOk = site.vectorOk;
  const bool masked = site.masked;
  const int V = k.vector.width;
  const std::string in = site.indent, w = std::to_string(V);
  const std::string each = "#pragma unroll\n" + in + "  for (int l = 0; l < " + w + "; ++l) ";
  size_t load = 0, offset = site.firstOffset;
  std::vector<bool> packed(p.body.size(), false);  // values with a `hv<k>[V/2]` of half pairs here
  const std::vector<bool> pairLoads = loadsWantingPairs(site);
  for (size_t v = 0; v < p.body.size(); ++v) {
    const BodyValue& b = p.body[v];
    if (!evaluated[v]) {
      if (!b.hasOffset()) continue;
      // another pass's access, or one that only fed a result read from the row cache
      const size_t access = load++;
      if (annotated[v]) offset += k.vector.accesses.at(access) == LaneAccess::Gather ? static_cast<size_t>(V) : 1;
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
          case LaneAccess::Contiguous: {
            const std::string at = toC(u.offsets.at(offset++)), pairs = "hv" + std::to_string(v);
            const std::string pairLoad =
                pairLoads[v] ? site.loads.pairs(static_cast<int>(v), u.pass, ptr, at, pairs, vectorOk, masked) : "";
            if (pairLoad.empty()) {
              const std::string flat = flatLoad(site, v, ptr, at, name);
              os << (flat.empty() ? site.loads.lanes(static_cast<int>(v), u.pass, ptr, at, name, vectorOk, masked) : flat);
              break;
            }
            os << "__half2 " << pairs << "[" << V / 2 << "];\n" << in << "  " << pairLoad << in << "  pr_unpair<" << V
               << ">(" << pairs << ", " << name << ");\n";
            packed[v] = true;
            break;
          }
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
        if (const std::string read = cache.resultRead(static_cast<int>(v), u.pass, V); !read.empty()) {
          os << read;
          break;
        }
        if (site.hoisted && site.hoisted(v)) {
          os << each << name << "[l] = " << hoistedValueName(v) << ";\n";
          break;
        }
        if (packsHalves(p, b, V)) {
          emitPackedHalfOp(os, b, v, V, packed, in);
          packed[v] = true;
          break;
        }
        if (dividesLanesByInvariant(p, b, site.facts(v))) {
          emitInvariantDivision(os, b, v, V, site.facts(v), in);
          break;
        }
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
    if (b.kind == BodyValue::Kind::Op) os << cache.resultKeep(static_cast<int>(v), u.pass, V, in + "  ");
  }
  if (site.paired) *site.paired = packed;
  return offset;
}

int pairFoldSource(const LaneValuesSite& site, size_t r) {
  const KernelPlan& p = site.kernel.plan;
  const ReductionOutput& ro = p.reductions[r];
  const BuiltinCombiner c = ro.reduction.builtin();
  if (site.kernel.vector.width % 2 || site.kernel.vector.accumulatorLanes != 1 || p.hasScan() ||
      ro.stage != site.instance.pass || ro.reduction.isTuple() || (c != BuiltinCombiner::Max && c != BuiltinCombiner::Min) ||
      ro.reduction.accType != DType::Float32)
    return -1;
  int source = ro.value;
  const BodyValue& b = p.body[static_cast<size_t>(ro.value)];
  if (b.kind == BodyValue::Kind::Op && b.op == OpKind::Cast && b.dtype == DType::Float32) source = b.operands.at(0);
  const BodyValue& s = p.body[static_cast<size_t>(source)];
  const bool stagedHalves = s.kind == BodyValue::Kind::Load && s.dtype == DType::Float16 && site.loads.stage.regionOf(source);
  return stagedHalves ? source : -1;
}

std::string maskedLaneBounds(const std::string& pos, int64_t extent, int width, const std::string& indent) {
  const std::string V = std::to_string(width), N = std::to_string(extent);
  return indent + "const long long pos = " + pos + ";  // lane 0's place in its row\n" + indent +
         "const int lo = pos < 0 ? (int)-pos : 0, hi = pos + " + V + " > " + N + " ? (int)(" + N + " - pos) : " + V +
         ";\n" + indent + "[[maybe_unused]] const bool whole = pos >= 0 && pos <= " + std::to_string(extent - width) + ";\n";
}

}  // namespace polyred
