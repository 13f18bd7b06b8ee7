// The device reduction library (src/device/*.cuh), embedded at build time so that
// generated kernels can #include it under NVRTC without any file on disk.
#pragma once

#include <string>
#include <vector>

namespace polyred {

struct DeviceSource {
  std::string name;  // e.g. "polyred_reduce.cuh"
  std::string text;
};

const std::vector<DeviceSource>& deviceSources();

}  // namespace polyred
