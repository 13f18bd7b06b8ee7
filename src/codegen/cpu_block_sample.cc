#include "codegen/cpu_block_sample.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace polyred {

namespace {

// A sample of `count` indices 0..count-1 within `keep`: the first, the last and
// pseudo-random others.
std::vector<int64_t> sampleIndices(int64_t count, int64_t keep) {
  std::vector<int64_t> all(static_cast<size_t>(count));
  std::iota(all.begin(), all.end(), 0);
  if (keep >= count) return all;
  std::mt19937_64 rng(12345);
  std::shuffle(all.begin() + 1, all.end() - 1, rng);
  std::vector<int64_t> chosen = {0, count - 1};
  for (size_t k = 1; k + 1 < all.size() && static_cast<int64_t>(chosen.size()) < keep; ++k) chosen.push_back(all[k]);
  return chosen;
}

}  // namespace

std::vector<std::pair<int64_t, int64_t>> blocksToRun(const PolyKernel& k, int64_t maxPoints, bool& sampled) {
  const Binding& b = k.binding;
  bool elementwise = k.plan.form == CanonicalForm::Elementwise;
  int64_t units = elementwise ? b.GX : b.GY;
  int64_t pointsPerUnit = std::max<int64_t>(1, k.plan.M * k.plan.N / units);
  // A scatter adds into rows any block may reach: only all blocks give its sums.
  sampled = maxPoints > 0 && pointsPerUnit * units > maxPoints && units > 2 && !k.plan.hasScatterStore();
  int64_t keep = sampled ? std::clamp<int64_t>(maxPoints / pointsPerUnit, 2, units) : units;
  std::vector<std::pair<int64_t, int64_t>> blocks;
  for (int64_t u : sampleIndices(units, keep)) {
    if (elementwise) blocks.emplace_back(u, 0);
    else
      for (int64_t bx = 0; bx < b.GX; ++bx) blocks.emplace_back(bx, u);
  }
  return blocks;
}

}  // namespace polyred
