#!/usr/bin/env bash
# Kernel artifacts end to end: `polyred compile FILE -o DIR --test-data` (no GPU
# needed), then the loader example (examples/loader, no polyred code) launches them and
# compares with the reference outputs -- among them scatters whose outputs are zeroed
# before their launch (init_outputs_first) and in-place outputs staged through
# temporaries (copies_after). Exit 77 (skipped) where no GPU is usable.
#   tests/loader_test.sh POLYRED LOADER SOURCE_DIR
set -eu
polyred=$1 loader=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
arch=()
if ! "$polyred" --version | grep -q '^GPU: none'; then
  # Build for the GPU that will run them (compile otherwise assumes sm_90).
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d '.')
  [[ -n $cc ]] && arch=(--arch="sm_$cc")
fi
for file in examples/table2/sg09_sum_sum.json examples/table2/sg01_cast_chain_sum.json \
  tests/data/akg/deep_fm/level0/Fused_Mul_Sub_ReduceSum_split_Mul_ReduceSum_InplaceAssign_atomic_add_parallel_7426077862892796549.info \
  tests/data/ops/segment_sums_atomic_and_masked.json tests/data/ops/in_place_hazards.json; do
  out="$tmp/$(basename "$file")"
  "$polyred" compile "$src/$file" -o "$out" --test-data "${arch[@]}" >/dev/null
  [[ -s $out/manifest.json && -s $out/test/expected0.bin ]] || { echo "FAIL: no artifacts for $file"; exit 1; }
  set +e
  "$loader" "$out"
  rc=$?
  set -e
  [[ $rc -eq 0 || $rc -eq 77 ]] || { echo "FAIL: the loader on $file exited $rc"; exit 1; }
done
exit $rc
