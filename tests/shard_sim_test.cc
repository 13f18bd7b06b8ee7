// The sharded lowering (src/shard/) simulated on the CPU (driver/shard_check.h): each
// rank's lowered local kernels run on the CPU executor, partials are combined in rank
// order, the epilogue runs, and the result is compared with the unsharded reference.
// Sweeps sum/prod/max/min/and/or/mean over the all/x/y forms, f32/f16/bf16/int32/bool,
// even and uneven splits, split reduced axes and split kept axes; plus multi-round
// graphs (variance), determinism, the collective choice, bad shardings, and a negative
// control showing that a wrong combine is caught.
#include <gtest/gtest.h>

#include <cstdlib>

#include "driver/cpu_check.h"
#include "driver/shard_check.h"
#include "frontend/builder.h"
#include "frontend/composite_reader.h"
#include "interp/random_inputs.h"
#include "interp/reference.h"
#include "multigpu/nccl_library.h"
#include "support/error.h"

using namespace polyred;

namespace {

enum class Kind { Sum, Prod, Max, Min, And, Or, Mean };
const char* kindName(Kind k) {
  switch (k) {
    case Kind::Sum: return "sum";
    case Kind::Prod: return "prod";
    case Kind::Max: return "max";
    case Kind::Min: return "min";
    case Kind::And: return "and";
    case Kind::Or: return "or";
    case Kind::Mean: return "mean";
  }
  return "";
}

enum class Form { All, X, Y };  // reduce every axis, the inner one, the outer one

Scalar scalarOf(DType t, double v) { return isFloat(t) ? Scalar::convert(v, t) : Scalar::convert(int64_t(v), t); }

// x [rows, cols] -> elementwise prologue -> reduce -> elementwise epilogue.
Graph sweepGraph(Kind kind, DType t, Form form, Shape shape) {
  GraphBuilder b(std::string("shard_") + kindName(kind));
  Value x = b.input("x", t, shape);
  std::vector<int64_t> axes = form == Form::All ? std::vector<int64_t>{0, 1}
                              : form == Form::X ? std::vector<int64_t>{1}
                                                : std::vector<int64_t>{0};
  Value pre;
  if (t == DType::Bool) pre = b.unary(OpKind::LogicalNot, x);
  else if (isFloat(t)) pre = b.add(b.mul(x, b.constant(scalarOf(t, 0.25))), b.constant(scalarOf(t, 1)));
  else pre = b.mul(x, b.constant(scalarOf(t, 3)));
  Value red;
  switch (kind) {
    case Kind::Sum: case Kind::Mean: red = b.reduce(pre, Reduction::sum(t), axes); break;
    case Kind::Prod: red = b.reduce(pre, Reduction::prod(t), axes); break;
    case Kind::Max: red = b.reduce(pre, Reduction::max(t), axes); break;
    case Kind::Min: red = b.reduce(pre, Reduction::min(t), axes); break;
    case Kind::And: red = b.reduce(pre, Reduction::logicalAnd(t), axes); break;
    case Kind::Or: red = b.reduce(pre, Reduction::logicalOr(t), axes); break;
  }
  int64_t count = 1;
  for (int64_t a : axes) count *= shape[static_cast<size_t>(a)];
  if (kind == Kind::Mean) b.output(b.binary(OpKind::Div, red, b.constant(scalarOf(t, double(count)))));
  else if (t == DType::Bool) b.output(b.unary(OpKind::LogicalNot, red));
  else if (isFloat(t)) b.output(b.mul(red, b.constant(scalarOf(t, 2))));
  else b.output(b.add(red, b.constant(scalarOf(t, 1))));
  return b.build();
}

struct SweepCase {
  Kind kind;
  DType dtype;
};

class ShardSweep : public ::testing::TestWithParam<SweepCase> {};

TEST_P(ShardSweep, MatchesUnshardedReference) {
  const SweepCase c = GetParam();
  const Shape shape{13, 11};
  // Splits: 3 ranks of 13 rows or 11 columns (uneven), 2 ranks with explicit uneven
  // sizes, 2 ranks of the [12, 10] shape (even), and 1 rank.
  for (Form form : {Form::All, Form::X, Form::Y}) {
    for (int axis : {0, 1}) {
      for (auto [ranks, sizes, even] : std::vector<std::tuple<int, std::vector<int64_t>, bool>>{
               {3, {}, false}, {2, {axis == 0 ? 1 : 9, axis == 0 ? 12 : 2}, false}, {2, {}, true}, {1, {}, false}}) {
        const Shape s = even ? Shape{12, 10} : shape;
        Graph g = sweepGraph(c.kind, c.dtype, form, s);
        ShardSpec spec;
        spec.ranks = ranks;
        spec.inputs.push_back({"x", axis, sizes});
        ShardCheckOptions o;
        o.seed = 7;
        ShardCheckReport r = checkShardedOnCpu(g, spec, o);
        const bool reducedAxis = form == Form::All || (form == Form::X) == (axis == 1);
        SCOPED_TRACE(std::string(kindName(c.kind)) + " " + std::string(dtypeName(c.dtype)) + " form " +
                     std::to_string(int(form)) + " split axis " + std::to_string(axis) + " over " +
                     std::to_string(ranks) + " ranks" + (even ? " (even)" : "") + "\n" + r.plan);
        EXPECT_TRUE(r.ok) << r.message;
        // A split reduced axis needs exactly one round of combines; a split kept axis none.
        ShardedLowering l = lowerSharded(g, spec);
        EXPECT_EQ(l.rounds.size(), reducedAxis ? 1u : 0u);
        EXPECT_EQ(l.outputAxis[0] >= 0, !reducedAxis);
        EXPECT_GT(r.simulation.localKernels, 0);
      }
    }
  }
}

std::vector<SweepCase> sweepCases() {
  std::vector<SweepCase> v;
  for (Kind k : {Kind::Sum, Kind::Prod, Kind::Max, Kind::Min})
    for (DType t : {DType::Float32, DType::Float16, DType::BFloat16, DType::Int32}) v.push_back({k, t});
  for (DType t : {DType::Float32, DType::Float16, DType::BFloat16}) v.push_back({Kind::Mean, t});
  v.push_back({Kind::And, DType::Bool});
  v.push_back({Kind::Or, DType::Bool});
  return v;
}

INSTANTIATE_TEST_SUITE_P(KindsAndTypes, ShardSweep, ::testing::ValuesIn(sweepCases()),
                         [](const ::testing::TestParamInfo<SweepCase>& info) {
                           return std::string(kindName(info.param.kind)) + "_" +
                                  std::string(dtypeName(info.param.dtype));
                         });

// f16 inputs keep f32 partials: the round's output is the accumulator, and the final
// graph casts the combined accumulator back to f16.
TEST(ShardLowering, HalfInputsKeepFloat32Partials) {
  Graph g = sweepGraph(Kind::Mean, DType::Float16, Form::X, {4, 64});
  ShardSpec spec{2, {{"x", 1, {}}}};
  ShardedLowering l = lowerSharded(g, spec);
  ASSERT_EQ(l.rounds.size(), 1u);
  const Graph& local = l.rounds[0].perRank[0].graph;
  EXPECT_EQ(local.tensor(local.outputs[0].tensor).dtype, DType::Float32);
  EXPECT_EQ(local.tensor(local.outputs[0].tensor).shape, (Shape{4}));
  EXPECT_EQ(local.tensor(local.inputs[0]).shape, (Shape{4, 32}));
  const Graph& fin = l.finalPerRank[1].graph;
  ASSERT_EQ(fin.inputs.size(), 1u);
  EXPECT_EQ(fin.tensor(fin.inputs[0]).dtype, DType::Float32);
  EXPECT_EQ(fin.tensor(fin.outputs[0].tensor).dtype, DType::Float16);
  EXPECT_EQ(l.combines[0].choice.collective, Collective::AllReduce);
}

// Variance over the split axis: mean, then the mean of squared differences -- two rounds.
TEST(ShardLowering, VarianceNeedsTwoRounds) {
  for (DType t : {DType::Float32, DType::BFloat16}) {
    GraphBuilder b("var");
    Value x = b.input("x", t, {6, 40});
    Value n = b.constant(scalarOf(t, 40));
    Value mean = b.binary(OpKind::Div, b.reduceSum(x, {1}, true), n);
    Value d = b.sub(x, mean);
    b.output(b.binary(OpKind::Div, b.reduceSum(b.mul(d, d), {1}), n));
    b.output(mean);
    Graph g = b.build();
    ShardSpec spec{3, {{"x", 1, {5, 20, 15}}}};
    ShardedLowering l = lowerSharded(g, spec);
    EXPECT_EQ(l.rounds.size(), 2u);
    ShardCheckReport r = checkShardedOnCpu(g, spec, {});
    EXPECT_TRUE(r.ok) << r.plan << r.message;
  }
}

// Several inputs split alike, a replicated bias broadcast into them, an output before
// the reduction (split, gathered) beside the reduced one.
TEST(ShardLowering, TwoShardedInputsAndReplicatedBias) {
  GraphBuilder b("two");
  Value x = b.input("x", DType::Float32, {10, 24});
  Value w = b.input("w", DType::Float32, {10, 24});
  Value bias = b.input("bias", DType::Float32, {24});
  Value y = b.add(b.mul(x, w), bias);
  b.output(y);
  b.output(b.reduceSum(y, {0}));
  b.output(b.reduceMax(y, {}));
  Graph g = b.build();
  ShardSpec spec{4, {{"x", 0, {}}, {"w", 0, {}}}};
  ShardCheckReport r = checkShardedOnCpu(g, spec, {});
  EXPECT_TRUE(r.ok) << r.plan << r.message;
  ShardedLowering l = lowerSharded(g, spec);
  EXPECT_EQ(l.outputAxis, (std::vector<int>{0, -1, -1}));
}

// A user-defined combiner (max written as a Select) goes through all-gather and the
// reduction's own combiner.
TEST(ShardLowering, UserDefinedCombinerGathers) {
  Reduction r;
  r.name = "selmax";
  r.accType = DType::Int32;
  r.identity = Scalar::ofInt(DType::Int32, -2147483648LL);
  auto a = ScalarExpr::argument(0), v = ScalarExpr::argument(1);
  r.combiner = ScalarExpr::apply(OpKind::Select, {ScalarExpr::apply(OpKind::Greater, {a, v}), a, v});
  ASSERT_EQ(r.builtin(), BuiltinCombiner::None);
  GraphBuilder b("user");
  Value x = b.input("x", DType::Int32, {9, 14});
  b.output(b.reduce(x, r, {1}));
  Graph g = b.build();
  ShardSpec spec{3, {{"x", 1, {}}}};
  ShardedLowering l = lowerSharded(g, spec);
  EXPECT_EQ(l.combines.at(0).choice.collective, Collective::AllGatherCombine);
  ShardCheckReport rep = checkShardedOnCpu(g, spec, {});
  EXPECT_TRUE(rep.ok) << rep.message;
}

TEST(ShardLowering, CollectiveChoiceFollowsTheReduction) {
  EXPECT_EQ(chooseCollective(Reduction::sum(DType::Float16), false).collective, Collective::AllReduce);
  EXPECT_EQ(chooseCollective(Reduction::sum(DType::Float16), false).op, BuiltinCombiner::Sum);
  EXPECT_EQ(chooseCollective(Reduction::prod(DType::Int8), false).collective, Collective::AllReduce);
  EXPECT_EQ(chooseCollective(Reduction::max(DType::Int32), false).op, BuiltinCombiner::Max);
  EXPECT_EQ(chooseCollective(Reduction::max(DType::Float32), false).collective, Collective::AllGatherCombine);
  EXPECT_EQ(chooseCollective(Reduction::min(DType::BFloat16), false).collective, Collective::AllGatherCombine);
  EXPECT_EQ(chooseCollective(Reduction::logicalAnd(DType::Bool), false).collective, Collective::AllGatherCombine);
  EXPECT_EQ(chooseCollective(Reduction::logicalOr(DType::Bool), false).collective, Collective::AllGatherCombine);
  EXPECT_EQ(chooseCollective(Reduction::sum(DType::Float32), true).collective, Collective::AllGatherCombine);
  // NCCL has no complex type (and would multiply a product's parts one by one).
  EXPECT_EQ(chooseCollective(Reduction::sum(DType::Complex64), false).collective, Collective::AllGatherCombine);
  EXPECT_EQ(chooseCollective(Reduction::prod(DType::Complex64), false).collective, Collective::AllGatherCombine);
}

// The sharded check compares as the one-device check does, with a second look at the
// magnitude of an element's operands: this file's complex products (96 rows, up to about
// 1e32) cancel in their imaginary parts and overflow in places, where the ranks'
// partials associate otherwise than the reference (finite differences past the plain
// tolerance, NaN for inf): it reported mismatches before 2026-11-28.
TEST(ShardLowering, ComplexProductsNearOverflowCompareByMagnitude) {
  const Graph g = readCompositeFile(std::string(POLYRED_SOURCE_DIR) + "/tests/data/complex/complex_sum_prod.json");
  for (int ranks : {2, 3}) {
    SCOPED_TRACE(ranks);
    ShardCheckReport rep = checkShardedOnCpu(g, ShardSpec{ranks, {{"re", 0, {}}, {"im", 0, {}}}}, {});
    EXPECT_TRUE(rep.ok) << rep.message;
  }
}

// Complex sums and products split across ranks gather their partials and combine them
// in rank order with the complex combiner (an all-reduce by NCCL once chose
// "ncclProd in complex64", which has no NCCL type). Values near 1 keep the products of
// 5 and 6 rows far from overflow, where the order of association could turn inf to NaN.
TEST(ShardLowering, ComplexSumsAndProductsGatherAndMatch) {
  GraphBuilder b("complex_shard");
  Value re = b.input("re", DType::Float32, {11, 257});
  Value im = b.input("im", DType::Float32, {11, 257});
  Value z = b.complex(b.add(b.mul(re, b.constant(Scalar::ofFloat(DType::Float32, 0.25))),
                            b.constant(Scalar::ofFloat(DType::Float32, 1.0))),
                      b.mul(im, b.constant(Scalar::ofFloat(DType::Float32, 0.25))));
  b.output(b.reduce(z, Reduction::sum(DType::Complex64), {0}));
  b.output(b.reduce(z, Reduction::prod(DType::Complex64), {0}));
  Graph g = b.build();
  ShardSpec spec{2, {{"re", 0, {}}, {"im", 0, {}}}};
  ShardedLowering l = lowerSharded(g, spec);
  ASSERT_EQ(l.combines.size(), 2u);
  for (const auto& c : l.combines) EXPECT_EQ(c.choice.collective, Collective::AllGatherCombine) << c.choice.why;
  ShardCheckReport rep = checkShardedOnCpu(g, spec, {});
  EXPECT_TRUE(rep.ok) << rep.message;
}

// Deterministic mode: every combine gathers and folds in rank order, and the result is
// bitwise the same whatever order the executor runs blocks in.
TEST(ShardLowering, DeterministicModeIsBitwiseRepeatable) {
  GraphBuilder b("det");
  Value x = b.input("x", DType::Float32, {3, 100000});
  b.output(b.reduceSum(x, {1}));
  b.output(b.reduceSum(x, {}));
  Graph g = b.build();
  ShardSpec spec{4, {{"x", 1, {10000, 30000, 25000, 35000}}}};
  ShardLoweringOptions lo;
  lo.deterministic = true;
  ShardedLowering l = lowerSharded(g, spec, lo);
  for (const CombineStep& c : l.combines) EXPECT_EQ(c.choice.collective, Collective::AllGatherCombine);
  std::vector<HostTensor> inputs = makeRandomInputs(g, 3);
  ShardCheckOptions o;
  o.deterministic = true;
  o.blockOrderSeed = 1;
  ShardSimulation first = simulateSharded(g, l, inputs, o);
  o.blockOrderSeed = 99;
  ShardSimulation second = simulateSharded(g, l, inputs, o);
  ASSERT_EQ(first.outputs.size(), 2u);
  for (size_t k = 0; k < 2; ++k) EXPECT_EQ(first.outputs[k].bytes, second.outputs[k].bytes);
  ShardCheckReport r = checkShardedOnCpu(g, spec, o);
  EXPECT_TRUE(r.ok) << r.message;
}

// Negative control: the comparison catches a wrong combine (max where sum belongs) and
// a rank dropped from the split.
TEST(ShardLowering, WrongCombineIsCaught) {
  GraphBuilder b("neg");
  Value x = b.input("x", DType::Float32, {5, 30});
  b.output(b.reduceSum(x, {1}));
  Graph g = b.build();
  ShardSpec spec{3, {{"x", 1, {}}}};
  ShardedLowering l = lowerSharded(g, spec);
  std::vector<HostTensor> inputs = makeRandomInputs(g, 5);
  std::vector<HostTensor> expected = evaluateReference(g, inputs);
  ShardedLowering wrong = l;
  wrong.combines[0].reduction = Reduction::max(DType::Float32);
  ShardSimulation sim = simulateSharded(g, wrong, inputs, {});
  EXPECT_FALSE(compareOutputs(g, sim.outputs, {}, expected).ok);
  ShardSimulation right = simulateSharded(g, l, inputs, {});
  EXPECT_TRUE(compareOutputs(g, right.outputs, {}, expected).ok);
}

void expectError(const Graph& g, const ShardSpec& spec, const std::string& part) {
  try {
    lowerSharded(g, spec);
    ADD_FAILURE() << "no error for a sharding that should be refused (" << part << ")";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

// A scan along an axis that is not split runs on each rank's slice (no combine), fused
// with a reduction over the sharded axis after it when there is one; a scan along the
// split axis is refused with the reason.
TEST(ShardLowering, ScansAlongAnotherAxisRunOnEachSlice) {
  for (int scanAxis : {0, 1}) {
    GraphBuilder b("sharded_scans");
    Value x = b.input("x", DType::Float32, {13, 11});
    Value running = b.scan(b.mul(x, b.constant(Scalar::ofFloat(DType::Float32, 0.5))), Reduction::sum(DType::Float32),
                           scanAxis, scanAxis == 1, scanAxis == 0);
    b.output(running);
    b.output(b.reduceSum(running, {1 - scanAxis}));  // over the sharded axis: one round of combines
    Graph g = b.build();
    const int sharded = 1 - scanAxis;
    for (int ranks : {2, 3}) {
      ShardSpec spec;
      spec.ranks = ranks;
      spec.inputs.push_back({"x", sharded, {}});
      ShardCheckOptions o;
      o.seed = 11;
      ShardCheckReport r = checkShardedOnCpu(g, spec, o);
      SCOPED_TRACE("scan axis " + std::to_string(scanAxis) + ", " + std::to_string(ranks) + " ranks\n" + r.plan);
      EXPECT_TRUE(r.ok) << r.message;
      ShardedLowering l = lowerSharded(g, spec);
      EXPECT_EQ(l.rounds.size(), 1u);
      EXPECT_EQ(l.outputAxis[0], sharded);  // each rank's slice of the scan
      EXPECT_EQ(l.outputAxis[1], -1);       // the combined sum, whole on every rank
    }
    ShardSpec along;
    along.ranks = 2;
    along.inputs.push_back({"x", scanAxis, {}});
    try {
      lowerSharded(g, along);
      ADD_FAILURE() << "a scan along the sharded axis was lowered";
    } catch (const UnsupportedError& e) {
      EXPECT_NE(std::string(e.what()).find("scan along the sharded axis"), std::string::npos) << e.what();
    }
  }
}

TEST(ShardLowering, BadShardingsAreRefusedWithTheReason) {
  GraphBuilder b("bad");
  Value x = b.input("x", DType::Float32, {4, 6});
  Value w = b.input("w", DType::Float32, {4, 6});
  b.output(b.reduceSum(b.mul(x, w), {1}));
  Graph g = b.build();
  g.sourceFile = "bad.json";
  expectError(g, {2, {{"y", 1, {}}}}, "no graph input of that name; did you mean");
  expectError(g, {2, {{"x", 2, {}}, {"w", 2, {}}}}, "axis 2 is out of range");
  expectError(g, {2, {{"x", 1, {2, 3}}, {"w", 1, {2, 3}}}}, "sizes sum to 5 but axis 1 has extent 6");
  expectError(g, {7, {{"x", 1, {}}, {"w", 1, {}}}}, "more ranks than elements");
  expectError(g, {2, {{"x", 1, {6, 0}}, {"w", 1, {6, 0}}}}, "every rank needs at least 1");
  expectError(g, {2, {{"x", 1, {1, 5}}}}, "%w");                   // w meets x unsharded
  expectError(g, {2, {{"x", 1, {}}, {"w", 1, {1, 5}}}}, "other sizes");
  expectError(g, {2, {{"x", 1, {}}}}, "bad.json");
  GraphBuilder r("reshape");
  Value y = r.input("y", DType::Float32, {4, 6});
  r.output(r.reduceSum(r.reshape(y, {24}), {}));
  EXPECT_THROW(lowerSharded(r.build(), {2, {{"y", 0, {}}}}), UnsupportedError);
  EXPECT_EQ(parseShardText("x:0:3,5;w:-1").size(), 2u);
  EXPECT_EQ(parseShardText("x:0:3,5")[0].sizes, (std::vector<int64_t>{3, 5}));
  EXPECT_THROW(parseShardText("x"), Error);
  EXPECT_THROW(parseShardText("x:a"), Error);
}

}  // namespace

// Where libnccl.so.2 cannot be loaded, multi-GPU calls fail with the reason (the rest of
// polyred runs): the library is loaded with dlopen, never linked.
TEST(NcclLoader, MissingLibraryIsAClearError) {
  setenv("POLYRED_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
  std::string why;
  EXPECT_FALSE(multigpu::ncclAvailable(&why));
  EXPECT_NE(why.find("/nonexistent/libnccl.so.2"), std::string::npos) << why;
  EXPECT_NE(why.find("NCCL could not be loaded"), std::string::npos) << why;
  EXPECT_THROW(multigpu::nccl(), NoGpuError);
}
