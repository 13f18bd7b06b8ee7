// Composite reader and writer tests: take hand-written composite snippets, the Table 2
// examples and the AKG corpus, and check the graphs the reader gives (shapes, axes,
// roles, in-place outputs) and that write-then-read gives the same graph back.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "frontend/builder.h"
#include "frontend/composite_reader.h"
#include "frontend/composite_writer.h"
#include "support/error.h"
#include "user_reductions.h"

using namespace polyred;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// ---- builders for composite snippets ----

Json tensor(const std::string& name, const std::string& dtype, const Shape& shape) {
  return {{"tensor_name", name}, {"data_type", dtype}, {"shape", shape}, {"format", "DefaultFormat"}};
}
Json constant(const std::string& name, const std::string& dtype, Json value) {
  Json t = tensor(name, dtype, {1});
  t["value"] = std::move(value);
  return t;
}
Json attr(const std::string& name, Json value) {
  return {{"name", name}, {"data_type", "unused"}, {"value", std::move(value)}};
}
// One argument per input, as MindSpore writes every op but AddN.
Json op(const std::string& name, const std::vector<Json>& ins, const Json& out,
        std::vector<Json> attrs = {}) {
  Json args = Json::array();
  for (const Json& in : ins) args.push_back(Json::array({in}));
  return {{"name", name}, {"input_desc", args}, {"output_desc", Json::array({out})},
          {"attr", attrs.empty() ? Json(nullptr) : Json(attrs)}};
}
Json composite(const std::vector<Json>& inputs, const std::vector<Json>& ops,
               const std::vector<Json>& outputs) {
  Json args = Json::array();
  for (const Json& in : inputs) args.push_back(Json::array({in}));
  return {{"op", "snippet"}, {"input_desc", args}, {"op_desc", ops}, {"output_desc", outputs}};
}
Graph parse(const Json& doc) { return parseComposite(doc.dump(), "snippet.json"); }

// value() throws, failing the test, if the name is absent.
TensorId idOf(const Graph& g, const std::string& name) { return g.findTensor(name).value(); }

const Node& producerOf(const Graph& g, const std::string& name) {
  const Node* n = g.producer(idOf(g, name));
  if (!n) throw std::runtime_error("tensor '" + name + "' has no producer");
  return *n;
}

Json reduce(const std::string& name, const Json& in, const Json& out, Json axis, bool keepDims) {
  return op(name, {in}, out, {attr("axis", std::move(axis)), attr("keep_dims", keepDims)});
}

}  // namespace

// ---- reductions ----

TEST(CompositeReader, NegativeIntAxisWithKeepDims) {
  Json x = tensor("x", "float32", {4, 5, 6});
  Json y = tensor("y", "float32", {4, 5, 1});
  Graph g = parse(composite({x}, {reduce("ReduceMax", x, y, -1, true)}, {y}));
  const Node& n = producerOf(g, "y");
  EXPECT_EQ(n.kind, OpKind::Reduce);
  EXPECT_EQ(n.axes, (std::vector<int64_t>{2}));
  EXPECT_TRUE(n.keepDims);
  EXPECT_EQ(n.reduction->name, "max");
  EXPECT_EQ(n.name, "ReduceMax #0");
}

TEST(CompositeReader, AxisListIsNormalized) {
  Json x = tensor("x", "float32", {2, 3, 4});
  Json y = tensor("y", "float32", {4});
  Graph g = parse(composite({x}, {reduce("ReduceSum", x, y, {1, -3, 0}, false)}, {y}));
  EXPECT_EQ(producerOf(g, "y").axes, (std::vector<int64_t>{0, 1}));
}

TEST(CompositeReader, EmptyOrMissingAxisReducesEveryAxis) {
  Json x = tensor("x", "int32", {4, 5});
  Json y = tensor("y", "int32", {1, 1});
  Graph g = parse(composite({x}, {reduce("ReduceMin", x, y, Json::array(), true)}, {y}));
  EXPECT_EQ(producerOf(g, "y").axes, (std::vector<int64_t>{0, 1}));

  Json z = tensor("z", "int32", {});
  Graph h = parse(composite({x}, {op("ReduceProd", {x}, z)}, {z}));  // no attrs at all
  const Node& n = producerOf(h, "z");
  EXPECT_EQ(n.axes, (std::vector<int64_t>{0, 1}));
  EXPECT_FALSE(n.keepDims);
  EXPECT_EQ(n.reduction->name, "prod");
}

// AKG's complex-number files write "attr": {} for an op without attributes: read as
// null is (a reduction without "axis" reduces every axis).
TEST(CompositeReader, EmptyAttrObjectMeansNoAttributes) {
  Json x = tensor("x", "float32", {4, 5});
  Json y = tensor("y", "float32", {4, 5});
  Json z = tensor("z", "float32", {});
  Json add = op("Add", {x, x}, y), sum = op("ReduceSum", {y}, z);
  const std::string withNull = parse(composite({x}, {add, sum}, {z})).toString();
  add["attr"] = sum["attr"] = Json::object();
  const Graph g = parse(composite({x}, {add, sum}, {z}));
  EXPECT_EQ(g.toString(), withNull);
  EXPECT_EQ(producerOf(g, "z").axes, (std::vector<int64_t>{0, 1}));
}

TEST(CompositeReader, ScalarResultDeclaredAsOneBecomesReduceThenReshape) {
  Json x = tensor("x", "float16", {16, 2});
  Json y = tensor("y", "float16", {1});
  Graph g = parse(composite({x}, {reduce("ReduceSum", x, y, {0, 1}, false)}, {y}));
  const Node& reshape = producerOf(g, "y");
  ASSERT_EQ(reshape.kind, OpKind::Reshape);
  const Tensor& scalar = g.tensor(reshape.inputs[0]);
  EXPECT_EQ(scalar.name, "y_rank0");
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(producerOf(g, "y_rank0").kind, OpKind::Reduce);
}

TEST(CompositeReader, ReducingARankZeroTensorIsACopy) {
  Json x = tensor("x", "float32", {});
  Json y = tensor("y", "float32", {});
  Graph g = parse(composite({x}, {reduce("ReduceSum", x, y, Json::array(), false)}, {y}));
  EXPECT_EQ(producerOf(g, "y").kind, OpKind::Cast);
}

TEST(CompositeReader, ReductionUsesInputDTypeAndDeclaredOutputDType) {
  Json x = tensor("x", "float16", {8, 4});
  Json y = tensor("y", "float32", {4});
  Graph g = parse(composite({x}, {reduce("ReduceSum", x, y, 0, false)}, {y}));
  const Node& n = producerOf(g, "y");
  EXPECT_EQ(n.reduction->accType, DType::Float32);
  EXPECT_EQ(g.tensor(n.output).dtype, DType::Float32);

  Json b = tensor("b", "bool", {8});
  Json any = tensor("any", "bool", {1});
  Graph h = parse(composite({b}, {reduce("ReduceAny", b, any, {0}, false)}, {any}));
  EXPECT_EQ(producerOf(h, "any_rank0").reduction->builtin(), BuiltinCombiner::Or);
}

// ---- constants and inputs ----

TEST(CompositeReader, ConstantsAtTopLevelAndInline) {
  Json x = tensor("x", "float32", {3});
  Json half = constant("half", "float32", 0.5);
  Json three = constant("three", "int32", Json::array({3}));
  Json i = tensor("i", "int32", {3});
  Json a = tensor("a", "float32", {3}), b = tensor("b", "int32", {3}), c = tensor("c", "float32", {3});
  Graph g = parse(composite({x, half, i},
                            {op("Mul", {x, half}, a), op("Add", {i, three}, b),
                             op("Mul", {a, constant("half", "float32", 0.5)}, c)},
                            {b, c}));
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.tensor(g.inputs[0]).name, "x");
  EXPECT_EQ(g.tensor(g.inputs[1]).name, "i");
  const Tensor& h = g.tensor(idOf(g, "half"));
  EXPECT_EQ(h.role, TensorRole::Constant);
  EXPECT_EQ(h.constant->f, 0.5);
  const Tensor& t = g.tensor(idOf(g, "three"));
  EXPECT_EQ(t.role, TensorRole::Constant);
  EXPECT_EQ(t.constant->type, DType::Int32);
  EXPECT_EQ(t.constant->i, 3);
  // "half" given again inline with the same value is the same tensor.
  EXPECT_EQ(producerOf(g, "c").inputs[1], idOf(g, "half"));
}

TEST(CompositeReader, ConstantValueIsRoundedToItsDType) {
  Json x = tensor("x", "float16", {2});
  Json y = tensor("y", "float16", {2});
  Graph g = parse(composite({x}, {op("Add", {x, constant("k", "float16", 0.1)}, y)}, {y}));
  EXPECT_EQ(g.tensor(idOf(g, "k")).constant->f, roundToFloatType(0.1, DType::Float16));
}

TEST(CompositeReader, InputsKeepFileOrder) {
  Json a = tensor("input_1", "float16", {2}), b = tensor("input_0", "float16", {16, 2});
  Json y = tensor("y", "float16", {16, 2});
  Graph g = parse(composite({a, b}, {op("Add", {b, a}, y)}, {y}));
  EXPECT_EQ(g.tensor(g.inputs[0]).name, "input_1");
  EXPECT_EQ(g.tensor(g.inputs[1]).name, "input_0");
}

// ---- in-place writes ----

TEST(CompositeReader, AssignOutputAliasesItsDestination) {
  Json acc = tensor("acc", "float32", {8, 1});
  Json x = tensor("x", "float32", {8, 3});
  Json s = tensor("s", "float32", {8, 1});
  Json w = tensor("w", "float32", {8, 1});
  Graph g = parse(composite({x, acc}, {reduce("ReduceSum", x, s, 1, true), op("Assign", {acc, s}, w)},
                            {s, w}));
  ASSERT_EQ(g.outputs.size(), 2u);
  EXPECT_FALSE(g.outputs[0].aliasOfInput);
  EXPECT_EQ(g.outputs[1].aliasOfInput, std::optional(idOf(g, "acc")));
  EXPECT_EQ(producerOf(g, "w").kind, OpKind::Assign);

  // An Assign that output_desc does not list still writes: it is appended.
  Graph h = parse(composite({x, acc}, {reduce("ReduceSum", x, s, 1, true), op("Assign", {acc, s}, w)},
                            {s}));
  ASSERT_EQ(h.outputs.size(), 2u);
  EXPECT_EQ(h.outputs[1].tensor, idOf(h, "w"));
  EXPECT_EQ(h.outputs[1].aliasOfInput, std::optional(idOf(h, "acc")));
}

TEST(CompositeReader, InplaceAssignWritesSecondIntoFirstAndYieldsThird) {
  Json dst = tensor("dst", "float32", {4});
  Json v = tensor("v", "float32", {4});
  Json z = tensor("z", "float32", {4});
  Json out = tensor("out", "float32", {4});
  Json y = tensor("y", "float32", {4});
  Graph g = parse(composite({dst, v, z}, {op("InplaceAssign", {dst, v, z}, out), op("Neg", {out}, y)},
                            {y}));
  const Node& assign = producerOf(g, "out_written");
  EXPECT_EQ(assign.kind, OpKind::Assign);
  EXPECT_EQ(assign.inputs, (std::vector<TensorId>{idOf(g, "dst"), idOf(g, "v")}));
  // The op's result name stands for z.
  EXPECT_EQ(producerOf(g, "y").inputs[0], idOf(g, "z"));
  ASSERT_EQ(g.outputs.size(), 2u);
  EXPECT_EQ(g.outputs[1].tensor, idOf(g, "out_written"));
  EXPECT_EQ(g.outputs[1].aliasOfInput, std::optional(idOf(g, "dst")));
}

// ---- data movement and other ops ----

TEST(CompositeReader, TransposeBroadcastAndReshape) {
  Json x = tensor("x", "float32", {2, 3, 4});
  Json t = tensor("t", "float32", {4, 2, 3});
  Json r = tensor("r", "float32", {12, 2});
  Json b0 = tensor("b0", "float32", {1, 2});
  Json b = tensor("b", "float32", {5, 2});
  Graph g = parse(composite(
      {x, b0},
      {op("Transpose", {x}, t, {attr("perm", {2, 0, 1})}),
       op("Reshape", {t}, r, {attr("shape", {-1, 2})}),
       op("BroadcastTo", {b0}, b, {attr("shape", {5, 2})})},
      {r, b}));
  EXPECT_EQ(producerOf(g, "t").perm, (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(producerOf(g, "r").kind, OpKind::Reshape);
  EXPECT_EQ(g.tensor(idOf(g, "r")).shape, (Shape{12, 2}));
  EXPECT_EQ(producerOf(g, "b").kind, OpKind::BroadcastTo);
}

TEST(CompositeReader, ElementwiseNamesCastSelectAndAddN) {
  Json x = tensor("x", "float16", {4}), y = tensor("y", "float16", {4});
  Json q = tensor("q", "float16", {4}), c = tensor("c", "bool", {4});
  Json f = tensor("f", "float32", {4}), s = tensor("s", "float16", {4});
  Json n = tensor("n", "float16", {4});
  Json addN = op("AddN", {}, n, {attr("n", 3)});
  addN["input_desc"] = Json::array({Json::array({x, y, q})});
  Graph g = parse(composite(
      {x, y},
      {op("RealDiv", {x, y}, q), op("GreaterEqual", {x, q}, c),
       op("Cast", {x}, f, {attr("dst_type", "float32"), attr("is_backed_cast", false)}),
       op("Select", {c, x, y}, s), addN},
      {f, s, n}));
  EXPECT_EQ(producerOf(g, "q").kind, OpKind::Div);
  EXPECT_EQ(producerOf(g, "c").kind, OpKind::GreaterEqual);
  EXPECT_EQ(producerOf(g, "f").kind, OpKind::Cast);
  EXPECT_EQ(producerOf(g, "s").kind, OpKind::Select);
  EXPECT_EQ(producerOf(g, "n").inputs.size(), 3u);
}

// ---- out of scope ----

TEST(CompositeReader, OutOfScopeOpsAndTypesAreUnsupported) {
  Json a = tensor("a", "float16", {4, 4}), m = tensor("m", "float16", {4, 4});
  try {
    parse(composite({a}, {op("MatMul", {a, a}, m)}, {m}));
    FAIL() << "MatMul parsed";
  } catch (const UnsupportedError& e) {
    EXPECT_EQ(e.op(), "MatMul #0");
    EXPECT_NE(e.reason().find("matrix products are outside polyred's scope"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse(composite({a}, {op("Frobnicate", {a}, m)}, {m})), UnsupportedError);
  // A misspelled op gets the name it was probably meant to be.
  auto reasonFor = [&](const std::string& name) {
    try {
      parse(composite({a}, {op(name, {a}, m)}, {m}));
    } catch (const UnsupportedError& e) {
      return e.reason();
    }
    return std::string("accepted");
  };
  EXPECT_NE(reasonFor("Relu").find("did you mean ReLU?"), std::string::npos);
  EXPECT_NE(reasonFor("ReduceSun").find("did you mean ReduceSum?"), std::string::npos);
  EXPECT_NE(reasonFor("ExpandDim").find("did you mean ExpandDims?"), std::string::npos);
  EXPECT_EQ(reasonFor("Frobnicate").find("did you mean"), std::string::npos);
  Json c = tensor("c", "complex128", {4});
  EXPECT_THROW(parse(composite({c}, {}, {c})), UnsupportedError);
  Json fz = tensor("fz", "float16", {4, 4, 16, 16});
  fz["format"] = "FRACTAL_Z";  // blocked layouts other than FRACTAL_NZ (TransData's)
  EXPECT_THROW(parse(composite({fz}, {}, {fz})), UnsupportedError);
  Json nz = tensor("nz", "float16", {4, 4, 16, 16}), sum = tensor("s", "float16", {4, 4, 16, 16});
  nz["format"] = "FRACTAL_NZ";  // readable by TransData only
  EXPECT_THROW(parse(composite({nz}, {op("Add", {nz, nz}, sum)}, {sum})), UnsupportedError);
  // An old-style InplaceAssign placeholder result that is not its third input.
  Json v = tensor("v", "float16", {4, 4}), placeholder = tensor("p", "float16", {1});
  EXPECT_THROW(parse(composite({a, v}, {op("InplaceAssign", {a, v, v}, placeholder,
                                           {attr("fake_output", true)})},
                               {placeholder})),
               UnsupportedError);
}

// ---- files and round trips ----

TEST(CompositeReader, MissingFileIsAnErrorNamingThePath) {
  try {
    readCompositeFile("/nonexistent/k.info");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "/nonexistent/k.info");
  }
}

namespace {

std::vector<fs::path> filesUnder(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    auto ext = e.path().extension();
    if (e.is_regular_file() && (ext == ".info" || ext == ".json")) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void expectRoundTrip(const Graph& g, const std::string& label) {
  Graph back = parseComposite(writeComposite(g), label);
  EXPECT_EQ(back.name, g.name) << label;
  EXPECT_EQ(back.toString(), g.toString()) << label;
}

}  // namespace

TEST(CompositeRoundTrip, Table2Examples) {
  const auto files = filesUnder(fs::path(POLYRED_SOURCE_DIR) / "examples" / "table2");
  ASSERT_EQ(files.size(), 12u);
  for (const fs::path& f : files) expectRoundTrip(readCompositeFile(f.string()), f.string());
}

TEST(CompositeRoundTrip, EveryParseableCorpusFile) {
  ASSERT_TRUE(fs::is_directory(POLYRED_CORPUS_DIR)) << "the corpus belongs in the repository: " << POLYRED_CORPUS_DIR;
  int checked = 0;
  for (const fs::path& f : filesUnder(POLYRED_CORPUS_DIR)) {
    try {
      Graph g = readCompositeFile(f.string());
      expectRoundTrip(g, f.string());
      ++checked;
    } catch (const UnsupportedError&) {
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(CompositeRoundTrip, InplaceAssignAndNonFiniteConstant) {
  Json dst = tensor("dst", "float32", {4}), v = tensor("v", "float32", {4});
  Json z = tensor("z", "float32", {4}), out = tensor("out", "float32", {4});
  Json inf = constant("inf", "float32", "-inf");
  Json m = tensor("m", "float32", {4});
  Graph g = parse(composite({dst, v, z},
                            {op("InplaceAssign", {dst, v, z}, out), op("Maximum", {out, inf}, m)},
                            {m}));
  EXPECT_TRUE(std::isinf(g.tensor(idOf(g, "inf")).constant->f));
  expectRoundTrip(g, "inplace");
}

TEST(CompositeWriter, BuilderInPlaceOutputBecomesAnAssign) {
  GraphBuilder b("acc");
  Value x = b.input("x", DType::Float32, {8, 4});
  Value acc = b.input("acc", DType::Float32, {4});
  b.outputInto(b.reduceSum(x, {0}), acc);
  Graph back = parseComposite(writeComposite(b.build()), "builder");
  ASSERT_EQ(back.outputs.size(), 1u);
  EXPECT_EQ(back.outputs[0].aliasOfInput, std::optional(idOf(back, "acc")));
  EXPECT_EQ(back.producer(back.outputs[0].tensor)->kind, OpKind::Assign);
}

// A user reduction is written as a declaration (tests/composite_user_reduce_test.cc),
// except one accumulating in a type a declaration cannot name.
TEST(CompositeWriter, UserReductionInANarrowAccumulatorIsUnsupported) {
  GraphBuilder b("user");
  Value x = b.input("x", DType::Int8, {8});
  Reduction r = test_support::maxAbsReduction();
  r.accType = DType::Int8;
  r.identity = Scalar::convert(int64_t{0}, DType::Int8);
  b.output(b.reduce(x, r, {0}));
  EXPECT_THROW(writeComposite(b.build()), UnsupportedError);
}
