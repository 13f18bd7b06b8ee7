// Test helpers for MindSpore ops read from composite JSON: a file with one op, its
// output checked against values written out in the test (from MindSpore's or
// PyTorch's definition, not polyred's own reference, which would only repeat the
// implementation) through the reference AND the lowered kernels on the CPU, and the
// kernels compiled with NVRTC.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "composite_test_helpers.h"  // desc()
#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/composite_reader.h"
#include "interp/reference.h"
#include "runtime/nvrtc.h"
#include "support/budget.h"

namespace polyred::test_support {

using Json = nlohmann::json;

inline Json attr(const std::string& name, Json value) { return {{"name", name}, {"value", std::move(value)}}; }

// A composite document with one op: the graph's input lists, the op's own (which may
// add a constant input, or group several tensors in one list as MindSpore does), its
// outputs (also the graph's) and attributes.
inline Json oneOpDocument(const std::string& op, const Json& graphInputs, const Json& opInputs, const Json& outputs,
                          Json attrs) {
  return {{"op", "Fused_" + op},
          {"input_desc", graphInputs},
          {"op_desc", {{{"name", op}, {"attr", std::move(attrs)}, {"input_desc", opInputs}, {"output_desc", outputs}}}},
          {"output_desc", outputs}};
}

// A composite file with one op over `inputs` (one input_desc list each), declaring its
// result `out`.
inline Graph oneOp(const std::string& op, const std::vector<Json>& inputs, const Json& out, Json attrs) {
  Json ins = Json::array();
  for (const Json& in : inputs) ins.push_back(Json::array({in}));
  return parseComposite(oneOpDocument(op, ins, ins, Json::array({out}), std::move(attrs)).dump(), op + ".json");
}

// The graph's output number `output` on `inputs`, by the reference and by the lowered
// kernels on the CPU; both must equal `expected` exactly (NaN matches NaN).
inline void expectOutput(const Graph& g, const std::vector<HostTensor>& inputs, const std::vector<double>& expected,
                         size_t output = 0) {
  CompiledGraph c = compileGraph(g, CompileOptions{});
  std::vector<HostTensor> reference = evaluateReference(g, inputs);
  Deadline unlimited = Deadline::none();
  CpuCheckOptions all;
  all.maxPoints = 0;
  LoweredRun lowered = runLoweredOnCpu(c, inputs, all, unlimited);
  ASSERT_EQ(reference.at(output).size(), static_cast<int64_t>(expected.size())) << g.name;
  auto same = [](double got, double want) { return got == want || (got != got && want != want); };
  for (size_t k = 0; k < expected.size(); ++k) {
    const double ref = reference[output].get(static_cast<int64_t>(k)).asDouble();
    const double low = lowered.outputs.at(output).get(static_cast<int64_t>(k)).asDouble();
    EXPECT_TRUE(same(ref, expected[k])) << g.name << " element " << k << ": reference " << ref << ", want " << expected[k];
    EXPECT_TRUE(same(low, expected[k])) << g.name << " element " << k << ": lowered " << low << ", want " << expected[k];
  }
  for (const KernelSpec& k : c.program.kernels) EXPECT_NO_THROW(compileCuda(k.source, k.name, 9, 0)) << k.source;
}

// `make` must throw a polyred::Error whose reason holds `words`; gives the whole message
// (file, op and reason) for further checks, or "" when nothing was thrown.
template <class Make>
std::string expectRejected(Make make, const std::string& words) {
  try {
    make();
  } catch (const Error& e) {
    EXPECT_NE(e.reason().find(words), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted; wanted an error with " << words;
  return "";
}

// One kernel that compiles with NVRTC and passes the CPU check on random inputs.
inline void expectCheckPasses(const Graph& g) {
  CompiledGraph c = compileGraph(g, CompileOptions{});
  EXPECT_EQ(c.program.kernels.size(), 1u) << g.name;
  for (const KernelSpec& k : c.program.kernels) EXPECT_NO_THROW(compileCuda(k.source, k.name, 9, 0)) << k.source;
  CpuCheckReport r = checkOnCpu(c, 7, 0, false);
  EXPECT_TRUE(r.ok) << g.name << "\n" << r.message;
}

}  // namespace polyred::test_support
