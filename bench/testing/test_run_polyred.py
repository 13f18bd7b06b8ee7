#!/usr/bin/env python3
"""Tests bench/run_polyred.py's manifest and run logic with fake_polyred.py (no GPU).

    python3 bench/testing/test_run_polyred.py

Checks: scope from the compile exit code (2 = out of scope, listed with its reason),
declared bytes, chunking, a crashing chunk re-run file by file (so only the crashing
file loses its result), a chunk timeout, a wrong result making the exit status 10,
and parallel chunks (--jobs) giving the same results.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
REPO = os.path.dirname(BENCH)
SCRIPT = os.path.join(BENCH, "run_polyred.py")


def composite(path):
    doc = {"op": "t", "input_desc": [[{"data_type": "float32", "shape": [4, 8], "tensor_name": "i"}],
                                     [{"data_type": "float16", "shape": [1], "tensor_name": "c", "value": 2.0}]],
           "op_desc": [], "output_desc": [{"data_type": "float32", "shape": [8], "tensor_name": "o"}]}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f)


def setup(tmp):
    workloads, corpus = os.path.join(tmp, "workloads"), os.path.join(tmp, "corpus")
    singles = [f"s{k}" for k in range(7)] + ["s_crash"]
    os.makedirs(os.path.join(workloads, "single"))
    with open(os.path.join(workloads, "cases.txt"), "w") as f:
        f.write("# name op dtype dims axes\n" + "".join(f"{n} sum f32 4,8 0\n" for n in singles))
    for n in singles:
        composite(os.path.join(workloads, "single", n + ".json"))
    for rel in ("netA/l0/a.info", "netA/l0/b_wrong.info", "netA/l1/c_matmul.info", "netB/x.json", "netB/y_slow.json"):
        composite(os.path.join(corpus, rel))
    return workloads, corpus


def run(args, env):
    p = subprocess.run([sys.executable, SCRIPT] + args, env=env, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    with tempfile.TemporaryDirectory() as tmp:
        workloads, corpus = setup(tmp)
        env = dict(os.environ, POLYRED_BIN=os.path.join(HERE, "fake_polyred.py"))
        manifest = os.path.join(tmp, "manifest.json")
        rc, out = run(["manifest", "--out", manifest, "--workloads", workloads,
                       "--table2", os.path.join(REPO, "examples", "table2"), "--corpus", corpus], env)
        assert rc == 0, out
        entries = {e["key"]: e for e in json.load(open(manifest))["entries"]}
        assert len(entries) == 8 + 12 + 5, len(entries)
        matmul = entries["corpus/netA/l1/c_matmul.info"]
        assert not matmul["in_scope"] and matmul["status"] == "out_of_scope" and "MatMul" in matmul["reason"]
        assert entries["single/s0"]["in_bytes"] == 4 * 8 * 4 and entries["single/s0"]["out_bytes"] == 32
        assert entries["corpus/netB/x.json"]["net"] == "netB"
        results = {}
        for jobs in ("1", "3"):
            res = os.path.join(tmp, f"polyred_{jobs}.json")
            rc, out = run(["run", "--manifest", manifest, "--out", res, "--logs", os.path.join(tmp, "logs" + jobs),
                           "--chunk", "2", "--chunk-timeout-s", "5", "--file-timeout-s", "5", "--jobs", jobs], env)
            assert rc == 10, (rc, out)  # b_wrong is a wrong result
            r = json.load(open(res))
            got = {x["file"] for x in r["results"]}
            missing = {os.path.basename(e["file"]) for e in r["errors"]}
            assert missing == {"s_crash.json", "y_slow.json"}, missing
            assert len(got) == 8 + 12 + 4 - 2, len(got)
            assert any(not x["ok"] for x in r["results"]), "the wrong result is kept"
            results[jobs] = sorted(got)
        assert results["1"] == results["3"]
    print("test_run_polyred: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
