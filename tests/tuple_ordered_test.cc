// Ordered (non-commutative) tuple reductions lowered to kernels: each thread reduces a
// contiguous chunk of j, the block reduction keeps lane order (InOrder), blocks combine
// in block order. The CPU executor runs the generated loop program and must reproduce
// the reference exactly (the tuples of tests/ordered_tuples.h detect any reordering)
// in every form, with interleaved axes, many blocks, odd and tiny extents, whichever
// order blocks run in, in plain and deterministic mode; the kernels compile with NVRTC;
// commutative tuples keep their interleaved, butterfly code.
#include <gtest/gtest.h>

#include "codegen/cpu_executor.h"
#include "codegen/order_witness.h"
#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "interp/reference.h"
#include "ordered_tuples.h"
#include "runtime/nvrtc.h"
#include "support/error.h"
#include "lowering_helpers.h"

namespace polyred {
namespace {

using test_support::blocksAlongJ;
using test_support::expectNvrtcCompiles;
using test_support::lowered;

using namespace ordered_tuples;

// The first element where `got` differs from `want`, as a message ("" if none).
std::string firstDifference(const std::vector<HostTensor>& got, const std::vector<HostTensor>& want) {
  if (got.size() != want.size()) return "output count differs";
  for (size_t o = 0; o < want.size(); ++o)
    for (int64_t k = 0; k < want[o].size(); ++k)
      if (!got[o].get(k).identical(want[o].get(k)))
        return "output " + std::to_string(o) + " element " + std::to_string(k) + ": lowered " +
               got[o].get(k).toString() + ", reference " + want[o].get(k).toString();
  return "";
}

struct Case {
  const char* name;
  Shape shape;
  std::vector<int64_t> axes;
  CanonicalForm form;
  bool multiBlock;  // the rows are long enough to be split over several blocks
};
const Case kCases[] = {
    {"all", {60001}, {0}, CanonicalForm::AllReduce, true},
    {"all-2d", {301, 201}, {0, 1}, CanonicalForm::AllReduce, true},
    {"all-odd", {1000}, {0}, CanonicalForm::AllReduce, false},
    {"x", {3, 30001}, {1}, CanonicalForm::XReduce, true},
    {"x-short-rows", {4096, 33}, {1}, CanonicalForm::XReduce, false},
    {"x-tiny", {50, 5}, {1}, CanonicalForm::XReduce, false},
    {"x-interleaved", {40, 3, 700}, {0, 2}, CanonicalForm::XReduce, true},
    {"y", {30001, 3}, {0}, CanonicalForm::YReduce, true},
    {"y-tiny", {5, 70}, {0}, CanonicalForm::YReduce, false},
    {"y-middle", {3, 20001, 5}, {1}, CanonicalForm::YReduce, true},
};

// Reduced elements per output, for a z density of a few non-zeros per row.
int64_t reducedLength(const Case& c) {
  int64_t n = 1;
  for (int64_t a : c.axes) n *= c.shape[static_cast<size_t>(a)];
  return n;
}

TEST(OrderedTuples, LoweredKernelsMatchTheReferenceExactlyInEveryForm) {
  for (const Case& c : kCases) {
    const Graph g = orderedGraph(c.shape, c.axes);
    CompiledGraph compiled = compileGraph(g, CompileOptions{});
    ASSERT_EQ(compiled.kernels.size(), 1u) << c.name;
    const PolyKernel& k = compiled.kernels[0];
    EXPECT_EQ(k.plan.form, c.form) << c.name;
    EXPECT_GT(k.binding.chunk, 0) << c.name;
    EXPECT_EQ(blocksAlongJ(compiled) > 1, c.multiBlock) << c.name << ": " << k.binding.toString();
    const std::vector<HostTensor> inputs = orderedInputs(c.shape, 11, 3.0 / static_cast<double>(reducedLength(c)));
    const std::vector<HostTensor> want = evaluateReference(g, inputs);
    for (uint64_t seed : {1u, 2u, 99u})
      for (bool deterministic : {false, true})
        EXPECT_EQ(firstDifference(lowered(compiled, inputs, seed, deterministic), want), "")
            << c.name << " seed " << seed << (deterministic ? " deterministic" : "") << "\n" << k.binding.toString();
  }
}

TEST(OrderedTuples, PassTheCpuCheckInPlainAndDeterministicMode) {
  for (const Case& c : kCases) {
    CompiledGraph compiled = compileGraph(orderedGraph(c.shape, c.axes), CompileOptions{});
    for (bool deterministic : {false, true}) {
      CpuCheckReport r = checkOnCpu(compiled, /*seed=*/7, /*maxPoints=*/0, deterministic);
      EXPECT_TRUE(r.ok) << c.name << (deterministic ? " deterministic" : "") << "\n" << r.message;
    }
  }
}

TEST(OrderedTuples, KernelsCompileWithNvrtc) {
  for (const Case& c : kCases) {
    CompiledGraph compiled = compileGraph(orderedGraph(c.shape, c.axes), CompileOptions{});
    const std::string& src = compiled.program.kernels[0].source;
    EXPECT_NE(src.find("polyred_dev::InOrder"), std::string::npos) << c.name;
    EXPECT_NE(src.find("contiguous chunks of"), std::string::npos) << c.name;
    expectNvrtcCompiles(compiled, c.name);
  }
}

// The same tuple declared commutative is refused where the graph is built: the sampled
// laws (ir/reduction_laws.h) find two partials whose combine depends on their order.
TEST(OrderedTuples, AFalseCommutativeClaimIsRefused) {
  auto wrong = std::make_shared<TupleReduction>(*affineTuple());
  wrong->commutative = true;
  GraphBuilder b("wrong");
  Value x = b.input("x", DType::Int32, {64, 100});
  b.output(b.reduceTuple({x}, wrong, 0, {1}, false, DType::Int64));
  try {
    b.build();
    ADD_FAILURE() << "a non-commutative combine declared commutative was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not commutative (it is declared commutative)"), std::string::npos)
        << e.what();
  }
}

// Had the claim been believed, the interleaved lowering and butterflies would give
// other answers, so the tests above do detect reordering (the claim is put into the
// built graph behind the verifier's back; the reference folds in order either way).
TEST(OrderedTuples, AnInterleavedLoweringGivesOtherAnswers) {
  for (const Case& c : {kCases[0], kCases[3], kCases[7]}) {
    GraphBuilder b("ordered");
    Value x = b.input("x", DType::Int32, c.shape);
    b.output(b.reduceTuple({x}, affineTuple(), 0, c.axes, false, DType::Int64));
    const Graph g = b.build();
    auto wrong = std::make_shared<TupleReduction>(*affineTuple());
    wrong->commutative = true;
    Graph forced = g;
    for (Node& n : forced.nodes)
      if (n.reduction && n.reduction->isTuple()) n.reduction->tuple = wrong;
    CompiledGraph compiled = compileGraph(forced, CompileOptions{});
    EXPECT_EQ(compiled.kernels[0].binding.chunk, 0) << c.name;
    const std::vector<HostTensor> inputs = {orderedInputs(c.shape, 3, 0)[0]};
    EXPECT_NE(firstDifference(lowered(compiled, inputs, 1), evaluateReference(g, inputs)), "") << c.name;
  }
}

// An ordered total read by a later pass of a row-resident kernel (block_allreduce with
// InOrder) and, for long rows, by a later kernel through a temporary.
TEST(OrderedTuples, TotalsFeedLaterPassesAndKernels) {
  int rowResident = 0;
  for (Shape shape : {Shape{64, 1000}, Shape{6, 30000}, Shape{1000, 24}}) {
    for (int64_t axis : {int64_t{1}, int64_t{0}}) {
      GraphBuilder b("follow");
      Value x = b.input("x", DType::Int32, shape);
      Value last = b.reduceTuple({x}, pickTuple(false), 0, {axis}, true, DType::Int32);
      Value y = b.sub(x, last);
      b.output(y);
      b.output(b.reduceTuple({y}, hashTuple(), 0, {axis}, false, DType::Int64));
      const std::string what = toString(shape) + " axis " + std::to_string(axis);
      const Graph g = b.build();
      CompiledGraph c = compileGraph(g, CompileOptions{});
      const std::vector<HostTensor> inputs = {orderedInputs(shape, 5, 0)[0]};
      EXPECT_EQ(firstDifference(lowered(c, inputs, 4), evaluateReference(g, inputs)), "") << what;
      CpuCheckReport r = checkOnCpu(c, /*seed=*/4, /*maxPoints=*/0, true);
      EXPECT_TRUE(r.ok) << what << "\n" << r.message;
      expectNvrtcCompiles(c, what);
      for (const PolyKernel& k : c.kernels) rowResident += k.plan.passes() > 1 && k.plan.hasOrderedReduction();
    }
  }
  EXPECT_GT(rowResident, 0);
}

// Two independent ordered kernels of different shapes share one launch (horizontal
// fusion re-binds the smaller part to the launch's block size, chunks included).
TEST(OrderedTuples, FusedLaunchesKeepTheOrder) {
  GraphBuilder b("fused");
  Value x = b.input("x", DType::Int32, {3, 30001}), y = b.input("y", DType::Int32, {30001, 3});
  Value z = b.input("z", DType::Int32, {50, 5});
  b.output(b.reduceTuple({x}, affineTuple(), 0, {1}, false, DType::Int64));
  b.output(b.reduceTuple({y}, hashTuple(), 0, {0}, false, DType::Int64));
  b.output(b.reduceTuple({z}, pickTuple(false), 0, {1}, false, DType::Int32));
  const Graph g = b.build();
  CompiledGraph c = compileGraph(g, CompileOptions{});
  ASSERT_EQ(c.program.kernels.size(), 1u);
  EXPECT_EQ(c.program.kernels[0].parts.size(), 3u);
  std::vector<HostTensor> inputs = {orderedInputs({3, 30001}, 1, 0)[0], orderedInputs({30001, 3}, 2, 0)[0],
                                    orderedInputs({50, 5}, 3, 0)[0]};
  EXPECT_EQ(firstDifference(lowered(c, inputs, 6), evaluateReference(g, inputs)), "");
  EXPECT_TRUE(checkOnCpu(c, /*seed=*/2, /*maxPoints=*/0, false).ok);
  expectNvrtcCompiles(c, "fused");
}

// The executor's order witness refuses what an out-of-order lowering would do (an
// internal error: a lowering bug, exit 3).
TEST(OrderedTuples, TheWitnessRefusesReorderings) {
  {  // a thread skipping j (interleaved iterations)
    OrderWitness w(2, 1, 1, 4);
    w.accumulate(0, 0, 0);
    EXPECT_THROW(w.accumulate(0, 0, 2), InternalError);
  }
  {  // lanes joined out of order, then in order but short of the row
    OrderWitness w(2, 1, 1, 4);
    w.accumulate(0, 0, 2);
    w.accumulate(1, 0, 0);
    EXPECT_THROW(w.joinLanes({0, 1}, 0), InternalError);
    OrderWitness v(2, 1, 1, 4);
    v.accumulate(0, 0, 0);
    v.accumulate(1, 0, 1);
    v.joinLanes({0, 1}, 0);
    EXPECT_THROW(v.requireWholeRow(0, 0), InternalError);
  }
  {  // blocks in the wrong order
    OrderWitness w(1, 1, 2, 2);
    w.accumulate(0, 0, 1);
    w.contribute(0, 0, 0);
    w.reset(0);
    w.accumulate(0, 0, 0);
    w.contribute(0, 0, 1);
    EXPECT_THROW(w.requireWholeRowFromBlocks(0), InternalError);
  }
}

// Commutative tuples and scalar reductions keep the interleaved binding and the
// default (butterfly) trees.
TEST(OrderedTuples, CommutativeKernelsKeepTheirCode) {
  GraphBuilder b("commutative");
  Value x = b.input("x", DType::Float32, {3, 30001});
  b.output(b.argmax(x, 1));
  b.output(b.reduceSum(x, {1}));
  CompiledGraph c = compileGraph(b.build(), CompileOptions{});
  EXPECT_EQ(c.kernels[0].binding.chunk, 0);
  const std::string& src = c.program.kernels[0].source;
  EXPECT_EQ(src.find("InOrder"), std::string::npos);
  EXPECT_EQ(src.find("contiguous chunks"), std::string::npos);
}

}  // namespace
}  // namespace polyred
