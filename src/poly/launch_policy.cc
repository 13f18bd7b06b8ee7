// The launch policy's tables (launch_policy.h): each field's meaning, then one table
// per GPU family. Adding a GPU is adding a table: copy the closest family's, set the
// values a measurement on that GPU moved (each with its record: GPU, date, the file
// under docs/results/), and list it in kTables. A table must name every field once
// (checked at compile time).
#include "poly/launch_policy.h"

#include <array>
#include <cstddef>
#include <iterator>

namespace polyred {

namespace {

// Each field of LaunchPolicy, in declaration order, with one line of meaning.
constexpr LaunchPolicyField kFields[] = {
    {&LaunchPolicy::maxWaves, "maxWaves",
     "the wave rule weighs splits of a row over blocks up to this many waves"},
    {&LaunchPolicy::fullWaveSharePercent, "fullWaveSharePercent",
     "the fewest waves whose best split fills this share (%) of their block slots win"},
    {&LaunchPolicy::shortTrip, "shortTrip",
     "splits leaving threads at most this many instances prefer one that divides the row evenly"},
    {&LaunchPolicy::maxEvenTrip, "maxEvenTrip",
     "an even split leaves each thread at most this many instances"},
    {&LaunchPolicy::maxUnsplitTrip, "maxUnsplitTrip",
     "split rows (at least minUnsplitRows, one wave) take one wide block each up to this trip"},
    {&LaunchPolicy::maxUnsplitMaskedTrip, "maxUnsplitMaskedTrip",
     "the same for rows with masked lanes"},
    {&LaunchPolicy::minUnsplitRows, "minUnsplitRows",
     "the fewest rows that take one wide block each instead of a split"},
    {&LaunchPolicy::defaultItems, "defaultItems",
     "statement instances a thread handles along the reduced axis (items=auto)"},
    {&LaunchPolicy::largeAllReduceElements, "largeAllReduceElements",
     "all-reduces of at least this many instances take largeAllReduceItems"},
    {&LaunchPolicy::largeAllReduceItems, "largeAllReduceItems",
     "their items per thread: enough blocks to fill one wave"},
    {&LaunchPolicy::smallLaunchWaves, "smallLaunchWaves",
     "single-pass x-/all-reduces under this many waves of resident threads take fewer items"},
    {&LaunchPolicy::smallLaunchItems, "smallLaunchItems",
     "their items per thread"},
    {&LaunchPolicy::underOneWaveItems, "underOneWaveItems",
     "their items per thread under one wave"},
    {&LaunchPolicy::smallRowThreads, "smallRowThreads",
     "the widest block a small launch's rows take"},
    {&LaunchPolicy::smallAllReduceThreads, "smallAllReduceThreads",
     "the least block a small all-reduce takes, to give every SM one"},
    {&LaunchPolicy::maxElementwiseBlocks, "maxElementwiseBlocks",
     "elementwise kernels take one instance a thread up to this many blocks, then a grid-stride loop"},
    {&LaunchPolicy::rowResidentWaves, "rowResidentWaves",
     "long columns stay one block each from this many waves of default blocks"},
    {&LaunchPolicy::longRowWaveDivisor, "longRowWaveDivisor",
     "long rows stay one block each from 1/this of a wave of such blocks"},
    {&LaunchPolicy::longRowThreads, "longRowThreads",
     "row-resident kernels over long rows take blocks of at least this many threads"},
    {&LaunchPolicy::longRowHalfThreads, "longRowHalfThreads",
     "... or this many where the rows they keep resident fit the L2 and make a wave"},
    {&LaunchPolicy::rowResidentItems, "rowResidentItems",
     "items per thread in row-resident kernels"},
    {&LaunchPolicy::sparseRowResidentItems, "sparseRowResidentItems",
     "items per thread in row-resident x-reduces that fill under half a wave"},
    {&LaunchPolicy::minScanTilesToSplit, "minScanTilesToSplit",
     "scans of rows too few for a quarter wave split rows at least this many tiles long over blocks"},
    {&LaunchPolicy::vectorBytes, "vectorBytes",
     "the widest vector access (bytes): the GPU's widest load"},
    {&LaunchPolicy::elementwiseLoadBytes, "elementwiseLoadBytes",
     "the widest load of an elementwise kernel's vector (bytes; two accesses)"},
    {&LaunchPolicy::minElements, "minElements",
     "kernels of fewer statement instances stay scalar (launch-bound)"},
    {&LaunchPolicy::minColumnsForWideLanes, "minColumnsForWideLanes",
     "y-reduces keeping at least this many columns take 16-byte lanes"},
    {&LaunchPolicy::minColumnsForLanes, "minColumnsForLanes",
     "y-reduces keeping at least this many columns may take narrowColumnLanes"},
    {&LaunchPolicy::minRowsForNarrowLanes, "minRowsForNarrowLanes",
     "... where their columns are at least this long (else by minElementsForNarrowLanes)"},
    {&LaunchPolicy::narrowColumnLanes, "narrowColumnLanes",
     "the lanes of those y-reduces"},
    {&LaunchPolicy::minColumnsForPairs, "minColumnsForPairs",
     "y-reduces of narrow data over long columns take column pairs from this many columns"},
    {&LaunchPolicy::columnPairLanes, "columnPairLanes",
     "the lanes of column pairs (also of CAS-combined y-reduces from minColumnsForLanes)"},
    {&LaunchPolicy::maxColumnPairBytes, "maxColumnPairBytes",
     "the widest element that takes column pairs (bytes)"},
    {&LaunchPolicy::minColumnsForWordLanes, "minColumnsForWordLanes",
     "y-reduces of 4-byte data take narrowColumnLanes from this many columns"},
    {&LaunchPolicy::wordLaneBytes, "wordLaneBytes",
     "the element width (bytes) that minColumnsForWordLanes applies to"},
    {&LaunchPolicy::minElementsForNarrowLanes, "minElementsForNarrowLanes",
     "y-reduces of shorter columns take narrowColumnLanes from this many elements"},
    {&LaunchPolicy::columnScanLanes, "columnScanLanes",
     "the most points of a column each thread of a y-reduce scan takes"},
    {&LaunchPolicy::defaultUnroll, "defaultUnroll",
     "how far accumulation and pass loops are unrolled (unroll=auto)"},
    {&LaunchPolicy::longRowElements, "longRowElements",
     "rows at least this long count as long for the pass loops' unroll"},
    {&LaunchPolicy::longRowUnroll, "longRowUnroll",
     "pass loops over long aligned rows folding one accumulator a pass"},
    {&LaunchPolicy::scalarTupleUnroll, "scalarTupleUnroll",
     "the loops of scalar one-pass tuple x-/all-reduces"},
    {&LaunchPolicy::laterCombineLanesUnroll, "laterCombineLanesUnroll",
     "the loops of one-pass tuples folding lanes with a later-combine (argmax)"},
};

static_assert(sizeof(LaunchPolicy) == std::size(kFields) * sizeof(int), "a LaunchPolicy field missing from kFields");

// H100 and H200 (sm_90): where every measured value was measured.
constexpr LaunchPolicyValue kSm90[] = {
    {&LaunchPolicy::maxWaves, 8, "default, not measured"},
    {&LaunchPolicy::fullWaveSharePercent, 90, "H200, 2026-11-28, docs/results/notes-2026-11-28.md"},
    {&LaunchPolicy::shortTrip, 8, "H200, 2026-11-29, docs/results/notes-2026-11-29.md"},
    {&LaunchPolicy::maxEvenTrip, 16, "H200, 2026-11-29, docs/results/notes-2026-11-29.md"},
    {&LaunchPolicy::maxUnsplitTrip, 12, "H200, 2026-11-30, docs/results/notes-2026-11-30.md"},
    {&LaunchPolicy::maxUnsplitMaskedTrip, 4, "H200, 2026-11-30, docs/results/notes-2026-11-30.md"},
    {&LaunchPolicy::minUnsplitRows, 16, "H200, 2026-11-30, docs/results/notes-2026-11-30.md"},
    {&LaunchPolicy::defaultItems, 8, "default, not measured"},
    {&LaunchPolicy::largeAllReduceElements, 1 << 16, "H100, 2026-11-23, docs/results/launch-policy-evidence.md"},
    {&LaunchPolicy::largeAllReduceItems, 4, "H100, 2026-11-23, docs/results/launch-policy-evidence.md"},
    {&LaunchPolicy::smallLaunchWaves, 4, "H200, 2026-11-28, docs/results/notes-2026-11-28-2.md"},
    {&LaunchPolicy::smallLaunchItems, 4, "H200, 2026-11-28, docs/results/notes-2026-11-28-2.md"},
    {&LaunchPolicy::underOneWaveItems, 2, "H200, 2026-11-28, docs/results/notes-2026-11-28-2.md"},
    {&LaunchPolicy::smallRowThreads, 512, "H200, 2026-11-28, docs/results/notes-2026-11-28-2.md"},
    {&LaunchPolicy::smallAllReduceThreads, 64, "H200, 2026-11-28, docs/results/notes-2026-11-28-2.md"},
    {&LaunchPolicy::maxElementwiseBlocks, 1 << 24, "H200, 2026-11-30, docs/results/notes-2026-11-30-2.md"},
    {&LaunchPolicy::rowResidentWaves, 2, "H100, 2026-11-26, docs/results/notes-2026-11-26-2.md"},
    {&LaunchPolicy::longRowWaveDivisor, 4, "H100, 2026-11-26, docs/results/notes-2026-11-26-2.md"},
    {&LaunchPolicy::longRowThreads, 1024, "H100, 2026-11-23, docs/results/notes-2026-11-23.md"},
    {&LaunchPolicy::longRowHalfThreads, 512, "H200, 2026-11-29, docs/results/notes-2026-11-29-2.md"},
    {&LaunchPolicy::rowResidentItems, 4, "H100, 2026-11-26, docs/results/notes-2026-11-26-2.md"},
    {&LaunchPolicy::sparseRowResidentItems, 2, "H200, 2026-11-28, docs/results/notes-2026-11-28.md"},
    {&LaunchPolicy::minScanTilesToSplit, 16, "H100, 2026-11-27, docs/results/notes-2026-11-27-2.md"},
    {&LaunchPolicy::vectorBytes, 16, "default, not measured"},
    {&LaunchPolicy::elementwiseLoadBytes, 32, "H200, 2026-11-30, docs/results/notes-2026-11-30.md"},
    {&LaunchPolicy::minElements, 1 << 16, "H100, 2026-11-21, docs/results/launch-policy-evidence.md"},
    {&LaunchPolicy::minColumnsForWideLanes, 8192, "H100, 2026-11-23, docs/results/launch-policy-evidence.md"},
    {&LaunchPolicy::minColumnsForLanes, 1024, "H100, 2026-11-27, docs/results/notes-2026-11-27.md"},
    {&LaunchPolicy::minRowsForNarrowLanes, 8192, "H100, 2026-11-27, docs/results/notes-2026-11-27.md"},
    {&LaunchPolicy::narrowColumnLanes, 4, "H100, 2026-11-27, docs/results/notes-2026-11-27.md"},
    {&LaunchPolicy::minColumnsForPairs, 512, "H100, 2026-11-27, docs/results/notes-2026-11-27.md"},
    {&LaunchPolicy::columnPairLanes, 2, "H100, 2026-11-28, docs/results/notes-2026-11-28-3.md"},
    {&LaunchPolicy::maxColumnPairBytes, 2, "H100, 2026-11-27, docs/results/notes-2026-11-27.md"},
    {&LaunchPolicy::minColumnsForWordLanes, 768, "H200, 2026-11-30, docs/results/notes-2026-11-30-2.md"},
    {&LaunchPolicy::wordLaneBytes, 4, "H200, 2026-11-30, docs/results/notes-2026-11-30-2.md"},
    {&LaunchPolicy::minElementsForNarrowLanes, 6 << 20, "H200, 2026-11-30, docs/results/notes-2026-11-30-2.md"},
    {&LaunchPolicy::columnScanLanes, 8, "H100, 2026-11-27, docs/results/notes-2026-11-27-2.md"},
    {&LaunchPolicy::defaultUnroll, 4, "default, not measured"},
    {&LaunchPolicy::longRowElements, 16384, "H100, 2026-11-25, docs/results/notes-2026-11-25.md"},
    {&LaunchPolicy::longRowUnroll, 2, "H100, 2026-11-25, docs/results/notes-2026-11-25.md"},
    {&LaunchPolicy::scalarTupleUnroll, 16, "H100, 2026-11-25, docs/results/notes-2026-11-25.md"},
    {&LaunchPolicy::laterCombineLanesUnroll, 2, "H100, 2026-11-26, docs/results/notes-2026-11-26-2.md"},
};

// What a family's rows say where only sm_90 measured the value.
constexpr const char* kSm90Unmeasured = "default, not measured here (sm_90's value)";

// A100 (sm_80): sm_90's values, none measured on an A100 yet.
constexpr LaunchPolicyValue kSm80[] = {
    {&LaunchPolicy::maxWaves, 8, kSm90Unmeasured},
    {&LaunchPolicy::fullWaveSharePercent, 90, kSm90Unmeasured},
    {&LaunchPolicy::shortTrip, 8, kSm90Unmeasured},
    {&LaunchPolicy::maxEvenTrip, 16, kSm90Unmeasured},
    {&LaunchPolicy::maxUnsplitTrip, 12, kSm90Unmeasured},
    {&LaunchPolicy::maxUnsplitMaskedTrip, 4, kSm90Unmeasured},
    {&LaunchPolicy::minUnsplitRows, 16, kSm90Unmeasured},
    {&LaunchPolicy::defaultItems, 8, kSm90Unmeasured},
    {&LaunchPolicy::largeAllReduceElements, 1 << 16, kSm90Unmeasured},
    {&LaunchPolicy::largeAllReduceItems, 4, kSm90Unmeasured},
    {&LaunchPolicy::smallLaunchWaves, 4, kSm90Unmeasured},
    {&LaunchPolicy::smallLaunchItems, 4, kSm90Unmeasured},
    {&LaunchPolicy::underOneWaveItems, 2, kSm90Unmeasured},
    {&LaunchPolicy::smallRowThreads, 512, kSm90Unmeasured},
    {&LaunchPolicy::smallAllReduceThreads, 64, kSm90Unmeasured},
    {&LaunchPolicy::maxElementwiseBlocks, 1 << 24, kSm90Unmeasured},
    {&LaunchPolicy::rowResidentWaves, 2, kSm90Unmeasured},
    {&LaunchPolicy::longRowWaveDivisor, 4, kSm90Unmeasured},
    {&LaunchPolicy::longRowThreads, 1024, kSm90Unmeasured},
    {&LaunchPolicy::longRowHalfThreads, 512, kSm90Unmeasured},
    {&LaunchPolicy::rowResidentItems, 4, kSm90Unmeasured},
    {&LaunchPolicy::sparseRowResidentItems, 2, kSm90Unmeasured},
    {&LaunchPolicy::minScanTilesToSplit, 16, kSm90Unmeasured},
    {&LaunchPolicy::vectorBytes, 16, kSm90Unmeasured},
    {&LaunchPolicy::elementwiseLoadBytes, 32, kSm90Unmeasured},
    {&LaunchPolicy::minElements, 1 << 16, kSm90Unmeasured},
    {&LaunchPolicy::minColumnsForWideLanes, 8192, kSm90Unmeasured},
    {&LaunchPolicy::minColumnsForLanes, 1024, kSm90Unmeasured},
    {&LaunchPolicy::minRowsForNarrowLanes, 8192, kSm90Unmeasured},
    {&LaunchPolicy::narrowColumnLanes, 4, kSm90Unmeasured},
    {&LaunchPolicy::minColumnsForPairs, 512, kSm90Unmeasured},
    {&LaunchPolicy::columnPairLanes, 2, kSm90Unmeasured},
    {&LaunchPolicy::maxColumnPairBytes, 2, kSm90Unmeasured},
    {&LaunchPolicy::minColumnsForWordLanes, 768, kSm90Unmeasured},
    {&LaunchPolicy::wordLaneBytes, 4, kSm90Unmeasured},
    {&LaunchPolicy::minElementsForNarrowLanes, 6 << 20, kSm90Unmeasured},
    {&LaunchPolicy::columnScanLanes, 8, kSm90Unmeasured},
    {&LaunchPolicy::defaultUnroll, 4, kSm90Unmeasured},
    {&LaunchPolicy::longRowElements, 16384, kSm90Unmeasured},
    {&LaunchPolicy::longRowUnroll, 2, kSm90Unmeasured},
    {&LaunchPolicy::scalarTupleUnroll, 16, kSm90Unmeasured},
    {&LaunchPolicy::laterCombineLanesUnroll, 2, kSm90Unmeasured},
};

// Every other GPU: sm_90's values.
constexpr LaunchPolicyValue kDefault[] = {
    {&LaunchPolicy::maxWaves, 8, kSm90Unmeasured},
    {&LaunchPolicy::fullWaveSharePercent, 90, kSm90Unmeasured},
    {&LaunchPolicy::shortTrip, 8, kSm90Unmeasured},
    {&LaunchPolicy::maxEvenTrip, 16, kSm90Unmeasured},
    {&LaunchPolicy::maxUnsplitTrip, 12, kSm90Unmeasured},
    {&LaunchPolicy::maxUnsplitMaskedTrip, 4, kSm90Unmeasured},
    {&LaunchPolicy::minUnsplitRows, 16, kSm90Unmeasured},
    {&LaunchPolicy::defaultItems, 8, kSm90Unmeasured},
    {&LaunchPolicy::largeAllReduceElements, 1 << 16, kSm90Unmeasured},
    {&LaunchPolicy::largeAllReduceItems, 4, kSm90Unmeasured},
    {&LaunchPolicy::smallLaunchWaves, 4, kSm90Unmeasured},
    {&LaunchPolicy::smallLaunchItems, 4, kSm90Unmeasured},
    {&LaunchPolicy::underOneWaveItems, 2, kSm90Unmeasured},
    {&LaunchPolicy::smallRowThreads, 512, kSm90Unmeasured},
    {&LaunchPolicy::smallAllReduceThreads, 64, kSm90Unmeasured},
    {&LaunchPolicy::maxElementwiseBlocks, 1 << 24, kSm90Unmeasured},
    {&LaunchPolicy::rowResidentWaves, 2, kSm90Unmeasured},
    {&LaunchPolicy::longRowWaveDivisor, 4, kSm90Unmeasured},
    {&LaunchPolicy::longRowThreads, 1024, kSm90Unmeasured},
    {&LaunchPolicy::longRowHalfThreads, 512, kSm90Unmeasured},
    {&LaunchPolicy::rowResidentItems, 4, kSm90Unmeasured},
    {&LaunchPolicy::sparseRowResidentItems, 2, kSm90Unmeasured},
    {&LaunchPolicy::minScanTilesToSplit, 16, kSm90Unmeasured},
    {&LaunchPolicy::vectorBytes, 16, kSm90Unmeasured},
    {&LaunchPolicy::elementwiseLoadBytes, 32, kSm90Unmeasured},
    {&LaunchPolicy::minElements, 1 << 16, kSm90Unmeasured},
    {&LaunchPolicy::minColumnsForWideLanes, 8192, kSm90Unmeasured},
    {&LaunchPolicy::minColumnsForLanes, 1024, kSm90Unmeasured},
    {&LaunchPolicy::minRowsForNarrowLanes, 8192, kSm90Unmeasured},
    {&LaunchPolicy::narrowColumnLanes, 4, kSm90Unmeasured},
    {&LaunchPolicy::minColumnsForPairs, 512, kSm90Unmeasured},
    {&LaunchPolicy::columnPairLanes, 2, kSm90Unmeasured},
    {&LaunchPolicy::maxColumnPairBytes, 2, kSm90Unmeasured},
    {&LaunchPolicy::minColumnsForWordLanes, 768, kSm90Unmeasured},
    {&LaunchPolicy::wordLaneBytes, 4, kSm90Unmeasured},
    {&LaunchPolicy::minElementsForNarrowLanes, 6 << 20, kSm90Unmeasured},
    {&LaunchPolicy::columnScanLanes, 8, kSm90Unmeasured},
    {&LaunchPolicy::defaultUnroll, 4, kSm90Unmeasured},
    {&LaunchPolicy::longRowElements, 16384, kSm90Unmeasured},
    {&LaunchPolicy::longRowUnroll, 2, kSm90Unmeasured},
    {&LaunchPolicy::scalarTupleUnroll, 16, kSm90Unmeasured},
    {&LaunchPolicy::laterCombineLanesUnroll, 2, kSm90Unmeasured},
};

// Whether `rows` names each field of kFields exactly once.
constexpr bool namesEveryFieldOnce(std::span<const LaunchPolicyValue> rows) {
  if (rows.size() != std::size(kFields)) return false;
  for (const LaunchPolicyField& f : kFields) {
    int named = 0;
    for (const LaunchPolicyValue& r : rows) named += r.field == f.field ? 1 : 0;
    if (named != 1) return false;
  }
  return true;
}
static_assert(namesEveryFieldOnce(kSm90) && namesEveryFieldOnce(kSm80) && namesEveryFieldOnce(kDefault),
              "a launch policy table misses a field or names one twice");

constexpr LaunchPolicyTable kTables[] = {
    {"sm_90", 9, 0, kSm90},
    {"sm_80", 8, 0, kSm80},
    {"default", 0, 0, kDefault},  // last: launchPolicyTableFor falls back to it
};

constexpr LaunchPolicy policyOf(std::span<const LaunchPolicyValue> rows) {
  LaunchPolicy p{};
  for (const LaunchPolicyValue& r : rows) p.*r.field = r.value;
  return p;
}

// kTables' policies, in its order.
constexpr auto kPolicies = [] {
  std::array<LaunchPolicy, std::size(kTables)> policies{};
  for (size_t k = 0; k < policies.size(); ++k) policies[k] = policyOf(kTables[k].rows);
  return policies;
}();

size_t tableIndexFor(int ccMajor, int ccMinor) {
  for (size_t k = 0; k + 1 < std::size(kTables); ++k)
    if (kTables[k].ccMajor == ccMajor && kTables[k].ccMinor == ccMinor) return k;
  return std::size(kTables) - 1;
}

}  // namespace

std::span<const LaunchPolicyField> launchPolicyFields() { return kFields; }
std::span<const LaunchPolicyTable> launchPolicyTables() { return kTables; }

const LaunchPolicyTable& launchPolicyTableFor(int ccMajor, int ccMinor) {
  return kTables[tableIndexFor(ccMajor, ccMinor)];
}

const LaunchPolicy& launchPolicyFor(int ccMajor, int ccMinor) { return kPolicies[tableIndexFor(ccMajor, ccMinor)]; }

}  // namespace polyred
