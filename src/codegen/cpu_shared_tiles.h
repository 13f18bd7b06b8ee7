// The shared-memory tiles of a tiled transpose (poly/transpose_tiling.h) as one block
// of the CPU executor sees them.
//
// Takes: the kernel's TransposeTiling. Gives: per staged load, its slots() slots with
// the barrier discipline the GPU needs checked: Stage writes a slot once per tile,
// Sync makes the written slots readable, Elem reads only those, and Sync_1 (the
// block's next tile) or a new block empties them. A kernel whose Elem read a slot no
// thread staged, or staged one without a barrier between, fails here instead of racing
// on the GPU.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/dtype.h"
#include "poly/transpose_tiling.h"

namespace polyred {

class CpuSharedTiles {
 public:
  explicit CpuSharedTiles(const TransposeTiling& tiling);
  void clear();    // a new block, or Sync_1
  void publish();  // Sync
  void write(size_t value, int64_t slot, const Scalar& s);
  const Scalar& read(size_t value, int64_t slot) const;

 private:
  enum class State : uint8_t { Empty, Written, Visible };
  size_t index(size_t value, int64_t slot) const;
  int64_t slots_ = 0;
  std::vector<int> tileOf_;  // per body value: its tile, or -1
  std::vector<Scalar> data_;
  std::vector<State> state_;
};

}  // namespace polyred
