// Gather (ir/ops.h): params[a.., indices[i..], b..] along an axis, 0 where an index is
// outside [0, extent). Checked on hand-written values (MindSpore's and numpy's take
// semantics; out-of-range and negative indices give 0) through the reference and the
// lowered kernels on the CPU; fused into a reduction (an embedding bag), with the point
// reference equal to the whole one; MindSpore's axis-as-an-input form; its three kinds
// of lane code; params computed by elementwise ops (pushed into the gather), by
// reductions and scans (loaded from their temporaries), Transposes (the gather moves
// below them), gathers (the indices are gathered) and anything else (materialized by a
// kernel of its own); refusals.
// The GPU half: OpsGpu over tests/data/ops/gather_*.json, RandomGraphsGpu's index graphs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "composite_test_helpers.h"
#include "frontend/builder.h"
#include "interp/compare.h"
#include "interp/point_reference.h"
#include "interp/random_inputs.h"
#include "lowering_helpers.h"
#include "one_op_graph.h"

namespace polyred {
namespace {

using test_support::attr;
using test_support::desc;
using test_support::Json;

HostTensor counting(DType t, const Shape& s) {
  std::vector<double> v(static_cast<size_t>(numElements(s)));
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<double>(k);
  return HostTensor::fromValues(t, s, v);
}

TEST(Gather, TakesRowsAndGivesZeroOutOfRange) {
  Graph g = test_support::oneOp("Gather", {desc("table", {4, 3}, "float32"), desc("ids", {5}, "int32")},
                                desc("y", {5, 3}, "float32"), {attr("axis", 0)});
  test_support::expectOutput(g, {counting(DType::Float32, {4, 3}), HostTensor::fromValues(DType::Int32, {5}, {2, 0, -1, 4, 3})},
                             {6, 7, 8, 0, 1, 2, 0, 0, 0, 0, 0, 0, 9, 10, 11});
}

TEST(Gather, AlongAnInnerAxisWithMatrixIndices) {
  // out[r, p, q] = table[r, ids[p, q]]
  Graph g = test_support::oneOp("Gather", {desc("table", {2, 4}, "int8"), desc("ids", {2, 2}, "int64")},
                                desc("y", {2, 2, 2}, "int8"), {attr("axis", -1)});
  test_support::expectOutput(g, {counting(DType::Int8, {2, 4}), HostTensor::fromValues(DType::Int64, {2, 2}, {3, 1, 0, 0})},
                             {3, 1, 0, 0, 7, 5, 4, 4});
}

TEST(Gather, TheAxisMayComeAsAConstantInput) {
  Json table = desc("table", {2, 4}, "float16"), ids = desc("ids", {3}, "int32"), axis = desc("axis", {}, "int64");
  axis["value"] = 1;
  Json out = desc("y", {2, 3}, "float16");
  Json doc = test_support::oneOpDocument("Gather", Json::array({Json::array({table}), Json::array({ids})}),
                                         Json::array({Json::array({table}), Json::array({ids}), Json::array({axis})}),
                                         Json::array({out}), nullptr);
  test_support::expectOutput(parseComposite(doc.dump(), "gather.json"),
                             {counting(DType::Float16, {2, 4}), HostTensor::fromValues(DType::Int32, {3}, {3, 3, 1})},
                             {3, 3, 1, 7, 7, 5});
}

// GatherNd (MindSpore/TensorFlow): out[i.., rest] = params[indices[i.., 0..k-1], rest];
// a row with any component outside its axis (negative too) is 0, as AKG's kernel.
TEST(Gather, GatherNdTakesRowsByIndexTuples) {
  // params [3,2,2] counting; indices [[2,1],[0,0],[1,2],[-1,0]] (k = 2): rows of 2.
  Graph g = test_support::oneOp("GatherNd", {desc("p", {3, 2, 2}, "float32"), desc("i", {4, 2}, "int32")},
                                desc("y", {4, 2}, "float32"), Json::array());
  test_support::expectOutput(g, {counting(DType::Float32, {3, 2, 2}),
                                 HostTensor::fromValues(DType::Int32, {4, 2}, {2, 1, 0, 0, 1, 2, -1, 0})},
                             {10, 11, 0, 1, 0, 0, 0, 0});
  // k equal to the rank: single elements; indices of rank 3.
  Graph e = test_support::oneOp("GatherNd", {desc("p", {2, 3}, "int64"), desc("i", {2, 1, 2}, "int64")},
                                desc("y", {2, 1}, "int64"), Json::array());
  test_support::expectOutput(e, {counting(DType::Int64, {2, 3}), HostTensor::fromValues(DType::Int64, {2, 1, 2}, {1, 2, 0, 3})},
                             {5, 0});
  // k = 1 with a single index tuple: indices [1] gives params[i] itself.
  Graph one = test_support::oneOp("GatherNd", {desc("p", {3, 2}, "int8"), desc("i", {1}, "int32")},
                                  desc("y", {2}, "int8"), Json::array());
  test_support::expectOutput(one, {counting(DType::Int8, {3, 2}), HostTensor::fromValues(DType::Int32, {1}, {2})}, {4, 5});
  test_support::expectCheckPasses(test_support::oneOp("GatherNd", {desc("p", {7, 5, 129}, "float16"), desc("i", {33, 2}, "int64")},
                                                      desc("y", {33, 129}, "float16"), Json::array()));
  EXPECT_THROW(test_support::oneOp("GatherNd", {desc("p", {3, 2}, "float32"), desc("i", {4, 3}, "int32")},
                                   desc("y", {4}, "float32"), Json::array()),
               Error);
}

TEST(Gather, AnEmbeddingBagFusesIntoOneKernelAndMatchesPointByPoint) {
  GraphBuilder b("embedding_bag");
  Value table = b.input("table", DType::Float16, {1000, 64});
  Value ids = b.input("ids", DType::Int32, {32, 20});
  Value rows = b.gather(table, ids, 0);  // [32, 20, 64]
  b.output(b.reduce(b.cast(rows, DType::Float32), Reduction::sum(DType::Float32), {1}));
  Graph g = b.build();
  test_support::expectCheckPasses(g);
  std::vector<double> picked;
  for (int k = 0; k < 32 * 20; ++k) picked.push_back((k * 37) % 1100 - 50);  // some out of range
  std::vector<HostTensor> in = {counting(DType::Float16, {1000, 64}), HostTensor::fromValues(DType::Int32, {32, 20}, picked)};
  std::vector<HostTensor> whole = evaluateReference(g, in);
  PointReference points(g, in);
  for (int64_t k : {0, 1, 63, 64, 1000, 2047})
    EXPECT_TRUE(points.value(g.outputs[0].tensor, k).identical(whole[0].get(k))) << "element " << k;
}

std::string sourceOf(const Graph& g) {
  std::string s;
  for (const KernelSpec& k : compileGraph(g, CompileOptions{}).program.kernels) s += k.source;
  return s;
}

// In lane code (poly/vectorize): a whole vector of a row where the index is the same in
// every lane, one element for all lanes where the offset is too, else one element per
// lane with its own index.
TEST(Gather, LanesTakeWholeRowsOrOneElementPerLane) {
  GraphBuilder bag("embedding_bag");
  Value table = bag.input("table", DType::Float16, {100, 256});
  bag.output(bag.reduce(bag.cast(bag.gather(table, bag.input("ids", DType::Int32, {64, 48}), 0), DType::Float32),
                        Reduction::sum(DType::Float32), {1}));
  const Graph rows = bag.build();
  EXPECT_NE(sourceOf(rows).find("if (at >= 0 && at < 100LL) pr_load_lanes<8>"), std::string::npos) << sourceOf(rows);

  GraphBuilder cols("gathered_columns");
  Value x = cols.input("x", DType::Float32, {256, 300});
  cols.output(cols.reduce(cols.gather(x, cols.input("c", DType::Int64, {400}), 1), Reduction::sum(DType::Float32), {1}));
  const Graph perLane = cols.build();
  EXPECT_NE(sourceOf(perLane).find("[1] = pr_gather(in0"), std::string::npos) << sourceOf(perLane);

  GraphBuilder scaled("row_scaled");
  Value y = scaled.input("y", DType::Float32, {512, 1024});
  Value w = scaled.gather(scaled.input("w", DType::Float32, {100}), scaled.input("ids", DType::Int32, {512}), 0);
  scaled.output(scaled.reduce(scaled.mul(y, scaled.reshape(w, {512, 1})), Reduction::sum(DType::Float32), {1}));
  const Graph invariant = scaled.build();
  EXPECT_NE(sourceOf(invariant).find("s = pr_gather(in"), std::string::npos) << sourceOf(invariant);

  for (const Graph* g : {&rows, &perLane, &invariant}) test_support::expectCheckPasses(*g);
}

// Computed params (canon/gather_sources): the gather is pushed into the elementwise ops
// that compute them, so every Gather the kernels see reads a graph input; outside the
// params the result stays 0 even where the ops would give something else at 0.
bool everyGatherReadsAnInput(const Graph& g) {
  for (const Node& n : g.nodes)
    if (n.kind == OpKind::Gather && g.tensor(gatherSource(g, n)).role != TensorRole::Input) return false;
  return true;
}

TEST(Gather, ComputedParamsArePushedIntoTheGather) {
  {  // 2 * t + bias, gathered along axis 0 (bias broadcast along it); rows 4 and -1 are 0
    GraphBuilder b("affine_rows");
    Value t = b.input("t", DType::Float32, {4, 3});
    Value bias = b.input("bias", DType::Float32, {3});
    Value params = b.add(b.mul(t, b.constant(Scalar::ofFloat(DType::Float32, 2))), bias);
    b.output(b.gather(params, b.input("ids", DType::Int32, {4}), 0));
    const Graph g = b.build();
    EXPECT_TRUE(everyGatherReadsAnInput(compileGraph(g, CompileOptions{}).graph));
    test_support::expectOutput(g, {counting(DType::Float32, {4, 3}), HostTensor::fromValues(DType::Float32, {3}, {10, 20, 30}),
                                   HostTensor::fromValues(DType::Int32, {4}, {2, 4, -1, 0})},
                               {22, 34, 46, 0, 0, 0, 0, 0, 0, 10, 22, 34});
  }
  {  // t * s (s broadcast along the gathered axis 1), by matrix indices; a cast to int8
    GraphBuilder b("scaled_columns");
    Value t = b.input("t", DType::Float32, {2, 4});
    Value scale = b.input("s", DType::Float32, {2, 1});
    b.output(b.gather(b.cast(b.mul(t, scale), DType::Int8), b.input("ids", DType::Int64, {2, 2}), 1));  // [2, 2, 2]
    test_support::expectOutput(b.build(), {counting(DType::Float32, {2, 4}), HostTensor::fromValues(DType::Float32, {2, 1}, {1, 3}),
                                           HostTensor::fromValues(DType::Int64, {2, 2}, {3, 1, 5, 0})},
                               {3, 1, 0, 0, 21, 15, 0, 12});
  }
  {  // a constant fill: the constant inside, 0 outside
    GraphBuilder b("constant_params");
    Value params = b.broadcastTo(b.constant(Scalar::ofFloat(DType::Float16, 1.5)), {5, 2});
    b.output(b.gather(params, b.input("ids", DType::Int32, {3}), 0));
    test_support::expectOutput(b.build(), {HostTensor::fromValues(DType::Int32, {3}, {4, 5, 0})}, {1.5, 1.5, 0, 0, 1.5, 1.5});
  }
}

// GatherNd of computed params: its Reshape (merging the indexed axes) sinks below the
// elementwise ops first, then the gather is pushed in.
TEST(Gather, GatherNdOfComputedParamsSinksItsReshape) {
  Json p = desc("p", {3, 2, 2}, "float32"), i = desc("i", {4, 2}, "int32");
  Json half = desc("p16", {3, 2, 2}, "float16"), out = desc("y", {4, 2}, "float16");
  Json doc = test_support::oneOpDocument("GatherNd", Json::array({Json::array({p}), Json::array({i})}),
                                         Json::array({Json::array({half}), Json::array({i})}), Json::array({out}),
                                         Json::array());
  doc["op_desc"].insert(doc["op_desc"].begin(),
                        Json{{"name", "Cast"}, {"attr", Json::array({attr("dst_type", "float16")})},
                             {"input_desc", Json::array({Json::array({p})})}, {"output_desc", Json::array({half})}});
  const Graph g = parseComposite(doc.dump(), "gathernd_of_cast.json");
  EXPECT_TRUE(everyGatherReadsAnInput(compileGraph(g, CompileOptions{}).graph));
  test_support::expectOutput(g, {counting(DType::Float32, {3, 2, 2}),
                                 HostTensor::fromValues(DType::Int32, {4, 2}, {2, 1, 0, 0, 1, 2, -1, 0})},
                             {10, 11, 0, 1, 0, 0, 0, 0});
}

// The pushed gather against the source graph's reference, bit for bit (the same ops on
// the same elements), on odd shapes: an embedding bag of a cast table, a table scaled
// per row, a gather of a gathered operand's Reshape chain.
TEST(Gather, ComputedParamsMatchTheSourceGraphOnOddShapes) {
  std::vector<Graph> graphs;
  {
    GraphBuilder b("bag_of_cast_table");
    Value table = b.cast(b.input("table", DType::Float32, {1001, 67}), DType::Float16);
    Value rows = b.gather(table, b.input("ids", DType::Int64, {33, 7}), 0);  // [33, 7, 67]
    b.output(b.reduce(b.cast(rows, DType::Float32), Reduction::sum(DType::Float32), {1}));
    graphs.push_back(b.build());
  }
  {
    GraphBuilder b("rows_scaled_then_gathered");
    Value x = b.input("x", DType::Float32, {97, 130});
    Value w = b.input("w", DType::Float32, {97, 1});
    Value params = b.unary(OpKind::Exp, b.sub(b.mul(x, w), b.reshape(b.input("c", DType::Float32, {130}), {1, 130})));
    b.output(b.gather(params, b.input("cols", DType::Int32, {5, 3}), 1));  // [97, 5, 3]
    graphs.push_back(b.build());
  }
  {
    GraphBuilder b("rows_of_a_reshaped_exp");  // GatherNd's form: a Reshape merging axes, then a Gather
    Value e = b.unary(OpKind::Exp, b.mul(b.input("x", DType::Float32, {7, 5, 129}), b.input("y", DType::Float32, {7, 5, 129})));
    b.output(b.gather(b.reshape(e, {35, 129}), b.input("rows", DType::Int32, {40}), 0));
    graphs.push_back(b.build());
  }
  for (const Graph& g : graphs) {
    SCOPED_TRACE(g.name);
    CompiledGraph c = compileGraph(g, CompileOptions{});
    EXPECT_TRUE(everyGatherReadsAnInput(c.graph)) << c.graph.toString();
    std::vector<HostTensor> in = makeRandomInputs(g, 11);
    for (size_t k = 0; k < in.size(); ++k)  // indices from -3 to past the extent
      if (!isFloat(in[k].dtype))
        for (int64_t e = 0; e < in[k].size(); ++e)
          in[k].set(e, Scalar::convert(static_cast<int64_t>((e * 53) % 1010) - 3, in[k].dtype));
    const std::vector<HostTensor> want = evaluateReference(g, in);
    CpuCheckOptions all;
    all.maxPoints = 0;
    Deadline unlimited = Deadline::none();
    const LoweredRun got = runLoweredOnCpu(c, in, all, unlimited);
    for (int64_t e = 0; e < want[0].size(); ++e)
      ASSERT_TRUE(got.outputs.at(0).get(e).identical(want[0].get(e))) << "element " << e;
    for (const KernelSpec& k : c.program.kernels) EXPECT_NO_THROW(compileCuda(k.source, k.name, 9, 0));
  }
}

// The lowered kernels of `c` (compiled from `source`) against the source graph's
// reference on random inputs of `seed`, within each output's tolerance; every kernel
// compiles under NVRTC.
void expectLoweredMatchesTheSource(const Graph& source, const CompiledGraph& c, uint64_t seed) {
  const std::vector<HostTensor> in = makeRandomInputs(source, seed);
  const std::vector<HostTensor> want = evaluateReference(source, in);
  const std::vector<HostTensor> got = test_support::lowered(c, in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    const CompareResult r = compareTensors(got[o], want[o], toleranceOf(source, source.outputs[o].tensor));
    EXPECT_TRUE(r.ok) << "output " << o << ": " << r.message;
  }
  for (const KernelSpec& k : c.program.kernels) EXPECT_NO_THROW(compileCuda(k.source, k.name, 9, 0)) << k.source;
}

// Params that are a reduction's or a scan's result come from the temporary an earlier
// kernel writes; a gather moves below a Transpose or a Window, and a gather of a gather
// along the inner one's index axes gathers the indices. Each against the source graph's
// reference on random inputs (indices from -100 to 99: many out of range).
TEST(Gather, ReductionScanTransposeAndGatherParams) {
  std::vector<Graph> graphs;
  {
    GraphBuilder b("rows_of_a_row_sum");
    Value sums = b.reduceSum(b.input("x", DType::Float32, {97, 130}), {1}, true);  // [97, 1]
    b.output(b.gather(sums, b.input("ids", DType::Int32, {50}), 0));
    graphs.push_back(b.build());
  }
  {  // the gathered max read beside the reduction over the same rows, then summed again
    GraphBuilder b("shifted_by_a_gathered_max");
    Value x = b.input("x", DType::Float32, {64, 300});
    Value picked = b.gather(b.reduceMax(x, {1}), b.input("ids", DType::Int64, {64}), 0);  // [64]
    Value shifted = b.sub(x, b.reshape(picked, {64, 1}));
    b.output(shifted);
    b.output(b.reduceSum(b.unary(OpKind::Exp, shifted), {1}));
    graphs.push_back(b.build());
  }
  {
    GraphBuilder b("columns_of_a_cumsum");
    Value c = b.scan(b.input("x", DType::Float32, {40, 333}), Reduction::sum(DType::Float32), 1);
    b.output(b.gather(b.mul(c, c), b.input("cols", DType::Int32, {3, 7}), 1));  // [40, 3, 7]
    graphs.push_back(b.build());
  }
  {
    GraphBuilder b("rows_of_a_transposed_exp");
    Value t = b.transpose(b.unary(OpKind::Exp, b.input("x", DType::Float16, {6, 70, 9})), {2, 0, 1});  // [9, 6, 70]
    b.output(b.gather(t, b.input("ids", DType::Int32, {4, 5}), 2));  // [9, 6, 4, 5]
    b.output(b.gather(t, b.input("rows", DType::Int32, {11}), 0));   // [11, 6, 70]
    graphs.push_back(b.build());
  }
  {  // the gather moves below the windows: backwards, wrapping around, strided
    GraphBuilder b("rows_and_columns_of_windows");
    Value x = b.input("x", DType::Float16, {64, 300});
    b.output(b.gather(b.window(x, {60, 100}, {2, 10}, {-1, 2}), b.input("ids", DType::Int32, {10}), 0));  // [10, 100]
    b.output(b.gather(b.window(x, {64, 70}, {0, 290}, {1, 1}), b.input("cols", DType::Int64, {4, 6}), 1));  // [64, 4, 6]
    graphs.push_back(b.build());
  }
  {
    GraphBuilder b("a_gather_of_gathered_rows");
    Value rows = b.gather(b.input("table", DType::Float32, {120, 17}), b.input("i1", DType::Int32, {30, 8}), 0);  // [30, 8, 17]
    b.output(b.gather(rows, b.input("i2", DType::Int64, {25}), 1));  // [30, 25, 17]
    graphs.push_back(b.build());
  }
  for (const Graph& g : graphs) {
    SCOPED_TRACE(g.name);
    CompiledGraph c = compileGraph(g, CompileOptions{});
    for (const Node& n : c.graph.nodes)  // every gather reads an input or a reduction's or scan's result
      if (n.kind == OpKind::Gather) {
        const Node* p = c.graph.producer(gatherSource(c.graph, n));
        EXPECT_TRUE(!p || p->kind == OpKind::Reduce || p->kind == OpKind::Scan) << c.graph.toString();
      }
    expectLoweredMatchesTheSource(g, c, 5);
  }
}

// Params that no rewrite moves the gather into -- a gather along another axis than the
// inner one's index, a Reshape of an op that broadcasts -- are materialized by a kernel
// of their own, which the gather's kernel runs after; so is a reduction's result under a
// Window, once the gather moved below the Window (against the source graph's reference,
// random inputs).
TEST(Gather, OtherParamsAreMaterializedForTheGather) {
  std::vector<Graph> graphs;
  {
    GraphBuilder b("gathered_both_ways");
    Value rows = b.gather(b.input("t", DType::Float32, {40, 33}), b.input("i", DType::Int32, {12}), 0);  // [12, 33]
    b.output(b.gather(rows, b.input("j", DType::Int64, {3, 5}), 1));                                     // [12, 3, 5]
    graphs.push_back(b.build());
  }
  {
    GraphBuilder b("rows_of_a_reshaped_broadcast");
    Value sum = b.add(b.input("x", DType::Float32, {7, 5, 3}), b.input("bias", DType::Float32, {3}));
    b.output(b.gather(b.reshape(sum, {35, 3}), b.input("i", DType::Int32, {20}), 0));
    graphs.push_back(b.build());
  }
  {  // summed again: the materialized slice feeds a reduction kernel's gather
    GraphBuilder b("a_bag_of_sliced_row_sums");
    Value sums = b.reduceSum(b.input("x", DType::Float32, {50, 80}), {1}, true);  // [50, 1]
    Value sliced = b.window(sums, {30, 1}, {10, 0});
    Value bag = b.gather(sliced, b.input("ids", DType::Int32, {16, 9}), 0);  // [16, 9, 1]
    b.output(b.reduceSum(bag, {1}));
    graphs.push_back(b.build());
  }
  for (DType t : {DType::Float32, DType::Float16}) {  // a scatter's sums, scattered into a temporary
    GraphBuilder b("rows_of_segment_sums_" + std::string(dtypeName(t)));
    Value sums = b.scatterAdd(b.input("v", t, {60, 3}), b.input("s", DType::Int32, {60}), 9);
    b.output(b.gather(sums, b.input("i", DType::Int32, {20}), 0));
    graphs.push_back(b.build());
  }
  {  // ... added to a base
    GraphBuilder b("rows_of_a_table_update");
    Value table = b.input("table", DType::Float32, {30, 4});
    Value updated = b.scatterAdd(table, b.input("u", DType::Float32, {50, 4}), b.input("k", DType::Int64, {50}), 1);
    b.output(b.gather(updated, b.input("i", DType::Int32, {7}), 0));
    graphs.push_back(b.build());
  }
  for (const Graph& g : graphs) {
    SCOPED_TRACE(g.name);
    CompiledGraph c = compileGraph(g, CompileOptions{});
    EXPECT_GE(c.program.kernels.size(), 2u);  // the materializing kernel, then the gather's
    expectLoweredMatchesTheSource(g, c, 3);
  }
}

TEST(Gather, RefusesWhatItCannotRead) {
  auto why = [](const std::string& op, std::vector<Json> ins, Json out, Json attrs) {
    try {
      test_support::oneOp(op, std::move(ins), std::move(out), std::move(attrs));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(why("Gather", {desc("t", {4, 3}, "float32"), desc("i", {2}, "float32")}, desc("y", {2, 3}, "float32"),
                {attr("axis", 0)}).find("indices must be int32 or int64"), std::string::npos);
  EXPECT_NE(why("Gather", {desc("t", {4, 3}, "float32"), desc("i", {2}, "int32")}, desc("y", {2, 3}, "float32"),
                {attr("axis", 2)}).find("axis 2 is out of range"), std::string::npos);
  EXPECT_NE(why("Gather", {desc("t", {4, 3}, "float32"), desc("i", {2}, "int32")}, desc("y", {2, 3}, "float32"),
                {attr("axis", 0), attr("batch_dims", 1)}).find("batch_dims"), std::string::npos);
  EXPECT_NE(why("Gather", {desc("t", {4, 3}, "float32"), desc("i", {2}, "int32")}, desc("y", {3, 3}, "float32"),
                {attr("axis", 0)}).find("shape"), std::string::npos);
  GraphBuilder inPlace("gather_in_place");  // out[k] = t[ids[k]] written into t: a race
  Value table = inPlace.input("t", DType::Float32, {8});
  inPlace.outputInto(inPlace.gather(table, inPlace.input("ids", DType::Int32, {8}), 0), table);
  try {
    inPlace.build();
    ADD_FAILURE() << "a Gather of a tensor written in place was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("writes in place"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace polyred
