// polyred device library: the index arithmetic of the block reductions.
//
// Everything that decides which thread combines with which, which lanes a shuffle
// names, and where partials live in shared memory is here, as constexpr functions that
// compile both under NVRTC (__host__ __device__) and as plain C++.
// polyred_block_reduce.cuh takes every such decision from these functions, and the CPU
// tests replay the same functions to check every block shape; host code may also use
// smem_x/smem_y/smem_all to size shared memory.
//
// Terms. A block of BX x BY threads has linear thread index t = threadIdx.y * BX +
// threadIdx.x; warp = t / 32, lane = t % 32. A "row" is a run of `width` consecutive
// threads (block_reduce_x: width BX; block_reduce_all: the whole block). A row may
// start anywhere in a warp and cross warps. A "segment" is the part of one row inside
// one warp: the unit a warp shuffle tree can reduce.
#pragma once

#if defined(__CUDACC__)
#define POLYRED_HD __host__ __device__
#else
#define POLYRED_HD
#endif

namespace polyred_dev {

constexpr int kWarpSize = 32;
constexpr int kMaxBlockThreads = 1024;

POLYRED_HD constexpr int min_int(int a, int b) { return a < b ? a : b; }
POLYRED_HD constexpr int max_int(int a, int b) { return a > b ? a : b; }
POLYRED_HD constexpr bool is_pow2(int n) { return n > 0 && (n & (n - 1)) == 0; }

// True for a block shape the library handles: 1..1024 threads.
POLYRED_HD constexpr bool valid_block_shape(int bx, int by) {
  return bx >= 1 && by >= 1 && bx * by <= kMaxBlockThreads;
}

// The lanes of warp `warp` that exist in a block of `threads` threads (a shuffle mask
// naming exactly the threads that execute the shuffle).
POLYRED_HD constexpr unsigned warp_lane_mask(int threads, int warp) {
  const int n = threads - warp * kWarpSize;
  return n >= kWarpSize ? 0xffffffffu : (1u << n) - 1u;
}

// The lanes of the aligned group of `width` lanes (a power of two <= 32) holding `lane`.
POLYRED_HD constexpr unsigned group_lane_mask(int width, int lane) {
  const unsigned group = width == kWarpSize ? 0xffffffffu : (1u << width) - 1u;
  return group << (lane & ~(width - 1));
}

// A thread's place in a run of lanes that one shuffle tree reduces: position `rel`
// from the run's first lane (the run's head, rel == 0) and the run's length.
struct Segment {
  int rel;
  int len;
};

// One step of the shuffle tree over a run: with shuffle distance `offset` (1, 2, 4, ...),
// the lane at position rel absorbs the value from position rel + offset when rel is a
// multiple of 2 * offset and that position is inside the run. After the steps with
// offset < len the head holds the whole run, combined in a fixed order.
POLYRED_HD constexpr bool tree_absorbs(Segment s, int offset) {
  return (s.rel & (2 * offset - 1)) == 0 && s.rel + offset < s.len;
}

// Rows of `width` consecutive threads, `rows` of them (linear thread index t).
// Level 1: each segment reduces to its head with warp shuffles. Level 2: the heads'
// partials go through shared memory, slot row * max_segments + (warp - row's first
// warp), and the row's first threads combine them (one warp tree when they lie in one
// warp, otherwise thread x == 0 folds them in order). Rows that are aligned
// power-of-two groups of at most 32 lanes skip level 2 entirely.
struct RowsLayout {
  int width = 1;
  int rows = 1;
  int max_segments = 1;         // the most warps any row touches
  bool finish_in_warp = true;   // each row's first max-segments threads share a warp

  POLYRED_HD static constexpr RowsLayout make(int width, int rows) {
    RowsLayout l;
    l.width = width;
    l.rows = rows;
    l.max_segments = 1;
    l.finish_in_warp = true;
    for (int row = 0; row < rows; ++row) {
      l.max_segments = max_int(l.max_segments, l.segments(row));
      if ((row * width) % kWarpSize + l.segments(row) > kWarpSize) l.finish_in_warp = false;
    }
    return l;
  }

  POLYRED_HD constexpr int threads() const { return width * rows; }
  // Rows are aligned power-of-two lane groups within a warp: one xor butterfly, no smem.
  POLYRED_HD constexpr bool single_butterfly() const { return is_pow2(width) && width <= kWarpSize; }
  // Every warp lies inside one row: level 1 is a full-warp xor butterfly.
  POLYRED_HD constexpr bool warp_aligned() const { return width % kWarpSize == 0; }
  // The longest segment (bounds the level-1 tree).
  POLYRED_HD constexpr int max_run() const { return min_int(width, kWarpSize); }
  POLYRED_HD constexpr int row_of(int t) const { return t / width; }
  POLYRED_HD constexpr int first_warp(int row) const { return row * width / kWarpSize; }
  // The number of warps row `row` touches: its number of segments and partials.
  POLYRED_HD constexpr int segments(int row) const {
    if (warp_aligned()) return width / kWarpSize;
    return (row * width + width - 1) / kWarpSize - first_warp(row) + 1;
  }
  // Thread t's segment: its row's lanes in its warp.
  POLYRED_HD constexpr Segment segment(int t) const {
    const int row = row_of(t), warp = t / kWarpSize;
    const int start = max_int(row * width, warp * kWarpSize);
    const int end = min_int(min_int(row * width + width, warp * kWarpSize + kWarpSize), threads());
    return Segment{t - start, end - start};
  }
  // Shared-memory slot of the partial written by the head of thread t's segment.
  POLYRED_HD constexpr int partial_slot(int t) const {
    const int row = row_of(t);
    return row * max_segments + t / kWarpSize - first_warp(row);
  }
  // Shared-memory elements for the partials (0 when level 2 is skipped).
  POLYRED_HD constexpr int partial_slots() const { return single_butterfly() ? 0 : rows * max_segments; }
  // Level 2 as a warp tree: the run of the row's first segments(row) threads, each
  // loading the partial at finishing_slot(t); the other threads are runs of one.
  POLYRED_HD constexpr Segment finishing_segment(int t) const {
    const int row = row_of(t), x = t - row * width, n = segments(row);
    return x < n ? Segment{x, n} : Segment{0, 1};
  }
  // Whether thread t is one of its row's first segments(row) threads (loads a partial).
  POLYRED_HD constexpr bool loads_partial(int t) const { return t % width < segments(row_of(t)); }
  POLYRED_HD constexpr int finishing_slot(int t) const {
    const int row = row_of(t);
    return row * max_segments + (t - row * width);
  }
  // Whether warp `warp` holds the first thread of some row (only those warps run the
  // level-2 tree; the condition is uniform over the warp).
  POLYRED_HD constexpr bool warp_has_row_head(int warp) const {
    const int first = warp * kWarpSize;
    const int last = min_int(first + kWarpSize, threads()) - 1;
    return (first + width - 1) / width * width <= last;
  }
};

// Bank model of shared memory: 32 banks of 4-byte words. Counts one more access of
// word `word` in `per_bank` and returns how many words that bank now serves.
POLYRED_HD constexpr int count_bank_access(int* per_bank, int word) { return ++per_bank[word % kWarpSize]; }

// block_reduce_y: thread (x, y) stores its value column-major at
// store_slot(x, y) = x * pitch + y; then thread t reads gather_slot(t), element
// r = t % BY of column c = t / BY, so each column is a row of BY consecutive threads
// for the RowsLayout{BY, BX} machinery (partials after the staging area). The head of
// column c (t = c * BY) writes the column's result back to gather_slot(t) = c * pitch,
// where every thread of column c reads it. The pitch (>= BY) is padded so the first
// warp's staging store and gather load hit as few bank conflicts as possible.
struct ColumnsLayout {
  int bx = 1;
  int by = 1;
  int pitch = 1;
  RowsLayout columns;

  POLYRED_HD static constexpr ColumnsLayout make(int bx, int by) {
    ColumnsLayout c;
    c.bx = bx;
    c.by = by;
    c.columns = RowsLayout::make(by, bx);
    c.pitch = by;
    if (!c.staged()) return c;
    // Candidate pads: up to one word for wide blocks, up to 32 / bx words for narrow ones
    // (bx columns share a warp there), so the padding costs at most about 32 + bx words.
    const int max_pad = max_int(1, (kWarpSize + bx - 1) / bx);
    int best_cost = 1 << 30;
    for (int pad = 0; pad <= max_pad; ++pad) {
      ColumnsLayout trial = c;
      trial.pitch = by + pad;
      const int cost = trial.store_conflicts(0) + trial.gather_conflicts(0);
      if (cost < best_cost) {
        best_cost = cost;
        c.pitch = trial.pitch;
      }
    }
    return c;
  }

  POLYRED_HD constexpr int threads() const { return bx * by; }
  // BY == 1: nothing to combine. BX == 1: the thread index is already column-major, so
  // the column is reduced in place as one row. Otherwise values are staged as above.
  POLYRED_HD constexpr bool staged() const { return bx > 1 && by > 1; }
  POLYRED_HD constexpr int store_slot(int x, int y) const { return x * pitch + y; }
  POLYRED_HD constexpr int gather_slot(int t) const { return t / by * pitch + t % by; }
  POLYRED_HD constexpr int result_slot(int x) const { return x * pitch; }
  // Where the column reduction's level-2 partials start.
  POLYRED_HD constexpr int partials_offset() const { return bx * pitch; }
  POLYRED_HD constexpr int smem_elements() const {
    return (staged() ? partials_offset() : 0) + columns.partial_slots();
  }
  // Bank-conflict degree (words served by the busiest bank) of warp `warp`'s staging
  // store and gather load; the words of one access are distinct.
  POLYRED_HD constexpr int store_conflicts(int warp) const {
    int per_bank[kWarpSize] = {};
    int worst = 0;
    for (int t = warp * kWarpSize; t < min_int(warp * kWarpSize + kWarpSize, threads()); ++t)
      worst = max_int(worst, count_bank_access(per_bank, store_slot(t % bx, t / bx)));
    return worst;
  }
  POLYRED_HD constexpr int gather_conflicts(int warp) const {
    int per_bank[kWarpSize] = {};
    int worst = 0;
    for (int t = warp * kWarpSize; t < min_int(warp * kWarpSize + kWarpSize, threads()); ++t)
      worst = max_int(worst, count_bank_access(per_bank, gather_slot(t)));
    return worst;
  }
};

// Shared-memory elements (of the accumulator type) that the block reductions need for
// a BX x BY block; at least 1, so `__shared__ T smem[smem_x<BX, BY>()]` is always valid.
template <int BX, int BY>
POLYRED_HD constexpr int smem_x() {
  static_assert(valid_block_shape(BX, BY), "polyred: block shape must have 1..1024 threads");
  return max_int(1, RowsLayout::make(BX, BY).partial_slots());
}
template <int BX, int BY>
POLYRED_HD constexpr int smem_y() {
  static_assert(valid_block_shape(BX, BY), "polyred: block shape must have 1..1024 threads");
  return max_int(1, ColumnsLayout::make(BX, BY).smem_elements());
}
// A y-reduce whose threads own V columns each (vector lanes): block_reduce_y_lanes
// stages every lane of the block at once, lane by lane, BY rows of BX + 1 each (padded:
// a warp's stores and its folds along x hit distinct banks), and contribute_y_lanes
// folds the staged columns in tensor order (32 consecutive columns: V lanes of 32 / V
// threads), so each lane's rows start 32 / V banks after the previous lane's. The
// elements from one lane's rows to the next's:
POLYRED_HD constexpr int y_lane_stride(int bx, int by, int v) {
  const int rows = by * (bx + 1), apart = v < 32 ? 32 / v : 1;
  return rows + ((apart - rows % 32) % 32 + 32) % 32;
}
// The array, shared with the lane-by-lane reductions' layout.
template <int BX, int BY, int V>
POLYRED_HD constexpr int smem_y_lanes() {
  return max_int(smem_y<BX, BY>(), V * y_lane_stride(BX, BY, V));
}
template <int BX, int BY>
POLYRED_HD constexpr int smem_all() {
  static_assert(valid_block_shape(BX, BY), "polyred: block shape must have 1..1024 threads");
  return max_int(1, RowsLayout::make(BX * BY, 1).partial_slots());
}

}  // namespace polyred_dev
