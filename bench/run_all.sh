#!/usr/bin/env bash
# The benchmark in one command, on the GPU machine, from the repository root:
#
#   bash bench/run_all.sh OUTDIR
#
# Measures polyred and its peers (PyTorch eager, torch.compile, CUB, cuDNN) in the same
# run, on the same files, with the method of docs/method.md, and writes into
# OUTDIR: tables.md, results.json, speedup.png, bandwidth.png, summary.txt and
# raw.tar.gz (every raw result and log). See docs/benchmarks.md.
#
# Stages, in order (each one's wall time is printed; a failing stage is reported and
# the run goes on, so the report shows whatever was measured):
#   workloads  bench/make_workloads.py: the single-op composite files and cases.txt
#   manifest   bench/run_polyred.py manifest: every file, in polyred's scope or not
#   build      nvcc builds bench/peers_cub.cu and bench/stream_meter.cu (in the background)
#   ctimes     polyred compile times (cold: with NVRTC; cached: without)
#   polyred    polyred run on every in-scope file (GPU)
#   meter      bench/stream_meter.cu: the practical limit of every case polyred ran
#   cub        CUB and cuDNN on the single-op cases (GPU)
#   warm       torch.compile of every file in WARM_JOBS processes (fills Inductor's cache)
#   torch      PyTorch eager and torch.compile timings, plus the read ceiling and launch floor
#   report     bench/report.py: tables, plots, gaps to the targets, summary (printed last)
#
# Environment (defaults in brackets):
#   POLYRED_BIN [build/tools/polyred]   CORPUS_DIR [tests/data/akg]
#   WORKLOADS_DIR [bench/workloads]     the single-op files and cases.txt (written by the
#                                       workloads stage, read by manifest and cub)
#   TABLE2_DIR [examples/table2]        the Table 2 files (manifest); an empty folder and a
#                                       WORKLOADS_DIR with an empty cases.txt measure the corpus only
#   WORK_DIR [/tmp/polyred-bench]       raw results, logs and compiler caches
#   STAGES [all of the above]           a comma list, to rerun part of a run in WORK_DIR
#   TOTAL_BUDGET_S [480]                the torch stages get what is left of it
#   HARD_LIMIT_S [570]                  every stage is stopped so that the report is written
#                                       before this (the device tool stops a command at 600 s)
#   WARM_JOBS [12]  WARM_BUDGET_S [150] TORCH_COMPILE_GROUPS [table2,single,corpus]
#   ITERATIONS [50]                     timed calls per case (METHOD.md: at least 50)
#   POLYRED_JOBS [1]                    polyred processes at once (see bench/run_polyred.py)
#   POLYRED_RUN_FLAGS []                extra flags for every `polyred run`
#
# Exit status: 1 if any result (polyred's or a peer's) was wrong; else 3 if a stage failed
# (no GPU, a crash, a timeout: see its log); else 0. 2 on bad usage.
set -u -o pipefail

OUTDIR=${1:-}
if [ -z "$OUTDIR" ]; then
  echo "usage: bash bench/run_all.sh OUTDIR" >&2
  exit 2
fi
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)

export POLYRED_BIN=$(realpath -m "${POLYRED_BIN:-build/tools/polyred}")
CORPUS_DIR=$(realpath -m "${CORPUS_DIR:-tests/data/akg}")
WORKLOADS_DIR=$(realpath -m "${WORKLOADS_DIR:-bench/workloads}")
TABLE2_DIR=$(realpath -m "${TABLE2_DIR:-examples/table2}")
WORK=$(realpath -m "${WORK_DIR:-/tmp/polyred-bench}")
STAGES=${STAGES:-workloads,manifest,build,ctimes,polyred,meter,cub,warm,torch,report}
TOTAL_BUDGET_S=${TOTAL_BUDGET_S:-480}
HARD_LIMIT_S=${HARD_LIMIT_S:-570}
WARM_JOBS=${WARM_JOBS:-12}
WARM_BUDGET_S=${WARM_BUDGET_S:-150}
TORCH_COMPILE_GROUPS=${TORCH_COMPILE_GROUPS:-table2,single,corpus}
ITERATIONS=${ITERATIONS:-50}
export PYTHONUNBUFFERED=1
export PEERS_CACHE_DIR=$WORK/cache
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export POLYRED_CACHE_DIR=$WORK/cache/polyred
export POLYRED_RUN_FLAGS="--iterations=$ITERATIONS ${POLYRED_RUN_FLAGS:-}"
LOGS=$WORK/logs
mkdir -p "$LOGS" "$PEERS_CACHE_DIR"

START=$(date +%s)
WRONG=0
FAILED=""
STAGE_LINES=()

want() { [[ ",$STAGES," == *",$1,"* ]]; }
elapsed() { echo $(( $(date +%s) - START )); }
# time_left RESERVE: seconds until HARD_LIMIT_S less RESERVE (at least 10), a stage's timeout.
time_left() { local t=$(( HARD_LIMIT_S - $(elapsed) - $1 )); echo $(( t < 10 ? 10 : t )); }
min() { echo $(( $1 < $2 ? $1 : $2 )); }

# stage NAME COMMAND...: runs the command with its output in LOGS/NAME.log (and on the
# terminal), records its wall time and exit status; exit 10 means wrong results.
stage() {
  local name=$1; shift
  want "$name" || return 0
  local t0=$(date +%s) rc
  echo "=== $name (t=$(elapsed) s)"
  "$@" 2>&1 | tee "$LOGS/$name.log"
  rc=${PIPESTATUS[0]}
  STAGE_LINES+=("$(printf '%-9s %5d s  exit %d' "$name" $(( $(date +%s) - t0 )) "$rc")")
  if [ "$rc" = 10 ]; then WRONG=1; elif [ "$rc" != 0 ]; then FAILED="$FAILED $name"; fi
  if [ "$rc" != 0 ]; then echo "=== $name: exit $rc (see $LOGS/$name.log)"; fi
  return 0
}

environment() {
  local gpu driver cuda
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
  cuda=$(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')
  python3 - "$WORK/env.json" "$gpu" "$driver" "$cuda" <<'EOF'
import json, sys, time
path, gpu, driver, cuda = sys.argv[1:5]
json.dump(dict(gpu=gpu or None, driver=driver or None, cuda=cuda or None,
               date=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())), open(path, "w"), indent=1)
EOF
  echo "device: ${gpu:-none}, driver ${driver:-?}, CUDA ${cuda:-?}; polyred: $POLYRED_BIN; corpus: $CORPUS_DIR"
}

build_cub() {
  nvcc -O3 -arch=sm_90 -std=c++17 bench/stream_meter.cu -o "$WORK/stream_meter" || echo "build: stream_meter failed"
  local common=(-O3 -arch=sm_90 -std=c++17 bench/peers_cub.cu -o "$WORK/peers_cub")
  nvcc "${common[@]}" -Xcompiler -Wno-deprecated-declarations -diag-suppress 1444 \
       -L/usr/local/cuda/lib64 -lcudnn -Xlinker -rpath=/usr/local/cuda/lib64 && return 0
  echo "build: with cuDNN failed; building CUB only"
  nvcc "${common[@]}" -DPEERS_NO_CUDNN
}

run_cub() {
  cat "$LOGS/build.log" 2>/dev/null
  if [ ! -x "$WORK/peers_cub" ]; then echo "cub: peers_cub was not built"; return 3; fi
  timeout "$(min 300 "$(time_left 60)")" "$WORK/peers_cub" "$WORKLOADS_DIR/cases.txt" "$WORK/cub.json" \
    --iterations="$ITERATIONS"
}

# The practical limit of every case polyred ran: its bytes read and written, streamed.
run_meter() {
  if [ ! -x "$WORK/stream_meter" ]; then echo "meter: stream_meter was not built"; return 3; fi
  python3 - "$WORK/polyred.json" "$WORK/meter_cases.txt" <<'EOF'
import json, sys
results = json.load(open(sys.argv[1])).get("results", [])
with open(sys.argv[2], "w") as out:
    for r in results:
        if r.get("bytes_read") is not None:
            out.write(f"{r['file']} {r['bytes_read']} {r['bytes_written']}\n")
EOF
  timeout "$(min 200 "$(time_left 60)")" "$WORK/stream_meter" "$WORK/meter_cases.txt" "$WORK/meter.jsonl" \
    --iterations="$ITERATIONS"
}

left_for_torch() {  # seconds of TOTAL_BUDGET_S left, less a reserve for the report
  local left=$(( TOTAL_BUDGET_S - $(elapsed) - 25 ))
  echo $(( left < 60 ? 60 : left ))
}

run_warm() {
  local budget=$(left_for_torch)
  budget=$(( budget / 2 < WARM_BUDGET_S ? budget / 2 : WARM_BUDGET_S ))
  echo "warm: $WARM_JOBS workers, budget $budget s"
  timeout "$(min $(( budget + 60 )) "$(time_left 60)")" python3 bench/peers_torch.py --manifest "$WORK/manifest.json" --out "$WORK/torch_warm.jsonl" \
    --compile-groups "$TORCH_COMPILE_GROUPS" --warm "$WARM_JOBS" --budget-s "$budget"
}

run_torch() {
  local budget=$(left_for_torch)
  echo "torch: budget $budget s"
  rm -f "$WORK/torch.jsonl"
  # polyred once more on the peers' own tensors where its Python package loads
  local same_tensors=()
  if [ -n "${POLYRED_LIBRARY:-}" ] && PYTHONPATH="$PWD/python" python3 -c "import polyred" 2>/dev/null; then
    same_tensors=(--polyred-python)
  fi
  PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" \
  timeout "$(min $(( budget + 120 )) "$(time_left 25)")" python3 bench/peers_torch.py --manifest "$WORK/manifest.json" --out "$WORK/torch.jsonl" \
    --compile-groups "$TORCH_COMPILE_GROUPS" --iterations "$ITERATIONS" --budget-s "$budget" "${same_tensors[@]}"
  local rc=$?
  cat "$WORK/torch_warm.jsonl" >> "$WORK/torch.jsonl" 2>/dev/null
  return $rc
}

run_report() {
  local require=()
  # Plots are required where a GPU is (the GPU machine has matplotlib), optional elsewhere.
  if nvidia-smi -L >/dev/null 2>&1; then require=(--require-plots); fi
  tar czf "$OUTDIR/raw.tar.gz" -C "$WORK" --exclude=cache --exclude=peers_cub --exclude=stream_meter . 2>/dev/null
  python3 bench/report.py --work "$WORK" --out "$OUTDIR" "${require[@]}"
}

echo "=== polyred benchmark: OUTDIR=$OUTDIR WORK=$WORK STAGES=$STAGES"
if [ ! -f "$POLYRED_BIN" ]; then echo "=== NO POLYRED BINARY at $POLYRED_BIN (set POLYRED_BIN)"; fi
if [ -f "$POLYRED_BIN" ] && [ ! -x "$POLYRED_BIN" ]; then chmod +x "$POLYRED_BIN"; fi
environment | tee "$LOGS/env.log"
stage workloads python3 bench/make_workloads.py "$WORKLOADS_DIR"
stage manifest python3 bench/run_polyred.py manifest --out "$WORK/manifest.json" --corpus "$CORPUS_DIR" \
  --workloads "$WORKLOADS_DIR" --table2 "$TABLE2_DIR"
if want build; then
  echo "=== build (in the background)"
  rm -f "$WORK/peers_cub" "$WORK/stream_meter"
  ( t0=$(date +%s); build_cub; rc=$?; echo "[build: exit $rc after $(( $(date +%s) - t0 )) s]"; exit $rc ) \
    > "$LOGS/build.log" 2>&1 &
  BUILD_PID=$!
fi
stage ctimes python3 bench/run_polyred.py compile-times --manifest "$WORK/manifest.json" --out "$WORK/compile_times.json"
stage polyred timeout "$(time_left 120)" python3 bench/run_polyred.py run --manifest "$WORK/manifest.json" --out "$WORK/polyred.json" --logs "$LOGS"
if [ -n "${BUILD_PID:-}" ]; then  # the build ran beside the polyred stages
  wait "$BUILD_PID"
  STAGE_LINES+=("$(sed -n 's/^\[build: exit \([0-9]*\) after \([0-9]*\) s\]$/build     \2 s  exit \1 (in the background)/p' \
                 "$LOGS/build.log")")
fi
stage meter run_meter
stage cub run_cub
stage warm run_warm
stage torch run_torch

echo "=== stage times (total $(elapsed) s)"
printf '%s\n' "${STAGE_LINES[@]}" | tee "$WORK/stages.txt"
# The report's gaps and summary come last; they are also kept in OUTDIR/summary.txt.
stage report run_report
cp "$LOGS/report.log" "$OUTDIR/summary.txt" 2>/dev/null
if [ -n "$FAILED" ]; then echo "=== stages that failed:$FAILED (their logs are in raw.tar.gz)"; fi
if [ "$WRONG" = 1 ]; then
  echo "=== WRONG RESULTS: a polyred or peer result failed its check (see above and tables.md)"
  exit 1
fi
[ -z "$FAILED" ] || exit 3
exit 0
