#include "poly/row_access.h"

#include <isl/aff.h>
#include <isl/ast_build.h>
#include <isl/id.h>
#include <isl/set.h>

#include "poly/isl_ast_expr.h"
#include "support/isl_support.h"

namespace polyred {

namespace {

isl_pw_aff* readPwAff(isl_ctx* ctx, const std::string& text) {
  isl_pw_aff* a = isl_pw_aff_read_from_str(ctx, text.c_str());
  POLYRED_CHECK(a, "isl could not parse " << text);
  return a;
}

isl_multi_aff* readMultiAff(isl_ctx* ctx, const char* text) {
  isl_multi_aff* m = isl_multi_aff_read_from_str(ctx, text);
  POLYRED_CHECK(m, "isl could not parse " << text);
  return m;
}

}  // namespace

std::optional<AstExpr> contiguousRowBase(const std::string& offset, int64_t M, int64_t N) {
  IslContext ctx;
  const std::string points = " : 0 <= i < " + std::to_string(M) + " and 0 <= j < " + std::to_string(N) + " }";
  isl_pw_aff* access = readPwAff(ctx.get(), "{ [i, j] -> [(" + offset + ")]" + points);
  // base(i) = offset(i, 0); then offset(i, j) - base(i) - j must vanish everywhere.
  isl_pw_aff* base = isl_pw_aff_pullback_multi_aff(isl_pw_aff_copy(access), readMultiAff(ctx.get(), "{ [i] -> [i, 0] }"));
  isl_pw_aff* rebuilt = isl_pw_aff_add(
      isl_pw_aff_pullback_multi_aff(isl_pw_aff_copy(base), readMultiAff(ctx.get(), "{ [i, j] -> [i] }")),
      readPwAff(ctx.get(), "{ [i, j] -> [(j)]" + points));
  isl_set* differ = isl_pw_aff_ne_set(access, rebuilt);
  const bool contiguous = differ && isl_set_is_empty(differ) == isl_bool_true;
  isl_set_free(differ);
  if (!contiguous) {
    isl_pw_aff_free(base);
    return std::nullopt;
  }
  // base as an expression of a parameter named i, printed by isl's AST builder.
  base = isl_pw_aff_move_dims(base, isl_dim_param, 0, isl_dim_in, 0, 1);
  base = isl_pw_aff_set_dim_id(base, isl_dim_param, 0, isl_id_alloc(ctx.get(), "i", nullptr));
  base = isl_pw_aff_project_domain_on_params(base);
  isl_ast_build* build = isl_ast_build_from_context(isl_set_params(isl_pw_aff_domain(isl_pw_aff_copy(base))));
  isl_ast_expr* e = isl_ast_build_expr_from_pw_aff(build, base);
  isl_ast_build_free(build);
  POLYRED_CHECK(e, "isl could not print the row base of " << offset);
  return takeIslAstExpr(e);
}

}  // namespace polyred
