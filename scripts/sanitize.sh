#!/usr/bin/env bash
# The address and undefined-behaviour sanitizers over untrusted input: builds polyred
# and the fuzzing batch with -fsanitize=address,undefined into ./build-asan, then runs
# the CPU check of every public corpus file and a mutation batch of its own seed, and
# the same over the op files (tests/data/ops: every MindSpore op polyred expands).
# Any sanitizer report aborts the run (halt_on_error, -fno-sanitize-recover), so the
# script fails on the first one. CI runs it after the tests (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null

corpus=tests/data/akg
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DPOLYRED_CUDA_ROOT="${POLYRED_CUDA_ROOT:-/usr/local/cuda}" \
      -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
ninja -C build-asan polyred polyred_fuzz_batch

export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
echo "sanitize: CPU check of the corpus under ASan+UBSan"
./build-asan/tools/polyred corpus "$corpus" --max-points=100000 --min-compiled=270 | tail -n 12
echo "sanitize: mutation batch under ASan+UBSan"
./build-asan/fuzz/polyred_fuzz_batch --corpus="$corpus" --seed=7 --cases=1000 --nvrtc-every=0
echo "sanitize: CPU check and mutation batch of the op files under ASan+UBSan"
./build-asan/tools/polyred corpus tests/data/ops --max-points=100000 | tail -n 3
./build-asan/fuzz/polyred_fuzz_batch --corpus=tests/data/ops --seed=8 --cases=300 --nvrtc-every=0
