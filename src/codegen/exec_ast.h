// The isl-generated loop program prepared for running on the host.
//
// Takes: a LoopAst (poly/loop_ast.h). Gives: the same tree with every identifier (the
// thread and block coordinates, the loop iterators) resolved to a variable slot, and
// eval(), which computes an expression over one thread's slots with isl's integer
// semantics (floor division, C division and remainder where isl proved the operands
// non-negative). The CPU executor (codegen/cpu_executor.h) runs kernels on it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "poly/loop_ast.h"

namespace polyred {

// An AstExpr with identifiers resolved to variable slots.
struct Expr {
  AstExpr::Op op = AstExpr::Op::Int;
  int64_t value = 0;
  int slot = -1;
  std::vector<Expr> args;
};

int64_t eval(const Expr& e, const int64_t* vars);

// A LoopAst node with its expressions resolved.
struct ExecNode {
  AstNode::Kind kind;
  int slot = -1;  // For: the iterator
  Expr init, cond, inc;
  std::vector<ExecNode> children;
  std::string statement;
  int pass = 0;
  std::vector<Expr> coords, offsets;
};

// Slots bx, by, tx, ty come first, in that order; the iterators follow.
class Resolver {
 public:
  Resolver();
  int slotOf(const std::string& name);
  int count() const { return static_cast<int>(slots_.size()); }
  Expr resolve(const AstExpr& e);
  ExecNode resolve(const AstNode& n);

 private:
  std::map<std::string, int> slots_;
};

}  // namespace polyred
