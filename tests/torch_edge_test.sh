#!/usr/bin/env bash
# PyTorch's verdict on polyred's edge-value semantics: export every edge case
# (EdgeValues.DISABLED_ExportForPyTorch), then bench/torch_edge_oracle.py compares PyTorch with
# polyred's reference; a difference that is not a documented choice fails.
#   tests/torch_edge_test.sh POLYRED_TESTS PYTHON SOURCE_DIR
set -eu
tests=$1 python=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
POLYRED_EDGE_EXPORT="$tmp" "$tests" --gtest_also_run_disabled_tests --gtest_filter=EdgeValues.DISABLED_ExportForPyTorch >/dev/null
"$python" "$src/bench/torch_edge_oracle.py" "$tmp" --device cpu
