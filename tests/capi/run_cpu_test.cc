// The CPU target through the C API (polyred_run_cpu): a program's lowered kernels run on
// host buffers a caller owns, with the results torch would give -- checked here against
// values computed directly, for two row reductions, one with an elementwise producer.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "polyred/polyred.h"

namespace {

// y = sum(exp(x), axis 1) and z = max(x, axis 1) over a [3, 5] float32 input.
const std::string kRowSums = R"({"composite": true, "composite_graph": "rows", "id": 0, "op": "rows",
  "platform": "AKG", "process": "cuda",
  "input_desc": [[{"data_type": "float32", "format": "DefaultFormat", "shape": [3, 5], "tensor_name": "x"}]],
  "op_desc": [
    {"name": "Exp", "attr": null,
     "input_desc": [[{"data_type": "float32", "format": "DefaultFormat", "shape": [3, 5], "tensor_name": "x"}]],
     "output_desc": [{"data_type": "float32", "format": "DefaultFormat", "shape": [3, 5], "tensor_name": "e"}]},
    {"name": "ReduceSum", "attr": [{"name": "axis", "value": [1]}, {"name": "keep_dims", "value": false}],
     "input_desc": [[{"data_type": "float32", "format": "DefaultFormat", "shape": [3, 5], "tensor_name": "e"}]],
     "output_desc": [{"data_type": "float32", "format": "DefaultFormat", "shape": [3], "tensor_name": "y"}]},
    {"name": "ReduceMax", "attr": [{"name": "axis", "value": [1]}, {"name": "keep_dims", "value": false}],
     "input_desc": [[{"data_type": "float32", "format": "DefaultFormat", "shape": [3, 5], "tensor_name": "x"}]],
     "output_desc": [{"data_type": "float32", "format": "DefaultFormat", "shape": [3], "tensor_name": "z"}]}],
  "output_desc": [{"data_type": "float32", "format": "DefaultFormat", "shape": [3], "tensor_name": "y"},
                  {"data_type": "float32", "format": "DefaultFormat", "shape": [3], "tensor_name": "z"}]})";

TEST(CApiRunCpu, RunsTheLoweredKernelsOnHostBuffers) {
  polyred_program* p = nullptr;
  ASSERT_EQ(polyred_load_json(kRowSums.data(), kRowSums.size(), "rows", nullptr, &p), POLYRED_OK)
      << polyred_last_error();
  std::vector<float> x(15), y(3, -1.0f), z(3, -1.0f);
  for (int k = 0; k < 15; ++k) x[k] = 0.25f * static_cast<float>(k % 7) - 0.5f;
  const void* inputs[] = {x.data()};
  void* outputs[] = {y.data(), z.data()};
  ASSERT_EQ(polyred_run_cpu(p, inputs, outputs), POLYRED_OK) << polyred_last_error();
  for (int r = 0; r < 3; ++r) {
    double sum = 0;
    float max = -INFINITY;
    for (int c = 0; c < 5; ++c) {
      sum += std::exp(static_cast<double>(x[r * 5 + c]));
      max = std::fmax(max, x[r * 5 + c]);
    }
    EXPECT_NEAR(y[r], sum, 1e-5 * sum) << "row " << r;
    EXPECT_EQ(z[r], max) << "row " << r;
  }
  polyred_program_free(p);
}

TEST(CApiRunCpu, RefusesNullArguments) {
  polyred_program* p = nullptr;
  ASSERT_EQ(polyred_load_json(kRowSums.data(), kRowSums.size(), "rows", nullptr, &p), POLYRED_OK);
  EXPECT_EQ(polyred_run_cpu(nullptr, nullptr, nullptr), POLYRED_BAD_INPUT);
  EXPECT_EQ(polyred_run_cpu(p, nullptr, nullptr), POLYRED_BAD_INPUT);
  std::vector<float> x(15);
  const void* inputs[] = {x.data()};
  void* outputs[] = {nullptr, nullptr};
  EXPECT_EQ(polyred_run_cpu(p, inputs, outputs), POLYRED_BAD_INPUT);
  EXPECT_NE(std::string(polyred_last_error()).find("output 0 is a null pointer"), std::string::npos);
  polyred_program_free(p);
}

}  // namespace
