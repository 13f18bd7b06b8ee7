#!/usr/bin/env bash
# The torch.compile backend's GPU checks in one call, on the GPU machine:
#
#   bash tools/gpu_backend.sh OUTDIR [MODELS] [IMPLS]
#
# 1. `python -m polyred` (the library, torch, the GPU, the backend's registration);
# 2. the backend's GPU tests (python/tests/test_backend_gpu.py: config-built GPT-2,
#    Llama, BERT and ResNet-18 against eager, forward and backward, 20 bf16 steps,
#    CUDA graphs), log in OUTDIR/backend_gpu_tests.log;
# 3. bench/models.py over MODELS [gpt2] and IMPLS [eager,compile,polyred,liger]
#    (Liger-Kernel where its wheel is installed), one JSON line each in
#    OUTDIR/models.jsonl.
#
# The GPU machine has no isl headers: build libpolyred here and carry it, e.g.
#   strip -o devbuild/libpolyred.so build/src/libpolyred.so
# then run with POLYRED_LIBRARY=devbuild/libpolyred.so; wheels that machine lacks
# (liger-kernel) travel in .whl/ (see the device notes) and are installed first.
set -u -o pipefail
OUT=${1:?usage: bash tools/gpu_backend.sh OUTDIR [MODELS] [IMPLS]}
MODELS=${2:-gpt2}
IMPLS=${3:-eager,compile,polyred,liger}
cd "$(dirname "$0")/.."
mkdir -p "$OUT"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/polyred-site .whl/*.whl &&
    export PYTHONPATH="$PYTHONPATH:/tmp/polyred-site"
fi
status=0
python3 -m polyred | tee "$OUT/env.txt" || status=1
python3 -m pytest -q -p no:cacheprovider -m gpu python/tests/test_backend_gpu.py 2>&1 | tee "$OUT/backend_gpu_tests.log" || status=1
python3 bench/models.py --models "$MODELS" --impls "$IMPLS" --out "$OUT/models.jsonl" || status=1
exit $status
