#!/usr/bin/env bash
# The main job: set up, build, and run polyred on the bundled examples (the paper's
# Table 2 sub-graphs). On a machine with a GPU each example is compiled, run on the
# GPU, checked against the reference interpreter and timed; without one, each is
# compiled (NVRTC included), its lowered kernels are checked on the CPU, and the
# output says that the GPU part was skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
./build/tools/polyred compile --nvrtc examples/table2/*.json | grep -E '^// (examples|launch|NVRTC)'
if ./build/tools/polyred --version | grep -q '^GPU: none'; then
  ./build/tools/polyred --version | grep '^GPU'
  echo "main: no GPU: checking the lowered kernels on the CPU; the GPU part is SKIPPED"
  ./build/tools/polyred check examples/table2/*.json
else
  ./build/tools/polyred run examples/table2/*.json
fi
