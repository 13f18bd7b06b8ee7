// What a CUBIN says about its kernels without a GPU: the registers per thread ptxas
// gave each one and its local-memory frame (spills), read from the ELF's .nv.info
// section (attributes EIATTR_REGCOUNT and EIATTR_FRAME_SIZE, keyed by the kernel's
// symbol). `polyred compile --nvrtc` prints it with the
// resident blocks those registers allow, because the registers decide occupancy: the
// Welford var_mean kernel unrolled by 4 took 34 registers (6 blocks of 256 per SM),
// unrolled by 2 or 8 32 (8 blocks), and ran 19.3 against 15.5 us on the H200
// (docs/results/notes-2026-11-28.md).
//
// The reader checks every offset against the buffer: a truncated or foreign file gives
// an empty answer, never a crash.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace polyred {

struct KernelResources {
  int registers = 0;        // a thread's registers (EIATTR_REGCOUNT)
  int64_t stackBytes = -1;  // a thread's local-memory frame: spills, local arrays (EIATTR_FRAME_SIZE); -1 unknown
  // A block's own __shared__ arrays: the size of section .nv.shared.<kernel>, less the
  // 1 KiB that section also counts on sm_90 (the system's per-block reservation:
  // an array of 46 KiB makes a section of 47 KiB, NVRTC and nvcc 13.0).
  int64_t staticSharedBytes = 0;
};

// The resources of each kernel in `cubin` (an ELF64 little-endian CUBIN), by kernel
// name; empty if the file is not such a CUBIN or has no register counts.
std::map<std::string, KernelResources> cubinKernelResources(const std::vector<char>& cubin);

// The resources of kernel `name` in `cubin`, if it records them.
std::optional<KernelResources> cubinKernelResources(const std::vector<char>& cubin, const std::string& name);

}  // namespace polyred
