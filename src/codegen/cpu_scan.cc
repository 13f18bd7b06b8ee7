#include "codegen/cpu_scan.h"

#include <algorithm>

#include "support/error.h"

namespace polyred {

std::vector<std::vector<int>> scanRowThreads(int BX, int BY, bool yForm) {
  const int rows = yForm ? BX : BY, along = yForm ? BY : BX;
  std::vector<std::vector<int>> threads(static_cast<size_t>(rows));
  for (int r = 0; r < rows; ++r)
    for (int k = 0; k < along; ++k) threads[static_cast<size_t>(r)].push_back(yForm ? k * BX + r : r * BX + k);
  return threads;
}

LaneRange scanLanes(int64_t pos, bool live, int width, int64_t rowLength) {
  return {pos < 0 ? -pos : 0, live ? std::min<int64_t>(width, rowLength - pos) : 0};
}

int64_t ScanLookBackState::takeChunk(int64_t tile) {
  Tile& t = tiles_[tile];
  if (t.prefixes.empty()) t.prefixes.resize(static_cast<size_t>(rows_ * chunks_));
  POLYRED_CHECK(t.taken < chunks_, "more blocks than chunks took a chunk of i-tile " << tile);
  return t.taken++;
}

Scalar ScanLookBackState::lookBack(int64_t tile, int64_t row, int64_t chunk, const Scalar& aggregate,
                                   const Reduction& r) {
  Tile& t = tiles_.at(tile);
  Scalar before = r.identity.castTo(r.accType);
  if (chunk > 0) {
    const std::optional<Scalar>& previous = t.prefixes.at(static_cast<size_t>(row * chunks_ + chunk - 1));
    POLYRED_CHECK(previous.has_value(), "a scan block looked back at a chunk no block has scanned yet (the GPU would wait forever)");
    before = *previous;
  }
  t.prefixes.at(static_cast<size_t>(row * chunks_ + chunk)) = r.combine(before, aggregate);
  return before;
}

void ScanLookBackState::arrive(int64_t tile) {
  if (++tiles_.at(tile).arrived == chunks_) tiles_.erase(tile);  // the last block resets the tile
}

}  // namespace polyred
