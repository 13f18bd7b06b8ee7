#include "poly/binding.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/error.h"
#include "support/int_math.h"
#include "support/isl_support.h"
#include "support/sm_occupancy.h"

namespace polyred {

namespace {

constexpr int kMaxWaves = 8;             // look no further than this many waves
constexpr int64_t kMaxGridY = 65535;
// An elementwise kernel gives each thread one statement instance (a vector of lanes)
// and so many short blocks that the last wave's are a small share; a grid-stride loop
// takes over only past kMaxElementwiseBlocks (2^32 instances in blocks of 256), which
// keeps a horizontally fused launch's blocks far below the grid's 2^31 - 1. The loop over
// four waves of blocks it replaced lost 3-4% on streaming files: its wave count came
// from threads per SM, so blocks that registers held to 6 per SM ran 5.3 waves, and
// short blocks fill the SMs as they drain. H200, 2026-11-30 (docs/results/notes-2026-11-30.md),
// 4 waves -> one instance a thread (us): wide_deep's GkDropout 808053980462053508
// 125.7 -> 120.9 (torch.compile 120.8), its 4775603695370583184 175.9 -> 169.6
// (168.3), its 8372888187105518809 126.3 -> 121.6 (121.6), vgg16's Cast
// 3703874439199233056 153.5 -> 150.2 (145.9); 8, 16 and 64 waves fell in between on
// the first three (vgg16's best, 147.6 us, came at 16).
constexpr int64_t kMaxElementwiseBlocks = int64_t{1} << 24;
const KernelConfig kDefaults;
constexpr int64_t kLargeAllReduce = int64_t{1} << 16;  // statement instances (vectors with lanes)
// Long columns (y-reduces) stay in one block each when there are at least this many
// waves of them: the GPU is full without splitting them, and a wave of 2+ loses at most
// a third to quantization (4 waves: a fifth).
constexpr int64_t kRowResidentWaves = 2;
// Long rows (x-reduces) stay in one block of kLongRowThreads each from a quarter of a
// wave of such blocks (66 rows on 132 SMs): the kernel sequence that splits them reads
// them three times. H100, softmax f32 over rows of 16384..100000, three kernels against
// one row-resident kernel (us): 2048 rows 192.2 -> 97.1, 400 rows 86.0 -> 48.3, 200 rows
// 24.9 -> 15.5, 132 rows 29.6 -> 18.1, 64 rows of 65536 30.1 -> 23.7, but 16 rows of
// 100000 19.4 -> 29.2 (docs/results/notes-2026-11-26.md).
constexpr int64_t kLongRowWaveDivisor = 4;
constexpr int kLongRowThreads = 1024;  // row-resident kernels over long rows
// ... or half as many where the rows that blocks of kLongRowHalfThreads keep resident
// at once still fit the L2 for the later passes' re-reads, and make at least a wave
// without adding one (halfBlocksSuitLongRows):
// twice the elements per thread halve what the block reductions and the loops' set-up
// cost each element. H200 (60 MB of L2), 2026-11-29 (docs/results/notes-2026-11-29.md),
// 1024 -> 512 threads (us): logsumexp f16 [8192,32000] (64 KB rows, 34 MB resident)
// 162.3 -> 149.0, cross-entropy f16 [8192,32000] 217.4 -> 180.0, a staged softmax f16
// [8192,32000] 311.8 -> 260.3; rows of f16 50257 (53 MB resident): logsumexp 177.9 ->
// 171.0, cross-entropy 202.5 -> 182.3, softmax 291.7 -> 290.6; f32 [4096,16384] (34 MB):
// logsumexp 82.0 -> 84.5 but cross-entropy 98.5 -> 91.4. Rows whose resident set would
// exceed the L2 lost: f32 [4096,32000] (68 MB) logsumexp 160.5 -> 203.9, softmax 276.7
// -> 468.5; f16 [1024,131072] (135 MB) logsumexp 112.4 -> 122.9.
constexpr int kLongRowHalfThreads = kLongRowThreads / 2;
// Items per thread along j in row-resident kernels (the default's half): more threads
// on a row, fewer rows in a block, fewer rows resident for the later passes to find in
// the L2. H100, 2026-11-26, softmax `polyred run --config=items=4` against the default
// 8 (us): f16 [4096,30522] 329.2 -> 220.5, [4096,32768] 208.9 -> 190.4, [8192,8192]
// 100.4 -> 96.0, [16384,4096] 102.1 -> 96.2, f32 [16384,4096] 226.7 -> 183.4,
// [8192,4096] 117.0 -> 94.7, [43690,768] 98.8 -> 93.9; logsumexp f16 [8192,32000]
// 198.8 -> 186.5; the bert dropout-grad file 21.42 -> 17.82; the bert softmax file
// 18.34 -> 18.56 and cross-entropy f16 [8192,32000] 230.6 -> 231.9 the only losses
// (docs/results/notes-2026-11-26.md).
constexpr int kRowResidentItems = 4;
// Row-resident x-reduces whose launch at kRowResidentItems would fill less than half a
// wave of resident threads take kSparseRowResidentItems: twice the threads on each
// row, to keep more loads in flight. H200, 2026-11-28 (docs/results/notes-2026-11-28.md),
// 4 -> 2 items: bert's DropoutGrad + ReduceSum over [16,12,128,128]'s rows (36% of a
// wave) 15.19 -> 12.35 us, softmax f16 [32768,128] (48%) 11.65 -> 9.71, f32
// [2048,1024] 9.27 -> 8.73; but f32 [8192,512] (97% of a wave) 12.73 -> 12.93, and
// launches of a few dozen blocks moved either way (a gathered softmax 5.38 -> 4.80, a
// f16 layer norm 5.96 -> 6.47).
constexpr int kSparseRowResidentItems = 2;

int pow2AtLeast(int64_t n, int cap) {
  int p = 1;
  while (p < n && p < cap) p *= 2;
  return p;
}

// Launches too small to fill the GPU at the default items per thread: a single-pass
// reduction of less than kSmallLaunchWaves waves of resident threads' work is bound by
// latency, not bandwidth, and takes fewer items per thread -- 4, or 2 under one wave's
// worth -- so that more threads issue their loads at once. H200, 2026-11-28
// (docs/results/notes-2026-11-28.md), before -> after (us): vgg16's [64,1000] cross-entropy
// rows 9.62 -> 5.40, its exp-sum rows 7.01 -> 4.77, bert's [320,768] rows 8.00 -> 6.30,
// wide_deep's 16000-element sum 7.86 -> 5.16, its [16000,39] rows 8.30 -> 6.79; plain
// sums over [2048,768] and [320,768] rows lose 0.1-0.4.
constexpr int64_t kSmallLaunchWaves = 4;
// Rows take blocks of up to kSmallRowThreads threads along them. A row that one default
// block covers keeps one block (4 items if 2 would not fit), never a split through a
// cross-block combine (bench's [20,2000] sums: 5.1 us in one block, 5.6 in two); one
// that the default splits anyway splits more finely (tests/data/ops' selects over
// [3,16448]: 8.9 -> 5.9 us).
constexpr int kSmallRowThreads = 512;
// An all-reduce takes blocks of kSmallAllReduceThreads, to give every SM one, unless one
// default block already covers it (a cross-block combine would cost more than it gains:
// a 1280-element sum 4.1 us in one block, 4.6 in ten) or the large all-reduce rule
// (itemsFor) applies.
constexpr int kSmallAllReduceThreads = 64;

KernelConfig smallLaunchConfig(const KernelConfig& asked, const KernelPlan& plan, const Target& t) {
  const bool rows = plan.form == CanonicalForm::XReduce, whole = plan.form == CanonicalForm::AllReduce;
  if (asked.itemsPerThread != KernelConfig::kAuto || !(rows || whole)) return asked;
  const int64_t wave = static_cast<int64_t>(t.smCount) * kResidentThreadsPerSM;
  const int64_t limit = kSmallLaunchWaves * wave;
  const int64_t work = productUpTo({plan.M, plan.N}, limit);
  if (work >= limit) return asked;
  KernelConfig c = asked;
  c.itemsPerThread = work < wave ? 2 : 4;
  if (rows) {
    const int most = std::max(kSmallRowThreads, asked.threadsPerBlock);
    const bool oneDefaultBlock = ceilDiv(plan.N, itemsFor(asked, plan.form, plan.N)) <= asked.threadsPerBlock;
    if (oneDefaultBlock) {  // stays one block: 2 items, else 4, else the default's
      if (ceilDiv(plan.N, c.itemsPerThread) > most) c.itemsPerThread = 4;
      if (ceilDiv(plan.N, c.itemsPerThread) > most) return asked;
    }
    c.threadsPerBlock = std::max(asked.threadsPerBlock, pow2AtLeast(ceilDiv(plan.N, c.itemsPerThread), most));
    return c;
  }
  const int64_t oneBlock = int64_t{asked.threadsPerBlock} * itemsFor(asked, plan.form, plan.N);
  if (work <= oneBlock || plan.N >= kLargeAllReduce) return asked;
  const int64_t perSm = static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(work / (c.itemsPerThread * t.smCount))));
  c.threadsPerBlock = static_cast<int>(
      std::min<int64_t>(asked.threadsPerBlock, std::max<int64_t>(kSmallAllReduceThreads, perSm)));
  return c;
}

// Blocks along j: the fewest waves whose best split fills at least kFullWaveShare of
// their slots, else the best wave efficiency overall -- efficiency being the launch's
// blocks (this kernel's and `blocksBeside`, those of the other parts of a horizontally
// fused launch) over the slots their waves occupy -- among the splits that leave each
// thread `items` elements; ties go to the fewest blocks (fewer partial results to
// combine). One wave of longer blocks beat several of shorter ones that fill their
// slots better: H200, 2026-11-28 (docs/results/notes-2026-11-28.md), Table 2's sg02 (a
// y-reduce of 166 column tiles) 3 waves at 99.6% -> 1 at 94%: 39.3 -> 35.4 us;
// alexnet's [32,64,57,57] channel sums 2 waves at 100% -> 1 at 97%: 16.8 -> 15.3 us.
constexpr double kFullWaveShare = 0.9;

int64_t splitReduced(int64_t N, int64_t threadsAlongJ, int64_t tilesOfI, int threadsPerBlock, int64_t items,
                     const Target& t, int64_t blocksBeside) {
  const int64_t resident = residentBlocks(t, threadsPerBlock);
  const int64_t useful = std::max<int64_t>(1, ceilDiv(N, threadsAlongJ * items));
  const int64_t limit = std::min(useful, std::max<int64_t>(1, ceilDiv(resident * kMaxWaves, tilesOfI)));
  // The best split of each number of waves (index: waves - 1).
  std::vector<std::pair<int64_t, double>> bestOfWaves;
  for (int64_t gx = 1; gx <= limit; ++gx) {
    const int64_t blocks = gx * tilesOfI + blocksBeside, waves = ceilDiv(blocks, resident);
    const double efficiency = static_cast<double>(blocks) / static_cast<double>(waves * resident);
    if (bestOfWaves.size() < static_cast<size_t>(waves)) bestOfWaves.resize(static_cast<size_t>(waves), {0, 0.0});
    auto& [best, bestEfficiency] = bestOfWaves[static_cast<size_t>(waves - 1)];
    if (efficiency > bestEfficiency + 1e-9) best = gx, bestEfficiency = efficiency;
  }
  std::pair<int64_t, double> overall{1, 0.0};
  for (const auto& [gx, efficiency] : bestOfWaves) {
    if (gx == 0) continue;  // no split gives this many waves
    if (efficiency >= kFullWaveShare) return gx;
    if (efficiency > overall.second + 1e-9) overall = {gx, efficiency};
  }
  return overall.first;
}

// Short per-thread loops pay for an uneven split: the accumulation loop, unrolled by U
// with a trip count that differs between threads, ran its last (trip mod U) instances
// one after another, each a load and then the work waiting for it (nvcc's remainder
// loop; since the loop is split into the common trip and a guarded last instance,
// poly/schedule.cc, that instance and one more block tail a row remain). A split that
// gives every thread the same trip makes it a constant with neither. So when the wave
// rule leaves threads at most kShortTrip instances, the largest split from half its
// choice up that divides the row evenly, at most kMaxEvenTrip instances a thread, is
// taken instead. H200, 2026-11-29 (docs/results/notes-2026-11-29.md), all 18 shapes where
// the rule changes the split: channel sums, maxima and Welford statistics over
// (0,2,3) 13 -> 7 and 25 -> 14 blocks a channel (var_mean f32 [32,64,56,56] 14.4 ->
// 13.6 us, its sum 13.4 -> 12.3), all-reduces of 5-8 M floats 1056 -> 1024 blocks:
// 4-10% faster, none slower; against the split loop 3-7% (var_mean 14.5 -> 13.6).
// Longer loops keep the wave rule's split: there the remainder is a small share, and
// halving the blocks of an all-reduce of 2^24 floats (15-16 vectors a thread) lost 10%
// (Welford).
constexpr int64_t kShortTrip = 8;
constexpr int64_t kMaxEvenTrip = 16;

int64_t evenSplit(int64_t gx, int64_t N, int64_t threadsAlongJ) {
  if (gx < 2 || ceilDiv(N, threadsAlongJ * gx) > kShortTrip || N % threadsAlongJ != 0) return gx;
  const int64_t perThreadColumn = N / threadsAlongJ;  // instances along j for each thread index, all blocks together
  for (int64_t g = gx; 2 * g >= gx; --g)
    if (perThreadColumn % g == 0 && perThreadColumn / g <= kMaxEvenTrip) return g;
  return gx;
}

}  // namespace

int64_t residentBlocks(const Target& t, int threadsPerBlock) {
  return static_cast<int64_t>(t.smCount) * std::max(1, residentBlocksByThreads(threadsPerBlock));
}

int itemsFor(const KernelConfig& c, CanonicalForm form, int64_t N) {
  if (c.itemsPerThread != KernelConfig::kAuto) return c.itemsPerThread;
  // An all-reduce of a few MB fills its one wave only with 4 items per thread (H100,
  // 2026-11-23: max f32 [1024,1024] 12.8 -> 10.4 us); smaller ones keep 8, which leaves
  // them one block (a 1280-element sum: 4.8 us with 8, 6.4 us with 4, split over two).
  return form == CanonicalForm::AllReduce && N >= kLargeAllReduce ? 4 : 8;
}

std::string Binding::toString() const {
  return "block (" + std::to_string(BX) + "," + std::to_string(BY) + ") grid (" + std::to_string(GX) + "," +
         std::to_string(GY) + "), " + std::to_string(tiles) + " i-tile(s)" +
         (chunk > 0 ? ", contiguous chunks of " + std::to_string(chunk) + " along j" : "") +
         (scanChunk > 0 ? ", a scan over " + std::to_string(GX) + " blocks per row of " + std::to_string(scanChunk) +
                              " tile(s) each" : "") +
         (partials ? ", blocks combine through partials" : "");
}

namespace {

// The block shape and i-tiles of a reduction (GX still 1).
// x-reduce / all-reduce: enough threads per row for kMinItemsPerThread each, whole
// warps once rows are long enough, and the rest of the block on more rows.
// y-reduce: a warp (or fewer) along the contiguous i, the rest of the block along j
// (with `items` set, only as many along j as give each thread that many).
// With `threads` > 0 the block has exactly that many threads (the rows or columns
// beyond the extents idle). `c` gives the block size to aim for and the items per
// thread.
Binding blockShapeOf(CanonicalForm form, int64_t M, int64_t N, const KernelConfig& c, int threads = 0) {
  Binding b;
  const int target = c.threadsPerBlock;
  if (form == CanonicalForm::YReduce) {
    b.BX = std::min(pow2AtLeast(M, 32), target);
    b.BY = std::min(target / b.BX, pow2AtLeast(N, target));
    // With `items` set (a tuned variant), only enough threads along j for each to
    // take that many, and the rest of the block along i: a short reduced axis (39 in
    // deep_fm's [8000,39,80] sums) then needs little or no block reduction.
    if (c.itemsPerThread != KernelConfig::kAuto) {
      b.BY = std::min(b.BY, pow2AtLeast(ceilDiv(N, c.itemsPerThread), target));
      b.BX = std::min(pow2AtLeast(M, target / b.BY), target / b.BY);
    }
    if (threads) b.BY = threads / b.BX;
    b.tiles = ceilDiv(M, b.BX);
  } else {
    b.BX = pow2AtLeast(ceilDiv(N, itemsFor(c, form, N)), target);
    if (N >= 32) b.BX = std::max(b.BX, std::min(32, target));
    b.BY = threads ? threads / b.BX : std::min(target / b.BX, pow2AtLeast(M, target));
    b.tiles = ceilDiv(M, b.BY);
  }
  b.GY = std::min(b.tiles, kMaxGridY);
  return b;
}

int64_t threadsAlongJ(const Binding& b, CanonicalForm form) { return form == CanonicalForm::YReduce ? b.BY : b.BX; }

// Whether `b`, a block of the default shape, covers a row of N with its items per thread.
bool shortRows(const Binding& b, CanonicalForm form, int64_t N) {
  return N <= threadsAlongJ(b, form) * itemsFor(kDefaults, form, N);
}

// The knobs a row-resident kernel is bound with: the defaults, but `asked`'s block size
// if larger, blocks of at least kLongRowThreads on long rows (a later pass re-reads the
// row, which hits the L2 only while the rows resident at once fit it) unless a forced
// row cache keeps the later passes out of the L2, and kRowResidentItems unless `asked`
// gives the items per thread.
KernelConfig rowResidentConfig(const KernelConfig& asked, CanonicalForm form, int64_t M, int64_t N) {
  KernelConfig c = kDefaults;
  const bool shortRow = shortRows(blockShapeOf(form, M, N, kDefaults), form, N);
  const int least = shortRow || asked.rowCache == RowCacheMode::On ? kDefaults.threadsPerBlock : kLongRowThreads;
  c.threadsPerBlock = std::max(asked.threadsPerBlock, least);
  c.itemsPerThread = asked.itemsPerThread != KernelConfig::kAuto ? asked.itemsPerThread : kRowResidentItems;
  return c;
}

// The bytes of a row that each later pass of a row-resident kernel reads again: its
// elements times the bytes of every load whose offset (isl text in i and j) names both
// (a weight
// every row shares, or a label per row, is not re-read per row). Naming an axis that
// does not matter only counts more bytes, which keeps the larger blocks.
int64_t rowBytesReread(const KernelPlan& plan) {
  int64_t bytesPerElement = 0;
  for (const BodyValue& v : plan.body)
    if (v.kind == BodyValue::Kind::Load && islNamesVariable(v.offset, 'i') && islNamesVariable(v.offset, 'j'))
      bytesPerElement += dtypeBytes(v.dtype);
  return productUpTo({plan.N, plan.elementsPerN, bytesPerElement}, std::numeric_limits<int64_t>::max());
}

// Whether the long rows of an x-reduce take blocks of kLongRowHalfThreads (the rule
// there): the rows those blocks keep resident fit the L2, they make at least a wave,
// and they take no more waves than blocks of kLongRowThreads, counted in the time of
// those (a block of half the threads takes about twice as long over its row): 2113 rows
// are 9 waves of 264 blocks of 1024 but 5 of 528 blocks of 512, the time of 10.
// (Measured at 4096 and 8192 rows, where the two counts agree; not where they differ.)
bool halfBlocksSuitLongRows(const KernelPlan& plan, const Target& t) {
  if (plan.form != CanonicalForm::XReduce) return false;  // (scans take scanConfig)
  const int64_t halfResident = residentBlocks(t, kLongRowHalfThreads);
  const int64_t fullResident = residentBlocks(t, kLongRowThreads);
  if (plan.M < halfResident || 2 * ceilDiv(plan.M, halfResident) > ceilDiv(plan.M, fullResident)) return false;
  return productUpTo({halfResident, rowBytesReread(plan)}, std::numeric_limits<int64_t>::max()) <= t.l2Bytes;
}

// The knobs of a row-resident kernel (rowResidentConfig), with kSparseRowResidentItems
// for x-reduces whose rows would leave more than half of a wave's threads idle.
KernelConfig sparseRowsConfig(const KernelConfig& asked, const KernelPlan& plan, const Target& t) {
  KernelConfig c = rowResidentConfig(asked, plan.form, plan.M, plan.N);
  // (A tuned variant that asks for its items per thread keeps the shape it was timed in.)
  if (c.threadsPerBlock == kLongRowThreads && asked.threadsPerBlock < kLongRowThreads &&
      asked.itemsPerThread == KernelConfig::kAuto && halfBlocksSuitLongRows(plan, t))
    c.threadsPerBlock = kLongRowHalfThreads;
  if (asked.itemsPerThread != KernelConfig::kAuto || plan.form != CanonicalForm::XReduce) return c;
  const Binding b = blockShapeOf(plan.form, plan.M, plan.N, c);
  const int64_t wave = static_cast<int64_t>(t.smCount) * kResidentThreadsPerSM;
  if (2 * productUpTo({b.tiles, int64_t{b.threadsPerBlock()}}, wave) < wave) c.itemsPerThread = kSparseRowResidentItems;
  return c;
}

// The knobs a scan is bound with: those of a row-resident kernel, except that
//  - columns (y-reduce) keep the default shape -- the block's threads along j, as many
//    as a column needs, and enough columns for a block -- since their strided lanes
//    already give each thread V points (the items rule would leave one thread per
//    column and a few blocks: cumprod [8,32,1000] down 32 rows, 8 blocks of 1024);
//  - rows too few to fill the GPU one block each (a quarter wave, as splitScanRows)
//    take up to kLongRowThreads threads along the row, one vector each per tile: the
//    block walks its row's tiles in order, each a block scan, so fewer and wider tiles
//    finish sooner (H100, 2026-11-27: cumsum f32 [64,4096] as 4 tiles of 256 threads
//    against 1 of 1024, docs/results.md).
KernelConfig scanConfig(const KernelConfig& asked, const KernelPlan& plan, const Target& target) {
  KernelConfig c = rowResidentConfig(asked, plan.form, plan.M, plan.N);
  if (asked.itemsPerThread != KernelConfig::kAuto) return c;
  if (plan.form == CanonicalForm::YReduce) {
    c.itemsPerThread = KernelConfig::kAuto;
    return c;
  }
  const Binding natural = blockShapeOf(plan.form, plan.M, plan.N, c);
  if (natural.tiles * kLongRowWaveDivisor < residentBlocks(target, natural.threadsPerBlock())) {
    c.threadsPerBlock = std::max(c.threadsPerBlock, kLongRowThreads);
    c.itemsPerThread = 1;
  }
  return c;
}

// Scans of rows too few to fill the GPU one block each (a quarter wave) and at least
// kMinScanTilesToSplit tiles long split each row over several blocks, GX chunks of
// consecutive tiles, as many as fill one wave (a block takes its chunk in arrival
// order, so it only ever waits for blocks that run). H100, 2026-11-27 (docs/results/notes-2026-11-27.md,
// 2026-11-27), one block per row against the split: cumsum f32 [4,1048576] (256 tiles
// per row) 414.7 -> 35.4 us, f32 [4096,1024] down its 1024 columns (128 tiles) 150.5 ->
// 37.8 us; but [64,4096] (4 tiles) 8.2 -> 10.6 us and cumprod f32 [8,32,1000] down 32
// rows (4 tiles) 6.1 -> 11.9 us: a short row gains less than the look-back costs.
// Splitting rows that fill between a quarter and half a wave was slower too (2026-11-27,
// 2 chunks per row): f16 [4096,4096] down its columns 43.4 -> 50.5 us, [8192,4096]
// 82.2 -> 91.3, f32 [100,65536] 35.2 -> 37.8. And one wave of chunks beat smaller ones
// (hand-edited kernels, same session): [4,1048576] in chunks of 1, 2, 4 (one wave) and
// 8 tiles: 39.2, 31.0, 25.1, 27.5 us; [4096,1024] down its columns, 1, 2 (one wave), 4
// tiles: 30.6, 24.8, 25.2.
constexpr int64_t kMinScanTilesToSplit = 16;

// Whether a kernel whose blocks split j combines them through partials (`combine`
// auto: where a combiner would otherwise take a compare-and-swap loop). Every block
// of a launch ends at about the same time, so a CAS loop on a shared slot serializes
// them; the partials cost one store per block and a fold by the last. H100,
// 2026-11-27 (docs/results/notes-2026-11-27.md), atomic -> partials: max f32 [21128,768]
// over its rows 38.5 -> 36.1 us, [8192,768] 21.6 -> 19.9, max f32 over [1024,1024]
// 9.06 -> 7.78, max f16 over 16226304 elements 18.96 -> 18.21; but sum f32
// [8192,768] over its rows 17.5 -> 19.7: hardware atomics stay where they exist. Since
// 2026-11-30 float maxima and minima have them (integer atomics on the bit patterns),
// and took the sums' lanes and atomics over partials (H200, 2026-11-30, docs/results/notes-2026-11-30.md
// 2026-11-30): max f32 [21128,768] over its rows 27.0 -> 23.8 us, min 26.9 -> 23.7,
// [8192,768] 14.8 -> 14.1, f16 [131072,1024] 77.3 -> 74.3, f16 [21128,768] 15.6 -> 15.0,
// max f32 over [1024,1024] 7.2 -> 6.9; f32 [131072,1024] 133.5 -> 134.0 the one loss.
bool combineThroughPartials(const KernelPlan& plan, const KernelConfig& c) {
  if (c.combine != CombineMode::Auto) return c.combine == CombineMode::Partials;
  return plan.hasCompareAndSwapCombine();
}

void splitScanRows(Binding& b, int64_t N, int64_t alongJ, const Target& target) {
  const int64_t resident = residentBlocks(target, b.threadsPerBlock());
  const int64_t tilesPerRow = ceilDiv(N, alongJ);
  if (b.tiles * kLongRowWaveDivisor >= resident || tilesPerRow < kMinScanTilesToSplit || b.tiles > kMaxGridY) return;
  const int64_t chunks = std::min(tilesPerRow, std::max<int64_t>(1, resident / b.tiles));
  if (chunks < 2) return;
  b.scanChunk = ceilDiv(tilesPerRow, chunks);
  b.GX = ceilDiv(tilesPerRow, b.scanChunk);
  if (b.GX < 2) {
    b.scanChunk = 0;
    b.GX = 1;
  }
}

// Rows split over blocks, at least kMinUnsplitRows of them, whose kernel could instead
// give each row one block of up to 1024 threads, all in one wave, with at most
// kMaxUnsplitTrip instances a thread: the widest such block, and no cross-block combine
// (the last block's wait on the others' partials). H200, 2026-11-30 (docs/results/notes-2026-11-30.md,
// 2026-11-30), split -> one block a row (us): channel sums f32 [32,C,13,13] C = 192
// 7.78 -> 6.74, 256 8.12 -> 7.29, 384 (512 threads) 9.24 -> 8.29, [32,128,28,28] f32
// 10.05 -> 9.21, f16 8.15 -> 7.05; row sums f32 [48,9000] 6.06 -> 5.05, [64,16384] 6.95
// -> 5.90, [32,32768] 7.07 -> 6.20, [24,32768] 6.72 -> 6.05, [16,16384] 5.65 -> 4.96,
// [320,21128] (512) 13.67 -> 12.89; bert's ReduceMax over [320,21128] 16.80 -> 17.03.
// Longer trips kept the split: [16,65536] at 16 instances a thread 6.70 -> 7.20,
// [32,96,27,27] at 23 8.96 -> 9.31, [32,64,57,57] at 102 15.1 -> 23.0; so did fewer rows,
// whose one block each leaves the loads to a few SMs: [8,30000] 5.65 -> 6.02, [4,40000]
// i32 5.58 -> 6.24, [8,49152] 5.99 -> 6.32, [3,30001] 6.08 -> 9.03 (only rows of few
// instances gained: f16 [3,32000] 5.49 -> 4.74). Rows with masked lanes (off the vector
// boundary), whose loop branches at each access, lost at trips that others gained at:
// [32,30001] at 7.3 7.42 -> 9.91, [16,40001] at 9.8 6.85 -> 9.49, but [64,9001] at 2.2
// 6.85 -> 6.36 and f16 [24,20001] at 2.4 6.37 -> 6.07: theirs is kMaxUnsplitMaskedTrip
// (unmeasured between 2.4 and 7.3).
constexpr int64_t kMaxUnsplitTrip = 12;
constexpr int64_t kMaxUnsplitMaskedTrip = 4;
constexpr int64_t kMinUnsplitRows = 16;
constexpr int kWidestBlock = 1024;

std::optional<Binding> unsplitRows(const KernelPlan& plan, const KernelConfig& c, const Target& target) {
  if (plan.form != CanonicalForm::XReduce || plan.M < kMinUnsplitRows) return std::nullopt;
  const int64_t longest = plan.maskedLanes ? kMaxUnsplitMaskedTrip : kMaxUnsplitTrip;
  for (int threads = kWidestBlock; threads >= c.threadsPerBlock; threads /= 2) {
    KernelConfig wide = c;
    wide.threadsPerBlock = threads;
    Binding b = blockShapeOf(plan.form, plan.M, plan.N, wide);
    if (b.tiles > residentBlocks(target, b.threadsPerBlock())) continue;  // narrower blocks: more resident
    // (narrower blocks only lengthen the trip)
    if (ceilDiv(plan.N, threadsAlongJ(b, plan.form)) > longest) return std::nullopt;
    return b;
  }
  return std::nullopt;
}

}  // namespace

int64_t Target::sharedBytesPerBlock() const {
  // CUDA programming guide, "Technical Specifications per Compute Capability".
  const int cc = ccMajor * 10 + ccMinor;
  if (cc >= 90) return 227 * 1024;
  if (cc == 80 || cc == 87) return 163 * 1024;
  if (cc >= 86) return 99 * 1024;
  if (cc >= 70 && cc != 75) return 96 * 1024;
  if (cc == 75) return 64 * 1024;
  return 48 * 1024;
}

bool rowsFitOneBlock(const CanonicalSpace& space, const Target& target) {
  if (space.form == CanonicalForm::Elementwise) return false;
  Binding b = blockShapeOf(space.form, space.M, space.N, kDefaults);
  if (shortRows(b, space.form, space.N)) return true;  // splitReduced() picks one block anyway
  // Columns (y-reduces) count two waves of default blocks: a block of 32 long columns
  // re-reads more than the L2 holds while the other blocks stream, and a column softmax
  // of f32 [4096,32768] took 866.7 us as one such kernel against 827.9 as three
  // (docs/results/notes-2026-11-26.md).
  if (space.form == CanonicalForm::YReduce)
    return b.tiles >= kRowResidentWaves * residentBlocks(target, b.threadsPerBlock());
  // Rows count a quarter wave (kLongRowWaveDivisor) of the blocks chooseBinding will
  // give them.
  b = blockShapeOf(space.form, space.M, space.N, rowResidentConfig(kDefaults, space.form, space.M, space.N));
  return b.tiles * kLongRowWaveDivisor >= residentBlocks(target, b.threadsPerBlock());
}

Binding chooseBinding(const KernelPlan& plan, const Target& target, const KernelConfig& config, int threadsPerBlock,
                      int64_t blocksBeside) {
  // Row-resident kernels were planned with rowsFitOneBlock() under the defaults: larger
  // blocks keep its promise (they cover more of a row, and fewer of them are resident),
  // smaller ones might not. With GX == 1 the items per thread only shape the block:
  // kRowResidentItems (unless `items` is given) puts twice the default's threads along a
  // row and half its rows in a block.
  // Long rows take blocks of kLongRowThreads (rowResidentConfig; H100, softmax f16 over
  // 4096 rows of 50257, 3 passes: 820 us with 256 threads, 878 with 512, 576 with 1024).
  // A scan is row-resident too: the running fold crosses its row's tiles in order.
  const bool rowResident = plan.passes() > 1 || plan.hasScan();
  const KernelConfig c = plan.hasScan() ? scanConfig(config, plan, target)
                         : rowResident ? sparseRowsConfig(config, plan, target)
                                       : smallLaunchConfig(config, plan, target);
  POLYRED_CHECK(threadsPerBlock == 0 || (threadsPerBlock <= 1024 && (threadsPerBlock & (threadsPerBlock - 1)) == 0),
                plan.name << ": blocks of " << threadsPerBlock << " threads asked for");
  if (plan.form == CanonicalForm::Elementwise) {
    Binding b;
    b.reduction = false;
    b.BX = threadsPerBlock ? threadsPerBlock : c.threadsPerBlock;
    b.GX = std::min<int64_t>(ceilDiv(plan.M, b.BX), kMaxElementwiseBlocks);
    return b;
  }
  Binding natural = blockShapeOf(plan.form, plan.M, plan.N, c);
  POLYRED_CHECK(threadsPerBlock == 0 || threadsPerBlock >= natural.threadsPerBlock(),
                plan.name << ": blocks of " << threadsPerBlock << " threads, fewer than its own "
                          << natural.threadsPerBlock());
  Binding b = threadsPerBlock ? blockShapeOf(plan.form, plan.M, plan.N, c, threadsPerBlock) : natural;
  // Blocks beside count while they are few (a quarter of a wave at most): then they
  // are short next to this kernel's, and slot counts predict when the launch ends.
  if (blocksBeside > residentBlocks(target, b.threadsPerBlock()) / 4) blocksBeside = 0;
  // A row-resident kernel keeps a row in one block: rowsFitOneBlock() admitted one of
  // several passes because its rows are short or many; a scan has no other form.
  int64_t alongJ = threadsAlongJ(b, plan.form);
  if (rowResident) {
    b.GX = 1;
  } else if (c.splitBlocks != KernelConfig::kAuto) {  // the knob: at most one instance a thread
    b.GX = std::min<int64_t>(c.splitBlocks, ceilDiv(plan.N, alongJ));
  } else {
    const int64_t byWaves =
        splitReduced(plan.N, alongJ, b.tiles, b.threadsPerBlock(), itemsFor(c, plan.form, plan.N), target, blocksBeside);
    b.GX = evenSplit(byWaves, plan.N, alongJ);
    // (a horizontally fused part keeps the launch's block size, a tuned variant that
    // asks for its items per thread the shape it was timed in)
    const bool mayWiden = b.GX > 1 && threadsPerBlock == 0 && config.itemsPerThread == KernelConfig::kAuto;
    if (const std::optional<Binding> wide = mayWiden ? unsplitRows(plan, c, target) : std::nullopt) {
      b = *wide;
      alongJ = threadsAlongJ(b, plan.form);
    }
  }
  if (plan.hasScan()) splitScanRows(b, plan.N, alongJ, target);
  b.partials = b.multiBlock() && combineThroughPartials(plan, c);
  // Ordered tuples: the same threads and blocks, each over one contiguous chunk of j
  // (the last ones may be short or empty: they contribute the identity).
  if (plan.hasOrderedReduction()) b.chunk = std::max<int64_t>(1, ceilDiv(plan.N, alongJ * b.GX));
  return b;
}

}  // namespace polyred
