#!/usr/bin/env python3
"""Smoke test of bench/peers_torch.py and composite_torch.py without PyTorch or a GPU.

    python3 bench/testing/smoke_peers_torch.py [CORPUS_DIR]

Runs the timing run and one warm worker of peers_torch.py over every workload file
(the single ops, examples/table2, and the corpus when given or at tests/data/akg)
with torch replaced by torch_shape_stub (shapes and dtypes only, no values). Fails if
any in-scope file's translation raises (a missing op, a wrong reshape or axis, ...) or
if a record lacks a field report.py reads. Files polyred does not compile are left out
as in the real run (scope from `polyred compile`, when build/tools/polyred exists).
"""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
sys.path[:0] = [HERE, BENCH]

import torch_shape_stub  # noqa: E402

torch_shape_stub.install()
import make_workloads  # noqa: E402
import peers_torch  # noqa: E402
import run_polyred  # noqa: E402


def manifest(tmp, corpus):
    workloads = os.path.join(tmp, "workloads")
    sys.argv = ["make_workloads.py", workloads]
    make_workloads.main()
    entries = (run_polyred.single_entries(workloads) + run_polyred.table2_entries(
        os.path.join(os.path.dirname(BENCH), "examples", "table2")) + run_polyred.corpus_entries(corpus))
    have_polyred = os.path.exists(run_polyred.polyred_bin())
    for e in entries:
        if have_polyred:
            run_polyred.scope_of(e)
        else:
            e["in_scope"] = True
    path = os.path.join(tmp, "manifest.json")
    with open(path, "w") as f:
        json.dump(dict(entries=entries), f)
    print(f"smoke: {sum(e['in_scope'] for e in entries)} in-scope files of {len(entries)}"
          + ("" if have_polyred else " (no polyred binary: all taken as in scope)"))
    return path


def check_records(out, groups):
    recs = [json.loads(line) for line in open(out)]
    kinds = [r["kind"] for r in recs]
    assert kinds[:2] == ["env", "ceilings"], kinds[:2]
    assert recs[1]["read_ceiling"]["GBps"] > 0 and recs[1]["launch_floor"]["us"] > 0
    bad = []
    for r in recs[2:]:
        assert r["group"] in groups, r
        problems = [k for k in ("error", "eager_error", "compile_error") if k in r]
        problems += [f"no {k}" for k in ("eager_us", "eager_ok", "compile_us", "compile_ok", "bytes") if k not in r]
        if problems:
            bad.append((r["key"], problems, r.get("error") or r.get("eager_error") or r.get("compile_error")))
    return len(recs) - 2, bad


def main():
    corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.dirname(BENCH)),
                                                                 "shared", "corpus", "akg")
    with tempfile.TemporaryDirectory() as tmp:
        m = manifest(tmp, corpus)
        out = os.path.join(tmp, "torch.jsonl")
        rc = peers_torch.main(["--manifest", m, "--out", out, "--case-timeout-s", "60"])
        assert rc == 0, f"timing run exit {rc}"
        n, bad = check_records(out, {"single", "table2", "corpus"})
        warm_out = os.path.join(tmp, "warm.jsonl")
        peers_torch.main(["--manifest", m, "--out", warm_out, "--warm-worker", "0/1"])
        warm = [json.loads(line) for line in open(warm_out)]
        bad += [(w["key"], ["warm"], w["error"]) for w in warm if "error" in w]
        assert len(warm) == n, (len(warm), n)
    for key, problems, why in bad:
        print(f"smoke: FAIL {key}: {problems}: {why}")
    print(f"smoke: {n} cases, {len(bad)} failures")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
