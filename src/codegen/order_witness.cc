#include "codegen/order_witness.h"

#include "support/error.h"

namespace polyred {

void OrderWitness::join(Span& into, const Span& next, const char* what) {
  if (next.empty()) return;
  if (into.empty()) {
    into = next;
    return;
  }
  POLYRED_CHECK(next.begin == into.end, "ordered tuple: " << what << " joins j in [" << into.begin << ", " << into.end
                                                          << ") with [" << next.begin << ", " << next.end
                                                          << "), which does not follow it");
  into.end = next.end;
}

void OrderWitness::accumulate(int t, int pass, int64_t j) {
  Span& s = spans_[static_cast<size_t>(t)];
  if (s.pass != pass) s = Span{0, 0, pass};  // a later pass of a row-resident kernel starts over
  join(s, Span{j, j + 1, pass}, "a thread's accumulation");
}

void OrderWitness::joinLanes(const std::vector<int>& lanes, int pass) {
  Span total{0, 0, pass};
  for (int t : lanes) {
    const Span& s = spans_[static_cast<size_t>(t)];
    if (s.pass == pass) join(total, s, "the block reduction");
  }
  for (int t : lanes) spans_[static_cast<size_t>(t)] = total;
}

void OrderWitness::requireWholeRow(int t, int64_t i) const {
  const Span& s = spans_[static_cast<size_t>(t)];
  POLYRED_CHECK(s.begin == 0 && s.end == N_, "ordered tuple: row " << i << " stores the total of j in [" << s.begin
                                                                    << ", " << s.end << ") of [0, " << N_ << ")");
}

void OrderWitness::requireWholeRowFromBlocks(int64_t i) const {
  Span total;
  for (int64_t b = 0; b < GX_; ++b) join(total, partials_[static_cast<size_t>(i * GX_ + b)], "the cross-block combine");
  POLYRED_CHECK(total.begin == 0 && total.end == N_, "ordered tuple: row " << i << " combines j in [" << total.begin
                                                                           << ", " << total.end << ") of [0, " << N_
                                                                           << ")");
}

}  // namespace polyred
