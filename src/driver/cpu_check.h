// The CPU check: a compiled graph's lowered kernels run on the CPU (codegen/
// cpu_executor) against the reference interpreter, within memory and time limits.
//
// Takes a CompiledGraph and CpuCheckOptions; gives a CpuCheckReport (one line per
// output) or throws Error (exit 2) when the check would exceed its memory limit or runs
// past --timeout (TimeBudgetExceeded says how far it got).
//
// Sampling rule (documented in docs/design/untrusted-input-and-fuzzing.md, "Checks that scale"):
//   - the executor runs at most `maxPoints` statement instances, as whole i-tiles
//     (the first, the last and pseudo-random others); graphs with materialized
//     temporaries run whole, since a later kernel reads every element;
//   - graphs of at most kFullReferenceElements elements (all tensors together) are
//     evaluated whole by interp/reference; larger ones by interp/point_reference,
//     only at the elements the executor wrote, so the reference holds no copy of
//     the tensors.
// Memory is planned before anything is allocated (planCheckMemory) and refused with
// the figures when over the limit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver/pipeline.h"
#include "interp/host_tensor.h"
#include "support/budget.h"

namespace polyred {

inline constexpr int64_t kFullReferenceElements = int64_t{1} << 24;

struct CpuCheckOptions {
  uint64_t seed = 1;
  int64_t maxPoints = int64_t{1} << 20;  // executor statement instances; 0 = all
  bool deterministic = false;
  ResourceLimits limits;
  // The values of a symbolic graph's size symbols (Graph::symbols order): the check
  // runs the kernels at them against the reference of the graph at them.
  std::vector<int64_t> sizes;
};

struct CheckMemory {
  int64_t inputs = 0, outputs = 0, temporaries = 0, reference = 0;
  int64_t executor = 0;  // the CPU executor's own state, of its largest kernel (0: no executor)
  bool sampledReference = false;  // point reference at the written elements
  int64_t total() const { return inputs + outputs + temporaries + reference + executor; }
  std::string toString() const;
};

// What a check of `c` will allocate on the host (an upper bound). `cpu`: the options
// of a CPU check, whose executor is planned too; null for a GPU run's host side.
CheckMemory planCheckMemory(const CompiledGraph& c, const CpuCheckOptions* cpu = nullptr);
// planCheckMemory(c, cpu), or Error (exit 2) with the figures when it exceeds the limit
// (support/budget's memoryLimit, which the message names); `what` names the work in
// the message ("the CPU check").
CheckMemory requireCheckMemory(const CompiledGraph& c, const ResourceLimits& limits, const std::string& what,
                               const CpuCheckOptions* cpu = nullptr);

struct CpuCheckReport {
  bool ok = true;
  bool sampled = false;
  std::string message;  // one line per output
};

CpuCheckReport checkOnCpu(const CompiledGraph& c, const CpuCheckOptions& options);

// Every kernel of `c` run by the CPU executor on the given inputs (in g.inputs order):
// the outputs, with the elements each one wrote (sampling: options.maxPoints).
struct LoweredRun {
  std::vector<HostTensor> outputs;
  std::vector<std::vector<bool>> written;
  bool sampled = false;
};
LoweredRun runLoweredOnCpu(const CompiledGraph& c, const std::vector<HostTensor>& inputs,
                           const CpuCheckOptions& options, Deadline& deadline);
// The same with default limits (tests).
CpuCheckReport checkOnCpu(const CompiledGraph& c, uint64_t seed, int64_t maxPoints, bool deterministic);

class PointReference;

// The reference values of the graph's outputs: evaluated whole (interp/reference),
// or, when `sampled`, by `points` at the elements `written` marks, the others copied
// from `got` (they then compare equal and are counted as unchecked).
std::vector<HostTensor> referenceOutputs(const Graph& g, const std::vector<HostTensor>& inputs,
                                         const std::vector<HostTensor>& got,
                                         const std::vector<std::vector<bool>>& written, bool sampled,
                                         PointReference& points, Deadline& deadline);

// A sample of each output's elements for checks without an executor (GPU runs): the
// first and last min(kSampleEdge, perOutput / 2) elements and `perOutput`
// pseudo-random others.
inline constexpr int64_t kSampleEdge = 2048;
std::vector<std::vector<bool>> sampleOutputElements(const Graph& g, int64_t perOutput, uint64_t seed);

// How many elements per output sampleOutputElements should draw so that the point
// reference folds about kSampledFolds reduced elements: every sampled element may
// need a whole reduction (an argmax over 50257 logits, a softmax's row totals), so
// graphs with long reductions get fewer samples (at least kMinSample), others 2^16.
inline constexpr int64_t kSampledFolds = int64_t{1} << 24;
inline constexpr int64_t kMinSample = 64;
inline constexpr int64_t kTupleFoldCost = 32;
int64_t referenceSampleSize(const Graph& g);

// Compares kernel outputs with the reference, only where `written` is set (or all
// elements if `written` is empty). Tolerances: interp/compare.h; an element outside
// them gets a second look with the magnitude of its operands (point_reference.h)
// when `magnitudes` is given.
CpuCheckReport compareOutputs(const Graph& g, const std::vector<HostTensor>& got,
                              const std::vector<std::vector<bool>>& written, const std::vector<HostTensor>& expected,
                              PointReference* magnitudes = nullptr);

// compareOutputs over whole outputs, with the second look at the magnitudes of the
// reference's points on `inputs`: how the checks of a sharded run (the CPU simulation,
// the GPUs, the C API) compare with the unsharded reference, as the one-device check
// does -- combining the ranks' partials reassociates, and a complex product's imaginary
// part, for one, cancels (a*d + b*c).
CpuCheckReport compareWholeOutputs(const Graph& g, const std::vector<HostTensor>& inputs,
                                   const std::vector<HostTensor>& got, const std::vector<HostTensor>& expected);

}  // namespace polyred
