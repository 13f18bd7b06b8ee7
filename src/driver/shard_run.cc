// Sharded runs on GPUs (shard_run.h).
#include "driver/shard_run.h"

#include <algorithm>
#include <chrono>

#include "driver/cpu_check.h"
#include "driver/gpu_run.h"
#include "interp/random_inputs.h"
#include "interp/reference.h"
#include "runtime/cuda_driver.h"
#include "runtime/executor.h"
#include "support/error.h"

namespace polyred {

multigpu::ShardedProgram compileSharded(const ShardedLowering& lowering, const CompileOptions& options) {
  multigpu::ShardedProgram p;
  p.lowering = lowering;
  for (int r = 0; r < lowering.shard.ranks; ++r) {
    multigpu::RankPrograms rp;
    for (const ShardRound& round : lowering.rounds)
      rp.rounds.push_back(compileGraph(round.perRank[static_cast<size_t>(r)].graph, options).program);
    rp.final = compileGraph(lowering.finalPerRank[static_cast<size_t>(r)].graph, options).program;
    p.ranks.push_back(std::move(rp));
  }
  for (const CombineStep& c : lowering.combines) {
    p.combines.emplace_back();
    if (c.choice.collective == Collective::AllGatherCombine)
      p.combines.back() =
          compileGraph(combineGraph(c.name + ".combine", c.reduction, c.shape, lowering.shard.ranks), options).program;
  }
  return p;
}

int cudaDeviceCount(std::string* whyNone) {
  if (!gpuAvailable(whyNone)) return 0;
  int n = 0;
  cuda::check(cuda::driver().cuDeviceGetCount(&n), "cuDeviceGetCount");
  return n;
}

ShardedGpuRunReport runShardedOnGpus(const Graph& g, const ShardSpec& spec, const ShardedGpuRunOptions& options) {
  std::string why;
  const int present = cudaDeviceCount(&why);
  if (present == 0) throw NoGpuError(why);
  if (spec.ranks > present)
    throw Error(g.sourceFile, "", "--gpus=" + std::to_string(spec.ranks) + " but only " + std::to_string(present) +
                                      " GPU(s) are present");
  ShardLoweringOptions lo;
  lo.deterministic = options.deterministic;
  ShardedLowering lowering = lowerSharded(g, spec, lo);
  ShardedGpuRunReport report;
  report.plan = lowering.toString();
  CompileOptions co;
  co.target = currentTarget();
  co.deterministic = options.deterministic;
  multigpu::ShardedProgram program = compileSharded(lowering, co);

  std::vector<int> devices(static_cast<size_t>(spec.ranks));
  for (int r = 0; r < spec.ranks; ++r) devices[static_cast<size_t>(r)] = r;
  std::vector<multigpu::Communicator> comms = multigpu::Communicator::initAll(devices);
  std::vector<const multigpu::Communicator*> local;
  for (const auto& c : comms) local.push_back(&c);
  multigpu::ShardedExecutor executor(program, local);

  std::vector<HostTensor> inputs = makeRandomInputs(g, options.seed);
  std::vector<HostTensor> expected;
  if (options.check) {
    expected = evaluateReference(g, inputs);
  } else {  // the outputs' shapes only
    for (const Output& o : g.outputs) expected.push_back(HostTensor::zeros(g.tensor(o.tensor).dtype, g.tensor(o.tensor).shape));
  }
  struct RankState {
    std::vector<DeviceBuffer> inputs, outputs;
    CUstream stream = nullptr;
  };
  std::vector<RankState> state(static_cast<size_t>(spec.ranks));
  std::vector<multigpu::ShardedExecutor::RankIo> io(static_cast<size_t>(spec.ranks));
  const cuda::Driver& api = cuda::driver();
  for (int r = 0; r < spec.ranks; ++r) {
    RankState& s = state[static_cast<size_t>(r)];
    cuda::ContextGuard guard(comms[static_cast<size_t>(r)].context());
    cuda::check(api.cuStreamCreate(&s.stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    for (size_t k = 0; k < g.inputs.size(); ++k) {
      HostTensor slice = sliceForRank(inputs[k], lowering.shard.inputAxis[k],
                                      lowering.shard.offsets[static_cast<size_t>(r)],
                                      lowering.shard.sizes[static_cast<size_t>(r)]);
      s.inputs.emplace_back(std::max<size_t>(1, slice.bytes.size()));
      s.inputs.back().upload(slice.data(), slice.bytes.size());
    }
    for (const HostTensor& e : expected) s.outputs.emplace_back(std::max<size_t>(1, e.bytes.size()));
    auto& rio = io[static_cast<size_t>(r)];
    for (auto& b : s.inputs) rio.inputs.push_back(b.data());
    for (auto& b : s.outputs) rio.outputs.push_back(b.data());
    rio.stream = s.stream;
  }
  auto syncAll = [&] {
    for (int r = 0; r < spec.ranks; ++r) {
      cuda::ContextGuard guard(comms[static_cast<size_t>(r)].context());
      cuda::check(api.cuStreamSynchronize(state[static_cast<size_t>(r)].stream), "cuStreamSynchronize");
    }
  };
  auto download = [&](int r) {
    std::vector<HostTensor> got = expected;
    cuda::ContextGuard guard(comms[static_cast<size_t>(r)].context());
    for (size_t o = 0; o < got.size(); ++o)
      state[static_cast<size_t>(r)].outputs[o].download(got[o].data(), got[o].bytes.size());
    return got;
  };
  executor.launch(io);
  syncAll();
  std::vector<HostTensor> first = download(0);
  for (int r = 1; r < spec.ranks; ++r) {
    std::vector<HostTensor> other = download(r);
    for (size_t o = 0; o < first.size(); ++o) report.ranksAgree = report.ranksAgree && other[o].bytes == first[o].bytes;
  }
  CpuCheckReport check;
  if (options.check) check = compareWholeOutputs(g, inputs, first, expected);
  else check.message = "  (reference check skipped: --no-check)\n";
  executor.launch(io);
  syncAll();
  std::vector<HostTensor> again = download(0);
  for (size_t o = 0; o < first.size(); ++o)
    report.bitwiseRepeatable = report.bitwiseRepeatable && again[o].bytes == first[o].bytes;
  report.ok = check.ok && report.ranksAgree && (!options.deterministic || report.bitwiseRepeatable);
  report.message = check.message;
  if (options.time) {
    std::vector<double> times;
    for (int k = 0; k < options.iterations; ++k) {
      auto t0 = std::chrono::steady_clock::now();
      executor.launch(io);
      syncAll();
      times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    report.micros = times.empty() ? 0 : times[times.size() / 2];
  }
  for (auto& s : state) {
    api.cuStreamDestroy(s.stream);
  }
  return report;
}

}  // namespace polyred
