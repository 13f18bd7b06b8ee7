// NCCL, loaded at run time with dlopen("libnccl.so.2") the way runtime/cuda_driver
// loads libcuda: polyred links no NCCL and starts where it is absent; only then does a
// multi-GPU call fail, with NoGpuError saying that libnccl.so.2 could not be loaded
// (and dlerror's reason). Only nccl.h's types and prototypes are used.
//
// Gives: nccl() (the entry points), ncclAvailable(), ncclCheck() (ncclResult_t ->
// polyred::Error naming the call and NCCL's message) and the mapping of polyred's
// dtypes and built-in combiners to NCCL's.
#pragma once

#include <nccl.h>

#include <string>
#include <string_view>

#include "ir/dtype.h"
#include "ir/reduction.h"

namespace polyred::multigpu {

// clang-format off
#define POLYRED_NCCL_FUNCTIONS(X) \
  X(ncclGetVersion) X(ncclGetUniqueId) X(ncclCommInitRank) X(ncclCommInitAll) X(ncclCommDestroy) \
  X(ncclCommCount) X(ncclCommUserRank) X(ncclGetErrorString) X(ncclGetLastError) X(ncclAllReduce) \
  X(ncclAllGather) X(ncclBroadcast) X(ncclGroupStart) X(ncclGroupEnd)
// clang-format on

struct Nccl {
#define POLYRED_NCCL_MEMBER(fn) decltype(&::fn) fn = nullptr;
  POLYRED_NCCL_FUNCTIONS(POLYRED_NCCL_MEMBER)
#undef POLYRED_NCCL_MEMBER
};

// The loaded library (once per process); throws NoGpuError with the reason when
// libnccl.so.2 is missing or lacks an entry point. $POLYRED_NCCL_LIBRARY names another
// file to load instead (tests, unusual installs).
const Nccl& nccl();
bool ncclAvailable(std::string* whyNot);
// "2.28.3" of the loaded library.
std::string ncclVersionText();

// Throws Error("`call` failed: NCCL's message") unless `r` is ncclSuccess.
void ncclCheck(ncclResult_t r, std::string_view call);

// NCCL's type for a polyred dtype (bool has none: throws InternalError).
ncclDataType_t ncclTypeOf(DType t);
// NCCL's op for sum/prod/max/min (others: InternalError).
ncclRedOp_t ncclOpOf(BuiltinCombiner c);

}  // namespace polyred::multigpu
