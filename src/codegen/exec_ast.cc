#include "codegen/exec_ast.h"

#include <algorithm>

namespace polyred {

namespace {

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}

}  // namespace

int64_t eval(const Expr& e, const int64_t* vars) {
  using Op = AstExpr::Op;
  auto a = [&](size_t k) { return eval(e.args[k], vars); };
  switch (e.op) {
    case Op::Int: return e.value;
    case Op::Id: return vars[e.slot];
    case Op::Add: return a(0) + a(1);
    case Op::Sub: return a(0) - a(1);
    case Op::Mul: return a(0) * a(1);
    case Op::Minus: return -a(0);
    case Op::Div:
    case Op::PDivQ: return a(0) / a(1);
    case Op::PDivR:
    case Op::ZDivR: return a(0) % a(1);
    case Op::FloorDiv: return floorDiv(a(0), a(1));
    case Op::Min: return std::min(a(0), a(1));
    case Op::Max: return std::max(a(0), a(1));
    case Op::Eq: return a(0) == a(1);
    case Op::Le: return a(0) <= a(1);
    case Op::Lt: return a(0) < a(1);
    case Op::Ge: return a(0) >= a(1);
    case Op::Gt: return a(0) > a(1);
    case Op::And: return a(0) && a(1);
    case Op::Or: return a(0) || a(1);
    case Op::Select: return a(0) ? a(1) : a(2);
  }
  return 0;
}

Resolver::Resolver() {
  for (const char* p : {"bx", "by", "tx", "ty"}) slotOf(p);
}

int Resolver::slotOf(const std::string& name) {
  auto [it, fresh] = slots_.emplace(name, static_cast<int>(slots_.size()));
  return it->second;
}

Expr Resolver::resolve(const AstExpr& e) {
  Expr r;
  r.op = e.op;
  r.value = e.value;
  if (e.op == AstExpr::Op::Id) r.slot = slotOf(e.name);
  for (const auto& a : e.args) r.args.push_back(resolve(a));
  return r;
}

ExecNode Resolver::resolve(const AstNode& n) {
  ExecNode r;
  r.kind = n.kind;
  if (n.kind == AstNode::Kind::For) {
    r.slot = slotOf(n.iterator);
    r.init = resolve(n.init);
    r.inc = resolve(n.inc);
  }
  if (n.kind == AstNode::Kind::For || n.kind == AstNode::Kind::If) r.cond = resolve(n.cond);
  for (const auto& c : n.children) r.children.push_back(resolve(*c));
  if (n.kind == AstNode::Kind::User) {
    r.statement = n.user.statement;
    r.pass = n.user.pass;
    for (const auto& c : n.user.coords) r.coords.push_back(resolve(c));
    for (const auto& o : n.user.offsets) r.offsets.push_back(resolve(o));
  }
  return r;
}

}  // namespace polyred
