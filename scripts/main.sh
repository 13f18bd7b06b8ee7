#!/usr/bin/env bash
# The main job: set up, build, and run polyred on the bundled examples (the paper's
# Table 2 sub-graphs). On a machine with a GPU each example is compiled, run on the
# GPU, checked against the reference interpreter and timed; without a GPU each is
# compiled (NVRTC included), its lowered kernels are checked on the CPU, and the
# output says that the GPU part was skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
./build/tools/polyred compile --nvrtc examples/table2/*.json | grep -E '^// (examples|launch|NVRTC)'
./build/tools/polyred run examples/table2/*.json
