// The order witness of the CPU executor, for kernels with an ordered (non-commutative)
// tuple reduction: while the lowered statements run, it follows which range of j each
// accumulator holds and checks that every combination joins adjacent ranges, the lower
// one on the left -- a thread's accumulation (consecutive j), the block reduction
// (lanes in order), the cross-block combine (blocks in order) -- and that each stored
// total covers all of [0, N). Results alone would show a reordering only for data that
// happens to expose it; the witness shows it for any data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace polyred {

class OrderWitness {
 public:
  // The elements [begin, end) of j accumulated in one pass (empty: begin == end).
  struct Span {
    int64_t begin = 0, end = 0;
    int pass = -1;
    bool empty() const { return begin == end; }
  };

  OrderWitness(int threads, int64_t M, int64_t GX, int64_t N)
      : spans_(static_cast<size_t>(threads)), partials_(static_cast<size_t>(M * GX)), GX_(GX), N_(N) {}

  // Init: the thread starts from the identity.
  void reset(int t) { spans_[static_cast<size_t>(t)] = Span{}; }

  // Red of pass `pass` at j: the next element after those the thread holds.
  void accumulate(int t, int pass, int64_t j);

  // A block reduction of pass `pass` over one row's (column's) threads, in lane order:
  // the joined span goes to each of them.
  void joinLanes(const std::vector<int>& lanes, int pass);

  // Contribute: block bx's partial of row i is thread t's span.
  void contribute(int t, int64_t i, int64_t bx) {
    partials_[static_cast<size_t>(i * GX_ + bx)] = spans_[static_cast<size_t>(t)];
  }

  // Store (one block per row): thread t's span is the whole row.
  void requireWholeRow(int t, int64_t i) const;

  // Final: blocks 0, 1, ... of row i hold adjacent spans that make up the whole row.
  void requireWholeRowFromBlocks(int64_t i) const;

 private:
  static void join(Span& into, const Span& next, const char* what);

  std::vector<Span> spans_;     // per thread
  std::vector<Span> partials_;  // per (row, block)
  int64_t GX_, N_;
};

}  // namespace polyred
