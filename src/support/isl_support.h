// Small RAII helpers around isl's C API (Debian libisl-dev 0.25).
#pragma once

#include <isl/aff.h>
#include <isl/ctx.h>
#include <isl/options.h>
#include <isl/set.h>

#include <cctype>
#include <memory>
#include <string>

#include "support/error.h"

namespace polyred {

// Owns an isl_ctx; every isl object made in it must be freed before it is.
class IslContext {
 public:
  IslContext() : ctx_(isl_ctx_alloc()) { isl_options_set_on_error(ctx_, ISL_ON_ERROR_WARN); }
  ~IslContext() { isl_ctx_free(ctx_); }
  IslContext(const IslContext&) = delete;
  IslContext& operator=(const IslContext&) = delete;
  isl_ctx* get() const { return ctx_; }

 private:
  isl_ctx* ctx_;
};

// unique_ptr for an isl object type with its free function.
template <class T, auto Free>
struct IslDeleter {
  void operator()(T* p) const { Free(p); }
};
template <class T, auto Free>
using IslPtr = std::unique_ptr<T, IslDeleter<T, Free>>;

// Takes ownership of a string isl returned with malloc.
inline std::string takeIslString(char* s) {
  std::string r = s ? s : "";
  free(s);
  return r;
}

// Whether two piecewise quasi-affine functions (isl text, same domain) agree at every
// point: the set where they differ is empty. Exact, not a sampling.
inline bool islSameFunction(isl_ctx* ctx, const std::string& a, const std::string& b) {
  isl_pw_aff* fa = isl_pw_aff_read_from_str(ctx, a.c_str());
  isl_pw_aff* fb = isl_pw_aff_read_from_str(ctx, b.c_str());
  POLYRED_CHECK(fa && fb, "isl could not parse " << a << " or " << b);
  isl_set* differ = isl_pw_aff_ne_set(fa, fb);
  bool same = isl_set_is_empty(differ) == isl_bool_true;
  isl_set_free(differ);
  return same;
}

// Whether two quasi-affine offsets over i < M, j < N are the same point everywhere
// (decided exactly by isl: the set where they differ is empty).
inline bool isSamePoint(const std::string& a, const std::string& b, int64_t M, int64_t N) {
  IslContext ctx;
  std::string dom = " : 0 <= i < " + std::to_string(M) + " and 0 <= j < " + std::to_string(N) + " }";
  return islSameFunction(ctx.get(), "{ [i, j] -> [(" + a + ")]" + dom, "{ [i, j] -> [(" + b + ")]" + dom);
}

// Whether expr[k] is the one-letter variable `var` (isl text), not part of a longer name.
inline bool islVariableAt(const std::string& expr, size_t k, char var) {
  auto nameChar = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  return expr[k] == var && (k == 0 || !nameChar(expr[k - 1])) && (k + 1 == expr.size() || !nameChar(expr[k + 1]));
}

// `expr` (isl text) with every occurrence of the variable `var` replaced by `with`.
inline std::string islSubstitute(const std::string& expr, char var, const std::string& with) {
  std::string out;
  for (size_t k = 0; k < expr.size(); ++k) out += islVariableAt(expr, k, var) ? "(" + with + ")" : std::string(1, expr[k]);
  return out;
}

// Whether `expr` (isl text) names the variable `var`.
inline bool islNamesVariable(const std::string& expr, char var) {
  for (size_t k = 0; k < expr.size(); ++k)
    if (islVariableAt(expr, k, var)) return true;
  return false;
}

// Whether the set (isl text) has no point.
inline bool islSetIsEmpty(isl_ctx* ctx, const std::string& text) {
  isl_set* set = isl_set_read_from_str(ctx, text.c_str());
  POLYRED_CHECK(set, "isl could not parse " << text);
  bool empty = isl_set_is_empty(set) == isl_bool_true;
  isl_set_free(set);
  return empty;
}

}  // namespace polyred
