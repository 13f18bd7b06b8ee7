// The scan kernel's cooperation between threads and blocks, for the CPU executor
// (codegen/cpu_executor.h) to run it as device/polyred_scan.cuh does.
//
// Takes: a scan kernel's binding. Gives: the threads of each row in scan order, the
// lanes of an instance inside its row, and the look-back's workspace of a scan whose
// rows span several blocks (Binding::scanChunk) as the emulated blocks leave it: a
// block takes the next chunk of its i-tile, publishes its chunk's inclusive prefix
// from the one before (which must already be published: the GPU would wait forever),
// and the tile's last block to arrive resets everything.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "ir/reduction.h"

namespace polyred {

// Per row of a block (x-form: threads along x of row ty; y-form: down column tx), its
// threads (linear ids) in scan order.
std::vector<std::vector<int>> scanRowThreads(int BX, int BY, bool yForm);

// Lanes [lo, hi) of an instance whose lane 0 lies at `pos` of its row: inside the row
// and the row a live one (not tile padding).
struct LaneRange {
  int64_t lo = 0, hi = 0;
};
LaneRange scanLanes(int64_t pos, bool live, int width, int64_t rowLength);

class ScanLookBackState {
 public:
  ScanLookBackState(int64_t rowsPerTile, int64_t chunks) : rows_(rowsPerTile), chunks_(chunks) {}
  int64_t takeChunk(int64_t tile);
  // The carry into `chunk` of row `row`; publishes the chunk's inclusive prefix.
  Scalar lookBack(int64_t tile, int64_t row, int64_t chunk, const Scalar& aggregate, const Reduction& r);
  void arrive(int64_t tile);
  bool restored() const { return tiles_.empty(); }

 private:
  struct Tile {
    int64_t taken = 0, arrived = 0;
    std::vector<std::optional<Scalar>> prefixes;  // per row and chunk
  };
  int64_t rows_, chunks_;
  std::map<int64_t, Tile> tiles_;
};

}  // namespace polyred
