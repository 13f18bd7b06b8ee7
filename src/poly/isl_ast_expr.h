// An isl AST expression as polyred's AstExpr (poly/ast_gen.cc converts every one).
#pragma once

#include <isl/ast.h>

#include "poly/loop_ast.h"

namespace polyred {

// Converts and frees `e`.
AstExpr takeIslAstExpr(isl_ast_expr* e);

}  // namespace polyred
