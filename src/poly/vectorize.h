// Vector width of every canonical form (16-byte accesses).
//
// Takes: a KernelPlan. Gives: how many consecutive elements V of the contiguous axis
// (i for elementwise kernels, the reduced j for x/all-reduce) one statement instance
// handles, and how each load (and coordinate) behaves along those V lanes, decided
// exactly with isl over the whole iteration space (axis = V*a + v):
//   Contiguous  offset(V*iv + v) = offset(V*iv) + v and offset(V*iv) is a multiple of
//               V: one aligned vector load (when the pointer is aligned, checked once
//               per launch inside the kernel, with a scalar fallback)
//   Invariant   offset(V*iv + v) = offset(V*iv): one scalar load for all lanes
//   Gather      anything else: one scalar load per lane
// V is 16 bytes of the widest element a kernel stores (of the widest it loads, in a
// reduction); an elementwise kernel's loads may be twice as wide as its stores, two
// 16-byte accesses a vector (a f32 -> f16 cast: 8 lanes, each 16 bytes of halves stored).
// Stores of elementwise kernels are at i, hence contiguous; those of an x-reduce (the
// last pass of a row-resident kernel) must be contiguous and aligned along j. In an x-
// or all-reduce the lanes run along j and fold into the thread's accumulator (in a
// row-resident kernel, each pass's own); in a y-reduce they run along the kept,
// contiguous i and each lane is a column of its own, with its own accumulator, block
// reduction and output (the thread owns V consecutive columns). Commutative tuples of
// x/all-reduces whose combine is long, or that have a later-combine (argmax), fold their
// lanes as a tree (codegen).
// Masked lanes: in an x/all-reduce whose rows do not start on a vector boundary (the row
// length is not a multiple of V: softmax over 50257 logits), the vectors are those of
// the flat buffer: row i's first vector starts shift(i) < V elements before the row,
// and lanes outside [0, N) of the row are masked (they load nothing and contribute the
// identity). Interior vectors are whole, aligned vector loads; at most two per row are
// partial and go lane by lane. An elementwise kernel whose output's flat size is not a
// multiple of V masks the same way with shift 0: its last vector is partial.
// V = 1 (no vectorization) when the lanes would run along i of a y-reduce whose extent
// there is not a multiple of V, for y-reduces that store points or have several
// passes, and kernels under the policy's minElements (launch-bound: lanes only add
// latency there).
// A y-reduce scan (a column's running fold) takes strided lanes along j instead: V
// consecutive points of its column per thread (V divides N), each lane a scalar access.
#pragma once

#include <string>
#include <vector>

#include "canon/kernel_plan.h"
#include "poly/kernel_config.h"
#include "poly/launch_policy.h"

namespace polyred {

enum class LaneAccess : uint8_t { Contiguous, Invariant, Gather };

struct Vectorization {
  int width = 1;
  char axis = 'i';                // the iteration variable the lanes run along
  // One per value of plan.body with an offset (Load, and Index: a coordinate, whose
  // lanes are base + v, the same for all lanes, or computed one by one), in order.
  std::vector<LaneAccess> accesses;
  // Accumulators per reduction and thread: V in a y-reduce (a lane per column, i
  // counts groups of V columns in every statement), else 1.
  int accumulatorLanes = 1;
  // Masked lanes: shift(i), an isl quasi-affine expression over i with values in
  // [0, V): vector a of row i covers j = V*a - shift(i) + v. Empty when every row starts
  // on a vector boundary. An elementwise kernel's (lanes along i, its one "row" the
  // flat output) is "0": vector i covers V*i + v, lanes at M or past it masked.
  std::string shift;
  // Lanes along j of a y-reduce scan: V consecutive points of one column, strided in
  // memory, so that every load is gathered and every store issued lane by lane (one
  // offset per lane), and the block scan runs once per V points.
  bool strided = false;

  bool masked() const { return !shift.empty(); }
  static constexpr const char* kUnshifted = "0";  // the shift of an elementwise kernel's masked lanes
  // The offset of lane `lane` of an access, with the axis variable counting vectors.
  std::string laneOffset(const std::string& offset, int lane) const;
  // Where along the axis lane 0 of a vector lies (V*a - shift(i); negative in a row's
  // first vector when it starts before the row).
  std::string lanePosition() const;
  // The most vectors any row has along the axis of `extent` elements.
  int64_t vectorsAlong(int64_t extent) const;
  // The elements along the lane axis of `plan` (a row's N, or an elementwise kernel's M):
  // the bound that masks lanes.
  int64_t extentAlongAxis(const KernelPlan& plan) const { return axis == 'i' ? plan.M : plan.N; }
  // The isl constraint bounding iteration variable `var` ('i' or 'j') of `extent`
  // elements: counting vectors along the lane axis, elements along the other.
  std::string axisBounds(char var, int64_t extent) const;
};

// At most `maxWidth` lanes (KernelConfig::maxVectorWidth; 1: scalar code; kAuto: the
// policy's limit for the kernel, laneLimitFor: on sm_90, y-reduces take 16-byte lanes
// from 8192 kept columns, 4 lanes from 1024 columns of at least 8192 rows (pairs where
// the blocks combine through partials), column pairs of 8- and 16-bit data from 512
// columns of at least 8192 rows, else none). `policy`: the target's
// (poly/launch_policy.h).
Vectorization chooseVectorization(const KernelPlan& plan, const LaunchPolicy& policy,
                                  int maxWidth = KernelConfig::kAuto);
int laneLimitFor(int maxWidth, const KernelPlan& plan, const LaunchPolicy& policy);

// How far the kernel's accumulation and pointwise loops are unrolled: `requested`
// (KernelConfig::unroll) unless auto; auto is the policy's defaultUnroll, except for
// row-resident kernels: 1 with masked lanes; for rows of longRowElements or more,
// longRowUnroll where each pass folds one accumulator, else 1; and for one-pass tuples
// (scalarTupleUnroll, laterCombineLanesUnroll).
int loopUnrollFor(const KernelPlan& plan, const Vectorization& vec, int requested, const LaunchPolicy& policy);

}  // namespace polyred
