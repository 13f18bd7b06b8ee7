// The scan kernel (ir/ops.h Scan; canon/flatten.h flattenScan; device/polyred_scan.cuh):
// each row in one block, tile after tile, the block scan carrying the fold. Checked on
// hand-worked values through the reference AND the lowered kernels on the CPU (the
// executor runs the block scan thread by thread in row order), then over forms, axes,
// directions, combiners and dtypes on random inputs (CPU check) with the kernels
// compiled by NVRTC; what the kernel shapes must be; scans read by other ops (their
// results materialized); the composite format's UserScan. The GPU half: OpsGpu over
// tests/data/ops/scans_*.json and RandomGraphsGpu.ScanGraphsMatchTheReference.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "composite_test_helpers.h"
#include "canon/launch_groups.h"
#include "frontend/builder.h"
#include "frontend/composite_writer.h"
#include "interp/point_reference.h"
#include "interp/random_inputs.h"
#include "interp/reference.h"
#include "one_op_graph.h"

using namespace polyred;
using namespace polyred::test_support;

namespace {

HostTensor values(DType t, const Shape& s, std::vector<double> v) { return HostTensor::fromValues(t, s, std::move(v)); }

Reduction byName(const std::string& name, DType t) {
  if (name == "sum") return Reduction::sum(t);
  if (name == "prod") return Reduction::prod(t);
  if (name == "max") return Reduction::max(t);
  return Reduction::min(t);
}

Graph scanGraph(const Shape& shape, DType t, const std::string& combiner, int64_t axis, bool exclusive = false,
                bool reverse = false) {
  GraphBuilder b("scan_" + combiner);
  Value x = b.input("x", t, shape);
  b.output(b.scan(x, byName(combiner, t), axis, exclusive, reverse));
  return b.build();
}

const KernelPlan& onlyScan(const CompiledGraph& c) {
  EXPECT_EQ(c.kernels.size(), 1u);
  EXPECT_TRUE(c.kernels.at(0).plan.hasScan());
  return c.kernels.at(0).plan;
}

TEST(Scan, MaxAndMinCarryTheirFoldAcrossTilesAndDirections) {
  const HostTensor x = values(DType::Float32, {2, 4}, {3, 1, 4, 1, -5, 9, -2, 6});
  expectOutput(scanGraph({2, 4}, DType::Float32, "max", 1), {x}, {3, 3, 4, 4, -5, 9, 9, 9});
  expectOutput(scanGraph({2, 4}, DType::Float32, "min", 1, false, true), {x}, {1, 1, 1, 1, -5, -2, -2, 6});
  // Exclusive: the identity first (-inf for a max).
  const double inf = std::numeric_limits<double>::infinity();
  expectOutput(scanGraph({2, 4}, DType::Float32, "max", 0, true), {x}, {-inf, -inf, -inf, -inf, 3, 1, 4, 1});
  // NaN propagates from where it enters.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  expectOutput(scanGraph({5}, DType::Float32, "max", 0), {values(DType::Float32, {5}, {1, nan, 7, 2, 9})},
               {1, nan, nan, nan, nan});
  // int8 sums wrap in the output type after an exact int32 fold: 100 + 100 = -56.
  expectOutput(scanGraph({3}, DType::Int8, "sum", 0), {values(DType::Int8, {3}, {100, 100, 100})}, {100, -56, 44});
}

// Many rows: a block per row (per BY rows), no look-back. Few rows: each row over GX
// blocks of consecutive tiles, the carry found by the look-back (Fold, LookBack, Red).
TEST(Scan, RowsTakeTheXFormWithLanesAndColumnsTheYForm) {
  CompiledGraph rows = compileGraph(scanGraph({4096, 4096}, DType::Float32, "sum", 1), CompileOptions{});
  const KernelPlan& x = onlyScan(rows);
  EXPECT_EQ(x.form, CanonicalForm::XReduce);
  EXPECT_EQ(rows.kernels[0].binding.GX, 1);
  EXPECT_FALSE(rows.kernels[0].binding.multiBlockScan());
  EXPECT_EQ(rows.kernels[0].vector.width, 4);
  const std::string& source = rows.program.kernels.at(0).source;
  EXPECT_NE(source.find("block_scan_exclusive<float, polyred_dev::Sum<float>"), std::string::npos) << source;
  EXPECT_EQ(source.find("block_reduce"), std::string::npos) << source;
  EXPECT_EQ(source.find("scan_look_back"), std::string::npos) << source;

  CompiledGraph few = compileGraph(scanGraph({4, 1 << 20}, DType::Float32, "sum", 1), CompileOptions{});
  const Binding& split = few.kernels[0].binding;
  EXPECT_TRUE(split.multiBlockScan());
  EXPECT_GT(split.GX, 1);
  EXPECT_EQ(split.GX * split.scanChunk * split.BX * few.kernels[0].vector.width, 1 << 20);
  EXPECT_LE(split.blocks(), 2 * 132);  // one wave (the default target: an H100)
  EXPECT_NE(few.program.kernels.at(0).source.find("scan_look_back"), std::string::npos);
  ASSERT_EQ(few.program.kernels.at(0).workspaces.size(), 4u);
  CpuCheckReport r = checkOnCpu(few, 3, 1 << 16, false);
  EXPECT_TRUE(r.ok) << r.message;

  // Columns: 8 consecutive points of a column per thread (strided lanes, each store
  // its own), unless the column's length is odd.
  CompiledGraph columns = compileGraph(scanGraph({5000, 70}, DType::Float32, "sum", 0), CompileOptions{});
  EXPECT_EQ(onlyScan(columns).form, CanonicalForm::YReduce);
  EXPECT_TRUE(columns.kernels[0].binding.multiBlockScan());
  EXPECT_EQ(columns.kernels[0].vector.width, 8);
  EXPECT_TRUE(columns.kernels[0].vector.strided);
  EXPECT_EQ(columns.kernels[0].vector.axis, 'j');
  const std::string& columnSource = columns.program.kernels.at(0).source;
  EXPECT_EQ(columnSource.find("pr_store_lanes"), std::string::npos) << columnSource;
  EXPECT_NE(columnSource.find("if (7 >= lo && 7 < hi) pr_store(out0"), std::string::npos) << columnSource;
  r = checkOnCpu(columns, 4, 1 << 16, false);
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(compileGraph(scanGraph({4999, 70}, DType::Float32, "sum", 0), CompileOptions{}).kernels[0].vector.width, 1);
  EXPECT_EQ(compileGraph(scanGraph({5002, 70}, DType::Float32, "sum", 0), CompileOptions{}).kernels[0].vector.width, 2);
  // The middle axis of three: kept axes on both sides, coalesced into i.
  CompiledGraph middle = compileGraph(scanGraph({5, 300, 7}, DType::Float32, "sum", 1), CompileOptions{});
  EXPECT_EQ(onlyScan(middle).M, 35);
  EXPECT_EQ(onlyScan(middle).N, 300);
}

// Every combiner, direction and dtype, on shapes whose rows are shorter and longer
// than a tile, off the vector boundary, a single row or a single element: the lowered
// kernels match the reference (CPU check, every element) and compile in NVRTC.
TEST(Scan, EveryCombinerDirectionAndDtypePassesTheCpuCheck) {
  struct Case {
    Shape shape;
    int64_t axis;
  };
  // (Rows over several blocks: [2, 70001], [5000, 3] down its columns, [3, 9000, 2].
  // Columns of 8, 4 and 2 points per thread: [5000, 3], [36, 50], [2, 3, 4, 5].)
  const std::vector<Case> cases = {{{1000}, 0}, {{37, 129}, 1}, {{3, 4099}, 1}, {{129, 3}, 0},
                                   {{4, 33, 5}, 1}, {{2, 3, 4, 5}, 2}, {{1}, 0}, {{6, 1, 7}, 1},
                                   {{2, 70001}, 1}, {{5000, 3}, 0}, {{3, 9000, 2}, 1}, {{36, 50}, 0}};
  const std::vector<std::pair<DType, std::string>> kinds = {
      {DType::Float32, "sum"}, {DType::Float16, "sum"}, {DType::Int32, "sum"}, {DType::Int8, "sum"},
      {DType::Float64, "prod"}, {DType::Int64, "max"}, {DType::BFloat16, "min"}, {DType::Float32, "max"}};
  int k = 0;
  for (const Case& c : cases)
    for (const auto& [t, combiner] : kinds) {
      const bool exclusive = k % 3 == 1, reverse = k % 4 >= 2;
      ++k;
      Graph g = scanGraph(c.shape, t, combiner, c.axis, exclusive, reverse);
      CompiledGraph compiled = compileGraph(g, CompileOptions{});
      onlyScan(compiled);
      CpuCheckReport r = checkOnCpu(compiled, static_cast<uint64_t>(k), 0, false);
      EXPECT_TRUE(r.ok) << toString(c.shape) << " axis " << c.axis << " " << dtypeName(t) << " " << combiner
                        << (exclusive ? " exclusive" : "") << (reverse ? " reverse" : "") << "\n" << r.message;
      if (k % 5 != 0) continue;
      for (const KernelSpec& spec : compiled.program.kernels)
        EXPECT_NO_THROW(compileCuda(spec.source, spec.name, 9, 0)) << spec.source;
    }
}

// complex64 scans: sums and products of complex values built from two float32 inputs,
// along rows, down columns and over several blocks (the look-back publishes complex
// aggregates part by part), against the reference's double parts; a running max of
// complex numbers is refused (they are not ordered).
TEST(Scan, ComplexSumsAndProductsPassTheCpuCheckAndCompile) {
  const std::vector<std::pair<Shape, int64_t>> cases = {{{37, 129}, 1}, {{129, 40}, 0}, {{2, 70001}, 1}, {{5000, 3}, 0}};
  int k = 0;
  for (const auto& [shape, axis] : cases)
    for (const bool product : {false, true}) {
      GraphBuilder b("complex_scan");
      Value re = b.input("re", DType::Float32, shape), im = b.input("im", DType::Float32, shape);
      auto f32 = [&](double v) { return b.constant(Scalar::ofFloat(DType::Float32, v)); };
      // Products take factors 1 + a small term, so that they stay finite over long rows.
      Value z = product ? b.complex(b.add(b.mul(re, f32(0x1p-8)), f32(1)), b.mul(im, f32(0x1p-8))) : b.complex(re, im);
      b.output(b.scan(z, product ? Reduction::prod(DType::Complex64) : Reduction::sum(DType::Complex64), axis,
                      k % 3 == 1, k % 4 >= 2));
      ++k;
      CompiledGraph c = compileGraph(b.build(), CompileOptions{});
      CpuCheckReport r = checkOnCpu(c, static_cast<uint64_t>(k), 0, false);
      EXPECT_TRUE(r.ok) << toString(shape) << " axis " << axis << (product ? " prod" : " sum") << "\n" << r.message;
      for (const KernelSpec& spec : c.program.kernels)
        EXPECT_NO_THROW(compileCuda(spec.source, spec.name, 9, 0)) << spec.source;
    }
  expectRejected(
      [] {
        GraphBuilder b("complex_max");
        Value z = b.input("z", DType::Complex64, {4, 5});
        b.output(b.scan(z, Reduction::max(DType::Complex64), 1));
        b.build();
      },
      "not ordered");
}

TEST(Scan, ProducersFuseIntoTheScanKernel) {
  GraphBuilder b("cumsum_of_exp_times_w");
  Value x = b.input("x", DType::Float16, {40, 700});
  Value w = b.input("w", DType::Float16, {700});
  b.output(b.scan(b.mul(b.unary(OpKind::Exp, x), w), Reduction::sum(DType::Float16), -1));
  CompiledGraph c = compileGraph(b.build(), CompileOptions{});
  onlyScan(c);
  CpuCheckReport r = checkOnCpu(c, 3, 0, false);
  EXPECT_TRUE(r.ok) << r.message;
}

// Outputs computed from a scan at its own points are stores of the scan kernel: one
// launch for position ids (cumsum(mask) * mask, int64) and for a top-p mask (an
// exclusive prefix sum compared with p).
TEST(Scan, ConsumersAtTheSamePointAreStoresOfTheScanKernel) {
  GraphBuilder b("position_ids_and_top_p");
  Value mask = b.input("mask", DType::Int64, {16, 333});
  b.output(b.mul(b.scan(mask, Reduction::sum(DType::Int64), 1), mask));
  Value p = b.input("p", DType::Float32, {16, 333});
  Value before = b.scan(p, Reduction::sum(DType::Float32), 1, true);
  b.output(b.binary(OpKind::Less, before, b.constant(Scalar::ofFloat(DType::Float32, 0.9))));
  b.output(b.select(b.binary(OpKind::Less, before, b.constant(Scalar::ofFloat(DType::Float32, 0.9))), p,
                    b.constant(Scalar::ofFloat(DType::Float32, 0))));
  CompiledGraph c = compileGraph(b.build(), CompileOptions{});
  ASSERT_EQ(c.partition.kernels.size(), 2u);  // one per scan
  EXPECT_TRUE(c.partition.temporaries.empty());
  for (const KernelPlan& k : c.partition.kernels) EXPECT_TRUE(k.hasScan());
  CpuCheckReport r = checkOnCpu(c, 5, 0, false);
  EXPECT_TRUE(r.ok) << r.message;
  for (const KernelSpec& k : c.program.kernels) EXPECT_NO_THROW(compileCuda(k.source, k.name, 9, 0)) << k.source;
}

// A scan result read by a reduction, by another scan or at other points (a flip) is
// materialized by the scan kernel and loaded by the kernels after it; the scan is
// never written as a masked reduction.
TEST(Scan, ResultsReadElsewhereAreMaterialized) {
  GraphBuilder b("scan_read_elsewhere");
  Value p = b.input("p", DType::Float32, {8, 10000});  // (vector lanes: the temporary's store too)
  Value c = b.scan(p, Reduction::sum(DType::Float32), 1, true);
  b.output(b.reduceSum(c, {1}));
  b.output(b.scan(c, Reduction::max(DType::Float32), 1));
  b.output(b.window(c, {8, 10000}, {0, 9999}, {1, -1}));
  CompiledGraph compiled = compileGraph(b.build(), CompileOptions{});
  ASSERT_EQ(compiled.partition.temporaries.size(), 1u);
  EXPECT_EQ(compiled.partition.temporaries[0].elements, 80000);
  EXPECT_EQ(compiled.kernels.front().vector.width, 4);
  // The kernels reading the temporary run in a later launch than the scan writing it
  // (horizontally fused with it, they read it before it was written: found on the GPU).
  const std::vector<LaunchGroup> launches = groupIndependentKernels(compiled.partition, compiled.graph);
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].kernels, std::vector<int>{0});
  for (const KernelSpec& k : compiled.program.kernels) EXPECT_NO_THROW(compileCuda(k.source, k.name, 9, 0)) << k.source;
  EXPECT_TRUE(compiled.partition.kernels.front().hasScan());
  // The scan, its row sum (whose kernel stores the flip too: a point output over the
  // same shape), its running max.
  EXPECT_EQ(compiled.partition.kernels.size(), 3u);
  CpuCheckReport r = checkOnCpu(compiled, 5, 0, false);
  EXPECT_TRUE(r.ok) << r.message;
}

// Independent scans share one launch (horizontal fusion), a row-per-block part beside
// a part whose rows span several blocks; both bound with the launch's block size.
TEST(Scan, IndependentScansShareOneLaunch) {
  GraphBuilder b("two_scans");
  Value x = b.input("x", DType::Float32, {2, 70001});
  Value y = b.input("y", DType::Int32, {64, 300});
  b.output(b.scan(x, Reduction::sum(DType::Float32), 1));
  b.output(b.scan(y, Reduction::max(DType::Int32), 1, true));
  CompiledGraph c = compileGraph(b.build(), CompileOptions{});
  ASSERT_EQ(c.kernels.size(), 2u);
  ASSERT_EQ(c.program.kernels.size(), 1u);
  EXPECT_EQ(c.program.kernels[0].parts.size(), 2u);
  EXPECT_TRUE(c.kernels[0].binding.multiBlockScan() || c.kernels[1].binding.multiBlockScan());
  EXPECT_NO_THROW(compileCuda(c.program.kernels[0].source, c.program.kernels[0].name, 9, 0)) << c.program.kernels[0].source;
  CpuCheckReport r = checkOnCpu(c, 4, 0, false);
  EXPECT_TRUE(r.ok) << r.message;
}

// A scan of a user combiner is written as UserScan with its declaration and reads back
// as the same graph; CumSum / CumProd stay MindSpore's ops.
TEST(Scan, UserScansAndCumSumsRoundTripThroughTheCompositeFormat) {
  Reduction user;
  user.name = "sum_plus_product";  // a + b + ab = (1 + a)(1 + b) - 1: associative, identity 0
  user.accType = DType::Float64;
  user.identity = Scalar::ofFloat(DType::Float64, 0);
  const ScalarExprPtr a = ScalarExpr::argument(0), x = ScalarExpr::argument(1);
  user.combiner = ScalarExpr::apply(
      OpKind::Add, {ScalarExpr::apply(OpKind::Add, {a, x}), ScalarExpr::apply(OpKind::Mul, {a, x})});
  GraphBuilder b("user_scan");
  Value in = b.input("x", DType::Float64, {3, 50});
  b.output(b.scan(in, user, 1, false, true));
  b.output(b.scan(in, Reduction::sum(DType::Float64), 0, true));
  Graph g = b.build();
  const std::string json = writeComposite(g);
  EXPECT_NE(json.find("\"UserScan\""), std::string::npos);
  EXPECT_NE(json.find("\"CumSum\""), std::string::npos);
  Graph back = parseComposite(json, "user_scan.json");
  EXPECT_EQ(back.nodes.size(), g.nodes.size());
  EXPECT_EQ(back.nodes[0].reduction->builtin(), BuiltinCombiner::None);
  EXPECT_TRUE(back.nodes[0].reverse);
  EXPECT_TRUE(back.nodes[1].exclusive);
  CompiledGraph c = compileGraph(back, CompileOptions{});
  CpuCheckReport r = checkOnCpu(c, 9, 0, false);
  EXPECT_TRUE(r.ok) << r.message;
  for (const KernelSpec& k : c.program.kernels) EXPECT_NO_THROW(compileCuda(k.source, k.name, 9, 0)) << k.source;
}

// The point reference (what checks and tolerances of large graphs use) gives every
// scan element the whole reference gives, and folds each run once: a row max over
// scans of 50000 elements is 10^5 folds, not 2.5 * 10^9.
TEST(Scan, ThePointReferenceAgreesAndFoldsEachRunOnce) {
  GraphBuilder b("point_scans");
  Value x = b.input("x", DType::Float32, {3, 7, 5});
  b.output(b.scan(x, Reduction::sum(DType::Float32), 1, true, true));
  b.output(b.scan(x, Reduction::max(DType::Float32), 2));
  Graph g = b.build();
  const std::vector<HostTensor> in = makeRandomInputs(g, 3);
  const std::vector<HostTensor> whole = evaluateReference(g, in);
  PointReference points(g, in);
  for (size_t o = 0; o < g.outputs.size(); ++o)
    for (int64_t k = 0; k < whole[o].size(); ++k)
      EXPECT_TRUE(points.value(g.outputs[o].tensor, k).identical(whole[o].get(k))) << "output " << o << " element " << k;

  GraphBuilder big("row_max_of_scans");
  Value y = big.input("y", DType::Float32, {2, 50000});
  big.output(big.reduceMax(big.scan(y, Reduction::sum(DType::Float32), 1), {1}));
  Graph h = big.build();
  const std::vector<HostTensor> yin = makeRandomInputs(h, 5);
  Deadline tenSeconds(10.0);  // (element by element: minutes)
  PointReference rows(h, yin, &tenSeconds);
  const std::vector<HostTensor> want = evaluateReference(h, yin);
  for (int64_t r = 0; r < 2; ++r) EXPECT_TRUE(rows.value(h.outputs[0].tensor, r).identical(want[0].get(r)));
}

// A check asks for the elements of a scan down the columns in row-major order, one of
// every run in turn. Once the memo's bound has dropped the folded runs, each element
// is folded again from the checkpoint before it, not from the start of its column
// (f16 [8192,4096] down its columns: `polyred run` hit its 300 s timeout).
TEST(Scan, ThePointReferenceRefoldsFromCheckpointsWhenItsMemoIsFull) {
  GraphBuilder b("column_scans");
  Value x = b.input("x", DType::Float32, {600, 40});
  b.output(b.scan(x, Reduction::sum(DType::Float32), 0));
  b.output(b.scan(x, Reduction::prod(DType::Float32), 0, true, true));
  Graph g = b.build();
  const std::vector<HostTensor> in = makeRandomInputs(g, 4);
  const std::vector<HostTensor> whole = evaluateReference(g, in);
  PointReference unbounded(g, in);
  PointReference bounded(g, in, nullptr, 1000);  // dropped about every 25 columns
  int64_t queries = 0;
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    const TensorId t = g.outputs[o].tensor;
    for (int64_t k = 0; k < whole[o].size(); ++k, ++queries) {
      ASSERT_TRUE(bounded.value(t, k).identical(whole[o].get(k))) << "output " << o << " element " << k;
      ASSERT_EQ(bounded.magnitude(t, k), unbounded.magnitude(t, k)) << "output " << o << " element " << k;
    }
  }
  // Each column folded whole once, then at most a checkpoint's 64 steps per element
  // (from the start of its column: 24000 * 300 on average).
  EXPECT_LE(bounded.scanStepsFolded(), 2 * 24000 + 64 * queries);
  EXPECT_EQ(unbounded.scanStepsFolded(), 2 * 24000);
}

TEST(Scan, MalformedScansAreErrorsNamingTheOp) {
  expectRejected([] { scanGraph({4, 5}, DType::Float32, "sum", 2); }, "out of range");
  expectRejected(
      [] {
        GraphBuilder b("bad");
        Value x = b.input("x", DType::Int32, {4});
        b.output(b.scan(x, Reduction::sum(DType::Int32), 0, false, false, DType::Int64));
        b.build();
      },
      "cannot produce int64");
  const std::string missing = errorOf(R"({"op": "Fused_UserScan", "input_desc": [[{"data_type": "float32",
      "shape": [4], "tensor_name": "x"}]], "op_desc": [{"name": "UserScan", "attr": [{"name": "axis", "value": 0},
      {"name": "reduction", "value": "nowhere"}], "input_desc": [[{"data_type": "float32", "shape": [4],
      "tensor_name": "x"}]], "output_desc": [{"data_type": "float32", "shape": [4], "tensor_name": "y"}]}],
      "output_desc": [{"data_type": "float32", "shape": [4], "tensor_name": "y"}]})");
  EXPECT_NE(missing.find("no reduction"), std::string::npos) << missing;
  EXPECT_NE(missing.find("UserScan"), std::string::npos) << missing;
}

}  // namespace
