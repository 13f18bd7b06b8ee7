// Scalar user-defined reductions in composite JSON: declarations under "reductions"
// used by UserReduce ops (frontend/composite_declarations), what they compute through
// the reader and the lowered kernels, the writer's declarations (a graph written and
// read back computes the same bits), and the malformed declarations the reader refuses
// with a reason (polyred::Error: exit 2).
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include <nlohmann/json.hpp>

#include "composite_test_helpers.h"
#include "frontend/builder.h"
#include "frontend/composite_reader.h"
#include "frontend/composite_writer.h"
#include "interp/reference.h"
#include "lowering_helpers.h"
#include "support/error.h"
#include "user_reductions.h"

using namespace polyred;
using test_support::desc;
using test_support::errorOf;
using test_support::valuesOf;
using Json = nlohmann::json;

namespace {

Json maxAbsDecl() {
  return {{"name", "max_abs"},
          {"data_type", "float32"},
          {"identity", 0},
          {"combine", Json::array({"Maximum", Json::array({"Abs", "a"}), Json::array({"Abs", "b"})})}};
}

// x float32 [2, 3] reduced over axis 1 by the UserReduce `use`, with `decls` under "reductions".
std::string userReduceDoc(const Json& decls, const std::string& use = "max_abs", const std::string& out = "float32") {
  Json attrs = Json::array({{{"name", "reduction"}, {"data_type", "str"}, {"value", use}},
                            {{"name", "axis"}, {"data_type", "listInt"}, {"value", {1}}}});
  Json op = {{"name", "UserReduce"},
             {"attr", attrs},
             {"input_desc", Json::array({Json::array({desc("x", {2, 3}, "float32")})})},
             {"output_desc", Json::array({desc("y", {2}, out)})}};
  return Json{{"composite", true},
              {"op", "t"},
              {"reductions", decls},
              {"input_desc", Json::array({Json::array({desc("x", {2, 3}, "float32")})})},
              {"op_desc", Json::array({op})},
              {"output_desc", Json::array({desc("y", {2}, out)})}}
      .dump();
}

std::string declWith(const std::function<void(Json&)>& change) {
  Json d = maxAbsDecl();
  change(d);
  return userReduceDoc(Json::array({d}));
}

const std::vector<HostTensor> kRows = {HostTensor::fromValues(DType::Float32, {2, 3}, {1, -7, 3, -2, 0, 1.5})};

}  // namespace

TEST(CompositeUserReduce, ADeclaredReductionComputesItsCombiner) {
  const Graph g = parseComposite(userReduceDoc(Json::array({maxAbsDecl()})), "t.info");
  const std::vector<HostTensor> got = evaluateReference(g, kRows);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(valuesOf(got[0]), (std::vector<double>{7, 2}));
  const Node* reduce = nullptr;
  for (const Node& n : g.nodes)
    if (n.kind == OpKind::Reduce) reduce = &n;
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(reduce->reduction->builtin(), BuiltinCombiner::None);
  EXPECT_EQ(reduce->reduction->accType, DType::Float32);
}

// The bundled example (float16 input squared, accumulated in float32): lowered kernels
// on the CPU executor at every point, and the CUDA through NVRTC.
TEST(CompositeUserReduce, TheExampleFileLowersAndCompiles) {
  const Graph g = readCompositeFile(std::string(POLYRED_SOURCE_DIR) + "/tests/data/user_reduce/max_abs_rows.json");
  test_support::expectMatchesOnCpuAndCompiles(compileGraph(g, CompileOptions{}), /*seed=*/3);
}

// Built with the builder, written, read back: the same bits. Two reductions of one name
// but different accumulators are declared twice under distinct names; a built-in
// combiner with an identity the reader would not pick (max from 0) is declared too.
TEST(CompositeUserReduce, TheWriterDeclaresScalarReductions) {
  GraphBuilder b("declared");
  Value x = b.input("x", DType::Float32, {2, 3});
  b.output(b.reduce(x, test_support::maxAbsReduction(), {1}));
  Reduction wide = test_support::maxAbsReduction();
  wide.accType = DType::Float64;
  wide.identity = Scalar::ofFloat(DType::Float64, 0);
  b.output(b.reduce(x, wide, {0}, false, DType::Float64));
  b.output(b.reduce(x, test_support::maxAbsReduction(), {0, 1}));
  Reduction maxFromZero = Reduction::max(DType::Float32);
  maxFromZero.identity = Scalar::ofFloat(DType::Float32, 0);
  b.output(b.reduce(x, maxFromZero, {1}));
  const Graph g = b.build();

  const std::string text = writeComposite(g);
  const Json doc = Json::parse(text);
  ASSERT_TRUE(doc.contains("reductions"));
  EXPECT_EQ(doc["reductions"].size(), 3u) << text;  // max_abs (f32), max_abs_2 (f64), max
  EXPECT_EQ(doc["reductions"][1]["name"], "max_abs_2");
  const Graph back = parseComposite(text, "written.json");
  const std::vector<HostTensor> want = evaluateReference(g, kRows), got = evaluateReference(back, kRows);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(got[k].bytes, want[k].bytes) << "output " << k;
  EXPECT_EQ(valuesOf(got[3]), (std::vector<double>{3, 1.5}));
}

TEST(CompositeUserReduce, MalformedDeclarationsAreRefusedWithAReason) {
  struct Case {
    std::string json, reason;
  };
  const Case cases[] = {
      {declWith([](Json& d) { d.erase("name"); }), "needs \"name\""},
      {declWith([](Json& d) { d.erase("identity"); }), "needs \"identity\""},
      {declWith([](Json& d) { d["combine"] = Json::array({"Frobnicate", "a", "b"}); }), "not an elementwise op"},
      {declWith([](Json& d) { d["combine"] = Json::array({"Add", "a", "c"}); }), "is not a or b"},
      {declWith([](Json& d) { d["combine"] = Json::array({"Add", "a0", "b"}); }), "is not a or b"},
      {declWith([](Json& d) { d["combine"] = Json::array({"Neg", "a", "b"}); }), "Neg with 2 operands"},
      {declWith([](Json& d) { d["combine"] = Json::array({"Add", "a"}); }), "Add with 1 operands"},
      {declWith([](Json& d) { d["data_type"] = "float16"; }), "accumulates in int32, int64, float32 or float64"},
      {declWith([](Json& d) { d["data_type"] = "float128"; }), "unknown data type"},
      {declWith([](Json& d) { d["identity"] = "abc"; }), "identity must be a number"},
      {declWith([](Json& d) { d["data_type"] = "int32"; d["combine"] = Json::array({"Select", Json::array({"IsNan", "a"}), "a", "b"}); }),
       "need a float data_type"},
      {declWith([](Json& d) { d["combine"] = Json::array({"Sub", "a", "b"}); }), "not neutral on the left"},
      {declWith([](Json& d) { d["combine"] = Json::array({"Add", "a", Json::array({"Mul", "b", "b"})}); }),
       "not neutral on the left"},
      {declWith([](Json& d) {  // the first nonzero value: associative, 0 neutral, not commutative
         d["combine"] = Json::array({"Select", Json::array({"NotEqual", "a", {{"value", 0}, {"data_type", "float32"}}}), "a", "b"});
       }),
       "commutative"},
      {userReduceDoc(Json::array({maxAbsDecl(), maxAbsDecl()})), "declared twice"},
      {userReduceDoc(Json::array({maxAbsDecl()}), "median"), "no reduction 'median' is declared"},
      {userReduceDoc(Json::object()), "must be a list"},
      {userReduceDoc(Json::array({maxAbsDecl()}), "max_abs", "float64"), "cannot produce a float64"},
  };
  for (const Case& c : cases) {
    std::string e = errorOf(c.json);
    EXPECT_NE(e.find(c.reason), std::string::npos) << "want \"" << c.reason << "\", got \"" << e << "\"";
    EXPECT_EQ(e.find("internal error"), std::string::npos) << e;
  }
}
