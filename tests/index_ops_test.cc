// The MindSpore ops polyred computes from coordinates (frontend/composite_index_ops):
// PadAkg, Pad, UnPadAkg, OneHot, ElemAny, ElemAll, Tile, Slice, StridedSlice, Concat,
// Pool2D.
// Each is checked on hand-picked inputs against values written out here from
// MindSpore's definition (not against polyred's own
// reference, which would only repeat the expansion), through the reference AND the
// lowered kernel run on the CPU; then on odd shapes and random inputs (CPU check and
// NVRTC); malformed attributes are errors naming the op.
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "composite_test_helpers.h"
#include "one_op_graph.h"

using namespace polyred;
using namespace polyred::test_support;

namespace {

HostTensor counting(DType t, const Shape& s) {
  std::vector<double> v(static_cast<size_t>(numElements(s)));
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<double>(k);
  return HostTensor::fromValues(t, s, v);
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

TEST(IndexOps, PadTakesPaddingsPairs) {
  Graph g = oneOp("Pad", {desc("x", {2, 2}, "float32")}, desc("y", {3, 4}, "float32"),
                  {attr("paddings", {{1, 0}, {0, 2}})});
  expectOutput(g, {HostTensor::fromValues(DType::Float32, {2, 2}, {1, 2, 3, 4})}, {0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0});
}

TEST(IndexOps, TileRepeatsTheInputAlongEachAxis) {
  const HostTensor x = HostTensor::fromValues(DType::Int32, {2, 3}, {1, 2, 3, 4, 5, 6});
  expectOutput(oneOp("Tile", {desc("x", {2, 3}, "int32")}, desc("y", {4, 6}, "int32"), {attr("multiples", {2, 2})}), {x},
               {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
  // More multiples than axes: the shape gains leading 1s first.
  expectOutput(oneOp("Tile", {desc("x", {3}, "float16")}, desc("y", {2, 6}, "float16"), {attr("multiples", {2, 2})}),
               {HostTensor::fromValues(DType::Float16, {3}, {1.5, -2, 3})}, {1.5, -2, 3, 1.5, -2, 3, 1.5, -2, 3, 1.5, -2, 3});
}

TEST(IndexOps, SliceAndStridedSliceCutABlock) {
  const HostTensor x = HostTensor::fromValues(DType::Float32, {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  // size -1: to the end of the axis.
  expectOutput(oneOp("Slice", {desc("x", {3, 4}, "float32")}, desc("y", {2, 3}, "float32"),
                     {attr("begin", {1, 1}), attr("size", {2, -1})}),
               {x}, {5, 6, 7, 9, 10, 11});
  auto strided = [](const Shape& out, std::vector<int64_t> begin, std::vector<int64_t> end, int beginMask, int endMask,
                    int shrink) {
    return oneOp("StridedSlice", {desc("x", {3, 4}, "float32")}, desc("y", out, "float32"),
                 {attr("begin", begin), attr("end", end), attr("strides", std::vector<int64_t>(begin.size(), 1)),
                  attr("begin_mask", beginMask), attr("end_mask", endMask), attr("ellipsis_mask", 0),
                  attr("new_axis_mask", 0), attr("shrink_axis_mask", shrink)});
  };
  // Negative begin and end count from the end: rows 1..2, columns 1..2.
  expectOutput(strided({2, 2}, {-2, 1}, {3, -1}, 0, 0, 0), {x}, {5, 6, 9, 10});
  // Mask bits take the whole axis whatever begin/end say; an end past the extent clamps.
  expectOutput(strided({3, 3}, {2, 1}, {0, 99}, 1, 1, 0), {x}, {1, 2, 3, 5, 6, 7, 9, 10, 11});
  // A shrink bit keeps one index (-1: the last row) and drops the axis.
  expectOutput(strided({4}, {-1, 0}, {0, 4}, 0, 0, 1), {x}, {8, 9, 10, 11});
  // Strides: every s-th element from begin, up to end (exclusive).
  expectOutput(oneOp("StridedSlice", {desc("x", {3, 4}, "float32")}, desc("y", {2, 2}, "float32"),
                     {attr("begin", {0, 1}), attr("end", {3, 4}), attr("strides", {2, 2})}),
               {x}, {1, 3, 9, 11});
  expectOutput(oneOp("StridedSlice", {desc("x", {3, 4}, "float32")}, desc("y", {2}, "float32"),
                     {attr("begin", {-1, 0}), attr("end", {0, 4}), attr("strides", {1, 3}), attr("shrink_axis_mask", 1)}),
               {x}, {8, 11});
  // Fewer entries than axes: the rest whole.
  expectOutput(oneOp("StridedSlice", {desc("x", {3, 4}, "float32")}, desc("y", {1, 4}, "float32"),
                     {attr("begin", {1}), attr("end", {2}), attr("strides", {1})}),
               {x}, {4, 5, 6, 7});
}

// StridedSliceOnnx: begin, end, axes and steps as constant lists (MindSpore's inline
// values), read as the StridedSlice they describe; ONNX's rules (negative positions
// count from the end, ends clamp, a negative step walks backwards).
TEST(IndexOps, StridedSliceOnnxTakesItsParametersAsConstantLists) {
  const HostTensor x = HostTensor::fromValues(DType::Float32, {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  auto list = [](const std::string& name, std::vector<int64_t> v) {
    Json d = desc(name, {static_cast<int64_t>(v.size())}, "int64");
    d["value"] = v;
    return Json::array({d});
  };
  auto onnx = [&](const Shape& out, std::vector<std::vector<int64_t>> params) {
    Json graphIns = Json::array({Json::array({desc("x", {3, 4}, "float32")})});
    Json opIns = graphIns;
    const char* names[] = {"begin", "end", "axes", "steps"};
    for (size_t k = 0; k < params.size(); ++k) opIns.push_back(list(names[k], params[k]));
    return parseComposite(oneOpDocument("StridedSliceOnnx", graphIns, opIns, Json::array({desc("y", out, "float32")}),
                                        nullptr).dump(), "onnx.json");
  };
  expectOutput(onnx({3, 2}, {{1}, {3}, {1}, {1}}), {x}, {1, 2, 5, 6, 9, 10});
  expectOutput(onnx({2, 3}, {{0, 1}, {2, 4}}), {x}, {1, 2, 3, 5, 6, 7});  // axes 0..k-1, steps 1
  expectOutput(onnx({3, 4}, {{-1}, {-100}, {0}, {-1}}), {x}, {8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3});
  expectOutput(onnx({3, 2}, {{10}, {0}, {-1}, {-2}}), {x}, {3, 1, 7, 5, 11, 9});  // begin clamps to 3
  EXPECT_THROW(onnx({3, 2}, {{1, 0}, {3}, {1}, {1}}), Error);                     // lists of different lengths
  // A list constant read as data is refused: polyred folds only scalars.
  Json graphIns = Json::array({Json::array({desc("x", {2}, "int64")})});
  Json opIns = graphIns;
  opIns.push_back(list("c", {1, 2}));
  EXPECT_THROW(parseComposite(oneOpDocument("Add", graphIns, opIns, Json::array({desc("y", {2}, "int64")}), nullptr).dump(),
                              "add.json"),
               UnsupportedError);
}

// TransData (AKG's kernel): plain [.., m, n] <-> FRACTAL_NZ [.., N1, M1, 16, 16] with
// out[.., n1, m1, m0, n0] = x[.., 16 m1 + m0, 16 n1 + n0], 0 past m or n; and back.
TEST(IndexOps, TransDataMovesBetweenPlainAndFractalNz) {
  const Shape plain = {2, 17, 18}, blocked = {2, 2, 2, 16, 16};
  std::vector<double> toNz, fromNz;
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t n1 = 0; n1 < 2; ++n1)
      for (int64_t m1 = 0; m1 < 2; ++m1)
        for (int64_t m0 = 0; m0 < 16; ++m0)
          for (int64_t n0 = 0; n0 < 16; ++n0) {
            const int64_t i = 16 * m1 + m0, j = 16 * n1 + n0;
            toNz.push_back(i < 17 && j < 18 ? static_cast<double>(b * 17 * 18 + i * 18 + j) : 0);
          }
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < 17; ++i)
      for (int64_t j = 0; j < 18; ++j)
        fromNz.push_back(static_cast<double>((((b * 2 + j / 16) * 2 + i / 16) * 16 + i % 16) * 16 + j % 16));
  Json nz = desc("y", blocked, "float32");
  nz["format"] = "FRACTAL_NZ";
  expectOutput(oneOp("TransData", {desc("x", plain, "float32")}, nz,
                     {attr("src_format", "DefaultFormat"), attr("dst_format", "FRACTAL_NZ")}),
               {counting(DType::Float32, plain)}, toNz);
  Json in = desc("x", blocked, "float32");
  in["format"] = "FRACTAL_NZ";
  expectOutput(oneOp("TransData", {in}, desc("y", plain, "float32"),
                     {attr("src_format", "FRACTAL_NZ"), attr("dst_format", "DefaultFormat")}),
               {counting(DType::Float32, blocked)}, fromNz);
  // The blocked result declared plain (or the other way round) is an error, not a silent reinterpretation.
  EXPECT_THROW(oneOp("TransData", {desc("x", plain, "float32")}, desc("y", blocked, "float32"),
                     {attr("src_format", "DefaultFormat"), attr("dst_format", "FRACTAL_NZ")}),
               Error);
  EXPECT_THROW(oneOp("TransData", {in}, desc("y", {2, 40, 18}, "float32"),
                     {attr("src_format", "FRACTAL_NZ"), attr("dst_format", "DefaultFormat")}),
               Error);
}

// Negative strides walk backwards (numpy's x[b:e:s] and TensorFlow's masks): a masked
// begin is the last index, a masked end reaches past the first.
TEST(IndexOps, StridedSliceWithNegativeStridesWalksBackwards) {
  const HostTensor x = HostTensor::fromValues(DType::Float32, {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  auto slice = [](const Shape& in, const Shape& out, Json attrs) {
    return oneOp("StridedSlice", {desc("x", in, "float32")}, desc("y", out, "float32"), std::move(attrs));
  };
  // x[::-1, ::-1]
  expectOutput(slice({3, 4}, {3, 4}, {attr("begin", {0, 0}), attr("end", {0, 0}), attr("strides", {-1, -1}),
                                      attr("begin_mask", 3), attr("end_mask", 3)}),
               {x}, {11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  // x[2:0:-1, 3::-2]: rows 2, 1; columns 3, 1.
  expectOutput(slice({3, 4}, {2, 2}, {attr("begin", {2, 3}), attr("end", {0, 0}), attr("strides", {-1, -2}),
                                      attr("end_mask", 2)}),
               {x}, {11, 9, 7, 5});
  // x[-1, ::-3] (a shrunk row): 11, 8.
  expectOutput(slice({3, 4}, {2}, {attr("begin", {-1, 0}), attr("end", {0, 0}), attr("strides", {1, -3}),
                                   attr("begin_mask", 2), attr("end_mask", 2), attr("shrink_axis_mask", 1)}),
               {x}, {11, 8});
  const HostTensor v = HostTensor::fromValues(DType::Float32, {5}, {0, 1, 2, 3, 4});
  expectOutput(slice({5}, {3}, {attr("begin", {-1}), attr("end", {0}), attr("strides", {-2}), attr("end_mask", 1)}), {v},
               {4, 2, 0});
  expectOutput(slice({5}, {4}, {attr("begin", {3}), attr("end", {-10}), attr("strides", {-1})}), {v}, {3, 2, 1, 0});
  expectOutput(slice({5}, {5}, {attr("begin", {10}), attr("end", {-10}), attr("strides", {-1})}), {v}, {4, 3, 2, 1, 0});
  expectCheckPasses(oneOp("StridedSlice", {desc("x", {37, 129}, "float16")}, desc("y", {13, 129}, "float16"),
                          {attr("begin", {0, 0}), attr("end", {0, 0}), attr("strides", {-3, -1}), attr("begin_mask", 3),
                           attr("end_mask", 3)}));
}

TEST(IndexOps, ConcatJoinsInputsAlongTheAxis) {
  Graph g = oneOp("Concat", {desc("a", {2, 1}, "int8"), desc("b", {2, 2}, "int8"), desc("c", {2, 1}, "int8")},
                  desc("y", {2, 4}, "int8"), {attr("axis", -1)});
  expectOutput(g,
               {HostTensor::fromValues(DType::Int8, {2, 1}, {1, 2}), HostTensor::fromValues(DType::Int8, {2, 2}, {3, 4, 5, 6}),
                HostTensor::fromValues(DType::Int8, {2, 1}, {7, 8})},
               {1, 3, 4, 7, 2, 5, 6, 8});
  // Axis 0 (the default), and MindSpore's layout: every input in one input_desc list.
  Json ins = Json::array({Json::array({desc("a", {1, 2}, "float32"), desc("b", {2, 2}, "float32")})});
  Json out = desc("y", {3, 2}, "float32");
  expectOutput(parseComposite(oneOpDocument("Concat", ins, ins, Json::array({out}), nullptr).dump(), "concat.json"),
               {HostTensor::fromValues(DType::Float32, {1, 2}, {1, 2}), HostTensor::fromValues(DType::Float32, {2, 2}, {3, 4, 5, 6})},
               {1, 2, 3, 4, 5, 6});
}

TEST(IndexOps, SplitGivesEqualPartsAlongTheAxis) {
  Json x = desc("x", {2, 6}, "float32");
  Json outs = Json::array({desc("p0", {2, 2}, "float32"), desc("p1", {2, 2}, "float32"), desc("p2", {2, 2}, "float32")});
  Json ins = Json::array({Json::array({x})});
  Json doc = oneOpDocument("Split", ins, ins, outs, {attr("axis", -1), attr("output_num", 3)});
  Graph g = parseComposite(doc.dump(), "split.json");
  const std::vector<HostTensor> in = {HostTensor::fromValues(DType::Float32, {2, 6}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})};
  const std::vector<std::vector<double>> want = {{0, 1, 6, 7}, {2, 3, 8, 9}, {4, 5, 10, 11}};
  CompiledGraph c = compileGraph(g, CompileOptions{});
  std::vector<HostTensor> reference = evaluateReference(g, in);
  CpuCheckOptions all;
  all.maxPoints = 0;
  Deadline unlimited = Deadline::none();
  LoweredRun lowered = runLoweredOnCpu(c, in, all, unlimited);
  ASSERT_EQ(reference.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(valuesOf(reference[k]), want[k]) << "part " << k;
    EXPECT_EQ(valuesOf(lowered.outputs.at(k)), want[k]) << "part " << k;
  }
  outs[2] = desc("p2", {2, 3}, "float32");
  doc["op_desc"][0]["output_desc"] = outs;
  EXPECT_NE(errorOf(doc.dump()).find("output 2 is declared [2,3]"), std::string::npos) << errorOf(doc.dump());
  doc["op_desc"][0]["attr"] = {attr("axis", 1), attr("output_num", 4)};
  EXPECT_NE(errorOf(doc.dump()).find("output_num 4 does not divide axis 1 (extent 6)"), std::string::npos)
      << errorOf(doc.dump());
}

TEST(IndexOps, LayoutTransformTransposesNchwAndNhwc) {
  // x[c][h][w] = 6c + 3h + w; NHWC reads it as out[h][w][c].
  std::vector<double> nchw(12);
  for (int k = 0; k < 12; ++k) nchw[static_cast<size_t>(k)] = k;
  Graph g = oneOp("LayoutTransform", {desc("x", {1, 2, 2, 3}, "float16")}, desc("y", {1, 2, 3, 2}, "float16"),
                  {attr("src_format", "NCHW"), attr("dst_format", "NHWC")});
  expectOutput(g, {HostTensor::fromValues(DType::Float16, {1, 2, 2, 3}, nchw)}, {0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11});
  Graph back = oneOp("LayoutTransform", {desc("x", {1, 2, 3, 2}, "float16")}, desc("y", {1, 2, 2, 3}, "float16"),
                     {attr("src_format", "NHWC"), attr("dst_format", "NCHW")});
  expectOutput(back, {HostTensor::fromValues(DType::Float16, {1, 2, 3, 2}, {0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11})}, nchw);
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
  expectCheckPasses(oneOp("Tile", {desc("x", {3, 1, 7}, "bfloat16")}, desc("y", {5, 3, 129, 7}, "bfloat16"),
                          {attr("multiples", {5, 1, 129, 1})}));
  expectCheckPasses(oneOp("Slice", {desc("x", {33, 65, 9}, "int64")}, desc("y", {31, 1, 9}, "int64"),
                          {attr("begin", {2, 64, 0}), attr("size", {-1, 1, 9})}));
  expectCheckPasses(oneOp("StridedSlice", {desc("x", {17, 1000}, "float32")}, desc("y", {999}, "float32"),
                          {attr("begin", {16, 1}), attr("end", {17, 1000}), attr("strides", {1, 1}),
                           attr("shrink_axis_mask", 1)}));
  expectCheckPasses(oneOp("StridedSlice", {desc("x", {37, 1000, 6}, "int32")}, desc("y", {12, 143, 2}, "int32"),
                          {attr("begin", {1, -999, 1}), attr("end", {37, 1000, 6}), attr("strides", {3, 7, 4})}));
  expectCheckPasses(oneOp("Concat", {desc("a", {7, 3, 5}, "float16"), desc("b", {7, 1, 5}, "float16"),
                                     desc("c", {7, 1000, 5}, "float16")},
                          desc("y", {7, 1004, 5}, "float16"), {attr("axis", 1)}));
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
  rejects([] { return oneOp("Tile", {desc("x", {2, 2}, "float32")}, desc("y", {2, 2}, "float32"),
                            {attr("multiples", {1})}); },
          "multiples has 1 entries for a rank-2 input");
  rejects([] { return oneOp("Slice", {desc("x", {4}, "float32")}, desc("y", {3}, "float32"),
                            {attr("begin", {2}), attr("size", {3})}); },
          "leave the extent 4");
  rejects([] { return oneOp("StridedSlice", {desc("x", {4}, "float32")}, desc("y", {2}, "float32"),
                            {attr("begin", {3}), attr("end", {0}), attr("strides", {0})}); },
          "stride 0");
  rejects([] { return oneOp("StridedSlice", {desc("x", {4}, "float32")}, desc("y", {4}, "float32"),
                            {attr("begin", {0}), attr("end", {4}), attr("strides", {1}), attr("ellipsis_mask", 1)}); },
          "ellipsis_mask and new_axis_mask are not supported");
  rejects([] { return oneOp("Concat", {desc("a", {2, 3}, "float32"), desc("b", {3, 3}, "float32")},
                            desc("y", {2, 6}, "float32"), {attr("axis", 1)}); },
          "off axis 1");
  rejects([] { return oneOp("Concat", {desc("a", {2, 3}, "float32"), desc("b", {2, 3}, "float16")},
                            desc("y", {2, 6}, "float32"), {attr("axis", 1)}); },
          "input 1 is float16");
  rejects([] { return oneOp("Pad", {desc("x", {2, 2}, "float32")}, desc("y", {3, 3}, "float32"),
                            {attr("paddings", {{1, 0, 1}, {0, 1}})}); },
          "each paddings entry is [before, after]");
  rejects([] { return oneOp("LayoutTransform", {desc("x", {1, 2, 2, 16}, "float16")}, desc("y", {1, 2, 2, 16}, "float16"),
                            {attr("src_format", "NCHW"), attr("dst_format", "NC1HWC0")}); },
          "only NCHW <-> NHWC are supported");
  rejects([] { return oneOp("MatMul", {desc("a", {4, 4}, "float32"), desc("b", {4, 4}, "float32")},
                            desc("y", {4, 4}, "float32"), Json::array()); },
          "matrix products are outside polyred's scope");
}

}  // namespace

namespace {

// Pool2D (AKG's topi pool): max pads with the lowest finite value, average divides by
// the whole window (padding included); the declared shape tells floor from ceil rounding.
Graph pool(const Shape& in, const Shape& out, const std::string& type, Json attrs, const std::string& dtype = "float32") {
  attrs.push_back(attr("pool_type", type));
  return oneOp("Pool2D", {desc("x", in, dtype)}, desc("y", out, dtype), std::move(attrs));
}
Json window(int64_t k, int64_t s, std::vector<int64_t> pad = {0, 0, 0, 0}) {
  return {attr("global", false), attr("kernel_size", {k, k}), attr("strides", {s, s}), attr("pad", pad),
          attr("round_mode", 0)};
}

TEST(IndexOps, Pool2DTakesTheMaxOrMeanOfEachWindow) {
  HostTensor x = counting(DType::Float32, {1, 4, 4, 1});  // NHWC, x[h][w] = 4h + w
  expectOutput(pool({1, 4, 4, 1}, {1, 2, 2, 1}, "max", window(2, 2)), {x}, {5, 7, 13, 15});
  expectOutput(pool({1, 4, 4, 1}, {1, 2, 2, 1}, "avg", window(2, 2)), {x}, {2.5, 4.5, 10.5, 12.5});
  // kernel 3, stride 2, pad 1 all round: floor gives 2 x 2, ceil 3 x 3 (the last window
  // row and column hold only x's last row and column).
  expectOutput(pool({1, 4, 4, 1}, {1, 2, 2, 1}, "max", window(3, 2, {1, 1, 1, 1})), {x}, {5, 7, 13, 15});
  expectOutput(pool({1, 4, 4, 1}, {1, 3, 3, 1}, "max", window(3, 2, {1, 1, 1, 1})), {x}, {5, 7, 7, 13, 15, 15, 13, 15, 15});
  // Average with zero padding on top and left, divided by the 4 window elements.
  expectOutput(pool({1, 2, 2, 1}, {1, 2, 2, 1}, "avg", window(2, 1, {1, 1, 0, 0})),
               {HostTensor::fromValues(DType::Float32, {1, 2, 2, 1}, {1, 2, 3, 4})}, {0.25, 0.75, 1, 2.5});
  Json nchw = window(2, 2);
  nchw.push_back(attr("data_layout", "NCHW"));
  expectOutput(pool({1, 1, 4, 4}, {1, 1, 2, 2}, "max", nchw), {counting(DType::Float32, {1, 1, 4, 4})}, {5, 7, 13, 15});
  // Global: over H and W, kept as size 1; channels [0,2,4,6] and [1,3,5,7].
  HostTensor g = counting(DType::Float32, {1, 2, 2, 2});
  expectOutput(pool({1, 2, 2, 2}, {1, 1, 1, 2}, "max", {attr("global", true)}), {g}, {6, 7});
  expectOutput(pool({1, 2, 2, 2}, {1, 1, 1, 2}, "avg", {attr("global", true)}), {g}, {3, 4});
  // int8 max pooling pads with -128, which never wins over an element.
  expectOutput(pool({1, 2, 2, 1}, {1, 2, 2, 1}, "max", window(2, 1, {1, 1, 0, 0}), "int8"),
               {HostTensor::fromValues(DType::Int8, {1, 2, 2, 1}, {-128, -5, 7, -100})}, {-128, -5, 7, 7});
}

TEST(IndexOps, Pool2DOddShapesPassTheCpuCheck) {
  Json nc1hwc0 = window(3, 2, {1, 1, 1, 1});
  nc1hwc0.push_back(attr("data_layout", "NC1HWC0"));
  expectCheckPasses(pool({2, 3, 17, 13, 16}, {2, 3, 9, 7, 16}, "max", nc1hwc0, "float16"));
  expectCheckPasses(pool({3, 15, 11, 5}, {3, 15, 11, 5}, "avg", window(3, 1, {1, 1, 1, 1})));
  expectCheckPasses(pool({2, 7, 7, 3}, {2, 4, 4, 3}, "avg", window(2, 2), "bfloat16"));  // ceil rounding
  expectCheckPasses(pool({4, 9, 9, 33}, {4, 1, 1, 33}, "avg", {attr("global", true)}, "float16"));
  auto rejects = [](const Json& attrs, const Shape& out, const std::string& words) {
    expectRejected([&] { pool({1, 4, 4, 1}, out, "max", attrs); }, words);
  };
  rejects(window(0, 1), {1, 4, 4, 1}, "must be positive");
  rejects(window(5, 1), {1, 1, 1, 1}, "larger than the padded extent");
  rejects(window(2, 2), {1, 3, 2, 1}, "declared");
  Json badLayout = window(2, 2);
  badLayout.push_back(attr("data_layout", "NC1HWC0"));
  rejects(badLayout, {1, 2, 2, 1}, "data_layout");
}

}  // namespace
