#include "runtime/nvrtc.h"

#include <nvrtc.h>

#include <cstdlib>
#include <sstream>

#include "codegen/device_sources.h"
#include "support/error.h"

namespace polyred {
namespace {

constexpr int kSourceLinesInErrors = 30;

std::string cudaRoot() {
  const char* env = std::getenv("POLYRED_CUDA_ROOT");
  return env && *env ? std::string(env) : std::string(POLYRED_CUDA_ROOT);
}

// The first lines of `source`, numbered, for error messages.
std::string sourceExcerpt(const std::string& source) {
  std::istringstream in(source);
  std::ostringstream out;
  std::string line;
  int n = 0;
  while (n < kSourceLinesInErrors && std::getline(in, line)) out << ++n << ": " << line << "\n";
  if (in.peek() != std::char_traits<char>::eof()) out << "...\n";
  return out.str();
}

// Owns an nvrtcProgram.
class Program {
 public:
  Program(const std::string& source, const std::string& name) {
    const auto& headers = deviceSources();
    std::vector<const char*> texts, names;
    for (const DeviceSource& h : headers) {
      texts.push_back(h.text.c_str());
      names.push_back(h.name.c_str());
    }
    nvrtcResult r = nvrtcCreateProgram(&prog_, source.c_str(), name.c_str(), static_cast<int>(headers.size()),
                                       texts.data(), names.data());
    POLYRED_CHECK(r == NVRTC_SUCCESS, "nvrtcCreateProgram: " << nvrtcGetErrorString(r));
  }
  ~Program() { nvrtcDestroyProgram(&prog_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return prog_; }

 private:
  nvrtcProgram prog_ = nullptr;
};

std::string programLog(nvrtcProgram prog) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size == 0) return "";
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS) return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace

std::vector<std::string> nvrtcOptions(int ccMajor, int ccMinor) {
  return {
      "-arch=sm_" + std::to_string(ccMajor * 10 + ccMinor),
      "-std=c++20",
      "-default-device",
      "--include-path=" + cudaRoot() + "/include",
      // IEEE semantics: no fast math (denormals kept, exact division and square root).
      "--ftz=false",
      "--prec-div=true",
      "--prec-sqrt=true",
      // No contraction of a*b+c into one rounding: every op rounds to its dtype, as the
      // framework that materializes each tensor does (a fused multiply-add gave 5e-4
      // relative differences under cancellation in a corpus optimizer update).
      "--fmad=false",
  };
}

NvrtcResult compileCuda(const std::string& source, const std::string& programName, int ccMajor,
                        int ccMinor, const std::vector<std::string>& extraOptions) {
  std::vector<std::string> options = nvrtcOptions(ccMajor, ccMinor);
  options.insert(options.end(), extraOptions.begin(), extraOptions.end());
  std::vector<const char*> optionPtrs;
  for (const std::string& o : options) optionPtrs.push_back(o.c_str());

  Program prog(source, programName);
  const nvrtcResult r = nvrtcCompileProgram(prog.get(), static_cast<int>(optionPtrs.size()), optionPtrs.data());
  NvrtcResult result;
  result.log = programLog(prog.get());
  if (r != NVRTC_SUCCESS) {
    std::ostringstream msg;
    msg << "NVRTC failed to compile '" << programName << "' (" << nvrtcGetErrorString(r) << ")\noptions:";
    for (const std::string& o : options) msg << " " << o;
    msg << "\nlog:\n" << result.log << "\nsource (first lines):\n" << sourceExcerpt(source);
    throw CompileError(msg.str(), result.log);
  }

  size_t size = 0;
  nvrtcResult g = nvrtcGetCUBINSize(prog.get(), &size);
  POLYRED_CHECK(g == NVRTC_SUCCESS && size > 0, "nvrtcGetCUBINSize: " << nvrtcGetErrorString(g));
  result.cubin.resize(size);
  g = nvrtcGetCUBIN(prog.get(), result.cubin.data());
  POLYRED_CHECK(g == NVRTC_SUCCESS, "nvrtcGetCUBIN: " << nvrtcGetErrorString(g));

  g = nvrtcGetPTXSize(prog.get(), &size);
  POLYRED_CHECK(g == NVRTC_SUCCESS, "nvrtcGetPTXSize: " << nvrtcGetErrorString(g));
  result.ptx.resize(size);
  g = nvrtcGetPTX(prog.get(), result.ptx.data());
  POLYRED_CHECK(g == NVRTC_SUCCESS, "nvrtcGetPTX: " << nvrtcGetErrorString(g));
  while (!result.ptx.empty() && result.ptx.back() == '\0') result.ptx.pop_back();
  return result;
}

std::string nvrtcVersion() {
  int major = 0, minor = 0;
  const nvrtcResult r = ::nvrtcVersion(&major, &minor);
  POLYRED_CHECK(r == NVRTC_SUCCESS, "nvrtcVersion: " << nvrtcGetErrorString(r));
  return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace polyred
