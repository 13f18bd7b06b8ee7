#include "poly/loop_ast.h"

#include "support/error.h"

namespace polyred {

namespace {
std::string binary(const AstExpr& e, const char* op) {
  return "(" + toC(e.args[0]) + " " + op + " " + toC(e.args[1]) + ")";
}
// An operand of isl's min or max. A negation there goes through pr_neg: ptxas of CUDA
// 13.0 drops a 32-bit negation that feeds two same-kind min or max
// (device/polyred_elementwise.cuh). Elsewhere it stays `-x`, which NVVM folds into
// the surrounding arithmetic (pr_neg everywhere cost logsumexp f16 13% on the H100:
// loop bounds it could no longer simplify).
std::string minMaxOperand(const AstExpr& e) {
  if (e.op == AstExpr::Op::Minus) return "pr_neg(" + toC(e.args[0]) + ")";
  return toC(e);
}
std::string call(const char* fn, const AstExpr& e, std::string (*operand)(const AstExpr&) = toC) {
  return std::string(fn) + "(" + operand(e.args[0]) + ", " + operand(e.args[1]) + ")";
}
}  // namespace

bool isPassLoopMark(const AstNode& n) {
  return n.kind == AstNode::Kind::Mark && (n.mark == "reduction" || n.mark == "pointwise");
}

std::string toC(const AstExpr& e) {
  using Op = AstExpr::Op;
  switch (e.op) {
    case Op::Int: return std::to_string(e.value);
    case Op::Id: return e.name;
    case Op::Add: return binary(e, "+");
    case Op::Sub: return binary(e, "-");
    case Op::Mul: return binary(e, "*");
    case Op::Minus: return "(-" + toC(e.args[0]) + ")";
    case Op::Div:
    case Op::PDivQ: return binary(e, "/");
    case Op::PDivR:
    case Op::ZDivR: return binary(e, "%");
    case Op::FloorDiv: return call("polyred_floord", e);
    case Op::Min: return call("polyred_min", e, minMaxOperand);
    case Op::Max: return call("polyred_max", e, minMaxOperand);
    case Op::Eq: return binary(e, "==");
    case Op::Le: return binary(e, "<=");
    case Op::Lt: return binary(e, "<");
    case Op::Ge: return binary(e, ">=");
    case Op::Gt: return binary(e, ">");
    case Op::And: return binary(e, "&&");
    case Op::Or: return binary(e, "||");
    case Op::Select: return "(" + toC(e.args[0]) + " ? " + toC(e.args[1]) + " : " + toC(e.args[2]) + ")";
  }
  POLYRED_CHECK(false, "bad AstExpr");
}

}  // namespace polyred
