// libFuzzer target: the reader and the whole compile pipeline, plus a CPU check under
// small budgets, on whatever bytes libFuzzer makes. Seed it with the public corpus:
//
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DPOLYRED_FUZZER=ON \
//         -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined"
//   ninja -C build-fuzz polyred_fuzz_target
//   build-fuzz/fuzz/polyred_fuzz_target -max_len=200000 -timeout=30 CORPUS_COPY/ tests/data/akg/*/
//
// Anything other than success, a mismatch-free check or polyred::Error (exit 2) is a
// finding: libFuzzer reports the crash, the sanitizer report or the abort below.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

#include "driver/cpu_check.h"
#include "driver/pipeline.h"
#include "frontend/composite_reader.h"
#include "fuzz/mutator.h"
#include "support/error.h"

using namespace polyred;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    CompiledGraph c = compileGraph(parseComposite(text, "input.json"), CompileOptions{});
    CpuCheckOptions check;
    check.maxPoints = 1 << 12;
    check.limits.maxMemoryBytes = int64_t{256} << 20;
    check.limits.timeoutSeconds = 5;
    if (!checkOnCpu(c, check).ok) {
      std::cerr << "CPU check mismatch\n";
      std::abort();
    }
  } catch (const Error&) {
    // bad input, out of scope or over budget: the expected answer to most inputs
  }
  return 0;
}

// Mutations that keep most inputs parseable reach far deeper than libFuzzer's byte
// flips alone.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t maxSize, unsigned seed) {
  std::string mutated = fuzz::CompositeMutator(seed).mutate(std::string(reinterpret_cast<char*>(data), size));
  if (mutated.size() > maxSize) mutated.resize(maxSize);
  std::copy(mutated.begin(), mutated.end(), data);
  return mutated.size();
}
