// peers_cub: times the library peers CUB and cuDNN on the single-operator cases.
//
//   peers_cub CASES OUT.json [--iterations=N] [--only=SUBSTRING] [--list]
//
// CASES is bench/workloads/cases.txt (written by make_workloads.py): one case per line,
// "name op dtype dims axes" (op sum|max|and, dtype f32|f16|i32|bool). The reduced axes
// must be a leading block and/or a trailing block of the shape, so every case is
// [A, B, C] reduced over A and C (B kept):
//
//   all-reduce (B = 1)    cub::DeviceReduce::Reduce
//   x-reduce   (A = 1)    cub::DeviceSegmentedReduce::Reduce, one segment per row
//   y-reduce   (C = 1)    a tiled transpose to [B, A], then the segmented reduce
//   mixed (A, C > 1)      segmented reduce over C to [A, B], transpose, segmented reduce
//
// f16 sums accumulate in float (the CUB reduction operator takes floats); everything
// else accumulates in its own type. cuDNN (cudnnReduceTensor, ADD and MAX, float
// compute) runs on the f32/f16 sum and max cases. The transposes are ours and their
// time is counted: CUB has no strided (column) reduction.
//
// Method (docs/method.md): inputs are random and never zero (bool 99.9%
// true, ints in [-100, 100)); temporary storage is allocated before timing; all the
// launches of one call are captured in a CUDA graph; per timed call the L2 is flushed
// (256 MiB memset), then events around one replay; the median of N (>= 50) calls.
// Every result is checked against a float64/int64 host reference; a wrong result is
// reported ("ok": false) and makes the exit status 10 (other failures: 2 usage, 3 error). The same run measures the read
// ceiling (DeviceReduce sum over 2 GiB of f32) and the launch floor (one empty kernel).
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#ifndef PEERS_NO_CUDNN
#include <cudnn.h>
#endif
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

// ---------------------------------------------------------------- errors

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
#ifndef PEERS_NO_CUDNN
void check(cudnnStatus_t e, const char* what) {
  if (e != CUDNN_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cudnnGetErrorString(e));
}
#endif
#define CK(call) check((call), #call)

// ---------------------------------------------------------------- device memory

struct DeviceBuffer {
  void* ptr = nullptr;
  size_t bytes = 0;
  explicit DeviceBuffer(size_t n = 0) : bytes(n) {
    if (n) CK(cudaMalloc(&ptr, n));
  }
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class T>
  T* as() const { return static_cast<T*>(ptr); }
};
using Buffers = std::vector<std::shared_ptr<DeviceBuffer>>;

std::shared_ptr<DeviceBuffer> allocate(Buffers& keep, size_t bytes) {
  keep.push_back(std::make_shared<DeviceBuffer>(std::max<size_t>(bytes, 1)));
  return keep.back();
}

// ---------------------------------------------------------------- cases

enum class Op { Sum, Max, And };
enum class DType { F32, F16, I32, Bool };

struct Case {
  std::string name;
  Op op;
  DType dtype;
  std::vector<int64_t> dims, axes;
  int64_t A = 1, B = 1, C = 1;  // reduced-kept-reduced view
};

size_t dtypeBytes(DType t) { return t == DType::F32 || t == DType::I32 ? 4 : t == DType::F16 ? 2 : 1; }

std::vector<int64_t> parseList(const std::string& s) {
  std::vector<int64_t> v;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) v.push_back(std::stoll(item));
  return v;
}

// Folds the shape into [A, B, C]; throws if the reduced axes are not a leading and/or
// trailing block.
void canonicalize(Case& c) {
  const int64_t rank = static_cast<int64_t>(c.dims.size());
  std::vector<bool> reduced(rank, false);
  for (int64_t a : c.axes) reduced.at(a) = true;
  int64_t lead = 0, trail = rank;
  while (lead < rank && reduced[lead]) ++lead;
  while (trail > lead && reduced[trail - 1]) --trail;
  for (int64_t d = lead; d < trail; ++d)
    if (reduced[d]) throw std::runtime_error("reduced axes are not a leading/trailing block");
  c.A = c.B = c.C = 1;
  for (int64_t d = 0; d < lead; ++d) c.A *= c.dims[d];
  for (int64_t d = lead; d < trail; ++d) c.B *= c.dims[d];
  for (int64_t d = trail; d < rank; ++d) c.C *= c.dims[d];
  if (c.B == 1) c.C *= c.A, c.A = 1;  // an all-reduce: one flat segment
}

Case parseCase(const std::string& line) {
  std::stringstream in(line);
  std::string op, dtype, dims, axes;
  Case c;
  if (!(in >> c.name >> op >> dtype >> dims >> axes)) throw std::runtime_error("bad case line: " + line);
  c.op = op == "sum" ? Op::Sum : op == "max" ? Op::Max : op == "and" ? Op::And
                                                           : throw std::runtime_error("bad op " + op);
  c.dtype = dtype == "f32" ? DType::F32 : dtype == "f16" ? DType::F16 : dtype == "i32" ? DType::I32
          : dtype == "bool" ? DType::Bool : throw std::runtime_error("bad dtype " + dtype);
  c.dims = parseList(dims);
  c.axes = parseList(axes);
  canonicalize(c);
  return c;
}

std::vector<Case> readCases(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<Case> cases;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') cases.push_back(parseCase(line));
  return cases;
}

// ---------------------------------------------------------------- random inputs

__device__ uint32_t hash32(uint64_t i, uint32_t seed) {
  uint64_t z = i * 0x9e3779b97f4a7c15ull + seed;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return static_cast<uint32_t>(z ^ (z >> 31));
}

// k * 2^-23 for k in [-2^23, 2^23) \ {0}: never zero, exact in f32 and nonzero in f16.
__device__ float symmetricFloat(uint32_t h) {
  int32_t k = static_cast<int32_t>(h >> 8) - (1 << 23);
  return static_cast<float>(k == 0 ? 1 : k) * 0x1p-23f;
}

__global__ void fillKernel(void* out, int64_t n, DType t, uint32_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = hash32(i, seed);
    switch (t) {
      case DType::F32: static_cast<float*>(out)[i] = symmetricFloat(h); break;
      case DType::F16: static_cast<__half*>(out)[i] = __float2half(symmetricFloat(h)); break;
      case DType::I32: static_cast<int32_t*>(out)[i] = static_cast<int32_t>(h % 200u) - 100; break;
      case DType::Bool: static_cast<bool*>(out)[i] = (h % 1000u) != 0; break;
    }
  }
}

void fillRandom(void* out, int64_t n, DType t, uint32_t seed) {
  fillKernel<<<1024, 256>>>(out, n, t, seed);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
}

// ---------------------------------------------------------------- reduction operators

struct SumOp {
  template <class T>
  __host__ __device__ T operator()(const T& a, const T& b) const { return a + b; }
};
struct FloatSumOp {  // f16 sums: accumulate in float
  __host__ __device__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  template <class T>
  __host__ __device__ T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
struct HalfMaxOp {
  __device__ __half operator()(__half a, __half b) const { return __hmax(a, b); }
};
struct AndOp {
  __host__ __device__ bool operator()(bool a, bool b) const { return a && b; }
};

struct RowOffset {  // segment s starts at s * length
  int length;
  __host__ __device__ int operator()(int s) const { return s * length; }
};

// ---------------------------------------------------------------- transpose

template <class T>
__global__ void transposeKernel(const T* in, T* out, int rows, int cols) {
  __shared__ T tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[int64_t(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8)
    if (x < rows && y + j < cols) out[int64_t(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

template <class T>
void transpose(const T* in, T* out, int64_t rows, int64_t cols, cudaStream_t s) {
  dim3 grid(static_cast<unsigned>((cols + 31) / 32), static_cast<unsigned>((rows + 31) / 32));
  transposeKernel<T><<<grid, dim3(32, 8), 0, s>>>(in, out, static_cast<int>(rows), static_cast<int>(cols));
}

// ---------------------------------------------------------------- CUB plans

using Enqueue = std::function<void(cudaStream_t)>;

// Segmented reduce of `segments` rows of `length` items; temp storage is allocated now.
template <class In, class Out, class ReduceOp, class Init>
Enqueue segmented(Buffers& keep, const In* in, Out* out, int64_t segments, int64_t length, ReduceOp op, Init init) {
  auto offsets = thrust::make_transform_iterator(thrust::make_counting_iterator<int>(0),
                                                 RowOffset{static_cast<int>(length)});
  size_t bytes = 0;
  CK(cub::DeviceSegmentedReduce::Reduce(nullptr, bytes, in, out, segments, offsets, offsets + 1, op, init));
  void* temp = allocate(keep, bytes)->ptr;
  return [=](cudaStream_t s) {
    size_t b = bytes;
    CK(cub::DeviceSegmentedReduce::Reduce(temp, b, in, out, segments, offsets, offsets + 1, op, init, s));
  };
}

template <class In, class Out, class ReduceOp, class Init>
Enqueue whole(Buffers& keep, const In* in, Out* out, int64_t n, ReduceOp op, Init init) {
  size_t bytes = 0;
  CK(cub::DeviceReduce::Reduce(nullptr, bytes, in, out, n, op, init));
  void* temp = allocate(keep, bytes)->ptr;
  return [=](cudaStream_t s) {
    size_t b = bytes;
    CK(cub::DeviceReduce::Reduce(temp, b, in, out, n, op, init, s));
  };
}

// The CUB plan for [A, B, C] reduced over A and C: In inputs, Acc partials, Out outputs.
template <class In, class Acc, class Out, class ReduceOp>
Enqueue cubPlan(Buffers& keep, const Case& c, const void* input, void* output, ReduceOp op, Acc init,
                std::string* how) {
  const In* in = static_cast<const In*>(input);
  Out* out = static_cast<Out*>(output);
  if (c.B == 1) {
    *how = "DeviceReduce";
    return whole(keep, in, out, c.C, op, init);
  }
  if (c.A == 1) {
    *how = "DeviceSegmentedReduce";
    return segmented(keep, in, out, c.B, c.C, op, init);
  }
  if (c.C == 1) {
    *how = "transpose + DeviceSegmentedReduce";
    In* t = allocate(keep, sizeof(In) * c.A * c.B)->as<In>();
    Enqueue reduce = segmented(keep, static_cast<const In*>(t), out, c.B, c.A, op, init);
    return [=](cudaStream_t s) {
      transpose(in, t, c.A, c.B, s);
      reduce(s);
    };
  }
  *how = "DeviceSegmentedReduce + transpose + DeviceSegmentedReduce";
  Acc* partial = allocate(keep, sizeof(Acc) * c.A * c.B)->as<Acc>();
  Acc* t = allocate(keep, sizeof(Acc) * c.A * c.B)->as<Acc>();
  Enqueue inner = segmented(keep, in, partial, c.A * c.B, c.C, op, init);
  Enqueue outer = segmented(keep, static_cast<const Acc*>(t), out, c.B, c.A, op, init);
  return [=](cudaStream_t s) {
    inner(s);
    transpose(static_cast<const Acc*>(partial), t, c.A, c.B, s);
    outer(s);
  };
}

Enqueue cubFor(Buffers& keep, const Case& c, const void* in, void* out, std::string* how) {
  const __half halfLowest = __ushort_as_half(static_cast<unsigned short>(0xFC00));  // -inf
  switch (c.op) {
    case Op::Sum:
      if (c.dtype == DType::F32) return cubPlan<float, float, float>(keep, c, in, out, SumOp{}, 0.0f, how);
      if (c.dtype == DType::F16) return cubPlan<__half, float, __half>(keep, c, in, out, FloatSumOp{}, 0.0f, how);
      if (c.dtype == DType::I32) return cubPlan<int32_t, int32_t, int32_t>(keep, c, in, out, SumOp{}, 0, how);
      break;
    case Op::Max:
      if (c.dtype == DType::F32)
        return cubPlan<float, float, float>(keep, c, in, out, MaxOp{}, -INFINITY, how);
      if (c.dtype == DType::F16) return cubPlan<__half, __half, __half>(keep, c, in, out, HalfMaxOp{}, halfLowest, how);
      break;
    case Op::And:
      if (c.dtype == DType::Bool) return cubPlan<bool, bool, bool>(keep, c, in, out, AndOp{}, true, how);
      break;
  }
  throw std::runtime_error("no CUB plan for this op and dtype");
}

// ---------------------------------------------------------------- cuDNN plan

#ifdef PEERS_NO_CUDNN  // built without cuDNN (bench/run_all.sh falls back to this when linking fails)
struct Cudnn {};
Enqueue cudnnPlan(Buffers&, Cudnn&, const Case&, const void*, void*) {
  throw std::runtime_error("peers_cub was built without cuDNN");
}
int cudnnVersionNumber() { return 0; }
#else
int cudnnVersionNumber() { return static_cast<int>(cudnnGetVersion()); }

struct Cudnn {
  cudnnHandle_t handle = nullptr;
  Cudnn() { CK(cudnnCreate(&handle)); }
  ~Cudnn() { cudnnDestroy(handle); }
};

// cudnnReduceTensor on the shape left-padded to 4-D (reduced dims are 1 in the output).
Enqueue cudnnPlan(Buffers& keep, Cudnn& dnn, const Case& c, const void* in, void* out) {
  if (c.op == Op::And || c.dtype == DType::I32 || c.dtype == DType::Bool || c.dims.size() > 4)
    throw std::runtime_error("not supported by cudnnReduceTensor");
  int a[4] = {1, 1, 1, 1}, r[4] = {1, 1, 1, 1};
  const size_t pad = 4 - c.dims.size();
  for (size_t d = 0; d < c.dims.size(); ++d) {
    a[pad + d] = static_cast<int>(c.dims[d]);
    bool reduced = std::find(c.axes.begin(), c.axes.end(), static_cast<int64_t>(d)) != c.axes.end();
    r[pad + d] = reduced ? 1 : a[pad + d];
  }
  cudnnDataType_t t = c.dtype == DType::F32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF;
  cudnnTensorDescriptor_t aDesc, cDesc;
  cudnnReduceTensorDescriptor_t rDesc;
  CK(cudnnCreateTensorDescriptor(&aDesc));
  CK(cudnnCreateTensorDescriptor(&cDesc));
  CK(cudnnCreateReduceTensorDescriptor(&rDesc));
  CK(cudnnSetTensor4dDescriptor(aDesc, CUDNN_TENSOR_NCHW, t, a[0], a[1], a[2], a[3]));
  CK(cudnnSetTensor4dDescriptor(cDesc, CUDNN_TENSOR_NCHW, t, r[0], r[1], r[2], r[3]));
  CK(cudnnSetReduceTensorDescriptor(rDesc, c.op == Op::Sum ? CUDNN_REDUCE_TENSOR_ADD : CUDNN_REDUCE_TENSOR_MAX,
                                    CUDNN_DATA_FLOAT, CUDNN_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_NO_INDICES,
                                    CUDNN_32BIT_INDICES));
  size_t bytes = 0;
  CK(cudnnGetReductionWorkspaceSize(dnn.handle, rDesc, aDesc, cDesc, &bytes));
  void* work = allocate(keep, bytes)->ptr;
  cudnnHandle_t h = dnn.handle;
  // The descriptors live as long as the process (a few dozen of them).
  return [=](cudaStream_t s) {
    const float alpha = 1.0f, beta = 0.0f;
    CK(cudnnSetStream(h, s));
    CK(cudnnReduceTensor(h, rDesc, nullptr, 0, work, bytes, &alpha, aDesc, in, &beta, cDesc, out));
  };
}
#endif

// ---------------------------------------------------------------- timing

constexpr size_t kFlushBytes = size_t{256} << 20;

struct Timing {
  double micros = 0;
  size_t nodes = 0;  // graph nodes: kernels, memsets, copies of one call
};

Timing timeGraph(const Enqueue& enqueue, cudaStream_t s, int iterations, const DeviceBuffer& flush) {
  for (int i = 0; i < 3; ++i) enqueue(s);
  CK(cudaStreamSynchronize(s));
  cudaGraph_t graph = nullptr;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
  try {
    enqueue(s);
  } catch (...) {  // leave the stream usable: end the capture before passing the error on
    cudaStreamEndCapture(s, &graph);
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    throw;
  }
  CK(cudaStreamEndCapture(s, &graph));
  Timing t;
  CK(cudaGraphGetNodes(graph, nullptr, &t.nodes));
  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, graph, 0));
  CK(cudaGraphLaunch(exec, s));  // uploads the graph
  CK(cudaStreamSynchronize(s));
  cudaEvent_t start, stop;
  CK(cudaEventCreate(&start));
  CK(cudaEventCreate(&stop));
  std::vector<double> micros;
  for (int i = 0; i < iterations; ++i) {
    CK(cudaMemsetAsync(flush.ptr, i & 0xff, kFlushBytes, s));
    CK(cudaEventRecord(start, s));
    CK(cudaGraphLaunch(exec, s));
    CK(cudaEventRecord(stop, s));
    CK(cudaEventSynchronize(stop));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, start, stop));
    micros.push_back(ms * 1000.0);
  }
  CK(cudaEventDestroy(start));
  CK(cudaEventDestroy(stop));
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  std::sort(micros.begin(), micros.end());
  size_t n = micros.size();
  t.micros = n % 2 ? micros[n / 2] : 0.5 * (micros[n / 2 - 1] + micros[n / 2]);
  return t;
}

__global__ void emptyKernel() {}

// ---------------------------------------------------------------- host reference

double hostValue(const std::vector<char>& h, DType t, int64_t i) {
  switch (t) {
    case DType::F32: return reinterpret_cast<const float*>(h.data())[i];
    case DType::F16: return __half2float(reinterpret_cast<const __half*>(h.data())[i]);
    case DType::I32: return reinterpret_cast<const int32_t*>(h.data())[i];
    case DType::Bool: return reinterpret_cast<const bool*>(h.data())[i] ? 1.0 : 0.0;
  }
  return 0;
}

double combine(Op op, double a, double b) {
  return op == Op::Sum ? a + b : op == Op::Max ? std::max(a, b) : (a != 0 && b != 0 ? 1.0 : 0.0);
}
double identity(Op op) { return op == Op::Sum ? 0.0 : op == Op::Max ? -INFINITY : 1.0; }

// Reference outputs in double (exact for the i32 sums here: |sum| < 2^53), threads over A x C.
std::vector<double> reference(const Case& c, const std::vector<char>& input) {
  const int threads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<std::vector<double>> partial(threads, std::vector<double>(c.B, identity(c.op)));
  const int64_t total = c.A * c.B * c.C;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::vector<double>& p = partial[t];
      for (int64_t i = total * t / threads; i < total * (t + 1) / threads; ++i) {
        int64_t b = (i / c.C) % c.B;
        p[b] = combine(c.op, p[b], hostValue(input, c.dtype, i));
      }
    });
  for (auto& th : pool) th.join();
  for (int t = 1; t < threads; ++t)
    for (int64_t b = 0; b < c.B; ++b) partial[0][b] = combine(c.op, partial[0][b], partial[t][b]);
  return partial[0];
}

// ||out - ref|| / ||ref|| (0 when both are zero); exact types must match exactly.
double relativeError(const Case& c, const std::vector<char>& out, const std::vector<double>& ref) {
  double diff = 0, norm = 0;
  for (int64_t b = 0; b < c.B; ++b) {
    double got = hostValue(out, c.dtype, b);
    if (std::isnan(got)) return INFINITY;
    diff += (got - ref[b]) * (got - ref[b]);
    norm += ref[b] * ref[b];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

double tolerance(const Case& c) {
  if (c.op != Op::Sum || c.dtype == DType::I32) return 0.0;  // max, and, int sums: exact
  return c.dtype == DType::F16 ? 2e-3 : 1e-4;
}

// ---------------------------------------------------------------- JSON

std::string quote(const std::string& s) {
  std::string r = "\"";
  for (char ch : s) r += ch == '"' || ch == '\\' ? std::string("\\") + ch : std::string(1, ch);
  return r + "\"";
}

std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

struct Result {
  std::string caseName, impl, how, error;
  bool ok = false;
  double micros = 0, err = 0;
  size_t nodes = 0;
  std::string json() const {
    std::string j = "{\"case\": " + quote(caseName) + ", \"impl\": " + quote(impl);
    if (!error.empty()) return j + ", \"error\": " + quote(error) + "}";
    return j + ", \"how\": " + quote(how) + ", \"us\": " + number(micros) + ", \"graph_nodes\": " +
           std::to_string(nodes) + ", \"ok\": " + (ok ? "true" : "false") + ", \"rel_err\": " + number(err) + "}";
  }
};

// ---------------------------------------------------------------- driver

struct Options {
  std::string casesPath, outPath, only;
  int iterations = 50;
  bool list = false;
};

Options parseOptions(int argc, char** argv) {
  Options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--iterations=", 0) == 0) o.iterations = std::stoi(a.substr(13));
    else if (a.rfind("--only=", 0) == 0) o.only = a.substr(7);
    else if (a == "--list") o.list = true;
    else positional.push_back(a);
  }
  if (positional.size() != 2 || o.iterations < 1) {
    std::cerr << "usage: peers_cub CASES OUT.json [--iterations=N] [--only=SUBSTRING] [--list]\n";
    std::exit(2);
  }
  o.casesPath = positional[0];
  o.outPath = positional[1];
  return o;
}

// Runs one implementation of one case: plan, check once, time.
using Planner = std::function<Enqueue(Buffers&, void* out, std::string* how)>;

Result runOne(const Case& c, const std::string& impl, const Planner& plan, const std::vector<double>& ref,
              size_t outBytes, cudaStream_t s, int iterations, const DeviceBuffer& flush) {
  Result r;
  r.caseName = c.name;
  r.impl = impl;
  try {
    Buffers keep;
    void* out = allocate(keep, outBytes)->ptr;
    Enqueue enqueue = plan(keep, out, &r.how);
    CK(cudaMemsetAsync(out, 0xff, outBytes, s));  // poison: every output must be written
    enqueue(s);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(s));
    std::vector<char> host(outBytes);
    CK(cudaMemcpy(host.data(), out, outBytes, cudaMemcpyDeviceToHost));
    r.err = relativeError(c, host, ref);
    r.ok = r.err <= tolerance(c);
    Timing t = timeGraph(enqueue, s, iterations, flush);
    r.micros = t.micros;
    r.nodes = t.nodes;
  } catch (const std::exception& e) {
    r.error = e.what();
    cudaGetLastError();  // clear a sticky launch error where possible
  }
  return r;
}

std::vector<Result> runCase(const Case& c, Cudnn& dnn, cudaStream_t s, int iterations, const DeviceBuffer& flush) {
  const int64_t n = c.A * c.B * c.C;
  DeviceBuffer input(static_cast<size_t>(n) * dtypeBytes(c.dtype));
  fillRandom(input.ptr, n, c.dtype, 12345u);
  std::vector<char> host(input.bytes);
  CK(cudaMemcpy(host.data(), input.ptr, input.bytes, cudaMemcpyDeviceToHost));
  std::vector<double> ref = reference(c, host);
  host.clear();
  host.shrink_to_fit();
  const size_t outBytes = static_cast<size_t>(c.B) * dtypeBytes(c.dtype);
  std::vector<Result> results;
  results.push_back(runOne(c, "cub", [&](Buffers& k, void* out, std::string* how) {
    return cubFor(k, c, input.ptr, out, how);
  }, ref, outBytes, s, iterations, flush));
  bool dnnCase = (c.op == Op::Sum || c.op == Op::Max) && (c.dtype == DType::F32 || c.dtype == DType::F16);
  if (dnnCase)
    results.push_back(runOne(c, "cudnn", [&](Buffers& k, void* out, std::string* how) {
      *how = "cudnnReduceTensor";
      return cudnnPlan(k, dnn, c, input.ptr, out);
    }, ref, outBytes, s, iterations, flush));
  return results;
}

// Read ceiling: DeviceReduce sum over 2 GiB of f32; launch floor: one empty kernel.
std::string measureCeilings(cudaStream_t s, int iterations, const DeviceBuffer& flush) {
  const int64_t n = int64_t{1} << 29;
  Buffers keep;
  DeviceBuffer input(static_cast<size_t>(n) * 4);
  fillRandom(input.ptr, n, DType::F32, 7u);
  float* out = allocate(keep, 4)->as<float>();
  Enqueue sum = whole(keep, input.as<const float>(), out, n, SumOp{}, 0.0f);
  Timing ceiling = timeGraph(sum, s, iterations, flush);
  Timing floor = timeGraph([](cudaStream_t st) { emptyKernel<<<1, 1, 0, st>>>(); }, s, iterations, flush);
  double gbps = static_cast<double>(input.bytes) / (ceiling.micros * 1e3);
  std::cout << "read ceiling (CUB sum, 2 GiB f32): " << gbps << " GB/s; launch floor (empty kernel): "
            << floor.micros << " us\n";
  return "\"read_ceiling\": {\"impl\": \"cub DeviceReduce sum f32\", \"bytes\": " + std::to_string(input.bytes) +
         ", \"us\": " + number(ceiling.micros) + ", \"GBps\": " + number(gbps) + "},\n \"launch_floor\": " +
         "{\"impl\": \"empty kernel\", \"us\": " + number(floor.micros) + "}";
}

void writeJson(const std::string& path, const std::string& head, const std::vector<std::string>& lines) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << "{" << head << ",\n \"results\": [\n  ";
    for (size_t i = 0; i < lines.size(); ++i) out << (i ? ",\n  " : "") << lines[i];
    out << "\n ]\n}\n";
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot write " + path);
}

std::string header(int iterations) {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  int driver = 0, runtime = 0;
  CK(cudaDriverGetVersion(&driver));
  CK(cudaRuntimeGetVersion(&runtime));
  return "\"device\": " + quote(p.name) + ", \"sm\": " + std::to_string(p.major * 10 + p.minor) +
         ", \"cuda_driver_api\": " + std::to_string(driver) + ", \"cuda_runtime\": " + std::to_string(runtime) +
         ", \"cub_version\": " + std::to_string(CUB_VERSION) + ", \"cudnn_version\": " +
         std::to_string(cudnnVersionNumber()) + ", \"iterations\": " + std::to_string(iterations);
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parseOptions(argc, argv);
  try {
    std::vector<Case> cases = readCases(o.casesPath);
    if (o.list) {
      for (const Case& c : cases) std::cout << c.name << " [" << c.A << "," << c.B << "," << c.C << "]\n";
      return 0;
    }
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    DeviceBuffer flush(kFlushBytes);
    Cudnn dnn;
    std::string head = header(o.iterations) + ",\n " + measureCeilings(s, o.iterations, flush);
    std::vector<std::string> lines;
    bool wrong = false;
    writeJson(o.outPath, head, lines);  // rewritten after every case: a stopped run keeps its results
    for (const Case& c : cases) {
      if (!o.only.empty() && c.name.find(o.only) == std::string::npos) continue;
      std::vector<Result> results;
      try {
        results = runCase(c, dnn, s, o.iterations, flush);
      } catch (const std::exception& e) {  // inputs or reference failed: the case has no result
        Result r;
        r.caseName = c.name;
        r.impl = "cub";
        r.error = e.what();
        results.push_back(r);
      }
      for (const Result& r : results) {
        lines.push_back(r.json());
        wrong = wrong || (r.error.empty() && !r.ok);
        std::cout << r.caseName << " " << r.impl << ": "
                  << (r.error.empty() ? (r.ok ? "" : "WRONG RESULT ") + number(r.micros) + " us (" + r.how + ")"
                                      : "error: " + r.error)
                  << std::endl;
      }
      writeJson(o.outPath, head, lines);
    }
    if (wrong) std::cerr << "peers_cub: WRONG RESULTS (see \"ok\": false in " << o.outPath << ")\n";
    return wrong ? 10 : 0;
  } catch (const std::exception& e) {
    std::cerr << "peers_cub: " << e.what() << "\n";
    return 3;
  }
}
