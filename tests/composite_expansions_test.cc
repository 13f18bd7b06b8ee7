// The MindSpore ops polyred expands (frontend/composite_expansions): each checked
// against its textbook formula computed here in double, not against polyred's own
// reference (which would only repeat the expansion), and compiled into one kernel.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/composite_reader.h"
#include "interp/random_inputs.h"
#include "interp/reference.h"

using namespace polyred;
using Json = nlohmann::json;

namespace {

Json desc(const std::string& name, const Shape& shape, const std::string& dtype) {
  return {{"tensor_name", name}, {"shape", shape}, {"data_type", dtype}, {"format", "DefaultFormat"}};
}

// A composite file applying `op` to x and declaring the result y.
Graph oneOp(const std::string& op, const Shape& in, const Shape& out, const std::string& dtype, Json attrs) {
  Json doc = {{"op", "Fused_" + op},
              {"input_desc", {{desc("x", in, dtype)}}},
              {"op_desc", {{{"name", op}, {"attr", attrs}, {"input_desc", {{desc("x", in, dtype)}}},
                            {"output_desc", {desc("y", out, dtype)}}}}},
              {"output_desc", {desc("y", out, dtype)}}};
  return parseComposite(doc.dump(), op + ".json");
}

Json axisAttr(Json axis, bool keep = false) {
  return Json::array({{{"name", "axis"}, {"value", axis}}, {{"name", "keep_dims"}, {"value", keep}}});
}

// Every element of the reference output within `rtol` of want(k, x).
void expectFormula(const Graph& g, const std::function<double(int64_t, const HostTensor&)>& want, double rtol) {
  std::vector<HostTensor> in = makeRandomInputs(g, 5);
  HostTensor got = evaluateReference(g, in)[0];
  for (int64_t k = 0; k < got.size(); ++k) {
    double w = want(k, in[0]);
    ASSERT_NEAR(got.get(k).asDouble(), w, rtol * std::max(1.0, std::fabs(w))) << g.name << " element " << k;
  }
  CompiledGraph c = compileGraph(g, CompileOptions{});
  EXPECT_EQ(c.program.kernels.size(), 1u) << g.name;
  CpuCheckReport r = checkOnCpu(c, 3, 0, false);
  EXPECT_TRUE(r.ok) << r.message;
}

}  // namespace

TEST(Expansions, MatchTheirFormulas) {
  auto x = [](const HostTensor& t, int64_t k) { return t.get(k).asDouble(); };
  expectFormula(oneOp("ReLU", {40, 3}, {40, 3}, "float32", Json::array()),
                [&](int64_t k, const HostTensor& t) { return std::max(0.0, x(t, k)); }, 0);
  expectFormula(oneOp("Square", {40}, {40}, "int32", Json::array()),
                [&](int64_t k, const HostTensor& t) { return x(t, k) * x(t, k); }, 0);
  expectFormula(oneOp("Sigmoid", {40}, {40}, "float32", Json::array()),
                [&](int64_t k, const HostTensor& t) { return 1 / (1 + std::exp(-x(t, k))); }, 1e-6);
  expectFormula(oneOp("Softplus", {40}, {40}, "float32", Json::array()),
                [&](int64_t k, const HostTensor& t) { return std::log1p(std::exp(x(t, k))); }, 1e-6);
  expectFormula(oneOp("GeLU", {40}, {40}, "float32", Json::array()), [&](int64_t k, const HostTensor& t) {
    double v = x(t, k);
    return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  }, 1e-6);
  expectFormula(oneOp("Sigmoid", {40}, {40}, "float16", Json::array()),
                [&](int64_t k, const HostTensor& t) { return 1 / (1 + std::exp(-x(t, k))); }, 1e-3);
  // Means over axis 1 of [6, 50] and over everything (declared [1]).
  expectFormula(oneOp("ReduceMean", {6, 50}, {6}, "float32", axisAttr({1})), [&](int64_t k, const HostTensor& t) {
    double s = 0;
    for (int j = 0; j < 50; ++j) s += x(t, k * 50 + j);
    return s / 50;
  }, 1e-6);
  expectFormula(oneOp("ReduceMean", {6, 50}, {1}, "float16", axisAttr(Json::array())), [&](int64_t, const HostTensor& t) {
    double s = 0;
    for (int j = 0; j < 300; ++j) s += x(t, j);
    return s / 300;
  }, 2e-3);
  // Softmax and LogSoftmax over the last axis (default) and over axis 0.
  auto softmax = [&](const HostTensor& t, int64_t k, int64_t rows, int64_t cols, bool overRows, bool log) {
    int64_t r = k / cols, c = k % cols, n = overRows ? rows : cols;
    auto at = [&](int64_t i) { return overRows ? x(t, i * cols + c) : x(t, r * cols + i); };
    double m = -INFINITY, s = 0;
    for (int64_t i = 0; i < n; ++i) m = std::max(m, at(i));
    for (int64_t i = 0; i < n; ++i) s += std::exp(at(i) - m);
    return log ? x(t, k) - m - std::log(s) : std::exp(x(t, k) - m) / s;
  };
  expectFormula(oneOp("Softmax", {8, 100}, {8, 100}, "float32", Json::array()),
                [&](int64_t k, const HostTensor& t) { return softmax(t, k, 8, 100, false, false); }, 1e-6);
  expectFormula(oneOp("Softmax", {64, 10}, {64, 10}, "float32", axisAttr(0)),
                [&](int64_t k, const HostTensor& t) { return softmax(t, k, 64, 10, true, false); }, 1e-6);
  expectFormula(oneOp("LogSoftmax", {8, 100}, {8, 100}, "float32", axisAttr({-1})),
                [&](int64_t k, const HostTensor& t) { return softmax(t, k, 8, 100, false, true); }, 1e-6);
}

TEST(Expansions, RefuseIntegerFloatMathWithTheReason) {
  try {
    oneOp("Softmax", {4, 4}, {4, 4}, "int32", Json::array());
    FAIL() << "an int32 Softmax was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Softmax.json: op 'Softmax #0': Softmax takes a float input"), std::string::npos)
        << e.what();
  }
}
