// Every kernel the pipeline generates for the Table 2 examples (examples/table2/*.json)
// and for a representative set of builder graphs -- every built-in reduction x every
// dtype x each reduction form, in normal and deterministic mode, plus elementwise
// kernels of every dtype and a user-defined combiner -- compiles with NVRTC for sm_90
// (compile only, no GPU). The builder graphs are multi-block on the default target,
// so the cross-block combine (atomics, or partials in deterministic mode) is compiled
// for every accumulator type, and their lowered programs also pass the CPU check.
// Integer negations reach ptxas only as pr_neg's NOT and add (a ptxas defect).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "frontend/composite_reader.h"
#include "runtime/nvrtc.h"
#include "lowering_helpers.h"
#include "user_reductions.h"

namespace polyred {
namespace {

using test_support::expectNvrtcCompiles;

namespace fs = std::filesystem;

void expectCpuCheckPasses(const CompiledGraph& c, bool deterministic, const std::string& what) {
  CpuCheckReport r = checkOnCpu(c, /*seed=*/3, /*maxPoints=*/0, deterministic);
  EXPECT_TRUE(r.ok) << what << "\n" << r.message << c.partition.toString(c.graph);
}

CompiledGraph compile(const Graph& g, bool deterministic, CombineMode combine = CombineMode::Auto) {
  CompileOptions options;
  options.deterministic = deterministic;
  options.config.combine = combine;
  return compileGraph(g, options);
}

// The three reduction forms, each multi-block on the default (132-SM) target.
struct FormCase {
  const char* name;
  Shape shape;
  std::vector<int64_t> axes;
  CanonicalForm form;
};
const FormCase kForms[] = {{"all", {4097}, {0}, CanonicalForm::AllReduce},
                           {"x", {3, 4097}, {1}, CanonicalForm::XReduce},
                           {"y", {4097, 3}, {0}, CanonicalForm::YReduce}};

// A reduction of an input of dtype t. Products reduce +-1 (integers) or values near 1
// (floats), so that they neither vanish nor overflow.
Graph reductionGraph(BuiltinCombiner c, DType t, const FormCase& f) {
  GraphBuilder b("reduce");
  Value x = b.input("x", t, f.shape);
  if (c == BuiltinCombiner::Prod && t != DType::Bool) {
    if (isFloat(t))
      x = b.add(b.mul(x, b.constant(Scalar::ofFloat(t, 0x1p-6))), b.constant(Scalar::ofFloat(t, 1)));
    else
      x = b.select(b.binary(OpKind::Greater, x, b.constant(Scalar::ofInt(t, 50))), b.constant(Scalar::ofInt(t, 1)),
                   b.constant(Scalar::ofInt(t, -1)));
  }
  b.output(b.reduce(x, builtinReduction(c, t), f.axes));
  return b.build();
}

TEST(NvrtcKernels, Table2Examples) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(POLYRED_SOURCE_DIR) / "examples" / "table2"))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files.size(), 12u);
  for (const fs::path& file : files) {
    Graph g = readCompositeFile(file.string());
    for (bool deterministic : {false, true})
      expectNvrtcCompiles(compile(g, deterministic),
                          file.filename().string() + (deterministic ? " (deterministic)" : ""));
  }
}

TEST(NvrtcKernels, EveryReductionDtypeAndForm) {
  const BuiltinCombiner combiners[] = {BuiltinCombiner::Sum, BuiltinCombiner::Prod, BuiltinCombiner::Max,
                                       BuiltinCombiner::Min, BuiltinCombiner::And,  BuiltinCombiner::Or};
  for (BuiltinCombiner c : combiners) {
    for (DType t : kAllDTypes) {
      for (const FormCase& f : kForms) {
        Graph g = reductionGraph(c, t, f);
        // The policy's choice, then the atomics forced (a CAS loop where no hardware
        // atomic exists: still a tuned variant), then deterministic mode.
        for (auto [deterministic, combine] : {std::pair{false, CombineMode::Auto}, std::pair{false, CombineMode::Atomic},
                                              std::pair{true, CombineMode::Auto}}) {
          std::string what = g.nodes.back().reduction->name + " " + std::string(dtypeName(t)) + " " + f.name +
                             "-reduce" + (deterministic ? " (deterministic)" : "") +
                             (combine == CombineMode::Atomic ? " (combine=atomic)" : "");
          CompiledGraph compiled = compile(g, deterministic, combine);
          const PolyKernel& k = compiled.kernels.at(0);
          EXPECT_EQ(k.plan.form, f.form) << what;
          EXPECT_GT(k.binding.GX, 1) << what << ": meant to be multi-block";
          // By default, blocks combine by atomics where the hardware has them for the
          // combiner and through partials where it would be a CAS loop.
          const bool chosen = combine == CombineMode::Auto && k.plan.hasCompareAndSwapCombine();
          EXPECT_EQ(k.binding.partials, chosen) << what;
          const bool partials = deterministic || chosen;
          const std::string& source = compiled.program.kernels[0].source;
          bool atomics = source.find("atomic_combine") != std::string::npos ||
                         source.find("block_contribute_y_lanes") != std::string::npos;  // (lanes combine inside)
          EXPECT_EQ(atomics, !partials) << what;
          // ...and with partials the last block combines them with all its threads.
          const std::string gather =
              f.form == CanonicalForm::YReduce ? "combine_block_partials_y" : "combine_partials_fixed_order";
          EXPECT_EQ(source.find(gather) != std::string::npos, partials) << what;
          expectNvrtcCompiles(compiled, what);
          expectCpuCheckPasses(compiled, deterministic, what);
        }
      }
    }
  }
}

// A sum down the columns of f32 [2048, 8200] in `c`: one y-reduce over several blocks
// whose threads own 4 columns each (the two tests below).
void compileColumnLanes(bool deterministic, CompiledGraph& c) {
  GraphBuilder b("columns");
  b.output(b.reduceSum(b.input("x", DType::Float32, {2048, 8200}), {0}));
  c = compile(b.build(), deterministic);
  const PolyKernel& k = c.kernels.at(0);
  ASSERT_EQ(k.plan.form, CanonicalForm::YReduce);
  EXPECT_GT(k.binding.GX, 1);
  ASSERT_EQ(k.vector.accumulatorLanes, 4);
}

// The last block's gather of a y-reduce with lanes: its blocks store their partials
// block by block (a warp's columns consecutive), and the last block folds every lane of
// its columns together, columns past M combining nothing (a last tile past M).
TEST(NvrtcKernels, DeterministicPartialsOfColumnLanesAreGatheredByTheWholeBlock) {
  CompiledGraph c;
  ASSERT_NO_FATAL_FAILURE(compileColumnLanes(true, c));
  const PolyKernel& k = c.kernels.at(0);
  EXPECT_NE((k.plan.M / 4) % k.binding.BX, 0) << "meant to end with a partial tile of columns";
  const std::string& source = c.program.kernels[0].source;
  // Each column's partial from the thread of that column (block_store_y_lanes).
  EXPECT_NE(source.find("block_store_y_lanes<float, polyred_dev::Sum<float>, 32, 8, 4>(acc0, polyred_dev::Sum<float>(), "
                        "smem0, ws0 + bx * 8200 + first_column0, 8200 - first_column0);"),
            std::string::npos)
      << source;
  EXPECT_NE(source.find("combine_block_partials_y_lanes<float, polyred_dev::Sum<float>, 32, 8, 4, true, "
                        "polyred_dev::AnyOrder>(ws0, 8200, " + std::to_string(k.binding.GX) +
                        ", 4 * ((by) * 32 + tx), 8200, "),
            std::string::npos)
      << source;
  expectNvrtcCompiles(c, "deterministic y-reduce with column lanes");
  expectCpuCheckPasses(c, true, "deterministic y-reduce with column lanes");
}

// The atomic combine of a y-reduce with lanes: the block reduction and the contribution
// are one call (block_contribute_y_lanes), its threads each combining one column of the
// tile; the Contribute statement emits nothing, nor does the guard around it, and the
// last block takes the totals lane by lane as before.
TEST(NvrtcKernels, AtomicColumnLanesContributeColumnByColumn) {
  CompiledGraph c;
  ASSERT_NO_FATAL_FAILURE(compileColumnLanes(false, c));
  const std::string& source = c.program.kernels[0].source;
  EXPECT_NE(source.find("block_contribute_y_lanes<float, polyred_dev::Sum<float>, 32, 8, 4>(acc0, "
                        "polyred_dev::Sum<float>(), smem0, ws0 + first_column0, 8200 - first_column0);"),
            std::string::npos)
      << source;
  EXPECT_EQ(source.find("atomic_combine("), std::string::npos) << source;
  EXPECT_EQ(source.find("block_reduce_y_lanes<"), std::string::npos) << source;
  EXPECT_EQ(source.find("{\n  }"), std::string::npos) << "an empty guard was left: " << source;
  EXPECT_NE(source.find("take_and_reset(&ws0[(4 * (((32 * by) + tx)) + 3)]"), std::string::npos) << source;
  expectNvrtcCompiles(c, "y-reduce with column lanes, atomics");
  expectCpuCheckPasses(c, false, "y-reduce with column lanes, atomics");
}

TEST(NvrtcKernels, ElementwiseEveryDtype) {
  for (DType t : kAllDTypes) {
    GraphBuilder b("elementwise");
    Value x = b.input("x", t, {33, 100});
    Value y = b.input("y", t, {100});
    Value m = b.binary(OpKind::Maximum, x, y);
    b.output(b.select(b.binary(OpKind::Greater, x, y), m, b.cast(b.cast(x, DType::Float32), t)));
    CompiledGraph c = compile(b.build(), false);
    EXPECT_EQ(c.kernels.at(0).plan.form, CanonicalForm::Elementwise);
    expectNvrtcCompiles(c, std::string("elementwise ") + std::string(dtypeName(t)));
    expectCpuCheckPasses(c, false, std::string(dtypeName(t)));
  }
}

// f16 sums, differences and products of f16 operands run on half pairs (codegen/
// lane_values: bit for bit what float computes and rounds); a product never fuses with
// the sum after it (--fmad=false's rule for floats), an op of another dtype or kind
// keeps the float lanes, and one lane (vector=1) keeps them all.
TEST(NvrtcKernels, HalfChainsRunOnHalfPairs) {
  GraphBuilder b("half_chain");
  Value x = b.input("x", DType::Float16, {64, 1024});
  Value y = b.input("y", DType::Float16, {1024});
  Value bias = b.input("bias", DType::Float32, {1024});
  Value t = b.add(b.mul(b.sub(x, y), x), b.constant(Scalar::ofFloat(DType::Float16, 0.5)));
  Value u = b.mul(b.unary(OpKind::Tanh, t), t);
  b.output(b.add(b.cast(u, DType::Float32), bias));
  b.output(u);
  for (const std::string knobs : {"", "vector=1"}) {
    SCOPED_TRACE(knobs.empty() ? "default lanes" : knobs);
    CompiledGraph c = test_support::compileWithKnobs(b.build(), knobs);
    ASSERT_EQ(c.program.kernels.size(), 1u);
    const std::string& source = c.program.kernels[0].source;
    const NvrtcResult r = compileCuda(source, c.program.kernels[0].name, 9, 0);  // (throws CompileError if rejected)
    if (knobs.empty()) {
      EXPECT_GT(c.kernels.at(0).vector.width, 1);
      EXPECT_NE(source.find("__hsub2_rn"), std::string::npos) << source;
      EXPECT_NE(source.find("__hadd2_rn"), std::string::npos);
      EXPECT_EQ(test_support::occurrences(source, "__hmul2_rn("), 2 * test_support::occurrences(source, "__hsub2_rn("))
          << "x * (x - y) and tanh(t) * t in each loop version";
      // x and y load as half pairs, which x - y reads as they are (no conversion, no repacking).
      EXPECT_GE(test_support::occurrences(source, "pr_load_pairs<"), 2u) << source;
      EXPECT_NE(source.find("__hsub2_rn(hv0[k], hv1[k])"), std::string::npos) << source;
      EXPECT_NE(r.ptx.find("mul.rn.f16x2"), std::string::npos) << r.ptx;
      EXPECT_EQ(r.ptx.find("fma.rn.f16x2"), std::string::npos) << "a product fused with a sum: " << r.ptx;
    } else {
      EXPECT_EQ(source.find("__half2 hv"), std::string::npos) << source;
    }
    expectCpuCheckPasses(c, false, "half chain " + knobs);
  }
}

TEST(NvrtcKernels, UserDefinedCombiner) {
  ASSERT_EQ(test_support::maxAbsReduction().builtin(), BuiltinCombiner::None);
  for (DType t : {DType::Float32, DType::Float16}) {
    for (const FormCase& f : kForms) {
      GraphBuilder b("max_abs");
      Value x = b.input("x", t, f.shape);
      b.output(b.reduce(x, test_support::maxAbsReduction(), f.axes, /*keepDims=*/false, DType::Float32));
      Graph g = b.build();
      for (bool deterministic : {false, true}) {
        std::string what = std::string("max_abs ") + std::string(dtypeName(t)) + " " + f.name + "-reduce" +
                           (deterministic ? " (deterministic)" : "");
        CompiledGraph c = compile(g, deterministic);
        EXPECT_GT(c.kernels.at(0).binding.GX, 1) << what;
        EXPECT_NE(c.program.kernels.at(0).source.find("user-defined reduction 'max_abs'"), std::string::npos) << what;
        expectNvrtcCompiles(c, what);
        expectCpuCheckPasses(c, deterministic, what);
      }
    }
  }
}

// Index arithmetic: the kernel's index type is chosen once from an interval analysis
// of its expressions, and isl's helpers (floord, min, max) take operands of mixed
// widths. Every permutation of a [64,3,64,160] transpose (isl's simplified offsets
// overflow int32 in intermediate terms: a vgg16 shape that once failed in NVRTC with
// "no instance of polyred_floord" for (long long, int)), then shapes whose flat size
// crosses 2^31 and whose strides need 64-bit products, in every form. The small ones
// also pass the CPU check; the large ones are compiled only (their inputs are GBs).
TEST(NvrtcKernels, WideIndexShapes) {
  std::vector<int64_t> perm = {0, 1, 2, 3};
  do {
    GraphBuilder b("transpose");
    b.output(b.transpose(b.input("x", DType::Float32, {64, 3, 64, 160}), perm));
    const Graph g = b.build();
    CompiledGraph c = compile(g, false);
    std::string what = "transpose [64,3,64,160] perm [" + std::to_string(perm[0]) + "," + std::to_string(perm[1]) +
                       "," + std::to_string(perm[2]) + "," + std::to_string(perm[3]) + "]";
    expectNvrtcCompiles(c, what);
    if (perm == std::vector<int64_t>{2, 0, 3, 1} || perm == std::vector<int64_t>{3, 0, 2, 1}) {
      expectCpuCheckPasses(c, false, what);
      // The 1-D loop's offsets (a tiled transpose's stay in int32: poly/transpose_tiling.h).
      CompiledGraph loop = test_support::compileWithKnobs(g, "transpose=off");
      EXPECT_TRUE(loop.kernels.at(0).tiling.empty());
      EXPECT_TRUE(loop.kernels.at(0).index64) << what << ": intermediate terms leave int32";
      expectNvrtcCompiles(loop, what + ", transpose=off");
      expectCpuCheckPasses(loop, false, what + ", transpose=off");
    }
  } while (std::next_permutation(perm.begin(), perm.end()));

  const int64_t big = (int64_t{1} << 16) + 3, wide = (int64_t{1} << 15) + 5;  // big * wide > 2^31
  struct Large {
    const char* what;
    Shape shape;
    std::vector<int64_t> axes;  // empty: a transpose instead of a reduction
  };
  const Large cases[] = {{"transpose [big, wide]", {big, wide}, {}},
                         {"transpose [3, big, wide]", {3, big, wide}, {}},
                         {"all-reduce", {big, wide}, {0, 1}},
                         {"x-reduce", {big, wide}, {1}},
                         {"y-reduce", {big, wide}, {0}},
                         {"interleaved reduce", {5, big, 7, wide / 7 + 1}, {0, 2}}};
  for (const Large& l : cases) {
    for (DType t : {DType::Float16, DType::Float32, DType::Int64}) {
      GraphBuilder b("wide");
      Value x = b.input("x", t, l.shape);
      if (l.axes.empty()) {
        std::vector<int64_t> reversed(l.shape.size());
        for (size_t d = 0; d < reversed.size(); ++d) reversed[d] = int64_t(reversed.size() - 1 - d);
        b.output(b.transpose(x, reversed));
      } else {
        b.output(b.reduceSum(b.binary(OpKind::Mul, x, x), l.axes));
      }
      std::string what = std::string(l.what) + " " + std::string(dtypeName(t));
      CompiledGraph c = compile(b.build(), false);
      EXPECT_TRUE(c.kernels.at(0).index64) << what << ": the flat size passes 2^31";
      expectNvrtcCompiles(c, what);
    }
  }
}

// ptxas of CUDA 13.0 miscompiles a 32-bit negation feeding two same-kind min or max
// (docs/design/codegen-and-device.md, "Toolchain defects worked around"; IntegerNegationGpu shows it on
// the GPU). Without a GPU the invariant is checked on the PTX NVRTC hands to ptxas: the
// kernels of every spelling of an integer negation, in min/max chains and min/max
// reductions, contain no plain negation (`neg.s32`), only pr_neg's NOT and add.
TEST(NvrtcKernels, IntegerNegationsReachPtxasAsNotAndAdd) {
  auto spellings = [](GraphBuilder& b, Value x, int k) {
    const DType t = b.info(x).dtype;
    switch (k) {
      case 0: return b.neg(x);
      case 1: return b.binary(OpKind::Sub, b.constant(Scalar::ofInt(t, 0)), x);
      case 2: return b.binary(OpKind::Mul, x, b.constant(Scalar::ofInt(t, -1)));
      case 3: return b.binary(OpKind::Div, x, b.constant(Scalar::ofInt(t, -1)));
      default: return b.neg(b.unary(OpKind::Abs, x));
    }
  };
  int kernels = 0;
  for (DType t : {DType::Int32, DType::Int8})
    for (int k = 0; k < 5; ++k) {
      GraphBuilder b("negations");
      Value a = b.input("a", t, {5, 4097}), x = b.input("b", t, {5, 4097}), y = b.input("c", t, {5, 4097});
      Value chain = b.binary(OpKind::Minimum, b.binary(OpKind::Minimum, spellings(b, a, k), x), y);
      b.output(chain);
      b.output(b.reduce(spellings(b, b.binary(OpKind::Maximum, a, x), k), builtinReduction(BuiltinCombiner::Min, t), {1}));
      CompiledGraph c = compile(b.build(), false);
      for (const KernelSpec& spec : c.program.kernels) {
        SCOPED_TRACE(std::string(dtypeName(t)) + ", spelling " + std::to_string(k) + ", " + spec.name);
        NvrtcResult r = compileCuda(spec.source, spec.name, 9, 0);
        EXPECT_EQ(r.ptx.find("neg.s32"), std::string::npos) << r.ptx;
        EXPECT_NE(r.ptx.find("not.b32"), std::string::npos) << "no pr_neg in the PTX: " << r.ptx;
        ++kernels;
      }
      expectCpuCheckPasses(c, false, "integer negations");
    }
  EXPECT_GE(kernels, 10);
}

// A symbolic program's kernels (examples/symbolic, docs/design/symbolic-dims.md) take
// size_S after their pointers; NVRTC compiles them, in both modes.
TEST(NvrtcKernels, SymbolicRowsExample) {
  Graph g = readCompositeFile(std::string(POLYRED_SOURCE_DIR) + "/examples/symbolic/softmax_rows.json");
  for (bool deterministic : {false, true}) {
    const CompiledGraph c = compile(g, deterministic);
    ASSERT_EQ(c.program.symbols, std::vector<std::string>{"S"});
    EXPECT_NE(c.program.kernels.at(0).source.find("const long long size_S"), std::string::npos);
    expectNvrtcCompiles(c, deterministic ? "symbolic softmax (deterministic)" : "symbolic softmax");
  }
}

}  // namespace
}  // namespace polyred
