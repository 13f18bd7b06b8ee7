// The pointer parameters of a kernel: what it loads, stores and keeps between kernels.
//
// Takes: the graph and one kernel's plan. Gives: the declarations, in order -- the inputs
// the kernel loads, the outputs it writes, then the temporaries it reads and writes (a
// workspace, the emitter's own, follows them). A buffer the graph writes in place is
// declared without __restrict__ (canon/in_place_hazards decided which of its reads
// are safe; a staged output's parameter receives its temporary).
#pragma once

#include <string>
#include <vector>

#include "canon/kernel_plan.h"
#include "codegen/kernel_spec.h"
#include "ir/graph.h"

namespace polyred {

struct ParamDeclaration {
  KernelParam param;
  std::string declaration;  // "const float* __restrict__ in0"
  std::string name;         // "in0"
};

std::vector<ParamDeclaration> pointerParams(const Graph& g, const KernelPlan& p);

}  // namespace polyred
