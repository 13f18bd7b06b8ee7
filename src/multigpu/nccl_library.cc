// Loads libnccl.so.2 with dlopen and resolves nccl_library.h's entry points.
#include "multigpu/nccl_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "support/error.h"

namespace polyred::multigpu {
namespace {

struct Loaded {
  Nccl api;
  std::string whyUnusable;
};

Loaded load() {
  Loaded l;
  const char* custom = std::getenv("POLYRED_NCCL_LIBRARY");
  std::string file = custom && *custom ? custom : "libnccl.so.2";
  void* library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    l.whyUnusable = "NCCL could not be loaded (" + file + ": " + (why ? why : "unknown reason") +
                    "); install NCCL (libnccl2) or put libnccl.so.2 on LD_LIBRARY_PATH";
    return l;
  }
#define POLYRED_NCCL_RESOLVE(fn)                                                       \
  l.api.fn = reinterpret_cast<decltype(l.api.fn)>(dlsym(library, #fn));                \
  if (l.api.fn == nullptr) {                                                           \
    l.whyUnusable = file + " lacks " #fn ": NCCL is too old (polyred needs NCCL 2.12+)"; \
    return l;                                                                          \
  }
  POLYRED_NCCL_FUNCTIONS(POLYRED_NCCL_RESOLVE)
#undef POLYRED_NCCL_RESOLVE
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const Nccl& nccl() {
  const Loaded& l = loaded();
  if (!l.whyUnusable.empty()) throw NoGpuError(l.whyUnusable);
  return l.api;
}

bool ncclAvailable(std::string* whyNot) {
  const Loaded& l = loaded();
  if (whyNot) *whyNot = l.whyUnusable;
  return l.whyUnusable.empty();
}

std::string ncclVersionText() {
  int v = 0;
  ncclCheck(nccl().ncclGetVersion(&v), "ncclGetVersion");
  // NCCL_VERSION(X,Y,Z): X*10000 + Y*100 + Z since 2.9.
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

void ncclCheck(ncclResult_t r, std::string_view call) {
  if (r == ncclSuccess) return;
  const Nccl& api = nccl();
  std::string why = api.ncclGetErrorString(r);
  if (const char* last = api.ncclGetLastError(nullptr); last && *last) why += ": " + std::string(last);
  throw Error(std::string(call) + " failed: " + why);
}

ncclDataType_t ncclTypeOf(DType t) {
  switch (t) {
    case DType::Int8: return ncclInt8;
    case DType::UInt8: return ncclUint8;
    case DType::UInt32: return ncclUint32;
    case DType::UInt64: return ncclUint64;
    case DType::Int32: return ncclInt32;
    case DType::Int64: return ncclInt64;
    case DType::Float16: return ncclFloat16;
    case DType::BFloat16: return ncclBfloat16;
    case DType::Float32: return ncclFloat32;
    case DType::Float64: return ncclFloat64;
    case DType::Bool: case DType::Complex64: case DType::UInt16: break;  // (shard/collective_choice.cc: ncclHasType)
  }
  POLYRED_CHECK(false, "NCCL has no type for " << dtypeName(t));
  return ncclInt8;
}

ncclRedOp_t ncclOpOf(BuiltinCombiner c) {
  switch (c) {
    case BuiltinCombiner::Sum: return ncclSum;
    case BuiltinCombiner::Prod: return ncclProd;
    case BuiltinCombiner::Max: return ncclMax;
    case BuiltinCombiner::Min: return ncclMin;
    default: break;
  }
  POLYRED_CHECK(false, "no NCCL op for this combiner");
  return ncclSum;
}

}  // namespace polyred::multigpu
