#include "driver/gpu_run.h"

#include "driver/cpu_check.h"
#include "interp/point_reference.h"
#include "interp/random_inputs.h"
#include "runtime/cuda_driver.h"
#include "runtime/executor.h"
#include "support/budget.h"
#include "support/error.h"
#include "support/printable.h"

namespace polyred {

Target currentTarget() {
  DeviceInfo d = currentDevice();
  Target t;
  t.ccMajor = d.ccMajor;
  t.ccMinor = d.ccMinor;
  t.smCount = d.smCount;
  if (d.l2Bytes > 0) t.l2Bytes = d.l2Bytes;
  t.name = d.name;
  return t;
}

namespace {

struct DeviceTensors {
  std::vector<DeviceBuffer> inputs, outputs;  // outputs[o] is empty for in-place outputs
  std::vector<void*> inputPtrs, outputPtrs;
  std::vector<const DeviceBuffer*> outputHome;  // the buffer holding output o
  std::vector<size_t> inputOffsets, outputOffsets;  // where each tensor starts in its buffer, bytes
};

// A tensor of `elementBytes`-byte elements placed `misalignElements` elements into its
// buffer: the bytes before it.
size_t offsetBytes(int64_t elementBytes, int misalignElements) {
  return static_cast<size_t>(elementBytes) * static_cast<size_t>(misalignElements);
}

DeviceTensors upload(const Graph& g, const std::vector<HostTensor>& inputs, int misalignElements) {
  DeviceTensors d;
  d.inputs.reserve(inputs.size());  // outputHome points into these vectors
  d.outputs.reserve(g.outputs.size());
  for (size_t in = 0; in < inputs.size(); ++in) {
    const HostTensor& h = inputs[in];
    const size_t offset = offsetBytes(dtypeBytes(h.dtype), misalignElements);
    d.inputs.emplace_back(static_cast<size_t>(h.byteSize()) + offset, "input " + quotedName(g.tensor(g.inputs[in]).name));
    d.inputs.back().upload(h.data(), static_cast<size_t>(h.byteSize()), offset);
    d.inputPtrs.push_back(static_cast<char*>(d.inputs.back().data()) + offset);
    d.inputOffsets.push_back(offset);
  }
  for (const Output& o : g.outputs) {
    if (o.aliasOfInput) {
      size_t in = 0;
      while (g.inputs[in] != *o.aliasOfInput) ++in;
      d.outputs.emplace_back();
      d.outputPtrs.push_back(d.inputPtrs[in]);
      d.outputHome.push_back(&d.inputs[in]);
      d.outputOffsets.push_back(d.inputOffsets[in]);
      continue;
    }
    const Tensor& t = g.tensor(o.tensor);
    const size_t offset = offsetBytes(dtypeBytes(t.dtype), misalignElements);
    d.outputs.emplace_back(static_cast<size_t>(numElements(t.shape) * dtypeBytes(t.dtype)) + offset,
                           "output " + quotedName(t.name));
    d.outputPtrs.push_back(static_cast<char*>(d.outputs.back().data()) + offset);
    d.outputHome.push_back(&d.outputs.back());
    d.outputOffsets.push_back(offset);
  }
  return d;
}

std::vector<HostTensor> download(const Graph& g, const DeviceTensors& d) {
  cuda::check(cuda::driver().cuStreamSynchronize(nullptr), "cuStreamSynchronize");
  std::vector<HostTensor> out;
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    const Tensor& t = g.tensor(g.outputs[o].tensor);
    HostTensor h = HostTensor::zeros(t.dtype, t.shape);
    d.outputHome[o]->download(h.data(), static_cast<size_t>(h.byteSize()), d.outputOffsets[o]);
    out.push_back(std::move(h));
  }
  return out;
}

int64_t tensorBytes(const Graph& g, TensorId t) { return numElements(g.tensor(t).shape) * dtypeBytes(g.tensor(t).dtype); }

int64_t bytesRead(const Graph& g) {
  int64_t bytes = 0;
  for (TensorId t : g.inputs) bytes += tensorBytes(g, t);
  return bytes;
}

int64_t bytesWritten(const Graph& g) {
  int64_t bytes = 0;
  for (const Output& o : g.outputs) bytes += tensorBytes(g, o.tensor);
  return bytes;
}

// Refuses (exit 2) a run whose tensors, workspaces and temporaries cannot fit in the
// device memory free now, before anything is made or allocated.
void requireDeviceMemory(const CompiledGraph& c) {
  const Graph& g = c.graph;
  int64_t tensors = bytesRead(g), scratch = 0;
  for (const Output& o : g.outputs)
    if (!o.aliasOfInput) tensors += tensorBytes(g, o.tensor);
  for (const KernelSpec& k : c.program.kernels)
    for (const WorkspaceSpec& w : k.workspaces) scratch += w.bytes;
  for (const TemporarySpec& t : c.program.temporaries) scratch += t.bytes;
  const cuda::DeviceMemory device = cuda::deviceMemory();
  if (device.totalBytes > 0 && tensors + scratch > device.freeBytes)
    throw cuda::DeviceOutOfMemory(g.sourceFile, "",
                                  "the GPU run needs " + formatBytes(tensors + scratch) + " of device memory (tensors " +
                                      formatBytes(tensors) + ", workspaces and temporaries " + formatBytes(scratch) +
                                      "), more than " + cuda::deviceMemoryText());
}

}  // namespace

std::vector<HostTensor> launchOnGpu(const CompiledGraph& c, const std::vector<HostTensor>& inputs,
                                    const std::vector<int64_t>& sizes) {
  CompiledProgram program = CompiledProgram::load(c.program, currentDevice());
  return launchOnGpu(program, c, inputs, sizes);
}

std::vector<HostTensor> launchOnGpu(CompiledProgram& program, const CompiledGraph& c,
                                    const std::vector<HostTensor>& inputs, const std::vector<int64_t>& sizes) {
  const Graph g = graphAtSizes(c, sizes);
  DeviceTensors d = upload(g, inputs, /*misalignElements=*/0);
  program.launch(d.inputPtrs, d.outputPtrs, nullptr, sizes);
  return download(g, d);
}

GpuRunReport runOnGpu(const CompiledGraph& c, const GpuRunOptions& options) {
  if (!c.symbolic.symbols.empty())
    throw Error(c.graph.sourceFile, "", "a GPU run of a graph with size symbols is not supported by the command line "
                                        "yet (the C API and Python launch it at given sizes; 'polyred check --size' checks it)");
  const Graph& g = c.graph;
  DeviceInfo device = currentDevice();
  requireDeviceMemory(c);
  // The host holds what a CPU check holds (inputs, outputs, the reference), less the
  // executor; graphs past the full-reference size are compared on a sample.
  const CheckMemory memory = requireCheckMemory(c, options.limits, "checking the GPU result");
  Deadline deadline(options.limits.timeoutSeconds);
  std::vector<HostTensor> inputs = makeRandomInputs(g, options.seed);

  CompiledProgram program = CompiledProgram::load(c.program, device);
  DeviceTensors d = upload(g, inputs, options.misalignElements);
  program.launch(d.inputPtrs, d.outputPtrs, nullptr);
  std::vector<HostTensor> got = download(g, d);

  GpuRunReport report;
  report.kernels = program.kernelCount();
  std::vector<std::vector<bool>> sample;
  if (memory.sampledReference) sample = sampleOutputElements(g, referenceSampleSize(g), options.seed);
  PointReference points(g, inputs, &deadline);
  std::vector<HostTensor> expected = referenceOutputs(g, inputs, got, sample, memory.sampledReference, points, deadline);
  CpuCheckReport cmp = compareOutputs(g, got, sample, expected, &points);
  report.ok = cmp.ok;
  report.check = cmp.message;
  bool inPlace = false;
  for (const Output& o : g.outputs) inPlace = inPlace || o.aliasOfInput.has_value();
  for (int r = 0; r < options.repeatChecks; ++r) {
    if (inPlace)  // the launch wrote into its inputs: start the next from the same ones
      for (size_t k = 0; k < inputs.size(); ++k) d.inputs[k].upload(inputs[k].data(), static_cast<size_t>(inputs[k].byteSize()), d.inputOffsets[k]);
    program.launch(d.inputPtrs, d.outputPtrs, nullptr);
    std::vector<HostTensor> again = download(g, d);
    for (size_t o = 0; o < got.size(); ++o) report.bitwiseRepeatable = report.bitwiseRepeatable && again[o].bytes == got[o].bytes;
  }
  if (options.time) {
    report.micros = timeMedianMicros([&](CUstream s) { program.launch(d.inputPtrs, d.outputPtrs, s); }, options.iterations);
    report.bytesRead = bytesRead(g);
    report.bytesWritten = bytesWritten(g);
    report.bytes = report.bytesRead + report.bytesWritten;
  }
  return report;
}

std::vector<std::optional<double>> timeVariants(const std::vector<const CompiledGraph*>& variants,
                                                const GpuRunOptions& options) {
  POLYRED_CHECK(!variants.empty(), "no variants to time");
  const CompiledGraph& first = *variants.front();
  const Graph& g = first.graph;
  DeviceInfo device = currentDevice();
  for (const CompiledGraph* v : variants) requireDeviceMemory(*v);
  const CheckMemory memory = requireCheckMemory(first, options.limits, "checking the tuned variants");
  Deadline deadline(options.limits.timeoutSeconds);
  std::vector<HostTensor> inputs = makeRandomInputs(g, options.seed);
  std::vector<std::vector<bool>> sample;
  if (memory.sampledReference) sample = sampleOutputElements(g, referenceSampleSize(g), options.seed);
  PointReference points(g, inputs, &deadline);
  std::vector<HostTensor> expected;
  std::vector<std::optional<double>> micros;
  std::vector<const Program*> programs;
  for (const CompiledGraph* v : variants) programs.push_back(&v->program);
  warmKernelCache(programs, device);
  for (const CompiledGraph* v : variants) {
    CompiledProgram program = CompiledProgram::load(v->program, device);
    DeviceTensors d = upload(g, inputs, options.misalignElements);  // fresh: in-place outputs overwrite inputs
    program.launch(d.inputPtrs, d.outputPtrs, nullptr);
    std::vector<HostTensor> got = download(g, d);
    if (expected.empty())
      expected = referenceOutputs(g, inputs, got, sample, memory.sampledReference, points, deadline);
    if (!compareOutputs(g, got, sample, expected, &points).ok) {
      micros.push_back(std::nullopt);
      continue;
    }
    micros.push_back(
        timeMedianMicros([&](CUstream s) { program.launch(d.inputPtrs, d.outputPtrs, s); }, options.iterations));
  }
  return micros;
}

}  // namespace polyred
