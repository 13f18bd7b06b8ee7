#!/usr/bin/env bash
# compute-sanitizer over a representative subset of polyred's GPU work (issue 4), on a
# machine with a GPU. Tools:
#   memcheck   out-of-bounds / misaligned device accesses, bad API arguments
#   racecheck  shared-memory data races (the block reductions' staging)
#   synccheck  barriers and warp shuffles under divergence or with wrong masks
# each run over
#   - a few (op, dtype) pairs of the reduction sweep (tests/gpu/sweep_gpu_test.cc):
#     every canonical form, reduced extents 1 .. 2^20 + 7, single- and multi-block, one
#     pair per accumulator type and cross-block path (float atomicAdd, int64
#     compare-and-swap, float compare-and-swap, int atomicAnd, bool atomicOr); the
#     multi-block repeat tests (atomic and deterministic) and CUDA-graph capture;
#   - `polyred run --no-time` on the Table 2 sub-graphs sg01, sg05, sg07 and sg09.
# Exits 0 only when every run passed and no tool reported an error or hazard; prints
# one line per run and a summary. Logs go to $SANITIZE_LOG_DIR.
#
# Environment (default in brackets; relative paths are from the repository root):
#   POLYRED_GPU_TESTS  the GPU test binary  [build/tests/polyred_gpu_tests]
#   POLYRED_BIN        the polyred CLI      [build/tools/polyred]
#   COMPUTE_SANITIZER  the sanitizer        [/usr/local/cuda/bin/compute-sanitizer, else from PATH]
#   SANITIZE_FILTER    gtest filter for the GPU tests  [the subset above]
#   SANITIZE_TOOLS     tools to run         [memcheck racecheck synccheck]
#   SANITIZE_LOG_DIR   where logs go        [a new directory under /tmp]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

tests=${POLYRED_GPU_TESTS:-build/tests/polyred_gpu_tests}
polyred=${POLYRED_BIN:-build/tools/polyred}
sanitizer=${COMPUTE_SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
[[ -x $sanitizer ]] || sanitizer=$(command -v compute-sanitizer || true)
pairs="sum_float32 prod_int64 max_float16 and_int8 or_bool"
default_filter=""
for pair in $pairs; do default_filter+="AllPairs/SweepGpu.*/$pair:"; done
default_filter+="SweepGpuMultiBlock.*:SweepGpuCapture.*"
filter=${SANITIZE_FILTER:-$default_filter}
tools=${SANITIZE_TOOLS:-memcheck racecheck synccheck}
for need in "$tests" "$polyred"; do
  [[ -x $need ]] || { echo "gpu_sanitize: $need is not an executable (set POLYRED_GPU_TESTS / POLYRED_BIN)" >&2; exit 2; }
done
[[ -n $sanitizer && -x $sanitizer ]] || { echo "gpu_sanitize: compute-sanitizer not found (set COMPUTE_SANITIZER)" >&2; exit 2; }
logs=${SANITIZE_LOG_DIR:-$(mktemp -d /tmp/polyred-sanitize.XXXXXX)}
mkdir -p "$logs"

failures=0
# run TOOL NAME COMMAND...: one sanitized run; counts it as failed when the command
# fails, or the tool reports errors (exit code 86) or a nonzero error/hazard summary.
run() {
  local tool=$1 name=$2
  shift 2
  local log="$logs/$tool-$name.log"
  "$sanitizer" --tool "$tool" --error-exitcode 86 "$@" >"$log" 2>&1
  local rc=$?
  local summary
  summary=$(grep -E '(ERROR|RACECHECK|SYNCCHECK) SUMMARY' "$log" | tail -n 1)
  if [[ $rc -ne 0 ]] || grep -qE 'SUMMARY: [1-9]' "$log"; then
    failures=$((failures + 1))
    echo "FAIL  $tool $name (exit $rc) ${summary#=========}  -> $log"
  else
    echo "ok    $tool $name ${summary#=========}"
  fi
}

echo "compute-sanitizer: $sanitizer; logs in $logs"
for tool in $tools; do
  run "$tool" sweep "$tests" --gtest_filter="$filter"
  run "$tool" table2 "$polyred" run examples/table2/sg01_*.json examples/table2/sg05_*.json \
    examples/table2/sg07_*.json examples/table2/sg09_*.json --no-time
done

runs=$(($(wc -w <<<"$tools") * 2))
echo "gpu_sanitize: $((runs - failures))/$runs sanitized runs clean"
[[ $failures -eq 0 ]]
