// GPU half of the reduction sweep of issue 4; tests/sweep_cpu_test.cc is the CPU half
// (compileGraph + checkOnCpu + NVRTC for every case, which CI runs). Both take their
// cases (SweepOp .. casesFor) from tests/sweep_cases.h. Without a GPU every test is
// skipped.
//
//   SweepGpu (one test per (op, dtype) pair; ops sum, prod, min, max, and, or; dtypes
//     bool, int8, uint8, int32, int64, float16, bfloat16, float32, float64): every
//     canonical form -- all-reduce [n], x-reduce [3, n] axis 1, y-reduce [n, 5] axis 0 --
//     at n = 1, 2, 31, 32, 33, 1000, 4097, kept-heavy x [1000, 33] and y [33, 1000],
//     n = 2^20 + 7 all-reduce for every pair and x/y-reduce for int8, int64, bfloat16 and
//     float32. Each case must compile into exactly one kernel (one launch: the runtime
//     issues no memset or clean-up kernel either, see runtime/executor.h), and is launched
//     twice with its outputs poisoned before each launch; both launches must match the
//     reference interpreter (the second one shows the workspace was restored). A case
//     rejected at compile time fails too: every pair is meant to work.
//   SweepGpuNaN: max/min of float16/bfloat16/float32/float64 propagate NaN like
//     torch.amax/amin, single- and multi-block, atomic and deterministic.
//   SweepGpuMultiBlock: multi-block reductions (grid.x > 1) launched 20 times:
//     deterministic mode bitwise equal every time, atomic mode correct every time.
//   SweepGpuCapture: a launch captured into a CUDA graph and replayed 5 times on new
//     inputs, correct every time.
//   SweepGpuLargeIndex: int8 sum/max/min over 2^31 + 11 elements (64-bit indices).
// "[sweep]" summary lines (per pair, per NaN mode, and per op at the end) go to stdout.
//
// Semantics of each pair (the graph says it): sum/prod/min/max reduce with
// Reduction::<op>(dtype) and produce the input dtype (float16/bfloat16 accumulate in
// float32; integers wrap to the output type); and/or test each element != 0 and
// produce bool.
// Inputs (made here rather than by makeRandomInputs, so that every op sees telling values):
//   floats: (r + 0.5) / 2^15 for r uniform in [-2^15, 2^15): in (-1, 1), never 0;
//   prod of floats: 1 + a * float with a = min(1/2, 2/sqrt(n)): the product stays O(1);
//   sum/min/max of integers: uniform over the whole dtype (sums wrap);
//   prod of integers: odd values in [-7, 7] (products wrap, never reach 0);
//   logical cases -- and/or of any dtype, every op on bool (sum/max act as "any",
//   prod/min as "all"): each even kept slot m holds one decisive element (a zero among
//   nonzeros for all-like ops, a nonzero among zeros for any-like ops) at position
//   n - 1 - (m / 2 * 7919) mod n (slot 0: the last one); odd slots hold none, so both
//   results occur. Float zeros alternate +0.0 / -0.0.
// Tolerances: float sum and prod use compare.h's toleranceFor(output dtype, n) (rtol
// 1e-12 / 1e-5 / 2e-3 / 1.6e-2 for float64 / float32 / float16 / bfloat16 outputs, atol
// 4 * max(rtol, rtol(accumulator) * sqrt(n))). Everything else -- min, max, and, or and
// every integer or bool result -- must be bitwise equal to the reference (NaN = NaN).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "driver/gpu_run.h"
#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/builder.h"
#include "interp/reference.h"
#include "runtime/cuda_driver.h"
#include "test_stream.h"
#include "runtime/executor.h"
#include "runtime/kernel_cache.h"
#include "support/error.h"
#include "../sweep_cases.h"

namespace polyred {
namespace {

using cuda::check;
using cuda::driver;

// ---- The sweep's cases: tests/sweep_cases.h --------------------------------------------

using namespace sweep;

struct Pair {
  SweepOp op;
  DType dtype;
};

// ---- GPU-only cases --------------------------------------------------------------------

constexpr int64_t kLargeExtent = (int64_t{1} << 20) + 7;

bool largeInEveryForm(DType t) {
  return t == DType::Int8 || t == DType::Int64 || t == DType::BFloat16 || t == DType::Float32;
}

std::vector<SweepCase> gpuCasesFor(SweepOp op, DType t) {
  std::vector<SweepCase> cases = casesFor(op, t);
  for (CanonicalForm form : kForms)
    if (form == CanonicalForm::AllReduce || largeInEveryForm(t)) cases.push_back(makeCase(op, t, form, kLargeExtent));
  return cases;
}

std::vector<Pair> allPairs() {
  std::vector<Pair> pairs;
  for (SweepOp op : kSweepOps)
    for (DType t : kAllDTypes) pairs.push_back({op, t});
  return pairs;
}

std::string pairLabel(const Pair& p) { return sweepOpName(p.op) + "_" + std::string(dtypeName(p.dtype)); }

// ---- Inputs ------------------------------------------------------------------------------

uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A float in (-1, 1) of magnitude at least 2^-16, which no float dtype rounds to 0.
double symmetricFloat(uint64_t r) {
  return (static_cast<double>(static_cast<int64_t>(r % 65536) - 32768) + 0.5) / 32768.0;
}

int64_t flatIndex(const SweepCase& c, int64_t m, int64_t j) {
  return c.form == CanonicalForm::YReduce ? j * c.kept + m : m * c.reduced + j;
}

// Where kept slot m (even m only) holds its decisive element.
int64_t decisivePosition(const SweepCase& c, int64_t m) { return c.reduced - 1 - (m / 2 * 7919) % c.reduced; }
bool hasDecisive(int64_t m) { return m % 2 == 0; }

bool isLogicalCase(const SweepCase& c) {
  return c.op == SweepOp::And || c.op == SweepOp::Or || c.dtype == DType::Bool;
}
// On logical inputs: and, prod and min are false as soon as one element is.
bool isAllLike(SweepOp op) { return op == SweepOp::And || op == SweepOp::Prod || op == SweepOp::Min; }

Scalar nonzeroValue(DType t, uint64_t r) {
  if (t == DType::Bool) return Scalar::ofBool(true);
  if (isFloat(t)) return Scalar::ofFloat(DType::Float64, symmetricFloat(r));
  int64_t v = wrapToIntType(static_cast<int64_t>(r), t);
  return Scalar::ofInt(DType::Int64, v == 0 ? 1 : v);
}

Scalar zeroValue(DType t, int64_t j) {
  if (isFloat(t)) return Scalar::ofFloat(DType::Float64, j % 2 ? -0.0 : 0.0);
  return Scalar::ofInt(DType::Int64, 0);
}

// Element (kept slot m, reduced position j) of a sweep input; r is its random draw.
Scalar sweepValue(const SweepCase& c, int64_t m, int64_t j, uint64_t r) {
  if (isLogicalCase(c)) {
    bool nonzero = isAllLike(c.op) != (hasDecisive(m) && j == decisivePosition(c, m));
    return nonzero ? nonzeroValue(c.dtype, r) : zeroValue(c.dtype, j);
  }
  if (c.op == SweepOp::Prod) {
    if (!isFloat(c.dtype)) return Scalar::ofInt(DType::Int64, 2 * static_cast<int64_t>(r % 8) - 7);
    double spread = std::min(0.5, 2.0 / std::sqrt(static_cast<double>(c.reduced)));
    return Scalar::ofFloat(DType::Float64, 1.0 + spread * symmetricFloat(r));
  }
  if (isFloat(c.dtype)) return Scalar::ofFloat(DType::Float64, symmetricFloat(r));
  return Scalar::ofInt(DType::Int64, static_cast<int64_t>(r));  // wrapped to the dtype by set()
}

HostTensor sweepInput(const SweepCase& c, uint64_t seed) {
  HostTensor h = HostTensor::zeros(c.dtype, inputShape(c));
  for (int64_t m = 0; m < c.kept; ++m)
    for (int64_t j = 0; j < c.reduced; ++j) {
      int64_t index = flatIndex(c, m, j);
      h.set(index, sweepValue(c, m, j, splitmix(seed * 0x100000001b3ull + static_cast<uint64_t>(index))));
    }
  return h;
}

// The sweep's float input with a NaN as the decisive element of every even kept slot.
HostTensor nanMarkedInput(const SweepCase& c, uint64_t seed) {
  HostTensor h = sweepInput(c, seed);
  for (int64_t m = 0; m < c.kept; ++m)
    if (hasDecisive(m)) h.set(flatIndex(c, m, decisivePosition(c, m)), Scalar::ofFloat(DType::Float64, NAN));
  return h;
}

// Float sums and products round differently in every order; the rest is exact.
bool isExact(const SweepCase& c) {
  return !(isFloat(c.dtype) && (c.op == SweepOp::Sum || c.op == SweepOp::Prod));
}

// ---- Device helpers ------------------------------------------------------------------------

const DeviceInfo& device() {
  static const DeviceInfo info = currentDevice();
  return info;
}

CompileOptions gpuOptions(bool deterministic) {
  static const Target target = currentTarget();
  CompileOptions o;
  o.target = target;
  o.deterministic = deterministic;
  return o;
}

using testing_gpu::Stream;

size_t bytesOf(const Tensor& t) { return static_cast<size_t>(numElements(t.shape) * dtypeBytes(t.dtype)); }

// A compiled graph loaded on the device, with a device buffer per input and per output
// (the sweep's graphs write nothing in place).
class DeviceGraph {
 public:
  explicit DeviceGraph(const CompiledGraph& c)
      : graph_(c.graph), program_(CompiledProgram::load(c.program, device())) {
    for (TensorId t : graph_.inputs) inputs_.emplace_back(bytesOf(graph_.tensor(t)));
    for (const Output& o : graph_.outputs) outputs_.emplace_back(bytesOf(graph_.tensor(o.tensor)));
    for (const DeviceBuffer& b : inputs_) inputPointers_.push_back(b.data());
    for (const DeviceBuffer& b : outputs_) outputPointers_.push_back(b.data());
  }

  const Graph& graph() const { return graph_; }
  int kernelCount() const { return program_.kernelCount(); }

  void upload(const std::vector<HostTensor>& inputs) {
    for (size_t i = 0; i < inputs.size(); ++i) inputs_[i].upload(inputs[i].data(), static_cast<size_t>(inputs[i].byteSize()));
  }

  // Overwrites every output element with a value that differs from `expected`'s, so an
  // element that a launch fails to write cannot match.
  void poison(const std::vector<HostTensor>& expected) {
    for (size_t o = 0; o < expected.size(); ++o) {
      std::vector<uint8_t> bytes = expected[o].bytes;
      for (uint8_t& b : bytes) b = expected[o].dtype == DType::Bool ? b ^ 1 : ~b;
      outputs_[o].upload(bytes.data(), bytes.size());
    }
  }

  void launch(CUstream stream) { program_.launch(inputPointers_, outputPointers_, stream); }

  // The outputs; synchronize the launch's stream first.
  std::vector<HostTensor> download() const {
    std::vector<HostTensor> got;
    for (size_t o = 0; o < graph_.outputs.size(); ++o) {
      const Tensor& t = graph_.tensor(graph_.outputs[o].tensor);
      got.push_back(HostTensor::zeros(t.dtype, t.shape));
      outputs_[o].download(got.back().data(), static_cast<size_t>(got.back().byteSize()));
    }
    return got;
  }

 private:
  Graph graph_;
  CompiledProgram program_;
  std::vector<DeviceBuffer> inputs_, outputs_;
  std::vector<void*> inputPointers_, outputPointers_;
};

// One launch of `enqueue` captured on `stream` into an instantiated CUDA graph.
class CapturedGraph {
 public:
  template <class Enqueue>
  CapturedGraph(const Stream& stream, Enqueue enqueue) {
    const cuda::Driver& api = driver();
    check(api.cuStreamBeginCapture(stream.get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
    try {
      enqueue(stream.get());
    } catch (...) {
      api.cuStreamEndCapture(stream.get(), &graph_);
      if (graph_) api.cuGraphDestroy(graph_);
      throw;
    }
    check(api.cuStreamEndCapture(stream.get(), &graph_), "cuStreamEndCapture");
    check(api.cuGraphInstantiate(&exec_, graph_, 0), "cuGraphInstantiate");
  }
  ~CapturedGraph() {
    if (exec_) driver().cuGraphExecDestroy(exec_);
    if (graph_) driver().cuGraphDestroy(graph_);
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  void replay(const Stream& stream) const { check(driver().cuGraphLaunch(exec_, stream.get()), "cuGraphLaunch"); }

 private:
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

// ---- Checking ----------------------------------------------------------------------------

// "" when `got` matches `expected`: within compare.h's tolerances, and bitwise (NaN
// matching NaN) when `exact`; otherwise what differs.
std::string mismatchOf(const Graph& g, const std::vector<HostTensor>& got, const std::vector<HostTensor>& expected,
                       bool exact) {
  CpuCheckReport r = compareOutputs(g, got, {}, expected);
  if (!r.ok) return r.message;
  for (size_t o = 0; exact && o < got.size(); ++o)
    for (int64_t e = 0; e < got[o].size(); ++e)
      if (!got[o].get(e).identical(expected[o].get(e)))
        return "output " + std::to_string(o) + " element " + std::to_string(e) + ": got " + got[o].get(e).toString() +
               ", expected exactly " + expected[o].get(e).toString();
  return "";
}

// Launches `d` `launches` times on `stream`, poisoning its outputs before each launch;
// "" when every launch matched `expected`, otherwise the first failure.
std::string checkLaunches(DeviceGraph& d, const std::vector<HostTensor>& expected, bool exact, int launches,
                          const Stream& stream) {
  for (int l = 1; l <= launches; ++l) {
    d.poison(expected);
    d.launch(stream.get());
    stream.synchronize();
    std::string mismatch = mismatchOf(d.graph(), d.download(), expected, exact);
    if (!mismatch.empty()) return "launch " + std::to_string(l) + ": " + mismatch;
  }
  return "";
}

// A case made ready on the host: compiled (its kernels already in the kernel cache),
// its input made and the reference evaluated; or the reason it could not be.
struct PreparedCase {
  SweepCase sc;
  CompiledGraph compiled;
  std::vector<HostTensor> inputs, expected;
  std::string error;
};

using InputMaker = HostTensor (*)(const SweepCase&, uint64_t seed);

constexpr uint64_t kSeed = 1;

PreparedCase prepare(const SweepCase& sc, const CompileOptions& options, InputMaker makeInput) {
  PreparedCase p{sc, {}, {}, {}, {}};
  try {
    p.compiled = compileGraph(sweepGraph(sc), options);
    for (const KernelSpec& k : p.compiled.program.kernels)
      KernelCache::global().cubin(CompileRequest{k.name, k.source, device().ccMajor, device().ccMinor, {}});
    p.inputs = {makeInput(sc, kSeed)};
    p.expected = evaluateReference(p.compiled.graph, p.inputs);
  } catch (const std::exception& e) {
    p.error = std::string("not compiled or not evaluated: ") + e.what();
  }
  return p;
}

// Prepares the cases on every host core: compileGraph, NVRTC and the reference
// dominate the sweep's run time, the GPU part is milliseconds.
std::vector<PreparedCase> prepareAll(const std::vector<SweepCase>& cases, const CompileOptions& options,
                                     InputMaker makeInput = sweepInput) {
  device();  // query the device once, before the workers read it
  std::vector<PreparedCase> prepared(cases.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < cases.size();) prepared[i] = prepare(cases[i], options, makeInput);
  };
  size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, cases.size());
  std::vector<std::thread> threads;
  for (size_t w = 0; w < workers; ++w) threads.emplace_back(work);
  for (std::thread& t : threads) t.join();
  return prepared;
}

// "" when a prepared case is one kernel whose `launches` launches all match the reference.
std::string runCase(const PreparedCase& p, int launches, const Stream& stream) {
  if (!p.error.empty()) return p.error;
  if (p.compiled.program.kernels.size() != 1)
    return std::to_string(p.compiled.program.kernels.size()) + " kernels: a single reduction must be one launch";
  try {
    DeviceGraph d(p.compiled);
    if (d.kernelCount() != 1) return "the loaded program has " + std::to_string(d.kernelCount()) + " kernels";
    d.upload(p.inputs);
    return checkLaunches(d, p.expected, isExact(p.sc), launches, stream);
  } catch (const std::exception& e) {
    return std::string("GPU error: ") + e.what();
  }
}

// Runs every case, reporting each failure; returns how many passed and prints a summary.
int runAll(const std::vector<PreparedCase>& prepared, int launches, const std::string& group) {
  Stream stream;
  int passed = 0;
  for (const PreparedCase& p : prepared) {
    std::string failure = runCase(p, launches, stream);
    if (failure.empty()) ++passed;
    else ADD_FAILURE() << describe(p.sc) << ": " << failure;
  }
  std::cout << "[sweep] " << group << ": " << passed << "/" << prepared.size() << " cases match\n";
  return passed;
}

// Per-op totals over the SweepGpu pairs, printed once at the end of the run.
class SweepSummary : public testing::Environment {
 public:
  static void record(SweepOp op, int casesPassed, int cases) {
    Tally& t = tallies()[op];
    ++t.pairs;
    t.pairsPassed += casesPassed == cases;
    t.cases += cases;
    t.casesPassed += casesPassed;
  }
  void TearDown() override {
    for (const auto& [op, t] : tallies())
      std::cout << "[sweep] " << sweepOpName(op) << ": " << t.pairsPassed << "/" << t.pairs << " dtypes pass, "
                << t.casesPassed << "/" << t.cases << " cases\n";
  }

 private:
  struct Tally {
    int pairs = 0, pairsPassed = 0, cases = 0, casesPassed = 0;
  };
  static std::map<SweepOp, Tally>& tallies() {
    static std::map<SweepOp, Tally> t;
    return t;
  }
};
testing::Environment* const kSweepSummary = testing::AddGlobalTestEnvironment(new SweepSummary);

constexpr int kSweepLaunches = 2;    // the second shows the workspace was restored
constexpr int kRepeatLaunches = 20;  // multi-block repeatability
constexpr int kReplays = 5;          // CUDA graph replays

// ---- The sweep ---------------------------------------------------------------------------

class SweepGpu : public testing::TestWithParam<Pair> {};

TEST_P(SweepGpu, EveryFormAndSizeMatchesTheReference) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  const Pair pair = GetParam();
  std::vector<SweepCase> cases = gpuCasesFor(pair.op, pair.dtype);
  int passed = runAll(prepareAll(cases, gpuOptions(false)), kSweepLaunches, pairLabel(pair));
  SweepSummary::record(pair.op, passed, static_cast<int>(cases.size()));
}

INSTANTIATE_TEST_SUITE_P(AllPairs, SweepGpu, testing::ValuesIn(allPairs()),
                         [](const testing::TestParamInfo<Pair>& info) { return pairLabel(info.param); });

// ---- NaN propagation -----------------------------------------------------------------------

TEST(SweepGpuNaN, MaxAndMinPropagateNaNLikeTorchAmax) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  std::vector<SweepCase> cases;
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64})
    for (SweepOp op : {SweepOp::Max, SweepOp::Min}) {
      for (CanonicalForm form : kForms)
        for (int64_t n : {int64_t{1}, int64_t{33}, int64_t{4097}}) cases.push_back(makeCase(op, t, form, n));
      cases.push_back(makeCase(op, t, CanonicalForm::AllReduce, kLargeExtent));
    }
  for (bool deterministic : {false, true}) {
    std::vector<PreparedCase> prepared = prepareAll(cases, gpuOptions(deterministic), nanMarkedInput);
    // Matching the reference (NaN = NaN) is not enough if the reference were wrong too:
    // the slots with a NaN must hold NaN and only those.
    for (const PreparedCase& p : prepared) {
      if (!p.error.empty()) continue;  // runAll reports it
      SCOPED_TRACE(describe(p.sc) + (deterministic ? ", deterministic" : ", atomic"));
      for (int64_t m = 0; m < p.sc.kept; ++m) EXPECT_EQ(std::isnan(p.expected[0].get(m).f), hasDecisive(m)) << m;
    }
    int passed = runAll(prepared, kSweepLaunches, std::string("NaN propagation, ") + (deterministic ? "deterministic" : "atomic"));
    EXPECT_EQ(passed, static_cast<int>(prepared.size()));
  }
}

// ---- Multi-block repeatability ----------------------------------------------------------------

// Reductions long enough to be split over blocks in every form.
std::vector<SweepCase> multiBlockCases() {
  return {{SweepOp::Sum, DType::Float32, CanonicalForm::AllReduce, 1, int64_t{1} << 22},
          {SweepOp::Sum, DType::Float16, CanonicalForm::XReduce, kXKept, kLargeExtent},
          {SweepOp::Sum, DType::Float64, CanonicalForm::YReduce, kYKept, kLargeExtent},
          {SweepOp::Prod, DType::BFloat16, CanonicalForm::AllReduce, 1, kLargeExtent},
          {SweepOp::Min, DType::Int64, CanonicalForm::XReduce, kXKept, kLargeExtent},
          {SweepOp::Or, DType::UInt8, CanonicalForm::YReduce, kYKept, kLargeExtent}};
}

// Asserts that the case's single kernel splits the reduction over blocks.
void expectMultiBlock(const PreparedCase& p) {
  ASSERT_TRUE(p.error.empty()) << p.error;
  ASSERT_EQ(p.compiled.program.kernels.size(), 1u);
  EXPECT_GT(p.compiled.program.kernels[0].launch.grid[0], 1u) << p.compiled.kernels[0].binding.toString();
}

TEST(SweepGpuMultiBlock, DeterministicModeIsBitwiseRepeatable) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  Stream stream;
  for (const PreparedCase& p : prepareAll(multiBlockCases(), gpuOptions(true))) {
    SCOPED_TRACE(describe(p.sc) + ", deterministic");
    expectMultiBlock(p);
    if (HasFatalFailure()) continue;
    DeviceGraph d(p.compiled);
    d.upload(p.inputs);
    std::vector<HostTensor> first;
    for (int l = 1; l <= kRepeatLaunches; ++l) {
      d.poison(p.expected);
      d.launch(stream.get());
      stream.synchronize();
      std::vector<HostTensor> got = d.download();
      if (l == 1) {
        EXPECT_EQ(mismatchOf(d.graph(), got, p.expected, isExact(p.sc)), "");
        first = std::move(got);
        continue;
      }
      for (size_t o = 0; o < got.size(); ++o) EXPECT_EQ(got[o].bytes, first[o].bytes) << "launch " << l << " vs launch 1";
    }
  }
}

TEST(SweepGpuMultiBlock, AtomicModeRestoresItsWorkspaceOverRepeatedLaunches) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  Stream stream;
  for (const PreparedCase& p : prepareAll(multiBlockCases(), gpuOptions(false))) {
    SCOPED_TRACE(describe(p.sc) + ", atomic");
    expectMultiBlock(p);
    if (HasFatalFailure()) continue;
    EXPECT_EQ(runCase(p, kRepeatLaunches, stream), "");
  }
}

// ---- CUDA graph capture -------------------------------------------------------------------------

TEST(SweepGpuCapture, ReplaysOfACapturedLaunchMatchTheReferenceOnNewInputs) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  const std::vector<SweepCase> cases = {multiBlockCases()[0], multiBlockCases()[4],
                                        makeCase(SweepOp::And, DType::Float32, CanonicalForm::YReduce, 33)};
  Stream stream;
  for (bool deterministic : {false, true})
    for (const PreparedCase& p : prepareAll(cases, gpuOptions(deterministic))) {
      SCOPED_TRACE(describe(p.sc) + (deterministic ? ", deterministic" : ", atomic"));
      ASSERT_TRUE(p.error.empty()) << p.error;
      DeviceGraph d(p.compiled);
      d.upload(p.inputs);
      // The first launch on a stream allocates the workspace; it cannot be captured.
      ASSERT_EQ(checkLaunches(d, p.expected, isExact(p.sc), 1, stream), "");
      CapturedGraph graph(stream, [&](CUstream s) { d.launch(s); });
      for (int r = 1; r <= kReplays; ++r) {
        std::vector<HostTensor> inputs = {sweepInput(p.sc, kSeed + r)};
        std::vector<HostTensor> expected = evaluateReference(d.graph(), inputs);
        d.upload(inputs);
        d.poison(expected);
        graph.replay(stream);
        stream.synchronize();
        EXPECT_EQ(mismatchOf(d.graph(), d.download(), expected, isExact(p.sc)), "") << "replay " << r;
      }
    }
}

// ---- More than 2^31 elements ----------------------------------------------------------------------

// int8 over 2^31 + 11 elements, far too many for the reference interpreter (it would
// widen them to 16 GiB of int64), so the expected values are computed here: elements
// uniform in [-64, 63], except 127 at the very end (the max) and -128 just past index
// 2^31 (the min); the sum wraps to int8.
TEST(SweepGpuLargeIndex, Int8SumMaxMinOverMoreThanTwoToTheThirtyOneElements) {
  std::string why;
  if (!gpuAvailable(&why)) GTEST_SKIP() << why;
  constexpr int64_t kElements = (int64_t{1} << 31) + 11;
  constexpr int64_t kMinAt = (int64_t{1} << 31) + 3;
  if (device().totalMemory < (int64_t{6} << 30)) GTEST_SKIP() << "needs 6 GiB of device memory";

  std::vector<int8_t> x(static_cast<size_t>(kElements));
  int64_t sum = 0;
  uint64_t r = 0;
  for (int64_t i = 0; i < kElements; ++i, r >>= 8) {
    if (i % 8 == 0) r = splitmix(static_cast<uint64_t>(i));
    x[i] = static_cast<int8_t>(static_cast<int>(r & 0x7f) - 64);
    sum += x[i];
  }
  sum += 127 - x[kElements - 1] + (-128 - x[kMinAt]);
  x[kElements - 1] = 127;
  x[kMinAt] = -128;
  const std::map<SweepOp, int64_t> expected = {
      {SweepOp::Sum, wrapToIntType(sum, DType::Int8)}, {SweepOp::Max, 127}, {SweepOp::Min, -128}};

  DeviceBuffer input(x.size());
  input.upload(x.data(), x.size());
  Stream stream;
  for (bool deterministic : {false, true})
    for (const auto& [op, want] : expected) {
      SweepCase sc = makeCase(op, DType::Int8, CanonicalForm::AllReduce, kElements);
      SCOPED_TRACE(describe(sc) + (deterministic ? ", deterministic" : ", atomic"));
      CompiledGraph c = compileGraph(sweepGraph(sc), gpuOptions(deterministic));
      ASSERT_EQ(c.program.kernels.size(), 1u);
      EXPECT_TRUE(c.kernels[0].index64);
      EXPECT_NE(c.program.kernels[0].source.find("const long long bx = blockIdx.x"), std::string::npos);
      CompiledProgram program = CompiledProgram::load(c.program, device());
      DeviceBuffer output(1);
      for (int l = 1; l <= kSweepLaunches; ++l) {
        const int8_t poison = static_cast<int8_t>(~want);
        output.upload(&poison, 1);
        program.launch({input.data()}, {output.data()}, stream.get());
        stream.synchronize();
        int8_t got = 0;
        output.download(&got, 1);
        EXPECT_EQ(static_cast<int64_t>(got), want) << "launch " << l;
      }
    }
}

}  // namespace
}  // namespace polyred
