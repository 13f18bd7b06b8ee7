// Kernel artifacts (driver/artifacts): what `polyred compile FILE -o DIR` writes -- the
// CUDA sources with the device headers they include, CUBINs, a launch manifest that
// names every parameter and workspace, and test data -- and POLYRED_DUMP_CUDA on the
// compile path (no GPU). tests/loader_test.sh launches such artifacts on the GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "driver/artifacts.h"
#include "frontend/composite_reader.h"
#include "parallel_graphs.h"

namespace polyred {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

struct TempDir {
  TempDir() : path(fs::temp_directory_path() / ("polyred-artifacts-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
  fs::path path;
};

Json readJson(const fs::path& p) {
  std::ifstream in(p);
  return Json::parse(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
}

TEST(Artifacts, ManifestDescribesEveryLaunchParameterAndWorkspace) {
  TempDir dir;
  CompileOptions options;
  options.deterministic = true;
  CompiledGraph c = compileGraph(testgraphs::fourIndependentParts(), options);
  ArtifactOptions a;
  a.testData = true;
  writeArtifacts(c, options, dir.path, a);
  Json m = readJson(dir.path / "manifest.json");
  EXPECT_EQ(m["format"], "polyred-launch-manifest");
  EXPECT_EQ(m["version"], 1);
  EXPECT_EQ(m["target"]["arch"], "sm_90");
  EXPECT_EQ(m["deterministic"], true);
  EXPECT_EQ(m["graph"]["sha256"].get<std::string>().size(), 64u);
  ASSERT_EQ(m["inputs"].size(), c.graph.inputs.size());
  ASSERT_EQ(m["outputs"].size(), c.graph.outputs.size());
  ASSERT_EQ(m["launches"].size(), c.program.kernels.size());
  for (size_t l = 0; l < c.program.kernels.size(); ++l) {
    const KernelSpec& k = c.program.kernels[l];
    const Json& j = m["launches"][l];
    EXPECT_EQ(j["name"], k.name);
    EXPECT_EQ(j["grid"][0], k.launch.grid[0]);
    EXPECT_EQ(j["block"][0], k.launch.block[0]);
    ASSERT_EQ(j["params"].size(), k.params.size());
    ASSERT_EQ(j["workspaces"].size(), k.workspaces.size());
    EXPECT_EQ(j["parts"].size(), k.parts.size());
    for (const char* file : {"source", "cubin"}) {
      fs::path p = dir.path / j[file].get<std::string>();
      EXPECT_TRUE(fs::is_regular_file(p) && fs::file_size(p) > 0) << p;
    }
    std::ifstream source(dir.path / j["source"].get<std::string>());
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(source), std::istreambuf_iterator<char>()), k.source);
  }
  for (const char* header :
       {"polyred_elementwise.cuh", "polyred_reduce.cuh", "polyred_block_reduce.cuh", "polyred_reduce_layout.cuh"})
    EXPECT_TRUE(fs::exists(dir.path / header)) << header;
  // Test data: one raw file per input and output, of the tensor's byte size.
  for (size_t k = 0; k < c.graph.inputs.size(); ++k) {
    const Tensor& t = c.graph.tensor(c.graph.inputs[k]);
    EXPECT_EQ(static_cast<int64_t>(fs::file_size(dir.path / m["test"]["inputs"][k].get<std::string>())),
              numElements(t.shape) * dtypeBytes(t.dtype));
  }
  for (size_t k = 0; k < c.graph.outputs.size(); ++k) {
    const Tensor& t = c.graph.tensor(c.graph.outputs[k].tensor);
    const Json& e = m["test"]["expected"][k];
    EXPECT_EQ(static_cast<int64_t>(fs::file_size(dir.path / e["file"].get<std::string>())),
              numElements(t.shape) * dtypeBytes(t.dtype));
    EXPECT_GE(e["rtol"].get<double>(), 0.0);
  }
}

TEST(Artifacts, InPlaceOutputsNameTheirInput) {
  CompiledGraph c = compileGraph(
      readCompositeFile(std::string(POLYRED_SOURCE_DIR) +
                        "/tests/data/akg/deep_fm/level0/"
                        "Fused_Mul_Sub_ReduceSum_split_Mul_ReduceSum_InplaceAssign_atomic_add_parallel_7426077862892796549.info"),
      CompileOptions{});
  Json m = Json::parse(launchManifest(c, CompileOptions{}));
  int inPlace = 0;
  for (size_t o = 0; o < c.graph.outputs.size(); ++o) {
    const Json& j = m["outputs"][o];
    if (c.graph.outputs[o].aliasOfInput) {
      ++inPlace;
      EXPECT_EQ(c.graph.inputs.at(j["in_place_of_input"].get<size_t>()), *c.graph.outputs[o].aliasOfInput);
    } else {
      EXPECT_TRUE(j["in_place_of_input"].is_null());
    }
  }
  EXPECT_GT(inPlace, 0);
}

TEST(Artifacts, DumpCudaWritesEveryKernelOnTheCompilePath) {
  TempDir dir;
  ASSERT_EQ(setenv("POLYRED_DUMP_CUDA", dir.path.c_str(), 1), 0);
  CompiledGraph c = compileGraph(testgraphs::fourIndependentParts(), CompileOptions{});
  unsetenv("POLYRED_DUMP_CUDA");
  ASSERT_TRUE(fs::is_directory(dir.path));
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) {
    ++files;
    EXPECT_EQ(e.path().extension(), ".cu");
    EXPECT_EQ(e.path().filename().string().rfind(c.program.kernels[0].name + "-", 0), 0u) << e.path();
  }
  EXPECT_EQ(files, c.program.kernels.size());
}

}  // namespace
}  // namespace polyred
