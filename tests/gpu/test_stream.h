// A non-blocking CUDA stream owned by one GPU test (shared by the GPU test files).
#pragma once

#include "runtime/cuda_driver.h"

namespace polyred::testing_gpu {

class Stream {
 public:
  Stream() {
    cuda::ensureContext();
    cuda::check(cuda::driver().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  }
  ~Stream() { cuda::driver().cuStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  CUstream get() const { return stream_; }
  void synchronize() const { cuda::check(cuda::driver().cuStreamSynchronize(stream_), "cuStreamSynchronize"); }

 private:
  CUstream stream_ = nullptr;
};

}  // namespace polyred::testing_gpu
