// The CPU simulation of a sharded run (shard_check.h).
#include "driver/shard_check.h"

#include <cstring>

#include "driver/cpu_check.h"
#include "interp/random_inputs.h"
#include "interp/reference.h"
#include "support/error.h"
#include "support/printable.h"

namespace polyred {
namespace {

std::vector<HostTensor> runLocal(const Graph& g, const std::vector<HostTensor>& inputs,
                                 const ShardCheckOptions& options, Deadline& deadline, int& kernels) {
  CompileOptions co;
  co.target = options.target;
  co.deterministic = options.deterministic;
  CompiledGraph c = compileGraph(g, co);
  CpuCheckOptions o;
  o.seed = options.blockOrderSeed;
  o.maxPoints = 0;  // every point: partials must be whole
  o.deterministic = options.deterministic;
  kernels += static_cast<int>(c.kernels.size());
  return runLoweredOnCpu(c, inputs, o, deadline).outputs;
}

// The partials of one combine, in rank order, combined as the collective would.
HostTensor combinePartials(const CombineStep& step, const std::vector<HostTensor>& partials, int64_t elements,
                           const ShardCheckOptions& options, Deadline& deadline, int& kernels) {
  const int ranks = static_cast<int>(partials.size());
  if (step.choice.collective == Collective::AllReduce) {
    HostTensor out = partials[0];
    for (int64_t e = 0; e < elements; ++e) {
      Scalar acc = partials[0].get(e);
      for (int r = 1; r < ranks; ++r) acc = step.reduction.combine(acc, partials[static_cast<size_t>(r)].get(e));
      out.set(e, acc);
    }
    return out;
  }
  // All-gather (rank-major, as ncclAllGather lays it out), then the combine kernels.
  Graph cg = combineGraph(step.name + ".combine", step.reduction, step.shape, ranks);
  HostTensor gathered = HostTensor::zeros(step.reduction.accType, cg.tensor(cg.inputs[0]).shape);
  const size_t bytes = partials[0].bytes.size();
  for (int r = 0; r < ranks; ++r)
    std::memcpy(gathered.bytes.data() + bytes * static_cast<size_t>(r), partials[static_cast<size_t>(r)].bytes.data(),
                bytes);
  return runLocal(cg, {gathered}, options, deadline, kernels).at(0);
}

}  // namespace

ShardSimulation simulateSharded(const Graph& g, const ShardedLowering& s, const std::vector<HostTensor>& inputs,
                                const ShardCheckOptions& options) {
  const int ranks = s.shard.ranks;
  Deadline deadline(options.timeoutSeconds);
  ShardSimulation sim;
  std::vector<std::vector<HostTensor>> rankInputs(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    for (size_t k = 0; k < g.inputs.size(); ++k)
      rankInputs[static_cast<size_t>(r)].push_back(sliceForRank(inputs.at(k), s.shard.inputAxis[k],
                                                                s.shard.offsets[static_cast<size_t>(r)],
                                                                s.shard.sizes[static_cast<size_t>(r)]));
  std::vector<HostTensor> combined(s.combines.size());
  auto bind = [&](const LocalGraph& local, int r) {
    std::vector<HostTensor> bound;
    for (const LocalInput& in : local.inputs)
      bound.push_back(in.kind == LocalInput::Kind::GraphInput
                          ? rankInputs[static_cast<size_t>(r)][static_cast<size_t>(in.index)]
                          : combined.at(static_cast<size_t>(in.index)));
    return bound;
  };
  for (size_t k = 0; k < s.rounds.size(); ++k) {
    const ShardRound& round = s.rounds[k];
    std::vector<std::vector<HostTensor>> partials(round.combines.size());  // [combine][rank]
    for (int r = 0; r < ranks; ++r) {
      deadline.setStage("round " + std::to_string(k) + " of rank " + std::to_string(r));
      const LocalGraph& local = round.perRank[static_cast<size_t>(r)];
      std::vector<HostTensor> out = runLocal(local.graph, bind(local, r), options, deadline, sim.localKernels);
      for (size_t c = 0; c < round.combines.size(); ++c) partials[c].push_back(std::move(out[c]));
    }
    for (size_t c = 0; c < round.combines.size(); ++c) {
      const CombineStep& step = s.combines[static_cast<size_t>(round.combines[c])];
      combined[static_cast<size_t>(round.combines[c])] =
          combinePartials(step, partials[c], numElements(step.shape), options, deadline, sim.localKernels);
    }
  }
  std::vector<std::vector<HostTensor>> perRank;
  for (int r = 0; r < ranks; ++r) {
    deadline.setStage("final graph of rank " + std::to_string(r));
    const LocalGraph& local = s.finalPerRank[static_cast<size_t>(r)];
    perRank.push_back(runLocal(local.graph, bind(local, r), options, deadline, sim.localKernels));
  }
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    const int axis = s.outputAxis[o];
    if (axis >= 0) {
      std::vector<HostTensor> slices;
      for (int r = 0; r < ranks; ++r) slices.push_back(perRank[static_cast<size_t>(r)][o]);
      sim.outputs.push_back(joinRanks(slices, axis));
      continue;
    }
    for (int r = 1; r < ranks; ++r)
      POLYRED_CHECK(perRank[static_cast<size_t>(r)][o].bytes == perRank[0][o].bytes,
                    "output " << o << " is whole on every rank but rank " << r << " computed other bytes than rank 0");
    sim.outputs.push_back(perRank[0][o]);
  }
  return sim;
}

ShardCheckReport checkShardedOnCpu(const Graph& g, const ShardSpec& spec, const ShardCheckOptions& options) {
  ShardLoweringOptions lo;
  lo.deterministic = options.deterministic;
  ShardedLowering s = lowerSharded(g, spec, lo);
  ShardCheckReport report;
  report.plan = s.toString();
  std::vector<HostTensor> inputs = makeRandomInputs(g, options.seed);
  report.simulation = simulateSharded(g, s, inputs, options);
  std::vector<HostTensor> expected = evaluateReference(g, inputs);
  CpuCheckReport r = compareWholeOutputs(g, inputs, report.simulation.outputs, expected);
  report.ok = r.ok;
  report.message = r.message;
  return report;
}

}  // namespace polyred
