// AST generation: isl's AST from the schedule tree, converted to LoopAst.
//
// Takes: a KernelPlan and Binding. Gives: a PolyKernel whose `ast` holds the per-thread
// loop program. For every statement instance, isl also generates each load offset as
// an expression in the loop iterators and binding parameters (the offset pulled back
// through the inverse schedule, simplified in the build's context), so div/mod from
// formula (1) cancels wherever the layout allows.
#include <isl/aff.h>
#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/id.h>
#include <isl/map.h>
#include <isl/schedule.h>
#include <isl/union_map.h>
#include <isl/val.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <map>

#include "support/isl_support.h"
#include "poly/isl_ast_expr.h"
#include "poly/poly_kernel.h"
#include "poly/schedule.h"
#include "support/error.h"

namespace polyred {

namespace {

// Annotation attached to every user node: the statement's offsets as isl AST exprs.
struct UserAnnotation {
  std::vector<isl_ast_expr*> offsets;
  ~UserAnnotation() {
    for (isl_ast_expr* e : offsets) isl_ast_expr_free(e);
  }
};

struct BuildState {
  const std::vector<StatementAccesses>* accesses;
  bool failed = false;
};

void freeAnnotation(void* p) { delete static_cast<UserAnnotation*>(p); }

std::string statementName(isl_ast_node* node) {
  isl_ast_expr* call = isl_ast_node_user_get_expr(node);
  isl_ast_expr* fn = isl_ast_expr_op_get_arg(call, 0);
  isl_id* id = isl_ast_expr_get_id(fn);
  std::string name = isl_id_get_name(id);
  isl_id_free(id);
  isl_ast_expr_free(fn);
  isl_ast_expr_free(call);
  return name;
}

// isl callback: runs for each user node while the AST is generated.
isl_ast_node* annotateAccesses(isl_ast_node* node, isl_ast_build* build, void* user) {
  auto* state = static_cast<BuildState*>(user);
  std::string stmt = statementName(node);
  auto annotation = std::make_unique<UserAnnotation>();
  for (const StatementAccesses& sa : *state->accesses) {
    if (sa.statement != stmt) continue;
    isl_map* schedule = isl_map_from_union_map(isl_ast_build_get_schedule(build));
    isl_pw_multi_aff* iterators = isl_pw_multi_aff_from_map(isl_map_reverse(schedule));
    for (const std::string& text : sa.offsets) {
      isl_pw_aff* offset = isl_pw_aff_read_from_str(isl_ast_build_get_ctx(build), text.c_str());
      offset = isl_pw_aff_align_params(offset, isl_pw_multi_aff_get_space(iterators));
      offset = isl_pw_aff_pullback_pw_multi_aff(offset, isl_pw_multi_aff_copy(iterators));
      isl_ast_expr* e = offset ? isl_ast_build_expr_from_pw_aff(build, offset) : nullptr;
      if (!e) state->failed = true;
      annotation->offsets.push_back(e);
    }
    isl_pw_multi_aff_free(iterators);
  }
  isl_id* id = isl_id_alloc(isl_ast_node_get_ctx(node), stmt.c_str(), annotation.release());
  id = isl_id_set_free_user(id, freeAnnotation);
  return isl_ast_node_set_annotation(node, id);
}

AstExpr::Op convertOp(isl_ast_expr_op_type t) {
  using Op = AstExpr::Op;
  switch (t) {
    case isl_ast_expr_op_and:
    case isl_ast_expr_op_and_then: return Op::And;
    case isl_ast_expr_op_or:
    case isl_ast_expr_op_or_else: return Op::Or;
    case isl_ast_expr_op_max: return Op::Max;
    case isl_ast_expr_op_min: return Op::Min;
    case isl_ast_expr_op_minus: return Op::Minus;
    case isl_ast_expr_op_add: return Op::Add;
    case isl_ast_expr_op_sub: return Op::Sub;
    case isl_ast_expr_op_mul: return Op::Mul;
    case isl_ast_expr_op_div: return Op::Div;
    case isl_ast_expr_op_fdiv_q: return Op::FloorDiv;
    case isl_ast_expr_op_pdiv_q: return Op::PDivQ;
    case isl_ast_expr_op_pdiv_r: return Op::PDivR;
    case isl_ast_expr_op_zdiv_r: return Op::ZDivR;
    case isl_ast_expr_op_cond:
    case isl_ast_expr_op_select: return Op::Select;
    case isl_ast_expr_op_eq: return Op::Eq;
    case isl_ast_expr_op_le: return Op::Le;
    case isl_ast_expr_op_lt: return Op::Lt;
    case isl_ast_expr_op_ge: return Op::Ge;
    case isl_ast_expr_op_gt: return Op::Gt;
    default: POLYRED_CHECK(false, "unexpected isl AST operator " << t);
  }
}

AstExpr convertExpr(isl_ast_expr* e) {
  AstExpr r;
  switch (isl_ast_expr_get_type(e)) {
    case isl_ast_expr_int: {
      isl_val* v = isl_ast_expr_get_val(e);
      POLYRED_CHECK(isl_val_is_int(v), "non-integer literal in the AST");
      r.op = AstExpr::Op::Int;
      r.value = isl_val_get_num_si(v);
      isl_val_free(v);
      return r;
    }
    case isl_ast_expr_id: {
      isl_id* id = isl_ast_expr_get_id(e);
      r.op = AstExpr::Op::Id;
      r.name = isl_id_get_name(id);
      isl_id_free(id);
      return r;
    }
    case isl_ast_expr_op: {
      r.op = convertOp(isl_ast_expr_op_get_type(e));
      isl_size n = isl_ast_expr_op_get_n_arg(e);
      for (isl_size k = 0; k < n; ++k) {
        isl_ast_expr* a = isl_ast_expr_op_get_arg(e, k);
        r.args.push_back(convertExpr(a));
        isl_ast_expr_free(a);
      }
      return r;
    }
    default: POLYRED_CHECK(false, "bad isl AST expression");
  }
}

AstExpr takeExpr(isl_ast_expr* e) {
  AstExpr r = convertExpr(e);
  isl_ast_expr_free(e);
  return r;
}

std::unique_ptr<AstNode> convertNode(isl_ast_node* n);

std::unique_ptr<AstNode> takeNode(isl_ast_node* n) {
  auto r = convertNode(n);
  isl_ast_node_free(n);
  return r;
}

AstUser convertUser(isl_ast_node* n) {
  AstUser u;
  isl_ast_expr* call = isl_ast_node_user_get_expr(n);
  isl_size args = isl_ast_expr_op_get_n_arg(call);
  for (isl_size k = 1; k < args; ++k) u.coords.push_back(takeExpr(isl_ast_expr_op_get_arg(call, k)));
  isl_ast_expr_free(call);
  isl_id* id = isl_ast_node_get_annotation(n);
  POLYRED_CHECK(id, "user node without annotation");
  u.statement = isl_id_get_name(id);
  if (size_t sep = u.statement.rfind('_'); sep != std::string::npos) {
    u.pass = std::stoi(u.statement.substr(sep + 1));
    u.statement.resize(sep);
  }
  for (isl_ast_expr* e : static_cast<UserAnnotation*>(isl_id_get_user(id))->offsets)
    u.offsets.push_back(convertExpr(e));
  isl_id_free(id);
  return u;
}

std::unique_ptr<AstNode> convertNode(isl_ast_node* n) {
  auto r = std::make_unique<AstNode>();
  switch (isl_ast_node_get_type(n)) {
    case isl_ast_node_for: {
      r->kind = AstNode::Kind::For;
      AstExpr it = takeExpr(isl_ast_node_for_get_iterator(n));
      r->iterator = it.name;
      r->init = takeExpr(isl_ast_node_for_get_init(n));
      r->cond = takeExpr(isl_ast_node_for_get_cond(n));
      r->inc = takeExpr(isl_ast_node_for_get_inc(n));
      r->children.push_back(takeNode(isl_ast_node_for_get_body(n)));
      return r;
    }
    case isl_ast_node_if: {
      r->kind = AstNode::Kind::If;
      r->cond = takeExpr(isl_ast_node_if_get_cond(n));
      r->children.push_back(takeNode(isl_ast_node_if_get_then_node(n)));
      if (isl_ast_node_if_has_else_node(n) == isl_bool_true)
        r->children.push_back(takeNode(isl_ast_node_if_get_else_node(n)));
      return r;
    }
    case isl_ast_node_block: {
      r->kind = AstNode::Kind::Block;
      isl_ast_node_list* list = isl_ast_node_block_get_children(n);
      isl_size k = isl_ast_node_list_n_ast_node(list);
      for (isl_size c = 0; c < k; ++c) r->children.push_back(takeNode(isl_ast_node_list_get_ast_node(list, c)));
      isl_ast_node_list_free(list);
      return r;
    }
    case isl_ast_node_mark: {
      r->kind = AstNode::Kind::Mark;
      isl_id* id = isl_ast_node_mark_get_id(n);
      r->mark = isl_id_get_name(id);
      isl_id_free(id);
      r->children.push_back(takeNode(isl_ast_node_mark_get_node(n)));
      return r;
    }
    case isl_ast_node_user: {
      r->kind = AstNode::Kind::User;
      r->user = convertUser(n);
      return r;
    }
    default: POLYRED_CHECK(false, "bad isl AST node");
  }
}

// Interval analysis of the AST's index arithmetic: 32-bit indices are used only when
// no subexpression can leave the int32 range. The final offsets may fit while isl's
// simplified forms do not (a transpose gave "54257516544 * c0 - 150527 * (...)").
struct Interval {
  double lo, hi;  // doubles: exact for the magnitudes that matter (< 2^53)
};

class IndexRange {
 public:
  // `mostRows`: the most rows a symbolic kernel is launched for; at INT64_MAX its size
  // symbol is unbounded and every index that reads it needs 64 bits.
  IndexRange(const KernelPlan& p, const Binding& b, int64_t mostRows) {
    bounds_["bx"] = {0, static_cast<double>(b.GX - 1)};
    bounds_["by"] = {0, static_cast<double>(b.GY - 1)};
    bounds_["tx"] = {0, static_cast<double>(b.BX - 1)};
    bounds_["ty"] = {0, static_cast<double>(b.BY - 1)};
    // Every loop of these schedules counts tiles or strides of i or j.
    iterator_ = {0, static_cast<double>(std::max({p.M, p.N, b.tiles}))};
    if (p.symbolicRows && mostRows < std::numeric_limits<int64_t>::max()) {
      const double rows = static_cast<double>(mostRows);
      bounds_[p.symbolicRows->param()] = {0, std::floor(rows / static_cast<double>(p.symbolicRows->coefficient))};
      iterator_.hi = std::max(iterator_.hi, rows);
    }
  }

  bool fitsInt32(const AstNode& n) {
    if (n.kind == AstNode::Kind::For) bounds_[n.iterator] = iteratorRange(n);
    bool ok = true;
    auto check = [&](const AstExpr& e) { ok = ok && fits(eval(e)); };
    if (n.kind == AstNode::Kind::For) {
      check(n.init);
      check(n.inc);
    }
    if (n.kind == AstNode::Kind::For || n.kind == AstNode::Kind::If) check(n.cond);
    for (const AstExpr& e : n.user.coords) check(e);
    for (const AstExpr& e : n.user.offsets) check(e);
    for (const auto& c : n.children) ok = ok && fitsInt32(*c);
    return ok;
  }

 private:
  // [init, bound] when the condition is "c <= E" or "c < E" (isl's form), else the
  // loose range of any tile or stride counter.
  Interval iteratorRange(const AstNode& n) {
    bounds_[n.iterator] = iterator_;
    Interval r{eval(n.init).lo, iterator_.hi};
    const AstExpr& c = n.cond;
    bool upper = (c.op == AstExpr::Op::Le || c.op == AstExpr::Op::Lt) && c.args[0].op == AstExpr::Op::Id &&
                 c.args[0].name == n.iterator;
    if (upper) r.hi = std::min(r.hi, eval(c.args[1]).hi - (c.op == AstExpr::Op::Lt ? 1 : 0));
    return r;
  }

  static bool fits(const Interval& v) { return v.lo >= -2147483648.0 && v.hi <= 2147483647.0; }

  // The value range of e; sets overflow_ if a subexpression leaves int32.
  Interval eval(const AstExpr& e) {
    using Op = AstExpr::Op;
    std::vector<Interval> a;
    for (const AstExpr& x : e.args) {
      a.push_back(eval(x));
      if (!fits(a.back())) return a.back();
    }
    auto hull = [](std::initializer_list<double> v) { return Interval{std::min(v), std::max(v)}; };
    switch (e.op) {
      case Op::Int: return {static_cast<double>(e.value), static_cast<double>(e.value)};
      case Op::Id: return bounds_.count(e.name) ? bounds_.at(e.name) : Interval{-1e300, 1e300};
      case Op::Add: return {a[0].lo + a[1].lo, a[0].hi + a[1].hi};
      case Op::Sub: return {a[0].lo - a[1].hi, a[0].hi - a[1].lo};
      case Op::Mul: return hull({a[0].lo * a[1].lo, a[0].lo * a[1].hi, a[0].hi * a[1].lo, a[0].hi * a[1].hi});
      case Op::Minus: return {-a[0].hi, -a[0].lo};
      case Op::Div:
      case Op::PDivQ:
      case Op::FloorDiv: {
        if (a[1].lo <= 0 && a[1].hi >= 0) return {-1e300, 1e300};
        Interval q = hull({a[0].lo / a[1].lo, a[0].lo / a[1].hi, a[0].hi / a[1].lo, a[0].hi / a[1].hi});
        return {std::floor(q.lo), std::ceil(q.hi)};
      }
      case Op::PDivR:
      case Op::ZDivR: {
        double m = std::max(std::fabs(a[1].lo), std::fabs(a[1].hi)) - 1;
        return {e.op == Op::PDivR ? 0 : -m, m};
      }
      case Op::Min: return {std::min(a[0].lo, a[1].lo), std::min(a[0].hi, a[1].hi)};
      case Op::Max: return {std::max(a[0].lo, a[1].lo), std::max(a[0].hi, a[1].hi)};
      case Op::Select: return {std::min(a[1].lo, a[2].lo), std::max(a[1].hi, a[2].hi)};
      default: return {0, 1};  // comparisons and connectives
    }
  }

  std::map<std::string, Interval> bounds_;
  Interval iterator_{0, 0};
};

}  // namespace

AstExpr takeIslAstExpr(isl_ast_expr* e) { return takeExpr(e); }

PolyKernel buildPolyKernel(const KernelPlan& plan, const Binding& binding, const Vectorization& vector,
                           const TransposeTiling& tiling) {
  IslContext ctx;
  ScheduleResult sr = tiling.empty() ? buildSchedule(ctx.get(), plan, binding, vector)
                                     : buildTiledSchedule(ctx.get(), plan, binding, tiling, vector);
  PolyKernel k;
  k.plan = plan;
  k.binding = binding;
  k.vector = vector;
  k.tiling = tiling;
  k.scheduleTree = takeIslString(isl_schedule_to_str(sr.schedule));

  BuildState state{&sr.accesses};
  isl_ast_build* build = isl_ast_build_alloc(ctx.get());
  build = isl_ast_build_set_at_each_domain(build, annotateAccesses, &state);
  isl_ast_node* root = isl_ast_build_node_from_schedule(build, sr.schedule);
  isl_ast_build_free(build);
  POLYRED_CHECK(root && !state.failed, "isl AST generation failed for " << plan.name);
  k.islAst = takeIslString(isl_ast_node_to_C_str(root));
  k.ast = takeNode(root);
  k.index64 = !IndexRange(plan, binding, plan.symbolicRows ? plan.symbolicRows->mostRows : 0).fitsInt32(*k.ast);
  return k;
}

int64_t mostRowsWithInt32Indices(const PolyKernel& k) {
  POLYRED_CHECK(k.plan.symbolicRows, "mostRowsWithInt32Indices: " << k.plan.name << " is not a symbolic kernel");
  const SymbolicRows& rows = *k.plan.symbolicRows;
  auto fits = [&](int64_t most) { return IndexRange(k.plan, k.binding, most).fitsInt32(*k.ast); };
  int64_t lo = rows.fewestRows - 1, hi = std::min<int64_t>(rows.mostRows, INT32_MAX);
  if (fits(hi)) return hi;
  while (hi - lo > 1) {  // fits(lo) or lo below the range; not fits(hi): the interval bounds grow with the rows
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace polyred
