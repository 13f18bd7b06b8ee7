// How many thread blocks one SM holds at once (compute capability 8.0-9.0), by each of
// its limits: threads (64 warps, at most 32 blocks), registers (64K, allocated per warp
// in units of 256) and shared memory (228 KiB on sm_90; each block takes 1 KiB more
// than it asks for). One spelling for the binding policy (poly/binding: blocks in a
// wave), the row stage (codegen/row_stage: the launch bound of a staged kernel) and the
// register fit (runtime/register_fit, driver/corpus: what a CUBIN's registers allow).
#pragma once

#include <algorithm>
#include <cstdint>

namespace polyred {

inline constexpr int kWarpThreads = 32;
inline constexpr int kResidentThreadsPerSM = 2048;  // 64 warps
inline constexpr int kMostRegistersPerThread = 255;  // every sm_50+ GPU
inline constexpr int64_t kSharedBytesPerSM = 228 * 1024;
inline constexpr int64_t kSharedBytesReservedPerBlock = 1024;
inline constexpr int kRegistersPerSM = 65536;
inline constexpr int kRegisterUnit = 256;  // registers are allocated per warp in these

constexpr int warpsPerBlock(int threadsPerBlock) { return (threadsPerBlock + kWarpThreads - 1) / kWarpThreads; }

// Blocks of `threadsPerBlock` threads by the limits of 32 blocks and 64 warps (2048
// threads) alone; 0 for no threads.
constexpr int residentBlocksByThreads(int threadsPerBlock) {
  constexpr int kMostBlocks = 32, kMostWarps = kResidentThreadsPerSM / kWarpThreads;
  if (threadsPerBlock <= 0) return 0;
  return std::min(kMostBlocks, kMostWarps / warpsPerBlock(threadsPerBlock));
}

// The same with `registers` per thread as well; 0 if a block does not fit.
constexpr int residentBlocksByRegisters(int registers, int threadsPerBlock) {
  if (registers <= 0 || threadsPerBlock <= 0) return 0;
  const int perWarp = (registers * kWarpThreads + kRegisterUnit - 1) / kRegisterUnit * kRegisterUnit;
  return std::min(kRegistersPerSM / (perWarp * warpsPerBlock(threadsPerBlock)), residentBlocksByThreads(threadsPerBlock));
}

// The same with `sharedBytes` of shared memory per block (static and dynamic) instead
// of registers, on an SM of `sharedBytesPerSM` (the per-block limit the device reports
// plus the 1 KiB it reserves per block).
constexpr int residentBlocksBySharedMemory(int64_t sharedBytes, int threadsPerBlock,
                                           int64_t sharedBytesPerSM = kSharedBytesPerSM) {
  if (sharedBytes < 0 || threadsPerBlock <= 0) return 0;
  const int64_t blocks = sharedBytesPerSM / (sharedBytes + kSharedBytesReservedPerBlock);
  return static_cast<int>(std::min<int64_t>(blocks, residentBlocksByThreads(threadsPerBlock)));
}

// The most registers a thread may have for `blocks` blocks of `threadsPerBlock` threads
// to fit one SM (a multiple of 8, at most 255): what ptxas holds a kernel to under
// __launch_bounds__(threadsPerBlock, blocks). 0 if no count does.
constexpr int registerBudget(int blocks, int threadsPerBlock) {
  if (blocks <= 0 || threadsPerBlock <= 0) return 0;
  const int perWarp = kRegistersPerSM / (blocks * warpsPerBlock(threadsPerBlock)) / kRegisterUnit * kRegisterUnit;
  return std::min(perWarp / kWarpThreads / 8 * 8, kMostRegistersPerThread);
}

}  // namespace polyred
