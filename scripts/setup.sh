#!/usr/bin/env bash
# Installs what polyred needs on a Debian machine (if missing), then configures and
# builds it in ./build. The CUDA toolkit (headers + NVRTC) is expected in
# /usr/local/cuda or $POLYRED_CUDA_ROOT; no GPU or driver is needed to build.
set -euo pipefail
cd "$(dirname "$0")/.."

# python3-torch and python3-pytest: the PyTorch oracle tests (Debian's python3, torch 1.13);
# python3-venv: the virtual environment of the Python package's tests (below).
packages=(cmake ninja-build g++ pkg-config libisl-dev libgmp-dev nlohmann-json3-dev libgtest-dev
  python3 python3-pytest python3-torch python3-venv)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cuda_root="${POLYRED_CUDA_ROOT:-/usr/local/cuda}"
if [[ ! -f "$cuda_root/include/nvrtc.h" ]]; then
  echo "setup: the CUDA toolkit was not found in $cuda_root (set POLYRED_CUDA_ROOT)" >&2
  exit 1
fi

# The Python package and the torch.compile backend are tested with PyTorch 2 from PyPI
# (Debian's is 1.13, without Dynamo) in .venv; pip leaves satisfied requirements alone.
if [[ ! -x .venv/bin/python ]]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r python/requirements-test.txt

cmake -S . -B build -G Ninja -DPOLYRED_CUDA_ROOT="$cuda_root" -DPOLYRED_PYTHON="$PWD/.venv/bin/python" >/dev/null
ninja -C build
