// Compiling generated CUDA C++ to a CUBIN with NVRTC (no GPU or driver needed).
//
// Every device library header (src/device/*.cuh, see codegen/device_sources.h) is
// supplied as an in-memory header, so `#include "polyred_reduce.cuh"` works; the CUDA
// toolkit's include directory is on the include path for cuda_fp16.h / cuda_bf16.h.
// The toolkit root is the POLYRED_CUDA_ROOT environment variable when set, otherwise
// the root polyred was configured with.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace polyred {

struct NvrtcResult {
  std::vector<char> cubin;  // for sm_<ccMajor><ccMinor>
  std::string ptx;          // the PTX NVRTC produced on the way (for dumps and tests)
  std::string log;          // NVRTC's warnings, if any
};

// NVRTC rejected a program (or an option). what() holds the program name, the options,
// the NVRTC log and the first lines of the source; log() is the log alone.
class CompileError : public std::runtime_error {
 public:
  CompileError(const std::string& message, std::string log)
      : std::runtime_error(message), log_(std::move(log)) {}
  const std::string& log() const { return log_; }

 private:
  std::string log_;
};

// The options compileCuda passes before extraOptions (for logs and dumps).
std::vector<std::string> nvrtcOptions(int ccMajor, int ccMinor);

// Compiles `source` for compute capability ccMajor.ccMinor; throws CompileError.
NvrtcResult compileCuda(const std::string& source, const std::string& programName, int ccMajor,
                        int ccMinor, const std::vector<std::string>& extraOptions = {});

// NVRTC's version, e.g. "13.0".
std::string nvrtcVersion();

}  // namespace polyred
