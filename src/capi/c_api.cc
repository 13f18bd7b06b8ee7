// The C API (include/polyred/polyred.h) over the driver: every entry point catches what
// the C++ layers throw and turns it into a status code and a per-thread message, in
// the same classes as the CLI's exit codes (driver/outcome.h).
#include "polyred/polyred.h"

#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "driver/cpu_check.h"
#include "driver/gpu_run.h"
#include "driver/pipeline.h"
#include "frontend/composite_reader.h"
#include "runtime/executor.h"
#include "support/error.h"
#include "support/printable.h"

struct polyred_program {
  polyred::CompiledGraph compiled;
  bool deterministic = false;
  std::vector<polyred_tensor_info> inputs, outputs;
  std::mutex loading;                                // guards `loaded`
  std::unique_ptr<polyred::CompiledProgram> loaded;  // on the GPU, at the first launch
};

namespace {

using namespace polyred;

thread_local std::string lastError;

polyred_status fail(polyred_status s, const std::string& message) {
  lastError = printable(message, 4096);
  return s;
}

// Runs `body`, mapping exceptions to statuses: the boundary no exception crosses.
template <class F>
polyred_status guarded(F&& body) noexcept {
  try {
    lastError.clear();
    return body();
  } catch (const NoGpuError& e) {
    return fail(POLYRED_NO_GPU, std::string("no usable GPU: ") + e.what());
  } catch (const InternalError& e) {
    return fail(POLYRED_INTERNAL, std::string("internal error (a polyred bug): ") + e.what());
  } catch (const Error& e) {
    return fail(POLYRED_BAD_INPUT, e.what());
  } catch (const std::bad_alloc&) {
    return fail(POLYRED_BAD_INPUT, "out of host memory");
  } catch (const std::exception& e) {
    return fail(POLYRED_INTERNAL, std::string("internal error (a polyred bug): ") + e.what());
  } catch (...) {
    return fail(POLYRED_INTERNAL, "internal error (a polyred bug): unknown exception");
  }
}

CompileOptions compileOptions(const polyred_options* given) {
  polyred_options o;
  polyred_default_options(&o);
  if (given) o = *given;
  CompileOptions c;
  c.deterministic = o.deterministic != 0;
  c.horizontalFusion = o.horizontal_fusion != 0;
  c.target.ccMajor = o.cc_major;
  c.target.ccMinor = o.cc_minor;
  c.target.smCount = o.sm_count;
  c.target.name = "sm_" + std::to_string(o.cc_major) + std::to_string(o.cc_minor) + " (given)";
  if (o.cc_major == 0 || o.sm_count == 0) {  // 0: the current GPU's
    const Target current = currentTarget();  // throws NoGpuError without a GPU
    if (o.cc_major == 0) {
      c.target.ccMajor = current.ccMajor;
      c.target.ccMinor = current.ccMinor;
      c.target.name = current.name;
    }
    if (o.sm_count == 0) c.target.smCount = current.smCount;
  }
  return c;
}

polyred_tensor_info infoOf(const Graph& g, TensorId id, int inPlaceOf) {
  const Tensor& t = g.tensor(id);
  return {t.name.c_str(), static_cast<polyred_dtype>(t.dtype), static_cast<int>(t.shape.size()), t.shape.data(),
          inPlaceOf};
}

polyred_status finishLoad(Graph g, const polyred_options* options, polyred_program** out) {
  auto p = std::make_unique<polyred_program>();
  const CompileOptions o = compileOptions(options);
  p->compiled = compileGraph(g, o);
  p->deterministic = o.deterministic;
  const Graph& graph = p->compiled.graph;
  for (TensorId id : graph.inputs) p->inputs.push_back(infoOf(graph, id, -1));
  for (const Output& o : graph.outputs)
    p->outputs.push_back(infoOf(graph, o.tensor, o.aliasOfInput ? graph.inputIndex(*o.aliasOfInput) : -1));
  *out = p.release();
  return POLYRED_OK;
}

}  // namespace

extern "C" {

const char* polyred_version(void) { return POLYRED_VERSION; }
int polyred_api_version(void) { return POLYRED_API_VERSION; }
const char* polyred_last_error(void) { return lastError.c_str(); }

void polyred_default_options(polyred_options* o) {
  if (!o) return;
  o->deterministic = 0;
  o->horizontal_fusion = 1;
  o->cc_major = 9;
  o->cc_minor = 0;
  o->sm_count = 132;
}

size_t polyred_dtype_size(polyred_dtype t) {
  if (t < POLYRED_BOOL || t > POLYRED_FLOAT64) return 0;
  return static_cast<size_t>(dtypeBytes(static_cast<DType>(t)));
}

const char* polyred_dtype_name(polyred_dtype t) {
  if (t < POLYRED_BOOL || t > POLYRED_FLOAT64) return "unknown";
  return dtypeName(static_cast<DType>(t)).data();  // names are string literals
}

polyred_status polyred_load_file(const char* path, const polyred_options* options, polyred_program** program) {
  return guarded([&] {
    if (!path || !program) return fail(POLYRED_BAD_INPUT, "polyred_load_file: null argument");
    *program = nullptr;
    return finishLoad(readCompositeFile(path), options, program);
  });
}

polyred_status polyred_load_json(const char* json, size_t length, const char* label, const polyred_options* options,
                                 polyred_program** program) {
  return guarded([&] {
    if (!json || !program) return fail(POLYRED_BAD_INPUT, "polyred_load_json: null argument");
    *program = nullptr;
    return finishLoad(parseComposite(std::string(json, length), label ? label : "<memory>"), options, program);
  });
}

void polyred_program_free(polyred_program* program) { delete program; }

int polyred_num_inputs(const polyred_program* p) { return p ? static_cast<int>(p->inputs.size()) : -1; }
int polyred_num_outputs(const polyred_program* p) { return p ? static_cast<int>(p->outputs.size()) : -1; }
int polyred_num_launches(const polyred_program* p) { return p ? static_cast<int>(p->compiled.program.kernels.size()) : -1; }

const char* polyred_cuda_source(const polyred_program* p, int index) {
  if (!p || index < 0 || index >= polyred_num_launches(p)) return nullptr;
  return p->compiled.program.kernels[static_cast<size_t>(index)].source.c_str();
}

static polyred_status tensorInfo(const std::vector<polyred_tensor_info>& list, const char* what, int index,
                                 polyred_tensor_info* info) {
  if (!info) return fail(POLYRED_BAD_INPUT, std::string(what) + ": null info");
  if (index < 0 || static_cast<size_t>(index) >= list.size())
    return fail(POLYRED_BAD_INPUT, std::string(what) + ": index " + std::to_string(index) + " out of range [0, " +
                                       std::to_string(list.size()) + ")");
  *info = list[static_cast<size_t>(index)];
  return POLYRED_OK;
}

polyred_status polyred_input_info(const polyred_program* p, int index, polyred_tensor_info* info) {
  if (!p) return fail(POLYRED_BAD_INPUT, "polyred_input_info: null program");
  return tensorInfo(p->inputs, "polyred_input_info", index, info);
}

polyred_status polyred_output_info(const polyred_program* p, int index, polyred_tensor_info* info) {
  if (!p) return fail(POLYRED_BAD_INPUT, "polyred_output_info: null program");
  return tensorInfo(p->outputs, "polyred_output_info", index, info);
}

polyred_status polyred_launch(polyred_program* p, void* const* inputs, void* const* outputs, void* stream) {
  return guarded([&] {
    if (!p) return fail(POLYRED_BAD_INPUT, "polyred_launch: null program");
    if ((!inputs && !p->inputs.empty()) || (!outputs && !p->outputs.empty()))
      return fail(POLYRED_BAD_INPUT, "polyred_launch: null pointer array");
    std::vector<void*> in(inputs, inputs + p->inputs.size()), out(outputs, outputs + p->outputs.size());
    for (size_t k = 0; k < in.size(); ++k)
      if (!in[k]) return fail(POLYRED_BAD_INPUT, "polyred_launch: input " + std::to_string(k) + " is a null pointer");
    for (size_t k = 0; k < out.size(); ++k)
      if (!out[k]) return fail(POLYRED_BAD_INPUT, "polyred_launch: output " + std::to_string(k) + " is a null pointer");
    {
      std::lock_guard lock(p->loading);
      if (!p->loaded)
        p->loaded = std::make_unique<CompiledProgram>(CompiledProgram::load(p->compiled.program, currentDevice()));
    }
    p->loaded->launch(in, out, static_cast<CUstream>(stream));
    return POLYRED_OK;
  });
}

polyred_status polyred_check_cpu(const polyred_program* p, uint64_t seed, int64_t maxPoints) {
  return guarded([&] {
    if (!p) return fail(POLYRED_BAD_INPUT, "polyred_check_cpu: null program");
    CpuCheckOptions o;
    o.seed = seed;
    o.maxPoints = maxPoints;
    o.deterministic = p->deterministic;
    CpuCheckReport r = checkOnCpu(p->compiled, o);
    if (!r.ok) return fail(POLYRED_MISMATCH, r.message);
    lastError = printable(r.message, 4096);  // the comparison, for callers who want it
    return POLYRED_OK;
  });
}

}  // extern "C"
