// uint16, uint32 and uint64 tensors: the host semantics (wrapping arithmetic, unsigned
// comparisons and quotients, C's conversions with saturation from floats), the lowered
// kernels against the reference on edge values (the CPU executor, and NVRTC for the
// generated CUDA), an AKG-style composite file with uint32 inputs, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "composite_test_helpers.h"
#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "frontend/composite_reader.h"
#include "interp/random_inputs.h"
#include "interp/reference.h"
#include "ir/ops.h"
#include "lowering_helpers.h"

namespace polyred {
namespace {

using test_support::desc;
using test_support::errorOf;
using test_support::expectIdenticalOutputs;
using test_support::expectNvrtcCompiles;
using test_support::lowered;

constexpr int64_t kU32Max = std::numeric_limits<uint32_t>::max();

Scalar u32(int64_t v) { return Scalar::ofInt(DType::UInt32, v); }
Scalar u64(uint64_t v) { return Scalar::ofInt(DType::UInt64, static_cast<int64_t>(v)); }

Scalar eval(OpKind k, std::vector<Scalar> args, DType result) { return evalElementwise(k, args, result); }

TEST(UnsignedDTypes, NamesSizesAndStableValues) {
  EXPECT_EQ(dtypeName(DType::UInt16), "uint16");
  EXPECT_EQ(dtypeName(DType::UInt32), "uint32");
  EXPECT_EQ(dtypeName(DType::UInt64), "uint64");
  EXPECT_EQ(dtypeBytes(DType::UInt16), 2);
  EXPECT_EQ(dtypeBytes(DType::UInt32), 4);
  EXPECT_EQ(dtypeBytes(DType::UInt64), 8);
  EXPECT_EQ(parseDType("uint32"), DType::UInt32);
  EXPECT_EQ(cudaStorageType(DType::UInt64), "unsigned long long");
  // Appended after complex64: the C API's polyred_dtype casts to DType.
  EXPECT_EQ(static_cast<int>(DType::UInt16), 10);
  EXPECT_EQ(static_cast<int>(DType::UInt64), 12);
  for (DType t : kWideUnsignedDTypes) {
    EXPECT_TRUE(isInteger(t));
    EXPECT_TRUE(isUnsigned(t));
  }
  EXPECT_FALSE(isUnsigned(DType::Int32));
}

TEST(UnsignedDTypes, ConversionsAreCs) {
  EXPECT_EQ(Scalar::convert(int64_t{-1}, DType::UInt32).i, kU32Max);  // wraps
  EXPECT_EQ(Scalar::convert(int64_t{65536 + 7}, DType::UInt16).i, 7);
  EXPECT_EQ(Scalar::convert(int64_t{-1}, DType::UInt64).i, -1);  // 2^64 - 1, as its bit pattern
  // From floats: truncated, saturated to [0, 2^n - 1], NaN -> 0 (cvt.rzi.sat).
  EXPECT_EQ(Scalar::convert(-1.5, DType::UInt32).i, 0);
  EXPECT_EQ(Scalar::convert(7.9, DType::UInt32).i, 7);
  EXPECT_EQ(Scalar::convert(5e9, DType::UInt32).i, kU32Max);
  EXPECT_EQ(Scalar::convert(NAN, DType::UInt64).i, 0);
  EXPECT_EQ(Scalar::convert(1e30, DType::UInt64).i, -1);
  EXPECT_EQ(static_cast<uint64_t>(Scalar::convert(0x1.8p63, DType::UInt64).i), 0xC000000000000000ull);
  // To floats: the unsigned value, rounded once.
  EXPECT_EQ(u64(~0ull).castTo(DType::Float64).f, 0x1p64);
  EXPECT_EQ(u64(~0ull).castTo(DType::Float32).f, 0x1p64);
  EXPECT_EQ(u64((1ull << 63) + 1).castTo(DType::Float64).f, 0x1p63);
  EXPECT_EQ(u64(0xFFFF'FFFF'FFFF'FFFFull).castTo(DType::BFloat16).f, 0x1p64);
  EXPECT_EQ(u32(kU32Max).castTo(DType::Float32).f, 0x1p32);
  EXPECT_EQ(u32(kU32Max).castTo(DType::Int32).i, -1);
  EXPECT_EQ(u64(~0ull).toString(), "18446744073709551615");
}

TEST(UnsignedDTypes, ArithmeticWrapsAndComparesUnsigned) {
  EXPECT_EQ(eval(OpKind::Add, {u32(kU32Max), u32(1)}, DType::UInt32).i, 0);
  EXPECT_EQ(eval(OpKind::Sub, {u32(3), u32(5)}, DType::UInt32).i, kU32Max - 1);
  EXPECT_EQ(eval(OpKind::Mul, {u32(65536), u32(65537)}, DType::UInt32).i, 65536);
  EXPECT_EQ(eval(OpKind::Pow, {u32(2), u32(33)}, DType::UInt32).i, 0);
  EXPECT_EQ(eval(OpKind::Div, {u32(kU32Max), u32(2)}, DType::UInt32).i, kU32Max / 2);
  EXPECT_EQ(eval(OpKind::FloorMod, {u32(kU32Max), u32(10)}, DType::UInt32).i, kU32Max % 10);
  EXPECT_EQ(eval(OpKind::Div, {u32(7), u32(0)}, DType::UInt32).i, 0);
  EXPECT_TRUE(eval(OpKind::Greater, {u32(kU32Max), u32(1)}, DType::Bool).asBool());
  EXPECT_EQ(eval(OpKind::Maximum, {u32(kU32Max), u32(1)}, DType::UInt32).i, kU32Max);
  EXPECT_EQ(eval(OpKind::Add, {u64(~0ull), u64(2)}, DType::UInt64).i, 1);
  EXPECT_EQ(eval(OpKind::Sub, {u64(0), u64(1)}, DType::UInt64).i, -1);
  EXPECT_TRUE(eval(OpKind::Equal, {u64(~0ull), u64(~0ull)}, DType::Bool).asBool());
}

// The values at the edges of `t`'s range (and past int32's and int64's), then random ones.
HostTensor edgeTensor(DType t, const Shape& s, uint64_t seed) {
  HostTensor h = makeRandomTensor(t, s, seed);
  const uint64_t top = t == DType::UInt16 ? 0xFFFFull : t == DType::UInt32 ? 0xFFFF'FFFFull : ~0ull;
  const std::vector<uint64_t> edges = {0, 1, top, top - 1, top / 2 + 1, top / 2, 2, top - 100};
  for (size_t k = 0; k < edges.size() && static_cast<int64_t>(k) < h.size(); ++k)
    h.set(static_cast<int64_t>(k * 7 % static_cast<size_t>(h.size())), Scalar::ofInt(t, static_cast<int64_t>(edges[k])));
  return h;
}

// x, y of `t` [rows, cols] -> elementwise results, casts and sums, as the ops allow.
Graph unsignedGraph(DType t, int64_t rows, int64_t cols) {
  GraphBuilder b("unsigned_ops");
  Value x = b.input("x", t, {rows, cols});
  Value y = b.input("y", t, {rows, cols});
  Value one = b.constant(Scalar::ofInt(t, 1));
  Value wrapped = b.sub(b.mul(x, b.add(y, one)), y);
  if (t == DType::UInt64) {
    b.output(b.select(b.binary(OpKind::Equal, x, y), b.add(x, y), wrapped));
  } else {
    b.output(b.select(b.binary(OpKind::Greater, x, y), b.binary(OpKind::Div, x, b.add(y, one)),
                      b.binary(OpKind::Maximum, wrapped, b.binary(OpKind::Mod, y, b.add(x, one)))));
    b.output(b.reduceMax(x, {1}));
  }
  b.output(b.cast(x, DType::Float32));
  b.output(b.cast(x, DType::BFloat16));
  b.output(b.cast(x, DType::Int32));
  b.output(b.cast(b.cast(y, DType::Float64), t));
  b.output(b.reduceSum(wrapped, {1}));  // wraps modulo 2^n
  b.output(b.reduce(x, Reduction::sum(t, DType::Int64), {0}, false, DType::Int64));  // exact
  b.output(b.reduce(x, Reduction::sum(t, t), {0, 1}));
  return b.build();
}

TEST(UnsignedDTypes, LoweredKernelsMatchTheReferenceOnEdgeValues) {
  for (DType t : kWideUnsignedDTypes) {
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{33, 100}, {5, 4099}}) {
      SCOPED_TRACE(std::string(dtypeName(t)) + " [" + std::to_string(rows) + ", " + std::to_string(cols) + "]");
      const Graph g = unsignedGraph(t, rows, cols);
      for (bool deterministic : {false, true}) {
        CompileOptions o;
        o.deterministic = deterministic;
        const CompiledGraph c = compileGraph(g, o);
        const std::vector<HostTensor> inputs = {edgeTensor(t, {rows, cols}, 1), edgeTensor(t, {rows, cols}, 2)};
        expectIdenticalOutputs(lowered(c, inputs, 1, deterministic), evaluateReference(g, inputs), "CPU");
        CpuCheckReport r = checkOnCpu(c, 5, 0, deterministic);
        EXPECT_TRUE(r.ok) << r.message;
        expectNvrtcCompiles(c, std::string(dtypeName(t)));
      }
    }
  }
}

TEST(UnsignedDTypes, SumsWrapAndCastsSaturateInTheReference) {
  GraphBuilder b("u32");
  Value x = b.input("x", DType::UInt32, {4});
  Value f = b.input("f", DType::Float32, {4});
  b.output(b.reduceSum(x, {0}));
  b.output(b.reduce(x, Reduction::sum(DType::UInt32, DType::Int64), {0}, false, DType::Int64));
  b.output(b.cast(f, DType::UInt32));
  const Graph g = b.build();
  HostTensor xs = HostTensor::zeros(DType::UInt32, {4}), fs = HostTensor::zeros(DType::Float32, {4});
  const int64_t xv[] = {kU32Max, 1, kU32Max, 5};
  const double fv[] = {-3.5, 4294967296.0 * 2, 17.9, NAN};
  for (int k = 0; k < 4; ++k) {
    xs.set(k, u32(xv[k]));
    fs.set(k, Scalar::ofFloat(DType::Float32, fv[k]));
  }
  const std::vector<HostTensor> out = evaluateReference(g, {xs, fs});
  EXPECT_EQ(out[0].get(0).i, 4);  // (2^32 - 1) * 2 + 6 modulo 2^32
  EXPECT_EQ(out[1].get(0).i, 2 * kU32Max + 6);
  EXPECT_EQ(out[2].get(0).i, 0);
  EXPECT_EQ(out[2].get(1).i, kU32Max);
  EXPECT_EQ(out[2].get(2).i, 17);
  EXPECT_EQ(out[2].get(3).i, 0);
  const CompiledGraph c = compileGraph(g, CompileOptions{});
  expectIdenticalOutputs(lowered(c, {xs, fs}), out, "CPU");
  std::string sources;
  for (const KernelSpec& k : c.program.kernels) sources += k.source;
  EXPECT_NE(sources.find("const unsigned int*"), std::string::npos) << sources;
}

TEST(UnsignedDTypes, Uint32CompositeFileCompilesAndChecks) {
  const std::string file = std::string(POLYRED_SOURCE_DIR) + "/examples/unsigned/uint32_mask_sum.json";
  const Graph g = readCompositeFile(file);
  EXPECT_EQ(g.tensor(g.inputs.at(0)).dtype, DType::UInt32);
  for (bool deterministic : {false, true}) {
    CompileOptions o;
    o.deterministic = deterministic;
    const CompiledGraph c = compileGraph(g, o);
    CpuCheckReport r = checkOnCpu(c, 7, 0, deterministic);
    EXPECT_TRUE(r.ok) << r.message;
    expectNvrtcCompiles(c, "uint32_mask_sum.json");
  }
}

// A one-op composite document over `dtype` operands (`arity` of them), output `out`.
std::string oneOpJson(const std::string& op, const std::string& dtype, int arity, const std::string& out) {
  nlohmann::json inputs = nlohmann::json::array(), opInputs = nlohmann::json::array();
  for (int k = 0; k < arity; ++k) {
    const std::string name = "input_" + std::to_string(k);
    inputs.push_back({desc(name, {8}, dtype)});
    nlohmann::json d = desc(name, {8}, dtype);
    d["name"] = name;
    opInputs.push_back({d});
  }
  nlohmann::json result = desc("output_0_0", {8}, out);
  nlohmann::json doc = {{"composite", true},
                        {"op", "Fused_" + op},
                        {"process", "cuda"},
                        {"input_desc", inputs},
                        {"output_desc", {result}},
                        {"op_desc", {{{"name", op}, {"attr", nullptr}, {"input_desc", opInputs}, {"output_desc", {result}}}}}};
  return doc.dump();
}

TEST(UnsignedDTypes, OpsWithoutAnUnsignedMeaningAreRefusedByName) {
  for (const char* t : {"uint16", "uint32", "uint64"}) {
    SCOPED_TRACE(t);
    const std::string neg = errorOf(oneOpJson("Neg", t, 1, t));
    EXPECT_NE(neg.find("Neg of " + std::string(t) + " is refused"), std::string::npos) << neg;
    const std::string exp = errorOf(oneOpJson("Exp", t, 1, t));
    EXPECT_NE(exp.find(t), std::string::npos) << exp;
    EXPECT_NE(exp.find("Exp"), std::string::npos) << exp;
    EXPECT_EQ(exp.find("internal error"), std::string::npos) << exp;
    EXPECT_EQ(errorOf(oneOpJson("Add", t, 2, t)), "");
    EXPECT_EQ(errorOf(oneOpJson("Equal", t, 2, "bool")), "");
  }
  for (const char* op : {"Less", "Maximum", "RealDiv", "FloorMod"}) {
    const std::string out = std::string(op) == "Less" ? "bool" : "uint64";
    const std::string e = errorOf(oneOpJson(op, "uint64", 2, out));
    EXPECT_NE(e.find("of uint64 is refused"), std::string::npos) << op << ": " << e;
    EXPECT_EQ(errorOf(oneOpJson(op, "uint32", 2, out == "bool" ? out : "uint32")), "") << op;
  }
}

TEST(UnsignedDTypes, ReductionsWithoutAnUnsignedMeaningAreRefused) {
  auto refusal = [](auto build) -> std::string {
    try {
      build();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(refusal([] {
              GraphBuilder b("max64");
              b.output(b.reduceMax(b.input("x", DType::UInt64, {8}), {0}));
              b.build();
            }).find("a reduction of uint64 is refused"),
            std::string::npos);
  EXPECT_NE(refusal([] {
              GraphBuilder b("sum64f");
              b.output(b.reduce(b.input("x", DType::UInt64, {8}), Reduction::sum(DType::UInt64, DType::Float32), {0},
                                false, DType::Float32));
              b.build();
            }).find("reduce into uint64, then Cast"),
            std::string::npos);
  EXPECT_NE(refusal([] {
              GraphBuilder b("argmax32");
              b.output(b.argmax(b.input("x", DType::UInt32, {8, 4}), 1));
              b.build();
            }).find("tuple reduction"),
            std::string::npos);
  EXPECT_EQ(refusal([] {
              GraphBuilder b("sum64");
              b.output(b.reduceSum(b.input("x", DType::UInt64, {8}), {0}));
              b.build();
            }),
            "");
}

}  // namespace
}  // namespace polyred
