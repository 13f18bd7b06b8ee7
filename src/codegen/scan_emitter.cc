#include "codegen/scan_emitter.h"

#include <sstream>

#include "codegen/cuda_expr.h"

namespace polyred {

namespace {
std::string shapeArgs(const ScanCode& c) { return std::to_string(c.BX) + ", " + std::to_string(c.BY); }
std::string each(const ScanCode& c, const std::string& in) {
  return "#pragma unroll\n" + in + "for (int l = 0; l < " + std::to_string(c.width) + "; ++l) ";
}
}  // namespace

std::string scanLaneBounds(const std::string& pos, const std::string& row, long long rows, long long rowLength,
                           int width, const std::string& indent) {
  const std::string V = std::to_string(width), N = std::to_string(rowLength);
  std::ostringstream os;
  os << indent << "const long long pos = " << pos << ";  // lane 0's place in its row\n"
     << indent << "const bool live = (" << row << ") < " << rows << ";  // a row of the scan, not tile padding\n"
     << indent << "const int lo = pos < 0 ? (int)-pos : 0, hi = !live ? 0 : pos + " << V << " > " << N << " ? (int)("
     << N << " - pos) : " << V << ";\n"
     << indent << "const bool whole = lo == 0 && hi == " << V << ";\n";
  return os.str();
}

std::string scanStep(const ScanCode& c, const std::string& in) {
  const std::string op = c.functor + "()", lanes = "[" + std::to_string(c.width) + "]";
  std::ostringstream os;
  os << in << c.accType << " s0" << lanes << ";  // the running fold at each lane\n"
     << in << "{\n"
     << in << "  " << c.accType << " fold = " << c.identity << ";  // this thread's lanes, in order\n"
     << in << "  " << each(c, in + "  ") << "{\n"
     << in << "    if (l >= lo && l < hi) fold = " << op << "(fold, " << c.element << ");\n"
     << in << "    s0[l] = fold;\n"
     << in << "  }\n"
     << in << "  const " << c.accType << " before = polyred_dev::block_scan_exclusive<" << c.accType << ", "
     << c.functor << ", " << shapeArgs(c) << ", " << (c.alongX ? "true" : "false") << ">(fold, " << op << ", "
     << c.identity << ", acc0, scan_smem);\n";
  if (c.exclusive)  // lane l: before (+) lanes 0..l-1, downwards so that each reads its inclusive neighbour
    os << in << "  for (int l = " << c.width - 1 << "; l > 0; --l) s0[l] = " << op << "(before, s0[l - 1]);\n"
       << in << "  s0[0] = before;\n";
  else
    os << in << "  " << each(c, in + "  ") << "s0[l] = " << op << "(before, s0[l]);\n";
  os << in << "}\n"
     << in << c.outType << " o0" << lanes << ";\n"
     << in << each(c, in) << "o0[l] = " << c.result << ";\n";
  return os.str();
}

std::string scanSharedMemory(const ScanCode& c) {
  std::string s = "__shared__ " + c.accType + " scan_smem[polyred_dev::scan_smem<" + shapeArgs(c) + ", " +
                  (c.alongX ? "true" : "false") + ">()];\n";
  if (c.chunks > 1)
    s += "  __shared__ " + c.accType + " fold_smem[polyred_dev::" + (c.alongX ? "smem_x" : "smem_y") + "<" +
         shapeArgs(c) + ">()];\n  __shared__ " + c.accType + " fold_totals[" + std::to_string(c.rowsPerTile()) + "];\n";
  return s;
}

std::vector<ScanWorkspace> scanWorkspaces(const ScanCode& c) {
  const int64_t slots = c.tiles * c.rowsPerTile() * c.chunks;
  auto spec = [](int64_t bytes) {
    WorkspaceSpec w;
    w.bytes = bytes;
    return w;
  };
  return {{"unsigned* __restrict__ ", "scan_tickets", spec(2 * c.tiles * 4)},
          {"unsigned* __restrict__ ", "scan_flags", spec(slots * 4)},
          {c.accType + "* __restrict__ ", "scan_aggregates", spec(slots * c.accBytes)},
          {c.accType + "* __restrict__ ", "scan_prefixes", spec(slots * c.accBytes)}};
}

std::string scanStore(const ScanCode& c, const std::string& pointer, const std::string& value,
                      const std::vector<std::string>& offsets, const std::string& vectorOk, const std::string& in) {
  std::ostringstream os;
  if (offsets.size() == 1 && c.width > 1) {
    os << in << "pr_store_lanes<" << c.width << ">(" << pointer << ", " << offsets[0] << ", " << value << ", "
       << vectorOk << ", lo, hi);\n";
    return os.str();
  }
  for (size_t l = 0; l < offsets.size(); ++l) {
    const std::string lane = std::to_string(l);
    const std::string inRow = c.width == 1 ? "lo < hi" : lane + " >= lo && " + lane + " < hi";
    os << in << "if (" << inRow << ") pr_store(" << pointer << ", " << offsets[l] << ", " << value << "[" << lane << "]);\n";
  }
  return os.str();
}

std::string scanFold(const ScanCode& c, const std::string& in) {
  return in + each(c, in) + "if (l >= lo && l < hi) acc0 = " + c.functor + "()(acc0, " + c.element + ");\n";
}

std::string scanTakeChunk(const std::string& tile, const std::string& in) {
  return in + "bx = polyred_dev::scan_take_chunk(&scan_tickets[" + tile + "]);  // this block's chunk of its rows\n";
}

std::string scanLookBack(const ScanCode& c, const std::string& tile, const std::string& in) {
  const std::string slots = std::to_string(c.rowsPerTile() * c.chunks), at = "(" + tile + ") * " + slots;
  std::ostringstream os;
  os << in << "acc0 = polyred_dev::scan_look_back<" << c.accType << ", " << c.functor << ", " << shapeArgs(c) << ", "
     << (c.alongX ? "true" : "false") << ">(acc0, " << c.functor << "(), " << c.identity << ", bx, " << c.chunks
     << ", scan_flags + " << at << ", scan_aggregates + " << at << ", scan_prefixes + " << at
     << ", fold_smem, fold_totals);\n"
     << in << "polyred_dev::scan_arrive<" << c.BX * c.BY << ">(&scan_tickets[" << c.tiles << " + " << tile
     << "], &scan_tickets[" << tile << "], scan_flags + " << at << ", " << slots << ", " << c.chunks << "u);\n";
  return os.str();
}

std::string scanFoldLanes(const ScanCode& c, LaneValuesSite site) {
  std::ostringstream os;
  site.evaluated = site.kernel.plan.valuesBeforeScan(site.instance.pass);
  emitLaneValues(os, site);
  os << scanFold(c, site.indent + "  ");
  return os.str();
}

std::string scanStepLanes(const ScanCode& c, LaneValuesSite site) {
  const KernelPlan& p = site.kernel.plan;
  std::ostringstream os;
  site.evaluated = p.valuesBeforeScan(site.instance.pass);
  site.firstOffset = emitLaneValues(os, site);
  os << scanStep(c, site.indent + "  ");
  site.evaluated = p.valuesAfterScan(site.instance.pass);
  site.scanned = "o0";
  size_t offset = emitLaneValues(os, site);
  const Vectorization& lanes = site.kernel.vector;
  const size_t offsetsPerStore = lanes.width == 1 || lanes.strided ? static_cast<size_t>(lanes.width) : 1;
  for (const ElementwiseOutput& s : p.stores) {
    std::vector<std::string> at;
    for (size_t l = 0; l < offsetsPerStore; ++l) at.push_back(toC(site.instance.offsets.at(offset++)));
    os << scanStore(c, storePointer(s), "v" + std::to_string(s.value), at, site.vectorOk, site.indent + "  ");
  }
  return os.str();
}

}  // namespace polyred
