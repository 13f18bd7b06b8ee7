#!/usr/bin/env bash
# Set up, build, and run the test suite. Without a GPU, tests labelled "gpu" report
# SKIPPED (never passed); everything else runs on the CPU. The last line counts the
# passed, failed and skipped tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd build
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
ctest --output-on-failure -j2 "$@" | tee "$log" || status=$?
total=$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -n 1)
failed=$(sed -n 's/.* \([0-9]*\) tests failed out of.*/\1/p' "$log" | tail -n 1)
skipped=$(grep -c '\*\*\*Skipped' "$log" || true)
if [[ -n $total && -n $failed ]]; then
  echo "tests: $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
fi
exit "$status"
