// The MindSpore ops polyred computes from coordinates (frontend/composite_index_ops):
// PadAkg, UnPadAkg, OneHot, ElemAny. Each is checked on hand-picked inputs against
// values written out here from MindSpore's definition (not against polyred's own
// reference, which would only repeat the expansion), through the reference AND the
// lowered kernel run on the CPU; then on odd shapes and random inputs (CPU check and
// NVRTC); malformed attributes are errors naming the op.
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/composite_reader.h"
#include "interp/reference.h"
#include "runtime/nvrtc.h"
#include "support/budget.h"

using namespace polyred;
using Json = nlohmann::json;

namespace {

Json desc(const std::string& name, const Shape& shape, const std::string& dtype) {
  return {{"tensor_name", name}, {"shape", shape}, {"data_type", dtype}, {"format", "DefaultFormat"}};
}

Json attr(const std::string& name, Json value) { return {{"name", name}, {"value", std::move(value)}}; }

// A composite file with one op over `inputs`, declaring its result y.
Graph oneOp(const std::string& op, const std::vector<Json>& inputs, const Json& out, Json attrs) {
  Json ins = Json::array();
  for (const Json& in : inputs) ins.push_back(Json::array({in}));
  Json doc = {{"op", "Fused_" + op},
              {"input_desc", ins},
              {"op_desc", {{{"name", op}, {"attr", attrs}, {"input_desc", ins}, {"output_desc", {out}}}}},
              {"output_desc", {out}}};
  return parseComposite(doc.dump(), op + ".json");
}

// The graph's single output on `inputs`, by the reference and by the lowered kernels
// on the CPU; both must equal `expected` exactly.
void expectOutput(const Graph& g, const std::vector<HostTensor>& inputs, const std::vector<double>& expected) {
  CompiledGraph c = compileGraph(g, CompileOptions{});
  std::vector<HostTensor> reference = evaluateReference(g, inputs);
  Deadline unlimited = Deadline::none();
  CpuCheckOptions all;
  all.maxPoints = 0;
  LoweredRun lowered = runLoweredOnCpu(c, inputs, all, unlimited);
  ASSERT_EQ(reference.at(0).size(), static_cast<int64_t>(expected.size()));
  for (size_t k = 0; k < expected.size(); ++k) {
    EXPECT_EQ(reference[0].get(static_cast<int64_t>(k)).asDouble(), expected[k]) << g.name << " element " << k;
    EXPECT_EQ(lowered.outputs.at(0).get(static_cast<int64_t>(k)).asDouble(), expected[k]) << g.name << " element " << k;
  }
  for (const KernelSpec& k : c.program.kernels) EXPECT_NO_THROW(compileCuda(k.source, k.name, 9, 0)) << k.source;
}

void expectCheckPasses(const Graph& g) {
  CompiledGraph c = compileGraph(g, CompileOptions{});
  EXPECT_EQ(c.program.kernels.size(), 1u) << g.name;
  for (const KernelSpec& k : c.program.kernels) EXPECT_NO_THROW(compileCuda(k.source, k.name, 9, 0)) << k.source;
  CpuCheckReport r = checkOnCpu(c, 7, 0, false);
  EXPECT_TRUE(r.ok) << g.name << "\n" << r.message;
}

TEST(IndexOps, PadAkgWritesPadValueAroundTheInput) {
  // x = [[1,2],[3,4]] padded with head [1,0], tail [0,2], pad_val 9.
  Graph g = oneOp("PadAkg", {desc("x", {2, 2}, "float32")}, desc("y", {3, 4}, "float32"),
                  {attr("head", {1, 0}), attr("tail", {0, 2}), attr("pad_val", 9)});
  expectOutput(g, {HostTensor::fromValues(DType::Float32, {2, 2}, {1, 2, 3, 4})},
               {9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9});
}

TEST(IndexOps, UnPadAkgKeepsTheLeadingBlock) {
  Graph g = oneOp("UnPadAkg", {desc("x", {3, 4}, "int32")}, desc("y", {2, 3}, "int32"), {attr("tail", {1, 1})});
  expectOutput(g, {HostTensor::fromValues(DType::Int32, {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})},
               {0, 1, 2, 4, 5, 6});
}

TEST(IndexOps, OneHotPutsOnAtTheIndexAndOffElsewhere) {
  // indices [2, -1, 0, 5] (out of range and negative: all off), depth 3, axis -1.
  Graph g = oneOp("OneHot", {desc("i", {4}, "int32"), desc("on", {}, "float16"), desc("off", {}, "float16")},
                  desc("y", {4, 3}, "float16"), {attr("axis", -1), attr("depth", 3)});
  std::vector<HostTensor> in = {HostTensor::fromValues(DType::Int32, {4}, {2, -1, 0, 5}),
                                HostTensor::fromValues(DType::Float16, {}, {1.5}),
                                HostTensor::fromValues(DType::Float16, {}, {-2})};
  expectOutput(g, in, {-2, -2, 1.5, -2, -2, -2, 1.5, -2, -2, -2, -2, -2});
  // axis 0: the depth axis comes first.
  Graph g0 = oneOp("OneHot", {desc("i", {2}, "int64"), desc("on", {1}, "int32"), desc("off", {1}, "int32")},
                   desc("y", {3, 2}, "int32"), {attr("axis", 0), attr("depth", 3)});
  expectOutput(g0,
               {HostTensor::fromValues(DType::Int64, {2}, {1, 2}), HostTensor::fromValues(DType::Int32, {1}, {7}),
                HostTensor::fromValues(DType::Int32, {1}, {0})},
               {0, 0, 7, 0, 0, 7});
}

TEST(IndexOps, ElemAnyIsOneWhenSomeElementIsPositive) {
  Graph g = oneOp("ElemAny", {desc("x", {2, 3}, "float32")}, desc("y", {1}, "float32"), Json::array());
  expectOutput(g, {HostTensor::fromValues(DType::Float32, {2, 3}, {-1, 0, -3, 0, -0.0, -7})}, {0});
  expectOutput(g, {HostTensor::fromValues(DType::Float32, {2, 3}, {-1, 0, -3, 0.25, -0.0, -7})}, {1});
  Graph i = oneOp("ElemAny", {desc("x", {5}, "int32")}, desc("y", {1}, "float32"), {attr("dst_type", "float32")});
  expectOutput(i, {HostTensor::fromValues(DType::Int32, {5}, {0, -4, 0, 0, 3})}, {1});
}

// ElemAll: 1 if no element is zero (-0.0 is zero, NaN is not), in the input's dtype.
TEST(IndexOps, ElemAllIsOneWhenNoElementIsZero) {
  Graph g = oneOp("ElemAll", {desc("x", {2, 3}, "float32")}, desc("y", {1}, "float32"), Json::array());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  expectOutput(g, {HostTensor::fromValues(DType::Float32, {2, 3}, {-1, 2, -3, nan, 0.5, -7})}, {1});
  expectOutput(g, {HostTensor::fromValues(DType::Float32, {2, 3}, {-1, 2, -3, nan, -0.0, -7})}, {0});
  Graph i = oneOp("ElemAll", {desc("x", {5}, "int8")}, desc("y", {1}, "int8"), Json::array());
  expectOutput(i, {HostTensor::fromValues(DType::Int8, {5}, {1, -4, 9, 127, -128})}, {1});
  expectOutput(i, {HostTensor::fromValues(DType::Int8, {5}, {1, -4, 0, 127, -128})}, {0});
  expectCheckPasses(oneOp("ElemAll", {desc("x", {4097, 3}, "float16")}, desc("y", {1}, "float16"), Json::array()));
  EXPECT_THROW(oneOp("ElemAll", {desc("x", {5}, "int32")}, desc("y", {1}, "float32"), Json::array()), Error);
}

TEST(IndexOps, OddShapesPassTheCpuCheck) {
  expectCheckPasses(oneOp("PadAkg", {desc("x", {3, 5, 7}, "float16")}, desc("y", {4, 5, 16}, "float16"),
                          {attr("head", {1, 0, 2}), attr("tail", {0, 0, 7}), attr("pad_val", 0)}));
  expectCheckPasses(oneOp("PadAkg", {desc("x", {1000, 17}, "bfloat16")}, desc("y", {1024, 32}, "bfloat16"),
                          {attr("head", {0, 0}), attr("tail", {24, 15}), attr("pad_val", -1)}));
  expectCheckPasses(oneOp("UnPadAkg", {desc("x", {7, 64, 33}, "int8")}, desc("y", {7, 61, 1}, "int8"),
                          {attr("tail", {0, 3, 32})}));
  expectCheckPasses(oneOp("OneHot", {desc("i", {9, 11}, "int32"), desc("on", {}, "float32"), desc("off", {}, "float32")},
                          desc("y", {9, 1000, 11}, "float32"), {attr("axis", 1), attr("depth", 1000)}));
  expectCheckPasses(oneOp("ElemAny", {desc("x", {4097, 3}, "float16")}, desc("y", {1}, "float16"), Json::array()));
}

TEST(IndexOps, MalformedAttributesAreErrorsNamingTheOp) {
  auto rejects = [](const std::function<Graph()>& make, const std::string& why) {
    try {
      make();
      ADD_FAILURE() << "accepted: " << why;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  rejects([] { return oneOp("PadAkg", {desc("x", {2, 2}, "float32")}, desc("y", {3, 2}, "float32"),
                            {attr("head", {1}), attr("tail", {0, 0})}); },
          "head has 1 entries");
  rejects([] { return oneOp("PadAkg", {desc("x", {2, 2}, "float32")}, desc("y", {3, 2}, "float32"),
                            {attr("tail", {1, 0})}); },
          "needs a \"head\" attribute");
  rejects([] { return oneOp("UnPadAkg", {desc("x", {2, 2}, "float32")}, desc("y", {1, 2}, "float32"),
                            {attr("tail", {3, 0})}); },
          "tail removes more than axis 0 holds");
  rejects([] { return oneOp("PadAkg", {desc("x", {2, 2}, "float32")}, desc("y", {3, 2}, "float32"),
                            {attr("head", {int64_t{1} << 62, 0}), attr("tail", {0, 0})}); },
          "larger than any tensor extent");
  rejects([] { return oneOp("PadAkg", {desc("x", {2, 2}, "float32")}, desc("y", {2, 2}, "float32"),
                            {attr("head", {1, 0}), attr("tail", {0, 0})}); },
          "but PadAkg computes");
  rejects([] { return oneOp("OneHot", {desc("i", {4}, "float32"), desc("on", {}, "float32"), desc("off", {}, "float32")},
                            desc("y", {4, 3}, "float32"), {attr("axis", -1), attr("depth", 3)}); },
          "indices must be int32 or int64");
  rejects([] { return oneOp("OneHot", {desc("i", {4}, "int32"), desc("on", {}, "float32"), desc("off", {}, "float32")},
                            desc("y", {4, 3}, "float32"), {attr("axis", 3), attr("depth", 3)}); },
          "axis 3 is out of range");
  rejects([] { return oneOp("MatMul", {desc("a", {4, 4}, "float32"), desc("b", {4, 4}, "float32")},
                            desc("y", {4, 4}, "float32"), Json::array()); },
          "matrix products are outside polyred's scope");
}

}  // namespace
