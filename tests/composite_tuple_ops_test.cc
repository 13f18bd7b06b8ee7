// The composite ops Argmax, Argmin, ArgMaxWithValue and ArgMinWithValue
// (frontend/composite_tuple_ops): their attributes, outputs and defaults, what they
// compute through the reader, and the bad declarations the reader refuses with a
// reason (polyred::Error: exit 2).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "frontend/composite_reader.h"
#include "frontend/composite_writer.h"
#include "interp/reference.h"
#include "support/error.h"

using namespace polyred;
using Json = nlohmann::json;

namespace {

Json desc(const std::string& name, Shape shape, const std::string& dtype) {
  return {{"data_type", dtype}, {"format", "DefaultFormat"}, {"shape", shape}, {"tensor_name", name}};
}

// One op over one input x of `shape` / `dtype`, declaring `outs`.
std::string oneOp(const std::string& op, Shape shape, const std::string& dtype, const std::vector<Json>& outs,
                  const Json& attrs) {
  Json o = {{"name", op}, {"attr", attrs}, {"input_desc", Json::array({Json::array({desc("x", shape, dtype)})})},
            {"output_desc", outs}};
  return Json{{"composite", true},
              {"op", "t"},
              {"input_desc", Json::array({Json::array({desc("x", shape, dtype)})})},
              {"op_desc", Json::array({o})},
              {"output_desc", outs},
              {"platform", "AKG"},
              {"process", "cuda"}}
      .dump();
}

Json attr(const std::string& name, const Json& value) {
  return {{"name", name}, {"value", value}, {"data_type", value.is_string() ? "str" : "int"}};
}

std::string errorOf(const std::string& json) {
  try {
    parseComposite(json, "t.info");
  } catch (const InternalError& e) {
    return std::string("internal error: ") + e.what();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::vector<double> valuesOf(const HostTensor& t) {
  std::vector<double> v;
  for (int64_t k = 0; k < t.size(); ++k) v.push_back(t.get(k).asDouble());
  return v;
}

}  // namespace

TEST(CompositeTupleOps, ArgmaxDefaultsToTheLastAxisAndInt32) {
  Graph g = parseComposite(oneOp("Argmax", {2, 3}, "float32", {desc("i", {2}, "int32")}, Json::array()), "t.info");
  std::vector<HostTensor> out =
      evaluateReference(g, {HostTensor::fromValues(DType::Float32, {2, 3}, {1, 5, 5, 9, 2, 9})});
  EXPECT_EQ(valuesOf(out[0]), (std::vector<double>{1, 0}));
}

TEST(CompositeTupleOps, ArgminAlongAxisZeroWithInt64) {
  Graph g = parseComposite(oneOp("Argmin", {2, 3}, "int8", {desc("i", {3}, "int64")},
                                 Json::array({attr("axis", 0), attr("output_type", "int64")})),
                           "t.info");
  std::vector<HostTensor> out = evaluateReference(g, {HostTensor::fromValues(DType::Int8, {2, 3}, {1, 5, -3, 1, 2, 9})});
  EXPECT_EQ(out[0].dtype, DType::Int64);
  EXPECT_EQ(valuesOf(out[0]), (std::vector<double>{0, 1, 0}));
}

TEST(CompositeTupleOps, WithValueGivesIndexThenValue) {
  // Default axis 0; keep_dims; a vector declared [1].
  Graph g = parseComposite(oneOp("ArgMaxWithValue", {2, 2}, "float16", {desc("i", {1, 2}, "int32"), desc("v", {1, 2}, "float16")},
                                 Json::array({attr("keep_dims", true)})),
                           "t.info");
  std::vector<HostTensor> out = evaluateReference(g, {HostTensor::fromValues(DType::Float16, {2, 2}, {1, 7, 3, 7})});
  EXPECT_EQ(valuesOf(out[0]), (std::vector<double>{1, 0}));
  EXPECT_EQ(valuesOf(out[1]), (std::vector<double>{3, 7}));
  Graph v = parseComposite(oneOp("ArgMinWithValue", {4}, "float32", {desc("i", {1}, "int32"), desc("v", {1}, "float32")},
                                 Json::array()),
                           "t.info");
  out = evaluateReference(v, {HostTensor::fromValues(DType::Float32, {4}, {4, -2, 8, -2})});
  EXPECT_EQ(valuesOf(out[0]), (std::vector<double>{1}));
  EXPECT_EQ(valuesOf(out[1]), (std::vector<double>{-2}));
}

TEST(CompositeTupleOps, BadDeclarationsAreRefusedWithAReason) {
  const Json i2 = desc("i", {2}, "int32");
  struct Case {
    std::string json, reason;
  };
  const Case cases[] = {
      {oneOp("Argmax", {2, 3}, "float32", {i2}, Json::array({attr("axis", 2)})), "out of range"},
      {oneOp("Argmax", {2, 3}, "float32", {i2}, Json::array({attr("axis", -3)})), "out of range"},
      {oneOp("Argmax", {2, 3}, "float32", {desc("i", {2}, "float32")}, Json::array({attr("output_type", "float32")})),
       "output_type must be int32 or int64"},
      {oneOp("Argmax", {2, 3}, "float32", {desc("i", {2}, "int64")}, Json::array()), "declared int64"},
      {oneOp("Argmax", {2, 3}, "float32", {desc("i", {3}, "int32")}, Json::array()), "declared [3]"},
      {oneOp("Argmax", {2, 3}, "float32", {i2, i2}, Json::array()), "must have 1 output"},
      {oneOp("ArgMaxWithValue", {2, 3}, "float32", {desc("i", {3}, "int32")}, Json::array()), "must have 2 output"},
      {oneOp("ArgMaxWithValue", {2, 3}, "float32", {desc("i", {3}, "int32"), desc("v", {3}, "float16")}, Json::array()),
       "declared float16"},
      {oneOp("ArgMinWithValue", {2, 3}, "float32", {desc("i", {3}, "int32"), desc("v", {3}, "float32")},
             Json::array({attr("output_type", "int32")})),
       "no output_type"},
      {oneOp("Argmin", {2, 3}, "float32", {i2}, Json::array({attr("keep_dims", true)})), "no keep_dims"},
      {oneOp("Argmin", {2, 3}, "float32", {i2}, Json::array({attr("axis", "last")})), "axis"},
      {oneOp("Argmax", {}, "float32", {desc("i", {}, "int32")}, Json::array()), "rank 1 or more"},
  };
  for (const Case& c : cases) {
    std::string e = errorOf(c.json);
    EXPECT_NE(e.find(c.reason), std::string::npos) << "want \"" << c.reason << "\", got \"" << e << "\"\n" << c.json;
    EXPECT_EQ(e.find("internal error"), std::string::npos) << e;
  }
}

TEST(CompositeTupleOps, TheWriterRefusesTupleReductions) {
  Graph g = parseComposite(oneOp("Argmax", {2, 3}, "float32", {desc("i", {2}, "int32")}, Json::array()), "t.info");
  EXPECT_THROW(writeComposite(g), UnsupportedError);
}
