// peers_cub_argmax: CUB's row argmax of an f16 matrix, timed with docs/method.md's method
// (bench/tuple_bench.py runs it for the argmax case of issue #13).
//
//   peers_cub_argmax ROWS COLS OUT.json [--iterations=N] [--seed=S]
//
// cub::DeviceSegmentedReduce::ArgMax over __half with one segment per row (offsets
// 0, COLS, 2 COLS, ...; output cub::KeyValuePair<int, __half>: the index within the row
// and the value). Temporary storage is allocated beforehand; the call is captured in a
// CUDA graph; per timed call the L2 is flushed (256 MiB memset), then CUDA events around
// one replay; the median of N calls (default 50, at least 50 by the method).
// Inputs: uniform in [-1, 1) as f16, never zero (as bench/peers_torch.py's rand).
// Check: against a host argmax of the same values (first index of the maximum). A row
// whose index differs but whose value equals the maximum is a tie (CUB does not promise
// the first index); it is counted, not an error. Anything else is WRONG (exit 10).
// Output: one JSON object. Exit 2 on bad usage, 3 on a CUDA error.
#include <cub/cub.cuh>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "peers_cub_argmax: %s: %s\n", what, cudaGetErrorString(e));
  std::exit(3);
}

constexpr size_t kFlushBytes = size_t{256} << 20;
using Pair = cub::KeyValuePair<int, __half>;

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: peers_cub_argmax ROWS COLS OUT.json [--iterations=N] [--seed=S]\n");
    return 2;
  }
  const int64_t rows = std::atoll(argv[1]), cols = std::atoll(argv[2]);
  int iterations = 50;
  unsigned seed = 1;
  for (int a = 4; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg.rfind("--iterations=", 0) == 0) iterations = std::max(1, std::atoi(arg.c_str() + 13));
    else if (arg.rfind("--seed=", 0) == 0) seed = static_cast<unsigned>(std::atoi(arg.c_str() + 7));
    else {
      std::fprintf(stderr, "peers_cub_argmax: unknown option %s\n", argv[a]);
      return 2;
    }
  }
  if (rows <= 0 || cols <= 0 || rows * cols >= (int64_t{1} << 31)) {
    std::fprintf(stderr, "peers_cub_argmax: ROWS and COLS must be positive, ROWS*COLS < 2^31 (int offsets)\n");
    return 2;
  }
  const int64_t n = rows * cols;

  // Host values (f16), never zero.
  std::vector<__half> host(static_cast<size_t>(n));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  for (auto& v : host) {
    __half h = __float2half(uni(gen));
    if (__half2float(h) == 0.f) h = __float2half(0.5f);
    v = h;
  }
  std::vector<int> offsets(static_cast<size_t>(rows + 1));
  for (int64_t r = 0; r <= rows; ++r) offsets[static_cast<size_t>(r)] = static_cast<int>(r * cols);

  __half* dIn = nullptr;
  Pair* dOut = nullptr;
  int* dOffsets = nullptr;
  void* flush = nullptr;
  check(cudaMalloc(&dIn, n * sizeof(__half)), "input");
  check(cudaMalloc(&dOut, rows * sizeof(Pair)), "output");
  check(cudaMalloc(&dOffsets, (rows + 1) * sizeof(int)), "offsets");
  check(cudaMalloc(&flush, kFlushBytes), "flush buffer");
  check(cudaMemcpy(dIn, host.data(), n * sizeof(__half), cudaMemcpyHostToDevice), "upload");
  check(cudaMemcpy(dOffsets, offsets.data(), (rows + 1) * sizeof(int), cudaMemcpyHostToDevice), "upload");

  size_t tempBytes = 0;
  check(cub::DeviceSegmentedReduce::ArgMax(nullptr, tempBytes, dIn, dOut, rows, dOffsets, dOffsets + 1),
        "ArgMax (size query)");
  void* temp = nullptr;
  check(cudaMalloc(&temp, std::max<size_t>(tempBytes, 1)), "temporary storage");

  cudaStream_t s;
  check(cudaStreamCreate(&s), "stream");
  auto enqueue = [&] {
    check(cub::DeviceSegmentedReduce::ArgMax(temp, tempBytes, dIn, dOut, rows, dOffsets, dOffsets + 1, s),
          "ArgMax");
  };
  // Warm-up outside the graph, then capture.
  for (int w = 0; w < 3; ++w) enqueue();
  check(cudaStreamSynchronize(s), "warm-up");
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "capture");
  enqueue();
  check(cudaStreamEndCapture(s, &graph), "end capture");
  size_t nodes = 0;
  check(cudaGraphGetNodes(graph, nullptr, &nodes), "graph nodes");
  check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  check(cudaGraphLaunch(exec, s), "upload graph");
  check(cudaStreamSynchronize(s), "graph warm-up");

  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<float> times;
  for (int k = 0; k < iterations; ++k) {
    check(cudaMemsetAsync(flush, k & 0xff, kFlushBytes, s), "L2 flush");
    check(cudaEventRecord(start, s), "record");
    check(cudaGraphLaunch(exec, s), "launch");
    check(cudaEventRecord(stop, s), "record");
    check(cudaEventSynchronize(stop), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    times.push_back(ms * 1e3f);
  }
  std::sort(times.begin(), times.end());
  const double us = times[times.size() / 2];

  // Check the result of the timed replays against the host argmax.
  std::vector<Pair> got(static_cast<size_t>(rows));
  check(cudaMemcpy(got.data(), dOut, rows * sizeof(Pair), cudaMemcpyDeviceToHost), "download");
  int64_t exact = 0, ties = 0, wrong = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const __half* row = host.data() + r * cols;
    int64_t best = 0;
    float bestV = __half2float(row[0]);
    for (int64_t j = 1; j < cols; ++j) {
      const float v = __half2float(row[j]);
      if (v > bestV) bestV = v, best = j;
    }
    const Pair& p = got[static_cast<size_t>(r)];
    if (p.key == best) ++exact;
    else if (p.key >= 0 && p.key < cols && __half2float(row[p.key]) == bestV && __half2float(p.value) == bestV) ++ties;
    else ++wrong;
  }
  const bool ok = wrong == 0;

  std::ofstream out(argv[3]);
  out << "{\"impl\": \"cub::DeviceSegmentedReduce::ArgMax (f16, one segment per row)\", \"cub_version\": "
      << CUB_VERSION << ", \"rows\": " << rows << ", \"cols\": " << cols << ", \"iterations\": " << iterations
      << ", \"us\": " << us << ", \"graph_nodes\": " << nodes << ", \"temp_bytes\": " << tempBytes
      << ", \"bytes\": " << n * 2 + rows * static_cast<int64_t>(sizeof(Pair)) << ", \"ok\": " << (ok ? "true" : "false")
      << ", \"exact_rows\": " << exact << ", \"tie_rows\": " << ties << ", \"wrong_rows\": " << wrong << "}\n";
  std::printf("cub argmax %lldx%lld: %.2f us (%zu graph nodes), %s (%lld exact, %lld ties, %lld wrong)\n",
              static_cast<long long>(rows), static_cast<long long>(cols), us, nodes, ok ? "ok" : "WRONG",
              static_cast<long long>(exact), static_cast<long long>(ties), static_cast<long long>(wrong));
  check(cudaGraphExecDestroy(exec), "destroy");
  check(cudaGraphDestroy(graph), "destroy");
  return ok ? 0 : 10;
}
