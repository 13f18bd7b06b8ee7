#!/usr/bin/env python3
"""The polyred side of the benchmark: the workload manifest, the GPU runs, compile times.

    run_polyred.py manifest --out MANIFEST.json [--workloads DIR] [--table2 DIR] [--corpus DIR]
    run_polyred.py run --manifest MANIFEST.json --out POLYRED.json --logs DIR
    run_polyred.py compile-times --manifest MANIFEST.json --out TIMES.json

manifest: lists every workload file with a key, its group (single, table2, corpus)
and, for the corpus, its network; runs `polyred compile FILE` on each (no GPU needed)
and marks it in_scope when that exits 0. Exit 2 means out of scope (polyred's scope:
no matmul, scatters, ... see docs/format.md); any other exit is a polyred failure.
Every peer runs on the in-scope files only, so all see the same set.

run: `polyred run FILES --json=...` on the in-scope files, in chunks (one process per
chunk, with a timeout); a chunk that leaves no JSON (a crash or a timeout) is run
again file by file so that one bad file costs only its own result. Exit 10 if a
result is wrong, 3 if no GPU result could be had at all.

compile-times: wall time of `polyred compile FILE --nvrtc` (front end, scheduling,
code generation and NVRTC: a cold compile) and of `polyred compile FILE` (everything
but NVRTC: what a compile costs when the kernel cache holds the cubin), median of 3,
for the Table 2 files.

Environment: POLYRED_BIN (default build/tools/polyred), POLYRED_ARCH (default sm_90),
POLYRED_RUN_FLAGS (extra flags for `polyred run`), POLYRED_JOBS (default 1: chunks one at
a time; N > 1 runs N polyred processes at once, overlapping one's host-side reference
with another's GPU timing -- faster, but the GPU is then not idle around every timing).
"""
import argparse
import concurrent.futures
import glob
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def polyred_bin():
    return os.environ.get("POLYRED_BIN", os.path.join(REPO, "build", "tools", "polyred"))


def arch_flag():
    return "--arch=" + os.environ.get("POLYRED_ARCH", "sm_90")


# ---------------------------------------------------------------- manifest


def single_entries(workloads):
    """The single-op files in cases.txt order."""
    names = []
    with open(os.path.join(workloads, "cases.txt")) as f:
        names = [line.split()[0] for line in f if line.strip() and not line.startswith("#")]
    return [dict(key="single/" + n, group="single", name=n,
                 file=os.path.join(workloads, "single", n + ".json")) for n in names]


def table2_entries(table2):
    files = sorted(glob.glob(os.path.join(table2, "*.json")))
    return [dict(key="table2/" + os.path.basename(f)[:-5], group="table2",
                 name=os.path.basename(f)[:-5], file=f) for f in files]


def corpus_entries(corpus):
    """Files under CORPUS/<network>/..., .info and .json, sorted."""
    entries = []
    if not corpus or not os.path.isdir(corpus):
        return entries
    for net in sorted(d for d in os.listdir(corpus) if os.path.isdir(os.path.join(corpus, d))):
        files = []
        for ext in ("info", "json"):
            files += glob.glob(os.path.join(corpus, net, "**", "*." + ext), recursive=True)
        for f in sorted(files):
            rel = os.path.relpath(f, os.path.join(corpus, net))
            entries.append(dict(key=f"corpus/{net}/{rel}", group="corpus", net=net,
                                name=os.path.splitext(os.path.basename(f))[0], file=f))
    return entries


DTYPE_BYTES = {"float64": 8, "int64": 8, "float32": 4, "int32": 4, "float16": 2, "bfloat16": 2,
               "int8": 1, "uint8": 1, "bool": 1}


def declared_bytes(entry):
    """Bytes of the declared inputs (constants excluded) and outputs of the entry's file."""
    def size(d):
        n = 1
        for k in d["shape"]:
            n *= k
        return n * DTYPE_BYTES.get(d["data_type"], 4)
    with open(entry["file"]) as f:
        doc = json.load(f)
    ins = [d for arg in (doc.get("input_desc") or []) for d in arg if "value" not in d]
    entry["in_bytes"] = sum(size(d) for d in ins)
    entry["out_bytes"] = sum(size(d) for d in doc.get("output_desc") or [])


def scope_of(entry):
    """Runs `polyred compile` on the entry's file; sets in_scope and, if not, the reason."""
    try:
        p = subprocess.run([polyred_bin(), "compile", entry["file"], arch_flag()],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120)
    except (subprocess.TimeoutExpired, OSError) as e:
        p = subprocess.CompletedProcess([], 3, "", f"polyred compile did not finish: {e}")
    entry["in_scope"] = p.returncode == 0
    try:
        declared_bytes(entry)
    except (OSError, ValueError, KeyError, TypeError) as e:
        entry["bytes_error"] = str(e)[:200]
    if p.returncode != 0:
        first = (p.stderr.strip().splitlines() or [""])[0]
        entry["status"] = "out_of_scope" if p.returncode == 2 else "polyred_failed"
        entry["reason"] = f"exit {p.returncode}: {first[:300]}"
    else:
        entry["status"] = "in_scope"
    return entry


def cmd_manifest(a):
    entries = single_entries(a.workloads) + table2_entries(a.table2) + corpus_entries(a.corpus)
    for k, e in enumerate(entries):
        e["seed"] = 1 + k
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        entries = list(pool.map(scope_of, entries))
    with open(a.out, "w") as f:
        json.dump(dict(polyred=polyred_bin(), corpus_dir=a.corpus, entries=entries), f, indent=1)
    counts = {}
    for e in entries:
        key = (e["group"], e["status"])
        counts[key] = counts.get(key, 0) + 1
    print("manifest:", ", ".join(f"{g} {s}: {n}" for (g, s), n in sorted(counts.items())))
    failed = [e for e in entries if e["status"] == "polyred_failed"]
    for e in failed[:10]:
        print(f"manifest: POLYRED FAILED TO COMPILE {e['key']}: {e['reason']}")
    if len(failed) > 10:
        print(f"manifest: ... and {len(failed) - 10} more (see {a.out})")
    if not corpus_entries(a.corpus):
        print(f"manifest: note: no corpus files under '{a.corpus}' (set CORPUS_DIR)")
    return 3 if failed else 0


# ---------------------------------------------------------------- runs


def chunks(entries, size):
    for k in range(0, len(entries), size):
        yield entries[k:k + size]


def polyred_run(files, json_out, log_path, timeout_s):
    """One `polyred run` process; returns its parsed JSON or None (crash, timeout, no GPU)."""
    if os.path.exists(json_out):
        os.remove(json_out)
    cmd = [polyred_bin(), "run", *files, "--json=" + json_out] + os.environ.get("POLYRED_RUN_FLAGS", "").split()
    with open(log_path, "a") as log:
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        try:
            p = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, timeout=timeout_s)
            log.write(f"[exit {p.returncode}]\n")
        except subprocess.TimeoutExpired:
            log.write(f"[TIMEOUT after {timeout_s} s]\n")
            return None
    if not os.path.exists(json_out):
        return None
    with open(json_out) as f:
        return json.load(f)


def run_chunk(task, a):
    """Runs one chunk; if it leaves no JSON, its files one by one. Returns [(files, json or None)]."""
    tag, files, timeout = task
    log = os.path.join(a.logs, f"polyred_{tag}.log")
    res = polyred_run(files, os.path.join(a.logs, f"polyred_{tag}.json"), log, timeout)
    if res is not None or len(files) == 1:
        return [(files, res)]
    with open(log, "a") as f:
        f.write("chunk left no JSON: running its files one by one\n")
    return [([f], polyred_run([f], os.path.join(a.logs, f"polyred_{tag}_one.json"), log, a.file_timeout_s))
            for f in files]


def tasks_of(entries, a):
    """(tag, files, timeout) per chunk: single ops six at a time (one shape), others a.chunk."""
    tasks = []
    for group in ("table2", "single", "corpus"):
        picked = [e["file"] for e in entries if e["group"] == group]
        size = 6 if group == "single" else a.chunk
        timeout = a.single_timeout_s if group == "single" else a.chunk_timeout_s
        tasks += [(f"{group}_{k}", files, timeout) for k, files in enumerate(chunks(picked, size))]
    return tasks


def absorb(out, res, files):
    got = set()
    if res:
        out["device"] = res.get("device", out.get("device"))
        out["results"] += res["results"]
        got = {r["file"] for r in res["results"]}
    for f in files:
        if f not in got:
            out["errors"].append(dict(file=f, error="no result (out of scope at run time, crash, "
                                                    "timeout or no GPU): see the polyred logs"))


def save(out, path):
    with open(path + ".tmp", "w") as f:
        json.dump(out, f, indent=1)
    os.replace(path + ".tmp", path)


def cmd_run(a):
    with open(a.manifest) as f:
        entries = [e for e in json.load(f)["entries"] if e.get("in_scope")]
    os.makedirs(a.logs, exist_ok=True)
    out = dict(device=None, results=[], errors=[], jobs=a.jobs)
    start = time.time()
    probe = min(entries, key=lambda e: e["group"] != "table2") if entries else None  # a small file
    if probe and not polyred_run([probe["file"]], os.path.join(a.logs, "polyred_probe.json"),
                                 os.path.join(a.logs, "polyred_probe.log"), 300):
        print("polyred: the probe run left no JSON (no GPU, or polyred failed): see polyred_probe.log")
        out["error"] = "the probe run left no JSON (no GPU, or polyred failed)"
        entries = []
    save(out, a.out)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for task, parts in zip(tasks_of(entries, a), pool.map(lambda t: run_chunk(t, a), tasks_of(entries, a))):
            for files, res in parts:
                absorb(out, res, files)
            out["wall_s"] = round(time.time() - start, 1)
            save(out, a.out)  # after every chunk, so that a stopped run keeps what it measured
            print(f"polyred: {task[0]}: {len(task[1])} files (t={time.time() - start:.0f} s)", flush=True)
    out["wall_s"] = round(time.time() - start, 1)
    save(out, a.out)
    wrong = [r["file"] for r in out["results"] if not r.get("ok")]
    for w in wrong:
        print(f"polyred: WRONG RESULT on {w}")
    print(f"polyred: {len(out['results'])} results, {len(out['errors'])} without a result, "
          f"{len(wrong)} wrong, {out['wall_s']} s")
    return 3 if "error" in out else 10 if wrong else 0


# ---------------------------------------------------------------- compile times


def wall(cmd, repeat=3):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
        if p.returncode != 0:
            return None
    return statistics.median(times)


def cmd_compile_times(a):
    with open(a.manifest) as f:
        entries = [e for e in json.load(f)["entries"] if e.get("in_scope") and e["group"] in a.groups.split(",")]
    note = ("cold_s: `polyred compile --nvrtc` (front end, scheduling, codegen, NVRTC; no kernel cache); "
            "cached_s: `polyred compile` (the same without NVRTC: the cubin comes from the kernel cache)")
    times = []
    for e in entries:
        cold = wall([polyred_bin(), "compile", e["file"], arch_flag(), "--nvrtc"])
        front = wall([polyred_bin(), "compile", e["file"], arch_flag()])
        times.append(dict(key=e["key"], cold_s=cold, cached_s=front))
    with open(a.out, "w") as f:
        json.dump(dict(note=note, times=times), f, indent=1)
    done = [t for t in times if t["cold_s"] is not None]
    if done:
        print(f"polyred compile: {len(done)} files, median cold {statistics.median(t['cold_s'] for t in done):.3f} s, "
              f"median cached {statistics.median(t['cached_s'] for t in done):.3f} s")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("manifest")
    m.add_argument("--out", required=True)
    m.add_argument("--workloads", default=os.path.join(HERE, "workloads"))
    m.add_argument("--table2", default=os.path.join(REPO, "examples", "table2"))
    m.add_argument("--corpus", default=os.environ.get("CORPUS_DIR", ""))
    r = sub.add_parser("run")
    r.add_argument("--manifest", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--logs", required=True)
    r.add_argument("--chunk", type=int, default=40)
    r.add_argument("--chunk-timeout-s", type=int, default=300)
    r.add_argument("--single-timeout-s", type=int, default=300)
    r.add_argument("--file-timeout-s", type=int, default=120)
    r.add_argument("--jobs", type=int, default=int(os.environ.get("POLYRED_JOBS", "1")),
                   help="polyred processes at once (default 1; more overlaps one's CPU reference "
                        "with another's GPU timing: faster, slightly less clean)")
    c = sub.add_parser("compile-times")
    c.add_argument("--manifest", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--groups", default="table2")
    a = p.parse_args(argv)
    return {"manifest": cmd_manifest, "run": cmd_run, "compile-times": cmd_compile_times}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
