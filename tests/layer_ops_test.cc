// MindSpore's layer-level ops read from composite JSON (frontend/composite_layer_ops):
// shape ops, BiasAdd, activations, SquareSum, LayerNorm, Shape, ConstantOfShape. Each
// is checked on hand-picked inputs against values worked out here from MindSpore's
// definition (inputs chosen so every value is exact in float32), through the reference
// AND the lowered kernels on the CPU; then on odd shapes and random inputs (CPU check
// and NVRTC); malformed operands and attributes are errors naming the op.
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "composite_test_helpers.h"
#include "one_op_graph.h"

using namespace polyred;
using namespace polyred::test_support;

namespace {

HostTensor f32(const Shape& s, std::vector<double> v) { return HostTensor::fromValues(DType::Float32, s, std::move(v)); }

TEST(LayerOps, ShapeOpsReshape) {
  const std::vector<double> six = {1, 2, 3, 4, 5, 6};
  expectOutput(oneOp("ExpandDims", {desc("x", {2, 3}, "float32")}, desc("y", {2, 1, 3}, "float32"), {attr("axis", 1)}),
               {f32({2, 3}, six)}, six);
  expectOutput(oneOp("ExpandDims", {desc("x", {2, 3}, "float32")}, desc("y", {2, 3, 1}, "float32"), {attr("axis", -1)}),
               {f32({2, 3}, six)}, six);
  expectOutput(oneOp("Squeeze", {desc("x", {1, 6, 1}, "float32")}, desc("y", {6}, "float32"), Json::array()),
               {f32({1, 6, 1}, six)}, six);
  expectOutput(oneOp("Squeeze", {desc("x", {1, 6, 1}, "float32")}, desc("y", {6, 1}, "float32"), {attr("axis", {0})}),
               {f32({1, 6, 1}, six)}, six);
  expectOutput(oneOp("Flatten", {desc("x", {1, 3, 2}, "float32")}, desc("y", {1, 6}, "float32"), Json::array()),
               {f32({1, 3, 2}, six)}, six);
  expectOutput(oneOp("TupleGetItem", {desc("x", {6}, "float32")}, desc("y", {6}, "float32"), {attr("index", 0)}),
               {f32({6}, six)}, six);
}

TEST(LayerOps, BiasAddAddsAlongTheChannelAxis) {
  expectOutput(oneOp("BiasAdd", {desc("x", {2, 3}, "float32"), desc("b", {3}, "float32")}, desc("y", {2, 3}, "float32"),
                     Json::array()),
               {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {10, 20, 30})}, {11, 22, 33, 14, 25, 36});
  // NCHW [1,2,1,2]: channel 0 gets 10, channel 1 gets 20.
  expectOutput(oneOp("BiasAdd", {desc("x", {1, 2, 1, 2}, "float32"), desc("b", {2}, "float32")},
                     desc("y", {1, 2, 1, 2}, "float32"), {attr("data_format", "NCHW")}),
               {f32({1, 2, 1, 2}, {1, 2, 3, 4}), f32({2}, {10, 20})}, {11, 12, 23, 24});
  expectOutput(oneOp("BiasAdd", {desc("x", {1, 1, 2, 2}, "float32"), desc("b", {2}, "float32")},
                     desc("y", {1, 1, 2, 2}, "float32"), {attr("data_format", "NHWC")}),
               {f32({1, 1, 2, 2}, {1, 2, 3, 4}), f32({2}, {10, 20})}, {11, 22, 13, 24});
}

TEST(LayerOps, FilledLikeAndValueOps) {
  expectOutput(oneOp("ZerosLike", {desc("x", {3}, "int8")}, desc("y", {3}, "int8"), Json::array()),
               {HostTensor::fromValues(DType::Int8, {3}, {5, -1, 7})}, {0, 0, 0});
  expectOutput(oneOp("OnesLike", {desc("x", {2}, "float16")}, desc("y", {2}, "float16"), Json::array()),
               {HostTensor::fromValues(DType::Float16, {2}, {5, -1})}, {1, 1});
  for (const char* t : {"int32", "int64"})
    expectOutput(oneOp("Shape", {desc("x", {3, 5, 7}, "float32")}, desc("s", {3}, t), Json::array()),
                 {HostTensor::zeros(DType::Float32, {3, 5, 7})}, {3, 5, 7});
  expectOutput(oneOp("ConstantOfShape", {desc("s", {2}, "int64")}, desc("y", {2, 3}, "float32"), {attr("value", {1.5})}),
               {HostTensor::fromValues(DType::Int64, {2}, {2, 3})}, {1.5, 1.5, 1.5, 1.5, 1.5, 1.5});
  expectOutput(oneOp("ConstantOfShape", {desc("s", {2}, "int64")}, desc("y", {2, 2}, "int32"),
                     {attr("value", {1, -2, 3, 4}), attr("shape", {2, 2})}),
               {HostTensor::fromValues(DType::Int64, {2}, {2, 2})}, {1, -2, 3, 4});
}

TEST(LayerOps, ActivationsFollowMindSporeDefinitions) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto act = [](const char* name, Json attrs = Json::array()) {
    return oneOp(name, {desc("x", {4}, "float32")}, desc("y", {4}, "float32"), std::move(attrs));
  };
  expectOutput(act("ReLU6"), {f32({4}, {-1, 3, 7, nan})}, {0, 3, 6, nan});
  expectOutput(act("HSigmoid"), {f32({4}, {-4, 0, 1.5, 4})}, {0, 0.5, 0.75, 1});
  expectOutput(act("HSwish"), {f32({4}, {-4, 0, 1.5, 4})}, {0, 0, 1.125, 4});
  expectOutput(act("Mish"), {f32({4}, {0, 100, -100, 50})}, {0, 100, 0, 50});
  expectOutput(act("LeakyReLU", {attr("alpha", 0.5)}), {f32({4}, {-2, 3, 0, -0.5})}, {-1, 3, 0, -0.25});
  expectOutput(act("LeakyReLU"), {f32({4}, {-5, 3, 0, -10})}, {-1, 3, 0, -2});  // alpha 0.2
  expectOutput(oneOp("ReLU6", {desc("x", {3}, "int32")}, desc("y", {3}, "int32"), Json::array()),
               {HostTensor::fromValues(DType::Int32, {3}, {-9, 4, 90})}, {0, 4, 6});
  expectOutput(oneOp("SquaredDifference", {desc("x", {2}, "int32"), desc("z", {2}, "int32")}, desc("y", {2}, "int32"),
                     Json::array()),
               {HostTensor::fromValues(DType::Int32, {2}, {5, 2}), HostTensor::fromValues(DType::Int32, {2}, {3, 7})},
               {4, 25});
  expectOutput(oneOp("ClipByValue", {desc("x", {3}, "float32"), desc("lo", {1}, "float32"), desc("hi", {1}, "float32")},
                     desc("y", {3}, "float32"), Json::array()),
               {f32({3}, {-5, 0.5, 9}), f32({1}, {0}), f32({1}, {1})}, {0, 0.5, 1});
}

TEST(LayerOps, SquareSums) {
  expectOutput(oneOp("SquareSumV1", {desc("x", {2, 2}, "float32")}, desc("y", {2, 1}, "float32"),
                     {attr("axis", {1}), attr("keep_dims", true)}),
               {f32({2, 2}, {1, 2, 3, 4})}, {5, 25});
  Json ins = Json::array({Json::array({desc("x", {3}, "float32")}), Json::array({desc("z", {2, 2}, "float32")})});
  Json outs = Json::array({desc("sx", {}, "float32"), desc("sz", {1}, "float32")});
  Graph all = parseComposite(oneOpDocument("SquareSumAll", ins, ins, outs, Json::array()).dump(), "ssa.json");
  std::vector<HostTensor> in = {f32({3}, {1, 2, 3}), f32({2, 2}, {2, 2, 2, -2})};
  expectOutput(all, in, {14}, 0);
  expectOutput(all, in, {16}, 1);
}

// Rows with mean 2 and 1 and biased variance 1 (epsilon 0), so every value is exact.
TEST(LayerOps, LayerNormGivesYMeanAndVariance) {
  Json ins = Json::array({Json::array({desc("x", {2, 4}, "float32")}), Json::array({desc("g", {4}, "float32")}),
                          Json::array({desc("b", {4}, "float32")})});
  Json outs = Json::array({desc("y", {2, 4}, "float32"), desc("mean", {2, 1}, "float32"), desc("var", {2, 1}, "float32")});
  Json attrs = {attr("begin_norm_axis", -1), attr("begin_params_axis", -1), attr("epsilon", 0)};
  Graph g = parseComposite(oneOpDocument("LayerNorm", ins, ins, outs, attrs).dump(), "ln.json");
  std::vector<HostTensor> in = {f32({2, 4}, {1, 3, 1, 3, 0, 2, 0, 2}), f32({4}, {1, 2, 3, 4}), f32({4}, {0.5, 0, 0, 0})};
  expectOutput(g, in, {-0.5, 2, -3, 4, -0.5, 2, -3, 4}, 0);
  expectOutput(g, in, {2, 1}, 1);
  expectOutput(g, in, {1, 1}, 2);
}

TEST(LayerOps, OddShapesPassTheCpuCheck) {
  Json ins = Json::array({Json::array({desc("x", {37, 1000}, "float16")}), Json::array({desc("g", {1000}, "float16")}),
                          Json::array({desc("b", {1000}, "float16")})});
  Json outs = Json::array({desc("y", {37, 1000}, "float16"), desc("mean", {37, 1}, "float32"),
                           desc("var", {37, 1}, "float32")});
  Json attrs = {attr("begin_norm_axis", 1), attr("begin_params_axis", 1), attr("epsilon", 1e-5)};
  expectCheckPasses(parseComposite(oneOpDocument("LayerNorm", ins, ins, outs, attrs).dump(), "ln16.json"));
  expectCheckPasses(oneOp("BiasAdd", {desc("x", {3, 67, 5, 9}, "float16"), desc("b", {67}, "float16")},
                          desc("y", {3, 67, 5, 9}, "float16"), Json::array()));
  expectCheckPasses(oneOp("HSwish", {desc("x", {1029, 7}, "bfloat16")}, desc("y", {1029, 7}, "bfloat16"), Json::array()));
  expectCheckPasses(oneOp("Mish", {desc("x", {4099}, "float16")}, desc("y", {4099}, "float16"), Json::array()));
  expectCheckPasses(oneOp("SquareSumV1", {desc("x", {33, 517, 3}, "float32")}, desc("y", {517}, "float32"),
                          {attr("axis", {0, 2})}));
}

// AKG's own ops (its composite library registers them; its test oracle reads them as
// numpy's where, identity and x + the type's smallest normal (f32) or subnormal (f16)).
TEST(LayerOps, AkgSelectsOnComparisonsPickAsWhere) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto select = [](const char* name) {
    return oneOp(name, {desc("a", {4}, "float32"), desc("b", {1}, "float32"), desc("c", {4}, "float32"),
                        desc("d", {4}, "float32")},
                 desc("y", {4}, "float32"), Json::array());
  };
  const std::vector<HostTensor> in = {f32({4}, {-1, 0, 2, nan}), f32({1}, {0}), f32({4}, {10, 20, 30, 40}),
                                      f32({4}, {-10, -20, -30, -40})};
  expectOutput(select("SelectGT"), in, {-10, -20, 30, -40});
  expectOutput(select("SelectGE"), in, {-10, 20, 30, -40});
  expectOutput(select("SelectLT"), in, {10, -20, -30, -40});
  expectOutput(select("SelectLE"), in, {10, 20, -30, -40});
  // int32 choices on float16 comparisons, broadcast along both axes
  expectOutput(oneOp("SelectGT", {desc("a", {2, 1}, "float16"), desc("b", {1, 3}, "float16"), desc("c", {1}, "int32"),
                                  desc("d", {2, 3}, "int32")},
                     desc("y", {2, 3}, "int32"), Json::array()),
               {HostTensor::fromValues(DType::Float16, {2, 1}, {1, 5}),
                HostTensor::fromValues(DType::Float16, {1, 3}, {0, 1, 6}), HostTensor::fromValues(DType::Int32, {1}, {7}),
                HostTensor::fromValues(DType::Int32, {2, 3}, {0, 1, 2, 3, 4, 5})},
               {7, 1, 2, 7, 7, 5});
  expectCheckPasses(oneOp("SelectLE", {desc("a", {37, 1001}, "float16"), desc("b", {37, 1}, "float16"),
                                       desc("c", {37, 1001}, "float16"), desc("d", {1}, "float16")},
                          desc("y", {37, 1001}, "float16"), Json::array()));
}

TEST(LayerOps, AkgFormatAndOffsetOps) {
  const std::vector<double> six = {1, 2, 3, 4, 5, 6};
  expectOutput(oneOp("EquivFormat", {desc("x", {2, 3}, "float32")}, desc("y", {2, 3}, "float32"), Json::array()),
               {f32({2, 3}, six)}, six);
  expectOutput(oneOp("EquivFormat", {desc("x", {2, 3}, "float32")}, desc("y", {6}, "float32"), Json::array()),
               {f32({2, 3}, six)}, six);
  expectOutput(oneOp("AddMinValue", {desc("x", {3}, "float32")}, desc("y", {3}, "float32"), Json::array()),
               {f32({3}, {0, 1, -0x1p-126})}, {0x1p-126, 1, 0});
  expectOutput(oneOp("AddMinValue", {desc("x", {2}, "float16")}, desc("y", {2}, "float16"), Json::array()),
               {HostTensor::fromValues(DType::Float16, {2}, {0, 0x1p-14})}, {0x1p-24, 0x1p-14 + 0x1p-24});
  expectOutput(oneOp("AddMinValue", {desc("x", {2}, "int32")}, desc("y", {2}, "int32"), Json::array()),
               {HostTensor::fromValues(DType::Int32, {2}, {0, -3})}, {0, -3});
  expectOutput(oneOp("TensorAdd", {desc("x", {2}, "int32"), desc("z", {1}, "int32")}, desc("y", {2}, "int32"),
                     Json::array()),
               {HostTensor::fromValues(DType::Int32, {2}, {4, -3}), HostTensor::fromValues(DType::Int32, {1}, {5})},
               {9, 2});
}

TEST(LayerOps, MalformedOpsAreErrorsNamingTheOp) {
  auto rejects = [](auto make, const std::string& words) {  // and the message names the op
    EXPECT_NE(expectRejected(make, words).find("#0"), std::string::npos);
  };
  rejects([] { oneOp("BiasAdd", {desc("x", {2, 3}, "float32"), desc("b", {2}, "float32")}, desc("y", {2, 3}, "float32"), Json::array()); },
          "channel extent 3");
  rejects([] { oneOp("Squeeze", {desc("x", {2, 3}, "float32")}, desc("y", {3}, "float32"), {attr("axis", {0})}); }, "not 1");
  rejects([] { oneOp("ExpandDims", {desc("x", {2}, "float32")}, desc("y", {2, 1}, "float32"), {attr("axis", 5)}); },
          "out of range");
  rejects([] { oneOp("Shape", {desc("x", {2}, "float32")}, desc("y", {1}, "float32"), Json::array()); }, "int32 or int64");
  rejects([] { oneOp("ConstantOfShape", {desc("s", {2}, "int64")}, desc("y", {2, 2}, "float32"), {attr("value", {1, 2})}); },
          "one per element");
  rejects([] { oneOp("Mish", {desc("x", {2}, "int32")}, desc("y", {2}, "int32"), Json::array()); }, "float input");
  rejects([] { oneOp("TupleGetItem", {desc("x", {2}, "int32")}, desc("y", {2}, "int32"), {attr("index", 1)}); }, "index 1");
  rejects([] { oneOp("SelectGT", {desc("a", {2}, "float32"), desc("b", {2}, "float32"), desc("c", {2}, "float32")},
                     desc("y", {2}, "float32"), Json::array()); },
          "takes 4 inputs");
  rejects([] { oneOp("EquivFormat", {desc("x", {2, 3}, "float32")}, desc("y", {5}, "float32"), Json::array()); },
          "keeps the element count");
  Json ins = Json::array({Json::array({desc("x", {2, 4}, "float32")}), Json::array({desc("g", {3}, "float32")}),
                          Json::array({desc("b", {4}, "float32")})});
  Json outs = Json::array({desc("y", {2, 4}, "float32"), desc("m", {2, 1}, "float32"), desc("v", {2, 1}, "float32")});
  rejects([&] { parseComposite(oneOpDocument("LayerNorm", ins, ins, outs, Json::array()).dump(), "ln.json"); }, "gamma");
}

}  // namespace
