#include "driver/cpu_check.h"

#include <algorithm>
#include <sstream>

#include "codegen/cpu_executor.h"
#include "interp/compare.h"
#include "interp/point_reference.h"
#include "interp/random_inputs.h"
#include "interp/reference.h"
#include "support/error.h"
#include "support/printable.h"

namespace polyred {

namespace {

int64_t bytesOf(const Tensor& t) { return numElements(t.shape) * dtypeBytes(t.dtype); }

// Elements of every computed or input tensor (constants are one element).
int64_t graphElements(const Graph& g) {
  int64_t n = 0;
  for (const Tensor& t : g.tensors)
    if (t.role != TensorRole::Constant) n += numElements(t.shape);
  return n;
}

// Elements a PointReference may memoize: reduction results and tensors read twice.
int64_t memoizableElements(const Graph& g) {
  std::vector<int> readers(g.tensors.size(), 0);
  for (const Node& n : g.nodes)
    for (TensorId in : n.inputs) ++readers[static_cast<size_t>(in)];
  int64_t n = 0;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const Node* p = g.producer(static_cast<TensorId>(t));
    if (p && (p->kind == OpKind::Reduce || readers[t] > 1)) n += numElements(g.tensors[t].shape);
  }
  return n;
}

// Bytes a reference value takes: interp/reference widens every element to 8 bytes;
// a PointReference memo entry is a hash node holding an index, a 32-byte Scalar and
// its magnitude (56 bytes, 64 with malloc's header) plus its bucket pointer.
constexpr int64_t kWideElementBytes = 8;
constexpr int64_t kMemoEntryBytes = 80;
constexpr auto kMemoEntriesMax = static_cast<int64_t>(PointReference::kMemoEntries);

// Per graph output: the input whose buffer a kernel writes it into directly (an
// in-place output not staged by canon/in_place_hazards), or -1.
std::vector<int> inPlaceInputs(const CompiledGraph& c, const Graph& g) {
  std::vector<int> in(g.outputs.size(), -1);
  for (size_t o = 0; o < g.outputs.size(); ++o)
    if (g.outputs[o].aliasOfInput && c.partition.stagingTemporary(static_cast<int>(o)) < 0)
      in[o] = g.inputIndex(*g.outputs[o].aliasOfInput);
  return in;
}

bool anyTemporaryLoaded(const KernelPartition& partition) {
  for (const KernelPlan& k : partition.kernels)
    for (const auto* values : {&k.body, &k.epilogue})
      for (const BodyValue& v : *values)
        if (v.kind == BodyValue::Kind::Load && v.temporary >= 0) return true;
  return false;
}

bool anyInPlace(const std::vector<int>& inPlace) {
  return std::any_of(inPlace.begin(), inPlace.end(), [](int in) { return in >= 0; });
}

// How the CPU check runs the kernels of `c` on the executor.
CpuExecOptions executorOptions(const CompiledGraph& c, const CpuCheckOptions& options) {
  CpuExecOptions o;
  o.deterministic = options.deterministic;
  o.blockOrderSeed = options.seed;
  // Sampling would leave parts of a temporary unwritten for the kernels that read it
  // (a staged in-place output's temporary is read by none).
  o.maxPoints = anyTemporaryLoaded(c.partition) ? 0 : options.maxPoints;
  o.sizes = options.sizes;
  return o;
}

}  // namespace

std::string CheckMemory::toString() const {
  return formatBytes(total()) + " (inputs " + formatBytes(inputs) + ", outputs " + formatBytes(outputs) +
         ", temporaries " + formatBytes(temporaries) + ", reference " + formatBytes(reference) +
         (sampledReference ? ", sampled" : "") + (executor > 0 ? ", executor " + formatBytes(executor) : "") + ")";
}

CheckMemory planCheckMemory(const CompiledGraph& c, const CpuCheckOptions* cpu) {
  const std::vector<int64_t> sizes = cpu ? cpu->sizes : std::vector<int64_t>{};
  const Graph g = graphAtSizes(c, sizes);
  CheckMemory m;
  for (TensorId t : g.inputs) m.inputs += bytesOf(g.tensor(t));
  // The executor's outputs with their written masks, the masked copy compared, and
  // the reference's outputs.
  for (const Output& o : g.outputs) {
    const Tensor& t = g.tensor(o.tensor);
    m.outputs += 3 * bytesOf(t) + numElements(t.shape) / 8;
  }
  for (const Temporary& t : c.partition.temporaries)
    m.temporaries += t.elementsAt(sizes) * dtypeBytes(t.dtype);
  if (anyInPlace(inPlaceInputs(c, g))) m.inputs *= 2;  // the buffers in-place stores land in: a copy of the inputs
  int64_t elements = graphElements(g);
  m.sampledReference = elements > kFullReferenceElements;
  m.reference = m.sampledReference ? kMemoEntryBytes * std::min(memoizableElements(g), kMemoEntriesMax)
                                   : kWideElementBytes * elements;
  if (cpu) {  // kernels run one after another: the largest one's state
    const CpuExecOptions o = executorOptions(c, *cpu);
    for (const PolyKernel& k : c.kernels) m.executor = std::max(m.executor, cpuExecutorBytes(k, o));
  }
  return m;
}

CheckMemory requireCheckMemory(const CompiledGraph& c, const ResourceLimits& limits, const std::string& what,
                               const CpuCheckOptions* cpu) {
  const CheckMemory memory = planCheckMemory(c, cpu);
  const MemoryLimit limit = memoryLimit(limits);
  if (memory.total() > limit.bytes)
    throw Error(c.graph.sourceFile, "",
                what + " would need about " + memory.toString() + " of host memory, more than the limit of " +
                    formatBytes(limit.bytes) + " (" + limit.why + ")");
  return memory;
}

CpuCheckReport compareOutputs(const Graph& g, const std::vector<HostTensor>& got,
                              const std::vector<std::vector<bool>>& written, const std::vector<HostTensor>& expected,
                              PointReference* magnitudes) {
  CpuCheckReport report;
  std::ostringstream os;
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    // A sampled run compares the elements it wrote; the others were sampled out.
    const std::vector<bool>* only = !written.empty() && !written[o].empty() ? &written[o] : nullptr;
    const int64_t checked = only ? std::count(only->begin(), only->end(), true) : got[o].size();
    TensorId t = g.outputs[o].tensor;
    Tolerance tol = toleranceOf(g, t);
    MagnitudeAt magnitude;
    if (magnitudes) magnitude = [&](int64_t k) { return magnitudes->magnitude(t, k); };
    CompareResult r = compareTensors(got[o], expected[o], tol, magnitude, only);
    report.ok = report.ok && r.ok;
    os << "  output %" << printable(g.tensor(t).name) << ": " << (r.ok ? "ok" : "MISMATCH") << " (" << checked
       << " of " << got[o].size() << " elements checked, max abs err " << r.maxAbsError << ")";
    if (!r.ok) os << " " << r.message;
    os << "\n";
  }
  report.message = os.str();
  return report;
}

CpuCheckReport compareWholeOutputs(const Graph& g, const std::vector<HostTensor>& inputs,
                                   const std::vector<HostTensor>& got, const std::vector<HostTensor>& expected) {
  PointReference magnitudes(g, inputs);
  return compareOutputs(g, got, {}, expected, &magnitudes);
}

std::vector<HostTensor> referenceOutputs(const Graph& g, const std::vector<HostTensor>& inputs,
                                         const std::vector<HostTensor>& got,
                                         const std::vector<std::vector<bool>>& written, bool sampled,
                                         PointReference& points, Deadline& deadline) {
  if (!sampled) {
    deadline.setStage("evaluating the reference");
    return evaluateReference(g, inputs);
  }
  std::vector<HostTensor> expected = got;
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    deadline.setStage("evaluating the reference of output " + std::to_string(o + 1) + " of " +
                      std::to_string(g.outputs.size()));
    const int64_t n = expected[o].size();
    for (int64_t e = 0; e < n; ++e) {
      if (!written[o].empty() && !written[o][static_cast<size_t>(e)]) continue;
      if ((e & 1023) == 0) deadline.check(std::to_string(100 * e / n) + "% of its elements done");
      expected[o].set(e, points.value(g.outputs[o].tensor, e));
    }
  }
  return expected;
}

std::vector<std::vector<bool>> sampleOutputElements(const Graph& g, int64_t perOutput, uint64_t seed) {
  std::vector<std::vector<bool>> marks;
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (const Output& o : g.outputs) {
    const int64_t n = numElements(g.tensor(o.tensor).shape);
    const int64_t edge = std::min(kSampleEdge, perOutput / 2);
    std::vector<bool> m(static_cast<size_t>(n), n <= 2 * edge + perOutput);
    for (int64_t e = 0; e < std::min(n, edge); ++e) m[static_cast<size_t>(e)] = m[static_cast<size_t>(n - 1 - e)] = true;
    for (int64_t k = 0; k < perOutput && n > 0; ++k) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;  // a fixed LCG: same sample everywhere
      m[static_cast<size_t>((state >> 17) % static_cast<uint64_t>(n))] = true;
    }
    marks.push_back(std::move(m));
  }
  return marks;
}

int64_t referenceSampleSize(const Graph& g) {
  int64_t longest = 1;  // reduced elements per result element of the longest reduction
  for (const Node& n : g.nodes) {
    if (n.kind == OpKind::ScatterAdd)  // a point reads every index (interp/point_reference)
      longest = std::max(longest, numElements(g.tensor(n.inputs[1]).shape));
    if (n.kind != OpKind::Reduce || n.inputs.empty()) continue;
    const int64_t results = std::max<int64_t>(1, numElements(g.tensor(n.output).shape));
    // A tuple fold interprets its lift and combine expressions (~3 us for an argmax on
    // one core, 2026-11-23): it counts as kTupleFoldCost scalar folds.
    const int64_t cost = n.reduction && n.reduction->isTuple() ? kTupleFoldCost : 1;
    longest = std::max(longest, cost * (numElements(g.tensor(n.inputs[0]).shape) / results));
  }
  return std::clamp(kSampledFolds / longest, kMinSample, int64_t{1} << 16);
}

LoweredRun runLoweredOnCpu(const CompiledGraph& c, const std::vector<HostTensor>& inputs,
                           const CpuCheckOptions& options, Deadline& deadline) {
  LoweredRun run;
  if (emptyAtSizes(c, options.sizes)) {  // no rows: nothing runs, every output is empty
    const Graph& g = c.symbolic;
    for (const Shape& s : outputShapesAtSizes(c, options.sizes))
      run.outputs.push_back(HostTensor::zeros(g.tensor(g.outputs[run.outputs.size()].tensor).dtype, s));
    run.written.resize(run.outputs.size());
    return run;
  }
  const Graph g = graphAtSizes(c, options.sizes);
  run.outputs.resize(g.outputs.size());
  run.written.resize(g.outputs.size());
  std::vector<HostTensor> temporaries;
  for (const Temporary& t : c.partition.temporaries)
    temporaries.push_back(HostTensor::zeros(t.dtype, {t.elementsAt(options.sizes)}));
  // The GPU's input buffers, which in-place stores change as the kernels run; the
  // reference keeps reading `inputs`, the values before the launch.
  const std::vector<int> inPlace = inPlaceInputs(c, g);
  const bool writesInPlace = anyInPlace(inPlace);
  std::vector<HostTensor> buffers;
  if (writesInPlace) buffers = inputs;
  const std::vector<HostTensor>& kernelInputs = writesInPlace ? buffers : inputs;
  for (size_t k = 0; k < c.kernels.size(); ++k) {
    deadline.setStage("running kernel " + std::to_string(k + 1) + " of " + std::to_string(c.kernels.size()) + " (" +
                      c.kernels[k].plan.name + ") on the CPU");
    CpuExecOptions o = executorOptions(c, options);
    o.deadline = &deadline;
    if (writesInPlace) {
      o.inputBuffers = &buffers;
      o.writeThrough = inPlace;
    }
    CpuExecResult r = executeOnCpu(g, c.kernels[k], kernelInputs, temporaries, o);
    run.sampled = run.sampled || r.sampled;
    for (size_t out = 0; out < g.outputs.size(); ++out) {
      if (r.outputs[out].bytes.empty()) continue;
      run.outputs[out] = std::move(r.outputs[out]);
      run.written[out] = std::move(r.written[out]);
    }
  }
  for (size_t out = 0; out < g.outputs.size(); ++out)
    POLYRED_CHECK(!run.outputs[out].bytes.empty(), "no kernel writes output " << out);
  // The next launch's scatter adds into them without a memset (canon/temporary_reset).
  for (size_t t = 0; t < temporaries.size(); ++t)
    if (c.partition.temporaries[t].keptZero)
      POLYRED_CHECK(std::all_of(temporaries[t].bytes.begin(), temporaries[t].bytes.end(), [](uint8_t b) { return b == 0; }),
                    "temporary " << t << " is not zero after the launch, but the next one adds into it");
  return run;
}

CpuCheckReport checkOnCpu(const CompiledGraph& c, const CpuCheckOptions& options) {
  if (emptyAtSizes(c, options.sizes)) return {true, false, "  every output is empty at these sizes: nothing runs\n"};
  const Graph g = graphAtSizes(c, options.sizes);
  const CheckMemory memory = requireCheckMemory(c, options.limits, "the CPU check", &options);
  Deadline deadline(options.limits.timeoutSeconds);
  deadline.setStage("making random inputs");
  std::vector<HostTensor> inputs = makeRandomInputs(g, options.seed);
  LoweredRun run = runLoweredOnCpu(c, inputs, options, deadline);
  if (memory.sampledReference) {
    // A scatter's output is written whole (zeroed, then added into), but each of its
    // reference points reads every index: compare a sample of it.
    const std::vector<std::vector<bool>> sample = sampleOutputElements(g, referenceSampleSize(g), options.seed);
    for (size_t o = 0; o < g.outputs.size(); ++o)
      if (const Node* p = g.producer(g.outputs[o].tensor); p && p->kind == OpKind::ScatterAdd) run.written[o] = sample[o];
  }
  PointReference points(g, inputs, &deadline);
  std::vector<HostTensor> expected =
      referenceOutputs(g, inputs, run.outputs, run.written, memory.sampledReference, points, deadline);
  deadline.setStage("comparing the outputs with the reference");
  CpuCheckReport report = compareOutputs(g, run.outputs, run.written, expected, &points);
  report.sampled = run.sampled;
  return report;
}

CpuCheckReport checkOnCpu(const CompiledGraph& c, uint64_t seed, int64_t maxPoints, bool deterministic) {
  CpuCheckOptions o;
  o.seed = seed;
  o.maxPoints = maxPoints;
  o.deterministic = deterministic;
  return checkOnCpu(c, o);
}

}  // namespace polyred
