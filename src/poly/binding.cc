#include "poly/binding.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "poly/launch_policy.h"
#include "support/error.h"
#include "support/int_math.h"
#include "support/isl_support.h"
#include "support/sm_occupancy.h"

namespace polyred {

namespace {

constexpr int64_t kMaxGridY = 65535;
const KernelConfig kDefaults;

int pow2AtLeast(int64_t n, int cap) {
  int p = 1;
  while (p < n && p < cap) p *= 2;
  return p;
}

// Launches too small to fill the GPU at the default items per thread: a single-pass
// x- or all-reduce of less than smallLaunchWaves waves of resident threads' work is
// bound by latency, not bandwidth, and takes fewer items per thread, so that more
// threads issue their loads at once. A row that one default block covers keeps one
// block (of up to smallRowThreads), never a split through a cross-block combine; an
// all-reduce takes blocks of at least smallAllReduceThreads, to give every SM one,
// unless one default block covers it or it is large (itemsFor).
KernelConfig smallLaunchConfig(const KernelConfig& asked, const KernelPlan& plan, const Target& t) {
  const LaunchPolicy& p = t.launchPolicy();
  const bool rows = plan.form == CanonicalForm::XReduce, whole = plan.form == CanonicalForm::AllReduce;
  if (asked.itemsPerThread != KernelConfig::kAuto || !(rows || whole)) return asked;
  const int64_t wave = static_cast<int64_t>(t.smCount) * kResidentThreadsPerSM;
  const int64_t limit = p.smallLaunchWaves * wave;
  const int64_t work = productUpTo({plan.M, plan.N}, limit);
  if (work >= limit) return asked;
  KernelConfig c = asked;
  c.itemsPerThread = work < wave ? p.underOneWaveItems : p.smallLaunchItems;
  if (rows) {
    const int most = std::max(p.smallRowThreads, asked.threadsPerBlock);
    const bool oneDefaultBlock = ceilDiv(plan.N, itemsFor(asked, plan.form, plan.N, p)) <= asked.threadsPerBlock;
    if (oneDefaultBlock) {  // stays one block: the fewest items that fit, else the default's
      if (ceilDiv(plan.N, c.itemsPerThread) > most) c.itemsPerThread = p.smallLaunchItems;
      if (ceilDiv(plan.N, c.itemsPerThread) > most) return asked;
    }
    c.threadsPerBlock = std::max(asked.threadsPerBlock, pow2AtLeast(ceilDiv(plan.N, c.itemsPerThread), most));
    return c;
  }
  const int64_t oneBlock = int64_t{asked.threadsPerBlock} * itemsFor(asked, plan.form, plan.N, p);
  if (work <= oneBlock || plan.N >= p.largeAllReduceElements) return asked;
  const int64_t perSm = static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(work / (c.itemsPerThread * t.smCount))));
  c.threadsPerBlock = static_cast<int>(
      std::min<int64_t>(asked.threadsPerBlock, std::max<int64_t>(p.smallAllReduceThreads, perSm)));
  return c;
}

// Blocks along j: the fewest waves whose best split fills at least fullWaveSharePercent
// of their slots, else the best wave efficiency overall -- efficiency being the launch's
// blocks (this kernel's and `blocksBeside`, those of the other parts of a horizontally
// fused launch) over the slots their waves occupy -- among the splits that leave each
// thread `items` elements; ties go to the fewest blocks (fewer partial results to
// combine). One wave of longer blocks beats several of shorter ones that fill their
// slots better.
int64_t splitReduced(int64_t N, int64_t threadsAlongJ, int64_t tilesOfI, int threadsPerBlock, int64_t items,
                     const Target& t, int64_t blocksBeside) {
  const LaunchPolicy& p = t.launchPolicy();
  const double fullWaveShare = p.fullWaveSharePercent / 100.0;
  const int64_t resident = residentBlocks(t, threadsPerBlock);
  const int64_t useful = std::max<int64_t>(1, ceilDiv(N, threadsAlongJ * items));
  const int64_t limit = std::min(useful, std::max<int64_t>(1, ceilDiv(resident * p.maxWaves, tilesOfI)));
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
    if (efficiency >= fullWaveShare) return gx;
    if (efficiency > overall.second + 1e-9) overall = {gx, efficiency};
  }
  return overall.first;
}

// Short per-thread loops pay for an uneven split: the accumulation loop, unrolled with
// a trip count that differs between threads, runs its last instances one after another
// (the remainder loop; since the loop is split into the common trip and a guarded last
// instance, poly/schedule.cc, that instance and one more block tail a row remain). A
// split that gives every thread the same trip makes it a constant with neither. So when
// the wave rule leaves threads at most shortTrip instances, the largest split from half
// its choice up that divides the row evenly, at most maxEvenTrip instances a thread, is
// taken instead. Longer loops keep the wave rule's split: there the remainder is a small
// share.
int64_t evenSplit(int64_t gx, int64_t N, int64_t threadsAlongJ, const LaunchPolicy& p) {
  if (gx < 2 || ceilDiv(N, threadsAlongJ * gx) > p.shortTrip || N % threadsAlongJ != 0) return gx;
  const int64_t perThreadColumn = N / threadsAlongJ;  // instances along j for each thread index, all blocks together
  for (int64_t g = gx; 2 * g >= gx; --g)
    if (perThreadColumn % g == 0 && perThreadColumn / g <= p.maxEvenTrip) return g;
  return gx;
}

}  // namespace

int64_t residentBlocks(const Target& t, int threadsPerBlock) {
  return static_cast<int64_t>(t.smCount) * std::max(1, residentBlocksByThreads(threadsPerBlock));
}

int itemsFor(const KernelConfig& c, CanonicalForm form, int64_t N, const LaunchPolicy& p) {
  if (c.itemsPerThread != KernelConfig::kAuto) return c.itemsPerThread;
  // An all-reduce of a few MB fills its one wave only with fewer items per thread;
  // smaller ones keep the default's, which leaves them one block.
  return form == CanonicalForm::AllReduce && N >= p.largeAllReduceElements ? p.largeAllReduceItems : p.defaultItems;
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
// x-reduce / all-reduce: enough threads per row for their items per thread each, whole
// warps once rows are long enough, and the rest of the block on more rows.
// y-reduce: a warp (or fewer) along the contiguous i, the rest of the block along j
// (with `items` set, only as many along j as give each thread that many).
// With `threads` > 0 the block has exactly that many threads (the rows or columns
// beyond the extents idle). `c` gives the block size to aim for and the items per
// thread (auto: `p`'s).
Binding blockShapeOf(CanonicalForm form, int64_t M, int64_t N, const KernelConfig& c, const LaunchPolicy& p,
                     int threads = 0) {
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
    b.BX = pow2AtLeast(ceilDiv(N, itemsFor(c, form, N, p)), target);
    if (N >= 32) b.BX = std::max(b.BX, std::min(32, target));
    b.BY = threads ? threads / b.BX : std::min(target / b.BX, pow2AtLeast(M, target));
    b.tiles = ceilDiv(M, b.BY);
  }
  b.GY = std::min(b.tiles, kMaxGridY);
  return b;
}

int64_t threadsAlongJ(const Binding& b, CanonicalForm form) { return form == CanonicalForm::YReduce ? b.BY : b.BX; }

// Whether `b`, a block of the default shape, covers a row of N with its items per thread.
bool shortRows(const Binding& b, CanonicalForm form, int64_t N, const LaunchPolicy& p) {
  return N <= threadsAlongJ(b, form) * itemsFor(kDefaults, form, N, p);
}

// The knobs a row-resident kernel is bound with: the defaults, but `asked`'s block size
// if larger, blocks of at least longRowThreads on long rows (a later pass re-reads the
// row, which hits the L2 only while the rows resident at once fit it) unless a forced
// row cache keeps the later passes out of the L2, and rowResidentItems unless `asked`
// gives the items per thread: more threads on a row, fewer rows in a block, fewer rows
// resident for the later passes to find in the L2.
KernelConfig rowResidentConfig(const KernelConfig& asked, CanonicalForm form, int64_t M, int64_t N,
                               const LaunchPolicy& p) {
  KernelConfig c = kDefaults;
  const bool shortRow = shortRows(blockShapeOf(form, M, N, kDefaults, p), form, N, p);
  const int least = shortRow || asked.rowCache == RowCacheMode::On ? kDefaults.threadsPerBlock : p.longRowThreads;
  c.threadsPerBlock = std::max(asked.threadsPerBlock, least);
  c.itemsPerThread = asked.itemsPerThread != KernelConfig::kAuto ? asked.itemsPerThread : p.rowResidentItems;
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

// Whether the long rows of an x-reduce take blocks of longRowHalfThreads -- twice the
// elements per thread halve what the block reductions and the loops' set-up cost each
// element: the rows those blocks keep resident fit the L2 for the later passes'
// re-reads, they make at least a wave, and they take no more waves than blocks of
// longRowThreads, counted in the time of
// those (a block of half the threads takes about twice as long over its row): 2113 rows
// are 9 waves of 264 blocks of 1024 but 5 of 528 blocks of 512, the time of 10.
// (Measured at 4096 and 8192 rows, where the two counts agree; not where they differ.)
bool halfBlocksSuitLongRows(const KernelPlan& plan, const Target& t) {
  if (plan.form != CanonicalForm::XReduce) return false;  // (scans take scanConfig)
  const LaunchPolicy& p = t.launchPolicy();
  const int64_t halfResident = residentBlocks(t, p.longRowHalfThreads);
  const int64_t fullResident = residentBlocks(t, p.longRowThreads);
  if (plan.M < halfResident || 2 * ceilDiv(plan.M, halfResident) > ceilDiv(plan.M, fullResident)) return false;
  return productUpTo({halfResident, rowBytesReread(plan)}, std::numeric_limits<int64_t>::max()) <= t.l2Bytes;
}

// The knobs of a row-resident kernel (rowResidentConfig), with sparseRowResidentItems
// for x-reduces whose rows would leave more than half of a wave's threads idle: more
// threads on each row keep more loads in flight.
KernelConfig sparseRowsConfig(const KernelConfig& asked, const KernelPlan& plan, const Target& t) {
  const LaunchPolicy& p = t.launchPolicy();
  KernelConfig c = rowResidentConfig(asked, plan.form, plan.M, plan.N, p);
  // (A tuned variant that asks for its items per thread keeps the shape it was timed in.)
  if (c.threadsPerBlock == p.longRowThreads && asked.threadsPerBlock < p.longRowThreads &&
      asked.itemsPerThread == KernelConfig::kAuto && halfBlocksSuitLongRows(plan, t))
    c.threadsPerBlock = p.longRowHalfThreads;
  if (asked.itemsPerThread != KernelConfig::kAuto || plan.form != CanonicalForm::XReduce) return c;
  const Binding b = blockShapeOf(plan.form, plan.M, plan.N, c, p);
  const int64_t wave = static_cast<int64_t>(t.smCount) * kResidentThreadsPerSM;
  if (2 * productUpTo({b.tiles, int64_t{b.threadsPerBlock()}}, wave) < wave)
    c.itemsPerThread = p.sparseRowResidentItems;
  return c;
}

// The knobs a scan is bound with: those of a row-resident kernel, except that
//  - columns (y-reduce) keep the default shape -- the block's threads along j, as many
//    as a column needs, and enough columns for a block -- since their strided lanes
//    already give each thread V points (the items rule would leave one thread per
//    column and a few blocks: cumprod [8,32,1000] down 32 rows, 8 blocks of 1024);
//  - rows too few to fill the GPU one block each (a quarter wave, as splitScanRows)
//    take up to longRowThreads threads along the row, one vector each per tile: the
//    block walks its row's tiles in order, each a block scan, so fewer and wider tiles
//    finish sooner (H100, 2026-11-27: cumsum f32 [64,4096] as 4 tiles of 256 threads
//    against 1 of 1024, docs/results.md).
KernelConfig scanConfig(const KernelConfig& asked, const KernelPlan& plan, const Target& target) {
  const LaunchPolicy& p = target.launchPolicy();
  KernelConfig c = rowResidentConfig(asked, plan.form, plan.M, plan.N, p);
  if (asked.itemsPerThread != KernelConfig::kAuto) return c;
  if (plan.form == CanonicalForm::YReduce) {
    c.itemsPerThread = KernelConfig::kAuto;
    return c;
  }
  const Binding natural = blockShapeOf(plan.form, plan.M, plan.N, c, p);
  if (natural.tiles * p.longRowWaveDivisor < residentBlocks(target, natural.threadsPerBlock())) {
    c.threadsPerBlock = std::max(c.threadsPerBlock, p.longRowThreads);
    c.itemsPerThread = 1;
  }
  return c;
}

// Whether a kernel whose blocks split j combines them through partials (`combine`
// auto: where a combiner would otherwise take a compare-and-swap loop). Every block
// of a launch ends at about the same time, so a CAS loop on a shared slot serializes
// them; the partials cost one store per block and a fold by the last. Hardware atomics
// stay where they exist (float maxima and minima: integer atomics on the bit patterns).
// H100, 2026-11-27, docs/results/notes-2026-11-27.md; H200, 2026-11-30,
// docs/results/notes-2026-11-30.md.
bool combineThroughPartials(const KernelPlan& plan, const KernelConfig& c) {
  if (c.combine != CombineMode::Auto) return c.combine == CombineMode::Partials;
  return plan.hasCompareAndSwapCombine();
}

// Scans of rows too few to fill the GPU one block each (a quarter wave) and at least
// minScanTilesToSplit tiles long split each row over several blocks, GX chunks of
// consecutive tiles, as many as fill one wave (a block takes its chunk in arrival
// order, so it only ever waits for blocks that run). A short row gains less than the
// look-back costs.
void splitScanRows(Binding& b, int64_t N, int64_t alongJ, const Target& target) {
  const LaunchPolicy& p = target.launchPolicy();
  const int64_t resident = residentBlocks(target, b.threadsPerBlock());
  const int64_t tilesPerRow = ceilDiv(N, alongJ);
  if (b.tiles * p.longRowWaveDivisor >= resident || tilesPerRow < p.minScanTilesToSplit || b.tiles > kMaxGridY) return;
  const int64_t chunks = std::min(tilesPerRow, std::max<int64_t>(1, resident / b.tiles));
  if (chunks < 2) return;
  b.scanChunk = ceilDiv(tilesPerRow, chunks);
  b.GX = ceilDiv(tilesPerRow, b.scanChunk);
  if (b.GX < 2) {
    b.scanChunk = 0;
    b.GX = 1;
  }
}

constexpr int kWidestBlock = 1024;

// Rows split over blocks, at least minUnsplitRows of them, whose kernel could instead
// give each row one block of up to kWidestBlock threads, all in one wave, with at most
// maxUnsplitTrip instances a thread (maxUnsplitMaskedTrip with masked lanes, whose loop
// branches at each access): the widest such block, and no cross-block combine (the
// last block's wait on the others' partials). Longer trips keep the split, and so do
// fewer rows, whose one block each leaves the loads to a few SMs.
std::optional<Binding> unsplitRows(const KernelPlan& plan, const KernelConfig& c, const Target& target) {
  const LaunchPolicy& p = target.launchPolicy();
  if (plan.form != CanonicalForm::XReduce || plan.M < p.minUnsplitRows) return std::nullopt;
  const int64_t longest = plan.maskedLanes ? p.maxUnsplitMaskedTrip : p.maxUnsplitTrip;
  for (int threads = kWidestBlock; threads >= c.threadsPerBlock; threads /= 2) {
    KernelConfig wide = c;
    wide.threadsPerBlock = threads;
    Binding b = blockShapeOf(plan.form, plan.M, plan.N, wide, p);
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

Binding withRows(Binding b, CanonicalForm form, int64_t M, const Target& target) {
  POLYRED_CHECK(form == CanonicalForm::XReduce || form == CanonicalForm::Elementwise,
                "withRows of a " << formName(form));
  if (form == CanonicalForm::Elementwise) {
    b.GX = std::min<int64_t>(ceilDiv(M, b.BX), target.launchPolicy().maxElementwiseBlocks);
    return b;
  }
  b.tiles = ceilDiv(M, b.BY);
  b.GY = std::min(b.tiles, kMaxGridY);
  return b;
}

bool rowsFitOneBlock(const CanonicalSpace& space, const Target& target) {
  if (space.form == CanonicalForm::Elementwise) return false;
  const LaunchPolicy& p = target.launchPolicy();
  Binding b = blockShapeOf(space.form, space.M, space.N, kDefaults, p);
  if (shortRows(b, space.form, space.N, p)) return true;  // splitReduced() picks one block anyway
  // Columns (y-reduces) count rowResidentWaves waves of default blocks: a block of 32
  // long columns re-reads more than the L2 holds while the other blocks stream.
  if (space.form == CanonicalForm::YReduce)
    return b.tiles >= p.rowResidentWaves * residentBlocks(target, b.threadsPerBlock());
  // Rows count a fraction of a wave (longRowWaveDivisor) of the blocks chooseBinding
  // will give them: the kernel sequence that splits them reads them three times.
  b = blockShapeOf(space.form, space.M, space.N, rowResidentConfig(kDefaults, space.form, space.M, space.N, p), p);
  return b.tiles * p.longRowWaveDivisor >= residentBlocks(target, b.threadsPerBlock());
}

Binding chooseBinding(const KernelPlan& plan, const Target& target, const KernelConfig& config, int threadsPerBlock,
                      int64_t blocksBeside) {
  // Row-resident kernels were planned with rowsFitOneBlock() under the defaults: larger
  // blocks keep its promise (they cover more of a row, and fewer of them are resident),
  // smaller ones might not. With GX == 1 the items per thread only shape the block:
  // rowResidentItems (unless `items` is given) puts more threads along a row and fewer
  // rows in a block than the default's. Long rows take blocks of longRowThreads
  // (rowResidentConfig). A scan is row-resident too: the running fold crosses its row's tiles in order.
  const bool rowResident = plan.passes() > 1 || plan.hasScan();
  const KernelConfig c = plan.hasScan() ? scanConfig(config, plan, target)
                         : rowResident ? sparseRowsConfig(config, plan, target)
                                       : smallLaunchConfig(config, plan, target);
  const LaunchPolicy& p = target.launchPolicy();
  POLYRED_CHECK(threadsPerBlock == 0 || (threadsPerBlock <= 1024 && (threadsPerBlock & (threadsPerBlock - 1)) == 0),
                plan.name << ": blocks of " << threadsPerBlock << " threads asked for");
  if (plan.form == CanonicalForm::Elementwise) {
    Binding b;
    b.reduction = false;
    b.BX = threadsPerBlock ? threadsPerBlock : c.threadsPerBlock;
    // One statement instance a thread in short blocks, which fill the SMs as they
    // drain; a grid-stride loop takes over past maxElementwiseBlocks.
    b.GX = std::min<int64_t>(ceilDiv(plan.M, b.BX), p.maxElementwiseBlocks);
    return b;
  }
  Binding natural = blockShapeOf(plan.form, plan.M, plan.N, c, p);
  POLYRED_CHECK(threadsPerBlock == 0 || threadsPerBlock >= natural.threadsPerBlock(),
                plan.name << ": blocks of " << threadsPerBlock << " threads, fewer than its own "
                          << natural.threadsPerBlock());
  Binding b = threadsPerBlock ? blockShapeOf(plan.form, plan.M, plan.N, c, p, threadsPerBlock) : natural;
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
    const int64_t items = itemsFor(c, plan.form, plan.N, p);
    const int64_t byWaves = splitReduced(plan.N, alongJ, b.tiles, b.threadsPerBlock(), items, target, blocksBeside);
    b.GX = evenSplit(byWaves, plan.N, alongJ, p);
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
