// KernelPlan: one fused kernel in canonical form, the result of canonicalization.
//
// Every kernel iterates over a 2-D space (i, j): i runs over the coalesced kept
// (parallel) dimensions, j over the coalesced reduced dimensions (formula (1) of the
// PANAMERA paper). The canonical form says which of them is contiguous in memory:
//   AllReduce   M == 1, reduce j                       (Fig. 3a)
//   XReduce     reduce the inner coalesced axis j       (Fig. 3b)
//   YReduce     reduce the outer coalesced axis j       (Fig. 3c)
//   Elementwise no reduction, N == 1
// The body is a DAG of scalar values computed at each point (i, j): loads of graph
// inputs at quasi-affine offsets in i and j (movement ops -- broadcast, transpose,
// reshape -- are folded into these offsets, never materialized), constants, and
// elementwise ops. Reductions combine a body value over j; elementwise stores write a
// body value at i. The epilogue is a second DAG evaluated once per i after the
// reductions are complete (mean = sum / n, casts, reshapes of the result): it may use
// the final reduced values (Kind::Reduced) and loads at offsets in i.
//
// Row-resident kernels (each row's reductions complete inside one thread block) run
// dependent reductions in passes over the row: pass 0 accumulates the stage-0
// reductions (a max, a mean), whose totals every thread of the row then holds; pass 1
// accumulates the stage-1 reductions, whose body may read those totals as Reduced
// values (sum of exp(x - max), a variance); and so on. A point store is issued by the
// first pass where all its values exist, so a final store-only pass writes outputs
// over the whole row that need the last totals (softmax = exp(x - max) / sum).
// Every other kernel has one pass.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/reduction.h"

namespace polyred {

enum class CanonicalForm : uint8_t { Elementwise, AllReduce, XReduce, YReduce };
std::string_view formName(CanonicalForm f);

struct BodyValue {
  enum class Kind : uint8_t { Load, Constant, Op, Reduced, Index, Scanned };
  Kind kind = Kind::Op;
  DType dtype = DType::Float32;
  std::string label;  // the graph tensor this value belongs to (readable code)
  // Load: graph input number (or temporary, see below) and the flat element offset, an
  // isl quasi-affine expression over i and j (e.g. "768*j + i").
  int input = -1;
  int temporary = -1;  // >= 0: load a reduction result an earlier kernel materialized
  std::string offset;
  // Constant
  Scalar value;
  // Op: an elementwise op over earlier values of the body.
  OpKind op = OpKind::Add;
  std::vector<int> operands;
  // Reduced: index into KernelPlan::reductions (in the body: a reduction of an earlier
  // stage of a row-resident kernel). Scanned: a scan kernel's running fold at the point
  // (of reduction `reduction`), known after the scan step; the values computed from it
  // come after the scan's input in the body and feed only stores.
  int reduction = -1;
  // Index: the integer value of `offset` itself (an Iota: a coordinate of the point).
  // A Gather's load: `offset` is params' element at index 0 along the gathered axis and
  // operands = {the integer value that selects along it}; the element read is offset +
  // index * gatherStride, and 0 where the index is outside [0, gatherExtent).
  int64_t gatherStride = 0, gatherExtent = 0;
  bool gathers() const { return kind == Kind::Load && !operands.empty(); }

  // Loads and Index values carry an isl expression that the schedule pulls back to
  // the loop iterators; statements list them in body order.
  bool hasOffset() const { return kind == Kind::Load || kind == Kind::Index; }
};

struct ReductionOutput {
  Reduction reduction;
  int value = -1;      // the body value combined over j
  // A tuple reduction (reduction.tuple): its element inputs, one body value each
  // (values[0] == value); a scalar reduction has values == {value}.
  std::vector<int> values;
  int output = -1;     // index into Graph::outputs (stored at flat offset i), or -1
  int temporary = -1;  // index into KernelPartition::temporaries (also stored at i), or -1
  DType outType = DType::Float32;  // the reduction node's declared result type
  int stage = 0;  // the pass that accumulates it (row-resident kernels; else 0)
  // A tuple reduction whose tuple and element values an earlier reduction of the plan
  // already accumulates (ArgMaxWithValue's value beside its index, varMean's mean
  // beside its variance): that one's index; this result is finalized from its total.
  int sharesAccumulatorOf = -1;
  // The reduction whose accumulator holds this one's total.
  int holder(int self) const { return sharesAccumulatorOf >= 0 ? sharesAccumulatorOf : self; }
  // A Scan (ir/ops.h): its running fold at every point (BodyValue::Kind::Scanned) is
  // what the kernel's stores read, the fold before the point where `exclusive`. A scan kernel
  // runs each row in one block, tile after tile along j, the accumulator carrying the
  // fold of the earlier tiles (device/polyred_scan.cuh).
  bool scan = false, exclusive = false;
};

struct ElementwiseOutput {
  int value = -1;
  int output = -1;           // index into Graph::outputs
  std::string offset = "i";  // where it is stored: an isl expression in i (and j)
  int pass = 0;              // body stores: the pass that issues it (see above)
  // A ScatterAdd's store (elementwise kernels only): the body value `scatterIndex`
  // selects the output row; the value is added (atomically) at offset + index *
  // scatterStride, and dropped where the index is outside [0, scatterExtent). The
  // runtime sets such an output before the launch (KernelSpec::initFirst): to zero, or
  // to a copy of graph input `scatterBase`.
  int scatterIndex = -1;
  int64_t scatterStride = 0, scatterExtent = 0;
  int scatterBase = -1;
  bool scatters() const { return scatterIndex >= 0; }
  // A scan kernel's store, issued after the scan step (its value may read the running
  // fold, BodyValue::Kind::Scanned): into graph output `output` or, for a scan result
  // another kernel reads, temporary `temporary` (output -1).
  int temporary = -1;
  // Writes zero at offset in temporary `temporary` where `value` (that temporary's own
  // load at the same offset) is not zero: the kernel that reads a scatter's temporary
  // leaves it zero for the next launch (canon/temporary_reset).
  bool zeroWhereNonzero = false;
};

// The rows of a symbolic kernel (driver/symbolic_kernels): M = coefficient * the value
// of size symbol `symbol` (Graph::symbols), known only at launch. The generated code
// reads it from the kernel parameter `param()`; KernelPlan::M then holds it at the
// symbol's probe value, which the binding takes as its row count.
struct SymbolicRows {
  int symbol = -1;
  std::string name;
  int64_t coefficient = 1;
  std::string param() const { return "size_" + name; }
  // The extent as an isl (and C) expression: "768*size_S".
  std::string extent() const { return (coefficient == 1 ? "" : std::to_string(coefficient) + "*") + param(); }
  // The row counts this kernel is launched for. A kernel whose binding the static
  // policy would change with the row count is compiled once per binding, each serving
  // the rows at which the policy takes it (driver/row_variants.h); one kernel serves all.
  int64_t fewestRows = 0;
  int64_t mostRows = std::numeric_limits<int64_t>::max();
  bool serves(int64_t rows) const { return rows >= fewestRows && rows <= mostRows; }
  bool servesEveryRowCount() const { return fewestRows == 0 && mostRows == std::numeric_limits<int64_t>::max(); }
};

struct KernelPlan {
  std::string name;
  CanonicalForm form = CanonicalForm::Elementwise;
  int64_t M = 1;  // kept extent
  std::optional<SymbolicRows> symbolicRows;  // set: M is a symbolic kernel's probe value
  int64_t N = 1;  // reduced extent
  // Elements that one unit of N stands for: 1, or the vector width where the plan is
  // bound per vector instance (the driver divides N by it before binding).
  int64_t elementsPerN = 1;
  // Whether those vector instances have masked lanes (rows off the vector boundary:
  // each access of a vector branches on whether it lies whole in its row).
  bool maskedLanes = false;
  // Elementwise kernels: the extents (size-1 axes dropped) whose row-major
  // linearization is i -- the output's shape, which poly/transpose_tiling reads the
  // loads' strides along. Empty where unknown.
  std::vector<int64_t> pointShape;
  std::vector<BodyValue> body;
  std::vector<ReductionOutput> reductions;
  // Body values stored at every point: the outputs of an elementwise kernel, or
  // elementwise outputs over a reduction's anchor shape stored from its Red statement
  // (each point (i, j) is visited exactly once).
  std::vector<ElementwiseOutput> stores;
  std::vector<BodyValue> epilogue;
  std::vector<ElementwiseOutput> epilogueStores;  // epilogue values at i
  std::string why;  // how the flattening and the partition were decided (for dumps)

  // Passes over (i, j): 1 + the last stage, plus a store-only pass if a store needs it.
  int passes() const;
  // Whether reductions of stage `s` exist (their totals are combined after pass s).
  bool hasStage(int s) const;
  // The body values the point statement of `pass` evaluates: those its reductions and
  // stores read. Its annotation lists the offsets of these values' loads, in body
  // order, then those of its stores. With `givenValues`, values marked there are taken
  // as given (a row cache holds them: codegen/row_cache.h), not computed from their
  // operands.
  std::vector<bool> valuesOfPass(int pass, const std::vector<bool>* givenValues = nullptr) const;
  // A scan kernel's values of `pass` on either side of its scan step: up to the scan's
  // input (evaluated before the step; all that a Fold evaluates), and after it (they
  // may read the running fold, BodyValue::Kind::Scanned).
  std::vector<bool> valuesBeforeScan(int pass) const;
  std::vector<bool> valuesAfterScan(int pass) const;
  int loadsOfPass(int pass) const;

  std::string toString(const Graph& g) const;
  // Whether a reduction is a tuple (ir/tuple_reduction.h): such a kernel combines its
  // blocks in block order through the partials (the deterministic protocol) and is
  // not vectorized.
  bool hasTupleReduction() const;
  // Whether a reduction multiplies complex64 values: a complex product has no atomic,
  // so such a kernel takes the deterministic protocol too (a complex sum combines its
  // blocks with two float atomicAdds, or deterministically when asked).
  bool hasComplexProduct() const;
  // Whether a body value or an accumulator is complex64 (not vectorized).
  bool hasComplexValue() const;
  // Whether blocks must combine through the partials in block order.
  bool needsBlockOrderCombine() const { return hasTupleReduction() || hasComplexProduct(); }
  // Whether a scalar reduction's combiner has no hardware atomic for its accumulator,
  // so that blocks would combine it by a compare-and-swap loop (device/polyred_reduce.cuh,
  // atomic_combine): products and user combiners (max and min of floats take integer
  // atomics on their bit patterns).
  bool hasCompareAndSwapCombine() const;
  // Whether a reduction is an ordered (non-commutative) tuple: such a kernel reduces a
  // contiguous chunk of j per thread and combines in order (Binding::chunk).
  bool hasOrderedReduction() const;
  // Whether a store adds into its output at a data-dependent row (ScatterAdd).
  bool hasScatterStore() const;
  // Whether the kernel is a scan (its one reduction is a Scan, stored at every point).
  bool hasScan() const;
};

// A reduction (or scan) result materialized in global memory for later kernels.
struct Temporary {
  TensorId tensor = -1;  // the Reduce (or Scan) node's output
  int64_t elements = 0;
  DType dtype = DType::Float32;
  // Zero from its allocation on and between launches: the one kernel that reads it
  // writes back zero where it read a nonzero value (canon/temporary_reset), so the
  // scatter that adds into it needs no memset first.
  bool keptZero = false;
  // Sized by a size symbol (driver/symbolic_kernels): `elementsPerSymbol` times the
  // value of symbol `symbol`; `elements` is that at the probe the plans were made at.
  int symbol = -1;
  int64_t elementsPerSymbol = 0;

  int64_t elementsAt(const std::vector<int64_t>& sizes) const {
    return symbol < 0 ? elements : elementsPerSymbol * sizes.at(static_cast<size_t>(symbol));
  }
};

// An in-place output (Output::aliasOfInput) that its kernel writes into temporary
// `temporary` instead of its input's buffer, copied into that buffer after the last
// launch (canon/in_place_hazards): writing it straight there would change what a
// kernel still reads.
struct StagedOutput {
  int output = -1;
  int temporary = -1;
  std::string why;
};

// The result of canonicalization: the kernels of one sub-graph, in launch order.
struct KernelPartition {
  std::vector<KernelPlan> kernels;
  std::vector<Temporary> temporaries;
  std::vector<StagedOutput> staged;
  // The temporary output `o` is staged through, or -1 (written in place directly).
  int stagingTemporary(int o) const;
  std::string toString(const Graph& g) const;
};

// What kernel k of a partition reads from global memory.
struct KernelReads {
  // Each graph input and temporary it loads, whole and counted once (a broadcast read
  // counts its tensor, not the points).
  int64_t bytes = 0;
  // Per body value of the plan: whether another kernel of the partition loads the same
  // tensor (it may find it in the L2).
  std::vector<bool> sharedWithOtherKernels;
};
KernelReads kernelReads(const KernelPartition& partition, size_t k, const Graph& g);

}  // namespace polyred
