// The C API (include/polyred/polyred.h, libpolyred.so) as a C user meets it: statuses
// and messages for every misuse, program queries, the CPU check, and launches that
// say why without a GPU. Linked against the shared library, not the compiler's
// internals.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "polyred/polyred.h"

namespace {

const std::string kSg09 = std::string(POLYRED_SOURCE_DIR) + "/examples/table2/sg09_sum_sum.json";

std::string lastError() { return polyred_last_error(); }

TEST(CApi, MisuseGivesStatusesAndMessages) {
  polyred_program* p = nullptr;
  EXPECT_EQ(polyred_load_file(nullptr, nullptr, &p), POLYRED_BAD_INPUT);
  EXPECT_NE(lastError().find("null argument"), std::string::npos);
  EXPECT_EQ(polyred_load_json("{", 1, "snippet.json", nullptr, &p), POLYRED_BAD_INPUT);
  EXPECT_NE(lastError().find("snippet.json"), std::string::npos);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(polyred_load_file("/nonexistent/file.json", nullptr, &p), POLYRED_BAD_INPUT);
  EXPECT_NE(lastError().find("/nonexistent/file.json"), std::string::npos);
  polyred_tensor_info info;
  EXPECT_EQ(polyred_input_info(nullptr, 0, &info), POLYRED_BAD_INPUT);
  EXPECT_EQ(polyred_launch(nullptr, nullptr, nullptr, nullptr), POLYRED_BAD_INPUT);
  EXPECT_EQ(polyred_num_inputs(nullptr), -1);
  EXPECT_EQ(polyred_cuda_source(nullptr, 0), nullptr);
  EXPECT_EQ(polyred_dtype_size(static_cast<polyred_dtype>(42)), 0u);
  EXPECT_STREQ(polyred_dtype_name(POLYRED_BFLOAT16), "bfloat16");
  // The unsigned types appended after complex64 (the values are stable).
  EXPECT_EQ(polyred_dtype_size(POLYRED_UINT16), 2u);
  EXPECT_EQ(polyred_dtype_size(POLYRED_UINT32), 4u);
  EXPECT_EQ(polyred_dtype_size(POLYRED_UINT64), 8u);
  EXPECT_STREQ(polyred_dtype_name(POLYRED_UINT32), "uint32");
  EXPECT_STREQ(polyred_dtype_name(static_cast<polyred_dtype>(13)), "unknown");
}

TEST(CApi, LoadsQueriesAndChecksAProgram) {
  polyred_program* p = nullptr;
  ASSERT_EQ(polyred_load_file(kSg09.c_str(), nullptr, &p), POLYRED_OK) << lastError();
  ASSERT_EQ(polyred_num_inputs(p), 2);
  ASSERT_EQ(polyred_num_outputs(p), 2);
  EXPECT_EQ(polyred_num_launches(p), 1);
  polyred_tensor_info in, out;
  ASSERT_EQ(polyred_input_info(p, 1, &in), POLYRED_OK);
  EXPECT_EQ(in.dtype, POLYRED_FLOAT32);
  ASSERT_EQ(in.rank, 2);
  EXPECT_EQ(in.shape[0], 8192);
  EXPECT_EQ(in.shape[1], 768);
  ASSERT_EQ(polyred_output_info(p, 0, &out), POLYRED_OK);
  EXPECT_EQ(out.rank, 1);
  EXPECT_EQ(out.in_place_of_input, -1);
  EXPECT_EQ(polyred_output_info(p, 2, &out), POLYRED_BAD_INPUT);
  EXPECT_NE(lastError().find("out of range"), std::string::npos);
  EXPECT_NE(std::string(polyred_cuda_source(p, 0)).find("__global__"), std::string::npos);
  EXPECT_EQ(polyred_check_cpu(p, 1, 1 << 14), POLYRED_OK) << lastError();
  void* none[2] = {nullptr, nullptr};
  EXPECT_EQ(polyred_launch(p, none, none, nullptr), POLYRED_BAD_INPUT);
  EXPECT_NE(lastError().find("null pointer"), std::string::npos);
  polyred_program_free(p);
}

// A check's report has one line per output through the C API, as the CLI prints it;
// a name's own line break and tab stay escaped inside its line.
TEST(CApi, CheckReportsKeepOneLinePerOutput) {
  const std::string json = R"({"op": "three_reductions",
    "input_desc": [[{"tensor_name": "x", "data_type": "float32", "shape": [64, 48], "format": "DefaultFormat"}]],
    "op_desc": [
      {"name": "ReduceSum", "attr": [{"name": "axis", "value": [0]}, {"name": "keep_dims", "value": false}],
       "input_desc": [[{"tensor_name": "x", "data_type": "float32", "shape": [64, 48]}]],
       "output_desc": [{"tensor_name": "cols", "data_type": "float32", "shape": [48]}]},
      {"name": "ReduceSum", "attr": [{"name": "axis", "value": [1]}, {"name": "keep_dims", "value": false}],
       "input_desc": [[{"tensor_name": "x", "data_type": "float32", "shape": [64, 48]}]],
       "output_desc": [{"tensor_name": "rows\n  output %forged: ok\t", "data_type": "float32", "shape": [64]}]},
      {"name": "ReduceMax", "attr": {},
       "input_desc": [[{"tensor_name": "x", "data_type": "float32", "shape": [64, 48]}]],
       "output_desc": [{"tensor_name": "top", "data_type": "float32", "shape": []}]}],
    "output_desc": [{"tensor_name": "cols", "data_type": "float32", "shape": [48]},
                    {"tensor_name": "rows\n  output %forged: ok\t", "data_type": "float32", "shape": [64]},
                    {"tensor_name": "top", "data_type": "float32", "shape": []}]})";
  polyred_program* p = nullptr;
  ASSERT_EQ(polyred_load_json(json.data(), json.size(), "three_reductions.json", nullptr, &p), POLYRED_OK)
      << lastError();
  ASSERT_EQ(polyred_check_cpu(p, 1, 0), POLYRED_OK) << lastError();
  const std::string report = lastError();
  polyred_program_free(p);
  std::vector<std::string> lines;
  for (size_t start = 0, end; (end = report.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(report.substr(start, end - start));
  ASSERT_EQ(lines.size(), 3u) << report;
  EXPECT_EQ(lines[0].rfind("  output %cols: ok (", 0), 0u) << report;
  EXPECT_EQ(lines[1].rfind("  output %rows%0A  output %forged: ok%09: ok (", 0), 0u) << report;
  EXPECT_EQ(lines[2].rfind("  output %top: ok (", 0), 0u) << report;
  for (char c : report) EXPECT_TRUE(c == '\n' || (c >= 0x20 && c <= 0x7e)) << static_cast<int>(c);
}

TEST(CApi, WithoutAGpuLaunchesSayWhy) {
  polyred_options o;
  polyred_default_options(&o);
  o.deterministic = 1;
  polyred_program* p = nullptr;
  ASSERT_EQ(polyred_load_file(kSg09.c_str(), &o, &p), POLYRED_OK) << lastError();
  void* fake[2] = {reinterpret_cast<void*>(256), reinterpret_cast<void*>(512)};
  polyred_status s = polyred_launch(p, fake, fake, nullptr);
  polyred_program_free(p);
  if (s != POLYRED_NO_GPU) GTEST_SKIP() << "a GPU is present (status " << s << ")";
  EXPECT_NE(lastError().find("no usable GPU"), std::string::npos);
  o.cc_major = 0;  // the current GPU's target: needs one
  EXPECT_EQ(polyred_load_file(kSg09.c_str(), &o, &p), POLYRED_NO_GPU);
}

}  // namespace

namespace {

// Sharding through the C API: the plan, the CPU simulation, and bad shardings named.
TEST(CApi, ShardsAProgramAndSimulatesIt) {
  polyred_program* p = nullptr;
  ASSERT_EQ(polyred_load_file(kSg09.c_str(), nullptr, &p), POLYRED_OK) << lastError();
  polyred_sharded* s = nullptr;
  const int64_t sizes[] = {100, 668};
  // sg09 sums both [8192, 768] inputs over axis 0: split the kept axis 1, unevenly.
  polyred_input_shard shards[] = {{"input_0", 1, sizes}, {"input_1", 1, sizes}};
  ASSERT_EQ(polyred_shard(p, 2, shards, 2, &s), POLYRED_OK) << lastError();
  EXPECT_NE(std::string(polyred_sharded_plan(s)).find("sharded over 2 ranks, sizes 100 668"), std::string::npos)
      << polyred_sharded_plan(s);
  EXPECT_EQ(polyred_sharded_check_cpu(s, 3), POLYRED_OK) << lastError();
  polyred_sharded_free(s);
  // Split the reduced axis 0 evenly: one round of combines.
  polyred_input_shard rows[] = {{"input_0", 0, nullptr}, {"input_1", 0, nullptr}};
  ASSERT_EQ(polyred_shard(p, 4, rows, 2, &s), POLYRED_OK) << lastError();
  EXPECT_NE(std::string(polyred_sharded_plan(s)).find("all-reduce"), std::string::npos) << polyred_sharded_plan(s);
  EXPECT_EQ(polyred_sharded_check_cpu(s, 4), POLYRED_OK) << lastError();
  polyred_sharded_free(s);
  polyred_input_shard bad[] = {{"nope", 0, nullptr}};
  EXPECT_EQ(polyred_shard(p, 2, bad, 1, &s), POLYRED_BAD_INPUT);
  EXPECT_NE(lastError().find("'nope'"), std::string::npos) << lastError();
  polyred_input_shard tooMany[] = {{"input_0", 0, nullptr}, {"input_1", 0, nullptr}};
  EXPECT_EQ(polyred_shard(p, 9000, tooMany, 2, &s), POLYRED_BAD_INPUT);
  EXPECT_NE(lastError().find("more ranks than elements"), std::string::npos) << lastError();
  EXPECT_EQ(polyred_shard(p, 2, nullptr, 0, &s), POLYRED_BAD_INPUT);
  polyred_program_free(p);
}

}  // namespace

namespace {

const std::string kSymbolicSoftmax = std::string(POLYRED_SOURCE_DIR) + "/examples/symbolic/softmax_rows.json";

// A composite file with "shape": ["S", 768]: compiled once, its symbol and symbolic
// axes reported, checked and run on the CPU at several sizes; the sizeless entry points
// refuse it.
TEST(CApi, SymbolicProgramRunsAtManySizes) {
  polyred_program* p = nullptr;
  ASSERT_EQ(polyred_load_file(kSymbolicSoftmax.c_str(), nullptr, &p), POLYRED_OK) << lastError();
  ASSERT_EQ(polyred_num_symbols(p), 1);
  EXPECT_STREQ(polyred_symbol_name(p, 0), "S");
  EXPECT_EQ(polyred_symbol_name(p, 1), nullptr);
  polyred_tensor_info in;
  ASSERT_EQ(polyred_input_info(p, 0, &in), POLYRED_OK);
  ASSERT_EQ(in.rank, 2);
  EXPECT_EQ(in.shape[0], -1);
  EXPECT_EQ(in.shape[1], 768);
  polyred_tensor_symbols axes;
  ASSERT_EQ(polyred_input_symbols(p, 0, &axes), POLYRED_OK);
  ASSERT_NE(axes.shape_symbol, nullptr);
  EXPECT_EQ(axes.shape_symbol[0], 0);
  EXPECT_EQ(axes.shape_symbol[1], -1);
  EXPECT_EQ(axes.shape_coefficient[0], 1);
  ASSERT_EQ(polyred_output_symbols(p, 0, &axes), POLYRED_OK);
  EXPECT_EQ(axes.shape_symbol[0], 0);
  EXPECT_EQ(polyred_output_symbols(p, 1, &axes), POLYRED_BAD_INPUT);
  EXPECT_NE(std::string(polyred_cuda_source(p, 0)).find("const long long size_S"), std::string::npos);

  EXPECT_EQ(polyred_check_cpu(p, 1, 0), POLYRED_BAD_INPUT);
  EXPECT_NE(lastError().find("size symbols"), std::string::npos) << lastError();
  const int64_t negative = -1;
  EXPECT_EQ(polyred_check_cpu_sized(p, 1, 0, &negative, 1), POLYRED_BAD_INPUT);
  for (int64_t rows : {0, 1, 5, 33, 130}) {
    EXPECT_EQ(polyred_check_cpu_sized(p, 7, 0, &rows, 1), POLYRED_OK) << rows << ": " << lastError();
    // Rows of equal values: every softmax entry is 1/768.
    std::vector<float> x(static_cast<size_t>(rows) * 768, 2.5f), y(x.size(), -1.0f);
    const void* inputs[] = {x.data()};
    void* outputs[] = {y.data()};
    ASSERT_EQ(polyred_run_cpu_sized(p, inputs, outputs, &rows, 1), POLYRED_OK) << lastError();
    for (float v : y) ASSERT_NEAR(v, 1.0f / 768, 1e-6f);
  }
  polyred_program_free(p);
}

TEST(CApi, ConcreteProgramHasNoSymbols) {
  polyred_program* p = nullptr;
  ASSERT_EQ(polyred_load_file(kSg09.c_str(), nullptr, &p), POLYRED_OK) << lastError();
  EXPECT_EQ(polyred_num_symbols(p), 0);
  polyred_tensor_symbols axes;
  ASSERT_EQ(polyred_input_symbols(p, 0, &axes), POLYRED_OK);
  EXPECT_EQ(axes.shape_symbol, nullptr);
  EXPECT_EQ(axes.shape_coefficient, nullptr);
  const int64_t size = 4;
  EXPECT_EQ(polyred_check_cpu_sized(p, 1, 0, &size, 1), POLYRED_BAD_INPUT);
  polyred_program_free(p);
}

}  // namespace
