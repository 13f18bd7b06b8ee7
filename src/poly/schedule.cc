#include "poly/schedule.h"

#include <algorithm>

#include <isl/aff.h>
#include <isl/id.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_set.h>

#include "support/error.h"

namespace polyred {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

bool isReduction(const KernelPlan& p) { return p.form != CanonicalForm::Elementwise; }

// Statement names and the domain dimension each statement ranges over. `pass`
// numbers the point statements of a row-resident kernel and their block reductions.
struct Stmt {
  std::string name;
  enum class Dims { Tile, Row, Point } dims;
  int pass = 0;
};

// Whether anything is stored once per row (a row-resident kernel may store only
// points).
bool storesPerRow(const KernelPlan& p) {
  return !p.epilogueStores.empty() || std::any_of(p.reductions.begin(), p.reductions.end(), [](const ReductionOutput& r) {
           return r.output >= 0 || r.temporary >= 0;
         });
}

// The isl name of a pass's statement: "Red", "Red_1", "BlockReduce_1", "Apply_2".
std::string passName(const std::string& base, int pass) {
  return pass == 0 ? base : base + "_" + std::to_string(pass);
}

// A scan: Init (the carry; a multi-block scan also takes its chunk of the row), the
// scan step over the tiles (Red), which stores every point. Rows over several blocks
// first fold their chunk (Fold) and find the carry into it (LookBack).
std::vector<Stmt> scanStatementsOf(const Binding& b) {
  std::vector<Stmt> s = {{"Init", Stmt::Dims::Tile}};
  if (b.multiBlockScan()) {
    s.push_back({"Fold", Stmt::Dims::Point});
    s.push_back({"LookBack", Stmt::Dims::Tile});
  }
  s.push_back({"Red", Stmt::Dims::Point});
  return s;
}

std::vector<Stmt> statementsOf(const KernelPlan& p, const Binding& b) {
  if (!isReduction(p)) return {{"Elem", Stmt::Dims::Row}};
  if (p.hasScan()) return scanStatementsOf(b);
  std::vector<Stmt> s = {{"Init", Stmt::Dims::Tile}};
  for (int pass = 0; pass < p.passes(); ++pass) {
    bool reduces = p.hasStage(pass);
    s.push_back({passName(reduces ? "Red" : "Apply", pass), Stmt::Dims::Point, pass});
    if (reduces) s.push_back({passName("BlockReduce", pass), Stmt::Dims::Tile, pass});
  }
  if (b.multiBlock()) {
    s.push_back({"Contribute", Stmt::Dims::Row});
    s.push_back({"Arrive", Stmt::Dims::Tile});
    s.push_back({"Final", Stmt::Dims::Row});
  } else if (storesPerRow(p)) {
    s.push_back({"Store", Stmt::Dims::Row});
  }
  return s;
}

std::string tuple(const Stmt& s) {
  switch (s.dims) {
    case Stmt::Dims::Tile: return s.name + "[t]";
    case Stmt::Dims::Row: return s.name + "[i]";
    case Stmt::Dims::Point: return s.name + "[i, j]";
  }
  return "";
}

// With vector lanes, the lane axis (i of Elem and of a y-reduce, j of an x/all-reduce)
// counts vectors in every statement.
// With masked lanes (vectorize.h) row i has its own count of vectors along j.
// A scan's points fill whole tiles: every thread of a block runs every tile, the block
// scan of each being a barrier; codegen masks the points outside the rows.
std::string paddedScanPoints(const Stmt& s, const KernelPlan& p, const Binding& b, const Vectorization& vec) {
  const bool y = p.form == CanonicalForm::YReduce;
  const int64_t rows = b.tiles * (y ? b.BX : b.BY), along = y ? b.BY : b.BX;
  const int64_t j = vec.axis == 'j' ? vec.vectorsAlong(p.N) : p.N;
  const int64_t padded = b.multiBlockScan() ? b.GX * b.scanChunk * along : (j + along - 1) / along * along;
  return tuple(s) + " : 0 <= i < " + str(rows) + " and 0 <= j < " + str(padded);
}

// The bounds of i: a symbolic kernel's rows are the isl parameter size_<symbol>
// (times its coefficient), never vector lanes.
std::string rowBounds(const KernelPlan& p, const Vectorization& vec) {
  if (!p.symbolicRows) return vec.axisBounds('i', p.M);
  POLYRED_CHECK(vec.axis != 'i' || vec.width == 1, "vector lanes along symbolic rows");
  return "0 <= i < " + p.symbolicRows->extent();
}

// The i-tiles: ceil(M / rows per tile) of them.
std::string tileBounds(const KernelPlan& p, const Binding& b) {
  if (!p.symbolicRows) return "0 <= t < " + str(b.tiles);
  const int64_t rowsPerTile = p.form == CanonicalForm::YReduce ? b.BX : b.BY;
  return "0 <= t and " + str(rowsPerTile) + "*t < " + p.symbolicRows->extent();
}

std::string domainOf(const Stmt& s, const KernelPlan& p, const Binding& b, const Vectorization& vec) {
  if (p.hasScan() && s.dims == Stmt::Dims::Point) return paddedScanPoints(s, p, b, vec);
  const std::string iBounds = rowBounds(p, vec), jBounds = vec.axisBounds('j', p.N);
  switch (s.dims) {
    case Stmt::Dims::Tile: return tuple(s) + " : " + tileBounds(p, b);
    case Stmt::Dims::Row: return tuple(s) + " : " + iBounds;
    case Stmt::Dims::Point: return tuple(s) + " : " + iBounds + " and " + jBounds;
  }
  return "";
}

// The binding constraints: which instances the thread (tx, ty) of block (bx, by) runs.
std::string bindingOf(const Stmt& s, const KernelPlan& p, const Binding& b) {
  bool y = p.form == CanonicalForm::YReduce;
  // i is split into tiles of `tile` elements; the position inside a tile is a thread id.
  std::string tile = str(y ? b.BX : b.BY), iThread = y ? "tx" : "ty";
  std::string jThreads = str(y ? b.BY : b.BX), jThread = y ? "ty" : "tx";
  std::string iBind = "i mod " + tile + " = " + iThread + " and floor(i/" + tile + ") mod " + str(b.GY) + " = by";
  if (!isReduction(p))
    return tuple(s) + " : i mod " + str(b.BX) + " = tx and floor(i/" + str(b.BX) + ") mod " + str(b.GX) + " = bx";
  switch (s.dims) {
    case Stmt::Dims::Tile: return tuple(s) + " : t mod " + str(b.GY) + " = by";
    case Stmt::Dims::Row: return tuple(s) + " : " + iBind + " and " + jThread + " = 0";
    case Stmt::Dims::Point:
      // A multi-block scan: block bx owns tiles [bx * scanChunk, (bx + 1) * scanChunk).
      if (b.multiBlockScan())
        return tuple(s) + " : " + iBind + " and j mod " + jThreads + " = " + jThread + " and floor(j/" +
               str(b.scanChunk * (y ? b.BY : b.BX)) + ") = bx";
      // Ordered: thread g = bx * jThreads + jThread owns the chunk [g * chunk, (g + 1) * chunk).
      if (b.chunk > 0)
        return tuple(s) + " : " + iBind + " and floor(j/" + str(b.chunk) + ") = " + jThreads + "*bx + " + jThread;
      return tuple(s) + " : " + iBind + " and j mod " + jThreads + " = " + jThread + " and floor(j/" + jThreads +
             ") mod " + str(b.GX) + " = bx";
  }
  return "";
}

// The i-tile loop: t for tile statements, floor(i / tile) for the others.
std::string tileLoopOf(const Stmt& s, const KernelPlan& p, const Binding& b) {
  std::string tile = str(p.form == CanonicalForm::YReduce ? b.BX : b.BY);
  if (s.dims == Stmt::Dims::Tile) return tuple(s) + " -> [(t)]";
  return tuple(s) + " -> [(floor(i/" + tile + "))]";
}

// "{ piece(s1); piece(s2); ... }" over all statements.
std::string unionOf(const std::vector<Stmt>& stmts, auto&& piece) {
  std::string r = "{ ";
  for (size_t k = 0; k < stmts.size(); ++k) r += (k ? "; " : "") + piece(stmts[k]);
  return r + " }";
}

const char* kBindingParams = "[bx, by, tx, ty] -> ";

// Offsets of each statement that evaluates the body (Red, Apply, Elem): one per load it
// evaluates (per lane for a gather, lane 0 for contiguous and invariant loads of a
// vectorized kernel), then one per store it issues (per lane for strided lanes), then
// (masked lanes, scans) lane 0's position along the row.
StatementAccesses pointAccesses(const KernelPlan& p, const Vectorization& vec, const Stmt& stmt) {
  StatementAccesses acc{stmt.name, {}};
  std::string point = tuple(stmt);
  auto add = [&](const std::string& offset) { acc.offsets.push_back("{ " + point + " -> [(" + offset + ")] }"); };
  const bool fold = stmt.name == "Fold";  // a multi-block scan's fold of its chunk: the scan's input only
  const std::vector<bool> evaluated = fold ? p.valuesBeforeScan(stmt.pass) : p.valuesOfPass(stmt.pass);
  size_t load = 0;
  for (size_t v = 0; v < p.body.size(); ++v) {
    if (!p.body[v].hasOffset()) continue;
    const std::string& offset = p.body[v].offset;
    if (vec.width == 1) {
      if (evaluated[v]) add(offset);
    } else if (!evaluated[v]) {
      ++load;  // another pass's load
    } else if (vec.accesses[load++] == LaneAccess::Gather) {
      for (int lane = 0; lane < vec.width; ++lane) add(vec.laneOffset(offset, lane));
    } else {
      add(vec.laneOffset(offset, 0));
    }
  }
  for (const ElementwiseOutput& s : p.stores) {
    if (s.pass != stmt.pass || fold) continue;
    if (vec.width == 1) add(s.offset);
    else
      for (int lane = 0; lane < (vec.strided ? vec.width : 1); ++lane) add(vec.laneOffset(s.offset, lane));
  }
  // Where lane 0 lies along j (a scan masks by it the lanes outside its row).
  if (p.hasScan()) add(vec.axis == 'j' ? vec.lanePosition() : "j");
  else if (vec.masked()) add(vec.lanePosition());
  return acc;
}

std::vector<StatementAccesses> accessesOf(const KernelPlan& p, const std::vector<Stmt>& stmts, const Vectorization& vec) {
  std::vector<StatementAccesses> acc;
  for (const Stmt& s : stmts)
    if (s.dims == Stmt::Dims::Point || s.name == "Elem") acc.push_back(pointAccesses(p, vec, s));
  // Epilogue loads are read where the outputs are stored (Store, or Final): with
  // accumulator lanes, all the offsets of lane 0, then those of lane 1, ...
  for (const char* stmt : {"Store", "Final"}) {
    StatementAccesses e{stmt, {}};
    for (int lane = 0; lane < vec.accumulatorLanes; ++lane)
      for (const BodyValue& v : p.epilogue) {
        if (!v.hasOffset()) continue;
        std::string offset = vec.accumulatorLanes == 1 ? v.offset : vec.laneOffset(v.offset, lane);
        e.offsets.push_back(std::string("{ ") + stmt + "[i] -> [(" + offset + ")] }");
      }
    acc.push_back(std::move(e));
  }
  return acc;
}

}  // namespace

isl_union_set* readUnionSet(isl_ctx* ctx, const std::string& text) {
  isl_union_set* s = isl_union_set_read_from_str(ctx, text.c_str());
  POLYRED_CHECK(s, "isl could not parse " << text);
  return s;
}

isl_multi_union_pw_aff* readBand(isl_ctx* ctx, const std::string& text) {
  isl_multi_union_pw_aff* m = isl_multi_union_pw_aff_read_from_str(ctx, text.c_str());
  POLYRED_CHECK(m, "isl could not parse " << text);
  return m;
}

isl_schedule_node* addPassBand(isl_schedule_node* seq, int k, isl_ctx* ctx, const std::string& band,
                               const char* mark) {
  isl_schedule_node* leaf = isl_schedule_node_child(isl_schedule_node_child(seq, k), 0);
  leaf = isl_schedule_node_insert_partial_schedule(leaf, readBand(ctx, band));
  leaf = isl_schedule_node_insert_mark(leaf, isl_id_alloc(ctx, mark, nullptr));
  return isl_schedule_node_parent(isl_schedule_node_parent(leaf));  // mark -> filter -> sequence
}

// Where the grid-stride loop over j (stride `jStride` instances) runs a trip that
// differs between threads: the instances j below the returned bound are those every
// thread runs (its first extent / jStride iterations); 0 where all threads run the same
// trip, none is common to all, or the loop is not a single pass's plain grid stride.
int64_t commonIterationsEnd(const KernelPlan& p, const Binding& b, const Vectorization& vec, int64_t jStride) {
  if (p.passes() != 1 || p.hasScan() || b.chunk > 0 || b.multiBlockScan() || vec.masked()) return 0;
  const int64_t extent = vec.axis == 'j' ? vec.vectorsAlong(p.N) : p.N;
  if (extent % jStride == 0) return 0;
  return extent / jStride * jStride;
}

// addPassBand for a loop split at `commonEnd` (commonIterationsEnd): under the mark, a
// sequence of the instances below it (a loop of the same trip in every thread) and
// those above (its last iteration, which only some threads run). Unrolled, the first
// needs no remainder loop -- nvcc's remainder of `#pragma unroll` runs its instances
// one after another, each waiting for its own load.
isl_schedule_node* addSplitPassBand(isl_schedule_node* seq, int k, isl_ctx* ctx, const std::string& point,
                                    const std::string& band, int64_t commonEnd, const char* mark) {
  isl_schedule_node* node = isl_schedule_node_child(isl_schedule_node_child(seq, k), 0);
  isl_union_set_list* parts = isl_union_set_list_alloc(ctx, 2);
  parts = isl_union_set_list_add(parts, readUnionSet(ctx, "{ " + point + " : j < " + str(commonEnd) + " }"));
  parts = isl_union_set_list_add(parts, readUnionSet(ctx, "{ " + point + " : j >= " + str(commonEnd) + " }"));
  node = isl_schedule_node_insert_sequence(node, parts);
  for (int m = 0; m < 2; ++m) {
    node = isl_schedule_node_child(isl_schedule_node_child(node, m), 0);
    node = isl_schedule_node_insert_partial_schedule(node, readBand(ctx, band));
    node = isl_schedule_node_parent(isl_schedule_node_parent(node));  // band -> filter -> sequence
  }
  node = isl_schedule_node_insert_mark(node, isl_id_alloc(ctx, mark, nullptr));
  return isl_schedule_node_parent(isl_schedule_node_parent(node));  // mark -> filter -> sequence
}

// The thread and block coordinates' ranges, and a symbolic kernel's rows (at least one:
// the runtime launches nothing for none).
isl_schedule_node* insertBindingContext(isl_schedule_node* node, isl_ctx* ctx, const KernelPlan& p, const Binding& b) {
  const std::string size = p.symbolicRows ? ", " + p.symbolicRows->param() : "";
  const std::string rows = p.symbolicRows ? " and " + p.symbolicRows->param() + " >= 1" : "";
  const std::string text = "[bx, by, tx, ty" + size + "] -> { [] : 0 <= bx < " + str(b.GX) + " and 0 <= by < " + str(b.GY) +
                           " and 0 <= tx < " + str(b.BX) + " and 0 <= ty < " + str(b.BY) + rows + " }";
  isl_set* context = isl_set_read_from_str(ctx, text.c_str());
  POLYRED_CHECK(context, "bad context " << text);
  return isl_schedule_node_insert_context(node, context);
}

ScheduleResult buildSchedule(isl_ctx* ctx, const KernelPlan& p, const Binding& b, const Vectorization& vec) {
  std::vector<Stmt> stmts = statementsOf(p, b);
  std::string domain = (p.symbolicRows ? "[" + p.symbolicRows->param() + "] -> " : std::string()) + "{ ";
  for (size_t k = 0; k < stmts.size(); ++k) domain += (k ? "; " : "") + domainOf(stmts[k], p, b, vec);
  domain += " }";

  isl_schedule* sched = isl_schedule_from_domain(readUnionSet(ctx, domain));
  isl_schedule_node* node = isl_schedule_node_child(isl_schedule_get_root(sched), 0);
  isl_schedule_free(sched);

  bool y = p.form == CanonicalForm::YReduce;
  if (isReduction(p)) {
    // Tile loop over i, then the statements in sequence.
    node = isl_schedule_node_insert_partial_schedule(
        node, readBand(ctx, "[" + unionOf(stmts, [&](const Stmt& s) { return tileLoopOf(s, p, b); }) + "]"));
    node = isl_schedule_node_child(node, 0);
    isl_union_set_list* filters = isl_union_set_list_alloc(ctx, static_cast<int>(stmts.size()));
    for (const Stmt& s : stmts)
      filters = isl_union_set_list_add(filters, readUnionSet(ctx, "{ " + tuple(s) + " }"));
    node = isl_schedule_node_insert_sequence(node, filters);
    // The loop over j: grid strides (interleaved), or the thread's chunk in order.
    // (A multi-block scan's block walks its own chunk of tiles.)
    int64_t jStride = (y ? b.BY : b.BX) * (b.multiBlockScan() ? 1 : b.GX);
    std::string jLoop = b.chunk > 0 ? "j" : "floor(j/" + str(jStride) + ")";
    const int64_t commonEnd = commonIterationsEnd(p, b, vec, jStride);
    POLYRED_CHECK(b.chunk == 0 || vec.width == 1, "vector lanes with contiguous chunks per thread");
    for (size_t k = 0; k < stmts.size(); ++k) {
      if (stmts[k].dims != Stmt::Dims::Point) continue;
      const char* mark = p.hasStage(stmts[k].pass) ? "reduction" : "pointwise";
      const std::string band = "[{ " + tuple(stmts[k]) + " -> [(" + jLoop + ")] }]";
      node = commonEnd > 0 && p.hasStage(stmts[k].pass)
                 ? addSplitPassBand(node, static_cast<int>(k), ctx, tuple(stmts[k]), band, commonEnd, mark)
                 : addPassBand(node, static_cast<int>(k), ctx, band, mark);
    }
    node = isl_schedule_node_parent(node);  // the tile band
  } else {
    node = isl_schedule_node_insert_partial_schedule(
        node, readBand(ctx, "[{ Elem[i] -> [(floor(i/" + str(int64_t{b.BX} * b.GX) + "))] }]"));
    node = isl_schedule_node_insert_mark(node, isl_id_alloc(ctx, "pointwise", nullptr));
  }
  node = isl_schedule_node_insert_mark(node, isl_id_alloc(ctx, "kernel", nullptr));
  std::string binding = unionOf(stmts, [&](const Stmt& s) { return bindingOf(s, p, b); });
  node = isl_schedule_node_insert_filter(node, readUnionSet(ctx, kBindingParams + binding));
  node = insertBindingContext(node, ctx, p, b);

  ScheduleResult r;
  r.schedule = isl_schedule_node_get_schedule(node);
  isl_schedule_node_free(node);
  POLYRED_CHECK(r.schedule, "isl failed to build the schedule tree");
  r.accesses = accessesOf(p, stmts, vec);
  return r;
}

}  // namespace polyred
