#include "poly/binding.h"

#include <algorithm>

namespace polyred {

namespace {

constexpr int kThreadsPerBlock = 256;
constexpr int kBlocksPerSM = 8;          // 2048 resident threads per SM / 256
constexpr int kMaxWaves = 8;             // look no further than this many waves
constexpr int64_t kMinItemsPerThread = 8;
constexpr int64_t kMaxGridY = 65535;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int pow2AtLeast(int64_t n, int cap) {
  int p = 1;
  while (p < n && p < cap) p *= 2;
  return p;
}

// Blocks along j: the split with the best wave efficiency -- blocks over the slots
// their waves occupy -- among those that leave each thread kMinItemsPerThread
// elements; ties go to the fewest blocks (fewer partial results to combine).
int64_t splitReduced(int64_t N, int64_t threadsAlongJ, int64_t tilesOfI, const Target& t) {
  int64_t resident = static_cast<int64_t>(t.smCount) * kBlocksPerSM;
  int64_t useful = std::max<int64_t>(1, ceilDiv(N, threadsAlongJ * kMinItemsPerThread));
  int64_t limit = std::min(useful, std::max<int64_t>(1, ceilDiv(resident * kMaxWaves, tilesOfI)));
  int64_t best = 1;
  double bestEfficiency = 0;
  for (int64_t gx = 1; gx <= limit; ++gx) {
    int64_t blocks = gx * tilesOfI;
    double efficiency = static_cast<double>(blocks) / static_cast<double>(ceilDiv(blocks, resident) * resident);
    if (efficiency > bestEfficiency + 1e-9) {
      best = gx;
      bestEfficiency = efficiency;
    }
  }
  return best;
}

}  // namespace

std::string Binding::toString() const {
  return "block (" + std::to_string(BX) + "," + std::to_string(BY) + ") grid (" + std::to_string(GX) + "," +
         std::to_string(GY) + "), " + std::to_string(tiles) + " i-tile(s)";
}

Binding chooseBinding(const KernelPlan& plan, const Target& target) {
  Binding b;
  switch (plan.form) {
    case CanonicalForm::Elementwise:
      b.reduction = false;
      b.BX = kThreadsPerBlock;
      b.GX = std::min<int64_t>(ceilDiv(plan.M, b.BX), static_cast<int64_t>(target.smCount) * kBlocksPerSM * 4);
      return b;
    case CanonicalForm::AllReduce:
    case CanonicalForm::XReduce: {
      // Enough threads per row for kMinItemsPerThread each, whole warps once rows are
      // long enough, and the rest of the block on more rows.
      b.BX = pow2AtLeast(ceilDiv(plan.N, kMinItemsPerThread), kThreadsPerBlock);
      if (plan.N >= 32) b.BX = std::max(b.BX, 32);
      b.BY = std::min(kThreadsPerBlock / b.BX, pow2AtLeast(plan.M, kThreadsPerBlock));
      b.tiles = ceilDiv(plan.M, b.BY);
      b.GY = std::min(b.tiles, kMaxGridY);
      b.GX = splitReduced(plan.N, b.BX, b.tiles, target);
      return b;
    }
    case CanonicalForm::YReduce: {
      b.BX = pow2AtLeast(plan.M, 32);
      b.BY = std::min(kThreadsPerBlock / b.BX, pow2AtLeast(plan.N, kThreadsPerBlock));
      b.tiles = ceilDiv(plan.M, b.BX);
      b.GY = std::min(b.tiles, kMaxGridY);
      b.GX = splitReduced(plan.N, b.BY, b.tiles, target);
      return b;
    }
  }
  return b;
}

}  // namespace polyred
