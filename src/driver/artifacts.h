// Kernel artifacts: what `polyred compile FILE -o DIR` leaves behind so that a program
// can be shipped and launched without polyred, and the POLYRED_DUMP_CUDA source dump.
//
// Takes a CompiledGraph. Gives, in DIR:
//   <kernel>.cu       the CUDA source of each launch, and the device library headers it
//                     includes (polyred_*.cuh), so `nvcc -I DIR` compiles it on its own
//   <kernel>.cubin    the CUBIN for the target's compute capability (NVRTC)
//   manifest.json     the launch manifest (format "polyred-launch-manifest", version 1):
//                     inputs and outputs (name, dtype, shape, in-place input), temporaries
//                     (bytes), and per launch in order: kernel name, files, grid, block,
//                     dynamic shared memory, its pointer parameters in order (input k,
//                     output k, temporary k, workspace k), its workspaces (bytes and the
//                     byte pattern to fill them with once: every launch restores it), the
//                     parts of a horizontally fused launch; the graph's SHA-256 and the
//                     target.
//   test/             with --test-data: seeded random inputs, the reference outputs and
//                     per-output tolerances (raw little-endian row-major), for the
//                     loader example (examples/loader) to check a launch against.
#pragma once

#include <filesystem>
#include <string>

#include "driver/pipeline.h"

namespace polyred {

struct ArtifactOptions {
  bool cubin = true;      // compile each kernel with NVRTC (through the kernel cache)
  bool testData = false;  // write test/ (refused past kMaxTestElements)
  uint64_t seed = 1;
};

// Graphs with more elements than this (all tensors together) get no test data (the
// reference holds 8 bytes per element: 512 MiB at the limit).
constexpr int64_t kMaxTestElements = int64_t{1} << 26;

// Writes the artifacts of `c` into `dir` (created if needed). Throws Error naming the
// path when a file cannot be written.
void writeArtifacts(const CompiledGraph& c, const CompileOptions& options, const std::filesystem::path& dir,
                    const ArtifactOptions& artifacts);

// The launch manifest alone (manifest.json's text).
std::string launchManifest(const CompiledGraph& c, const CompileOptions& options);

// POLYRED_DUMP_CUDA: when the variable names a directory, every generated kernel's
// source is written there as <kernel>-<first 16 hex digits of its SHA-256>.cu, on
// every path (compile, check, run, corpus, the library), GPU or not.
void dumpCudaFromEnvironment(const Program& program);

}  // namespace polyred
