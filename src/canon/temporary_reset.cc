#include "canon/temporary_reset.h"

#include <algorithm>
#include <vector>

#include "support/isl_support.h"

namespace polyred {

namespace {

bool scattersInto(const KernelPlan& k, int temporary) {
  return std::any_of(k.stores.begin(), k.stores.end(),
                     [&](const ElementwiseOutput& s) { return s.scatters() && s.temporary == temporary; });
}

bool loads(const BodyValue& v, int temporary) { return v.kind == BodyValue::Kind::Load && v.temporary == temporary; }

bool readsAnywhere(const KernelPlan& k, int temporary) {
  auto in = [&](const std::vector<BodyValue>& values) {
    return std::any_of(values.begin(), values.end(), [&](const BodyValue& v) { return loads(v, temporary); });
  };
  return in(k.body) || in(k.epilogue);
}

// The body value of `reader` that loads `temporary` once at each of its points, or -1.
// (An elementwise kernel has no epilogue: its body is every load.)
int loadOfEachPoint(const KernelPlan& reader, int temporary, int64_t elements) {
  if (reader.form != CanonicalForm::Elementwise || reader.M != elements || reader.hasScatterStore()) return -1;
  int found = -1;
  for (size_t v = 0; v < reader.body.size(); ++v) {
    const BodyValue& b = reader.body[v];
    if (!loads(b, temporary)) continue;
    if (found >= 0 || b.gathers() || !isSamePoint(b.offset, "i", reader.M, 1)) return -1;
    found = static_cast<int>(v);
  }
  return found;
}

}  // namespace

void keepScatterTemporariesZero(KernelPartition& partition) {
  for (size_t t = 0; t < partition.temporaries.size(); ++t) {
    const int temporary = static_cast<int>(t);
    std::vector<size_t> scatterers, readers;
    for (size_t k = 0; k < partition.kernels.size(); ++k) {
      if (scattersInto(partition.kernels[k], temporary)) scatterers.push_back(k);
      if (readsAnywhere(partition.kernels[k], temporary)) readers.push_back(k);
    }
    if (scatterers.size() != 1 || readers.size() != 1 || readers[0] == scatterers[0]) continue;
    KernelPlan& reader = partition.kernels[readers[0]];
    const int load = loadOfEachPoint(reader, temporary, partition.temporaries[t].elements);
    if (load < 0) continue;
    ElementwiseOutput clear{load, -1, reader.body[static_cast<size_t>(load)].offset};
    clear.temporary = temporary;
    clear.zeroWhereNonzero = true;
    reader.stores.push_back(std::move(clear));
    reader.why += "; temporary" + std::to_string(t) + " left zero for the next launch (zero written where it was not)";
    partition.temporaries[t].keptZero = true;
  }
}

}  // namespace polyred
