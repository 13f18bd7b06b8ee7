// Row variants: the bindings a symbolic kernel takes at the row counts it may be
// launched with, each with the rows it serves.
//
// Takes: a symbolic kernel's plan (KernelPlan::symbolicRows: M holds the probe's rows),
// the target and the policy's knobs. Gives: its RowVariants in order of rows -- each
// the choice bindAlone (driver/kernel_binding.h) makes for the plan at those rows, and
// the row counts [fewestRows, mostRows] it serves: together every count from 0 on, the
// last one the probe's and every count past it, with the binding the kernel had when
// it was bound at the probe alone. The pipeline compiles one kernel per variant; the
// launch takes the one whose range holds coefficient * S (codegen/symbolic_launch.h).
// (The pipeline splits a variant whose rows reach past 2^31 elements where its indices
// stop fitting 32 bits: splitAtInt32Indices, driver/pipeline.cc.)
//
// Why: the policy (poly/binding.cc, poly/vectorize.cc) picks threads per row, rows per
// block, items per thread, vector lanes and so the row-staged form from the row count.
// Bound at the probe (a prime near 2^17: many rows), a layer norm over 1024 takes 64
// threads on each of 4 rows a block, where the static kernel for a few rows takes 256
// threads on one staged row: 1.34x the static time at 4 rows (H100).
//
// How: the choice at coefficient * S rows for S = 1, 2, 4, ... and the probe; between
// two samples whose choices differ, bisection finds the row count where each change
// happens (the policy's thresholds are steps in the row count; a choice that comes and
// goes between two samples is seen only where a bisection point falls in it). Two
// choices are the same when they would generate the same code: block shape, split,
// lanes (the row tiles and the grid follow the rows at launch). A choice that splits a
// row across blocks, which a symbolic kernel cannot (its workspace would be sized by
// the symbol), is taken without the split (the `split` knob at 1: the same block shape,
// one block a row). At most kMaxRowVariants variants: past it, the narrowest range
// between the first and the last goes to the variant above it (more rows), so that
// one row and the probe's rows always keep their own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "canon/kernel_plan.h"
#include "driver/kernel_binding.h"

namespace polyred {

struct RowVariant {
  int64_t fewestRows = 0;
  int64_t mostRows = 0;
  BoundKernel bound;  // its grid that of the probe's rows (poly/binding.h: withRows)
};

constexpr size_t kMaxRowVariants = 3;

std::vector<RowVariant> chooseRowVariants(const KernelPlan& plan, const Target& target, const KernelConfig& config);

// Whether two choices generate the same code but for the rows: block shape, split and
// lanes.
bool sameCodeForRows(const BoundKernel& a, const BoundKernel& b);

// "rows 0 to 1199", "rows 1200 on" (the rows being coefficient * symbol), for dumps.
std::string describeRows(const SymbolicRows& rows);

}  // namespace polyred
