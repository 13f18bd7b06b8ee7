// CUDA for the scan kernel's statements (a plan with a `scan` reduction).
//
// Takes: a ScanCode, the names and shapes the kernel emitter gives the scan's pieces.
// Gives: the text of its statements (device/polyred_scan.cuh): the scan step of a Red
// instance -- a thread's V lanes folded in order, only those inside its row, then the
// block scan that carries the fold across threads and tiles, then every lane's running
// value (inclusive, or the fold before it where exclusive) in the output type, into
// the array `o0` the stores' values read -- and, for rows over several blocks
// (Binding::scanChunk), the chunk's Fold, the chunk taken at Init and the LookBack.
// The kernel emitter (codegen/cuda_emitter) prints the loads and the body around
// them, with the lane bounds scanLaneBounds() declares.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_spec.h"
#include "codegen/lane_values.h"

namespace polyred {

// `pos`: where lane 0 lies along the row (may be negative or past it); `row`: the
// instance's row (column), live below `rows`. Declares lo, hi (the lanes inside the
// row) and whole (all V of them).
std::string scanLaneBounds(const std::string& pos, const std::string& row, long long rows, long long rowLength,
                           int width, const std::string& indent);

struct ScanCode {
  std::string accType;   // "float"
  std::string functor;   // "polyred_dev::Sum<float>"
  std::string identity;  // a literal in accType
  std::string element;   // lane l's element in accType: an expression in l
  std::string outType;   // the output's compute type
  std::string result;    // the running value s0[l] as the output type (an expression in l)
  int accBytes = 4, width = 1, BX = 1, BY = 1;
  bool alongX = true, exclusive = false;
  long long tiles = 1, chunks = 1;  // i-tiles; blocks per row (GX; 1: a row per block)
  int rowsPerTile() const { return alongX ? BY : BX; }
};

// The scan step: declares s0 (the running fold, accType) and o0 (as the output type).
// The block scan's carry is `acc0`.
std::string scanStep(const ScanCode& c, const std::string& indent);
// A Red instance at `site` (its lanes' bounds declared): a multi-block scan's fold of
// its chunk (before the look-back) -- the scan's input at the lanes inside the row,
// into the accumulator; or the scan step between the values of the scan's input and
// those of the running fold, then the stores.
std::string scanFoldLanes(const ScanCode& c, LaneValuesSite site);
std::string scanStepLanes(const ScanCode& c, LaneValuesSite site);
// A store of the scan step: `value` (an array of the V lanes) into `pointer`, lane by
// lane inside the row at `offsets` (one per lane: one lane, or strided lanes), or as
// one vector store from lane 0's offset (its only one).
std::string scanStore(const ScanCode& c, const std::string& pointer, const std::string& value,
                      const std::vector<std::string>& offsets, const std::string& vectorOk, const std::string& indent);
// The block scan's shared memory (and, over several blocks, the look-back's).
std::string scanSharedMemory(const ScanCode& c);

// Rows over several blocks: the look-back's workspaces, kernel parameters in this
// order -- scan_tickets (per i-tile a chunk counter, then per i-tile an arrival
// ticket), scan_flags, scan_aggregates, scan_prefixes (per i-tile, row of the tile and
// chunk) -- all zeros when allocated.
struct ScanWorkspace {
  std::string type;  // "unsigned* __restrict__ "
  std::string name;
  WorkspaceSpec spec;
};
std::vector<ScanWorkspace> scanWorkspaces(const ScanCode& c);
// Fold: the lanes inside the row into `acc0`.
std::string scanFold(const ScanCode& c, const std::string& indent);
// Init of i-tile `tile`: this block's chunk of its rows (the kernel's `bx`).
std::string scanTakeChunk(const std::string& tile, const std::string& indent);
// LookBack of i-tile `tile`: the chunk's fold in `acc0` becomes the carry into the
// chunk; the tile's last block to arrive resets its counter and flags.
std::string scanLookBack(const ScanCode& c, const std::string& tile, const std::string& indent);

}  // namespace polyred
