#include "driver/artifacts.h"

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "codegen/device_sources.h"
#include "interp/compare.h"
#include "interp/random_inputs.h"
#include "interp/reference.h"
#include "runtime/kernel_cache.h"
#include "runtime/register_fit.h"
#include "support/error.h"

namespace polyred {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

void writeFile(const fs::path& path, const void* data, size_t bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out) throw Error(path.string(), "", "cannot write this file");
}
void writeFile(const fs::path& path, const std::string& text) { writeFile(path, text.data(), text.size()); }

Json tensorJson(const Graph& g, TensorId id) {
  const Tensor& t = g.tensor(id);
  return {{"name", t.name}, {"dtype", std::string(dtypeName(t.dtype))}, {"shape", t.shape}};
}

std::string paramKind(KernelParam::Kind k) {
  switch (k) {
    case KernelParam::Kind::Input: return "input";
    case KernelParam::Kind::Output: return "output";
    case KernelParam::Kind::Workspace: return "workspace";
    case KernelParam::Kind::Temporary: return "temporary";
  }
  return "?";
}

std::string hex(const std::vector<uint8_t>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) (s += digits[b >> 4]) += digits[b & 15];
  return s;
}

std::string archOf(const Target& t) { return "sm_" + std::to_string(t.ccMajor) + std::to_string(t.ccMinor); }

Json kernelJson(const KernelSpec& k) {
  Json params = Json::array(), workspaces = Json::array(), parts = Json::array(), zeroed = Json::array();
  for (const KernelParam& p : k.params) params.push_back({{"kind", paramKind(p.kind)}, {"index", p.index}});
  for (const WorkspaceSpec& w : k.workspaces)
    workspaces.push_back({{"bytes", w.bytes}, {"fill_pattern_hex", hex(w.initPattern)}});
  for (const LaunchPart& p : k.parts)
    parts.push_back({{"kernel", p.kernel}, {"first_block", p.firstBlock}, {"blocks", p.blocks}});
  for (const OutputInit& z : k.initFirst)
    zeroed.push_back(
        {{"output", z.output}, {"bytes", z.bytes}, {"copy_of_input", z.fromInput}, {"temporary", z.temporary}});
  return {{"name", k.name},
          {"source", k.name + ".cu"},
          {"cubin", k.name + ".cubin"},
          {"grid", k.launch.grid},
          {"block", k.launch.block},
          {"dynamic_shared_bytes", k.launch.dynamicSharedBytes},
          {"params", params},
          {"workspaces", workspaces},
          {"parts", parts},
          {"init_outputs_first", zeroed}};
}

// Seeded inputs, the reference outputs and their tolerances, as raw files in dir/test.
Json writeTestData(const CompiledGraph& c, const fs::path& dir, uint64_t seed) {
  const Graph& g = c.graph;
  int64_t elements = 0;
  for (const Tensor& t : g.tensors) elements += numElements(t.shape);
  if (elements > kMaxTestElements)
    throw Error(g.sourceFile, "", "--test-data: the graph has " + std::to_string(elements) + " elements, more than " +
                                      std::to_string(kMaxTestElements) + " (test data would be too large)");
  fs::create_directories(dir / "test");
  std::vector<HostTensor> inputs = makeRandomInputs(g, seed);
  std::vector<HostTensor> expected = evaluateReference(g, inputs);
  Json ins = Json::array(), outs = Json::array();
  for (size_t k = 0; k < inputs.size(); ++k) {
    std::string name = "test/input" + std::to_string(k) + ".bin";
    writeFile(dir / name, inputs[k].data(), inputs[k].bytes.size());
    ins.push_back(name);
  }
  for (size_t k = 0; k < expected.size(); ++k) {
    std::string name = "test/expected" + std::to_string(k) + ".bin";
    writeFile(dir / name, expected[k].data(), expected[k].bytes.size());
    const TensorId t = g.outputs[k].tensor;
    Tolerance tol = toleranceOf(g, t);
    outs.push_back({{"file", name}, {"rtol", tol.rtol}, {"atol", tol.atol}});
  }
  return {{"seed", seed}, {"inputs", ins}, {"expected", outs},
          {"comparison", "|got - expected| <= atol + rtol * |expected|; NaN matches NaN; integers and bool exactly"}};
}

Json manifestJson(const CompiledGraph& c, const CompileOptions& options) {
  const Graph& g = c.graph;
  Json inputs = Json::array(), outputs = Json::array(), temporaries = Json::array(), kernels = Json::array();
  for (TensorId id : g.inputs) inputs.push_back(tensorJson(g, id));
  for (const Output& o : g.outputs) {
    Json j = tensorJson(g, o.tensor);
    j["in_place_of_input"] = o.aliasOfInput ? Json(g.inputIndex(*o.aliasOfInput)) : Json(nullptr);
    outputs.push_back(std::move(j));
  }
  for (const TemporarySpec& t : c.program.temporaries)
    temporaries.push_back({{"bytes", t.bytes}, {"zero_when_allocated", t.zeroWhenAllocated}});
  for (const KernelSpec& k : c.program.kernels) kernels.push_back(kernelJson(k));
  Json copies = Json::array();
  for (const OutputCopy& copy : c.program.copiesAfter)
    copies.push_back({{"temporary", copy.temporary}, {"output", copy.output}, {"bytes", copy.bytes}});
  Json m = {{"format", "polyred-launch-manifest"},
            {"version", 1},
            {"graph", {{"name", g.name}, {"sha256", sha256Hex(g.toString())}}},
            {"target", {{"arch", archOf(options.target)}, {"sm_count_assumed", options.target.smCount},
                        {"l2_bytes_assumed", options.target.l2Bytes}}},
            {"deterministic", options.deterministic},
            {"fast_exp", options.fastExp},
            {"inputs", inputs},
            {"outputs", outputs},
            {"temporaries", temporaries},
            {"launches", kernels},
            {"copies_after", copies},
            {"launch_rules",
             "launch in order on one stream; pointer parameters only, in `params` order; allocate each workspace "
             "once per stream, fill it with its pattern (repeated; empty = zeros) before the first launch, never "
             "again; before a launch, set each of its init_outputs_first (zeros, or a copy of an input); an in-place output is "
             "passed as its input's pointer; after the last launch, copy each of copies_after (a temporary into an "
             "output)"}};
  return m;
}

}  // namespace

std::string launchManifest(const CompiledGraph& c, const CompileOptions& options) {
  return manifestJson(c, options).dump(1) + "\n";
}

void writeArtifacts(const CompiledGraph& c, const CompileOptions& options, const fs::path& dir,
                    const ArtifactOptions& artifacts) {
  if (!c.symbolic.symbols.empty())
    throw Error(c.graph.sourceFile, "", "writing the artifacts of a graph with size symbols is not supported yet");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) throw Error(dir.string(), "", "cannot create the output directory");
  for (const DeviceSource& h : deviceSources()) writeFile(dir / h.name, h.text);
  for (const KernelSpec& k : c.program.kernels) {
    writeFile(dir / (k.name + ".cu"), k.source);
    if (!artifacts.cubin) continue;
    KernelCache::Cubin cubin =
        fitRegisters(k, options.target.ccMajor, options.target.ccMinor, through(KernelCache::global())).cubin;
    writeFile(dir / (k.name + ".cubin"), cubin->data(), cubin->size());
  }
  Json manifest = manifestJson(c, options);
  if (!artifacts.cubin)
    for (Json& k : manifest["launches"]) k["cubin"] = nullptr;
  if (artifacts.testData) manifest["test"] = writeTestData(c, dir, artifacts.seed);
  writeFile(dir / "manifest.json", manifest.dump(1) + "\n");
}

void dumpCudaFromEnvironment(const Program& program) {
  const char* dir = std::getenv("POLYRED_DUMP_CUDA");
  if (!dir || !*dir) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  for (const KernelSpec* k : compiledKernels(program)) {
    fs::path path = fs::path(dir) / (k->name + "-" + sha256Hex(k->source).substr(0, 16) + ".cu");
    std::ofstream out(path, std::ios::trunc);
    out << k->source;
    if (!out) throw Error("POLYRED_DUMP_CUDA", "", "cannot write " + path.string());
  }
}

}  // namespace polyred
