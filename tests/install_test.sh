#!/usr/bin/env bash
# The installed library: `cmake --install` into a temporary prefix, then a separate
# project (examples/consumer) finds it with find_package(polyred CONFIG), builds a C and
# a C++ program against polyred::polyred and runs them on a bundled example; pkg-config
# finds it too.
#   tests/install_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for f in include/polyred/polyred.h include/polyred/polyred.hpp bin/polyred; do
  [[ -e $tmp/prefix/$f ]] || { echo "FAIL: $f not installed"; exit 1; }
done
libdir=$(dirname "$(find "$tmp/prefix" -name 'libpolyred.so' | head -n1)")
[[ -n $libdir ]] || { echo "FAIL: libpolyred.so not installed"; exit 1; }
cmake -S "$src/examples/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$tmp/consumer/consumer_c" "$src/examples/table2/sg09_sum_sum.json"
"$tmp/consumer/consumer_cpp" "$src/examples/table2/sg05_neg_mul_sum.json"
# A bad file: the library's message, status 2, no crash.
set +e
"$tmp/consumer/consumer_c" "$src/README.md" 2>"$tmp/err"
rc=$?
set -e
[[ $rc -eq 2 ]] && grep -q "README.md" "$tmp/err" || { echo "FAIL: bad input gave $rc: $(cat "$tmp/err")"; exit 1; }
# pkg-config
PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --exists polyred || { echo "FAIL: pkg-config does not find polyred"; exit 1; }
cc $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags polyred) "$src/examples/consumer/consumer.c" -o "$tmp/pc" \
  $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --libs polyred)
"$tmp/pc" "$src/examples/table2/sg09_sum_sum.json"
# The installed Python package finds the installed library by itself.
if [[ -x /usr/bin/python3 ]]; then
  env -u POLYRED_LIBRARY PYTHONPATH="$libdir/python3/dist-packages" /usr/bin/python3 -c \
    "import polyred; polyred.load('$src/examples/table2/sg09_sum_sum.json').check_cpu(max_points=4096); print('python: ok')"
fi
# Only the C API is exported.
exported=$(nm -D --defined-only "$libdir/libpolyred.so" | awk '$2 == "T" {print $3}' | grep -v '^polyred_' | head -n5)
[[ -z $exported ]] || { echo "FAIL: libpolyred exports more than polyred_*: $exported"; exit 1; }
echo "install: ok"
