#!/usr/bin/env bash
# Checks the repository's docs and comments as text: takes the source tree's root
# (argument 1) and fails, listing the hits, where a file points into a work log by
# entry number ("session" followed by a number) instead of a date and a record file,
# where a directory under src/ is named ("src/<dir>") by no part of docs/design/, or
# where a page under docs/ is longer than 600 lines (split it by topic or date).
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

undocumented=""
for dir in "$root"/src/*/; do
  name=$(basename "$dir")
  if ! grep -qE "src/$name([^[:alnum:]_]|\$)" "$root"/docs/design/*.md; then
    undocumented="$undocumented src/$name"
  fi
done
if [ -n "$undocumented" ]; then
  echo "docs_test: source directories no docs/design/*.md part names:$undocumented"
  exit 1
fi
echo "docs_test: every src/ directory has a design part"

long_pages=""
for page in "$root"/docs/*.md "$root"/docs/*/*.md; do
  [ -f "$page" ] || continue
  lines=$(wc -l <"$page")
  if [ "$lines" -gt 600 ]; then
    long_pages="$long_pages ${page#"$root"/} ($lines lines)"
  fi
done
if [ -n "$long_pages" ]; then
  echo "docs_test: pages over 600 lines:$long_pages"
  exit 1
fi
echo "docs_test: no page under docs/ is over 600 lines"
