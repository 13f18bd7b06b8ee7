// The elementwise math ops of MindSpore's graph-kernel vocabulary beyond the basic ones
// (ir/ops.h): FloorDiv, FloorMod, Mod, Atan2, Erfc, Expm1, Log1p, Asin, ACos, Atan,
// Asinh, Acosh. Each is checked on hand-picked values written out from the definitions
// (Python's // and %, C's fmod, IEEE special values) through the reference and the
// lowered kernels on the CPU; the files under tests/data/ops (every op, fused with a
// reduction, f32/f16/i32/i8) pass the CPU check and compile with NVRTC; float-only ops
// refuse integers. The GPU half is tests/gpu/ops_gpu_test.cc; tests/edge_value_cases.h
// covers every op over the edge values on both.
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "one_op_graph.h"

using namespace polyred;
using namespace polyred::test_support;
namespace fs = std::filesystem;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kPi = static_cast<float>(M_PI), kHalfPi = static_cast<float>(M_PI / 2), kQuarterPi = static_cast<float>(M_PI / 4);

Graph binary(const std::string& op, const std::string& dtype, int64_t n) {
  return oneOp(op, {desc("a", {n}, dtype), desc("b", {n}, dtype)}, desc("y", {n}, dtype), Json::array());
}

Graph unary(const std::string& op, int64_t n) {
  return oneOp(op, {desc("x", {n}, "float32")}, desc("y", {n}, "float32"), Json::array());
}

TEST(MathOps, FloatDivisionFloorsAndRemaindersFollowPythonAndC) {
  const std::vector<double> a = {7, -7, 7, -7, 7.5, -0.5, 1, 0}, b = {2, 2, -2, -2, 2, 3, 0, 0};
  for (const char* t : {"float32", "float16", "float64"}) {
    const DType dt = *parseDType(t);
    const std::vector<HostTensor> in = {HostTensor::fromValues(dt, {8}, a), HostTensor::fromValues(dt, {8}, b)};
    expectOutput(binary("FloorDiv", t, 8), in, {3, -4, -4, 3, 3, -1, kInf, kNan});
    expectOutput(binary("FloorMod", t, 8), in, {1, 1, -1, -1, 1.5, 2.5, kNan, kNan});  // the sign of b
    expectOutput(binary("Mod", t, 8), in, {1, -1, 1, -1, 1.5, -0.5, kNan, kNan});       // the sign of a
  }
}

TEST(MathOps, IntegerDivisionFloorsAndRemaindersAreExact) {
  const double lo = std::numeric_limits<int32_t>::min();
  const std::vector<HostTensor> i32 = {HostTensor::fromValues(DType::Int32, {8}, {7, -7, 7, -7, 0, 5, lo, lo}),
                                       HostTensor::fromValues(DType::Int32, {8}, {2, 2, -2, -2, 3, 0, -1, 3})};
  // By 0 the quotient is 0 (as Div) and the remainder the dividend; INT_MIN // -1 wraps.
  expectOutput(binary("FloorDiv", "int32", 8), i32, {3, -4, -4, 3, 0, 0, lo, -715827883});
  expectOutput(binary("FloorMod", "int32", 8), i32, {1, 1, -1, -1, 0, 5, 0, 1});
  expectOutput(binary("Mod", "int32", 8), i32, {1, -1, 1, -1, 0, 5, 0, -2});
  const std::vector<HostTensor> i8 = {HostTensor::fromValues(DType::Int8, {4}, {-128, -128, 127, -5}),
                                      HostTensor::fromValues(DType::Int8, {4}, {-1, 7, -128, 0})};
  expectOutput(binary("FloorDiv", "int8", 4), i8, {-128, -19, -1, 0});
  expectOutput(binary("FloorMod", "int8", 4), i8, {0, 5, -1, -5});
  expectOutput(binary("Mod", "int8", 4), i8, {0, -2, 127, -5});
}

TEST(MathOps, TranscendentalsGiveTheirDefiningValues) {
  const double tiny = static_cast<float>(1e-10);  // where exp(x) - 1 and log(1 + x) give 0
  auto x = [](std::vector<double> v) {
    return std::vector<HostTensor>{HostTensor::fromValues(DType::Float32, {static_cast<int64_t>(v.size())}, v)};
  };
  expectOutput(unary("Expm1", 4), x({tiny, 0, -kInf, kNan}), {tiny, 0, -1, kNan});
  expectOutput(unary("Log1p", 4), x({tiny, 0, -1, -2}), {tiny, 0, -kInf, kNan});
  expectOutput(unary("Erfc", 3), x({0, kInf, -kInf}), {1, 0, 2});
  expectOutput(unary("Asin", 3), x({1, 0, 2}), {kHalfPi, 0, kNan});
  expectOutput(unary("ACos", 3), x({-1, 1, -1.5}), {kPi, 0, kNan});
  expectOutput(unary("Atan", 3), x({kInf, 0, -kInf}), {kHalfPi, 0, -kHalfPi});
  expectOutput(unary("Asinh", 3), x({0, -kInf, kNan}), {0, -kInf, kNan});
  expectOutput(unary("Acosh", 3), x({1, 0.5, kInf}), {0, kNan, kInf});
  // Atan2(y, x): the angle of the point (x, y); -0 in y gives the lower half-plane.
  expectOutput(binary("Atan2", "float32", 4),
               {HostTensor::fromValues(DType::Float32, {4}, {1, 0, -0.0, 1}),
                HostTensor::fromValues(DType::Float32, {4}, {0, -1, -1, 1})},
               {kHalfPi, kPi, -kPi, kQuarterPi});
}

TEST(MathOps, FloatOnlyOpsRefuseIntegers) {
  for (const char* op : {"Atan2"}) {
    try {
      binary(op, "int32", 4);
      ADD_FAILURE() << op << " of int32 was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("takes float inputs"), std::string::npos) << e.what();
    }
  }
  for (const char* op : {"Erfc", "Expm1", "Log1p", "Asin", "ACos", "Atan", "Asinh", "Acosh"}) {
    try {
      oneOp(op, {desc("x", {4}, "int32")}, desc("y", {4}, "int32"), Json::array());
      ADD_FAILURE() << op << " of int32 was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("takes a float input"), std::string::npos) << e.what();
    }
  }
}

TEST(MathOps, CompositeFilesPassTheCpuCheckAndCompile) {
  int files = 0;
  for (const auto& e : fs::directory_iterator(fs::path(POLYRED_SOURCE_DIR) / "tests" / "data" / "ops")) {
    if (e.path().extension() != ".json") continue;
    CompiledGraph c = compileGraph(readCompositeFile(e.path().string()), CompileOptions{});
    CpuCheckReport r = checkOnCpu(c, /*seed=*/5, /*maxPoints=*/0, false);
    EXPECT_TRUE(r.ok) << e.path() << "\n" << r.message;
    for (const KernelSpec& k : c.program.kernels) EXPECT_NO_THROW(compileCuda(k.source, k.name, 9, 0)) << e.path();
    ++files;
  }
  EXPECT_GE(files, 5);
}

}  // namespace
