#include "driver/pipeline.h"

#include <chrono>
#include <iostream>
#include <sstream>

#include "canon/partition.h"
#include "codegen/cuda_emitter.h"
#include "poly/binding.h"
#include "poly/vectorize.h"
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

// Runs f, adding its wall time to (*millis)[stage] when timings are asked for.
template <class F>
auto timed(std::map<std::string, double>* millis, const std::string& stage, F&& f) {
  auto start = std::chrono::steady_clock::now();
  auto result = f();
  if (millis) (*millis)[stage] += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

CompiledGraph compileGraph(const Graph& g, const CompileOptions& options) {
  Dumper dump(options);
  std::map<std::string, double>* ms = options.stageMillis;
  CompiledGraph c;
  c.graph = g;
  dump("graph", g.toString());
  c.partition = timed(ms, "partition", [&] { return partitionGraph(g, rowsFitOneBlock); });
  dump("partition", c.partition.toString(g));
  for (const Temporary& t : c.partition.temporaries)
    c.program.temporaries.push_back({t.elements * dtypeBytes(t.dtype)});
  for (const KernelPlan& plan : c.partition.kernels) {
    Vectorization vector = timed(ms, "binding", [&] { return chooseVectorization(plan); });
    KernelPlan perInstance = plan;  // a vectorized instance covers `width` elements
    (vector.axis == 'i' ? perInstance.M : perInstance.N) /= vector.width;
    Binding b = timed(ms, "binding", [&] { return chooseBinding(perInstance, options.target); });
    dump("binding", plan.name + ": " + b.toString() +
                        (vector.width > 1 ? ", " + std::to_string(vector.width) + " elements per thread and step" : ""));
    PolyKernel k = timed(ms, "schedule+ast", [&] { return buildPolyKernel(plan, b, vector); });
    dump("schedule", plan.name + ":\n" + k.scheduleTree);
    dump("ast", plan.name + ":\n" + k.islAst);
    KernelSpec spec = timed(ms, "cuda", [&] { return emitCuda(g, k, CodegenOptions{options.deterministic}); });
    dump("cuda", spec.source);
    c.program.kernels.push_back(std::move(spec));
    c.kernels.push_back(std::move(k));
  }
  return c;
}

}  // namespace polyred
