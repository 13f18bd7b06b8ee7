#!/usr/bin/env bash
# Set up, build, and run the test suite. Without a GPU, tests labelled "gpu" report
# SKIPPED (never passed); everything else runs on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd build
ctest --output-on-failure -j2 "$@"
