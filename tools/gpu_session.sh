#!/usr/bin/env bash
# One GPU-machine session: every check and measurement that needs the GPU, in one call
# (device time is scarce). Run from the repository root on the GPU machine:
#   bash tools/gpu_session.sh OUTDIR [steps...]
# steps (default: all): table2 deterministic gputests corpus parallel oracle loader python
#   sanitize bench
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
    *) echo "unknown step $step"; status[$step]="unknown" ;;
  esac
done
echo "=== summary"
for step in "${steps[@]}"; do echo "$step: ${status[$step]}"; done
