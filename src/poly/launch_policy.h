// The launch policy as data: the measured thresholds of the binding and vectorization
// rules (poly/binding.cc, poly/vectorize.cc, the pass loops' unroll) as one table per GPU
// family, in the manner of CUB's tuning policies.
//
// Takes: a compute capability. Gives: the LaunchPolicy of its family -- sm_90 (H100,
// H200: where every value was measured), sm_80 and a default for every other GPU.
// Each table row gives a field its value and the record that justified it (GPU, date,
// docs/results/ file; launch_policy.cc lists the fields' meanings). Adding a GPU is
// adding a table: copy the closest family's, change the values a measurement on that
// GPU moved, cite the record, and list the table in kTables (launch_policy.cc). The
// rules that read the policy stay the same for every GPU.
#pragma once

#include <span>

namespace polyred {

// Every field is a count (elements, instances, threads, items, lanes, bytes, waves);
// launch_policy.cc, kFields, gives each one's meaning.
struct LaunchPolicy {
  // Splitting rows over blocks (binding.cc: splitReduced, evenSplit, unsplitRows).
  int maxWaves;
  int fullWaveSharePercent;
  int shortTrip;
  int maxEvenTrip;
  int maxUnsplitTrip;
  int maxUnsplitMaskedTrip;
  int minUnsplitRows;
  // Items per thread and small launches (binding.cc: itemsFor, smallLaunchConfig).
  int defaultItems;
  int largeAllReduceElements;
  int largeAllReduceItems;
  int smallLaunchWaves;
  int smallLaunchItems;
  int underOneWaveItems;
  int smallRowThreads;
  int smallAllReduceThreads;
  int maxElementwiseBlocks;
  // Row-resident kernels and scans (binding.cc: rowsFitOneBlock, rowResidentConfig,
  // sparseRowsConfig, scanConfig, splitScanRows).
  int rowResidentWaves;
  int longRowWaveDivisor;
  int longRowThreads;
  int longRowHalfThreads;
  int rowResidentItems;
  int sparseRowResidentItems;
  int minScanTilesToSplit;
  // Vector lanes (vectorize.cc: chooseLanes, laneLimitFor, columnScanLanes).
  int vectorBytes;
  int elementwiseLoadBytes;
  int minElements;
  int minColumnsForWideLanes;
  int minColumnsForLanes;
  int minRowsForNarrowLanes;
  int narrowColumnLanes;
  int minColumnsForPairs;
  int columnPairLanes;
  int maxColumnPairBytes;
  int minColumnsForWordLanes;
  int wordLaneBytes;
  int minElementsForNarrowLanes;
  int columnScanLanes;
  // The accumulation and pass loops' unroll (vectorize.cc: loopUnrollFor).
  int defaultUnroll;
  int longRowElements;
  int longRowUnroll;
  int scalarTupleUnroll;
  int laterCombineLanesUnroll;
};

// One field of LaunchPolicy: its name and one line of meaning.
struct LaunchPolicyField {
  int LaunchPolicy::*field;
  const char* name;
  const char* meaning;
};

// One row of a family's table: a field, its value, and the record that justified it
// ("H100, 2026-11-26, docs/results/notes-2026-11-26-2.md", or "default, not measured").
struct LaunchPolicyValue {
  int LaunchPolicy::*field;
  int value;
  const char* record;
};

// A family's table: compute capability ccMajor.ccMinor (0.0: the default, for every
// capability no other table names).
struct LaunchPolicyTable {
  const char* family;
  int ccMajor, ccMinor;
  std::span<const LaunchPolicyValue> rows;
};

// Every field of LaunchPolicy, in declaration order.
std::span<const LaunchPolicyField> launchPolicyFields();
// Every family's table; the default last.
std::span<const LaunchPolicyTable> launchPolicyTables();
// The table for compute capability ccMajor.ccMinor: its family's, else the default.
const LaunchPolicyTable& launchPolicyTableFor(int ccMajor, int ccMinor);
// The policy that table gives.
const LaunchPolicy& launchPolicyFor(int ccMajor, int ccMinor);

}  // namespace polyred
