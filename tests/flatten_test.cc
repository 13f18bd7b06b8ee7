// Dimension flattening and reduction propagation (PANAMERA section 3) through the
// whole pipeline: the loop-nest patterns of Fig. 2 -- (a) all axes reduced, (b) inner
// axes reduced, (c) outer axes reduced, (d) interleaved reduced and kept axes, (e)
// elementwise producers fused into the reduction -- and the Fig. 4 example (reduced
// axes separated by a kept axis). For each: the canonical form, M and N of the
// KernelPlan, the output shape (keep_dims, size-1 axes, negative axes), whether the
// load offsets of contiguous layouts simplify to div/mod-free arithmetic in the isl
// AST and in the emitted CUDA, and that the lowered program matches the reference
// interpreter on the CPU (normal and deterministic mode). Reductions of transposed
// reads take the form of their memory layout.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "canon/kernel_plan.h"
#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "poly/loop_ast.h"

namespace polyred {
namespace {

CompiledGraph compile(const Graph& g) { return compileGraph(g, CompileOptions{}); }

// The CPU check in both modes; failures show the partition so they can be reproduced.
void expectCpuCheckPasses(const CompiledGraph& c) {
  for (bool deterministic : {false, true}) {
    CpuCheckReport r = checkOnCpu(c, /*seed=*/11, /*maxPoints=*/0, deterministic);
    EXPECT_TRUE(r.ok) << (deterministic ? "deterministic" : "normal") << " mode:\n"
                      << r.message << c.partition.toString(c.graph);
    EXPECT_FALSE(r.sampled);
  }
}

// The one kernel of a single-kernel partition.
const KernelPlan& onlyPlan(const CompiledGraph& c) {
  EXPECT_EQ(c.partition.kernels.size(), 1u) << c.partition.toString(c.graph);
  return c.partition.kernels.at(0);
}

void expectShape(const CompiledGraph& c, const KernelPlan& plan, CanonicalForm form, int64_t M, int64_t N) {
  EXPECT_EQ(plan.form, form) << formName(plan.form) << "\n" << plan.toString(c.graph);
  EXPECT_EQ(plan.M, M) << plan.toString(c.graph);
  EXPECT_EQ(plan.N, N) << plan.toString(c.graph);
}

bool hasDivOrMod(const AstExpr& e) {
  using Op = AstExpr::Op;
  if (e.op == Op::Div || e.op == Op::FloorDiv || e.op == Op::PDivQ || e.op == Op::PDivR || e.op == Op::ZDivR)
    return true;
  for (const AstExpr& a : e.args)
    if (hasDivOrMod(a)) return true;
  return false;
}

// The load offsets of every per-point statement (Red, Elem) in the loop program.
void collectBodyOffsets(const AstNode& n, std::vector<const AstExpr*>& out) {
  if (n.kind == AstNode::Kind::User && (n.user.statement == "Red" || n.user.statement == "Elem"))
    for (const AstExpr& e : n.user.offsets) out.push_back(&e);
  for (const auto& c : n.children) collectBodyOffsets(*c, out);
}

// The load expressions of the emitted CUDA: "pr_load(inK, offset)" up to the ';'.
std::vector<std::string> loadExpressions(const std::string& source) {
  std::vector<std::string> loads;
  for (const char* call : {"pr_load(", "pr_load_lanes<"}) {  // scalar and vector loads
    size_t pos = 0;
    while ((pos = source.find(call, pos)) != std::string::npos) {
      size_t end = source.find(';', pos);
      loads.push_back(source.substr(pos, end - pos));
      pos = end;
    }
  }
  return loads;
}

// Whether every load offset of every kernel is free of division and remainder, both
// in the isl AST and in the CUDA text. Requires at least one load.
::testing::AssertionResult loadOffsetsAreDivModFree(const CompiledGraph& c) {
  for (size_t k = 0; k < c.kernels.size(); ++k) {
    std::vector<const AstExpr*> offsets;
    collectBodyOffsets(*c.kernels[k].ast, offsets);
    if (offsets.empty()) return ::testing::AssertionFailure() << "kernel " << k << " has no load offsets";
    for (const AstExpr* e : offsets)
      if (hasDivOrMod(*e)) return ::testing::AssertionFailure() << "AST offset " << toC(*e) << " divides";
    std::vector<std::string> loads = loadExpressions(c.program.kernels[k].source);
    if (loads.empty()) return ::testing::AssertionFailure() << "no pr_load in the CUDA of kernel " << k;
    for (const std::string& load : loads)
      if (load.find('%') != std::string::npos || load.find('/') != std::string::npos ||
          load.find("polyred_floord") != std::string::npos)
        return ::testing::AssertionFailure() << "CUDA load divides: " << load;
  }
  return ::testing::AssertionSuccess();
}

Graph sumOf(DType t, const Shape& shape, std::vector<int64_t> axes, bool keepDims = false) {
  GraphBuilder b("sum");
  Value x = b.input("x", t, shape);
  b.output(b.reduce(x, Reduction::sum(t), std::move(axes), keepDims));
  return b.build();
}

TEST(FlattenFig2, AllAxesReducedIsAnAllReduce) {
  CompiledGraph c = compile(sumOf(DType::Float32, {7, 33, 5}, {}));
  const KernelPlan& plan = onlyPlan(c);
  expectShape(c, plan, CanonicalForm::AllReduce, 1, 7 * 33 * 5);
  EXPECT_EQ(c.graph.tensor(c.graph.outputs[0].tensor).shape, Shape{});
  EXPECT_TRUE(loadOffsetsAreDivModFree(c));
  expectCpuCheckPasses(c);
}

TEST(FlattenFig2, InnerAxesReducedIsAnXReduce) {
  CompiledGraph c = compile(sumOf(DType::Float32, {31, 5, 33}, {1, 2}));
  expectShape(c, onlyPlan(c), CanonicalForm::XReduce, 31, 5 * 33);
  EXPECT_TRUE(loadOffsetsAreDivModFree(c));
  expectCpuCheckPasses(c);
}

TEST(FlattenFig2, OuterAxesReducedIsAYReduce) {
  CompiledGraph c = compile(sumOf(DType::Float32, {5, 33, 31}, {0, 1}));
  expectShape(c, onlyPlan(c), CanonicalForm::YReduce, 31, 5 * 33);
  EXPECT_TRUE(loadOffsetsAreDivModFree(c));
  expectCpuCheckPasses(c);
}

TEST(FlattenFig2, InterleavedAxesAreInterchangedThenCoalesced) {
  // The innermost axis decides the form: kept -> y-reduce, reduced -> x-reduce.
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
    CanonicalForm form;
    int64_t M, N;
  };
  for (const Case& k : {Case{{7, 31, 5, 33}, {0, 2}, CanonicalForm::YReduce, 31 * 33, 7 * 5},
                        Case{{31, 7, 33, 5}, {1, 3}, CanonicalForm::XReduce, 31 * 33, 7 * 5},
                        Case{{3, 5, 7, 2, 3}, {0, 2, 4}, CanonicalForm::XReduce, 5 * 2, 3 * 7 * 3}}) {
    SCOPED_TRACE(toString(k.shape));
    CompiledGraph c = compile(sumOf(DType::Float32, k.shape, k.axes));
    const KernelPlan& plan = onlyPlan(c);
    expectShape(c, plan, k.form, k.M, k.N);
    EXPECT_NE(plan.why.find("interleaved"), std::string::npos) << plan.why;
    // Interleaving cannot be flattened into affine offsets: formula (1) stays visible.
    EXPECT_FALSE(loadOffsetsAreDivModFree(c));
    expectCpuCheckPasses(c);
  }
}

TEST(FlattenFig2, ElementwiseProducersAreFusedIntoTheReduction) {
  // Fig. 2e: e1..e4 feed the reduction; a broadcast bias and a transposed operand are
  // lowered into the reduction's (i, j) space, nothing is materialized.
  GraphBuilder b("producers");
  Value x = b.input("x", DType::Float16, {33, 31, 5});
  Value bias = b.input("bias", DType::Float16, {5});
  Value y = b.input("y", DType::Float16, {31, 33, 5});
  Value e1 = b.add(x, bias);
  Value e2 = b.mul(e1, b.transpose(y, {1, 0, 2}));
  Value e3 = b.cast(e2, DType::Float32);
  Value e4 = b.unary(OpKind::Abs, e3);
  b.output(b.reduceSum(e4, {1, 2}));
  CompiledGraph c = compile(b.build());
  const KernelPlan& plan = onlyPlan(c);
  expectShape(c, plan, CanonicalForm::XReduce, 33, 31 * 5);
  int loads = 0;
  std::vector<OpKind> ops;
  for (const BodyValue& v : plan.body) {
    if (v.kind == BodyValue::Kind::Load) ++loads;
    if (v.kind == BodyValue::Kind::Op) ops.push_back(v.op);
  }
  EXPECT_EQ(loads, 3);
  EXPECT_EQ(ops, (std::vector<OpKind>{OpKind::Add, OpKind::Mul, OpKind::Cast, OpKind::Abs}));
  ASSERT_EQ(plan.reductions.size(), 1u);
  EXPECT_EQ(plan.reductions[0].value, static_cast<int>(plan.body.size()) - 1);
  expectCpuCheckPasses(c);
}

TEST(FlattenFig4, ReducedAxesSeparatedByAKeptAxis) {
  // Fig. 4a: E(h,w,x,y) feeds R over h, x, y of [40,20,10,5]; w (kept) separates h from
  // x, y. After the interchange the reduced axes coalesce into j < 40*10*5 and the
  // elementwise producer is propagated into the same (i, j) space (Fig. 4c). The loop
  // shape is Fig. 4b's "parallel for i < 20, reduced for j < 2000". The text calls it a
  // y-reduce, but the innermost axis y is reduced and contiguous, so polyred's
  // canonical form is an x-reduce (threads along j coalesce).
  GraphBuilder b("fig4");
  Value x = b.input("x", DType::Float32, {40, 20, 10, 5});
  Value e = b.mul(b.unary(OpKind::Exp, x), x);
  b.output(b.reduceSum(e, {0, 2, 3}));
  CompiledGraph c = compile(b.build());
  const KernelPlan& plan = onlyPlan(c);
  expectShape(c, plan, CanonicalForm::XReduce, 20, 40 * 10 * 5);
  EXPECT_NE(plan.why.find("interleaved"), std::string::npos) << plan.why;
  ASSERT_EQ(plan.body[0].kind, BodyValue::Kind::Load);
  // One load serves both uses of x (Exp and Mul), recovered by formula (1).
  int loads = 0;
  for (const BodyValue& v : plan.body) loads += v.kind == BodyValue::Kind::Load;
  EXPECT_EQ(loads, 1);
  EXPECT_NE(plan.body[0].offset.find("mod"), std::string::npos) << plan.body[0].offset;
  expectCpuCheckPasses(c);
}

TEST(FlattenFig4, KeptInnermostAxisMakesItAYReduce) {
  // [h, w, x, y] reducing h and x: kept w and y interleave with them and y is
  // innermost, so after the interchange the kept axes are contiguous: y-reduce.
  CompiledGraph c = compile(sumOf(DType::Float32, {40, 20, 10, 5}, {0, 2}));
  expectShape(c, onlyPlan(c), CanonicalForm::YReduce, 20 * 5, 40 * 10);
  expectCpuCheckPasses(c);
}

TEST(FlattenOffsets, ReshapeThatRegroupsAxesCancelsOut) {
  // sg10 of Table 2 (scaled down): [8,16,12,8] viewed as [128,96]. The plan carries
  // formula (1) for the reshape; isl simplifies it away in the AST and the CUDA.
  GraphBuilder b("regroup");
  Value x = b.input("x", DType::Float16, {8, 16, 12, 8});
  Value r = b.reshape(x, {128, 96});
  b.output(b.reduceSum(b.cast(r, DType::Float32), {0}));
  CompiledGraph c = compile(b.build());
  const KernelPlan& plan = onlyPlan(c);
  expectShape(c, plan, CanonicalForm::YReduce, 96, 128);
  ASSERT_EQ(plan.body[0].kind, BodyValue::Kind::Load);
  EXPECT_NE(plan.body[0].offset.find("floor"), std::string::npos) << plan.body[0].offset;
  EXPECT_TRUE(loadOffsetsAreDivModFree(c));
  expectCpuCheckPasses(c);
}

TEST(FlattenOffsets, ReshapeThatSplitsAxesCancelsOut) {
  for (std::vector<int64_t> axes : {std::vector<int64_t>{0, 1}, std::vector<int64_t>{2}, std::vector<int64_t>{}}) {
    SCOPED_TRACE(toString(Shape(axes.begin(), axes.end())));
    GraphBuilder b("split");
    Value x = b.input("x", DType::Float32, {96, 33});
    Value y = b.input("y", DType::Float32, {8, 12, 33});
    b.output(b.reduceSum(b.mul(b.reshape(x, {8, 12, 33}), y), axes));
    CompiledGraph c = compile(b.build());
    onlyPlan(c);
    EXPECT_TRUE(loadOffsetsAreDivModFree(c));
    expectCpuCheckPasses(c);
  }
}

TEST(FlattenOffsets, BroadcastAndTransposeStayAffine) {
  GraphBuilder b("affine");
  Value x = b.input("x", DType::Float32, {33, 64});
  Value bias = b.input("bias", DType::Float32, {33, 1});
  Value t = b.transpose(b.add(x, bias), {1, 0});  // [64, 33]
  b.output(b.reduceMax(t, {1}));
  CompiledGraph c = compile(b.build());
  // The transposed x is contiguous along the kept axis and the bias is a broadcast
  // (one value per reduced index), so the layout makes it a y-reduce.
  expectShape(c, onlyPlan(c), CanonicalForm::YReduce, 64, 33);
  EXPECT_TRUE(loadOffsetsAreDivModFree(c));
  expectCpuCheckPasses(c);
}

TEST(FlattenAxes, KeepDimsKeepsRankAndTheCanonicalForm) {
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
    Shape out;
    CanonicalForm form;
  };
  for (const Case& k : {Case{{31, 33}, {1}, {31, 1}, CanonicalForm::XReduce},
                        Case{{31, 33}, {0}, {1, 33}, CanonicalForm::YReduce},
                        Case{{5, 7, 3}, {}, {1, 1, 1}, CanonicalForm::AllReduce},
                        Case{{5, 7, 3}, {0, 2}, {1, 7, 1}, CanonicalForm::XReduce}}) {
    SCOPED_TRACE(toString(k.shape));
    CompiledGraph plain = compile(sumOf(DType::Float32, k.shape, k.axes));
    CompiledGraph kept = compile(sumOf(DType::Float32, k.shape, k.axes, /*keepDims=*/true));
    EXPECT_EQ(kept.graph.tensor(kept.graph.outputs[0].tensor).shape, k.out);
    const KernelPlan& p = onlyPlan(plain);
    expectShape(kept, onlyPlan(kept), k.form, p.M, p.N);
    expectCpuCheckPasses(kept);
  }
}

TEST(FlattenAxes, SizeOneAxesAreDropped) {
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;
    CanonicalForm form;
    int64_t M, N;
  };
  for (const Case& k : {
           // reduced size-1 axis 2 and kept size-1 axes 0, 4 vanish
           Case{{1, 31, 1, 33, 1}, {1, 2}, CanonicalForm::YReduce, 33, 31},
           // only size-1 axes reduced: nothing to combine, one element per row
           Case{{31, 1, 33}, {1}, CanonicalForm::XReduce, 31 * 33, 1},
           // every kept axis has size 1: an all-reduce
           Case{{1, 33, 1, 7}, {1, 3}, CanonicalForm::AllReduce, 1, 33 * 7},
           // a single element
           Case{{1, 1}, {0}, CanonicalForm::AllReduce, 1, 1},
       }) {
    SCOPED_TRACE(toString(k.shape));
    CompiledGraph c = compile(sumOf(DType::Float32, k.shape, k.axes));
    expectShape(c, onlyPlan(c), k.form, k.M, k.N);
    expectCpuCheckPasses(c);
  }
}

TEST(FlattenAxes, NegativeAxesCountFromTheEnd) {
  struct Case {
    std::vector<int64_t> negative, positive;
  };
  const Shape shape = {5, 31, 7};
  for (const Case& k : {Case{{-1}, {2}}, Case{{-3, -1}, {0, 2}}, Case{{-2, 0}, {0, 1}}}) {
    SCOPED_TRACE(toString(Shape(k.negative.begin(), k.negative.end())));
    CompiledGraph neg = compile(sumOf(DType::Int32, shape, k.negative));
    CompiledGraph pos = compile(sumOf(DType::Int32, shape, k.positive));
    EXPECT_EQ(neg.graph.nodes.back().axes, k.positive);
    const KernelPlan& p = onlyPlan(pos);
    expectShape(neg, onlyPlan(neg), p.form, p.M, p.N);
    EXPECT_EQ(neg.program.kernels[0].source, pos.program.kernels[0].source);
    expectCpuCheckPasses(neg);
  }
}

TEST(FlattenPartition, ReductionsOverTheSameAxesShareOneKernelWithTheirEpilogue) {
  // mean and max of one producer, over the same axes: one kernel, the mean as an
  // epilogue applied per kept row.
  GraphBuilder b("mean_max");
  Value x = b.input("x", DType::Float32, {33, 100});
  Value sq = b.mul(x, x);
  Value s = b.reduceSum(sq, {1});
  Value m = b.reduceMax(x, {1});
  b.output(b.mul(s, b.constant(Scalar::ofFloat(DType::Float32, 1.0 / 100))));
  b.output(m);
  CompiledGraph c = compile(b.build());
  const KernelPlan& plan = onlyPlan(c);
  expectShape(c, plan, CanonicalForm::XReduce, 33, 100);
  EXPECT_EQ(plan.reductions.size(), 2u);
  EXPECT_EQ(plan.epilogueStores.size(), 1u);
  expectCpuCheckPasses(c);
}

TEST(FlattenPartition, ProducerOutputOverTheAnchorIsStoredFromTheReductionKernel) {
  // The producer itself is an output too (with size-1 axes that the anchor lacks):
  // stored at each point (i, j) by the reduction kernel, not recomputed by a second one.
  GraphBuilder b("producer_out");
  Value x = b.input("x", DType::Float32, {31, 100});
  Value e = b.unary(OpKind::Exp, b.neg(x));
  b.output(b.reduceSum(e, {0}));
  b.output(b.reshape(e, {31, 1, 100}));
  CompiledGraph c = compile(b.build());
  const KernelPlan& plan = onlyPlan(c);
  expectShape(c, plan, CanonicalForm::YReduce, 100, 31);
  ASSERT_EQ(plan.stores.size(), 1u);
  EXPECT_EQ(plan.stores[0].output, 1);
  expectCpuCheckPasses(c);
}

TEST(FlattenLayout, TransposedReadsChooseTheFormOfTheirMemoryLayout) {
  // x is stored [300, 200]; its transpose [200, 300] is reduced over its inner axis (a
  // logical x-reduce) -- but in memory that axis is x's outer one, so the kernel runs
  // as a y-reduce with threads along x's contiguous axis; and the other way round.
  struct Case {
    std::vector<int64_t> axes;
    CanonicalForm logical, chosen;
  };
  for (const Case& k : {Case{{1}, CanonicalForm::XReduce, CanonicalForm::YReduce},
                        Case{{0}, CanonicalForm::YReduce, CanonicalForm::XReduce}}) {
    GraphBuilder b("transposed_sum");
    Value x = b.input("x", DType::Float32, {300, 200});
    b.output(b.reduceSum(b.unary(OpKind::Exp, b.transpose(x, {1, 0})), k.axes));
    CompiledGraph c = compile(b.build());
    const KernelPlan& plan = onlyPlan(c);
    EXPECT_EQ(plan.form, k.chosen) << plan.toString(c.graph);
    EXPECT_NE(plan.why.find("chosen from the memory layout"), std::string::npos) << plan.why;
    EXPECT_NE(plan.why.find("form " + std::string(formName(k.logical))), std::string::npos) << plan.why;
    EXPECT_TRUE(loadOffsetsAreDivModFree(c));
    expectCpuCheckPasses(c);
  }
  // Untransposed reads keep the logical form, and say nothing about the layout.
  CompiledGraph plain = compile(sumOf(DType::Float32, {300, 200}, {1}));
  EXPECT_EQ(onlyPlan(plain).form, CanonicalForm::XReduce);
  EXPECT_EQ(onlyPlan(plain).why.find("memory layout"), std::string::npos);
}

}  // namespace
}  // namespace polyred
