// Small RAII helpers around isl's C API (Debian libisl-dev 0.25).
#pragma once

#include <isl/ctx.h>
#include <isl/options.h>

#include <memory>
#include <string>

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

}  // namespace polyred
