// The polyhedral stage's result for one kernel.
//
// Statements of a reduction kernel (t = an i-tile: BY rows or BX columns):
//   Init[t]          acc = identity                       (all threads)
//   Red[i,j]         acc = combine(acc, body(i, j))       (under mark "reduction")
//   BlockReduce[t]   block reduction of acc               (all threads; has barriers)
//   Red_p[i,j], BlockReduce_p[t]   (row-resident kernels) pass p: the stage-p
//                    reductions, whose body reads the totals of earlier stages; the
//                    block reductions before a later pass leave the total in every
//                    thread of the row
//   Apply_p[i,j]     (row-resident) a last pass that only stores (under "pointwise")
//   Store[i]         out[i] = acc                         (single-block: one thread per i)
//   Contribute[i]    atomically combine acc into the workspace (multi-block)
//   Arrive[t]        fence + ticket; tells the last block (all threads; has barriers)
//   Final[i]         last block only: out[i] = workspace[i], workspace reset
// An elementwise kernel has one statement, Elem[i]; a tiled transpose (poly/
// transpose_tiling.h) has Stage[t,e], Sync[t], Elem[t,e] and, when blocks loop over
// tiles, Sync_1[t].
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "canon/kernel_plan.h"
#include "poly/binding.h"
#include "poly/cache_hints.h"
#include "poly/loop_ast.h"
#include "poly/transpose_tiling.h"
#include "poly/vectorize.h"

namespace polyred {

struct PolyKernel {
  KernelPlan plan;
  Binding binding;
  Vectorization vector;      // elementwise kernels: lanes per Elem instance (i counts vectors)
  TransposeTiling tiling;    // elementwise kernels through shared-memory tiles (`vector`: Elem's lanes)
  bool index64 = false;      // some index reaches 2^31: emit 64-bit index arithmetic
  CacheHints hints;          // accesses that evict first (none unless chooseCacheHints set them)
  std::string scheduleTree;  // isl's schedule tree (YAML), for --dump=schedule
  std::string islAst;        // isl's own C rendering of the AST, for --dump=ast
  std::unique_ptr<AstNode> ast;
  // A symbolic kernel bound differently at fewer rows (driver/row_variants.h): each
  // serves the rows of its plan.symbolicRows, this kernel those above them
  // (codegen/symbolic_launch.h: kernelForRows picks). Empty for every other kernel.
  std::vector<PolyKernel> rowVariants;
};

// Builds the isl schedule tree of `plan` under `binding` and generates its loops. With
// a vector width V > 1 (elementwise kernels), Elem[i] covers elements V*i .. V*i+V-1
// and `binding` must have been chosen for M/V instances.
// A non-empty `tiling` (from bindTiles' binding; `vector` of width tiling.Va) builds
// the tiled schedule.
PolyKernel buildPolyKernel(const KernelPlan& plan, const Binding& binding, const Vectorization& vector = {},
                           const TransposeTiling& tiling = {});

// A symbolic kernel's most rows, within the rows its plan serves, at which every index
// it computes still fits 32 bits (the kernel compiled for at most those rows has
// index64 unset); fewestRows - 1 where even its fewest rows do not.
int64_t mostRowsWithInt32Indices(const PolyKernel& k);

}  // namespace polyred
