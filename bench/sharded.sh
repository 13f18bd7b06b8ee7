#!/usr/bin/env bash
# Sharded reductions on a 2-GPU machine: polyred (NCCL) vs PyTorch (torch op + all_reduce,
# one process per GPU) vs one GPU on the whole tensor. First run on two H200s on
# 2026-11-28 (docs/multigpu.md, "Two GPUs"); bench/sharded.py has the cases and methods.
#   bench/sharded.sh [--polyred build/tools/polyred] [--sizes 1,4,16] [--out FILE] ...
set -euo pipefail
cd "$(dirname "$0")/.."
export NCCL_NVLS_ENABLE=0  # NVLink multicast off (KINDS.md of the GPU machines)
gpus=$(nvidia-smi -L 2>/dev/null | wc -l || true)
if [[ ${gpus:-0} -lt 2 ]]; then
  echo "sharded.sh: needs 2 GPUs, found ${gpus:-0}" >&2
  exit 2
fi
exec python3 bench/sharded.py "$@"
