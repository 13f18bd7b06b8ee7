// LoopAst: the loop program of one kernel, converted from isl's AST.
//
// isl generates the loops (poly/ast_gen.cc); this plain C++ copy is what the CUDA
// emitter prints and the CPU executor runs, so both read exactly the same index
// arithmetic. Expressions are isl's: integer literals, identifiers (loop iterators and
// the binding parameters bx, by, tx, ty), arithmetic, floor/exact divisions,
// remainders, min/max, comparisons, boolean connectives and select.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace polyred {

struct AstExpr {
  enum class Op : uint8_t {
    Int, Id,
    Add, Sub, Mul, Minus,
    Div,      // exact division
    FloorDiv, // floor(a / b), any signs
    PDivQ,    // a / b with a >= 0, b > 0
    PDivR,    // a % b with a >= 0, b > 0
    ZDivR,    // C remainder (sign of a); isl uses it only in "== 0" tests
    Min, Max,
    Eq, Le, Lt, Ge, Gt,
    And, Or,
    Select,   // a ? b : c
  };
  Op op = Op::Int;
  int64_t value = 0;  // Int
  std::string name;   // Id
  std::vector<AstExpr> args;
};

// A statement instance: which statement, and the index expressions it needs (the
// statement's domain coordinates followed by the load offsets of its body).
struct AstUser {
  std::string statement;  // "Red", "Apply", "Init", "BlockReduce", "Store", ... (no pass suffix)
  int pass = 0;           // from isl's name: "Red_1" is statement "Red", pass 1
  std::vector<AstExpr> coords;
  std::vector<AstExpr> offsets;
};

struct AstNode {
  enum class Kind : uint8_t { For, If, Block, User, Mark };
  Kind kind = Kind::Block;
  // For: for (iterator = init; cond; iterator += inc) body
  std::string iterator;
  AstExpr init, cond, inc;
  // If: if (cond) then else (elseBranch may be null)
  // Block: children; For/If/Mark: children[0] is the body (If: children[1] = else)
  std::vector<std::unique_ptr<AstNode>> children;
  AstUser user;
  std::string mark;
};

std::string toC(const AstExpr& e);  // C syntax, using polyred_floord for FloorDiv, pr_neg for a negated min/max operand

// Whether mark node `n` heads the loops of one pass's point statements (Red under
// "reduction", Apply and Elem under "pointwise"): the loops the emitter unrolls and
// where the row cache restarts its slot count.
bool isPassLoopMark(const AstNode& n);

}  // namespace polyred
