#include "codegen/kernel_params.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "support/error.h"

namespace polyred {

namespace {

// Whether a reduction kernel reads graph input `in`, which it also writes in place,
// only where the same thread then overwrites it: in the epilogue (once per kept row), at
// the offset of an epilogue store into an output aliasing `in` -- a moving average
// x = 0.9 x + 0.1 mean(y) written back into x. Anywhere else another thread could see
// the buffer half updated.
bool readWhereWrittenInPlace(const Graph& g, const KernelPlan& p, int in) {
  auto loadsIn = [&](const BodyValue& v) { return v.kind == BodyValue::Kind::Load && v.temporary < 0 && v.input == in; };
  for (const BodyValue& v : p.body)
    if (loadsIn(v)) return false;
  for (const BodyValue& v : p.epilogue) {
    if (!loadsIn(v)) continue;
    const bool overwrittenThere = std::any_of(p.epilogueStores.begin(), p.epilogueStores.end(), [&](const ElementwiseOutput& s) {
      const std::optional<TensorId>& alias = g.outputs[static_cast<size_t>(s.output)].aliasOfInput;
      return alias && g.inputIndex(*alias) == in && s.offset == v.offset;
    });
    if (!overwrittenThere) return false;
  }
  return true;
}

}  // namespace

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
    if (aliased(in) && p.form != CanonicalForm::Elementwise && !readWhereWrittenInPlace(g, p, in))
      throw UnsupportedError(g.sourceFile, g.tensor(g.inputs[static_cast<size_t>(in)]).name,
                             "a reduction kernel that reads a buffer it also writes in place");
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
