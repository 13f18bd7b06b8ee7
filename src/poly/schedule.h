// Schedule-tree construction: fusion, tiling, hardware binding and marks (section 4).
//
// Takes: a KernelPlan and its Binding. Gives: an isl schedule tree
//   domain            all statement instances, no parameters
//   context           0 <= bx < GX, 0 <= by < GY, 0 <= tx < BX, 0 <= ty < BY
//   filter            the binding: which instances block (bx,by) / thread (tx,ty) runs
//                     (tile and point coordinates equated to block/thread ids, as PPCG)
//   mark "kernel"
//   band [t]          the i-tile loop (one iteration unless tiles > GY)
//   sequence          Init | mark "reduction" -> band [k] -> Red | BlockReduce | stores
// After binding, the only loops left per thread are the tile loop t and the
// accumulation loop k (grid-stride over j), which isl's AST generator emits.
#pragma once

#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/union_set.h>

#include <string>
#include <vector>

#include "canon/kernel_plan.h"
#include "poly/binding.h"
#include "poly/vectorize.h"

namespace polyred {

struct StatementAccesses {
  std::string statement;
  std::vector<std::string> offsets;  // isl pw_aff texts over the statement's domain
};

struct ScheduleResult {
  isl_schedule* schedule = nullptr;  // owned by the caller
  std::vector<StatementAccesses> accesses;
};

ScheduleResult buildSchedule(isl_ctx* ctx, const KernelPlan& plan, const Binding& binding,
                             const Vectorization& vector);

// Schedule-tree pieces from isl text, shared with poly/transpose_tiling (each throws
// InternalError on text isl cannot parse).
isl_union_set* readUnionSet(isl_ctx* ctx, const std::string& text);
isl_multi_union_pw_aff* readBand(isl_ctx* ctx, const std::string& text);
// Adds, under filter number `k` of the sequence `seq` (a point statement), a band and
// a mark above it. Returns the sequence node.
isl_schedule_node* addPassBand(isl_schedule_node* seq, int k, isl_ctx* ctx, const std::string& band, const char* mark);
// Inserts the context 0 <= bx < GX, 0 <= by < GY, 0 <= tx < BX, 0 <= ty < BY above `node`
// (and, for a symbolic kernel, its rows size_<symbol> >= 1).
isl_schedule_node* insertBindingContext(isl_schedule_node* node, isl_ctx* ctx, const KernelPlan& p, const Binding& b);

}  // namespace polyred
