// ScatterAdd (ir/ops.h), what UnsortedSegmentSum reads as: an elementwise kernel over
// the values whose store adds atomically at the indexed output row, into an output the
// runtime zeroes first (KernelSpec::initFirst); where that store cannot be a finished
// output, an atomic scatter into a zeroed temporary (16/8-bit values widened, sums read
// again, computed bases), and in deterministic mode for floats the masked sum of
// canon/scatter_fallback. Hand-worked values through the reference and the
// lowered kernels on the CPU, the kernel shapes each case must take, NVRTC, refusals.
// The GPU half: OpsGpu over tests/data/ops/segment_sums_atomic_and_masked.json.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "composite_test_helpers.h"
#include "frontend/builder.h"
#include "canon/scatter_fallback.h"
#include "frontend/composite_writer.h"
#include "one_op_graph.h"

using namespace polyred;
using namespace polyred::test_support;

namespace {

HostTensor values(DType t, const Shape& s, std::vector<double> v) { return HostTensor::fromValues(t, s, std::move(v)); }

Graph segmentSum(const Shape& data, const std::string& dtype, int64_t segments, const std::string& idsType = "int32",
                 size_t idsRank = 1) {
  const Shape ids(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(idsRank));
  Shape out = {segments};
  out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(idsRank), data.end());
  return oneOp("UnsortedSegmentSum", {desc("d", data, dtype), desc("ids", ids, idsType)}, desc("y", out, dtype),
               {attr("num_segments", segments)});
}

CompiledGraph compiled(const Graph& g, bool deterministic = false) {
  CompileOptions o;
  o.deterministic = deterministic;
  return compileGraph(g, o);
}

bool hasScatterStore(const CompiledGraph& c) {
  for (const PolyKernel& k : c.kernels)
    if (k.plan.hasScatterStore()) return true;
  return false;
}

// The lowered kernels pass the CPU check (normal or deterministic) and compile in NVRTC.
void expectChecked(const CompiledGraph& c, bool deterministic) {
  for (const KernelSpec& k : c.program.kernels) EXPECT_NO_THROW(compileCuda(k.source, k.name, 9, 0)) << k.source;
  CpuCheckReport r = checkOnCpu(c, 11, 0, deterministic);
  EXPECT_TRUE(r.ok) << c.graph.name << "\n" << r.message;
}

TEST(ScatterAdd, SegmentSumIsOneAtomicKernelIntoAZeroedOutput) {
  Graph g = segmentSum({300, 17}, "float32", 13);
  CompiledGraph c = compiled(g);
  ASSERT_EQ(c.kernels.size(), 1u);
  const KernelPlan& plan = c.kernels[0].plan;
  EXPECT_EQ(plan.form, CanonicalForm::Elementwise);
  EXPECT_EQ(plan.M, 300 * 17);  // over the values, not the 13 x 17 output
  ASSERT_EQ(plan.stores.size(), 1u);
  EXPECT_TRUE(plan.stores[0].scatters());
  EXPECT_EQ(plan.stores[0].scatterStride, 17);
  EXPECT_EQ(plan.stores[0].scatterExtent, 13);
  ASSERT_EQ(c.program.kernels.size(), 1u);
  ASSERT_EQ(c.program.kernels[0].initFirst.size(), 1u);
  EXPECT_EQ(c.program.kernels[0].initFirst[0].output, 0);
  EXPECT_EQ(c.program.kernels[0].initFirst[0].bytes, 13 * 17 * 4);
  EXPECT_NE(c.program.kernels[0].source.find("pr_scatter_add("), std::string::npos);
  EXPECT_EQ(c.kernels[0].vector.width, 1);  // one atomic per element
  expectChecked(c, false);
}

TEST(ScatterAdd, HandWorkedSumsDropIdsOutsideTheSegments) {
  // ids 0, 2, 0, 5 (dropped) and -1 (dropped): segment 0 gets rows 0 and 2.
  Graph g = segmentSum({5, 2}, "float32", 3);
  expectOutput(g, {values(DType::Float32, {5, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}),
                   values(DType::Int32, {5}, {0, 2, 0, 5, -1})},
               {6, 8, 0, 0, 3, 4});
  // int64 sums wrap as int64 does: 2^62 + 2^62 + 2^62 + 2^62 = 0 (mod 2^64).
  Graph wrap = segmentSum({4}, "int64", 1, "int64");
  const double q = 4611686018427387904.0;  // 2^62
  expectOutput(wrap, {values(DType::Int64, {4}, {q, q, q, q}), values(DType::Int64, {4}, {0, 0, 0, 0})}, {0});
  // ids of the data's whole shape: one element per id.
  Graph whole = segmentSum({2, 2}, "int32", 2, "int64", 2);
  expectOutput(whole, {values(DType::Int32, {2, 2}, {1, 2, 3, 4}), values(DType::Int64, {2, 2}, {1, 1, 0, 1})}, {3, 7});
}

TEST(ScatterAdd, ScalarIdsAddTheWholeDataToOneSegment) {
  Graph g = segmentSum({3}, "float32", 2, "int32", 0);
  expectOutput(g, {values(DType::Float32, {3}, {1, 2, 3}), values(DType::Int32, {}, {1})}, {0, 0, 0, 1, 2, 3});
  expectChecked(compiled(g), false);
}

TEST(ScatterAdd, ProducersFuseAndReductionsFeedingTheValuesAreMaterialized) {
  // (d * w) summed by segment: the product is computed inside the scatter kernel.
  Json ins = Json::array({Json::array({desc("d", {200, 9}, "float32")}), Json::array({desc("w", {9}, "float32")}),
                          Json::array({desc("ids", {200}, "int32")})});
  Json doc = {{"op", "Fused_scaled_segment_sum"},
              {"input_desc", ins},
              {"op_desc",
               {{{"name", "Mul"},
                 {"input_desc", Json::array({ins[0], ins[1]})},
                 {"output_desc", Json::array({desc("p", {200, 9}, "float32")})}},
                {{"name", "UnsortedSegmentSum"},
                 {"attr", Json::array({attr("num_segments", 7)})},
                 {"input_desc", Json::array({Json::array({desc("p", {200, 9}, "float32")}), ins[2]})},
                 {"output_desc", Json::array({desc("y", {7, 9}, "float32")})}}}},
              {"output_desc", Json::array({desc("y", {7, 9}, "float32")})}};
  CompiledGraph fused = compiled(parseComposite(doc.dump(), "scaled.json"));
  EXPECT_EQ(fused.program.kernels.size(), 1u);
  EXPECT_TRUE(hasScatterStore(fused));
  expectChecked(fused, false);

  // d - mean(d) over rows, then summed by segment: the mean comes from a kernel before.
  doc["op_desc"][0] = {{"name", "ReduceMean"},
                       {"attr", Json::array({attr("axis", Json::array({1})), attr("keep_dims", true)})},
                       {"input_desc", Json::array({ins[0]})},
                       {"output_desc", Json::array({desc("m", {200, 1}, "float32")})}};
  const Json sub = {{"name", "Sub"},
                    {"input_desc", Json::array({ins[0], Json::array({desc("m", {200, 1}, "float32")})})},
                    {"output_desc", Json::array({desc("p", {200, 9}, "float32")})}};
  doc["op_desc"].insert(doc["op_desc"].begin() + 1, sub);
  CompiledGraph centered = compiled(parseComposite(doc.dump(), "centered.json"));
  EXPECT_EQ(centered.partition.kernels.size(), 2u);
  EXPECT_TRUE(hasScatterStore(centered));
  expectChecked(centered, false);
}

// The plan of the kernel that scatters into a temporary, if any.
const KernelPlan* scatterIntoTemporary(const CompiledGraph& c) {
  for (const PolyKernel& k : c.kernels)
    for (const ElementwiseOutput& s : k.plan.stores)
      if (s.scatters() && s.temporary >= 0) return &k.plan;
  return nullptr;
}

// The one temporary a scatter adds into is zero before every launch of the scatter: set
// by a memset first (KernelSpec::initFirst), or -- `keptZero` -- zeroed when allocated and
// left zero by the kernel that reads it (canon/temporary_reset).
void expectTemporaryZeroedFirst(const CompiledGraph& c, bool keptZero = true) {
  ASSERT_EQ(c.program.temporaries.size(), 1u);
  EXPECT_EQ(c.partition.temporaries[0].keptZero, keptZero);
  EXPECT_EQ(c.program.temporaries[0].zeroWhenAllocated, keptZero);
  int memsets = 0, clears = 0;
  for (const KernelSpec& k : c.program.kernels)
    for (const OutputInit& z : k.initFirst)
      if (z.temporary >= 0) {
        EXPECT_EQ(z.fromInput, -1);
        EXPECT_EQ(z.bytes, c.program.temporaries[0].bytes);
        ++memsets;
      }
  for (const PolyKernel& k : c.kernels)
    for (const ElementwiseOutput& s : k.plan.stores) clears += s.zeroWhereNonzero;
  EXPECT_EQ(memsets, keptZero ? 0 : 1);
  EXPECT_EQ(clears, keptZero ? 1 : 0);
}

TEST(ScatterAdd, SixteenAndEightBitSumsAddIntoAWideTemporaryThenCast) {
  // The device library adds atomically in 32- and 64-bit words: float16/bfloat16 values
  // add in a float32 temporary, int8/uint8 in an int32 one (rounded or wrapped once, by
  // the Cast of the kernel after).
  for (auto [dtype, wide] : {std::pair{"float16", DType::Float32}, std::pair{"bfloat16", DType::Float32},
                             std::pair{"int8", DType::Int32}, std::pair{"uint8", DType::Int32}}) {
    CompiledGraph c = compiled(segmentSum({120, 5}, dtype, 9));
    const KernelPlan* scatter = scatterIntoTemporary(c);
    ASSERT_NE(scatter, nullptr) << dtype;
    EXPECT_EQ(scatter->M, 120 * 5) << dtype;  // over the values
    ASSERT_EQ(c.partition.temporaries.size(), 1u) << dtype;
    EXPECT_EQ(c.partition.temporaries[0].dtype, wide) << dtype;
    EXPECT_EQ(c.partition.temporaries[0].elements, 9 * 5) << dtype;
    EXPECT_EQ(c.program.kernels.size(), 2u) << dtype;  // the scatter, then the cast
    expectTemporaryZeroedFirst(c);
    expectChecked(c, false);
  }
  // Hand-worked int8 wrapping: 100 + 100 + 100 = 300 = 44 (mod 256), once, at the end.
  expectOutput(segmentSum({3}, "int8", 1),
               {values(DType::Int8, {3}, {100, 100, 100}), values(DType::Int32, {3}, {0, 0, 0})}, {44});
}

TEST(ScatterAdd, DeterministicFloatSumsAreMaskedSums) {
  // Float atomics would add in varying order: masked sums, with nothing zeroed.
  for (const char* dtype : {"float32", "float64", "float16"}) {
    CompiledGraph c = compiled(segmentSum({120, 5}, dtype, 9), true);
    EXPECT_FALSE(hasScatterStore(c)) << dtype;
    for (const KernelSpec& k : c.program.kernels) EXPECT_TRUE(k.initFirst.empty()) << dtype;
    expectChecked(c, true);
  }
  // Integer atomics are exact: deterministic mode keeps them (int8 through int32).
  for (const char* dtype : {"int32", "int8"}) {
    CompiledGraph ints = compiled(segmentSum({120, 5}, dtype, 9), true);
    EXPECT_TRUE(hasScatterStore(ints)) << dtype;
    expectChecked(ints, true);
  }
}

TEST(ScatterAdd, SumsAnotherOpReadsAreScatteredIntoATemporary) {
  Json ins = Json::array({Json::array({desc("d", {60, 4}, "float32")}), Json::array({desc("ids", {60}, "int32")})});
  Json doc = {{"op", "Fused_segment_sum_then_exp"},
              {"input_desc", ins},
              {"op_desc",
               {{{"name", "UnsortedSegmentSum"},
                 {"attr", Json::array({attr("num_segments", 6)})},
                 {"input_desc", ins},
                 {"output_desc", Json::array({desc("s", {6, 4}, "float32")})}},
                {{"name", "Exp"},
                 {"input_desc", Json::array({Json::array({desc("s", {6, 4}, "float32")})})},
                 {"output_desc", Json::array({desc("y", {6, 4}, "float32")})}}}},
              {"output_desc", Json::array({desc("y", {6, 4}, "float32"), desc("s", {6, 4}, "float32")})}};
  CompiledGraph read = compiled(parseComposite(doc.dump(), "then_exp.json"));
  ASSERT_NE(scatterIntoTemporary(read), nullptr);
  // Read by a second kernel too (a column sum): no single reader can leave it zero.
  GraphBuilder twice("read_by_two_kernels");
  Value sums = twice.scatterAdd(twice.input("d", DType::Float32, {60, 4}), twice.input("ids", DType::Int32, {60}), 6);
  twice.output(twice.unary(OpKind::Exp, sums));
  twice.output(twice.reduceSum(sums, {0}, false));
  CompiledGraph both = compiled(twice.build());
  expectTemporaryZeroedFirst(both, /*keptZero=*/false);
  expectChecked(both, false);
  EXPECT_EQ(read.partition.temporaries.at(0).dtype, DType::Float32);
  // The sums themselves are an output too: stored from the temporary, not scattered twice.
  int scatters = 0;
  for (const PolyKernel& k : read.kernels)
    for (const ElementwiseOutput& s : k.plan.stores) scatters += s.scatters();
  EXPECT_EQ(scatters, 1);
  expectTemporaryZeroedFirst(read);
  expectChecked(read, false);
  expectOutput(parseComposite(doc.dump(), "then_exp.json"),
               {values(DType::Float32, {60, 4}, std::vector<double>(240, 0.25)),
                values(DType::Int32, {60}, std::vector<double>(60, 5))},
               {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15}, /*output=*/1);
}

TEST(ScatterAdd, SegmentCountsPastTheMaskedLimitCompileAtomicallyOrAreRefusedWithTheReason) {
  // BERT's word-embedding gradient: 16384 rows of 1024 into 30522 segments (a masked sum
  // would be 5 * 10^11 operations).
  CompiledGraph c = compiled(segmentSum({16384, 1024}, "float32", 30522));
  EXPECT_EQ(c.program.kernels.size(), 1u);
  EXPECT_TRUE(hasScatterStore(c));
  CompiledGraph half = compiled(segmentSum({16384, 1024}, "float16", 30522));  // through a float32 temporary
  EXPECT_NE(scatterIntoTemporary(half), nullptr);
  const std::string message = expectRejected([] { compiled(segmentSum({16384, 1024}, "float32", 30522), true); },
                                             "cannot add atomically (deterministic mode");
  EXPECT_NE(message.find("UnsortedSegmentSum"), std::string::npos) << message;
}

TEST(ScatterAdd, MalformedScattersAreErrorsNamingTheOp) {
  auto scatter = [](const Shape& values, const std::string& valueType, const Shape& ids, const std::string& idsType,
                    const Shape& out) {
    oneOp("ScatterAdd", {desc("v", values, valueType), desc("i", ids, idsType)}, desc("y", out, valueType), Json::array());
  };
  expectRejected([&] { scatter({4, 3}, "float32", {4}, "int32", {5, 2}); }, "expected [4,2]");
  expectRejected([&] { scatter({4}, "float32", {4}, "float32", {5}); }, "int32 or int64");
  expectRejected([&] { scatter({4}, "bool", {4}, "int32", {5}); }, "adds numbers");
  expectRejected([&] { scatter({}, "float32", {}, "int32", {}); }, "a scalar has none");
  const std::string message = expectRejected(
      [] {
        oneOp("ScatterAdd", {desc("v", {4}, "float32")}, desc("y", {5}, "float32"), Json::array());
      },
      "values, indices");
  EXPECT_NE(message.find("ScatterAdd"), std::string::npos) << message;
}

TEST(ScatterAdd, TensorScatterAddCopiesItsInputThenAddsAtomically) {
  // Index pairs into a [5, 4, 3] input: the flat row among its first two axes.
  Graph g = oneOp("TensorScatterAdd", {desc("x", {5, 4, 3}, "float32"), desc("i", {70, 2}, "int32"),
                                       desc("u", {70, 3}, "float32")},
                  desc("y", {5, 4, 3}, "float32"), Json::array());
  CompiledGraph c = compiled(g);
  ASSERT_EQ(c.program.kernels.size(), 1u);
  EXPECT_TRUE(hasScatterStore(c));
  ASSERT_EQ(c.program.kernels[0].initFirst.size(), 1u);
  EXPECT_EQ(c.program.kernels[0].initFirst[0].fromInput, 0);  // a copy of x
  EXPECT_EQ(c.program.kernels[0].initFirst[0].bytes, 5 * 4 * 3 * 4);
  const ElementwiseOutput& store = c.kernels[0].plan.stores.at(0);
  EXPECT_EQ(store.scatterExtent, 20);
  EXPECT_EQ(store.scatterStride, 3);
  expectChecked(c, false);
  // Hand-worked: pairs (1, 0) twice, (0, 1), and (2, 0) outside the [2, 2] rows.
  Graph small = oneOp("TensorScatterAdd", {desc("x", {2, 2}, "int32"), desc("i", {4, 2}, "int64"), desc("u", {4}, "int32")},
                      desc("y", {2, 2}, "int32"), Json::array());
  expectOutput(small, {values(DType::Int32, {2, 2}, {0, 1, 2, 3}), values(DType::Int64, {4, 2}, {1, 0, 0, 1, 1, 0, 2, 0}),
                       values(DType::Int32, {4}, {10, 20, 30, 40})},
               {0, 21, 42, 3});
  EXPECT_TRUE(hasScatterStore(compiled(small)));
}

TEST(ScatterAdd, AComputedBaseIsAddedAfterAScatterIntoATemporary) {
  GraphBuilder b("computed_base");
  Value x = b.input("x", DType::Float32, {40, 6});
  Value v = b.input("v", DType::Float32, {25, 6});
  Value i = b.input("i", DType::Int32, {25});
  b.output(b.scatterAdd(b.mul(x, x), v, i, 1));
  const Graph g = b.build();
  EXPECT_NE(whyNotAtomicScatter(g, g.nodes.back(), false).find("base is computed"), std::string::npos);
  CompiledGraph c = compiled(g);
  ASSERT_NE(scatterIntoTemporary(c), nullptr);
  expectTemporaryZeroedFirst(c);
  expectChecked(c, false);
  CompiledGraph deterministic = compiled(g, true);
  EXPECT_FALSE(hasScatterStore(deterministic));
  expectChecked(deterministic, true);
}

TEST(ScatterAdd, AScatterWrittenInPlaceOfItsBaseAddsIntoThatBuffer) {
  // An embedding-table update: table += rows at ids, written back into the table.
  auto update = [](bool alsoSquareTheTable) {
    GraphBuilder b("table_update");
    Value table = b.input("table", DType::Float32, {300, 16});
    Value rows = b.input("rows", DType::Float32, {70, 16});
    Value ids = b.input("ids", DType::Int32, {70});
    b.outputInto(b.scatterAdd(table, rows, ids, 1), table);
    if (alsoSquareTheTable) b.output(b.mul(table, table));  // reads the table as it was
    return b.build();
  };
  CompiledGraph c = compiled(update(false));
  ASSERT_EQ(c.program.kernels.size(), 1u);
  EXPECT_TRUE(hasScatterStore(c));
  EXPECT_TRUE(c.program.kernels[0].initFirst.empty());  // the buffer holds the base already
  EXPECT_NE(c.kernels[0].plan.why.find("in place"), std::string::npos) << c.kernels[0].plan.why;
  expectChecked(c, false);
  // Another op reads the table: the adds must not land while it does.
  CompiledGraph shared = compiled(update(true));
  EXPECT_NE(scatterIntoTemporary(shared), nullptr);
  expectChecked(shared, false);
  // Hand-worked: rows 1 and 2 of a [3] table, id 5 dropped.
  GraphBuilder b("small_update");
  Value small = b.input("table", DType::Int32, {3});
  Value rows = b.input("rows", DType::Int32, {4});
  Value ids = b.input("ids", DType::Int64, {4});
  b.outputInto(b.scatterAdd(small, rows, ids, 1), small);
  expectOutput(b.build(),
               {values(DType::Int32, {3}, {1, 2, 3}), values(DType::Int32, {4}, {10, 20, 30, 40}),
                values(DType::Int64, {4}, {1, 2, 1, 5})},
               {1, 42, 23});
}

TEST(ScatterAdd, TheBuilderMakesOneAndTheVerifierChecksItsShapes) {
  GraphBuilder b("builder_scatter");
  Value v = b.input("v", DType::Float32, {6, 3});
  Value i = b.input("i", DType::Int32, {6});
  b.output(b.scatterAdd(b.mul(v, v), i, 4));
  Graph g = b.build();
  EXPECT_EQ(g.tensor(g.outputs[0].tensor).shape, (Shape{4, 3}));
  expectOutput(g, {values(DType::Float32, {6, 3}, {1, 1, 1, 2, 2, 2, 3, 3, 3, 1, 2, 3, 0, 0, 0, 5, 5, 5}),
                   values(DType::Int32, {6}, {3, 0, 3, 0, 9, 1})},
               {5, 8, 13, 25, 25, 25, 0, 0, 0, 10, 10, 10});
  GraphBuilder bad("bad_scatter");
  Value w = bad.input("w", DType::Float32, {6, 3});
  Value j = bad.input("j", DType::Int32, {5});
  bad.output(bad.scatterAdd(w, j, 4));
  expectRejected([&] { bad.build(); }, "ScatterAdd's values have shape [6,3], expected [5,3]");
}

TEST(ScatterAdd, WrittenBackAsPolyredsOwnOpAndReadAgain) {
  Graph g = segmentSum({30, 4}, "int32", 6, "int64");
  Graph again = parseComposite(writeComposite(g), "again.json");
  EXPECT_EQ(again.toString(), g.toString());
  std::vector<HostTensor> in = {values(DType::Int32, {30, 4}, std::vector<double>(120, 1)),
                                values(DType::Int64, {30}, std::vector<double>(30, 5))};
  std::vector<double> want(24, 0);
  for (int k = 20; k < 24; ++k) want[static_cast<size_t>(k)] = 30;
  expectOutput(again, in, want);
}

}  // namespace
