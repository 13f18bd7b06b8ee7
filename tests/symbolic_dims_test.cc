// Symbolic dimensions (ir/symbolic_dims.h, driver/symbolic_kernels.h): graphs whose
// rows are a size symbol compile once, and the one compiled program runs on the CPU
// executor at many sizes -- 0, 1, primes, sizes off every vector and block boundary,
// and random ones from a fixed seed -- each compared with the reference of the graph
// at that size. Also: the symbol is a kernel parameter of the emitted CUDA, and what
// cannot be symbolic yet is refused with the reason.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "frontend/composite_reader.h"
#include "ir/symbolic_dims.h"
#include "support/error.h"

namespace polyred {
namespace {

// 0 and 1 rows, primes, sizes around warps, vectors and row tiles, and random ones.
std::vector<int64_t> sizesToTry() {
  std::vector<int64_t> sizes = {0, 1, 2, 3, 7, 31, 32, 33, 127, 255, 257, 1000};
  std::mt19937_64 rng(20261207);
  for (int k = 0; k < 6; ++k) sizes.push_back(std::uniform_int_distribution<int64_t>(1, 700)(rng));
  return sizes;
}

// Layer norm over the last axis of [S, H]: mean, variance, normalized * gamma + beta.
Graph layerNorm(int64_t hidden) {
  GraphBuilder b("sym_layer_norm");
  Value x = b.symbolicInput("x", DType::Float32, {"S", hidden});
  Value gamma = b.input("gamma", DType::Float32, {hidden});
  Value beta = b.input("beta", DType::Float32, {hidden});
  Value n = b.constant(Scalar::ofFloat(DType::Float32, static_cast<double>(hidden)));
  Value mean = b.binary(OpKind::Div, b.reduceSum(x, {1}, true), n);
  Value centered = b.sub(x, mean);
  Value var = b.binary(OpKind::Div, b.reduceSum(b.mul(centered, centered), {1}, true), n);
  Value eps = b.constant(Scalar::ofFloat(DType::Float32, 1e-5));
  Value inv = b.unary(OpKind::Rsqrt, b.add(var, eps));
  b.output(b.add(b.mul(b.mul(centered, inv), gamma), beta));
  return b.build();
}

// Softmax over the vocabulary of [B, S, V] rows, B constant: rows = B * S.
Graph softmax(int64_t batch, int64_t vocab) {
  GraphBuilder b("sym_softmax");
  Value x = b.symbolicInput("x", DType::Float32, {batch, "S", vocab});
  Value e = b.unary(OpKind::Exp, b.sub(x, b.reduceMax(x, {2}, true)));
  b.output(b.binary(OpKind::Div, e, b.reduceSum(e, {2}, true)));
  return b.build();
}

// RMSNorm-shaped x-reduce in float16 with a float32 accumulator, and the row sums out.
Graph rmsNorm(int64_t hidden) {
  GraphBuilder b("sym_rms_norm");
  Value x16 = b.symbolicInput("x", DType::Float16, {"T", hidden});
  Value w = b.input("w", DType::Float16, {hidden});
  Value x = b.cast(x16, DType::Float32);
  Value ms = b.binary(OpKind::Div, b.reduceSum(b.mul(x, x), {1}, true),
                      b.constant(Scalar::ofFloat(DType::Float32, static_cast<double>(hidden))));
  Value r = b.unary(OpKind::Rsqrt, b.add(ms, b.constant(Scalar::ofFloat(DType::Float32, 1e-6))));
  b.output(b.mul(b.cast(b.mul(x, r), DType::Float16), w));
  return b.build();
}

// Elementwise over [S, 12, 64] with a bias broadcast along the rows and a reshape that
// merges the symbol with the constants into one axis.
Graph elementwise() {
  GraphBuilder b("sym_elementwise");
  Value x = b.symbolicInput("x", DType::Float32, {"S", 12, 64});
  Value bias = b.input("bias", DType::Float32, {12, 64});
  Value y = b.unary(OpKind::Tanh, b.add(x, bias));
  b.output(b.reshape(y, {b.symbolSize("S") * 12, 64}));
  return b.build();
}

// Layer norm of [B, S, H] rows, then a softmax of the normalized rows seen as [B*S, H]:
// two kernels, the first's output a temporary of B*S*H elements between them.
Graph normThenSoftmax(int64_t batch, int64_t hidden) {
  GraphBuilder b("sym_norm_then_softmax");
  Value x = b.symbolicInput("x", DType::Float32, {batch, "S", hidden});
  Value n = b.constant(Scalar::ofFloat(DType::Float32, static_cast<double>(hidden)));
  Value centered = b.sub(x, b.binary(OpKind::Div, b.reduceSum(x, {2}, true), n));
  Value var = b.binary(OpKind::Div, b.reduceSum(b.mul(centered, centered), {2}, true), n);
  Value y = b.mul(centered, b.unary(OpKind::Rsqrt, b.add(var, b.constant(Scalar::ofFloat(DType::Float32, 1e-5)))));
  Value rows = b.reshape(y, {b.symbolSize("S") * batch, hidden});
  Value e = b.unary(OpKind::Exp, b.sub(rows, b.reduceMax(rows, {1}, true)));
  b.output(b.binary(OpKind::Div, e, b.reduceSum(e, {1}, true)));
  return b.build();
}

// An embedding of [1, S] token ids (an int64 Gather of a [97, 64] table), then
// RMSNorm of the rows: the symbol comes in through the indices.
Graph embeddingThenRmsNorm() {
  GraphBuilder b("sym_embedding");
  Value ids = b.symbolicInput("ids", DType::Int64, {1, "S"});
  Value table = b.input("table", DType::Float32, {97, 64});
  Value x = b.gather(table, ids, 0);
  Value ms = b.binary(OpKind::Div, b.reduceSum(b.mul(x, x), {2}, true), b.constant(Scalar::ofFloat(DType::Float32, 64)));
  b.output(b.mul(x, b.unary(OpKind::Rsqrt, b.add(ms, b.constant(Scalar::ofFloat(DType::Float32, 1e-6))))));
  return b.build();
}

// Compiles once and checks on the CPU at every size; the program is not recompiled.
void checkAtManySizes(const Graph& g, const std::string& symbol) {
  ASSERT_EQ(g.symbols, std::vector<std::string>{symbol});
  CompileOptions options;
  const CompiledGraph c = compileGraph(g, options);
  bool anySymbolic = false;
  for (const PolyKernel& k : c.kernels) anySymbolic = anySymbolic || k.plan.symbolicRows.has_value();
  ASSERT_TRUE(anySymbolic) << "no kernel takes its rows from " << symbol;
  for (int64_t size : sizesToTry()) {
    CpuCheckOptions o;
    o.sizes = {size};
    o.seed = static_cast<uint64_t>(size) + 3;
    o.maxPoints = 0;
    const CpuCheckReport r = checkOnCpu(c, o);
    EXPECT_TRUE(r.ok) << g.name << " at " << symbol << " = " << size << ":\n" << r.message;
  }
}

TEST(SymbolicDims, LayerNormRowsAtManySizes) { checkAtManySizes(layerNorm(768), "S"); }
TEST(SymbolicDims, LayerNormOddHiddenAtManySizes) { checkAtManySizes(layerNorm(97), "S"); }
TEST(SymbolicDims, SoftmaxBatchTimesSymbolRows) { checkAtManySizes(softmax(2, 1000), "S"); }
TEST(SymbolicDims, RmsNormHalfAtManySizes) { checkAtManySizes(rmsNorm(1024), "T"); }
TEST(SymbolicDims, ElementwiseWithReshapeAtManySizes) { checkAtManySizes(elementwise(), "S"); }
TEST(SymbolicDims, GatherBySymbolicIndicesAtManySizes) { checkAtManySizes(embeddingThenRmsNorm(), "S"); }

TEST(SymbolicDims, TemporariesBetweenKernelsAreSizedByTheSymbol) {
  const Graph g = normThenSoftmax(3, 48);
  const CompiledGraph c = compileGraph(g, CompileOptions{});
  ASSERT_FALSE(c.partition.temporaries.empty()) << c.partition.toString(c.graph);
  for (size_t k = 0; k < c.partition.temporaries.size(); ++k) {
    const Temporary& t = c.partition.temporaries[k];  // row statistics: 3 per unit of S
    EXPECT_EQ(t.symbol, 0) << c.partition.toString(c.graph);
    EXPECT_EQ(t.elementsAt({5}), 5 * t.elementsPerSymbol);
    EXPECT_EQ(t.elements, t.elementsAt({symbolProbe(0, 0)}));
    EXPECT_EQ(c.program.temporaries[k].bytesAt({5}), t.elementsAt({5}) * 4);
  }
  checkAtManySizes(g, "S");
}

TEST(SymbolicDims, SymbolIsAKernelParameterAndDrivesTheGrid) {
  const CompiledGraph c = compileGraph(layerNorm(768), CompileOptions{});
  ASSERT_EQ(c.program.symbols, std::vector<std::string>{"S"});
  ASSERT_EQ(c.program.kernels.size(), 1u);
  const KernelSpec& k = c.program.kernels[0];
  EXPECT_NE(k.source.find("const long long size_S"), std::string::npos) << k.source;
  ASSERT_FALSE(k.params.empty());
  EXPECT_EQ(k.params.back().kind, KernelParam::Kind::Size);
  EXPECT_EQ(k.launch.rows.symbol, 0);
  const int64_t rowsPerBlock = k.launch.rows.rowsPerBlock;
  EXPECT_EQ(k.launch.gridAt({0})[1], 0u);
  EXPECT_EQ(k.launch.gridAt({1})[1], 1u);
  EXPECT_EQ(k.launch.gridAt({rowsPerBlock + 1})[1], 2u);
  EXPECT_EQ(k.launch.gridAt({int64_t{1} << 40})[1], k.launch.grid[1]);  // capped: blocks loop over tiles
}

TEST(SymbolicDims, InstantiateGivesTheConcreteGraph) {
  const Graph g = softmax(2, 1000);
  const Graph at = instantiate(g, {37});
  EXPECT_TRUE(at.symbols.empty());
  EXPECT_EQ(at.tensor(at.inputs[0]).shape, (Shape{2, 37, 1000}));
  EXPECT_EQ(at.tensor(at.outputs[0].tensor).shape, (Shape{2, 37, 1000}));
  EXPECT_EQ(symbolicShapeString(g, g.tensor(g.inputs[0])), "[2, S, 1000]");
  const Graph e = elementwise();
  EXPECT_EQ(symbolicShapeString(e, e.tensor(e.outputs[0].tensor)), "[12*S, 64]");
}

// The message of the Error that `f` throws ("" when it throws none).
template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SymbolicDims, RefusesASymbolInTheReducedAxis) {
  const std::string why = refusal([] {
    GraphBuilder b("sym_reduce_rows");
    Value x = b.symbolicInput("x", DType::Float32, {"S", 8});
    b.output(b.reduceSum(x, {0}));
    b.build();
  });
  EXPECT_NE(why.find("reduced axis"), std::string::npos) << why;
  EXPECT_NE(why.find("not supported yet"), std::string::npos) << why;
}

// A constant axis equal to the symbol's probe broadcasts in the template, but whether
// it equals S cannot be decided: refused, not guessed.
TEST(SymbolicDims, RefusesBroadcastAgainstAConstant) {
  const std::string why = refusal([] {
    GraphBuilder b("sym_broadcast");
    Value x = b.symbolicInput("x", DType::Float32, {"S", 8});
    Value y = b.input("y", DType::Float32, {b.symbolSize("S"), 8});
    b.output(b.add(x, y));
    b.build();
  });
  EXPECT_NE(why.find("cannot decide"), std::string::npos) << why;
}

TEST(SymbolicDims, RefusesOneSymbolInTwoAxes) {
  const std::string why = refusal([] {
    GraphBuilder b("sym_square");
    Value x = b.symbolicInput("x", DType::Float32, {"S", "S"});
    b.output(b.neg(x));
    b.build();
  });
  EXPECT_NE(why.find("in two axes"), std::string::npos) << why;
}

TEST(SymbolicDims, RefusesSizeDependentOps) {
  const std::string why = refusal([] {
    GraphBuilder b("sym_transpose");
    Value x = b.symbolicInput("x", DType::Float32, {"S", 8});
    b.output(b.transpose(x, {1, 0}));
    b.build();
  });
  EXPECT_NE(why.find("Transpose is not supported yet"), std::string::npos) << why;
}

TEST(SymbolicDims, RefusesSymbolicGatherParams) {
  const std::string why = refusal([] {
    GraphBuilder b("sym_gather_params");
    Value table = b.symbolicInput("table", DType::Float32, {"S", 8});
    b.output(b.gather(table, b.input("ids", DType::Int32, {4}), 0));
    b.build();
  });
  EXPECT_NE(why.find("params of Gather"), std::string::npos) << why;
}

// A symbol in an inner kept axis: [B, S, H] with an input broadcast along S needs S
// in its offsets (floor(i / S)): compiled, refused.
TEST(SymbolicDims, RefusesASymbolThatReachesTheOffsets) {
  GraphBuilder b("sym_inner");
  Value x = b.symbolicInput("x", DType::Float32, {4, "S", 16});
  Value y = b.input("y", DType::Float32, {4, 1, 16});
  b.output(b.reduceSum(b.mul(x, y), {2}));
  const Graph g = b.build();
  const std::string why = refusal([&] { compileGraph(g, CompileOptions{}); });
  EXPECT_NE(why.find("not supported yet"), std::string::npos) << why;
}

// A symbol in the kept axis of a y-reduce (columns) is refused at compile time.
TEST(SymbolicDims, RefusesSymbolicColumnsOfAYReduce) {
  GraphBuilder b("sym_columns");
  Value x = b.symbolicInput("x", DType::Float32, {64, "S"});
  b.output(b.reduceSum(x, {0}));
  const Graph g = b.build();
  const std::string why = refusal([&] { compileGraph(g, CompileOptions{}); });
  EXPECT_NE(why.find("not supported yet"), std::string::npos) << why;
}

// Composite JSON: "S" and "12*S" in shapes; a Reshape merging the symbol with a
// constant, checked at several sizes; a malformed symbol is refused naming the file.
TEST(SymbolicDims, CompositeShapesNameSymbols) {
  const std::string json = R"({"op": "sym_json", "input_desc": [[{"tensor_name": "x", "data_type": "float32",
    "format": "DefaultFormat", "shape": ["S", 12, 64]}]],
    "op_desc": [{"name": "Reshape", "input_desc": [[{"tensor_name": "x", "data_type": "float32",
      "format": "DefaultFormat", "shape": ["S", 12, 64]}]], "output_desc": [{"tensor_name": "y", "data_type":
      "float32", "format": "DefaultFormat", "shape": ["12*S", 64]}]},
      {"name": "ReduceSum", "attr": [{"name": "axis", "value": [1]}, {"name": "keep_dims", "value": false}],
       "input_desc": [[{"tensor_name": "y", "data_type": "float32", "format": "DefaultFormat",
         "shape": ["12*S", 64]}]], "output_desc": [{"tensor_name": "z", "data_type": "float32",
         "format": "DefaultFormat", "shape": ["12*S"]}]}],
    "output_desc": [{"tensor_name": "z", "data_type": "float32", "format": "DefaultFormat", "shape": ["12*S"]}]})";
  const Graph g = parseComposite(json, "sym.json");
  ASSERT_EQ(g.symbols, std::vector<std::string>{"S"});
  EXPECT_EQ(symbolicShapeString(g, g.tensor(g.outputs[0].tensor)), "[12*S]");
  const CompiledGraph c = compileGraph(g, CompileOptions{});
  for (int64_t size : {1, 5, 29}) {
    CpuCheckOptions o;
    o.sizes = {size};
    const CpuCheckReport r = checkOnCpu(c, o);
    EXPECT_TRUE(r.ok) << size << ": " << r.message;
  }
  std::string bad = json;
  bad.replace(bad.find("\"12*S\", 64"), 10, "\"S*12\", 64");
  const std::string why = refusal([&] { parseComposite(bad, "bad.json"); });
  EXPECT_NE(why.find("bad.json"), std::string::npos) << why;
  EXPECT_NE(why.find("S*12"), std::string::npos) << why;
}

// Positions 0..S-1 (an Iota along the symbolic axis, as a rotary embedding's) times x,
// summed over 8 columns: the Iota's declared shape names the symbol.
TEST(SymbolicDims, AnIotaAlongTheSymbolicAxisAtManySizes) {
  const std::string json = R"({"op": "pos", "input_desc": [[{"data_type": "float32", "format": "DefaultFormat", "shape": [1, "S", 8], "tensor_name": "x"}]], "op_desc": [{"name": "Iota", "attr": [{"name": "axis", "value": 1}], "input_desc": [], "output_desc": [{"data_type": "int64", "format": "DefaultFormat", "shape": [1, "S", 8], "tensor_name": "p"}]}, {"name": "Cast", "attr": [{"name": "dst_type", "value": "float32"}], "input_desc": [[{"data_type": "int64", "format": "DefaultFormat", "shape": [1, "S", 8], "tensor_name": "p"}]], "output_desc": [{"data_type": "float32", "format": "DefaultFormat", "shape": [1, "S", 8], "tensor_name": "pf"}]}, {"name": "Mul", "attr": null, "input_desc": [[{"data_type": "float32", "format": "DefaultFormat", "shape": [1, "S", 8], "tensor_name": "x"}], [{"data_type": "float32", "format": "DefaultFormat", "shape": [1, "S", 8], "tensor_name": "pf"}]], "output_desc": [{"data_type": "float32", "format": "DefaultFormat", "shape": [1, "S", 8], "tensor_name": "y"}]}, {"name": "ReduceSum", "attr": [{"name": "axis", "value": [2]}, {"name": "keep_dims", "value": false}], "input_desc": [[{"data_type": "float32", "format": "DefaultFormat", "shape": [1, "S", 8], "tensor_name": "y"}]], "output_desc": [{"data_type": "float32", "format": "DefaultFormat", "shape": [1, "S"], "tensor_name": "z"}]}], "output_desc": [{"data_type": "float32", "format": "DefaultFormat", "shape": [1, "S"], "tensor_name": "z"}]})";
  const Graph g = parseComposite(json, "iota.json");
  ASSERT_EQ(g.symbols, std::vector<std::string>{"S"});
  const Node& iota = g.nodes.front();
  ASSERT_EQ(iota.kind, OpKind::Iota);
  EXPECT_EQ(symbolicShapeString(g, g.tensor(iota.output)), "[1, S, 8]");
  checkAtManySizes(g, "S");
}

// The positions of a Llama's rotary embedding beside its first RMSNorm: an Iota over
// [1, S] reshaped to [1, 1, S] is stored by the row-sum kernel over the same rows. Its
// index is the row itself (no `mod S` behind the unit axis), so the kernel stays symbolic.
TEST(SymbolicDims, AnIotaReshapedBehindAUnitAxisIsStoredByTheRowKernel) {
  const std::string json = R"({"op": "positions", "input_desc": [[{"data_type": "float32", "format": "DefaultFormat", "shape": [1, "S", 8], "tensor_name": "x"}]], "op_desc": [{"name": "ReduceSum", "attr": [{"name": "axis", "value": [2]}, {"name": "keep_dims", "value": false}], "input_desc": [[{"data_type": "float32", "format": "DefaultFormat", "shape": [1, "S", 8], "tensor_name": "x"}]], "output_desc": [{"data_type": "float32", "format": "DefaultFormat", "shape": [1, "S"], "tensor_name": "z"}]}, {"name": "Iota", "attr": [{"name": "axis", "value": 1}], "input_desc": [], "output_desc": [{"data_type": "int64", "format": "DefaultFormat", "shape": [1, "S"], "tensor_name": "p"}]}, {"name": "Reshape", "attr": null, "input_desc": [[{"data_type": "int64", "format": "DefaultFormat", "shape": [1, "S"], "tensor_name": "p"}]], "output_desc": [{"data_type": "int64", "format": "DefaultFormat", "shape": [1, 1, "S"], "tensor_name": "p2"}]}, {"name": "Cast", "attr": [{"name": "dst_type", "value": "float32"}], "input_desc": [[{"data_type": "int64", "format": "DefaultFormat", "shape": [1, 1, "S"], "tensor_name": "p2"}]], "output_desc": [{"data_type": "float32", "format": "DefaultFormat", "shape": [1, 1, "S"], "tensor_name": "q"}]}], "output_desc": [{"data_type": "float32", "format": "DefaultFormat", "shape": [1, "S"], "tensor_name": "z"}, {"data_type": "float32", "format": "DefaultFormat", "shape": [1, 1, "S"], "tensor_name": "q"}]})";
  const Graph g = parseComposite(json, "positions.json");
  const CompiledGraph c = compileGraph(g, CompileOptions{});
  ASSERT_EQ(c.kernels.size(), 1u) << "the positions are stored by the row-sum kernel";
  EXPECT_TRUE(c.kernels.front().plan.symbolicRows.has_value());
  checkAtManySizes(g, "S");
}

TEST(SymbolicDims, ConcreteChecksRefuseSizes) {
  GraphBuilder b("concrete");
  Value x = b.input("x", DType::Float32, {4, 8});
  b.output(b.reduceSum(x, {1}));
  const CompiledGraph c = compileGraph(b.build(), CompileOptions{});
  CpuCheckOptions o;
  o.sizes = {3};
  EXPECT_NE(refusal([&] { checkOnCpu(c, o); }).find("without size symbols"), std::string::npos);
}

}  // namespace
}  // namespace polyred
