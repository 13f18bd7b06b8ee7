#!/usr/bin/env bash
# Horizontal fusion on the GPU: every composite file under DIR whose name holds
# "parallel" (MindSpore's parallel fusions: independent sub-graphs in one file), run
# fused (one launch) and with --no-horizontal-fusion (its kernels one after another),
# both timed with docs/method.md in the same run. Prints a markdown table of the
# times and the gain; exit 1 if a result is wrong or a run fails.
#   bash bench/parallel_fusion.sh [DIR] [OUTDIR]      (POLYRED_BIN: the CLI)
set -u
bin=${POLYRED_BIN:-build/tools/polyred}
dir=${1:-tests/data/akg}
out=${2:-/tmp/polyred-parallel}
mkdir -p "$out"
mapfile -t files < <(find "$dir" -name '*parallel*' \( -name '*.info' -o -name '*.json' \) | sort)
"$bin" run "${files[@]}" --json="$out/fused.json" >"$out/fused.log" 2>&1
fused=$?
"$bin" run --no-horizontal-fusion "${files[@]}" --json="$out/separate.json" >"$out/separate.log" 2>&1
separate=$?
python3 - "$out" "$dir" <<'PY'
import json, math, os, sys
out, root = sys.argv[1], sys.argv[2]
fused = {r["file"]: r for r in json.load(open(os.path.join(out, "fused.json")))["results"]}
separate = {r["file"]: r for r in json.load(open(os.path.join(out, "separate.json")))["results"]}
print("| file | kernels | fused us | one after another us | gain |")
print("|---|---|---|---|---|")
gains = []
for f in sorted(fused):
    a, b = fused[f], separate.get(f)
    if not b: continue
    ok = a["ok"] and b["ok"]
    gain = b["micros"] / a["micros"] if a["micros"] > 0 else float("nan")
    if b["kernels"] > 1: gains.append(gain)
    print(f"| {os.path.relpath(f, root)} | {b['kernels']} -> {a['kernels']} | {a['micros']:.2f} | {b['micros']:.2f} | "
          f"{gain:.2f}x{'' if ok else ' WRONG'} |")
if gains:
    print(f"\ngeomean gain over files with several kernels: {math.exp(sum(map(math.log, gains)) / len(gains)):.2f}x "
          f"({len(gains)} files); min {min(gains):.2f}x")
PY
[ $fused -eq 0 ] && [ $separate -eq 0 ]
