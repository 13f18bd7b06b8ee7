// Cache hints: which accesses of a kernel tell the L2 to evict their lines first.
//
// Takes: a KernelPlan and the KernelConfig's `evict` knob. Gives: per body value,
// whether its load in the kernel's last pass is the last read of those bytes (the
// access is one-to-one over the iteration space, decided exactly with isl: no other
// point reads the element, so nothing reads it after this pass), and whether the last
// pass's stores stream (the kernel never reads its outputs). Codegen emits those loads
// with an L2 evict-first cache policy or as ld.global.cs, and those stores as
// st.global.cs (the device library's pr_load_lanes / pr_store_lanes with their hint
// argument), which leaves the L2 to what is read again: in a row-resident kernel, the
// rows its later passes re-read.
// Policy (auto): hints in kernels of several passes only; single-pass kernels read and
// write every byte once and keep plain accesses. The last loads go as ld.global.cs where
// the last pass also stores (softmax), with the L2 evict-first policy where it does not
// (logsumexp, cross-entropy): each measured faster there (cache_hints.cc).
// `evict=on` hints every kernel, loads with the policy; `evict=stream` every kernel,
// loads as ld.global.cs; `evict=off` none.
#pragma once

#include <string>
#include <vector>

#include "canon/kernel_plan.h"
#include "poly/kernel_config.h"

namespace polyred {

struct CacheHints {
  std::vector<bool> lastUse;  // per plan.body value: its last-pass load evicts first
  bool streamingLoads = false;  // those loads as ld.global.cs, not with the L2 policy
  bool streamingStores = false;

  bool any() const;
  // ", evict first: the last loads of x, y; the stores" (empty without hints), for --dump.
  std::string describe(const KernelPlan& plan) const;
};

CacheHints chooseCacheHints(const KernelPlan& plan, CacheHintMode mode);

}  // namespace polyred
