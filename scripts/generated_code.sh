#!/usr/bin/env bash
# Writes what `polyred compile` prints for every composite file (*.json, *.info) under
# the given folders into OUT, one file each (stdout, then stderr and the exit status),
# so that two builds' generated code can be compared with `diff -r`:
#
#   scripts/generated_code.sh build/tools/polyred /tmp/before examples /work/shared/corpus/akg
#   ... change and rebuild ...
#   scripts/generated_code.sh build/tools/polyred /tmp/after examples /work/shared/corpus/akg
#   diff -r /tmp/before /tmp/after && echo "generated code unchanged"
set -euo pipefail
if (($# < 3)); then
  echo "usage: $0 POLYRED OUT DIR..." >&2
  exit 2
fi
polyred=$1 out=$2
shift 2
mkdir -p "$out"
count=0
while IFS= read -r -d '' file; do
  name=$(printf '%s' "$file" | tr '/' '_')
  status=0
  "$polyred" compile "$file" >"$out/$name.out" 2>"$out/$name.err" || status=$?
  echo "exit $status" >>"$out/$name.err"
  count=$((count + 1))
done < <(find "$@" -type f \( -name '*.json' -o -name '*.info' \) -print0 | sort -z)
echo "$count files written to $out"
