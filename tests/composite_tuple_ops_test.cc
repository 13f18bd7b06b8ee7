// The composite ops Argmax, Argmin, ArgMaxWithValue and ArgMinWithValue
// (frontend/composite_tuple_ops): their attributes, outputs and defaults, what they
// compute through the reader, and the bad declarations the reader refuses with a
// reason (polyred::Error: exit 2); user-defined tuple reductions declared under
// "tuple_reductions" and used by TupleReduce (frontend/composite_declarations).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>

#include <nlohmann/json.hpp>

#include "composite_test_helpers.h"
#include "frontend/builder.h"
#include "frontend/composite_reader.h"
#include "frontend/composite_writer.h"
#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "interp/reference.h"
#include "support/error.h"

using namespace polyred;
using test_support::desc;
using test_support::errorOf;
using test_support::valuesOf;
using Json = nlohmann::json;

namespace {

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

namespace {

// "sum and count": fields (sum, count), results sum / count (a mean) and count.
Json meanDecl() {
  return Json::parse(R"({"name": "mean", "inputs": ["float32"], "commutative": true,
    "fields": [
      {"name": "sum", "data_type": "float64", "identity": 0, "lift": "in0", "combine": ["Add", "a0", "b0"]},
      {"name": "count", "data_type": "int64", "identity": 0, "lift": {"value": 1, "data_type": "int64"},
       "combine": ["Add", "a1", "b1"]}],
    "results": [{"name": "mean", "value": ["RealDiv", "a0", "a1"]}, {"name": "count", "value": "a1"}]})");
}

// A document declaring `decls` with one TupleReduce of x[2, 3] (float32) over `axis`.
std::string tupleDoc(const Json& decls, const std::string& reduction, const std::vector<Json>& outs,
                     const std::string& xType = "float32", const Json& axis = Json::array({1})) {
  Json op = {{"name", "TupleReduce"},
             {"attr", Json::array({attr("reduction", reduction), {{"name", "axis"}, {"value", axis}}})},
             {"input_desc", Json::array({Json::array({desc("x", {2, 3}, xType)})})},
             {"output_desc", outs}};
  return Json{{"composite", true},          {"op", "t"},
              {"tuple_reductions", decls},  {"input_desc", Json::array({Json::array({desc("x", {2, 3}, xType)})})},
              {"op_desc", Json::array({op})}, {"output_desc", outs}}
      .dump();
}

// The outputs of the "mean" declaration's two results over x[2, 3].
std::vector<Json> meanOutputs() { return {desc("m", {2}, "float64"), desc("n", {2}, "int64")}; }

// A document using the "mean" declaration after `change` rewrote it.
std::string meanDocWith(const std::function<void(Json&)>& change) {
  Json d = meanDecl();
  change(d);
  return tupleDoc(Json::array({d}), "mean", meanOutputs());
}

}  // namespace

TEST(CompositeTupleDecl, AUserTupleComputesItsResults) {
  const std::vector<Json> outs = meanOutputs();
  Graph g = parseComposite(tupleDoc(Json::array({meanDecl()}), "mean", outs), "t.info");
  std::vector<HostTensor> out = evaluateReference(g, {HostTensor::fromValues(DType::Float32, {2, 3}, {1, 2, 6, -1, 0, 4})});
  EXPECT_EQ(valuesOf(out[0]), (std::vector<double>{3, 1}));
  EXPECT_EQ(valuesOf(out[1]), (std::vector<double>{3, 3}));
}

TEST(CompositeTupleDecl, MalformedDeclarationsAreRefusedWithAReason) {
  const std::vector<Json> outs = meanOutputs();
  const auto with = meanDocWith;
  struct Case {
    std::string json, reason;
  };
  const Case cases[] = {
      {with([](Json& d) { d.erase("commutative"); }), "needs \"commutative\""},
      {with([](Json& d) { d["fields"][0]["combine"] = Json::array({"Frobnicate", "a0", "b0"}); }), "not an elementwise op"},
      {with([](Json& d) { d["fields"][0]["combine"] = Json::array({"Add", "c0", "b0"}); }), "is not a<k>, b<k> or in<k>"},
      {with([](Json& d) { d["fields"][0]["combine"] = Json::array({"Add", "in0", "b0"}); }), "not available here"},
      {with([](Json& d) { d["results"][0]["value"] = "b0"; }), "not available here"},
      {with([](Json& d) { d["fields"][1]["combine"] = Json::array({"Add", "a1", "b7"}); }), "missing field"},
      {with([](Json& d) { d["fields"][0]["data_type"] = "float16"; }), "tuple fields are bool"},
      {with([](Json& d) { d["fields"][0]["data_type"] = "float128"; }), "unknown data type"},
      {with([](Json& d) { d["fields"][1]["identity"] = "inf"; }), "must be a number"},
      {with([](Json& d) { d["fields"][1]["combine"] = Json::array({"IsNan", "a1"}); }), "needs a float operand"},
      {with([](Json& d) { d["fields"][0]["combine"] = Json::array({"Neg", "a0", "b0"}); }), "Neg with 2 operands"},
      {with([](Json& d) { d["inputs"] = "float32"; }), "list of data types"},
      {with([](Json& d) { d.erase("results"); }), "needs \"results\""},
      {tupleDoc(Json::array({meanDecl(), meanDecl()}), "mean", outs), "declared twice"},
      {tupleDoc(Json::array({meanDecl()}), "median", outs), "no tuple reduction 'median' is declared"},
      {tupleDoc(Json::array({meanDecl()}), "mean", outs, "float16"), "takes float32"},
      {tupleDoc(Json::array({meanDecl()}), "mean", {outs[0]}), "must have 2 output(s)"},
      {tupleDoc(Json::array({meanDecl()}), "mean", {outs[1], outs[0]}), "computes float64"},
      {tupleDoc(Json::array({meanDecl()}), "mean", outs, "float32", Json::array({4})), "out of range"},
      {tupleDoc(Json::object(), "mean", outs), "must be a list"},
  };
  for (const Case& c : cases) {
    std::string e = errorOf(c.json);
    EXPECT_NE(e.find(c.reason), std::string::npos) << "want \"" << c.reason << "\", got \"" << e << "\"";
    EXPECT_EQ(e.find("internal error"), std::string::npos) << e;
  }
}

// Declarations whose laws the samples contradict (ir/reduction_laws.h): a kernel
// would merge partials in an order or grouping the reference never uses.
TEST(CompositeTupleDecl, ClaimsTheSamplesContradictAreRefused) {
  const std::vector<Json> outs = meanOutputs();
  const auto with = meanDocWith;
  const Json half = {{"value", 0.5}, {"data_type", "float64"}};
  // The affine map x -> m x + c composed: associative, identity (1, 0), not commutative.
  const Json affine = Json::parse(R"({"name": "affine", "inputs": ["float32"], "commutative": true,
    "fields": [
      {"name": "m", "data_type": "float64", "identity": 1, "lift": "in0", "combine": ["Mul", "a0", "b0"]},
      {"name": "c", "data_type": "float64", "identity": 0, "lift": {"value": 1, "data_type": "float64"},
       "combine": ["Add", ["Mul", "a1", "b0"], "b1"]}],
    "results": [{"name": "m", "value": "a0"}]})");
  struct Case {
    std::string json, reason;
  };
  const Case cases[] = {
      {with([](Json& d) { d["fields"][0]["combine"] = Json::array({"Sub", "a0", "b0"}); }),
       "its identity (0, 0) is not neutral on the left"},
      {with([&](Json& d) { d["fields"][0]["combine"] = Json::array({"Mul", Json::array({"Add", "a0", "b0"}), half}); }),
       "is not neutral"},
      {with([](Json& d) { d["fields"][0]["identity"] = 1; }), "identity (1, 0) is not neutral"},
      {with([](Json& d) {
         d["fields"][0]["combine"] = Json::array({"Add", Json::array({"Add", "a0", "b0"}),
                                                  Json::array({"Mul", "a0", Json::array({"Mul", "b0", "b0"})})});
       }),
       "is not associative"},
      {tupleDoc(Json::array({affine}), "affine", {desc("m", {2}, "float64")}),
       "is not commutative (it is declared commutative)"},
  };
  for (const Case& c : cases) {
    std::string e = errorOf(c.json);
    EXPECT_NE(e.find(c.reason), std::string::npos) << "want \"" << c.reason << "\", got \"" << e << "\"";
    EXPECT_NE(e.find("tuple_reductions[0]"), std::string::npos) << e;  // the declaration is named
  }
  // Declared ordered, the affine composition is accepted.
  Json ordered = affine;
  ordered["commutative"] = false;
  EXPECT_NO_THROW(parseComposite(tupleDoc(Json::array({ordered}), "affine", {desc("m", {2}, "float64")}), "t.info"));
}

TEST(CompositeTupleDecl, AnOrderedTupleIsComputedAndLowered) {
  // "last": the later value wins when it is present.
  Json last = Json::parse(R"({"name": "last", "inputs": ["float32"], "commutative": false,
    "fields": [
      {"name": "seen", "data_type": "bool", "identity": false, "lift": {"value": true, "data_type": "bool"},
       "combine": ["LogicalOr", "a0", "b0"]},
      {"name": "value", "data_type": "float32", "identity": 0, "lift": "in0", "combine": ["Select", "b0", "b1", "a1"]}],
    "results": [{"name": "last", "value": "a1"}]})");
  Graph g = parseComposite(tupleDoc(Json::array({last}), "last", {desc("l", {2}, "float32")}), "t.info");
  std::vector<HostTensor> out = evaluateReference(g, {HostTensor::fromValues(DType::Float32, {2, 3}, {1, 2, 6, -1, 0, 4})});
  EXPECT_EQ(valuesOf(out[0]), (std::vector<double>{6, 4}));
  CompiledGraph c = compileGraph(g, CompileOptions{});  // contiguous chunks, in-order trees
  EXPECT_GT(c.kernels.at(0).binding.chunk, 0);
  for (bool deterministic : {false, true}) EXPECT_TRUE(checkOnCpu(c, 3, 0, deterministic).ok);
}

// The writer gives tuple reductions back as TupleReduce ops with their declarations:
// what it writes reads back to a graph that computes the same outputs, and writing that
// again gives the same text.
TEST(CompositeTupleOps, TheWriterWritesTupleReductionsAsDeclarations) {
  const std::vector<double> values = {1, 7, -2, 7, 0.5, std::nan(""), 3, 3, -1, 9, 9, 2};
  auto inputsFor = [&](const Graph& g) {
    std::vector<HostTensor> in;
    for (TensorId id : g.inputs) {
      const Tensor& t = g.tensor(id);
      std::vector<double> v(static_cast<size_t>(numElements(t.shape)));
      for (size_t k = 0; k < v.size(); ++k) v[k] = values[k % values.size()] + static_cast<double>(k / values.size());
      in.push_back(HostTensor::fromValues(t.dtype, t.shape, v));
    }
    return in;
  };
  GraphBuilder b("stats");
  Value x = b.input("x", DType::Float16, {4, 6});
  b.output(b.argmax(x, 1, DType::Int64));                         // the index only, int64 carried in int32
  auto [index, value] = b.argminWithValue(x, 0, DType::Int32, true);
  b.output(index);
  b.output(value);
  auto [var, mean] = b.varMean(b.cast(x, DType::Float32), {0, 1});  // Welford, over every axis
  b.output(var);
  b.output(mean);
  b.output(b.logSumExp(x, {1}));
  const Graph g = b.build();
  const std::string text = writeComposite(g);
  EXPECT_NE(text.find("\"tuple_reductions\""), std::string::npos);
  const Graph back = parseComposite(text, "written.json");
  ASSERT_EQ(back.outputs.size(), g.outputs.size());
  const std::vector<HostTensor> want = evaluateReference(g, inputsFor(g)), got = evaluateReference(back, inputsFor(back));
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(got[k].dtype, want[k].dtype) << k;
    EXPECT_EQ(got[k].shape, want[k].shape) << k;
    EXPECT_EQ(got[k].bytes, want[k].bytes) << "output " << k;
  }
  EXPECT_EQ(writeComposite(back), writeComposite(parseComposite(writeComposite(back), "again.json")));

  // A declared tuple whose results are all used comes back as the same graph.
  const Graph declared = parseComposite(tupleDoc(Json::array({meanDecl()}), "mean", meanOutputs()), "t.info");
  EXPECT_EQ(parseComposite(writeComposite(declared), "t2.info").toString(), declared.toString());
}

// Every tuple-reduction file of the test data, written and read back, computes what it
// did (the reference on the same inputs, bit for bit).
TEST(CompositeTupleOps, TheTupleFilesSurviveTheWriter) {
  namespace fs = std::filesystem;
  int files = 0;
  for (const auto& e : fs::directory_iterator(fs::path(POLYRED_SOURCE_DIR) / "tests" / "data" / "tuple")) {
    SCOPED_TRACE(e.path().string());
    const Graph g = readCompositeFile(e.path().string());
    const Graph back = parseComposite(writeComposite(g), "written.json");
    std::vector<HostTensor> in;
    for (TensorId id : g.inputs) {
      const Tensor& t = g.tensor(id);
      std::vector<double> v(static_cast<size_t>(numElements(t.shape)));
      for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<double>((k * 7919) % 23) - 11;  // ties too
      in.push_back(HostTensor::fromValues(t.dtype, t.shape, v));
    }
    const std::vector<HostTensor> want = evaluateReference(g, in), got = evaluateReference(back, in);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(got[k].bytes, want[k].bytes) << "output " << k;
    ++files;
  }
  EXPECT_GE(files, 7);
}

// Two nodes of one result of one tuple over the same input each get an output.
TEST(CompositeTupleOps, TheWriterWritesARepeatedResultToo) {
  const Graph declared = parseComposite(tupleDoc(Json::array({meanDecl()}), "mean", meanOutputs()), "t.info");
  std::shared_ptr<const TupleReduction> mean;
  for (const Node& n : declared.nodes)
    if (n.reduction && n.reduction->isTuple()) mean = n.reduction->tuple;
  ASSERT_TRUE(mean);
  GraphBuilder b("twice");
  Value x = b.input("x", DType::Float32, {2, 3});
  b.output(b.reduceTuple({x}, mean, 0, {1}, false, DType::Float64));
  b.output(b.reduceTuple({x}, mean, 0, {1}, false, DType::Float64));
  const Graph g = b.build();
  const Graph back = parseComposite(writeComposite(g), "twice.json");
  const std::vector<HostTensor> in = {HostTensor::fromValues(DType::Float32, {2, 3}, {1, 2, 6, -1, 0, 4})};
  const std::vector<HostTensor> got = evaluateReference(back, in);
  ASSERT_EQ(got.size(), 2u);
  for (const HostTensor& t : got) EXPECT_EQ(valuesOf(t), (std::vector<double>{3, 1}));
}
