// Random graphs on the GPU: tests/random_graphs.h's generator with its GPU sizes (ranks
// up to 6, rows longer than a block, rows spread over many blocks, vector lanes off
// their boundary, grids of several waves; up to 2^22 elements), each graph compiled
// for this GPU, launched, compared with the reference interpreter, launched twice more
// and compared bit for bit with the first launch where the result cannot depend on
// the order of accumulation (deterministic mode, or integer and bool outputs).
// Seeds alternate deterministic mode. Tuple reductions (argmax/argmin, var_mean,
// logsumexp), user-declared reductions, index ops, complex64 graphs, softmax and layer
// norm graphs and independent graphs side by side (one fused launch) are run the same
// way. About a third of the outputs are written in place of an input (an Assign:
// canon/in_place_hazards; the repeated launches start from the same inputs again). A
// failure prints the seed, what the graph exercises, the graph and the
// comparison; POLYRED_RANDOM_GPU_SEEDS=FIRST:COUNT runs other seeds.
// Without a GPU every test is skipped.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "driver/gpu_run.h"
#include "driver/pipeline.h"
#include "random_graphs.h"
#include "random_parallel_graphs.h"
#include "runtime/executor.h"
#include "support/error.h"

namespace polyred {
namespace {

using namespace random_graphs;

// The seeds a test runs: its own default, or POLYRED_RANDOM_GPU_SEEDS=FIRST:COUNT.
SeedRange seedsFor(int defaultCount) { return seedsFrom("POLYRED_RANDOM_GPU_SEEDS", defaultCount); }

// Integer and bool outputs do not depend on the order of accumulation.
bool exactOutputs(const Graph& g) {
  for (const Output& o : g.outputs) {
    const DType t = g.tensor(o.tensor).dtype;
    if (isFloat(t) || isComplex(t)) return false;
  }
  return true;
}

struct Tally {
  int graphs = 0;  // run, however they ended
  int checked = 0, skipped = 0, multiBlockKernels = 0, fusedLaunches = 0;
  int inPlace = 0, staged = 0;  // graphs checked with outputs written into their inputs; of them, staged ones
  std::vector<uint64_t> failedSeeds;
};

void runOne(const Generated& gen, uint64_t seed, const Target& target, Tally& tally) {
  const Graph& g = gen.graph;
  CompileOptions options;
  options.target = target;
  options.deterministic = seed % 2 == 1;
  auto fail = [&](const std::string& what) {
    tally.failedSeeds.push_back(seed);
    ADD_FAILURE() << "seed " << seed << " (" << describe(gen.features) << "), deterministic "
                  << options.deterministic << ":\n"
                  << what << "\n"
                  << g.toString();
  };
  try {
    CompiledGraph c = compileGraph(g, options);
    GpuRunOptions run;
    run.seed = seed;
    run.time = false;
    run.repeatChecks = 2;
    GpuRunReport r = runOnGpu(c, run);
    if (!r.ok) return fail("GPU result differs from the reference:\n" + r.check);
    if ((options.deterministic || exactOutputs(g)) && !r.bitwiseRepeatable)
      return fail("a repeated launch gave other bytes than the first");
    for (const KernelSpec& k : c.program.kernels) {
      tally.multiBlockKernels += !k.workspaces.empty();
      tally.fusedLaunches += !k.parts.empty();
    }
    ++tally.checked;
    tally.inPlace += gen.features.inPlace;
    tally.staged += !c.partition.staged.empty();
  } catch (const UnsupportedError&) {
    ++tally.skipped;
  } catch (const std::exception& e) {
    fail(std::string("exception: ") + e.what());
  }
}

// Runs the graphs `make` builds from the test's seeds (seedsFor(defaultCount)) on the GPU.
Tally runRandomGraphs(int defaultCount, const std::function<Generated(uint64_t)>& make) {
  const Target target = currentTarget();
  const SeedRange seeds = seedsFor(defaultCount);
  Tally tally;
  tally.graphs = seeds.count;
  for (uint64_t seed = seeds.first; seed < seeds.first + static_cast<uint64_t>(seeds.count); ++seed)
    runOne(make(seed), seed, target, tally);
  return tally;
}

// A generator's method as `make`, on the GPU sizes.
std::function<Generated(uint64_t)> drawn(Generated (GraphGenerator::*method)()) {
  return [method](uint64_t seed) { return (GraphGenerator(seed, gpuSizes()).*method)(); };
}

TEST(RandomGraphsGpu, ReductionGraphsMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  const Tally tally = runRandomGraphs(160, drawn(&GraphGenerator::reductionGraph));
  EXPECT_TRUE(tally.failedSeeds.empty()) << "failing seeds:" << seedList(tally.failedSeeds);
  EXPECT_LT(tally.skipped * 10, tally.graphs) << tally.skipped << " graphs rejected as unsupported";
  // The GPU sizes exist to reach cross-block combines; a run without them tests little.
  EXPECT_GE(tally.multiBlockKernels, tally.graphs / 10);
  std::printf("%d random reduction graphs matched on the GPU (%d kernels with a cross-block workspace; %d with "
              "in-place outputs, %d of them staged)\n",
              tally.checked, tally.multiBlockKernels, tally.inPlace, tally.staged);
}

TEST(RandomGraphsGpu, ElementwiseGraphsMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  const Tally tally = runRandomGraphs(20, drawn(&GraphGenerator::elementwiseGraph));
  EXPECT_TRUE(tally.failedSeeds.empty()) << "failing seeds:" << seedList(tally.failedSeeds);
  EXPECT_EQ(tally.skipped, 0);
}

// Graphs every generated kernel of which must compile (no unsupported case expected).
void expectAllMatch(int defaultCount, Generated (GraphGenerator::*method)()) {
  const Tally tally = runRandomGraphs(defaultCount, drawn(method));
  EXPECT_TRUE(tally.failedSeeds.empty()) << "failing seeds:" << seedList(tally.failedSeeds);
  EXPECT_EQ(tally.skipped, 0);
  std::printf("%d random graphs matched on the GPU (%d kernels with a cross-block workspace; %d with in-place outputs, "
              "%d of them staged)\n",
              tally.checked, tally.multiBlockKernels, tally.inPlace, tally.staged);
}

TEST(RandomGraphsGpu, TupleGraphsMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  expectAllMatch(60, &GraphGenerator::tupleGraph);
}

// User-declared reductions: a scalar max-|x| combiner and ordered (non-commutative)
// tuples, whose cross-block combine must keep the order of the blocks.
TEST(RandomGraphsGpu, UserReductionGraphsMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  expectAllMatch(40, &GraphGenerator::userReductionGraph);
}

// Iota masks and Window views (crops, wrapped shifts, larger views) before a reduction.
TEST(RandomGraphsGpu, IndexOpGraphsMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  expectAllMatch(40, &GraphGenerator::indexOpsGraph);
}

// Softmax and layer norm over random chains (dependent reductions, row-resident
// passes; on sm_90 many long rows are staged in shared memory). The slowest of these
// tests: more than a minute on the H100 machine (2026-11-28).
TEST(RandomGraphsGpu, RowPassGraphsMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  expectAllMatch(40, &GraphGenerator::rowPassesGraph);
}

// Segment sums: atomic scatters (float atomics in varying order, so only integer ones
// must repeat bitwise; deterministic seeds take masked sums) and masked 16/8-bit ones.
TEST(RandomGraphsGpu, ScatterGraphsMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  expectAllMatch(40, &GraphGenerator::scatterGraph);
}

// Scans along random axes of GPU-sized shapes: rows and columns over several blocks
// (the look-back), strided lanes down columns, scans read at their points and reduced.
TEST(RandomGraphsGpu, ScanGraphsMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  expectAllMatch(40, &GraphGenerator::scanGraph);
}

// complex64 sums and products over random axes.
TEST(RandomGraphsGpu, ComplexGraphsMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  expectAllMatch(40, &GraphGenerator::complexGraph);
}

TEST(RandomGraphsGpu, ParallelGraphsMatchTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  const Tally tally = runRandomGraphs(20, [](uint64_t seed) { return parallelGraph(seed, gpuSizes()); });
  EXPECT_TRUE(tally.failedSeeds.empty()) << "failing seeds:" << seedList(tally.failedSeeds);
  EXPECT_GE(tally.fusedLaunches, tally.graphs / 2) << "too few graphs were fused horizontally";
}

}  // namespace
}  // namespace polyred
