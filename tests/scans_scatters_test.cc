// MindSpore's scans and scatters as the file format gives them (frontend/
// composite_scans_scatters): CumSum and CumProd (Scan nodes: tests/scan_test.cc has the
// scan kernel's shapes), UnsortedSegmentSum and TensorScatterAdd (ScatterAdd nodes:
// tests/scatter_add_test.cc). Checked on hand-worked values from AKG's kernels
// (sequential prefix sums; out-of-range ids and index tuples dropped) through the
// reference AND the lowered kernels on the CPU; then on odd shapes and random inputs
// (CPU check and NVRTC); malformed operands are errors naming the op.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "composite_test_helpers.h"
#include "one_op_graph.h"

using namespace polyred;
using namespace polyred::test_support;

namespace {

HostTensor ints(DType t, const Shape& s, std::vector<double> v) { return HostTensor::fromValues(t, s, std::move(v)); }

Graph cum(const std::string& op, Json attrs, const std::string& dtype = "int32", const Shape& shape = {2, 3}) {
  return oneOp(op, {desc("x", shape, dtype)}, desc("y", shape, dtype), std::move(attrs));
}

TEST(ScansScatters, CumSumAddsThePrefixInEveryDirection) {
  const HostTensor x = ints(DType::Int32, {2, 3}, {1, 2, 3, 4, 5, 6});
  expectOutput(cum("CumSum", {attr("axis", 1)}), {x}, {1, 3, 6, 4, 9, 15});
  expectOutput(cum("CumSum", {attr("axis", {1}), attr("exclusive", true)}), {x}, {0, 1, 3, 0, 4, 9});
  expectOutput(cum("CumSum", {attr("axis", -1), attr("reverse", true)}), {x}, {6, 5, 3, 15, 11, 6});
  expectOutput(cum("CumSum", {attr("axis", 1), attr("reverse", true), attr("exclusive", true)}), {x}, {5, 3, 0, 11, 6, 0});
  expectOutput(cum("CumSum", {attr("axis", 0)}), {x}, {1, 2, 3, 5, 7, 9});
  // MindSpore's CumSum takes the axis as a constant input.
  Json axis = desc("axis", {}, "int64");
  axis["value"] = 1;
  Json ins = Json::array({Json::array({desc("x", {2, 3}, "int32")})});
  Json opIns = Json::array({Json::array({desc("x", {2, 3}, "int32")}), Json::array({axis})});
  Graph g = parseComposite(oneOpDocument("CumSum", ins, opIns, Json::array({desc("y", {2, 3}, "int32")}), nullptr).dump(),
                           "cumsum.json");
  expectOutput(g, {x}, {1, 3, 6, 4, 9, 15});
  const HostTensor f = ints(DType::Float32, {4}, {1, 2, 3, 4});
  expectOutput(cum("CumProd", {attr("axis", 0)}, "float32", {4}), {f}, {1, 2, 6, 24});
  expectOutput(cum("CumProd", {attr("axis", 0), attr("exclusive", true)}, "float32", {4}), {f}, {1, 1, 2, 6});
}

// A long scan is one scan kernel whatever its length (the masked reductions of 2026-11-26
// took three past 1024 elements): every direction, on ones (out = the count of
// elements folded) and on 1..n (triangular numbers).
TEST(ScansScatters, LongScansAreOneScanKernel) {
  const int64_t n = 1100;
  std::vector<double> ones(n, 1), ramp(n);
  for (int64_t k = 0; k < n; ++k) ramp[static_cast<size_t>(k)] = static_cast<double>(k + 1);
  auto expected = [&](auto f) {
    std::vector<double> v(n);
    for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = static_cast<double>(f(k));
    return v;
  };
  const HostTensor x = ints(DType::Int32, {n}, ones);
  auto scan = [&](Json attrs, const std::string& dtype = "int32") { return cum("CumSum", std::move(attrs), dtype, {n}); };
  expectOutput(scan({attr("axis", 0)}), {x}, expected([](int64_t i) { return i + 1; }));
  expectOutput(scan({attr("axis", 0), attr("exclusive", true)}), {x}, expected([](int64_t i) { return i; }));
  expectOutput(scan({attr("axis", 0), attr("reverse", true)}), {x}, expected([&](int64_t i) { return n - i; }));
  expectOutput(scan({attr("axis", 0), attr("reverse", true), attr("exclusive", true)}), {x},
               expected([&](int64_t i) { return n - 1 - i; }));
  expectOutput(scan({attr("axis", -1)}, "int64"), {ints(DType::Int64, {n}, ramp)},
               expected([](int64_t i) { return (i + 1) * (i + 2) / 2; }));
  CompiledGraph c = compileGraph(cum("CumProd", {attr("axis", 0)}, "float32", {1500, 3}), CompileOptions{});
  ASSERT_EQ(c.program.kernels.size(), 1u);
  EXPECT_TRUE(c.kernels[0].plan.hasScan());
  for (const KernelSpec& k : c.program.kernels) EXPECT_NO_THROW(compileCuda(k.source, k.name, 9, 0)) << k.source;
  CpuCheckReport r = checkOnCpu(c, 7, 0, false);
  EXPECT_TRUE(r.ok) << r.message;
}

TEST(ScansScatters, UnsortedSegmentSumAddsRowsByIdAndDropsOthers) {
  Graph g = oneOp("UnsortedSegmentSum", {desc("d", {4, 2}, "float32"), desc("ids", {4}, "int32")},
                  desc("y", {3, 2}, "float32"), {attr("num_segments", 3)});
  expectOutput(g, {ints(DType::Float32, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), ints(DType::Int32, {4}, {0, 2, 0, 5})},
               {6, 8, 0, 0, 3, 4});
  expectOutput(g, {ints(DType::Float32, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), ints(DType::Int32, {4}, {-1, 1, 1, 2})},
               {0, 0, 8, 10, 7, 8});
  // ids of the data's whole shape: one element per id.
  Graph e = oneOp("UnsortedSegmentSum", {desc("d", {2, 2}, "int64"), desc("ids", {2, 2}, "int64")},
                  desc("y", {2}, "int64"), {attr("num_segments", 2)});
  expectOutput(e, {ints(DType::Int64, {2, 2}, {1, 2, 3, 4}), ints(DType::Int64, {2, 2}, {1, 1, 0, 1})}, {3, 7});
}

TEST(ScansScatters, TensorScatterAddAddsUpdatesAtTheirIndexTuples) {
  Graph g = oneOp("TensorScatterAdd", {desc("x", {3, 2}, "float32"), desc("i", {4, 1}, "int32"), desc("u", {4, 2}, "float32")},
                  desc("y", {3, 2}, "float32"), Json::array());
  expectOutput(g, {ints(DType::Float32, {3, 2}, {1, 1, 1, 1, 1, 1}), ints(DType::Int32, {4, 1}, {2, 0, 2, 7}),
                   ints(DType::Float32, {4, 2}, {1, 2, 3, 4, 5, 6, 9, 9})},
               {4, 5, 1, 1, 7, 9});
  Graph pairs = oneOp("TensorScatterAdd", {desc("x", {2, 2}, "int32"), desc("i", {3, 2}, "int64"), desc("u", {3}, "int32")},
                      desc("y", {2, 2}, "int32"), Json::array());
  expectOutput(pairs, {ints(DType::Int32, {2, 2}, {0, 1, 2, 3}), ints(DType::Int64, {3, 2}, {1, 0, 0, 1, 1, 0}),
                       ints(DType::Int32, {3}, {10, 20, 30})},
               {0, 21, 42, 3});
  // 1-D indices (AKG reads [N] as [N, 1]).
  Graph flat = oneOp("TensorScatterAdd", {desc("x", {3}, "int8"), desc("i", {2}, "int32"), desc("u", {2}, "int8")},
                     desc("y", {3}, "int8"), Json::array());
  expectOutput(flat, {ints(DType::Int8, {3}, {1, 2, 3}), ints(DType::Int32, {2}, {2, 2}), ints(DType::Int8, {2}, {5, -9})},
               {1, 2, -1});
}

TEST(ScansScatters, OddShapesPassTheCpuCheck) {
  expectCheckPasses(cum("CumSum", {attr("axis", 1)}, "float16", {37, 129}));
  expectCheckPasses(cum("CumProd", {attr("axis", 0), attr("reverse", true)}, "float32", {9, 33}));
  expectCheckPasses(oneOp("UnsortedSegmentSum", {desc("d", {300, 17}, "float32"), desc("ids", {300}, "int32")},
                          desc("y", {13, 17}, "float32"), {attr("num_segments", 13)}));
  expectCheckPasses(oneOp("TensorScatterAdd", {desc("x", {50, 33}, "float32"), desc("i", {70, 1}, "int64"),
                                               desc("u", {70, 33}, "float32")},
                          desc("y", {50, 33}, "float32"), Json::array()));
}

TEST(ScansScatters, MalformedOpsAreErrors) {
  expectRejected([] { cum("CumSum", {attr("axis", 70000)}, "float32", {1, 70000}); }, "out of range");
  expectRejected([] { cum("CumSum", {attr("axis", 0)}, "bool", {4}); }, "numbers");
  expectRejected([] { oneOp("UnsortedSegmentSum", {desc("d", {4, 2}, "float32"), desc("ids", {3}, "int32")},
                     desc("y", {3, 2}, "float32"), {attr("num_segments", 3)}); }, "leading part");
  expectRejected([] { oneOp("UnsortedSegmentSum", {desc("d", {4}, "float32"), desc("ids", {4}, "float32")},
                     desc("y", {3}, "float32"), {attr("num_segments", 3)}); }, "int32 or int64");
  expectRejected([] { oneOp("TensorScatterAdd", {desc("x", {3, 2}, "float32"), desc("i", {4, 1}, "int32"),
                                          desc("u", {4, 3}, "float32")}, desc("y", {3, 2}, "float32"), Json::array()); },
          "updates have shape");
}

}  // namespace
