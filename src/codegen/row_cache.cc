#include "codegen/row_cache.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <sstream>

#include "codegen/exec_ast.h"
#include "codegen/loop_invariants.h"
#include "ir/dtype.h"
#include "ir/ops.h"
#include "support/int_math.h"

namespace polyred {

namespace {

struct Site {
  std::string path;  // the loops, guards and slot restarts from the root down to it
  const AstUser* user = nullptr;
};

// The Red/Apply statements of each pass in program order. `ok` is false when one sits
// outside a slot-restarting mark or one such mark holds statements of several passes:
// then slot numbers would not restart between passes.
struct Sites {
  std::map<int, std::vector<Site>> byPass;
  bool ok = true;
};

void collect(const AstNode& n, const std::string& path, std::vector<int>* markPasses, Sites& s) {
  switch (n.kind) {
    case AstNode::Kind::Block:
      for (const auto& c : n.children) collect(*c, path, markPasses, s);
      return;
    case AstNode::Kind::Mark: {
      if (!isPassLoopMark(n)) return collect(*n.children[0], path, markPasses, s);  // no slot restart
      // The path goes on from the root: the guards and tile loops above the mark must
      // match too (a pass may only read slots that pass 0 wrote in the same thread).
      std::vector<int> passes;
      collect(*n.children[0], path + "restart slots\n", &passes, s);
      for (int p : passes) s.ok = s.ok && p == passes.front();
      return;
    }
    case AstNode::Kind::For:
      collect(*n.children[0],
              path + "for " + n.iterator + " = " + toC(n.init) + "; " + toC(n.cond) + "; " + toC(n.inc) + "\n",
              markPasses, s);
      return;
    case AstNode::Kind::If:
      collect(*n.children[0], path + "if " + toC(n.cond) + "\n", markPasses, s);
      if (n.children.size() > 1) collect(*n.children[1], path + "else " + toC(n.cond) + "\n", markPasses, s);
      return;
    case AstNode::Kind::User:
      if (n.user.statement != "Red" && n.user.statement != "Apply") return;
      if (!markPasses) {
        s.ok = false;
        return;
      }
      markPasses->push_back(n.user.pass);
      s.byPass[n.user.pass].push_back({path, &n.user});
      return;
  }
}

// The load offsets (text) of body value `value` in statement instance `u`, whose pass
// evaluates `evaluated`, in the order the emitter consumes them (one for a scalar or
// contiguous load, V for a gather).
std::vector<std::string> loadOffsetsOf(const PolyKernel& k, const AstUser& u, const std::vector<bool>& evaluated,
                                       int value) {
  const KernelPlan& p = k.plan;
  const bool lanes = k.vector.width > 1;
  size_t access = 0, offset = 0;
  for (size_t v = 0; v < p.body.size(); ++v) {
    if (!p.body[v].hasOffset()) continue;
    const bool gather = lanes && k.vector.accesses.at(access) == LaneAccess::Gather;
    if (lanes) ++access;  // one per value with an offset, evaluated or not
    if (!evaluated[v]) continue;
    const size_t count = gather ? static_cast<size_t>(k.vector.width) : 1;
    if (static_cast<int>(v) == value) {
      std::vector<std::string> texts;
      for (size_t o = offset; o < offset + count; ++o) texts.push_back(toC(u.offsets.at(o)));
      return texts;
    }
    offset += count;
  }
  return {};
}

// Whether every statement of `pass` reads `value` where pass 0's statement at the same
// place in the program read it: same loops, same guards, same offsets. `evaluated`:
// the body values of each pass (KernelPlan::valuesOfPass).
bool readsLikePassZero(const PolyKernel& k, const Sites& sites, const std::vector<std::vector<bool>>& evaluated,
                       int pass, int value) {
  const auto first = sites.byPass.find(0), later = sites.byPass.find(pass);
  if (first == sites.byPass.end() || later == sites.byPass.end()) return false;
  if (first->second.size() != later->second.size()) return false;
  for (size_t s = 0; s < first->second.size(); ++s) {
    const Site &a = first->second[s], &b = later->second[s];
    if (a.path != b.path || loadOffsetsOf(k, *a.user, evaluated[0], value) !=
                                loadOffsetsOf(k, *b.user, evaluated[static_cast<size_t>(pass)], value))
      return false;
  }
  return true;
}

// Whether the statements of passes `a` and `b` sit under the same loops and guards, one
// for one.
bool sameSites(const Sites& sites, int a, int b) {
  const auto x = sites.byPass.find(a), y = sites.byPass.find(b);
  if (x == sites.byPass.end() || y == sites.byPass.end() || x->second.size() != y->second.size()) return false;
  for (size_t s = 0; s < x->second.size(); ++s)
    if (x->second[s].path != y->second[s].path) return false;
  return true;
}

// The results each later pass reads (the header's rule), pass by pass: per pass, the
// values it reads and the values it evaluates given them; per value, the pass keeping
// it (-1: none).
struct Results {
  std::vector<std::vector<bool>> readIn, evaluated;
  std::vector<int> keptIn;
  bool any() const { return std::any_of(keptIn.begin(), keptIn.end(), [](int p) { return p >= 0; }); }
};

// Per body value: whether computing it per element takes a division or a transcendental
// function (its own op or one it is computed from, not counting values of totals and
// constants, computed once: `ofTotals`), so that reading it back saves more than a few
// arithmetic instructions.
std::vector<bool> takesLongOps(const KernelPlan& p, const std::vector<bool>& ofTotals) {
  std::vector<bool> longOps(p.body.size(), false);
  for (size_t v = 0; v < p.body.size(); ++v) {  // operands come before their uses
    const BodyValue& b = p.body[v];
    if (b.kind != BodyValue::Kind::Op || ofTotals[v]) continue;
    switch (b.op) {
      case OpKind::Div: case OpKind::FloorDiv: case OpKind::FloorMod: case OpKind::Mod: case OpKind::Pow:
        longOps[v] = true;
        break;
      default: longOps[v] = isFloatMath(b.op);
    }
    for (int o : b.operands) longOps[v] = longOps[v] || longOps[static_cast<size_t>(o)];
  }
  return longOps;
}

Results planResults(const KernelPlan& p, const Sites& sites) {
  const size_t n = p.body.size();
  const std::vector<bool> ofTotals = valuesOfTotals(p), longOps = takesLongOps(p, ofTotals), everything(n, true);
  Results r{{}, {}, std::vector<int>(n, -1)};
  std::vector<int> firstIn(n, -1);  // the first pass evaluating each value: it computes it
  for (int pass = 0; pass < p.passes(); ++pass) {
    const std::vector<bool> all = p.valuesOfPass(pass);
    // What the pass reads first-hand: its folds' and stores' values (the roots, all that
    // is left with every value given) and the operands of values no earlier pass had.
    std::vector<bool> firstHand = p.valuesOfPass(pass, &everything), read(n, false);
    for (size_t u = 0; u < n; ++u)
      if (all[u] && firstIn[u] < 0)
        for (int o : p.body[u].operands) firstHand[static_cast<size_t>(o)] = true;
    for (size_t v = 0; v < n; ++v)
      read[v] = firstHand[v] && all[v] && firstIn[v] >= 0 && p.body[v].kind == BodyValue::Kind::Op && !ofTotals[v] &&
                longOps[v] && sameSites(sites, firstIn[v], pass);
    r.evaluated.push_back(p.valuesOfPass(pass, &read));
    for (size_t v = 0; v < n; ++v) {
      if (read[v]) r.keptIn[v] = firstIn[v];
      if (r.evaluated.back()[v] && firstIn[v] < 0) firstIn[v] = pass;
    }
    r.readIn.push_back(std::move(read));
  }
  return r;
}

// The point statements in `n`, or -1 if a loop sits there.
int statementsIn(const AstNode& n) {
  if (n.kind == AstNode::Kind::For) return -1;
  if (n.kind == AstNode::Kind::User) return 1;
  int count = 0;
  for (const auto& c : n.children) {
    const int inside = statementsIn(*c);
    if (inside < 0) return -1;
    count += inside;
  }
  return count;
}

// The names an AST expression reads (its Id leaves), in order.
void namesIn(const AstExpr& e, std::vector<std::string>& names) {
  if (e.op == AstExpr::Op::Id) names.push_back(e.name);
  for (const AstExpr& a : e.args) namesIn(a, names);
}
std::vector<std::string> namesIn(std::initializer_list<const AstExpr*> exprs) {
  std::vector<std::string> names;
  for (const AstExpr* e : exprs) namesIn(*e, names);
  return names;
}

// Whether every statement's slot is a constant once the pass loops are unrolled (the
// header's conditions), below the pass marks of the loop program `n`.
bool slotsAreConstantsOnceUnrolled(const AstNode& n, bool inPass = false) {
  auto children = [&](bool pass) {
    for (const auto& c : n.children)
      if (!slotsAreConstantsOnceUnrolled(*c, pass)) return false;
    return true;
  };
  switch (n.kind) {
    case AstNode::Kind::Mark: return children(inPass || isPassLoopMark(n));
    case AstNode::Kind::Block: return children(inPass);
    case AstNode::Kind::User: return true;
    case AstNode::Kind::For: {
      if (!inPass) return children(false);
      for (const std::string& name : namesIn({&n.init, &n.inc}))
        if (name != n.iterator) return false;  // a start or step by another name
      bool threadBound = false;  // ok around one statement: boundAsGuard
      for (const std::string& name : namesIn({&n.cond}))
        if (name != n.iterator) {
          if (name != "tx" && name != "ty") return false;
          threadBound = true;
        }
      return threadBound ? statementsIn(*n.children[0]) == 1 : children(true);
    }
    case AstNode::Kind::If:
      return inPass ? n.children.size() == 1 && statementsIn(*n.children[0]) == 1 : children(false);
  }
  return false;
}

}  // namespace

const RowCache::Region* RowCache::regionOf(int value) const {
  for (const Region& r : regions)
    if (r.value == value) return &r;
  return nullptr;
}

std::vector<bool> RowCache::valuesOfPass(const KernelPlan& plan, int pass) const {
  return evaluatedInPass.empty() ? plan.valuesOfPass(pass) : evaluatedInPass.at(static_cast<size_t>(pass));
}

std::string RowCache::resultKeep(int value, int pass, int width, const std::string& in) const {
  const Region* r = regionOf(value);
  if (!r || !r->result || r->keptInPass != pass) return "";
  const std::string v = std::to_string(value);
  return in + "pr_keep_lanes<" + std::to_string(width) + ">(v" + v + ", pr_register_slot(cache" + v +
         ", cache_slot));  // read again by a later pass\n";
}

std::string RowCache::resultRead(int value, int pass, int width) const {
  const Region* r = regionOf(value);
  if (!r || !r->result || !r->readInPass.at(static_cast<size_t>(pass))) return "";
  const std::string v = std::to_string(value);
  return "pr_kept_lanes<" + std::to_string(width) + ">(pr_register_slot(cache" + v + ", cache_slot), v" + v +
         ");  // as pass " + std::to_string(r->keptInPass) + " computed it\n";
}

std::string RowCache::describe() const {
  std::ostringstream os;
  const auto results = std::count_if(regions.begin(), regions.end(), [](const Region& r) { return r.result; });
  os << "row cache: " << regions.size() << " value(s)" << (results ? " (" + std::to_string(results) + " result(s))" : "")
     << " x " << slotsPerThread << " slot(s) per thread x " << threads << " threads, ";
  if (registers) os << "in registers";
  else os << bytes << " bytes of shared memory";
  return os.str();
}

std::string RowCache::declarations(int BX) const {
  std::ostringstream os;
  if (registers) {
    for (const Region& r : regions) os << "  " << r.packType << " cache" << r.value << "[" << slotsPerThread << "];\n";
    os << "  int cache_slot = 0;\n";
    return os.str();
  }
  os << "  extern __shared__ __align__(16) unsigned char pr_row_cache[];\n";
  for (const Region& r : regions)
    os << "  " << r.packType << "* const cache" << r.value << " = reinterpret_cast<" << r.packType
       << "*>(pr_row_cache + " << r.offset << ");\n";
  os << "  const int cache_thread = ty * " << BX << " + tx;\n  int cache_slot = 0;\n";
  return os.str();
}

std::string RowCache::loadKind(int value, int pass, std::string& slot) const {
  const Region* r = regionOf(value);
  if (!r || (pass > 0 && !r->readInPass[static_cast<size_t>(pass)])) return "";
  const std::string region = "cache" + std::to_string(value);
  slot = registers ? "pr_register_slot(" + region + ", cache_slot)"
                   : "pr_cache_slot(" + region + ", cache_slot, " + std::to_string(slotsPerThread) + ", " +
                         std::to_string(threads) + ", cache_thread)";
  return pass == 0 ? "_kept" : "_cached";
}

std::string RowCache::advanceAfterStatement(bool guarded, const std::string& in) const {
  return empty() || (registers && guarded) ? "" : in + "++cache_slot;\n";
}

std::string RowCache::advanceAfterGuard(const std::string& in) const {
  return registers ? in + "++cache_slot;  // the guarded statement's slot, taken or not\n" : "";
}

std::string RowCache::boundAsGuard(const AstNode& loop, int64_t BX, int64_t BY) const {
  if (!registers || loop.kind != AstNode::Kind::For) return "";
  const std::vector<std::string> names = namesIn({&loop.cond});
  if (std::none_of(names.begin(), names.end(), [](const std::string& n) { return n == "tx" || n == "ty"; })) return "";
  Resolver slots;
  const Expr init = slots.resolve(loop.init), inc = slots.resolve(loop.inc), cond = slots.resolve(loop.cond);
  const int at = slots.slotOf(loop.iterator), tx = slots.slotOf("tx"), ty = slots.slotOf("ty");
  std::vector<int64_t> vars(static_cast<size_t>(slots.count()), 0);
  int64_t last = -1;  // the largest iterator value any thread runs
  for (int64_t y = 0; y < BY; ++y)
    for (int64_t x = 0; x < BX; ++x) {
      vars[static_cast<size_t>(tx)] = x;
      vars[static_cast<size_t>(ty)] = y;
      for (vars[static_cast<size_t>(at)] = eval(init, vars.data()); eval(cond, vars.data());
           vars[static_cast<size_t>(at)] += eval(inc, vars.data()))
        last = std::max(last, vars[static_cast<size_t>(at)]);
    }
  return "(" + loop.iterator + " <= " + std::to_string(last) + ")";
}

std::string RowCache::passLoopUnroll(int factor) const { return registers ? "" : " " + std::to_string(factor); }

namespace {

// A region of `cache`'s slots for body value v, read in the passes `readIn` marks.
void addRegion(RowCache& cache, const PolyKernel& k, size_t v, std::vector<bool> readIn, bool result, int keptIn) {
  const BodyValue& b = k.plan.body[v];
  const int V = k.vector.width;
  RowCache::Region r;
  r.value = static_cast<int>(v);
  r.result = result;
  r.keptInPass = keptIn;
  r.readInPass = std::move(readIn);
  const std::string storage(cudaStorageType(b.dtype));
  r.packType = V > 1 ? "PrPack<" + std::to_string(V) + ", " + storage + ">" : storage;
  r.packBytes = V * dtypeBytes(b.dtype);
  if (!cache.registers) {
    r.offset = cache.bytes;
    cache.bytes += ceilDiv(r.packBytes * cache.slotsPerThread * cache.threads, 16) * 16;
  }
  cache.regions.push_back(std::move(r));
}

// The cache of the loads pass 0 keeps and the later passes read -- given `results`,
// only where they still evaluate them -- and of the results; empty if none or too big.
RowCache cacheOf(const PolyKernel& k, const Sites& sites, const Results* results, bool registers, int64_t sharedLimit) {
  const KernelPlan& p = k.plan;
  const int V = k.vector.width;
  const size_t passes = static_cast<size_t>(p.passes());
  RowCache cache;
  cache.registers = registers;
  cache.threads = k.binding.threadsPerBlock();
  // Thread tx takes instances tx, tx + BX, ... of its row (an ordered tuple: one chunk).
  const int64_t instances = V > 1 ? k.vector.vectorsAlong(p.N) : p.N;
  cache.slotsPerThread = std::max<int64_t>(ceilDiv(instances, k.binding.BX), k.binding.chunk);
  std::vector<std::vector<bool>> annotated;  // the values whose offsets each pass's statements list
  for (size_t pass = 0; pass < passes; ++pass) annotated.push_back(p.valuesOfPass(static_cast<int>(pass)));
  const std::vector<std::vector<bool>>& evaluated = results ? results->evaluated : annotated;
  size_t access = 0;
  for (size_t v = 0; v < p.body.size(); ++v) {
    const BodyValue& b = p.body[v];
    if (!b.hasOffset()) continue;
    const bool contiguous = V == 1 || k.vector.accesses.at(access++) == LaneAccess::Contiguous;
    if (b.kind != BodyValue::Kind::Load || b.gathers() || !annotated[0][v] || !contiguous) continue;
    std::vector<bool> readIn(passes, false);
    for (size_t pass = 1; pass < passes; ++pass)
      readIn[pass] = evaluated[pass][v] && readsLikePassZero(k, sites, annotated, static_cast<int>(pass), static_cast<int>(v));
    if (std::find(readIn.begin(), readIn.end(), true) != readIn.end()) addRegion(cache, k, v, std::move(readIn), false, 0);
  }
  if (results) {
    for (size_t v = 0; v < p.body.size(); ++v) {
      if (results->keptIn[v] < 0) continue;
      std::vector<bool> readIn(passes, false);
      for (size_t pass = 0; pass < passes; ++pass) readIn[pass] = results->readIn[pass][v];
      addRegion(cache, k, v, std::move(readIn), true, results->keptIn[v]);
    }
    cache.evaluatedInPass = results->evaluated;
  }
  int64_t threadBytes = 0;  // in registers
  for (const RowCache::Region& r : cache.regions) threadBytes += r.packBytes * cache.slotsPerThread;
  if (cache.empty() || cache.bytes > sharedLimit || (registers && threadBytes > kRegisterCacheBytes)) return {};
  return cache;
}

}  // namespace

RowCache planRowCache(const PolyKernel& k, int64_t sharedLimit, RowCacheMode mode) {
  const KernelPlan& p = k.plan;
  const bool rows = p.form == CanonicalForm::XReduce || p.form == CanonicalForm::AllReduce;
  const bool policy = mode == RowCacheMode::Auto && p.passes() >= kRegisterCachePasses;
  const bool registers = mode == RowCacheMode::Registers || policy;
  if ((mode != RowCacheMode::On && !registers) || p.passes() < 2 || !rows || !k.ast) return {};
  Sites sites;
  collect(*k.ast, "", nullptr, sites);
  if (!sites.ok || (registers && !slotsAreConstantsOnceUnrolled(*k.ast))) return {};

  if (registers && k.vector.width > 1) {
    const Results results = planResults(p, sites);
    if (results.any())
      if (RowCache cache = cacheOf(k, sites, &results, registers, sharedLimit); !cache.empty()) return cache;
  }
  return cacheOf(k, sites, nullptr, registers, sharedLimit);
}

}  // namespace polyred
