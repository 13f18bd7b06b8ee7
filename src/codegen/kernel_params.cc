#include "codegen/kernel_params.h"

#include <map>
#include <set>

namespace polyred {

std::vector<ParamDeclaration> pointerParams(const Graph& g, const KernelPlan& p) {
  std::set<int> loaded;
  std::map<int, DType> loadedTemps;
  for (const auto* values : {&p.body, &p.epilogue})
    for (const BodyValue& v : *values) {
      if (v.kind != BodyValue::Kind::Load) continue;
      if (v.temporary >= 0) loadedTemps[v.temporary] = v.dtype;
      else loaded.insert(v.input);
    }
  std::vector<ParamDeclaration> params;
  auto add = [&](KernelParam::Kind kind, int index, const std::string& type, const std::string& name) {
    params.push_back({{kind, index}, type + name, name});
  };
  auto aliased = [&](int input) {
    for (const Output& o : g.outputs)
      if (o.aliasOfInput && *o.aliasOfInput == g.inputs[static_cast<size_t>(input)]) return true;
    return false;
  };
  for (int in : loaded) {
    DType t = g.tensor(g.inputs[static_cast<size_t>(in)]).dtype;
    std::string qual = aliased(in) ? " " : " __restrict__ ";
    add(KernelParam::Kind::Input, in, "const " + std::string(cudaStorageType(t)) + "*" + qual, "in" + std::to_string(in));
  }
  auto output = [&](int o) {
    DType t = g.tensor(g.outputs[static_cast<size_t>(o)].tensor).dtype;
    bool alias = g.outputs[static_cast<size_t>(o)].aliasOfInput.has_value();
    add(KernelParam::Kind::Output, o, std::string(cudaStorageType(t)) + "*" + (alias ? " " : " __restrict__ "),
        "out" + std::to_string(o));
  };
  for (const auto& r : p.reductions)
    if (r.output >= 0) output(r.output);
  for (const auto& st : p.stores)
    if (st.output >= 0) output(st.output);
  for (const auto& st : p.epilogueStores) output(st.output);
  auto temporary = [&](int t, DType type, bool written) {
    add(KernelParam::Kind::Temporary, t,
        std::string(written ? "" : "const ") + std::string(cudaStorageType(type)) + "* __restrict__ ",
        "tmp" + std::to_string(t));
  };
  std::set<int> cleared;  // loaded, and zeroed where nonzero (canon/temporary_reset): one writable pointer
  for (const auto& st : p.stores)
    if (st.zeroWhereNonzero) cleared.insert(st.temporary);
  for (auto [t, type] : loadedTemps) temporary(t, type, cleared.count(t) > 0);
  for (const auto& r : p.reductions)
    if (r.temporary >= 0) temporary(r.temporary, r.outType, true);
  for (const auto& st : p.stores)  // a scan's result, gathered params or a scatter's sums that other kernels read
    if (st.temporary >= 0 && !st.zeroWhereNonzero)
      temporary(st.temporary, p.body.at(static_cast<size_t>(st.value)).dtype, true);
  return params;
}

}  // namespace polyred
