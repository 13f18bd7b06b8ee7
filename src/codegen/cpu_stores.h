// Where the CPU executor's stores land (codegen/cpu_executor): graph outputs, each
// element written at most once; temporaries that later kernels read; atomic scatters;
// and, before the first block runs, what the runtime sets before the launch
// (KernelSpec::initFirst) and a kept-zero temporary (canon/temporary_reset) holds.
//
// Takes: a kernel plan, the graph's inputs and the partition's temporaries. Gives: the
// kernel's outputs in a CpuExecResult; InternalError for a store outside its tensor or
// an output element written twice.
#pragma once

#include <cstdint>
#include <vector>

#include "canon/kernel_plan.h"
#include "codegen/cpu_executor.h"

namespace polyred {

class CpuStores {
 public:
  // Sizes `result`'s outputs of `plan` (zeros, unwritten); an output a scatter adds
  // into starts as zeros or a copy of its base, written whole; a temporary a scatter
  // adds into starts as zeros.
  CpuStores(const Graph& g, const KernelPlan& plan, const std::vector<HostTensor>& inputs,
            std::vector<HostTensor>& temporaries, CpuExecResult& result);

  // From now on a store into graph output o also sets element i of
  // buffers[inputOfOutput[o]] where that is >= 0 (CpuExecOptions::writeThrough).
  void writeThrough(std::vector<HostTensor>& buffers, const std::vector<int>& inputOfOutput);

  // Element i of graph output `output`: v converted to `type`.
  void store(int output, int64_t i, const Scalar& v, DType type);
  // Body or epilogue store `s` at offset i: into its output (in the output's dtype) or
  // its temporary; for a zeroWhereNonzero store, zero where the loaded `v` is not.
  void storeValue(const ElementwiseOutput& s, int64_t i, const Scalar& v);
  // pr_scatter_add: values[s.value] added at base + row * stride (the row values[
  // s.scatterIndex], dropped outside [0, extent)), rounding to the target's type as
  // the GPU's atomic does.
  void scatterAdd(const ElementwiseOutput& s, int64_t base, const std::vector<Scalar>& values);
  // A reduction's or a scan's result, element i of temporary t.
  void storeTemporary(int t, int64_t i, const Scalar& v);
  const HostTensor& temporary(int t) const { return temporaries_.at(static_cast<size_t>(t)); }

  // After every block (unless sampled): no output element left unwritten.
  void checkEveryElementWritten() const;

 private:
  // The in-place input buffer output o's element i also lands in (writeThrough).
  void mirror(int output, int64_t i);

  const Graph& g_;
  std::vector<HostTensor>& temporaries_;
  CpuExecResult& result_;
  std::vector<HostTensor>* inputBuffers_ = nullptr;
  std::vector<int> inputOfOutput_;
};

}  // namespace polyred
