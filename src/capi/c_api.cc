// The C API (include/polyred/polyred.h) over the driver: every entry point catches what
// the C++ layers throw and turns it into a status code and a per-thread message, in
// the same classes as the CLI's exit codes (driver/outcome.h).
#include "polyred/polyred.h"

#include <cstring>
#include <exception>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "driver/cpu_check.h"
#include "driver/gpu_run.h"
#include "interp/random_inputs.h"
#include "interp/reference.h"
#include "driver/pipeline.h"
#include "driver/shard_check.h"
#include "driver/shard_run.h"
#include "multigpu/nccl_library.h"
#include "multigpu/sharded_runtime.h"
#include "frontend/composite_reader.h"
#include "ir/symbolic_dims.h"
#include "runtime/executor.h"
#include "runtime/nvrtc.h"
#include "support/error.h"
#include "support/printable.h"

struct polyred_program {
  polyred::CompiledGraph compiled;
  polyred::CompileOptions options;  // what it was compiled with (sharded programs reuse them)
  bool deterministic = false;
  std::vector<polyred_tensor_info> inputs, outputs;
  std::vector<polyred_tensor_symbols> inputSymbols, outputSymbols;  // {NULL, NULL} without symbols
  // A symbolic program's shapes (-1 at symbolic axes), symbols and coefficients per
  // axis, which its tensor infos point into.
  struct AxisInfo {
    std::vector<int64_t> shape, coefficient;
    std::vector<int> symbol;
  };
  std::deque<AxisInfo> axes;
  std::mutex loading;                                // guards `loaded`
  std::unique_ptr<polyred::CompiledProgram> loaded;  // on the GPU, at the first launch
};

namespace {

using namespace polyred;

thread_local std::string lastError;

constexpr size_t kMessageMax = 4096;

// An error: one printable line.
polyred_status fail(polyred_status s, const std::string& message) {
  lastError = printable(message, kMessageMax);
  return s;
}

// A report of several lines (a check's outputs, NVRTC's log): its line breaks stay;
// the names in it were made printable when it was built.
polyred_status report(polyred_status s, const std::string& message) {
  lastError = printableLines(message, kMessageMax);
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
  } catch (const CompileError& e) {
    return report(POLYRED_INTERNAL, std::string("internal error (a polyred bug): NVRTC rejected the generated code:\n") +
                                        e.what());
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
      c.target.l2Bytes = current.l2Bytes;
    }
    if (o.sm_count == 0) c.target.smCount = current.smCount;
  }
  return c;
}

// Appends tensor `id`'s info and symbols to `infos` and `symbols`. A symbolic
// program's come from its template (ir/symbolic_dims.h): -1 at symbolic axes, each
// axis's symbol and coefficient, kept in p.axes; other programs' from the graph, with
// {NULL, NULL} symbols.
void addTensor(polyred_program& p, TensorId id, int inPlaceOf, std::vector<polyred_tensor_info>& infos,
               std::vector<polyred_tensor_symbols>& symbols) {
  if (p.compiled.symbolic.symbols.empty()) {
    const Tensor& t = p.compiled.graph.tensor(id);
    infos.push_back({t.name.c_str(), static_cast<polyred_dtype>(t.dtype), static_cast<int>(t.shape.size()),
                     t.shape.data(), inPlaceOf});
    symbols.push_back({nullptr, nullptr});
    return;
  }
  const Tensor& t = p.compiled.symbolic.tensor(id);
  polyred_program::AxisInfo& a = p.axes.emplace_back();
  for (size_t k = 0; k < t.shape.size(); ++k) {
    const SymbolicDim d = t.symbolic.empty() ? SymbolicDim{} : t.symbolic[k];
    a.shape.push_back(d.isConstant() ? t.shape[k] : -1);
    a.symbol.push_back(d.symbol);
    a.coefficient.push_back(d.isConstant() ? 1 : d.coefficient);
  }
  infos.push_back({t.name.c_str(), static_cast<polyred_dtype>(t.dtype), static_cast<int>(t.shape.size()),
                   a.shape.data(), inPlaceOf});
  symbols.push_back({a.symbol.data(), a.coefficient.data()});
}

// The symbols' values a sized entry point was given, checked against the program's.
std::vector<int64_t> sizesOf(const polyred_program& p, const int64_t* sizes, int count, const std::string& what) {
  const size_t symbols = p.compiled.symbolic.symbols.size();
  if (count < 0 || (count > 0 && !sizes)) throw Error(what + ": bad size list");
  if (static_cast<size_t>(count) != symbols)
    throw Error(what + ": the program has " + std::to_string(symbols) + " size symbols but " + std::to_string(count) +
                " values were given" + (count == 0 ? " (call the _sized entry point with their values)" : ""));
  std::vector<int64_t> v(sizes, sizes + count);
  for (size_t k = 0; k < v.size(); ++k)
    if (v[k] < 0)
      throw Error(what + ": size " + p.compiled.symbolic.symbols[k] + " = " + std::to_string(v[k]) + " is negative");
  return v;
}

polyred_status finishLoad(Graph g, const polyred_options* options, polyred_program** out) {
  auto p = std::make_unique<polyred_program>();
  const CompileOptions o = compileOptions(options);
  p->compiled = compileGraph(g, o);
  p->deterministic = o.deterministic;
  p->options = o;
  const Graph& graph = p->compiled.symbolic.symbols.empty() ? p->compiled.graph : p->compiled.symbolic;
  for (TensorId id : graph.inputs) addTensor(*p, id, -1, p->inputs, p->inputSymbols);
  for (const Output& o : graph.outputs)
    addTensor(*p, o.tensor, o.aliasOfInput ? graph.inputIndex(*o.aliasOfInput) : -1, p->outputs, p->outputSymbols);
  *out = p.release();
  return POLYRED_OK;
}

// Entry `index` of a program's per-tensor list (tensor infos, their symbols) into *out.
template <typename Entry>
polyred_status tensorEntry(const std::vector<Entry>& list, const char* what, int index, Entry* out) {
  const char* noun = std::is_same_v<Entry, polyred_tensor_info> ? ": null info" : ": null symbols";
  if (!out) return fail(POLYRED_BAD_INPUT, std::string(what) + noun);
  if (index < 0 || static_cast<size_t>(index) >= list.size())
    return fail(POLYRED_BAD_INPUT, std::string(what) + ": index " + std::to_string(index) + " out of range [0, " +
                                       std::to_string(list.size()) + ")");
  *out = list[static_cast<size_t>(index)];
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
  if (t < POLYRED_BOOL || t > POLYRED_UINT64) return 0;
  return static_cast<size_t>(dtypeBytes(static_cast<DType>(t)));
}

const char* polyred_dtype_name(polyred_dtype t) {
  if (t < POLYRED_BOOL || t > POLYRED_UINT64) return "unknown";
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

polyred_status polyred_input_info(const polyred_program* p, int index, polyred_tensor_info* info) {
  if (!p) return fail(POLYRED_BAD_INPUT, "polyred_input_info: null program");
  return tensorEntry(p->inputs, "polyred_input_info", index, info);
}

polyred_status polyred_output_info(const polyred_program* p, int index, polyred_tensor_info* info) {
  if (!p) return fail(POLYRED_BAD_INPUT, "polyred_output_info: null program");
  return tensorEntry(p->outputs, "polyred_output_info", index, info);
}

polyred_status polyred_input_symbols(const polyred_program* p, int index, polyred_tensor_symbols* symbols) {
  if (!p) return fail(POLYRED_BAD_INPUT, "polyred_input_symbols: null program");
  return tensorEntry(p->inputSymbols, "polyred_input_symbols", index, symbols);
}

polyred_status polyred_output_symbols(const polyred_program* p, int index, polyred_tensor_symbols* symbols) {
  if (!p) return fail(POLYRED_BAD_INPUT, "polyred_output_symbols: null program");
  return tensorEntry(p->outputSymbols, "polyred_output_symbols", index, symbols);
}

polyred_status polyred_launch(polyred_program* p, void* const* inputs, void* const* outputs, void* stream) {
  return polyred_launch_sized(p, inputs, outputs, stream, nullptr, 0);
}

polyred_status polyred_launch_sized(polyred_program* p, void* const* inputs, void* const* outputs, void* stream,
                                    const int64_t* sizeValues, int numSizes) {
  return guarded([&] {
    if (!p) return fail(POLYRED_BAD_INPUT, "polyred_launch: null program");
    const std::vector<int64_t> sizes = sizesOf(*p, sizeValues, numSizes, "polyred_launch");
    if ((!inputs && !p->inputs.empty()) || (!outputs && !p->outputs.empty()))
      return fail(POLYRED_BAD_INPUT, "polyred_launch: null pointer array");
    const std::span<void* const> in(inputs, p->inputs.size()), out(outputs, p->outputs.size());
    for (size_t k = 0; k < in.size(); ++k)
      if (!in[k]) return fail(POLYRED_BAD_INPUT, "polyred_launch: input " + std::to_string(k) + " is a null pointer");
    for (size_t k = 0; k < out.size(); ++k)
      if (!out[k]) return fail(POLYRED_BAD_INPUT, "polyred_launch: output " + std::to_string(k) + " is a null pointer");
    {
      std::lock_guard lock(p->loading);
      if (!p->loaded)
        p->loaded = std::make_unique<CompiledProgram>(CompiledProgram::load(p->compiled.program, currentDevice()));
    }
    p->loaded->launch(in, out, static_cast<CUstream>(stream), sizes);
    return POLYRED_OK;
  });
}

polyred_status polyred_check_cpu(const polyred_program* p, uint64_t seed, int64_t maxPoints) {
  return polyred_check_cpu_sized(p, seed, maxPoints, nullptr, 0);
}

polyred_status polyred_check_cpu_sized(const polyred_program* p, uint64_t seed, int64_t maxPoints,
                                       const int64_t* sizeValues, int numSizes) {
  return guarded([&] {
    if (!p) return fail(POLYRED_BAD_INPUT, "polyred_check_cpu: null program");
    CpuCheckOptions o;
    o.sizes = sizesOf(*p, sizeValues, numSizes, "polyred_check_cpu");
    o.seed = seed;
    o.maxPoints = maxPoints;
    o.deterministic = p->deterministic;
    CpuCheckReport r = checkOnCpu(p->compiled, o);
    return report(r.ok ? POLYRED_OK : POLYRED_MISMATCH, r.message);  // the comparison either way
  });
}

polyred_status polyred_run_cpu(const polyred_program* p, const void* const* inputs, void* const* outputs) {
  return polyred_run_cpu_sized(p, inputs, outputs, nullptr, 0);
}

polyred_status polyred_run_cpu_sized(const polyred_program* p, const void* const* inputs, void* const* outputs,
                                     const int64_t* sizeValues, int numSizes) {
  return guarded([&] {
    if (!p) return fail(POLYRED_BAD_INPUT, "polyred_run_cpu: null program");
    if ((!inputs && !p->inputs.empty()) || (!outputs && !p->outputs.empty()))
      return fail(POLYRED_BAD_INPUT, "polyred_run_cpu: null pointer array");
    CpuCheckOptions o;
    o.sizes = sizesOf(*p, sizeValues, numSizes, "polyred_run_cpu");
    // The tensors at these sizes (no rows: the symbolic template at them, all empty).
    const bool empty = emptyAtSizes(p->compiled, o.sizes);
    const Graph g = empty ? instantiate(p->compiled.symbolic, o.sizes) : graphAtSizes(p->compiled, o.sizes);
    std::vector<HostTensor> hostInputs;
    hostInputs.reserve(g.inputs.size());
    for (size_t k = 0; k < g.inputs.size(); ++k) {
      const Tensor& t = g.tensor(g.inputs[k]);
      if (!inputs[k] && numElements(t.shape) > 0)  // an empty tensor's pointer may be null
        return fail(POLYRED_BAD_INPUT, "polyred_run_cpu: input " + std::to_string(k) + " is a null pointer");
      HostTensor h = HostTensor::zeros(t.dtype, t.shape);
      if (h.byteSize() > 0) std::memcpy(h.data(), inputs[k], static_cast<size_t>(h.byteSize()));
      hostInputs.push_back(std::move(h));
    }
    for (size_t k = 0; k < g.outputs.size(); ++k)
      if (!outputs[k] && numElements(g.tensor(g.outputs[k].tensor).shape) > 0)
        return fail(POLYRED_BAD_INPUT, "polyred_run_cpu: output " + std::to_string(k) + " is a null pointer");
    o.maxPoints = 0;  // every statement instance: the outputs are whole
    o.deterministic = p->deterministic;
    Deadline none = Deadline::none();
    LoweredRun run = runLoweredOnCpu(p->compiled, hostInputs, o, none);
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      const HostTensor& h = run.outputs[k];
      if (h.byteSize() > 0) std::memcpy(outputs[k], h.data(), static_cast<size_t>(h.byteSize()));
    }
    return POLYRED_OK;
  });
}

int polyred_num_symbols(const polyred_program* p) {
  return p ? static_cast<int>(p->compiled.symbolic.symbols.size()) : -1;
}

const char* polyred_symbol_name(const polyred_program* p, int index) {
  if (!p || index < 0 || index >= polyred_num_symbols(p)) return nullptr;
  return p->compiled.symbolic.symbols[static_cast<size_t>(index)].c_str();
}

}  // extern "C"

struct polyred_sharded {
  polyred::Graph graph;
  polyred::ShardSpec spec;
  polyred::CompileOptions options;
  polyred::ShardedLowering lowering;
  std::string plan;
  std::mutex loading;  // guards the members below
  std::unique_ptr<polyred::multigpu::ShardedProgram> program;
  std::vector<polyred::multigpu::Communicator> comms;
  std::unique_ptr<polyred::multigpu::ShardedExecutor> executor;
};

namespace {

// Compiles the sharded program once (at the first launch).
void ensureCompiled(polyred_sharded& s) {
  if (!s.program)
    s.program = std::make_unique<multigpu::ShardedProgram>(compileSharded(s.lowering, s.options));
}

}  // namespace

extern "C" {

polyred_status polyred_shard(const polyred_program* p, int ranks, const polyred_input_shard* shards, int count,
                             polyred_sharded** out) {
  return guarded([&] {
    if (!p || !out || (count > 0 && !shards)) return fail(POLYRED_BAD_INPUT, "polyred_shard: null argument");
    *out = nullptr;
    if (count < 1) return fail(POLYRED_BAD_INPUT, "polyred_shard: no input is sharded (count < 1)");
    if (!p->compiled.symbolic.symbols.empty())
      return fail(POLYRED_BAD_INPUT, "polyred_shard: sharding a program with size symbols is not supported yet");
    auto s = std::make_unique<polyred_sharded>();
    s->graph = p->compiled.graph;
    s->options = p->options;
    s->spec.ranks = ranks;
    for (int k = 0; k < count; ++k) {
      if (!shards[k].input) return fail(POLYRED_BAD_INPUT, "polyred_shard: shard " + std::to_string(k) + " names no input");
      InputShard in{shards[k].input, shards[k].axis, {}};
      if (shards[k].sizes && ranks > 0) in.sizes.assign(shards[k].sizes, shards[k].sizes + ranks);
      s->spec.inputs.push_back(std::move(in));
    }
    ShardLoweringOptions lo;
    lo.deterministic = p->deterministic;
    s->lowering = lowerSharded(s->graph, s->spec, lo);
    s->plan = s->lowering.toString();
    *out = s.release();
    return POLYRED_OK;
  });
}

void polyred_sharded_free(polyred_sharded* s) { delete s; }

const char* polyred_sharded_plan(const polyred_sharded* s) { return s ? s->plan.c_str() : nullptr; }

polyred_status polyred_sharded_check_cpu(const polyred_sharded* s, uint64_t seed) {
  return guarded([&] {
    if (!s) return fail(POLYRED_BAD_INPUT, "polyred_sharded_check_cpu: null argument");
    ShardCheckOptions o;
    o.seed = seed;
    o.deterministic = s->options.deterministic;
    o.target = s->options.target;
    std::vector<HostTensor> inputs = makeRandomInputs(s->graph, seed);
    ShardSimulation sim = simulateSharded(s->graph, s->lowering, inputs, o);
    CpuCheckReport r = compareWholeOutputs(s->graph, inputs, sim.outputs, evaluateReference(s->graph, inputs));
    return report(r.ok ? POLYRED_OK : POLYRED_MISMATCH, r.message);
  });
}

polyred_status polyred_nccl_unique_id(unsigned char id[POLYRED_NCCL_UNIQUE_ID_BYTES]) {
  return guarded([&] {
    if (!id) return fail(POLYRED_BAD_INPUT, "polyred_nccl_unique_id: null argument");
    static_assert(sizeof(ncclUniqueId) == POLYRED_NCCL_UNIQUE_ID_BYTES);
    ncclUniqueId u = multigpu::Communicator::newUniqueId();
    std::memcpy(id, &u, sizeof u);
    return POLYRED_OK;
  });
}

polyred_status polyred_sharded_launch_rank(polyred_sharded* s, const unsigned char id[POLYRED_NCCL_UNIQUE_ID_BYTES],
                                           int rank, int device, void* const* inputs, void* const* outputs,
                                           void* stream) {
  return guarded([&] {
    if (!s || !id || !inputs || !outputs) return fail(POLYRED_BAD_INPUT, "polyred_sharded_launch_rank: null argument");
    if (rank < 0 || rank >= s->spec.ranks)
      return fail(POLYRED_BAD_INPUT, "polyred_sharded_launch_rank: rank " + std::to_string(rank) + " out of range [0, " +
                                         std::to_string(s->spec.ranks) + ")");
    std::lock_guard lock(s->loading);
    if (!s->executor) {
      ensureCompiled(*s);
      ncclUniqueId u;
      std::memcpy(&u, id, sizeof u);
      s->comms.push_back(multigpu::Communicator::initRank(u, s->spec.ranks, rank, device));
      s->executor = std::make_unique<multigpu::ShardedExecutor>(*s->program,
                                                                std::vector<const multigpu::Communicator*>{&s->comms[0]});
    } else if (s->comms.size() != 1 || s->comms[0].rank() != rank) {
      return fail(POLYRED_BAD_INPUT, "polyred_sharded_launch_rank: this sharded program already runs as another rank "
                                     "or in polyred_sharded_launch_all mode");
    }
    multigpu::ShardedExecutor::RankIo io;
    io.inputs.assign(inputs, inputs + s->graph.inputs.size());
    io.outputs.assign(outputs, outputs + s->graph.outputs.size());
    io.stream = static_cast<CUstream>(stream);
    s->executor->launch({io});
    return POLYRED_OK;
  });
}

polyred_status polyred_sharded_launch_all(polyred_sharded* s, const int* devices, void* const* const* inputs,
                                          void* const* const* outputs, void* const* streams) {
  return guarded([&] {
    if (!s || !devices || !inputs || !outputs || !streams)
      return fail(POLYRED_BAD_INPUT, "polyred_sharded_launch_all: null argument");
    const int ranks = s->spec.ranks;
    std::lock_guard lock(s->loading);
    if (!s->executor) {
      ensureCompiled(*s);
      s->comms = multigpu::Communicator::initAll(std::vector<int>(devices, devices + ranks));
      std::vector<const multigpu::Communicator*> local;
      for (const auto& c : s->comms) local.push_back(&c);
      s->executor = std::make_unique<multigpu::ShardedExecutor>(*s->program, local);
    } else if (static_cast<int>(s->comms.size()) != ranks) {
      return fail(POLYRED_BAD_INPUT, "polyred_sharded_launch_all: this sharded program already runs as one rank");
    }
    std::vector<multigpu::ShardedExecutor::RankIo> io(static_cast<size_t>(ranks));
    for (int r = 0; r < ranks; ++r) {
      if (!inputs[r] || !outputs[r]) return fail(POLYRED_BAD_INPUT, "polyred_sharded_launch_all: null pointer array");
      io[static_cast<size_t>(r)].inputs.assign(inputs[r], inputs[r] + s->graph.inputs.size());
      io[static_cast<size_t>(r)].outputs.assign(outputs[r], outputs[r] + s->graph.outputs.size());
      io[static_cast<size_t>(r)].stream = static_cast<CUstream>(streams[r]);
    }
    s->executor->launch(io);
    return POLYRED_OK;
  });
}

}  // extern "C"
