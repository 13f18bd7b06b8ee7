// What code generation hands the runtime: CUDA source plus everything needed to
// launch it. A Program is the kernels of one sub-graph, launched in order on one
// stream. Sizes are baked into the source (kernels are shape-specialized), except the
// rows of a symbolic kernel: its size symbols follow the pointers as `long long`
// arguments (KernelParam::Kind::Size), and its grid follows them (GridRule).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "poly/kernel_config.h"

namespace polyred {

// How a symbolic kernel's grid follows its rows (canon's SymbolicRows): along grid
// dimension `axis`, ceil(coefficient * sizes[symbol] / rowsPerBlock) blocks, at most
// the compiled grid's (the kernel loops over the tiles past it); no rows, no launch.
struct GridRule {
  int symbol = -1;  // -1: the grid is fixed
  int64_t coefficient = 1;
  int64_t rowsPerBlock = 1;
  int axis = 0;
  // The row counts (coefficient * the symbol's value) this kernel serves: a symbolic
  // kernel's variant (KernelSpec::rowVariants) serves some, one kernel all.
  int64_t fewestRows = 0;
  int64_t mostRows = std::numeric_limits<int64_t>::max();
  // Whether the kernel serves the rows at the symbols' values `sizes` (any: fixed grid).
  bool serves(const std::vector<int64_t>& sizes) const;
  bool servesEveryRowCount() const { return fewestRows == 0 && mostRows == std::numeric_limits<int64_t>::max(); }
};

// The kernel launched at the symbols' values `sizes`: the row variant of `k` (a
// KernelSpec, or the runtime's loaded kernel, each with `launch.rows` and
// `rowVariants`) whose rows hold them, else `k` itself (also when `sizes` are empty: a
// concrete program). A comparison per variant, on the host at every launch.
template <class Launched>
const Launched& kernelForRows(const Launched& k, const std::vector<int64_t>& sizes) {
  if (k.rowVariants.empty() || sizes.empty()) return k;
  for (const Launched& v : k.rowVariants)
    if (v.launch.rows.serves(sizes)) return v;
  return k;
}

struct LaunchConfig {
  std::array<uint32_t, 3> grid{1, 1, 1};
  GridRule rows;
  // The grid at the symbols' values `sizes` (Graph::symbols order); the compiled grid
  // when it is fixed. A zero dimension means nothing to launch.
  std::array<uint32_t, 3> gridAt(const std::vector<int64_t>& sizes) const;
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t dynamicSharedBytes = 0;
  int threadsPerBlock() const { return static_cast<int>(block[0] * block[1] * block[2]); }
};

// Scratch memory owned by the runtime, one allocation per (kernel, stream). It is
// filled with `initPattern` (repeated) once, when allocated; every kernel leaves it
// in that state when it finishes, so no launch ever needs a memset.
struct WorkspaceSpec {
  int64_t bytes = 0;
  std::vector<uint8_t> initPattern;  // repeated to fill `bytes`; empty = zeros
};

// A buffer between two kernels of one Program, allocated by the runtime.
struct TemporarySpec {
  int64_t bytes = 0;
  // Zeroed when the runtime allocates it; the program leaves it zero after every
  // launch (Temporary::keptZero). Otherwise its contents start undefined.
  bool zeroWhenAllocated = false;
  // A symbolic program's temporary sized by a size symbol: bytesPerSymbol times the
  // value of symbol `symbol`, allocated at launch (`bytes` holds it at the probe).
  int symbol = -1;
  int64_t bytesPerSymbol = 0;

  int64_t bytesAt(const std::vector<int64_t>& sizes) const {
    return symbol < 0 ? bytes : bytesPerSymbol * sizes.at(static_cast<size_t>(symbol));
  }
};

struct KernelParam {
  enum class Kind : uint8_t { Input, Output, Workspace, Temporary, Size };
  Kind kind = Kind::Input;
  // into Graph::inputs / Graph::outputs / KernelSpec::workspaces / Program::temporaries;
  // Size: the symbol (Graph::symbols), passed as a long long
  int index = 0;
};

// One kernel of the partition inside a horizontally fused launch: it runs on blocks
// [firstBlock, firstBlock + blocks) of blockIdx.x.
struct LaunchPart {
  std::string kernel;  // the partition's kernel name (KernelPlan::name)
  int64_t firstBlock = 0;
  int64_t blocks = 0;
};

// A buffer the kernel adds into (ScatterAdd): a graph output or a temporary, whose
// `bytes` the runtime sets on the launch's stream just before the launch -- to zero,
// or to a copy of graph input `fromInput` (the scatter's base).
struct OutputInit {
  int output = 0;  // into Graph::outputs, unless `temporary` >= 0
  int64_t bytes = 0;
  int fromInput = -1;  // into Graph::inputs; -1: zeros
  int temporary = -1;  // into Program::temporaries: zeros
};

struct KernelSpec {
  std::string name;    // the __global__ function's name in `source`
  std::string source;  // complete CUDA C++ translation unit for NVRTC
  LaunchConfig launch;
  std::vector<KernelParam> params;  // the kernel's pointer arguments, in order
  std::vector<WorkspaceSpec> workspaces;
  std::vector<LaunchPart> parts;  // empty unless several kernels share this launch
  std::vector<OutputInit> initFirst;
  // Unless Off, the kernel's launch bound is POLYRED_LAUNCH_BOUNDS(threads) (the device
  // library): the runtime may compile it asking for more blocks per SM
  // (runtime/register_fit.h; KernelConfig's `regfit` knob).
  RegisterFitMode registerFit = RegisterFitMode::Off;
  // A symbolic kernel compiled again for fewer rows, bound as the policy binds them
  // (driver/row_variants.h): the launch runs the variant whose launch.rows serves the
  // sizes, else this kernel (the rows above them). Each has this kernel's parameters and
  // neither workspaces nor variants of its own. Empty for every other kernel.
  std::vector<KernelSpec> rowVariants;
};

// After the last launch: `bytes` of temporary `temporary` copied into graph output
// `output` -- an in-place output staged (canon/in_place_hazards), whose input buffer
// the kernels still read while they compute it.
struct OutputCopy {
  int temporary = 0;
  int output = 0;
  int64_t bytes = 0;
};

struct Program {
  std::vector<std::string> symbols;  // a symbolic program's size symbols (Graph::symbols)
  std::vector<KernelSpec> kernels;
  std::vector<TemporarySpec> temporaries;
  std::vector<OutputCopy> copiesAfter;
};

// Every kernel the program compiles: each launch's kernel, then its row variants. What a
// source dump, an NVRTC pass or a cache warm-up walks (a launch list shows launches only).
inline std::vector<const KernelSpec*> compiledKernels(const Program& program) {
  std::vector<const KernelSpec*> all;
  for (const KernelSpec& k : program.kernels) {
    all.push_back(&k);
    for (const KernelSpec& variant : k.rowVariants) all.push_back(&variant);
  }
  return all;
}

}  // namespace polyred
