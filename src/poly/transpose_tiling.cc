#include "poly/transpose_tiling.h"

#include <isl/id.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_set.h>

#include <algorithm>
#include <bit>
#include <map>
#include <numeric>
#include <optional>

#include "poly/schedule.h"
#include "poly/vectorize.h"
#include "support/error.h"
#include "support/int_math.h"
#include "support/isl_support.h"

namespace polyred {

namespace {

// Under auto (H200, 2026-11-28, docs/results/notes-2026-11-28.md: the 1-D loop against
// tiles on 25 transposes), tiles are taken where they were faster:
//  - the stores' axis a holds at least a warp (kWarpTile) of elements, or the tile is
//    flat. Shorter rows in Rows tiles were slower or even (f16 [1024,4096,8] 41.1 ->
//    49.8 us, [128,65536,3] 36.4 -> 49.4, f32 -> f16 [64,50176,3] 24.4 -> 27.2): a
//    short a leaves Elem without lanes. Flat tiles were faster (the same: 38.2, 29.6
//    and 18.6 us; [512,512,9] 7.2 -> 6.6);
//  - the kernel moves at least kMinBytes: f16 [8192,64] (2 MB) 7.3 -> 4.5 us,
//    [64,8192] and [64,9,512] (2-2.4 MB) even; smaller kernels are launch-bound.
// transpose=on tiles wherever a load transposes.
constexpr int64_t kMinBytes = int64_t{2} << 20;
// Tiles hold about kTilePoints points (8 per thread of 256; fewer left a thread one
// load to keep in flight: H200, vgg16's [512,256,9] -> [512,9,256] in tiles of 32 x 9,
// 7.46 -> 9.66 us). Along an axis of at least a warp's extent a tile takes kWarpTile
// points, the rest along the other axis (up to kMaxLongSide): a short a (vgg16's
// NCHW -> NHWC, 3 channels) gives tiles of 3 x 512, a short b ones of 227.. x 9.
constexpr int64_t kTilePoints = 2048;
constexpr int64_t kWarpTile = 32;
constexpr int64_t kMaxLongSide = 512;
// Shared memory all of a kernel's tiles may take (a third of the static limit): a
// kernel with more staged loads than fit stages none.
constexpr int64_t kMaxTileBytes = 16 * 1024;

std::string str(int64_t v) { return std::to_string(v); }

// The row-major linearization of coordinates c0, c1, ... over `dims`.
std::string linearIndex(const std::vector<int64_t>& dims, const std::vector<std::string>& coords) {
  std::string r;
  int64_t stride = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    r += (r.empty() ? "" : " + ") + (stride == 1 ? coords[k] : str(stride) + "*" + coords[k]);
    stride *= dims[k];
  }
  return r;
}

// The offset (isl text in i) at point i.
int64_t offsetAt(isl_ctx* ctx, const std::string& offset, int64_t i) {
  isl_pw_aff* f = isl_pw_aff_read_from_str(ctx, ("{ [i] -> [(" + offset + ")] }").c_str());
  isl_set* at = isl_set_read_from_str(ctx, ("{ [" + str(i) + "] }").c_str());
  POLYRED_CHECK(f && at, "isl could not parse offset " << offset);
  isl_val* v = isl_pw_aff_eval(f, isl_set_sample_point(at));
  POLYRED_CHECK(v && isl_val_is_int(v), "offset " << offset << " undefined at " << i);
  const int64_t r = isl_val_get_num_si(v);
  isl_val_free(v);
  return r;
}

// A load's offset as origin + sum strides[k] * c_k over the point's coordinates.
struct AffineAccess {
  int64_t origin = 0;
  std::vector<int64_t> strides;
};

// The load's offset as an AffineAccess when it is affine in the coordinates (isl checks
// the whole box); nullopt otherwise.
std::optional<AffineAccess> affineAccess(isl_ctx* ctx, const std::string& offset, const std::vector<int64_t>& dims) {
  std::vector<std::string> coords;
  std::string box;
  for (size_t k = 0; k < dims.size(); ++k) {
    coords.push_back("c" + str(static_cast<int64_t>(k)));
    box += (k ? " and " : "") + ("0 <= " + coords[k] + " < " + str(dims[k]));
  }
  const std::string tuple = "[" + [&] {
    std::string t;
    for (size_t k = 0; k < coords.size(); ++k) t += (k ? ", " : "") + coords[k];
    return t;
  }() + "]";
  const int64_t origin = offsetAt(ctx, offset, 0);
  std::vector<int64_t> strides(dims.size(), 0);
  std::string affine = str(origin);
  int64_t step = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    if (dims[k] > 1) strides[k] = offsetAt(ctx, offset, step) - origin;
    affine += " + " + str(strides[k]) + "*" + coords[k];
    step *= dims[k];
  }
  const std::string substituted = islSubstitute(offset, 'i', linearIndex(dims, coords));
  if (!islSameFunction(ctx, "{ " + tuple + " -> [(" + substituted + ")] : " + box + " }",
                       "{ " + tuple + " -> [(" + affine + ")] : " + box + " }"))
    return std::nullopt;
  return AffineAccess{origin, strides};
}

// Merges adjacent dims k, k+1 that every affine load reads as one axis (stride of k =
// stride of k+1 times the extent of k+1); the strides shrink with them.
void coalesce(std::vector<int64_t>& dims, std::vector<std::vector<int64_t>>& strides) {
  for (size_t k = dims.size() - 1; k-- > 0;) {
    const bool mergeable = std::all_of(strides.begin(), strides.end(), [&](const std::vector<int64_t>& s) {
      return s[k] == s[k + 1] * dims[k + 1];
    });
    if (!mergeable) continue;
    dims[k] *= dims[k + 1];
    dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(k) + 1);
    for (std::vector<int64_t>& s : strides) s.erase(s.begin() + static_cast<std::ptrdiff_t>(k));
  }
}

// The bytes of a value's compute type in generated code (codegen/cuda_expr's
// computeType): 16-bit floats and narrow integers compute in 32 bits.
int64_t computeTypeBytes(DType t) {
  if (t == DType::Bool) return 1;
  return std::max<int64_t>(4, dtypeBytes(t));
}

bool isPlainLoad(const BodyValue& v) { return v.kind == BodyValue::Kind::Load && !v.gathers(); }

// The bytes an elementwise kernel's points load and store (a broadcast load counted
// at every point).
int64_t bytesMoved(const KernelPlan& plan) {
  int64_t perPoint = 0;
  for (const BodyValue& v : plan.body)
    if (v.kind == BodyValue::Kind::Load) perPoint += dtypeBytes(v.dtype);
  for (const ElementwiseOutput& s : plan.stores) perPoint += dtypeBytes(plan.body[static_cast<size_t>(s.value)].dtype);
  return plan.M * perPoint;
}

// Whether the kernel is one the tiles can take: elementwise, every point stored once
// at i (no scatters, temporaries' resets), a shape to tile.
bool tileable(const KernelPlan& plan) {
  if (plan.form != CanonicalForm::Elementwise || plan.pointShape.size() < 2 || plan.passes() != 1) return false;
  if (productUpTo(plan.pointShape, plan.M) != plan.M) return false;  // (a plan rewritten since)
  if (plan.hasComplexValue()) return false;
  return std::all_of(plan.stores.begin(), plan.stores.end(), [](const ElementwiseOutput& s) {
    return s.offset == "i" && !s.scatters() && !s.zeroWhereNonzero;
  });
}

// Elem's lanes: the 1-D loop's (poly/vectorize), halved until they divide A and TA (a
// Flat tile: its run TB * A and the B * A outputs of each b-row of tiles, so that every
// vector, a partial tile's too, is whole).
// Stage's: 16 bytes of the widest staged load (at most `maxWidth`), halved until they
// divide B, TB, and every staged load's origin and strides but b's.
// Returns Elem's Vectorization (width Va).
Vectorization chooseLanes(TransposeTiling& t, const KernelPlan& plan, int maxWidth, const LaunchPolicy& policy,
                          const std::vector<int64_t>& origins, const std::vector<std::vector<int64_t>>& strides,
                          const std::vector<int>& loads) {
  const int64_t A = t.dims[static_cast<size_t>(t.a)], B = t.dims[static_cast<size_t>(t.b)];
  auto wholeVectors = [&](int64_t w) { return t.flat() ? (B * A) % w == 0 && (t.TB * A) % w == 0 : A % w == 0 && t.TA % w == 0; };
  Vectorization elem = chooseVectorization(plan, policy, maxWidth);
  while (elem.width > 1 && !wholeVectors(elem.width)) elem = chooseVectorization(plan, policy, elem.width / 2);
  if (elem.width == 1) elem = chooseVectorization(plan, policy, 1);
  t.Va = elem.width;
  int64_t widest = 1;
  for (int v : loads)
    if (t.staged[static_cast<size_t>(v)]) widest = std::max<int64_t>(widest, dtypeBytes(plan.body[static_cast<size_t>(v)].dtype));
  int64_t w = std::max<int64_t>(1, 16 / widest);
  if (maxWidth != KernelConfig::kAuto) w = std::min<int64_t>(w, maxWidth);
  auto fits = [&](int64_t lanes) {
    if (B % lanes || t.TB % lanes) return false;
    for (size_t k = 0; k < loads.size(); ++k) {
      if (!t.staged[static_cast<size_t>(loads[k])]) continue;
      if (origins[k] % lanes) return false;
      for (size_t d = 0; d < strides[k].size(); ++d)
        if (static_cast<int>(d) != t.b && strides[k][d] % lanes) return false;
    }
    return true;
  };
  while (w > 1 && !fits(w)) w /= 2;
  t.Vb = static_cast<int>(w);
  return elem;
}

// A Flat tile's pitch and swizzle: of TB * A / Va and the 31 pitches after it, plain,
// and of the 32 from it rounded up to 32, swizzled (a swizzled 32-slot group stays
// whole), the one whose Stage stores meet the fewest bank conflicts (Elem's reads
// meet none). Ties keep the plain layout and the smaller pitch.
void chooseFlatPitch(TransposeTiling& t, const KernelPlan& plan) {
  std::map<int64_t, int64_t> tilesOfWidth;  // staged loads per element size (their conflicts are alike)
  for (size_t v = 0; v < plan.body.size(); ++v)
    if (t.staged[v]) ++tilesOfWidth[computeTypeBytes(plan.body[v].dtype)];
  const int64_t least = t.TB * t.TA / t.Va;
  int64_t bestPitch = least, fewest = -1;
  bool bestSwizzle = false;
  for (bool swizzle : {false, true})
    for (int64_t q = swizzle ? ceilDiv(least, 32) * 32 : least, last = q + 32; q < last; ++q) {
      t.flatPitch = q;
      t.flatSwizzle = swizzle;
      int64_t conflicts = 0;
      for (const auto& [bytes, tiles] : tilesOfWidth) conflicts += tiles * t.stageBankConflicts(bytes);
      if (fewest < 0 || conflicts < fewest) {
        fewest = conflicts;
        bestPitch = q;
        bestSwizzle = swizzle;
      }
    }
  t.flatPitch = bestPitch;
  t.flatSwizzle = bestSwizzle;
}

// The tile's extents (see kTilePoints): a short axis whole, the other filling the tile.
void chooseTileShape(TransposeTiling& t) {
  const int64_t A = t.dims[static_cast<size_t>(t.a)], B = t.dims[static_cast<size_t>(t.b)];
  auto longSide = [](int64_t shortSide, int64_t extent) {
    return std::min(extent, std::clamp<int64_t>(static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(kTilePoints / shortSide))),
                                                kWarpTile, kMaxLongSide));
  };
  if (B < kWarpTile) {
    t.TB = B;
    t.TA = longSide(B, A);
  } else if (A < kWarpTile) {
    t.TA = A;
    t.TB = longSide(A, B);
  } else {
    t.TA = kWarpTile;
    t.TB = longSide(kWarpTile, B);
  }
}

}  // namespace

int64_t TransposeTiling::tilesAlongA() const { return ceilDiv(dims[static_cast<size_t>(a)], TA); }
int64_t TransposeTiling::tilesAlongB() const { return ceilDiv(dims[static_cast<size_t>(b)], TB); }
int64_t TransposeTiling::tiles() const {
  int64_t others = 1;
  for (size_t k = 0; k < dims.size(); ++k)
    if (static_cast<int>(k) != a && static_cast<int>(k) != b) others *= dims[k];
  return tilesAlongA() * tilesAlongB() * others;
}

int TransposeTiling::stagedLoads() const { return static_cast<int>(std::count(staged.begin(), staged.end(), true)); }

int64_t TransposeTiling::sharedBytes(const KernelPlan& plan) const {
  int64_t bytes = 0;
  for (size_t v = 0; v < staged.size(); ++v)
    if (staged[v]) bytes += slots() * computeTypeBytes(plan.body[v].dtype);
  return bytes;
}

namespace {

// Where (lane 0 of) instance e lies in its tile: Stage's run along b (vectors of Vb),
// Elem's along a (vectors of Va), or in a Flat tile along the run of outputs.
struct InTile {
  std::string a, b;
};
InTile inTile(const TransposeTiling& t, bool storeOrder) {
  if (storeOrder && t.flat()) {
    const std::string f = "(" + str(t.Va) + "*e)", A = str(t.TA);
    return {"(" + f + " mod " + A + ")", "floor(" + f + "/" + A + ")"};
  }
  if (storeOrder) {
    const std::string along = str(t.TA / t.Va);
    return {str(t.Va) + "*(e mod " + along + ")", "floor(e/" + along + ")"};
  }
  const std::string along = str(t.TB / t.Vb);
  return {"floor(e/" + along + ")", str(t.Vb) + "*(e mod " + along + ")"};
}

// A Flat tile's g (see the header) of x, as isl text and as a number.
std::string swizzled(const TransposeTiling& t, const std::string& x) {
  if (!t.flatSwizzle) return x;
  return "32*floor((" + x + ")/32) + ((" + x + ") + floor((" + x + ")/32)) mod 32";
}
int64_t swizzled(const TransposeTiling& t, int64_t x) { return t.flatSwizzle ? x / 32 * 32 + (x + x / 32) % 32 : x; }

// isl text of slotOf (see the header) at tile coordinates given as isl text.
std::string slotText(const TransposeTiling& t, const std::string& inA, const std::string& inB) {
  if (t.flat()) {
    const std::string f = "((" + inB + ")*" + str(t.TA) + " + " + inA + ")";
    return "(" + f + " mod " + str(t.Va) + ")*" + str(t.flatPitch) + " + " + swizzled(t, "floor(" + f + "/" + str(t.Va) + ")");
  }
  const std::string row = "(((" + inA + ") mod " + str(t.Va) + ")*" + str(t.TA / t.Va) + " + floor((" + inA + ")/" + str(t.Va) + "))";
  const std::string col = "(((" + inB + ") mod " + str(t.Vb) + ")*" + str(t.TB / t.Vb) + " + floor((" + inB + ")/" + str(t.Vb) + "))";
  return str(t.pitch()) + "*" + row + " + " + col;
}

}  // namespace

// Tile t = (r * tilesAlongB + tb) * tilesAlongA + ta, r numbering the other dims'
// coordinates row-major; the point's a = ta * TA + (its a in the tile), likewise b.
std::string TransposeTiling::pointIndex(bool storeOrder) const {
  const std::string nA = str(tilesAlongA()), nAB = str(tilesAlongA() * tilesAlongB());
  const auto [inA, inB] = inTile(*this, storeOrder);
  std::vector<std::string> coords(dims.size());
  coords[static_cast<size_t>(a)] = "(" + str(TA) + "*(t mod " + nA + ") + " + inA + ")";
  coords[static_cast<size_t>(b)] = "(" + str(TB) + "*(floor(t/" + nA + ") mod " + str(tilesAlongB()) + ") + " + inB + ")";
  int64_t below = 1;  // the other dims after k
  for (size_t k = dims.size(); k-- > 0;) {
    if (static_cast<int>(k) == a || static_cast<int>(k) == b) continue;
    coords[k] = "(floor(floor(t/" + nAB + ")/" + str(below) + ") mod " + str(dims[k]) + ")";
    below *= dims[k];
  }
  return linearIndex(dims, coords);
}

std::string TransposeTiling::stageSlot(int lane) const {
  const auto [inA, inB] = inTile(*this, false);
  return slotText(*this, inA, lane ? inB + " + " + str(lane) : inB);
}

// Flat: lane 0 of Elem's vector e is the run's element Va * e, at slot e.
std::string TransposeTiling::elemSlot() const {
  if (flat()) return swizzled(*this, "e");
  const auto [inA, inB] = inTile(*this, true);
  return slotText(*this, inA, inB);
}

int64_t TransposeTiling::slotOf(int64_t inA, int64_t inB) const {
  if (flat()) {
    const int64_t f = inB * TA + inA;
    return f % Va * flatPitch + swizzled(*this, f / Va);
  }
  return pitch() * (inA % Va * (TA / Va) + inA / Va) + inB % Vb * (TB / Vb) + inB / Vb;
}

// Stage's instance e stores lane l at point (floor(e / (TB / Vb)), Vb * (e mod (TB /
// Vb)) + l); a warp's 32 consecutive instances store each lane at once. Shared memory
// serves a warp's access in as many passes as the most distinct 4-byte words one of
// its 32 banks holds.
int64_t TransposeTiling::stageBankConflicts(int64_t elementBytes) const {
  constexpr int64_t kWarp = 32, kBanks = 32;
  const int64_t instances = instancesPerTile(false), along = TB / Vb;
  const int64_t wordsPerElement = std::max<int64_t>(1, elementBytes / 4);
  int64_t conflicts = 0;
  std::vector<std::vector<int64_t>> words(kBanks);  // per bank: the distinct words one access touches
  for (int64_t first = 0; first < instances; first += kWarp)
    for (int64_t l = 0; l < Vb; ++l) {
      for (std::vector<int64_t>& bank : words) bank.clear();
      for (int64_t e = first; e < std::min(instances, first + kWarp); ++e) {
        const int64_t word = slotOf(e / along, Vb * (e % along) + l) * elementBytes / 4;
        for (int64_t w = word; w < word + wordsPerElement; ++w) {
          std::vector<int64_t>& bank = words[static_cast<size_t>(w % kBanks)];
          if (std::find(bank.begin(), bank.end(), w) == bank.end()) bank.push_back(w);
        }
      }
      size_t most = 0;
      for (const std::vector<int64_t>& bank : words) most = std::max(most, bank.size());
      conflicts += static_cast<int64_t>(most) - 1;
    }
  return conflicts;
}

std::string TransposeTiling::inside(bool storeOrder) const {
  const auto [inA, inB] = inTile(*this, storeOrder);
  return str(TA) + "*(t mod " + str(tilesAlongA()) + ") + " + inA + " < " + str(dims[static_cast<size_t>(a)]) + " and " +
         str(TB) + "*(floor(t/" + str(tilesAlongA()) + ") mod " + str(tilesAlongB()) + ") + " + inB + " < " +
         str(dims[static_cast<size_t>(b)]);
}

std::string TransposeTiling::describe(const KernelPlan& plan) const {
  std::string d = "tiles of " + str(TA) + " x " + str(TB) + " over [";
  for (size_t k = 0; k < dims.size(); ++k) d += (k ? "," : "") + str(dims[k]);
  d += "] (stores along dim " + str(a) + ", staged loads along dim " + str(b) + "), " + str(tiles()) + " tiles, lanes " +
       str(Va) + (flat() ? " along the run of outputs" : " along a") + " and " + str(Vb) + " along b, " +
       (flat() ? "flat layout (pitch " + str(flatPitch) + (flatSwizzle ? ", swizzled" : "") + ")" : "rows layout (pitch " + str(pitch()) + ")") +
       "; staged through shared memory:";
  for (size_t v = 0; v < staged.size(); ++v)
    if (staged[v]) d += " v" + str(static_cast<int64_t>(v)) + " (" + plan.body[v].label + ")";
  return d;
}

TransposeTiling chooseTransposeTiling(const KernelPlan& plan, const KernelConfig& config, const LaunchPolicy& policy,
                                      Vectorization* elemLanes) {
  const TransposeTileMode mode = config.transposeTiles;
  if (mode == TransposeTileMode::Off || !tileable(plan)) return {};
  if (mode == TransposeTileMode::Auto && bytesMoved(plan) < kMinBytes) return {};
  IslContext ctx;
  std::vector<int64_t> dims = plan.pointShape;
  std::vector<int> loads;  // the affine plain loads, their origins and strides
  std::vector<int64_t> origins;
  std::vector<std::vector<int64_t>> strides;
  for (size_t v = 0; v < plan.body.size(); ++v) {
    if (!isPlainLoad(plan.body[v])) continue;
    std::optional<AffineAccess> access = affineAccess(ctx.get(), plan.body[v].offset, dims);
    if (!access) continue;
    loads.push_back(static_cast<int>(v));
    origins.push_back(access->origin);
    strides.push_back(std::move(access->strides));
  }
  coalesce(dims, strides);
  if (dims.size() < 2) return {};
  TransposeTiling t;
  t.dims = dims;
  t.a = static_cast<int>(dims.size()) - 1;
  // b: the dim most transposing loads run along (the first among equals).
  std::vector<int> votes(dims.size(), 0);
  auto contiguousDim = [&](const std::vector<int64_t>& s) {
    if (s[static_cast<size_t>(t.a)] == 1 || s[static_cast<size_t>(t.a)] == 0) return -1;  // along a, or the same along it
    for (size_t k = 0; k + 1 < s.size(); ++k)
      if (s[k] == 1) return static_cast<int>(k);
    return -1;
  };
  for (const std::vector<int64_t>& s : strides)
    if (int k = contiguousDim(s); k >= 0) ++votes[static_cast<size_t>(k)];
  const auto most = std::max_element(votes.begin(), votes.end());
  if (*most == 0) return {};
  t.b = static_cast<int>(most - votes.begin());
  chooseTileShape(t);
  if (t.TA == dims[static_cast<size_t>(t.a)] && t.TA < kWarpTile && t.b == t.a - 1) t.layout = TileLayout::Flat;
  if (mode == TransposeTileMode::Auto && dims[static_cast<size_t>(t.a)] < kWarpTile && !t.flat()) return {};
  t.staged.assign(plan.body.size(), false);
  for (size_t k = 0; k < loads.size(); ++k)
    if (contiguousDim(strides[k]) == t.b) t.staged[static_cast<size_t>(loads[k])] = true;
  Vectorization elem = chooseLanes(t, plan, config.maxVectorWidth, policy, origins, strides, loads);
  if (t.flat()) chooseFlatPitch(t, plan);
  if (t.sharedBytes(plan) > kMaxTileBytes) return {};
  if (elemLanes) *elemLanes = std::move(elem);
  return t;
}

int tileBlockSize(const TransposeTiling& tiling, int most) {
  const int64_t stage = tiling.instancesPerTile(false), elem = tiling.instancesPerTile(true);
  auto threadSteps = [&](int64_t threads) { return (ceilDiv(stage, threads) + ceilDiv(elem, threads)) * threads; };
  const int64_t smallest = std::max<int64_t>(32, most / 2 / 32 * 32);
  int64_t best = smallest;
  for (int64_t threads = smallest + 32; threads <= most; threads += 32)
    if (threadSteps(threads) <= threadSteps(best)) best = threads;
  return static_cast<int>(std::min<int64_t>(best, most));
}

Binding bindTiles(const TransposeTiling& tiling, const Target& target, int threadsPerBlock) {
  Binding b;
  b.reduction = false;
  POLYRED_CHECK(threadsPerBlock > 0, "tiles bound to blocks of " << threadsPerBlock << " threads");
  b.BX = threadsPerBlock;
  b.tiles = tiling.tiles();
  b.GX = std::min<int64_t>(b.tiles, residentBlocks(target, b.BX) * 4);
  return b;
}

namespace {

struct TiledStmt {
  std::string name;
  bool point;       // [t, e] (Stage, Elem) or [t] (the barriers)
  bool storeOrder;  // Elem
};

std::vector<TiledStmt> tiledStatements(const Binding& b) {
  std::vector<TiledStmt> s = {{"Stage", true, false}, {"Sync", false, false}, {"Elem", true, true}};
  if (b.tiles > b.GX) s.push_back({"Sync_1", false, false});  // the block's next tile overwrites the slots
  return s;
}

std::string tupleOf(const TiledStmt& s) { return s.name + (s.point ? "[t, e]" : "[t]"); }

std::string unionOf(const std::vector<TiledStmt>& stmts, auto&& piece) {
  std::string r = "{ ";
  for (size_t k = 0; k < stmts.size(); ++k) r += (k ? "; " : "") + piece(stmts[k]);
  return r + " }";
}

// The plan's offset (an isl expression in i) at lane 0 of Stage[t, e] or Elem[t, e];
// for Elem, first taken to lane `lane` by the Vectorization (i counting vectors there).
std::string offsetAtPoint(const TiledStmt& s, const TransposeTiling& tiling, const std::string& offset,
                          const Vectorization* lanes = nullptr, int lane = 0) {
  std::string at = tiling.pointIndex(s.storeOrder), text = offset;
  if (lanes && lanes->width > 1) {
    text = lanes->laneOffset(offset, lane);
    at = "floor((" + at + ")/" + str(lanes->width) + ")";  // (lane 0 lies on a multiple of the width)
  }
  return "{ " + tupleOf(s) + " -> [(" + islSubstitute(text, 'i', at) + ")] }";
}

// Stage: each staged load's offset, then the slot of each of its Vb lanes. Elem: each load's
// offsets in body order as the Vectorization lays them out (a staged one's: its slot,
// once), then the stores'.
std::vector<StatementAccesses> tiledAccesses(const KernelPlan& p, const TransposeTiling& tiling, const Vectorization& vec) {
  const TiledStmt stage{"Stage", true, false}, elem{"Elem", true, true};
  StatementAccesses staged{"Stage", {}}, point{"Elem", {}};
  const std::vector<bool> evaluated = p.valuesOfPass(0);
  size_t load = 0;
  for (size_t v = 0; v < p.body.size(); ++v) {
    if (!p.body[v].hasOffset()) continue;
    const bool gathered = vec.width > 1 && vec.accesses.at(load++) == LaneAccess::Gather;
    if (!evaluated[v]) continue;
    if (tiling.staged[v]) {
      staged.offsets.push_back(offsetAtPoint(stage, tiling, p.body[v].offset));
      point.offsets.push_back("{ Elem[t, e] -> [(" + tiling.elemSlot() + ")] }");
      continue;
    }
    for (int lane = 0; lane < (gathered ? vec.width : 1); ++lane)
      point.offsets.push_back(offsetAtPoint(elem, tiling, p.body[v].offset, &vec, lane));
  }
  for (int lane = 0; lane < tiling.Vb; ++lane) staged.offsets.push_back("{ Stage[t, e] -> [(" + tiling.stageSlot(lane) + ")] }");
  for (const ElementwiseOutput& s : p.stores) point.offsets.push_back(offsetAtPoint(elem, tiling, s.offset, &vec));
  return {staged, point};
}

}  // namespace

ScheduleResult buildTiledSchedule(isl_ctx* ctx, const KernelPlan& plan, const Binding& b, const TransposeTiling& tiling,
                                  const Vectorization& vector) {
  POLYRED_CHECK(!tiling.empty() && tiling.staged.size() == plan.body.size(), plan.name << ": a tiled schedule without its tiling");
  POLYRED_CHECK(vector.width == tiling.Va && !vector.strided && !vector.masked(),
                plan.name << ": a tiled Elem's lanes are not the tiling's");
  const std::vector<TiledStmt> stmts = tiledStatements(b);
  const std::string tiles = str(b.tiles);
  const std::string domain = unionOf(stmts, [&](const TiledStmt& s) {
    return tupleOf(s) + " : 0 <= t < " + tiles +
           (s.point ? " and 0 <= e < " + str(tiling.instancesPerTile(s.storeOrder)) + " and " + tiling.inside(s.storeOrder)
                    : "");
  });
  isl_schedule* sched = isl_schedule_from_domain(readUnionSet(ctx, domain));
  isl_schedule_node* node = isl_schedule_node_child(isl_schedule_get_root(sched), 0);
  isl_schedule_free(sched);
  // The tile loop (a grid stride over t), then the statements in sequence, each point
  // statement with its loop over the tile's points (a block stride over e).
  const std::string GX = str(b.GX), BX = str(b.BX);
  node = isl_schedule_node_insert_partial_schedule(
      node, readBand(ctx, "[" + unionOf(stmts, [&](const TiledStmt& s) { return tupleOf(s) + " -> [(floor(t/" + GX + "))]"; }) + "]"));
  node = isl_schedule_node_child(node, 0);
  isl_union_set_list* filters = isl_union_set_list_alloc(ctx, static_cast<int>(stmts.size()));
  for (const TiledStmt& s : stmts) filters = isl_union_set_list_add(filters, readUnionSet(ctx, "{ " + tupleOf(s) + " }"));
  node = isl_schedule_node_insert_sequence(node, filters);
  for (size_t k = 0; k < stmts.size(); ++k)
    if (stmts[k].point)
      node = addPassBand(node, static_cast<int>(k), ctx, "[{ " + tupleOf(stmts[k]) + " -> [(floor(e/" + BX + "))] }]",
                         "pointwise");
  node = isl_schedule_node_parent(node);  // the tile band
  node = isl_schedule_node_insert_mark(node, isl_id_alloc(ctx, "kernel", nullptr));
  const std::string binding = unionOf(stmts, [&](const TiledStmt& s) {
    return tupleOf(s) + " : t mod " + GX + " = bx" + (s.point ? " and e mod " + BX + " = tx" : "");
  });
  node = isl_schedule_node_insert_filter(node, readUnionSet(ctx, "[bx, by, tx, ty] -> " + binding));
  node = insertBindingContext(node, ctx, plan, b);
  ScheduleResult r;
  r.schedule = isl_schedule_node_get_schedule(node);
  isl_schedule_node_free(node);
  POLYRED_CHECK(r.schedule, "isl failed to build the tiled schedule of " << plan.name);
  r.accesses = tiledAccesses(plan, tiling, vector);
  return r;
}

}  // namespace polyred
