#!/usr/bin/env bash
# Command-line conventions: every misuse a user can type exits 2 with one printable
# line on stderr; help and --version go to stdout with exit 0.
#   tests/cli_test.sh POLYRED_BINARY SOURCE_DIR
set -u
polyred=$1
src=$2
example="$src/examples/table2/sg09_sum_sum.json"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/empty.json"
printf '{"op": "x"' >"$tmp/broken.json"
failures=0 passed=0

# expect_error DESCRIPTION ARGS...: exit 2, nothing on stdout, one line on stderr.
expect_error() {
  local what=$1
  shift
  "$polyred" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  local rc=$? lines
  lines=$(wc -l <"$tmp/err")
  if [[ $rc -ne 2 || $lines -ne 1 || -s $tmp/out ]] || LC_ALL=C grep -q '[^[:print:]]' "$tmp/err"; then
    echo "FAIL $what: exit $rc, $lines stderr line(s): $(head -c 300 "$tmp/err")"
    failures=$((failures + 1))
  else
    passed=$((passed + 1))
  fi
}

# expect_ok DESCRIPTION PATTERN ARGS...: exit 0 and PATTERN on stdout.
expect_ok() {
  local what=$1 pattern=$2
  shift 2
  "$polyred" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [[ $rc -ne 0 ]] || ! grep -q -- "$pattern" "$tmp/out"; then
    echo "FAIL $what: exit $rc, stdout $(head -c 200 "$tmp/out")"
    failures=$((failures + 1))
  else
    passed=$((passed + 1))
  fi
}

expect_error "misspelled option" compile --determinstic "$example"
grep -q "did you mean --deterministic" "$tmp/err" || { echo "FAIL no suggestion: $(cat "$tmp/err")"; failures=$((failures + 1)); }
expect_error "unknown option" compile --bogus "$example"
expect_error "misspelled command" compil "$example"
grep -q "did you mean compile" "$tmp/err" || { echo "FAIL no command suggestion"; failures=$((failures + 1)); }
expect_error "no command" --deterministic
expect_error "no file" compile
expect_error "missing file" compile "$tmp/missing.json"
expect_error "empty file" compile "$tmp/empty.json"
expect_error "directory" check "$tmp"
expect_error "malformed file" compile "$tmp/broken.json"
expect_error "bad --arch" compile --arch=sm9 "$example"
expect_error "bad --sms" check --sms=0 "$example"
expect_error "bad --l2-mib" compile --l2-mib=0 "$example"
expect_error "bad --seed" check --seed=-3 "$example"
expect_error "bad --dump" compile --dump=graph,bogus "$example"
expect_error "bad --max-memory" check --max-memory=12Q "$example"
expect_error "bad --timeout" check --timeout=0 "$example"
expect_error "bad --misalign" run --misalign=2000 "$example"
expect_error "--misalign of another command" check --misalign=1 "$example"
expect_error "value for a flag" compile --nvrtc=yes "$example"
expect_error "flag without its value" check --seed "$example"
expect_error "option of another command" compile --json=x.json "$example"
expect_error "two corpus directories" corpus "$tmp" "$tmp"
if "$polyred" --version | grep -q '^GPU: none'; then
  expect_error "run without a GPU" run "$example"
  expect_error "run --json without a GPU" run --json="$tmp/r.json" "$example"
  [[ -e $tmp/r.json ]] && { echo "FAIL run wrote JSON without a GPU"; failures=$((failures + 1)); }
fi
expect_ok "--help" "usage: polyred" --help
expect_ok "help COMMAND" "--max-memory" help check
expect_ok "COMMAND --help" "--dump" compile --help
expect_ok "--version" "^polyred [0-9]" --version
expect_ok "stdin" "kernel(s)" compile - <"$example"
"$polyred" compile - <"$example" >"$tmp/out" 2>&1 && grep -q "<stdin>: 1 kernel(s)" "$tmp/out" ||
  { echo "FAIL reading standard input"; failures=$((failures + 1)); }
expect_error "bad --max-launches" corpus --max-launches=one "$src/tests/data/akg"
expect_error "missing --launch-exceptions file" corpus --max-launches=1 --launch-exceptions="$tmp/none" "$src/tests/data/akg"
parallel=$(ls "$src"/tests/data/akg/deep_fm/level0/*more_parallel_12715892079844483091*)
expect_ok "--dump=launches" "7 parts (horizontal fusion)" compile --dump=launches "$parallel"
expect_ok "--no-horizontal-fusion" "7 kernel(s)" compile --no-horizontal-fusion "$parallel"
expect_error "-o without a directory" compile "$example" -o
expect_error "--test-data without --output" compile --test-data "$example"
expect_error "cache with a bogus operand" cache frobnicate
expect_ok "cache" "kernel cache" cache
expect_ok "compile -o" "artifacts:" compile "$example" -o "$tmp/artifacts"
[[ -s $tmp/artifacts/manifest.json && -s $tmp/artifacts/polyred_k0_reduce.cubin ]] ||
  { echo "FAIL compile -o wrote no manifest or CUBIN"; failures=$((failures + 1)); }
POLYRED_DUMP_CUDA="$tmp/dump" "$polyred" check "$example" >/dev/null 2>&1
ls "$tmp"/dump/*.cu >/dev/null 2>&1 || { echo "FAIL POLYRED_DUMP_CUDA wrote nothing on the CPU path"; failures=$((failures + 1)); }
# sg02 reads 108 MB: within four times a 50 MiB L2 its loads stream, past 4 x 1 MiB they do not
sg02="$src/examples/table2/sg02_cast_sum.json"
expect_ok "loads that stream" "PrLoadHint::Streaming" compile "$sg02"
"$polyred" compile --l2-mib=1 "$sg02" >"$tmp/out" 2>&1 && ! grep -q "PrLoadHint::" "$tmp/out" ||
  { echo "FAIL --l2-mib=1: hints in $(head -c 200 "$tmp/out")"; failures=$((failures + 1)); }
expect_ok "-v" "kernel(s)" compile -v "$example"
grep -q "stage times:.*partition" "$tmp/err" || { echo "FAIL -v printed no stage times"; failures=$((failures + 1)); }

# Sharded reductions (docs/multigpu.md): check --shard --ranks simulates on the CPU;
# bad shardings exit 2 naming the file and the input.
expect_error "--shard without --ranks" check --shard=input_0:0 "$example"
expect_error "--ranks without --shard" check --ranks=2 "$example"
expect_error "--gpus without --shard" run --gpus=2 "$example"
expect_error "malformed --shard" check --shard=input_0 --ranks=2 "$example"
expect_error "--ranks 0" check --shard=input_0:0 --ranks=0 "$example"
expect_error "--shard unknown input" check --shard=nope:0 --ranks=2 "$example"
grep -q "sg09_sum_sum.json: input 'nope': no graph input" "$tmp/err" || { echo "FAIL unknown input not named"; failures=$((failures + 1)); }
expect_error "--shard axis out of range" check --shard=input_0:7 --ranks=2 "$example"
expect_error "--shard sizes not summing" check "--shard=input_0:0:1,2;input_1:0:1,2" --ranks=2 "$example"
expect_error "--shard more ranks than elements" check "--shard=input_0:1;input_1:1" --ranks=1000 "$example"
expect_error "run --shard without a GPU" run --shard=input_0:0 --gpus=2 "$example"
expect_error "--misalign with --shard" run --misalign=1 --shard=input_0:0 --gpus=2 "$example"
expect_ok "check --shard" "CPU simulation over 2 ranks.*passed" check "--shard=input_0:1:700,68;input_1:1:700,68" --ranks=2 "$example"

echo "cli: $passed passed, $failures failed"
[[ $failures -eq 0 ]]
