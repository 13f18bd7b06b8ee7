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
// Policy (auto), each part measured on the H100 (cache_hints.cc, docs/results.md):
// - kernels of several passes: the last loads go as ld.global.cs where the last pass
//   also stores (softmax), with the L2 evict-first policy where it does not (logsumexp,
//   cross-entropy);
// - single-pass reductions that store nothing per point and read between a quarter of
//   the L2 and four times the L2: their loads as ld.global.cs (a 65 MB sum 13% faster).
//   Their lines then replace one another instead of the L2's dirty lines, whose
//   write-back would compete with the reads; smaller reads are launch-bound and larger
//   ones pay for the hint (268-537 MB x-reduces 2-5% slower);
// - every other single-pass kernel keeps plain accesses.
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

// reads: what the kernel loads (a load of a tensor that another kernel of the graph also
// loads never evicts first: that kernel may find it in the L2); l2Bytes: the target's
// L2 size.
CacheHints chooseCacheHints(const KernelPlan& plan, CacheHintMode mode, const KernelReads& reads, int64_t l2Bytes);

}  // namespace polyred
