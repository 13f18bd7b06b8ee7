// Property tests of the whole compiler pipeline on random graphs (tests/random_graphs.h
// builds them from seeds, with its small CPU sizes). Each graph is compiled
// (alternating deterministic mode and the target's SM count) and its lowered program
// must match the reference interpreter on the CPU. A failure prints the seed, the graph
// and the partition, enough to reproduce it. tests/gpu/random_graphs_gpu_test.cc runs
// the same generator's larger shapes on the GPU.
#include <gtest/gtest.h>

#include <cstdio>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "canon/partition.h"
#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "runtime/nvrtc.h"
#include "frontend/builder.h"
#include "frontend/composite_reader.h"
#include "interp/point_reference.h"
#include "interp/random_inputs.h"
#include "interp/reference.h"
#include "poly/binding.h"
#include "random_graphs.h"
#include "random_parallel_graphs.h"
#include "support/error.h"

namespace polyred {
namespace {

constexpr int kReductionGraphs = 300;
constexpr int kElementwiseGraphs = 30;
using namespace random_graphs;

struct RunStats {
  int checked = 0, skipped = 0, fusedLaunches = 0;
  std::vector<uint64_t> failedSeeds;
};

// Seeds alternate deterministic mode and cycle through targets of 1, 8 and 132 SMs.
CompileOptions optionsFor(uint64_t seed) {
  CompileOptions options;
  options.deterministic = seed % 2 == 1;
  options.target.smCount = std::vector<int>{1, 8, 132}[seed % 3];
  return options;
}

// Compiles and CPU-checks one graph; failures are reported with everything needed to
// reproduce them. UnsupportedError counts as a skip.
void compileAndCheck(const Generated& gen, uint64_t seed, RunStats& stats) {
  const Graph& g = gen.graph;
  CompileOptions options = optionsFor(seed);
  auto fail = [&](const std::string& what) {
    stats.failedSeeds.push_back(seed);
    std::string partition;
    try {
      partition = partitionGraph(g, [](const CanonicalSpace& s) { return rowsFitOneBlock(s, Target{}); }).toString(g);
    } catch (const std::exception& e) {
      partition = std::string("(partition failed: ") + e.what() + ")\n";
    }
    ADD_FAILURE() << "seed " << seed << " (" << describe(gen.features) << "), deterministic "
                  << options.deterministic << ", smCount " << options.target.smCount << ":\n"
                  << what << "\n" << g.toString() << partition;
  };
  try {
    CompiledGraph c = compileGraph(g, options);
    CpuCheckReport r = checkOnCpu(c, seed, /*maxPoints=*/0, options.deterministic);
    if (!r.ok) return fail("CPU check mismatch:\n" + r.message);
    if (r.sampled) return fail("CPU check was sampled although maxPoints is 0");
    // Horizontally fused launches (the parts are what the CPU check ran) must compile.
    for (const KernelSpec& k : c.program.kernels) {
      if (k.parts.empty()) continue;
      ++stats.fusedLaunches;
      try {
        compileCuda(k.source, k.name, 9, 0);
      } catch (const CompileError& e) {
        return fail("NVRTC rejected the fused launch " + k.name + ":\n" + e.log() + "\n" + k.source);
      }
    }
    ++stats.checked;
  } catch (const UnsupportedError&) {
    ++stats.skipped;
  } catch (const std::exception& e) {
    fail(std::string("exception: ") + e.what());
  }
}

// Compiles and CPU-checks the graphs `make` builds from seeds 1..count (or
// POLYRED_RANDOM_SEEDS=FIRST:COUNT); `kinds` (if given) collects the tuple kinds they
// exercise.
RunStats checkRandomGraphs(int count, const std::function<Generated(uint64_t)>& make,
                           std::set<std::string>* kinds = nullptr) {
  RunStats stats;
  const SeedRange seeds = seedsFrom("POLYRED_RANDOM_SEEDS", count);
  for (uint64_t seed = seeds.first; seed < seeds.first + static_cast<uint64_t>(seeds.count); ++seed) {
    Generated gen = make(seed);
    if (kinds) kinds->insert(gen.features.tuple);
    compileAndCheck(gen, seed, stats);
  }
  return stats;
}

// A generator's method as `make`, on the CPU sizes.
std::function<Generated(uint64_t)> drawn(Generated (GraphGenerator::*method)()) {
  return [method](uint64_t seed) { return (GraphGenerator(seed).*method)(); };
}

// `count` graphs of a generator method all match the reference, none is skipped, and
// they cover `kinds` kinds (Features::tuple): `which` names them.
void expectEveryKindChecked(int count, Generated (GraphGenerator::*method)(), size_t kinds, const char* which) {
  std::set<std::string> seen;
  RunStats stats = checkRandomGraphs(count, drawn(method), &seen);
  EXPECT_TRUE(stats.failedSeeds.empty()) << "failing seeds:" << seedList(stats.failedSeeds);
  EXPECT_EQ(stats.skipped, 0);
  EXPECT_EQ(seen.size(), kinds) << which;
}

TEST(PipelineProperty, RandomReductionGraphsMatchTheReference) {
  RunStats stats = checkRandomGraphs(kReductionGraphs, drawn(&GraphGenerator::reductionGraph));
  EXPECT_TRUE(stats.failedSeeds.empty()) << "failing seeds:" << seedList(stats.failedSeeds);
  // The generator only builds graphs polyred supports; a high skip rate would mean the
  // test silently checks little.
  const int drawnGraphs = seedsFrom("POLYRED_RANDOM_SEEDS", kReductionGraphs).count;  // CI's or the environment's
  EXPECT_LT(stats.skipped * 10, drawnGraphs) << stats.skipped << " graphs rejected as unsupported";
  EXPECT_EQ(stats.checked + stats.skipped + static_cast<int>(stats.failedSeeds.size()), drawnGraphs);
  std::printf("%d random reduction graphs checked, %d fused launches compiled by NVRTC\n", stats.checked,
              stats.fusedLaunches);
}

TEST(PipelineProperty, RandomElementwiseGraphsMatchTheReference) {
  RunStats stats = checkRandomGraphs(kElementwiseGraphs, drawn(&GraphGenerator::elementwiseGraph));
  EXPECT_TRUE(stats.failedSeeds.empty()) << "failing seeds:" << seedList(stats.failedSeeds);
  EXPECT_EQ(stats.skipped, 0);
}

// Tuple reductions (argmax/argmin with and without the value, var_mean, logsumexp)
// over random producer chains, shapes and axes.
TEST(PipelineProperty, RandomTupleGraphsMatchTheReference) {
  expectEveryKindChecked(120, &GraphGenerator::tupleGraph, 6, "argmax, argmin (each with and without the value), var_mean and logsumexp");
}

// User-declared reductions over random producer chains, shapes and axes: a scalar
// combiner (max |x|) of float32 chains, ordered tuples (affine maps, a hash, the last
// value) of int32 chains.
TEST(PipelineProperty, RandomUserReductionGraphsMatchTheReference) {
  expectEveryKindChecked(100, &GraphGenerator::userReductionGraph, 4, "max_abs, affine, hash and last");
}

// Index ops among the producers: a coordinate mask (Iota == k, as OneHot expands) and a
// Window (crop, wrapped shift, larger view) before a reduction over random axes.
TEST(PipelineProperty, RandomIndexOpGraphsMatchTheReference) {
  constexpr int kIndexGraphs = 60;
  RunStats stats = checkRandomGraphs(kIndexGraphs, drawn(&GraphGenerator::indexOpsGraph));
  EXPECT_TRUE(stats.failedSeeds.empty()) << "failing seeds:" << seedList(stats.failedSeeds);
  EXPECT_EQ(stats.skipped, 0);
}

// Segment sums (ScatterAdd) of producer chains: atomic scatters and masked sums, ids of
// either width over 0 to all axes, sometimes a reduction of the same values beside.
TEST(PipelineProperty, RandomScatterGraphsMatchTheReference) {
  expectEveryKindChecked(60, &GraphGenerator::scatterGraph, 2, "atomic scatters and scatters through a temporary");
}

// Scans (CumSum, CumProd, running max/min, and/or) of producer chains along random
// axes, exclusive and reversed: stored, read again at their points, or reduced.
TEST(PipelineProperty, RandomScanGraphsMatchTheReference) {
  expectEveryKindChecked(90, &GraphGenerator::scanGraph, 3, "scans stored, read at their points and reduced");
}

// complex64 values from float32 chains, complex arithmetic, sums and products over
// random axes, real and imaginary parts of the result.
TEST(PipelineProperty, RandomComplexGraphsMatchTheReference) {
  expectEveryKindChecked(80, &GraphGenerator::complexGraph, 2, "complex sums and products");
}

TEST(PipelineProperty, GeneratorCoversTheFeatureSpace) {
  std::set<std::pair<DType, BuiltinCombiner>> reductions;
  std::map<CanonicalForm, int> forms;
  std::map<std::string, int> counts;
  int maxChain = 0, multiBlock = 0, noise = 0;
  for (uint64_t seed = 1; seed <= kReductionGraphs; ++seed) {
    Generated gen = GraphGenerator(seed).reductionGraph();
    const Features& f = gen.features;
    reductions.insert({f.dtype, f.reduction});
    noise += f.noise;
    maxChain = std::max(maxChain, f.maxChain);
    for (const auto& [name, on] : flags(f)) counts[name] += on;
    try {
      for (const KernelPlan& k : partitionGraph(gen.graph, [](const CanonicalSpace& s) { return rowsFitOneBlock(s, Target{}); }).kernels) {
        ++forms[k.form];
        multiBlock += chooseBinding(k, optionsFor(seed).target).multiBlock();
      }
    } catch (const UnsupportedError&) {
    }
  }
  for (DType t : kDTypes)
    for (BuiltinCombiner r : reductionsFor(t))
      EXPECT_TRUE(reductions.count({t, r})) << dtypeName(t) << " " << builtinReduction(r, t).name << " never generated";
  EXPECT_EQ(maxChain, 5);
  for (const auto& [name, n] : counts) EXPECT_GE(n, kReductionGraphs / 10) << name;
  EXPECT_GE(noise, kReductionGraphs / 100);
  for (CanonicalForm f : {CanonicalForm::AllReduce, CanonicalForm::XReduce, CanonicalForm::YReduce})
    EXPECT_GE(forms[f], kReductionGraphs / 10) << formName(f);
  EXPECT_GE(multiBlock, kReductionGraphs / 10);
}

// Softmax and layer norm (dependent reductions over the same axes) over random chains,
// shapes and axes: row-resident passes where the rows fit a block, kernel sequences
// elsewhere.
TEST(PipelineProperty, RandomRowPassGraphsMatchTheReference) {
  constexpr int kRowPassGraphs = 60;
  RunStats stats = checkRandomGraphs(kRowPassGraphs, drawn(&GraphGenerator::rowPassesGraph));
  EXPECT_TRUE(stats.failedSeeds.empty()) << "failing seeds:" << seedList(stats.failedSeeds);
  EXPECT_EQ(stats.skipped, 0);
}

// The GPU test's row-pass graphs (RandomGraphsGpu.RowPassGraphsMatchTheReference)
// compile, pass the sampled CPU check, and a fair share of them stage their rows.
TEST(PipelineProperty, GpuSizedRowPassGraphsCheckOnTheCpuAndStageRows) {
  constexpr int kGraphs = 40;  // the GPU test's default count
  int staged = 0;
  for (uint64_t seed = 1; seed <= kGraphs; ++seed) {
    Generated gen = GraphGenerator(seed, gpuSizes()).rowPassesGraph();
    CompiledGraph c = compileGraph(gen.graph, CompileOptions{});
    for (const KernelSpec& k : c.program.kernels) staged += k.source.find("pr_stage_row(") != std::string::npos;
    CpuCheckReport r = checkOnCpu(c, seed, /*maxPoints=*/2000, /*deterministic=*/false);
    EXPECT_TRUE(r.ok) << "seed " << seed << " (" << describe(gen.features) << "):\n" << r.message << gen.graph.toString();
  }
  EXPECT_GE(staged, kGraphs / 5);
  std::printf("GPU-sized row-pass graphs: %d staged kernels\n", staged);
}

// The GPU sizes (tests/gpu/random_graphs_gpu_test.cc runs them, with more ops) compile
// for an H100-like target without a GPU, pass the CPU check on sampled points, and
// reach what they are there for: rows longer than a block, cross-block combines and
// every canonical form.
TEST(PipelineProperty, GpuSizedGraphsCheckOnTheCpuAndReachLongRowsAndManyBlocks) {
  constexpr int kGraphs = 160;  // the GPU test's default count
  constexpr int64_t kSampledPoints = 3000;
  std::map<CanonicalForm, int> forms;
  int multiBlock = 0, longRows = 0, skipped = 0;
  for (uint64_t seed = 1; seed <= kGraphs; ++seed) {
    Generated gen = GraphGenerator(seed, gpuSizes()).reductionGraph();
    CompileOptions options;
    options.deterministic = seed % 2 == 1;
    try {
      CompiledGraph c = compileGraph(gen.graph, options);
      for (const KernelPlan& k : c.partition.kernels) {
        ++forms[k.form];
        longRows += (k.form == CanonicalForm::XReduce || k.form == CanonicalForm::AllReduce) && k.N > 1024;
      }
      for (const KernelSpec& k : c.program.kernels) multiBlock += !k.workspaces.empty();
      CpuCheckReport r = checkOnCpu(c, seed, kSampledPoints, options.deterministic);
      EXPECT_TRUE(r.ok) << "seed " << seed << " (" << describe(gen.features) << "):\n"
                        << r.message << gen.graph.toString();
    } catch (const UnsupportedError&) {
      ++skipped;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "seed " << seed << " (" << describe(gen.features) << "): " << e.what() << "\n"
                    << gen.graph.toString();
    }
  }
  EXPECT_LT(skipped * 10, kGraphs);
  for (CanonicalForm f : {CanonicalForm::AllReduce, CanonicalForm::XReduce, CanonicalForm::YReduce})
    EXPECT_GE(forms[f], kGraphs / 10) << formName(f);
  EXPECT_GE(multiBlock, kGraphs / 10);
  EXPECT_GE(longRows, kGraphs / 10);
  std::printf("GPU sizes: %d kernels with a cross-block workspace, %d rows longer than a block\n", multiBlock,
              longRows);
}

// Elementwise graphs of GPU sizes (RandomGraphsGpu's): checked on the CPU (sampled),
// and among them outputs whose flat size the lane count does not divide, which keep
// their lanes with the last vector masked (poly/vectorize.h).
TEST(PipelineProperty, GpuSizedElementwiseGraphsCheckOnTheCpuAndReachMaskedLanes) {
  constexpr int kGraphs = 40;
  int masked = 0, vectorized = 0;
  for (uint64_t seed = 1; seed <= kGraphs; ++seed) {
    Generated gen = GraphGenerator(seed, gpuSizes()).elementwiseGraph();
    try {
      CompiledGraph c = compileGraph(gen.graph, CompileOptions{});
      for (const PolyKernel& k : c.kernels) {
        if (k.plan.form != CanonicalForm::Elementwise || k.vector.width == 1) continue;
        ++vectorized;
        masked += k.vector.masked();
      }
      CpuCheckReport r = checkOnCpu(c, seed, 3000, false);
      EXPECT_TRUE(r.ok) << "seed " << seed << " (" << describe(gen.features) << "):\n" << r.message << gen.graph.toString();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "seed " << seed << " (" << describe(gen.features) << "): " << e.what() << "\n" << gen.graph.toString();
    }
  }
  std::printf("GPU-sized elementwise graphs: %d kernels with lanes, %d of them masked\n", vectorized, masked);
  EXPECT_GE(masked, 1);
  EXPECT_GE(vectorized, kGraphs / 4);
}

// The one-element reference (interp/point_reference) is the oracle of large checks:
// on every random graph it must give bit for bit what the whole-tensor reference gives.
TEST(PipelineProperty, PointReferenceEqualsTheWholeReference) {
  int compared = 0;
  for (uint64_t seed = 1; seed <= kReductionGraphs + kElementwiseGraphs; ++seed) {
    GraphGenerator gen(seed);
    Generated made = seed <= kReductionGraphs ? gen.reductionGraph() : gen.elementwiseGraph();
    const Graph& g = made.graph;
    std::vector<HostTensor> inputs = makeRandomInputs(g, seed);
    std::vector<HostTensor> whole = evaluateReference(g, inputs);
    PointReference points(g, inputs);
    for (size_t o = 0; o < g.outputs.size(); ++o)
      for (int64_t k = 0; k < whole[o].size(); ++k) {
        Scalar want = whole[o].get(k);
        Scalar got = points.value(g.outputs[o].tensor, k).castTo(want.type);
        ASSERT_TRUE(got.identical(want)) << "seed " << seed << " output " << o << " element " << k << ": got "
                                         << got.toString() << ", expected " << want.toString() << "\n"
                                         << g.toString();
        ++compared;
      }
  }
  EXPECT_GT(compared, 100000);
}

// Random parallel graphs: every part's kernels share launches with the other parts'
// (horizontal fusion); the parts pass the CPU check and every fused launch compiles.
TEST(PipelineProperty, RandomParallelGraphsFuseCheckAndCompile) {
  constexpr int kParallelGraphs = 30;
  RunStats stats = checkRandomGraphs(kParallelGraphs, [](uint64_t seed) { return parallelGraph(seed); });
  EXPECT_TRUE(stats.failedSeeds.empty()) << "failing seeds:" << seedList(stats.failedSeeds);
  EXPECT_GE(stats.fusedLaunches, kParallelGraphs / 2) << "too few graphs were fused horizontally";
  std::printf("%d random parallel graphs checked, %d fused launches compiled by NVRTC\n", stats.checked,
              stats.fusedLaunches);
}

}  // namespace
}  // namespace polyred
