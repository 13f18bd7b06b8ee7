#include "canon/in_place_hazards.h"

#include <optional>
#include <vector>

#include "support/isl_support.h"

namespace polyred {

namespace {

bool loadsInput(const BodyValue& v, int input) {
  return v.kind == BodyValue::Kind::Load && v.temporary < 0 && v.input == input;
}

bool anyLoadOf(const std::vector<BodyValue>& values, int input) {
  for (const BodyValue& v : values)
    if (loadsInput(v, input)) return true;
  return false;
}

bool loadsAnywhere(const KernelPlan& plan, int input) {
  return anyLoadOf(plan.body, input) || anyLoadOf(plan.epilogue, input);
}

// Whether kernel `plan` reads graph input `input`: a load, or the copy of a scatter's
// base that the runtime makes before the launch (KernelSpec::initFirst).
bool readsInput(const KernelPlan& plan, int input) {
  for (const ElementwiseOutput& s : plan.stores)
    if (s.scatters() && s.scatterBase == input) return true;
  return loadsAnywhere(plan, input);
}

// Per body value of `plan`: the last pass whose point statement evaluates it, or -1.
std::vector<int> lastPassUsing(const KernelPlan& plan) {
  std::vector<int> last(plan.body.size(), -1);
  for (int pass = 0; pass < plan.passes(); ++pass) {
    const std::vector<bool> used = plan.valuesOfPass(pass);
    for (size_t v = 0; v < used.size(); ++v)
      if (used[v]) last[v] = pass;
  }
  return last;
}

// Why kernel `plan` cannot store `s` into input `input`'s buffer in place ("" if it can).
std::string bodyStoreHazard(const KernelPlan& plan, const ElementwiseOutput& s, int input) {
  if (s.scatters()) return loadsAnywhere(plan, input) ? "its scatter adds into the buffer that the same kernel reads" : "";
  if (anyLoadOf(plan.epilogue, input)) return "its kernel's epilogue reads the buffer that the body writes";
  const std::vector<int> lastPass = lastPassUsing(plan);
  for (size_t v = 0; v < plan.body.size(); ++v) {
    const BodyValue& load = plan.body[v];
    if (!loadsInput(load, input)) continue;
    const int pass = lastPass[v];
    if (pass < 0) continue;
    if (load.gathers() || !isSamePoint(load.offset, s.offset, plan.M, plan.N))
      return "its kernel reads the input at other elements than it writes (" + load.offset + " against " + s.offset + ")";
    if (pass > s.pass) return "a later pass of its kernel reads the input again after writing it";
  }
  return "";
}

std::string epilogueStoreHazard(const KernelPlan& plan, const ElementwiseOutput& s, int input) {
  if (anyLoadOf(plan.body, input)) return "its kernel's body reads the buffer that the epilogue writes";
  for (const BodyValue& load : plan.epilogue)
    if (loadsInput(load, input) && !isSamePoint(load.offset, s.offset, plan.M, 1))
      return "its kernel's epilogue reads the input at other rows than it writes";
  return "";
}

// Why the kernel that writes output o cannot write it into input `input` in place, or
// "" if it can; nullopt if `plan` does not write o.
std::optional<std::string> writerHazard(const KernelPlan& plan, int o, int input) {
  for (const ReductionOutput& r : plan.reductions)
    if (r.output == o)
      return loadsAnywhere(plan, input) ? "a reduction's result is combined into the buffer that its kernel reads" : "";
  for (const ElementwiseOutput& s : plan.stores)
    if (s.output == o) return bodyStoreHazard(plan, s, input);
  for (const ElementwiseOutput& s : plan.epilogueStores)
    if (s.output == o) return epilogueStoreHazard(plan, s, input);
  return std::nullopt;
}

std::string hazardOf(const KernelPartition& partition, int o, int input) {
  for (size_t k = 0; k < partition.kernels.size(); ++k) {
    std::optional<std::string> why = writerHazard(partition.kernels[k], o, input);
    if (!why) continue;
    if (!why->empty()) return *why;
    for (size_t later = k + 1; later < partition.kernels.size(); ++later) {
      const KernelPlan& reader = partition.kernels[later];
      if (readsInput(reader, input))
        return "kernel " + reader.name + " reads the input after " + partition.kernels[k].name + " writes it";
    }
    return "";
  }
  return "";
}

}  // namespace

void stageInPlaceHazards(KernelPartition& partition, const Graph& g) {
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    const Output& out = g.outputs[o];
    if (!out.aliasOfInput) continue;
    const int input = g.inputIndex(*out.aliasOfInput);
    if (input < 0) continue;
    std::string why = hazardOf(partition, static_cast<int>(o), input);
    if (why.empty()) continue;
    const Tensor& t = g.tensor(out.tensor);
    partition.temporaries.push_back({out.tensor, numElements(t.shape), t.dtype});
    partition.staged.push_back({static_cast<int>(o), static_cast<int>(partition.temporaries.size()) - 1, std::move(why)});
  }
}

}  // namespace polyred
