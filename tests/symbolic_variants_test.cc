// Row variants of symbolic kernels (driver/row_variants.h): a symbolic layer norm,
// RMSNorm and softmax compile one kernel per binding the static policy takes over
// their row counts. At every size the kernel a launch picks (kernelForRows) is bound
// as the static compile of the graph at that size binds its kernel; each variant runs
// on the CPU executor at sizes on both sides of its range's ends (1, primes, the
// thresholds) against the reference; the dumps list the variants with their rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <set>
#include <utility>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "codegen/symbolic_launch.h"
#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "driver/row_variants.h"
#include "frontend/builder.h"
#include "ir/symbolic_dims.h"
#include "symbolic_graphs.h"

namespace polyred {
namespace {

using testgraphs::symbolicLayerNorm;
using testgraphs::symbolicSoftmax;

// RMSNorm of [S, H] float16 rows, computed in float32.
Graph rmsNorm(int64_t hidden) {
  GraphBuilder b("variants_rms_norm");
  Value x = b.cast(b.symbolicInput("x", DType::Float16, {"S", hidden}), DType::Float32);
  Value w = b.input("w", DType::Float16, {hidden});
  Value ms = b.binary(OpKind::Div, b.reduceSum(b.mul(x, x), {1}, true),
                      b.constant(Scalar::ofFloat(DType::Float32, static_cast<double>(hidden))));
  Value r = b.unary(OpKind::Rsqrt, b.add(ms, b.constant(Scalar::ofFloat(DType::Float32, 1e-6))));
  b.output(b.mul(b.cast(b.mul(x, r), DType::Float16), w));
  return b.build();
}

// What decides a kernel's code but for its rows: threads along and across rows, the
// split of j, the lanes.
std::tuple<int, int, int64_t, int> shapeOf(const PolyKernel& k) {
  return {k.binding.BX, k.binding.BY, k.binding.GX, k.vector.width};
}

std::tuple<int, int, int64_t, int> shapeOf(const BoundKernel& b) {
  return {b.binding.BX, b.binding.BY, b.binding.GX, b.vector.width};
}

std::string describe(const PolyKernel& k) {
  return k.plan.name + ": " + k.binding.toString() + ", " + std::to_string(k.vector.width) + " lanes";
}

// The kernels a launch may pick: the variants, then the kernel of the most rows.
std::vector<const PolyKernel*> everyKernel(const PolyKernel& k) {
  std::vector<const PolyKernel*> all;
  for (const PolyKernel& v : k.rowVariants) all.push_back(&v);
  all.push_back(&k);
  return all;
}

// The symbol values at both ends of every variant's rows and beside them (a value of
// S is coefficient * S rows), with 1 and the primes `primes`. Where only the index width
// changes (the same binding on both sides, at 2^31 elements), the end is left to
// Int32IndicesUpTo2To31Elements: past the sizes a static compile and the CPU check
// take in a unit test.
std::vector<int64_t> sizesAtTheEnds(const PolyKernel& k, std::vector<int64_t> primes) {
  std::set<int64_t> sizes(primes.begin(), primes.end());
  sizes.insert(1);
  const int64_t c = k.plan.symbolicRows->coefficient;
  for (size_t v = 0; v < k.rowVariants.size(); ++v) {
    const PolyKernel& next = v + 1 < k.rowVariants.size() ? k.rowVariants[v + 1] : k;
    if (shapeOf(k.rowVariants[v]) == shapeOf(next)) continue;
    const int64_t last = k.rowVariants[v].plan.symbolicRows->mostRows / c;  // the last value of S it serves
    for (int64_t s : {last - 1, last, last + 1, last + 2})
      if (s >= 1) sizes.insert(s);
  }
  return {sizes.begin(), sizes.end()};
}

// At each size, the kernel a launch picks is bound as the static compile at that size
// binds its kernel (the partitions being the same); returns the variants used.
std::set<std::string> expectStaticBindingAtEverySize(const Graph& g, const std::vector<int64_t>& sizes) {
  const CompiledGraph c = compileGraph(g, CompileOptions{});
  std::set<std::string> used;
  for (int64_t s : sizes) {
    const CompiledGraph concrete = compileGraph(instantiate(g, {s}), CompileOptions{});
    EXPECT_TRUE(concrete.graph.symbols.empty());
    if (concrete.kernels.size() != c.kernels.size()) {
      ADD_FAILURE() << g.name << " at S = " << s << ": the static partition differs; pick sizes where it does not";
      continue;
    }
    for (size_t k = 0; k < c.kernels.size(); ++k) {
      const PolyKernel& picked = kernelForRows(c.kernels[k], {s});
      EXPECT_EQ(shapeOf(picked), shapeOf(concrete.kernels[k]))
          << g.name << " at S = " << s << ":\n  symbolic " << describe(picked) << "\n  static   "
          << describe(concrete.kernels[k]);
      used.insert(picked.plan.name);
    }
  }
  return used;
}

void expectMatchesReferenceAt(const CompiledGraph& c, const std::vector<int64_t>& sizes) {
  for (int64_t s : sizes) {
    CpuCheckOptions o;
    o.sizes = {s};
    o.seed = static_cast<uint64_t>(s) + 11;
    o.maxPoints = int64_t{1} << 18;  // past it, a sample of row tiles (the first and last among them)
    const CpuCheckReport r = checkOnCpu(c, o);
    EXPECT_TRUE(r.ok) << c.graph.name << " at S = " << s << " ("
                      << kernelForRows(c.kernels[0], {s}).plan.name << "):\n" << r.message;
  }
}

// The layer norm of the H100 measurement (4 x S rows of 1024, bfloat16): 256 threads
// on one row a block at a few rows, 128 on each of 2 rows with lanes from 64 rows, 64
// on each of 4 from a wave's worth; one variant each.
TEST(SymbolicVariants, LayerNormTakesTheStaticBindingAtEverySize) {
  const Graph g = symbolicLayerNorm(4, 1024, DType::BFloat16);
  const CompiledGraph c = compileGraph(g, CompileOptions{});
  ASSERT_EQ(c.kernels.size(), 1u);
  const PolyKernel& k = c.kernels[0];
  // Two bindings for fewer rows, and the most rows' binding with 32-bit indices.
  ASSERT_EQ(k.rowVariants.size(), 3u) << describeLaunches(c.program);
  const std::vector<int64_t> sizes = sizesAtTheEnds(k, {7, 131, 1009, 3001});
  const std::set<std::string> used = expectStaticBindingAtEverySize(g, sizes);
  EXPECT_EQ(used.size(), 3u) << "a variant served none of the sizes";
  // One row a block, scalar, at S = 1: what the static kernel for 4 rows takes.
  EXPECT_EQ(shapeOf(kernelForRows(k, {1})), std::make_tuple(256, 1, int64_t{1}, 1));
  // The probe's binding for the most rows, as before variants.
  EXPECT_EQ(shapeOf(kernelForRows(k, {symbolProbe(0)})), shapeOf(k));
}

// Kernels serving rows past 2^31 elements have 64-bit indices; every other kernel has
// 32-bit ones, up to the last size at which every index it computes fits. That size is
// at most the one of 2^31 elements (past it some element's index is 2^31), and within
// two blocks' rows of it (the interval analysis counts the last block's rows past S,
// and rounds). The 32-bit kernel there and the 64-bit one past it share a binding.
TEST(SymbolicVariants, Int32IndicesUpTo2To31Elements) {
  for (const auto& [g, elementsPerS] : {std::pair{symbolicLayerNorm(4, 1024, DType::BFloat16), int64_t{4 * 1024}},
                                        std::pair{symbolicLayerNorm(1, 768, DType::Float32), int64_t{768}},
                                        std::pair{rmsNorm(4096), int64_t{4096}},
                                        std::pair{symbolicSoftmax(50257), int64_t{50257}}}) {
    const CompiledGraph c = compileGraph(g, CompileOptions{});
    const PolyKernel& k = c.kernels.at(0);
    const int64_t coefficient = k.plan.symbolicRows->coefficient;
    const int64_t sizeOf2To31Elements = (int64_t{1} << 31) / elementsPerS;
    int64_t lastS = 0;  // the last size a 32-bit kernel serves
    for (const PolyKernel* v : everyKernel(k)) {
      const SymbolicRows& rows = *v->plan.symbolicRows;
      if (!v->index64) lastS = std::max(lastS, rows.mostRows / coefficient);
      else EXPECT_GT(rows.fewestRows / coefficient, sizeOf2To31Elements - 2 * v->binding.BY) << describe(*v);
    }
    EXPECT_LE(lastS, sizeOf2To31Elements) << g.name;
    EXPECT_GE(lastS, sizeOf2To31Elements - 2 * kernelForRows(k, {lastS}).binding.BY) << g.name;
    EXPECT_FALSE(kernelForRows(k, {lastS}).index64) << g.name;
    EXPECT_TRUE(kernelForRows(k, {lastS + 1}).index64) << g.name;
    EXPECT_EQ(shapeOf(kernelForRows(k, {lastS})), shapeOf(kernelForRows(k, {lastS + 1}))) << g.name;
    // The generated code says so: int indices in the one, long long in the other.
    const KernelSpec& spec = c.program.kernels.at(0);
    EXPECT_NE(kernelForRows(spec, {lastS}).source.find("const int bx"), std::string::npos) << g.name;
    EXPECT_NE(kernelForRows(spec, {lastS + 1}).source.find("const long long bx"), std::string::npos) << g.name;
  }
}

TEST(SymbolicVariants, RmsNormAndSoftmaxTakeTheStaticBindingAtEverySize) {
  for (const Graph& g : {rmsNorm(1024), symbolicSoftmax(2000)}) {
    const CompiledGraph c = compileGraph(g, CompileOptions{});
    ASSERT_EQ(c.kernels.size(), 1u) << g.name;
    const PolyKernel& k = c.kernels[0];
    EXPECT_GE(k.rowVariants.size(), 1u) << g.name << ": no variant\n" << describeLaunches(c.program);
    const std::vector<int64_t> sizes = sizesAtTheEnds(k, {3, 97, 4099});
    const std::set<std::string> used = expectStaticBindingAtEverySize(g, sizes);
    // Every kernel whose rows begin within the sizes serves some of them.
    const auto within = [&](const PolyKernel* v) { return v->plan.symbolicRows->fewestRows <= sizes.back(); };
    EXPECT_EQ(used.size(), static_cast<size_t>(std::ranges::count_if(everyKernel(k), within)))
        << g.name << ": a variant served none of the sizes";
  }
}

// The variants' rows cover every count from 0 on, in order, each variant once, and
// their bindings differ from their neighbours'.
TEST(SymbolicVariants, VariantsCoverEveryRowCountOnce) {
  for (const Graph& g : {symbolicLayerNorm(4, 1024, DType::BFloat16), symbolicLayerNorm(1, 768, DType::Float32),
                         rmsNorm(4096), symbolicSoftmax(50257)}) {
    const CompiledGraph c = compileGraph(g, CompileOptions{});
    const KernelPlan& plan = c.partition.kernels.at(0);
    ASSERT_TRUE(plan.symbolicRows) << g.name;
    const std::vector<RowVariant> variants = chooseRowVariants(plan, Target{}, KernelConfig{});
    ASSERT_FALSE(variants.empty());
    EXPECT_LE(variants.size(), kMaxRowVariants) << g.name;
    EXPECT_EQ(variants.front().fewestRows, 0) << g.name;
    EXPECT_EQ(variants.back().mostRows, std::numeric_limits<int64_t>::max()) << g.name;
    for (size_t v = 0; v + 1 < variants.size(); ++v) {
      EXPECT_EQ(variants[v].mostRows + 1, variants[v + 1].fewestRows) << g.name;
      EXPECT_FALSE(sameCodeForRows(variants[v].bound, variants[v + 1].bound)) << g.name;
    }
    // The kernels compiled: each chosen variant, split where its indices stop fitting
    // 32 bits; in order of rows, covering every count, each with its variant's binding.
    int64_t next = 0;
    for (const PolyKernel* k : everyKernel(c.kernels[0])) {
      const SymbolicRows& rows = *k->plan.symbolicRows;
      EXPECT_EQ(rows.fewestRows, next) << g.name;
      next = rows.mostRows == std::numeric_limits<int64_t>::max() ? rows.mostRows : rows.mostRows + 1;
      const auto chosen = std::ranges::find_if(
          variants, [&](const RowVariant& v) { return v.fewestRows <= rows.fewestRows && rows.mostRows <= v.mostRows; });
      ASSERT_NE(chosen, variants.end()) << g.name << ": " << describe(*k) << " serves rows of two variants";
      EXPECT_EQ(shapeOf(*k), shapeOf(chosen->bound)) << g.name;
    }
    EXPECT_EQ(next, std::numeric_limits<int64_t>::max()) << g.name;
    EXPECT_LE(c.kernels[0].rowVariants.size() + 1, 2 * variants.size()) << g.name;
  }
}

// Every variant runs at the ends of its rows and beside them, against the reference.
TEST(SymbolicVariants, EveryVariantMatchesTheReference) {
  for (const Graph& g :
       {symbolicLayerNorm(4, 1024, DType::BFloat16), symbolicLayerNorm(1, 1024, DType::Float32), rmsNorm(1024)}) {
    const CompiledGraph c = compileGraph(g, CompileOptions{});
    ASSERT_FALSE(c.kernels[0].rowVariants.empty()) << g.name;
    expectMatchesReferenceAt(c, sizesAtTheEnds(c.kernels[0], {2, 13}));
  }
}

TEST(SymbolicVariants, DumpsListTheVariantsAndTheirRows) {
  std::ostringstream dumps;
  CompileOptions o;
  o.dump = {"binding", "launches"};
  o.dumpTo = &dumps;
  const CompiledGraph c = compileGraph(symbolicLayerNorm(4, 1024, DType::BFloat16), o);
  const std::string text = dumps.str();
  const KernelSpec& launch = c.program.kernels.at(0);
  ASSERT_EQ(launch.rowVariants.size(), 3u);
  const GridRule& first = launch.rowVariants[0].launch.rows;
  EXPECT_NE(text.find(launch.rowVariants[0].name + " (4*S rows: 0 to " + std::to_string(first.mostRows) + "): block (256,1)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("or, for fewer rows: " + launch.rowVariants[1].name), std::string::npos) << text;
  EXPECT_NE(text.find("where 4*S is " + std::to_string(launch.launch.rows.fewestRows) + " or more"), std::string::npos)
      << text;
  // Each variant's CUDA is its own function; the launch's source is the most rows'.
  EXPECT_NE(launch.rowVariants[0].source.find(launch.rowVariants[0].name + "("), std::string::npos);
  EXPECT_EQ(launch.name, c.kernels[0].plan.name);
}

// A variant for few rows of one block each is row-staged, as the static kernel is
// (the row loop's bound, the size parameter, is the same in every thread).
TEST(SymbolicVariants, AVariantOfOneRowABlockIsRowStaged) {
  const CompiledGraph c = compileGraph(symbolicLayerNorm(4, 1024, DType::BFloat16), CompileOptions{});
  const KernelSpec& fewRows = kernelForRows(c.program.kernels.at(0), {1});
  EXPECT_EQ(fewRows.launch.block[1], 1u);
  EXPECT_NE(fewRows.source.find("pr_stage_row("), std::string::npos) << fewRows.source;
  const CompiledGraph concrete =
      compileGraph(instantiate(symbolicLayerNorm(4, 1024, DType::BFloat16), {1}), CompileOptions{});
  EXPECT_NE(concrete.program.kernels.at(0).source.find("pr_stage_row("), std::string::npos);
}

}  // namespace
}  // namespace polyred
