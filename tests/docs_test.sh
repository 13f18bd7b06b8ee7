#!/usr/bin/env bash
# Checks the repository's docs and comments as text: takes the source tree's root
# (argument 1) and fails, listing the hits, where a file points into a work log by
# entry number ("session" followed by a number) instead of a date and a record file.
# Skips (exit 77) when the tree is not a git checkout, since it asks git for the files.
set -u
root=${1:?usage: docs_test.sh SOURCE_ROOT}
if ! git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "docs_test: $root is not a git checkout; skipped"
  exit 77
fi
# Built from two parts so that this file does not match its own pattern.
word='sess''ion'
pattern="${word}s?[[:space:]]+[0-9]+"
hits=$(git -C "$root" grep -nIiE "$pattern" -- . || true)
if [ -n "$hits" ]; then
  echo "docs_test: work-log entry numbers found (name a date and a record file instead):"
  echo "$hits"
  exit 1
fi
echo "docs_test: no work-log entry numbers"
