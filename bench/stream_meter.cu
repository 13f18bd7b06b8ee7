// stream_meter: the practical limit of a case -- the time a plain streaming kernel
// needs to read the case's input bytes and write its output bytes (docs/method.md,
// "Practical limit"; ../shared/bench/METHOD.md).
//
//   stream_meter CASES OUT.jsonl [--iterations=N]
//
// CASES: one case per line, "key bytes_read bytes_written" (bench/run_all.sh writes it
// from polyred's results). For each distinct (read, written) pair the meter times a
// read-and-sum kernel -- 16-byte streaming loads, U independent loads in flight per
// thread, a grid-stride loop over B blocks per SM, warp shuffles, a block sum kept
// live by a store that never happens -- that also streams the written bytes out with
// 16-byte stores, for every B in {0, 1, 2, 4, 8}, U in {1, 2, 4, 8} and 256 or 512
// threads, and keeps the fastest. B = 0 is one pass: as many blocks as the bytes need,
// each thread's loop one trip. (Added on 2026-11-30, it dropped the block's atomic on
// one address, which made the one pass's thousands of blocks wait on each other: the
// limit of large reads fell 1-3%, e.g. Table 2's sg02 32.6 -> 31.5 us on the H200.)
// Method as everywhere: the memset of the sum and the kernel are one CUDA graph; per
// timed call the L2 is flushed (256 MiB memset), then events around one replay; the
// median of N calls (default 50; the search uses N/2 per configuration). Byte counts
// are rounded up to 16 (at most 15 bytes more per side).
// Output: one JSON object per case and line: key, bytes_read, bytes_written, us,
// threads, blocks_per_sm (0: one pass), loads_in_flight. Exit 2 on bad usage, 3 on a CUDA error.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "stream_meter: %s: %s\n", what, cudaGetErrorString(e));
  std::exit(3);
}

template <int U>
__global__ void __launch_bounds__(512) streamKernel(const float4* __restrict__ in, int64_t reads,
                                                    float4* __restrict__ out, int64_t writes,
                                                    float* __restrict__ sum) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float acc[U] = {};
  int64_t k = first;
  for (; k + (U - 1) * stride < reads; k += U * stride) {
    float4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = __ldcs(in + k + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  for (; k < reads; k += stride) {
    const float4 v = __ldcs(in + k);
    acc[0] += (v.x + v.y) + (v.z + v.w);
  }
  for (int64_t w = first; w < writes; w += stride) __stcs(out + w, make_float4(1.f, 2.f, 3.f, 4.f));
  float total = 0;
#pragma unroll
  for (int u = 0; u < U; ++u) total += acc[u];
  for (int offset = 16; offset > 0; offset /= 2) total += __shfl_down_sync(0xffffffffu, total, offset);
  __shared__ float warps[16];
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = total;
  __syncthreads();
  if (threadIdx.x == 0) {
    float block = 0;
    for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w) block += warps[w];
    // Stored only on a value the positive inputs never sum to: the loads stay live, and
    // no atomic on one address makes thousands of short blocks wait on each other.
    if (block < 0.f) *sum = block;
  }
}

struct Config {
  int threads, blocksPerSm, loadsInFlight;
};

using KernelFn = void (*)(const float4*, int64_t, float4*, int64_t, float*);

KernelFn kernelFor(int loadsInFlight) {
  switch (loadsInFlight) {
    case 1: return streamKernel<1>;
    case 2: return streamKernel<2>;
    case 4: return streamKernel<4>;
    default: return streamKernel<8>;
  }
}

class Meter {
 public:
  explicit Meter(int iterations) : iterations_(iterations) {
    check(cudaStreamCreate(&stream_), "stream");
    check(cudaEventCreate(&start_), "event");
    check(cudaEventCreate(&stop_), "event");
    check(cudaMalloc(&flush_, kFlushBytes), "flush buffer");
    check(cudaMalloc(&sum_, sizeof(float)), "sum");
    int device = 0;
    check(cudaGetDevice(&device), "device");
    check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device), "SM count");
  }

  // The fastest configuration for reading `read` bytes and writing `written` bytes.
  std::pair<double, Config> measure(int64_t read, int64_t written) {
    const int64_t reads = (read + 15) / 16, writes = (written + 15) / 16;
    float4* in = nullptr;
    float4* out = nullptr;
    check(cudaMalloc(&in, std::max<int64_t>(reads, 1) * 16), "input");
    check(cudaMalloc(&out, std::max<int64_t>(writes, 1) * 16), "output");
    check(cudaMemset(in, 0x3c, std::max<int64_t>(reads, 1) * 16), "input fill");  // nonzero floats
    std::pair<double, Config> best{1e30, {}};
    for (int threads : {256, 512})
      for (int blocksPerSm : {0, 1, 2, 4, 8})
        for (int loads : {1, 2, 4, 8}) {
          Config c{threads, blocksPerSm, loads};
          const double us = time(c, in, reads, out, writes, std::max(1, iterations_ / 2));
          if (us < best.first) best = {us, c};
        }
    best.first = time(best.second, in, reads, out, writes, iterations_);
    check(cudaFree(in), "free");
    check(cudaFree(out), "free");
    return best;
  }

 private:
  static constexpr size_t kFlushBytes = size_t{256} << 20;

  double time(const Config& c, const float4* in, int64_t reads, float4* out, int64_t writes, int n) {
    const int64_t work = std::max(reads, writes);
    const int64_t needed = std::max<int64_t>(1, (work + int64_t{c.threads} * c.loadsInFlight - 1) /
                                                    (int64_t{c.threads} * c.loadsInFlight));
    // B blocks per SM, or (B = 0, one pass) every block the bytes need, within the grid.
    const int64_t most = c.blocksPerSm == 0 ? int64_t{1} << 30 : int64_t{c.blocksPerSm} * sms_;
    const int blocks = static_cast<int>(std::min<int64_t>(needed, most));
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "capture");
    check(cudaMemsetAsync(sum_, 0, sizeof(float), stream_), "memset");
    kernelFor(c.loadsInFlight)<<<blocks, c.threads, 0, stream_>>>(in, reads, out, writes, sum_);
    check(cudaStreamEndCapture(stream_, &graph), "end capture");
    check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
    for (int w = 0; w < 3; ++w) check(cudaGraphLaunch(exec, stream_), "warm-up");
    std::vector<float> times;
    for (int k = 0; k < n; ++k) {
      check(cudaMemsetAsync(flush_, k & 0xff, kFlushBytes, stream_), "L2 flush");
      check(cudaEventRecord(start_, stream_), "record");
      check(cudaGraphLaunch(exec, stream_), "launch");
      check(cudaEventRecord(stop_, stream_), "record");
      check(cudaEventSynchronize(stop_), "sync");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start_, stop_), "elapsed");
      times.push_back(ms * 1e3f);
    }
    check(cudaGraphExecDestroy(exec), "destroy");
    check(cudaGraphDestroy(graph), "destroy");
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  }

  int iterations_;
  int sms_ = 0;
  cudaStream_t stream_{};
  cudaEvent_t start_{}, stop_{};
  void* flush_ = nullptr;
  float* sum_ = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: stream_meter CASES OUT.jsonl [--iterations=N]\n");
    return 2;
  }
  int iterations = 50;
  for (int a = 3; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg.rfind("--iterations=", 0) == 0) iterations = std::max(1, std::atoi(arg.c_str() + 13));
    else {
      std::fprintf(stderr, "stream_meter: unknown option %s\n", argv[a]);
      return 2;
    }
  }
  std::ifstream cases(argv[1]);
  if (!cases) {
    std::fprintf(stderr, "stream_meter: cannot read %s\n", argv[1]);
    return 2;
  }
  std::ofstream out(argv[2]);
  Meter meter(iterations);
  std::map<std::pair<int64_t, int64_t>, std::pair<double, Config>> done;  // the same bytes, measured once
  std::string line;
  while (std::getline(cases, line)) {
    std::istringstream fields(line);
    std::string key;
    int64_t read = -1, written = -1;
    if (!(fields >> key >> read >> written) || read < 0 || written < 0) continue;
    auto it = done.find({read, written});
    if (it == done.end()) it = done.emplace(std::make_pair(read, written), meter.measure(read, written)).first;
    const auto& [us, c] = it->second;
    out << "{\"key\": \"" << key << "\", \"bytes_read\": " << read << ", \"bytes_written\": " << written
        << ", \"us\": " << us << ", \"threads\": " << c.threads << ", \"blocks_per_sm\": " << c.blocksPerSm
        << ", \"loads_in_flight\": " << c.loadsInFlight << "}\n";
    std::printf("%-60s read %12lld written %12lld: %9.2f us (%d threads, %d blocks/SM, %d loads)\n", key.c_str(),
                static_cast<long long>(read), static_cast<long long>(written), us, c.threads, c.blocksPerSm,
                c.loadsInFlight);
  }
  return 0;
}
