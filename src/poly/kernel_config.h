// The knobs of the binding and vectorization policy: what a code variant is made of.
//
// Takes: text "threads=256,items=8,vector=16" (any subset, any order; "auto" for the
// policy's own choice). Gives: a KernelConfig that chooseBinding and
// chooseVectorization read. The defaults are the analytic policy (docs/design/tuning.md,
// "Code variants and tuning"); `polyred tune` times other values per graph on the GPU
// and keeps the best in the tuning database.
//   threads  threads per block (a power of two, 32..1024)
//   items    the fewest statement instances (vectors, with lanes) each thread handles
//            along the reduced axis: bounds how many blocks split one row or column
//            (in a row-resident kernel, one block per row: how many threads share it).
//            auto: 4 for large all-reduces and row-resident kernels, 8 otherwise
//            (itemsFor; the launch policy's rowResidentItems, poly/launch_policy.h)
//   vector   the most vector lanes (1: scalar code; the 16-byte rule still applies).
//            auto: 16-byte lanes; y-reduces of columns at least 8192 rows long: 4
//            from 1024 to 8191 kept columns (2 where blocks combine through
//            partials), pairs of 8/16-bit data from 512, else scalar (laneLimitFor)
//   split    how many blocks share each row (or column) along the reduced axis and
//            combine their results (1..65535; at most one per thread's worth of
//            the row: threads along j). auto: the wave rule and the even split of
//            binding.cc. Row-resident kernels (one block a row) and scans keep
//            their own splits
//   unroll   how far each thread's accumulation loop is unrolled (1..32): the loads
//            it keeps in flight. auto: the launch policy's (loopUnrollFor; 4 on most kernels)
//   cache    on, regs, off or auto: row-resident kernels keep their row for the later
//            passes in shared memory (on) or in each thread's registers (regs; rows
//            whose share per thread is a few vectors, codegen/row_cache.h).
//            auto: the policy's choice
//   evict    on, off, stream or auto: last reads and stores tell the L2 to evict their
//            lines first (poly/cache_hints.h; stream: the last reads as ld.global.cs).
//            auto: in kernels of several passes
//   stage    on, off or auto: row-resident kernels bring their row into shared memory
//            by bulk copies before the first pass (codegen/row_stage.h; sm_90).
//            auto: the policy's choice
//   combine  atomic, partials or auto: how the blocks that split a row (or column)
//            combine their results -- atomics into a workspace slot, or a partial per
//            block that the last block to arrive folds in block order (the
//            deterministic protocol, device/polyred_reduce.cuh). auto: partials where a
//            combiner has no hardware atomic (a compare-and-swap loop: float max/min,
//            products, user combiners), atomics elsewhere (binding.cc, combineThroughPartials)
//   transpose on, off or auto: an elementwise kernel whose loads run along another axis
//            than its stores goes through shared memory a tile at a time
//            (poly/transpose_tiling.h). auto: stores along rows of at least 32
//            elements, kernels moving at least 2 MB; on: wherever a load transposes
//   lse      auto, split or online: logsumexp over rows one block reduces -- split into
//            a maximum, then a sum of exponentials (two passes; canon/logsumexp_rows.h),
//            or the online tuple (one pass; its lanes in the closed form of
//            codegen/lane_folds.h). auto: the policy of canon/logsumexp_rows.h
//   regfit   auto, off or force: a kernel whose registers hold fewer blocks per SM
//            than its threads and shared memory allow is compiled again under a launch
//            bound asking for those blocks, kept where that adds no stack frame (no
//            spills; runtime/register_fit.h). off: the registers ptxas picks on its
//            own; force: the bound for all those blocks, spills or not
#pragma once

#include <string>

namespace polyred {

// KernelConfig::rowCache.
enum class RowCacheMode : unsigned char { Auto, On, Off, Registers };
// KernelConfig::rowStage.
enum class RowStageMode : unsigned char { Auto, On, Off };
// KernelConfig::cacheHints.
enum class CacheHintMode : unsigned char { Auto, On, Off, Stream };
// KernelConfig::combine.
enum class CombineMode : unsigned char { Auto, Atomic, Partials };
// KernelConfig::transposeTiles.
enum class TransposeTileMode : unsigned char { Auto, On, Off };
// KernelConfig::logSumExpRows.
enum class LogSumExpRowsMode : unsigned char { Auto, Split, Online };
// KernelConfig::registerFit.
enum class RegisterFitMode : unsigned char { Auto, Off, Force };

struct KernelConfig {
  static constexpr int kAuto = 0;
  int threadsPerBlock = 256;
  int itemsPerThread = kAuto;
  int maxVectorWidth = kAuto;
  int unroll = kAuto;
  RowCacheMode rowCache = RowCacheMode::Auto;
  CacheHintMode cacheHints = CacheHintMode::Auto;
  RowStageMode rowStage = RowStageMode::Auto;
  CombineMode combine = CombineMode::Auto;
  TransposeTileMode transposeTiles = TransposeTileMode::Auto;
  RegisterFitMode registerFit = RegisterFitMode::Auto;
  LogSumExpRowsMode logSumExpRows = LogSumExpRowsMode::Auto;
  int splitBlocks = kAuto;  // last: the tuner's candidates initialize the fields above by position

  bool operator==(const KernelConfig&) const = default;
  bool isDefault() const { return *this == KernelConfig{}; }
  // "threads=256,items=auto,vector=16" (",unroll=8", ",split=10", ",cache=off" / "=regs", ",evict=on", ",stage=off",
  // ",combine=partials", ",transpose=off", ",regfit=off", ",lse=online" unless auto)
  std::string toString() const;
  // Throws polyred::Error naming the bad field; `what` names the source (an option,
  // a database entry) in the message.
  static KernelConfig parse(const std::string& text, const std::string& what);
};

}  // namespace polyred
