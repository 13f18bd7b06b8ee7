#include "codegen/cpu_stores.h"

#include <algorithm>
#include <cmath>

#include "ir/ops.h"
#include "support/error.h"

namespace polyred {

CpuStores::CpuStores(const Graph& g, const KernelPlan& plan, const std::vector<HostTensor>& inputs,
                     std::vector<HostTensor>& temporaries, CpuExecResult& result)
    : g_(g), temporaries_(temporaries), result_(result) {
  result.outputs.resize(g.outputs.size());
  result.written.resize(g.outputs.size());
  auto prepare = [&](int o) {
    const Tensor& t = g.tensor(g.outputs[static_cast<size_t>(o)].tensor);
    result.outputs[static_cast<size_t>(o)] = HostTensor::zeros(t.dtype, t.shape);
    result.written[static_cast<size_t>(o)].assign(static_cast<size_t>(numElements(t.shape)), false);
  };
  for (const auto& r : plan.reductions)
    if (r.output >= 0) prepare(r.output);
  for (const auto& s : plan.stores) {
    if (s.output < 0 && s.scatters()) {  // zeroed before the launch (KernelSpec::initFirst), or kept zero
      HostTensor& t = temporaries.at(static_cast<size_t>(s.temporary));
      t = HostTensor::zeros(t.dtype, t.shape);
    }
    if (s.output < 0) continue;  // a temporary (a scan's result, gathered params, a scatter)
    prepare(s.output);
    if (!s.scatters()) continue;
    // Set before the launch (KernelSpec::initFirst): zeros, or a copy of the base.
    if (s.scatterBase >= 0) result.outputs[static_cast<size_t>(s.output)] = inputs.at(static_cast<size_t>(s.scatterBase));
    result.written[static_cast<size_t>(s.output)].assign(result.written[static_cast<size_t>(s.output)].size(), true);
  }
  for (const auto& s : plan.epilogueStores) prepare(s.output);
}

void CpuStores::writeThrough(std::vector<HostTensor>& buffers, const std::vector<int>& inputOfOutput) {
  POLYRED_CHECK(inputOfOutput.size() == g_.outputs.size(), "write-through wants an entry per graph output");
  inputBuffers_ = &buffers;
  inputOfOutput_ = inputOfOutput;
  for (size_t o = 0; o < inputOfOutput.size(); ++o) {  // set whole before the launch: a scatter's base copied in
    const std::vector<bool>& written = result_.written[o];
    if (inputOfOutput[o] >= 0 && !written.empty() && std::all_of(written.begin(), written.end(), [](bool w) { return w; }))
      buffers.at(static_cast<size_t>(inputOfOutput[o])) = result_.outputs[o];
  }
}

void CpuStores::mirror(int output, int64_t i) {
  if (!inputBuffers_) return;
  const int in = inputOfOutput_[static_cast<size_t>(output)];
  if (in < 0) return;
  const HostTensor& out = result_.outputs[static_cast<size_t>(output)];
  inputBuffers_->at(static_cast<size_t>(in)).set(i, out.get(i));
}

void CpuStores::store(int output, int64_t i, const Scalar& v, DType type) {
  HostTensor& out = result_.outputs[static_cast<size_t>(output)];
  POLYRED_CHECK(i >= 0 && i < out.size(), "store at " << i << " outside output of " << out.size());
  auto written = result_.written[static_cast<size_t>(output)][static_cast<size_t>(i)];
  POLYRED_CHECK(!written, "output element " << i << " written twice");
  result_.written[static_cast<size_t>(output)][static_cast<size_t>(i)] = true;
  out.set(i, v.castTo(type));
  mirror(output, i);
}

void CpuStores::storeValue(const ElementwiseOutput& s, int64_t i, const Scalar& v) {
  if (s.output >= 0) return store(s.output, i, v, g_.tensor(g_.outputs[static_cast<size_t>(s.output)].tensor).dtype);
  HostTensor& temporary = temporaries_.at(static_cast<size_t>(s.temporary));
  POLYRED_CHECK(i >= 0 && i < temporary.size(), "store at " << i << " outside temporary of " << temporary.size());
  if (!s.zeroWhereNonzero) temporary.set(i, v);
  else if (v.asDouble() != 0 || std::isnan(v.asDouble())) temporary.set(i, Scalar::convert(0.0, temporary.dtype));
}

void CpuStores::scatterAdd(const ElementwiseOutput& s, int64_t base, const std::vector<Scalar>& values) {
  const int64_t row = values[static_cast<size_t>(s.scatterIndex)].i;
  if (row < 0 || row >= s.scatterExtent) return;
  HostTensor& out = s.output >= 0 ? result_.outputs[static_cast<size_t>(s.output)]
                                  : temporaries_.at(static_cast<size_t>(s.temporary));
  const int64_t i = base + row * s.scatterStride;
  POLYRED_CHECK(i >= 0 && i < out.size(), "scatter at " << i << " outside its target of " << out.size());
  const Scalar sum[2] = {out.get(i), values[static_cast<size_t>(s.value)].castTo(out.dtype)};
  out.set(i, evalElementwise(OpKind::Add, sum, out.dtype));
  if (s.output >= 0) mirror(s.output, i);
}

void CpuStores::storeTemporary(int t, int64_t i, const Scalar& v) {
  HostTensor& temporary = temporaries_.at(static_cast<size_t>(t));
  POLYRED_CHECK(i >= 0 && i < temporary.size(), "store at " << i << " outside temporary of " << temporary.size());
  temporary.set(i, v);
}

void CpuStores::checkEveryElementWritten() const {
  for (size_t o = 0; o < result_.written.size(); ++o)
    for (size_t e = 0; e < result_.written[o].size(); ++e)
      POLYRED_CHECK(result_.outputs[o].size() == 0 || result_.written[o][e],
                    "output " << o << " element " << e << " never written");
}

}  // namespace polyred
