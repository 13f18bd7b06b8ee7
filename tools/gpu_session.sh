#!/usr/bin/env bash
# One GPU-machine session: every check and measurement that needs the GPU, in one call
# (device time is scarce). Run from the repository root on the GPU machine:
#   bash tools/gpu_session.sh OUTDIR [steps...]
# steps (default: all): table2 deterministic gputests corpus parallel oracle loader python
#   sanitize bench
# optional steps (not in the default list; each fits one device call of its own):
#   parallelpeers  bench/run_all.sh on the corpus's MindSpore "*_parallel*" files only, polyred
#                  against PyTorch eager and torch.compile (issue #12), in under 6 minutes
#   tuplebench     bench/tuple_bench.py: the tuple-reduction cases of issue #13 against torch
#                  eager, torch.compile, CUB (argmax) and the practical limit, in under 8 minutes
#   misaligned     polyred run --misalign=1 (every tensor one element into its allocation: the
#                  element-by-element path of vector kernels) on Table 2 and tests/data/ops
#   randomgraphs   RandomGraphsGpu over seeds past the test's defaults, four processes side by
#                  side (the host's reference is the bottleneck): RANDOM_GRAPHS_FIRST (default
#                  161) on, RANDOM_GRAPHS_PER_PROCESS (default 250) seeds each, in about 6 minutes
# Binaries come from $POLYRED_BIN_DIR (default devbuild/: polyred, polyred_gpu_tests,
# polyred_loader, libpolyred.so, built on the development machine and carried), the corpus from $CORPUS_DIR
# (default tests/data/akg). Each step's log goes to OUTDIR/<step>.log; a summary of
# pass/fail per step is printed last.
set -u
out="${1:?usage: gpu_session.sh OUTDIR [steps...]}"
shift
steps=("$@")
((${#steps[@]})) || steps=(table2 deterministic gputests corpus parallel oracle loader python sanitize bench)
bin="${POLYRED_BIN_DIR:-devbuild}"
corpus="${CORPUS_DIR:-tests/data/akg}"
mkdir -p "$out"
export POLYRED_CACHE_DIR="$out/cache"
declare -A status

run_step() {
  local name=$1
  shift
  echo "=== $name: $*"
  local start=$SECONDS
  if "$@" >"$out/$name.log" 2>&1; then status[$name]="ok"; else status[$name]="FAILED (rc $?)"; fi
  status[$name]+=" in $((SECONDS - start)) s"
  tail -n 25 "$out/$name.log"
}

# parallelpeers: bench/run_all.sh on the "*_parallel*" files of the corpus only. A temporary
# corpus of symlinks (same <network>/<path> keys as the full corpus), no single-op or Table 2
# files (an empty cases.txt and Table 2 folder), only the stages the comparison needs.
parallel_peers() {
  local tmp f rel root n=0
  root=$(realpath "$corpus")
  tmp=$(mktemp -d /tmp/polyred-parallelpeers.XXXXXX)
  mkdir -p "$tmp/corpus" "$tmp/workloads" "$tmp/table2"
  : >"$tmp/workloads/cases.txt"
  while IFS= read -r f; do
    rel=${f#"$root"/}
    mkdir -p "$tmp/corpus/$(dirname "$rel")"
    ln -s "$(realpath "$f")" "$tmp/corpus/$rel"
    n=$((n + 1))
  done < <(find "$root" -name '*_parallel*' \( -name '*.info' -o -name '*.json' \) | sort)
  echo "parallelpeers: $n files under $tmp/corpus"
  env POLYRED_BIN="$bin/polyred" CORPUS_DIR="$tmp/corpus" WORKLOADS_DIR="$tmp/workloads" TABLE2_DIR="$tmp/table2" \
    WORK_DIR="$tmp/work" STAGES=manifest,polyred,warm,torch,report TORCH_COMPILE_GROUPS=corpus \
    TOTAL_BUDGET_S="${PARALLELPEERS_BUDGET_S:-300}" HARD_LIMIT_S="${PARALLELPEERS_HARD_LIMIT_S:-345}" \
    WARM_JOBS="${WARM_JOBS:-12}" bash bench/run_all.sh "$out/parallelpeers"
}

# randomgraphs: four shards of seeds, one process each; fails if any shard fails.
random_graphs() {
  local first=${RANDOM_GRAPHS_FIRST:-161} per=${RANDOM_GRAPHS_PER_PROCESS:-250} k rc=0
  local pids=()
  for k in 0 1 2 3; do
    POLYRED_RANDOM_GPU_SEEDS="$((first + k * per)):$per" "$bin/polyred_gpu_tests" --gtest_filter='RandomGraphsGpu.*' \
      >"$out/randomgraphs.$k.log" 2>&1 &
    pids+=($!)
  done
  for k in 0 1 2 3; do wait "${pids[$k]}" || rc=1; done
  grep -hE "^\[  (PASSED|FAILED) |^\[  FAILED  \]|failing seeds|matched on" "$out"/randomgraphs.?.log
  return $rc
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/device.txt"
for step in "${steps[@]}"; do
  case $step in
    table2) run_step table2 "$bin/polyred" run examples/table2/*.json --json="$out/table2.json" ;;
    deterministic) run_step deterministic "$bin/polyred" run --deterministic examples/table2/*.json --json="$out/table2_det.json" ;;
    gputests) run_step gputests "$bin/polyred_gpu_tests" --gtest_brief=1 ;;
    corpus) run_step corpus "$bin/polyred" corpus "$corpus" --max-points="${CORPUS_MAX_POINTS:-100000}" --max-launches=1 ;;
    sanitize) run_step sanitize env POLYRED_GPU_TESTS="$bin/polyred_gpu_tests" POLYRED_BIN="$bin/polyred" bash tools/gpu_sanitize.sh ;;
    oracle) run_step oracle env POLYRED_BIN="$bin/polyred" python3 bench/torch_oracle.py --device cuda "$corpus" examples/table2 ;;
    parallel) run_step parallel env POLYRED_BIN="$bin/polyred" bash bench/parallel_fusion.sh "$corpus" "$out/parallel" ;;
    loader) run_step loader bash tests/loader_test.sh "$bin/polyred" "$bin/polyred_loader" "$PWD" ;;
    python) run_step python env POLYRED_LIBRARY="$bin/libpolyred.so" PYTHONPATH=python PYTHONDONTWRITEBYTECODE=1 \
      python3 -m pytest -q -p no:cacheprovider -m gpu python/tests ;;
    bench) run_step bench env POLYRED_BIN="$bin/polyred" CORPUS_DIR="$corpus" bash bench/run_all.sh "$out/bench" ;;
    parallelpeers) run_step parallelpeers parallel_peers ;;
    tuplebench) run_step tuplebench env POLYRED_BIN="$bin/polyred" python3 bench/tuple_bench.py "$out/tuplebench" ;;
    misaligned) run_step misaligned "$bin/polyred" run --no-time --misalign=1 examples/table2/*.json tests/data/ops/*.json ;;
    randomgraphs) run_step randomgraphs random_graphs ;;
    *) echo "unknown step $step"; status[$step]="unknown" ;;
  esac
done
echo "=== summary"
for step in "${steps[@]}"; do echo "$step: ${status[$step]}"; done
