// Dimension flattening and reduction propagation (PANAMERA section 3).
//
// Takes: a verified Graph and a group of reductions that share their input shape and
// reduced axes (or, for an elementwise kernel, a group of same-shape outputs).
// Gives: a KernelPlan in canonical form (its form and extents from canon/canonical_form).
// Size-1 axes are dropped, the kept axes are
// coalesced into i and the reduced axes into j (loop interchange first when they
// interleave, Fig. 2d), and every original index is recovered from (i, j) by
// formula (1). The elementwise producers of each reduction are then lowered into the
// same (i, j) space ("reduction propagation", section 3.2): broadcasts, transposes
// and reshapes become index arithmetic on loads, and isl later simplifies the
// resulting quasi-affine offsets (e.g. a reshape that only regroups axes cancels out).
#pragma once

#include <map>
#include <vector>

#include "canon/canonical_form.h"
#include "canon/kernel_plan.h"

namespace polyred {

// Thrown while flattening when a reduction result cannot be used where it is read:
// by another kernel that has no temporary for it, or inside its own kernel at other
// rows than its own (a broadcast back over the reduced axes). `output` is the Graph
// output being lowered, or -1 if a reduction reads it. The partitioner then
// materializes `node` into a temporary and moves `output` to a later kernel, or, if a
// reduction of the same kernel reads it, splits that row-resident kernel by stage.
struct NeedsMaterialization {
  int node = -1;
  int output = -1;
  bool sameKernel = false;
  std::string why;
};

// Node -> index into KernelPartition::temporaries: a Reduce or Scan result read at
// other points or by another kernel, or gathered params (canon/gather_sources).
using Materialized = std::map<int, int>;

// Reductions with identical input shape and axes, and the outputs computed from them.
struct ReductionGroup {
  std::vector<int> nodes;                        // Reduce node indices, in dependence order
  std::vector<std::pair<int, int>> direct;       // (node, Graph::outputs index) stored as is
  std::vector<int> epilogue;                     // Graph::outputs computed from the results
  std::vector<int> pointOutputs;                 // Graph::outputs over the anchor shape: reduction-free,
                                                 // or (row-resident) reading the totals at their rows
};

// Whether a reduction-free output of `shape` can be stored from the Red statement of
// a reduction over `anchor`: the same shape once size-1 axes are dropped.
bool sameSqueezedShape(const Shape& a, const Shape& b);

// Throws UnsupportedError if an epilogue output does not map 1:1 onto the kept rows i.
KernelPlan flattenReductions(const Graph& g, const ReductionGroup& group, const Materialized& materialized);

// A Scan node and the Graph outputs its kernel stores: the scan's result, or values
// computed from it at the same point (cumsum(mask) * mask; an exclusive cumsum compared
// with a threshold). A materialized result is stored into its temporary too.
struct ScanGroup {
  int node = -1;
  std::vector<int> outputs;
};

// The scan kernel: an x-reduce (the axis innermost, or the only one) or a y-reduce
// over (i, j), j along the scan axis (reversed: j counts from the end), with one
// reduction marked `scan`; the scan's producers lowered into the body first, then the
// outputs, whose values read the running fold (BodyValue::Kind::Scanned). Throws
// NeedsMaterialization for an output that reads the scan at other points.
KernelPlan flattenScan(const Graph& g, const ScanGroup& group, const Materialized& materialized);

// The shape an elementwise kernel iterates over to produce Graph output `output`: its
// tensor's shape, or for a ScatterAdd result the shape of the values it adds.
Shape iterationShape(const Graph& g, int output);

// `outputs`: Graph::outputs indices that all have one iterationShape. A ScatterAdd
// output is stored by atomic adds at its data-dependent rows (ElementwiseOutput).
KernelPlan flattenElementwise(const Graph& g, const std::vector<int>& outputs, const Materialized& materialized);

// The kernel that writes materialized node `node`'s result (gathered params computed
// by a Window, a gather, ... -- not a Reduce or Scan, whose own kernels write theirs)
// into its temporary: elementwise over the result's shape.
KernelPlan flattenMaterialized(const Graph& g, int node, const Materialized& materialized);

// The tensor whose value an output holds: Assign/InplaceAssign only forward a value.
TensorId valueTensor(const Graph& g, TensorId t);

}  // namespace polyred
