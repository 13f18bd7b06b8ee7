// CUDA code generation (section 5).
//
// Takes: a PolyKernel (loops from isl) and the Graph it came from. Gives: a KernelSpec
// with a complete CUDA C++ translation unit for NVRTC and its launch configuration.
// The emitter prints the isl-generated loops as they are and gives each statement its
// meaning: Red accumulates the fused producers per thread (Part 1), BlockReduce calls
// the device library (Part 2), and Contribute/Arrive/Final combine blocks in the same
// launch through a runtime-owned workspace that every launch leaves as it found it
// (Part 3; no memset, no clean kernel). In deterministic mode blocks publish partials
// and the last block combines them in block order, all its threads together.
#pragma once

#include "codegen/cuda_expr.h"
#include "codegen/kernel_params.h"
#include "codegen/kernel_spec.h"
#include "ir/graph.h"
#include "poly/poly_kernel.h"

namespace polyred {

struct CodegenOptions {
  bool deterministic = false;
  // How far the accumulation and pointwise loops are unrolled (#pragma unroll): the
  // independent loads each thread keeps in flight (KernelConfig's `unroll` knob; auto:
  // the policy's choice per kernel, poly/vectorize.h loopUnrollFor).
  int unroll = KernelConfig::kAuto;
  // Every f32 Exp through the MUFU ex2.approx unit (POLYRED_FAST_EXP in the device
  // library; error 2 + 1.173|x| ulp). Off unless asked (CompileOptions::fastExp,
  // `--fast-exp`); without it, only the Exps of codegen/exp_range.h take that unit.
  bool fastExp = false;
  // Row-resident kernels keep their row in shared memory for the later passes
  // (codegen/row_cache.h; KernelConfig's `cache` knob), within the block's shared
  // memory on the target (Target::sharedBytesPerBlock).
  RowCacheMode rowCache = RowCacheMode::Auto;
  int64_t sharedBytesPerBlock = 48 * 1024;
  // Row-resident kernels bring their row into shared memory by bulk copies
  // (codegen/row_stage.h; KernelConfig's `stage` knob), on sm_90 and later.
  RowStageMode rowStage = RowStageMode::Auto;
  // The target's compute capability (also: its launch policy, poly/launch_policy.h).
  int ccMajor = 9, ccMinor = 0;
  // How kernels without a launch bound of their own (a row stage's) let the runtime
  // fit their registers (KernelSpec::registerFit; KernelConfig's `regfit` knob).
  RegisterFitMode registerFit = RegisterFitMode::Auto;
};

// What every generated translation unit starts with: the precision macros `options`
// ask for, then the device library (with its block scans where the unit has a scan).
std::string deviceLibraryPrelude(const CodegenOptions& options, bool scans);

// A kernel's launch bound: `threads` per block, and `minBlocksPerSM` when it sets its
// own (a row stage's); otherwise, unless `fit` is Off, POLYRED_LAUNCH_BOUNDS, which
// leaves the minimum to the runtime's register fitting (runtime/register_fit.h).
std::string launchBounds(int threads, RegisterFitMode fit, int64_t minBlocksPerSM = 0);

KernelSpec emitCuda(const Graph& g, const PolyKernel& k, const CodegenOptions& options);


// One kernel written as a part of a horizontally fused kernel (codegen/horizontal_fusion.h):
// `code` defines namespace polyred_part<part> with its combiners and
// `__device__ void run(bx, by, params...)`, which runs the kernel's block (bx, by) on a
// flat block of BX * BY threads. `params` are run's pointer parameters after bx, by;
// workspace parameters index `workspaces`.
struct KernelPart {
  using Param = ParamDeclaration;
  std::string code;
  std::vector<Param> params;
  std::vector<WorkspaceSpec> workspaces;
};
KernelPart emitCudaPart(const Graph& g, const PolyKernel& k, const CodegenOptions& options, int part);

}  // namespace polyred
