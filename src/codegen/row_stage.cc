#include "codegen/row_stage.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "codegen/cuda_expr.h"
#include "ir/dtype.h"
#include "poly/row_access.h"
#include "support/int_math.h"
#include "support/sm_occupancy.h"

namespace polyred {

namespace {

// One bulk copy (and its mbarrier) moves 2^kChunkShift bytes: pass 0 starts on a row's
// first chunk while the rest lands. Fewer, larger copies won on the H100 (2026-11-26,
// `polyred run`, us): softmax f16 [4096,50257] 312.2 / 307.6 / 307.5 with 16 / 32 /
// 64 KiB chunks, [4096,30522] 204.6 / 205.7 / 199.3; by hand, 4 KiB and 2 KiB chunks
// cost 323.5 and 344.7 where 16 KiB took 312.0.
constexpr int kChunkShift = 16;
constexpr int64_t kChunkBytes = int64_t{1} << kChunkShift;

const AstUser* firstPointUser(const AstNode& n) {
  if (n.kind == AstNode::Kind::User)
    return n.user.statement == "Red" || n.user.statement == "Apply" ? &n.user : nullptr;
  for (const auto& c : n.children)
    if (const AstUser* u = firstPointUser(*c)) return u;
  return nullptr;
}

void idsOf(const AstExpr& e, std::set<std::string>& ids) {
  if (e.op == AstExpr::Op::Id) ids.insert(e.name);
  for (const AstExpr& a : e.args) idsOf(a, ids);
}

// Whether e names only block indices and the iterators of loops around it.
bool blockUniform(const AstExpr& e, const std::set<std::string>& allowed) {
  std::set<std::string> ids;
  idsOf(e, ids);
  for (const std::string& id : ids)
    if (!allowed.count(id)) return false;
  return true;
}

// The first point statement under n if n is the mark of pass 0's loops, else null.
const AstUser* passZeroUser(const AstNode& n) {
  if (n.kind != AstNode::Kind::Mark || !isPassLoopMark(n)) return nullptr;
  const AstUser* u = firstPointUser(n);
  return u && u->pass == 0 && !u->coords.empty() ? u : nullptr;
}

// Counts the pass-0 marks under n and whether each is reached by every thread of the
// block with a block-uniform row index. `allowed`: bx, by and the enclosing iterators.
void checkMarks(const AstNode& n, std::set<std::string> allowed, bool uniform, int& marks, bool& ok) {
  switch (n.kind) {
    case AstNode::Kind::Mark:
      if (const AstUser* u = passZeroUser(n)) {
        ++marks;
        ok = ok && uniform && blockUniform(u->coords[0], allowed);
        return;
      }
      break;
    case AstNode::Kind::For:
      uniform = uniform && blockUniform(n.init, allowed);
      allowed.insert(n.iterator);
      uniform = uniform && blockUniform(n.cond, allowed) && blockUniform(n.inc, allowed);
      break;
    case AstNode::Kind::If: uniform = uniform && blockUniform(n.cond, allowed); break;
    default: break;
  }
  for (const auto& c : n.children) checkMarks(*c, allowed, uniform, marks, ok);
}

// A symbolic kernel's row count is its size parameter, the same in every thread.
bool rowUniformAtPassZero(const AstNode& root, const KernelPlan& p) {
  int marks = 0;
  bool ok = true;
  std::set<std::string> uniform = {"bx", "by"};
  if (p.symbolicRows) uniform.insert(p.symbolicRows->param());
  checkMarks(root, uniform, true, marks, ok);
  return ok && marks == 1;
}

// Per body value: how many passes read it.
std::vector<int> passesReading(const KernelPlan& p) {
  std::vector<int> n(p.body.size(), 0);
  for (int pass = 0; pass < p.passes(); ++pass) {
    const std::vector<bool> read = p.valuesOfPass(pass);
    for (size_t v = 0; v < n.size(); ++v) n[v] += read[v] ? 1 : 0;
  }
  return n;
}

}  // namespace

const RowStage::Region* RowStage::regionOf(int value) const {
  for (const Region& r : regions)
    if (r.value == value) return &r;
  return nullptr;
}

std::string RowStage::describe() const {
  std::ostringstream os;
  os << "row stage: " << regions.size() << " row buffer(s) filled by bulk copies, " << bytes
     << " bytes of shared memory";
  return os.str();
}

std::string RowStage::declarations() const {
  std::ostringstream os;
  os << "  extern __shared__ __align__(128) unsigned char pr_row_stage[];\n";
  for (const Region& r : regions)
    os << "  PrRowStage " << name(r) << " = pr_stage_init(pr_row_stage + " << r.offset
       << ", reinterpret_cast<unsigned long long*>(pr_row_stage + " << r.barrierOffset << "), " << r.chunks << ", "
       << kChunkShift << ");\n";
  return os.str();
}

std::string RowStage::fillRow(const std::string& row, const std::string& in) const {
  std::ostringstream os;
  os << in << "{  // stage this block's row (bulk copies, polyred_row_stage.cuh)\n"
     << in << "  const long long i = " << row << ";\n";
  for (const Region& r : regions)
    os << in << "  pr_stage_row(" << name(r) << ", " << r.pointer << ", (long long)" << toC(r.rowBase) << ", "
       << rowLength << "LL, (int)tx);\n";
  os << in << "}\n";
  return os.str();
}

std::string RowStage::waitAll(const std::string& in) const {
  std::string s;
  for (const Region& r : regions) s += in + "pr_stage_wait_all(" + name(r) + ");\n";
  return s;
}

std::string stagedRowAt(const AstNode& mark) {
  const AstUser* u = passZeroUser(mark);
  return u ? toC(u->coords[0]) : "";
}

RowStage planRowStage(const PolyKernel& k, int64_t sharedPerBlock, int64_t staticBytes, RowStageMode mode,
                      int ccMajor) {
  const KernelPlan& p = k.plan;
  const Binding& b = k.binding;
  if (mode == RowStageMode::Off || ccMajor < 9 || !k.ast) return {};
  if (p.form != CanonicalForm::XReduce || p.passes() < 2) return {};
  // One row per block, and threads for the head and tail loads (threads 0..15, 32..47).
  if (b.BY != 1 || b.GX != 1 || b.threadsPerBlock() < 64 || !rowUniformAtPassZero(*k.ast, p)) return {};
  // Auto: where the last pass stores (softmax's outputs), whose DRAM writes the other
  // block's copies run beside. A last pass that only reads re-reads the L2 faster than
  // it waits for chunks (H100: logsumexp f16 [8192,32000] 186.4 us unstaged, 198.7
  // staged; cross-entropy 231.8 vs 254.9).
  const bool lastPassStores = std::any_of(p.stores.begin(), p.stores.end(),
                                          [&](const ElementwiseOutput& s) { return s.pass == p.passes() - 1; });
  if (mode == RowStageMode::Auto && !lastPassStores) return {};
  const int V = k.vector.width;
  RowStage stage;
  stage.rowLength = p.N;
  const std::vector<int> readers = passesReading(p);
  size_t access = 0;
  for (size_t v = 0; v < p.body.size(); ++v) {
    const BodyValue& bv = p.body[v];
    if (!bv.hasOffset()) continue;
    const bool contiguous = V == 1 || k.vector.accesses.at(access++) == LaneAccess::Contiguous;
    if (bv.kind != BodyValue::Kind::Load || bv.gathers() || !contiguous || readers[v] < 2) continue;
    std::optional<AstExpr> base = contiguousRowBase(bv.offset, p.M, p.N);
    if (!base) continue;
    RowStage::Region r;
    r.value = static_cast<int>(v);
    r.pointer = loadPointer(bv);
    r.rowBase = std::move(*base);
    const int64_t rowBytes = p.N * dtypeBytes(bv.dtype);
    r.bytes = ceilDiv(rowBytes + 16, 128) * 128;  // + the alignment shift
    r.chunks = std::max<int64_t>(1, ceilDiv(rowBytes, kChunkBytes));
    r.offset = stage.bytes;
    stage.bytes += r.bytes;
    stage.regions.push_back(std::move(r));
  }
  for (RowStage::Region& r : stage.regions) {
    r.barrierOffset = stage.bytes;
    stage.bytes += 8 * r.chunks;
  }
  const int64_t sharedLimit = sharedPerBlock - staticBytes;
  const int64_t limit = mode == RowStageMode::On ? sharedLimit : sharedLimit / 2;
  if (stage.empty() || stage.bytes > limit) return {};
  // An SM has a block's limit plus the 1 KiB it reserves per block (sm_80, sm_90).
  stage.blocksPerSM = std::max(1, residentBlocksBySharedMemory(stage.bytes + staticBytes, b.threadsPerBlock(),
                                                               sharedPerBlock + kSharedBytesReservedPerBlock));
  return stage;
}

}  // namespace polyred
