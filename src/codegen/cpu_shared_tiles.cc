#include "codegen/cpu_shared_tiles.h"

#include <algorithm>

#include "support/error.h"

namespace polyred {

CpuSharedTiles::CpuSharedTiles(const TransposeTiling& tiling) : slots_(tiling.empty() ? 0 : tiling.slots()) {
  int tiles = 0;
  for (bool staged : tiling.staged) tileOf_.push_back(staged ? tiles++ : -1);
  data_.resize(static_cast<size_t>(tiles * slots_));
  state_.assign(data_.size(), State::Empty);
}

size_t CpuSharedTiles::index(size_t value, int64_t slot) const {
  POLYRED_CHECK(value < tileOf_.size() && tileOf_[value] >= 0, "body value " << value << " has no shared tile");
  POLYRED_CHECK(slot >= 0 && slot < slots_, "shared tile slot " << slot << " outside [0, " << slots_ << ")");
  return static_cast<size_t>(tileOf_[value] * slots_ + slot);
}

void CpuSharedTiles::clear() { std::fill(state_.begin(), state_.end(), State::Empty); }

void CpuSharedTiles::publish() {
  for (State& s : state_)
    if (s == State::Written) s = State::Visible;
}

void CpuSharedTiles::write(size_t value, int64_t slot, const Scalar& s) {
  const size_t k = index(value, slot);
  POLYRED_CHECK(state_[k] == State::Empty, "shared tile slot " << slot << " of value " << value
                                                               << " staged twice in one tile (threads would race)");
  data_[k] = s;
  state_[k] = State::Written;
}

const Scalar& CpuSharedTiles::read(size_t value, int64_t slot) const {
  const size_t k = index(value, slot);
  POLYRED_CHECK(state_[k] == State::Visible, "shared tile slot " << slot << " of value " << value
                                                                 << (state_[k] == State::Empty ? " read but never staged in this tile"
                                                                                               : " read before the barrier after its Stage"));
  return data_[k];
}

}  // namespace polyred
