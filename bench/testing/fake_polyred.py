#!/usr/bin/env python3
"""A stand-in for build/tools/polyred's `run` and `compile` commands, for testing
bench/run_polyred.py without a GPU (see test_run_polyred.py).

run FILE... --json=OUT: writes one result per file (micros = 10, kernels = 1) and exits
0, as polyred does on a GPU. A file whose name contains "crash" kills the process
before any JSON is written; "wrong" gives "ok": false and exit 1; "slow" sleeps 30 s.
compile FILE: exits 2 (out of scope) if the name contains "matmul", else 0.
"""
import json
import os
import sys
import time


def main():
    cmd, files = sys.argv[1], [a for a in sys.argv[2:] if not a.startswith("--")]
    flags = dict(a[2:].split("=", 1) for a in sys.argv[2:] if a.startswith("--") and "=" in a)
    if cmd == "compile":
        if any("matmul" in f for f in files):
            print(f"polyred: out of scope: {files[0]}: op 'MatMul #0': MatMul is outside polyred's scope",
                  file=sys.stderr)
            return 2
        return 0
    results = []
    for f in files:
        if "crash" in f:
            os.abort()
        if "slow" in f:
            time.sleep(30)
        results.append(dict(file=f, kernels=1, ok="wrong" not in f, micros=10.0, bytes=1000,
                            bitwise_repeatable=True, deterministic=False))
        print(f"{f}: 1 kernel(s), 10.00 us")
    with open(flags["json"], "w") as out:
        json.dump(dict(device="fake GPU", results=results), out)
    return 1 if any(not r["ok"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
