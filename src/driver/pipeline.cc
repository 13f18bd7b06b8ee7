#include "driver/pipeline.h"

#include <iostream>
#include <sstream>

#include "canon/partition.h"
#include "codegen/cpu_executor.h"
#include "codegen/cuda_emitter.h"
#include "poly/binding.h"
#include "poly/vectorize.h"
#include "interp/compare.h"
#include "interp/random_inputs.h"
#include "interp/reference.h"
#include "support/error.h"

namespace polyred {

const std::vector<std::string>& dumpStages() {
  static const std::vector<std::string> stages = {"graph", "partition", "binding", "schedule", "ast", "cuda"};
  return stages;
}

namespace {

class Dumper {
 public:
  explicit Dumper(const CompileOptions& o) : o_(o) {}
  void operator()(const std::string& stage, const std::string& text) const {
    if (!o_.dump.count(stage) && !o_.dump.count("all")) return;
    std::ostream& os = o_.dumpTo ? *o_.dumpTo : std::cerr;
    os << "// ----- after " << stage << " -----\n" << text << (text.empty() || text.back() == '\n' ? "" : "\n");
  }

 private:
  const CompileOptions& o_;
};

}  // namespace

CompiledGraph compileGraph(const Graph& g, const CompileOptions& options) {
  Dumper dump(options);
  CompiledGraph c;
  c.graph = g;
  dump("graph", g.toString());
  c.partition = partitionGraph(g, rowsFitOneBlock);
  dump("partition", c.partition.toString(g));
  for (const Temporary& t : c.partition.temporaries)
    c.program.temporaries.push_back({t.elements * dtypeBytes(t.dtype)});
  for (const KernelPlan& plan : c.partition.kernels) {
    Vectorization vector = chooseVectorization(plan);
    KernelPlan perInstance = plan;  // a vectorized instance covers `width` elements
    (vector.axis == 'i' ? perInstance.M : perInstance.N) /= vector.width;
    Binding b = chooseBinding(perInstance, options.target);
    dump("binding", plan.name + ": " + b.toString() +
                        (vector.width > 1 ? ", " + std::to_string(vector.width) + " elements per thread and step" : ""));
    PolyKernel k = buildPolyKernel(plan, b, vector);
    dump("schedule", plan.name + ":\n" + k.scheduleTree);
    dump("ast", plan.name + ":\n" + k.islAst);
    KernelSpec spec = emitCuda(g, k, CodegenOptions{options.deterministic});
    dump("cuda", spec.source);
    c.program.kernels.push_back(std::move(spec));
    c.kernels.push_back(std::move(k));
  }
  return c;
}

CpuCheckReport compareOutputs(const Graph& g, const std::vector<HostTensor>& got,
                              const std::vector<std::vector<bool>>& written, const std::vector<HostTensor>& expected) {
  CpuCheckReport report;
  std::ostringstream os;
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    HostTensor masked = got[o];
    int64_t checked = masked.size();
    if (!written.empty() && !written[o].empty()) {
      checked = 0;
      for (int64_t e = 0; e < masked.size(); ++e) {
        if (written[o][static_cast<size_t>(e)]) ++checked;
        else masked.set(e, expected[o].get(e));  // unchecked (sampled out): take the reference
      }
    }
    TensorId t = g.outputs[o].tensor;
    Tolerance tol = toleranceFor(g.tensor(t).dtype, accumulationLength(g, t));
    CompareResult r = compareTensors(masked, expected[o], tol);
    report.ok = report.ok && r.ok;
    os << "  output %" << g.tensor(t).name << ": " << (r.ok ? "ok" : "MISMATCH") << " (" << checked << " of "
       << masked.size() << " elements checked, max abs err " << r.maxAbsError << ")";
    if (!r.ok) os << " " << r.message;
    os << "\n";
  }
  report.message = os.str();
  return report;
}

CpuCheckReport checkOnCpu(const CompiledGraph& c, uint64_t seed, int64_t maxPoints, bool deterministic) {
  const Graph& g = c.graph;
  std::vector<HostTensor> inputs = makeRandomInputs(g, seed);
  std::vector<HostTensor> outputs(g.outputs.size());
  std::vector<std::vector<bool>> written(g.outputs.size());
  bool sampled = false;
  std::vector<HostTensor> temporaries;
  for (const Temporary& t : c.partition.temporaries) temporaries.push_back(HostTensor::zeros(t.dtype, {t.elements}));
  // Sampling would leave parts of a temporary unwritten for the kernels that read it.
  if (!temporaries.empty()) maxPoints = 0;
  for (const PolyKernel& k : c.kernels) {
    CpuExecOptions o;
    o.deterministic = deterministic;
    o.blockOrderSeed = seed;
    o.maxPoints = maxPoints;
    CpuExecResult r = executeOnCpu(g, k, inputs, temporaries, o);
    sampled = sampled || r.sampled;
    for (size_t out = 0; out < g.outputs.size(); ++out) {
      if (r.outputs[out].bytes.empty()) continue;
      outputs[out] = std::move(r.outputs[out]);
      written[out] = std::move(r.written[out]);
    }
  }
  for (size_t out = 0; out < g.outputs.size(); ++out)
    POLYRED_CHECK(!outputs[out].bytes.empty(), "no kernel writes output " << out);
  std::vector<HostTensor> expected = evaluateReference(g, inputs);
  CpuCheckReport report = compareOutputs(g, outputs, written, expected);
  report.sampled = sampled;
  return report;
}

}  // namespace polyred
