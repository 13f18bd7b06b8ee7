#!/usr/bin/env python3
"""Issue #13's benchmark: polyred's tuple-reduction workloads against torch eager,
torch.compile, CUB (argmax) and the practical limit, on the GPU machine, in one run.

    python3 bench/tuple_bench.py OUTDIR [--iterations 50] [--budget-s 450] [--cases a,b,..]

Steps (each failure is recorded and the run goes on):
  1. bench/make_tuple_workloads.py writes the composite files (WORK/tuple/, full shapes);
  2. in the background: nvcc builds bench/peers_cub_argmax.cu and bench/stream_meter.cu,
     and torch.compile of every case runs in one worker process per case (fills
     Inductor's and Triton's on-disk caches, as bench/peers_torch.py --warm does);
  3. polyred: `$POLYRED_BIN run FILE --json=...` per file (its own check against the
     reference, its timing: CUDA graph, L2 flush, median), after the warm-up so that the
     GPU is otherwise idle;
  4. torch eager and torch.compile of the equivalent hand-written function
     (torch.argmax, torch.var_mean, torch.logsumexp, torch.softmax,
     F.cross_entropy(reduction='none')) timed with bench/peers_torch.py's Timer, each
     result checked against a float64 reference of the same inputs;
  5. CUB's segmented ArgMax (bench/peers_cub_argmax.cu) on the argmax case;
  6. the practical limit: bench/stream_meter.cu on the bytes polyred's run reports
     (inputs read once + outputs written).
Writes OUTDIR/tuple_bench.md (a markdown table, also printed) and OUTDIR/tuple_bench.json.

Environment: POLYRED_BIN (default devbuild/polyred, else build/tools/polyred), WORK_DIR
(default /tmp/polyred-tuple-bench: files, caches, logs), NVCC (default nvcc).
Exit status: 1 if a result (polyred's or a peer's) was wrong, 3 if a step failed, else 0.
Internal modes (one subprocess each): --warm-case NAME, --torch-time.
"""
import argparse
import concurrent.futures
import json
import math
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
WORK = os.path.abspath(os.environ.get("WORK_DIR", "/tmp/polyred-tuple-bench"))
# Inductor and Triton caches shared by the warm workers and the timing process (read by
# bench/peers_torch.py when it is imported, so set before).
os.environ.setdefault("PEERS_CACHE_DIR", os.path.join(WORK, "cache"))

ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int32": 4, "int64": 8}


def polyred_bin():
    if os.environ.get("POLYRED_BIN"):
        return os.path.abspath(os.environ["POLYRED_BIN"])
    for p in ("devbuild/polyred", "build/tools/polyred"):
        if os.path.exists(os.path.join(REPO, p)):
            return os.path.join(REPO, p)
    return os.path.join(REPO, "devbuild", "polyred")


def load_cases(only=None):
    with open(os.path.join(WORK, "tuple", "cases.json")) as f:
        cases = json.load(f)
    return [c for c in cases if not only or c["name"] in only]


# ---------------------------------------------------------------- torch side (subprocesses)


def torch_function(case):
    """The hand-written torch equivalent of a case: (fn, output dtypes)."""
    import torch
    import torch.nn.functional as F
    kind = case["torch"]
    if kind == "argmax":
        return lambda x: torch.argmax(x, dim=-1)
    if kind == "var_mean":
        dims = tuple(case["dim"])
        return lambda x: torch.var_mean(x, dim=dims)  # unbiased (correction=1), as the composite
    if kind == "logsumexp":
        return lambda x: torch.logsumexp(x, dim=-1)
    if kind == "softmax":
        return lambda x: torch.softmax(x, dim=-1)
    if kind == "cross_entropy":
        # cross_entropy takes int64 targets: the int32 labels are converted inside (8192 elements).
        return lambda x, y: F.cross_entropy(x, y.long(), reduction="none")
    raise ValueError(f"unknown torch kind {kind}")


def torch_inputs(case, seed=1):
    import torch
    import peers_torch as pt
    torch.manual_seed(seed)
    args = []
    for dtype, shape in case["inputs"]:
        if case["torch"] == "cross_entropy" and dtype == "int32":
            args.append(torch.randint(0, case["classes"], shape, device="cuda", dtype=torch.int32))
        else:
            args.append(pt.rand(getattr(torch, dtype), shape, "cuda"))
    return args


def check_result(case, args, outs):
    """(ok, detail) of a peer's outputs against a float64 reference of the same inputs."""
    import torch
    import peers_torch as pt
    outs = outs if isinstance(outs, tuple) else (outs,)
    kind = case["torch"]
    x = args[0].double()
    if kind == "argmax":
        idx = outs[0].long()
        best = x.max(dim=-1).values
        at = x.gather(-1, idx.unsqueeze(-1)).squeeze(-1)
        ties_ok = bool((at == best).all().item())
        first = x.argmax(dim=-1)  # torch's CUDA argmax on float64: the first maximum
        exact = int((idx == first).sum().item())
        return ties_ok, dict(rows=idx.numel(), exact_rows=exact, tie_rows=idx.numel() - exact if ties_ok else None)
    if kind == "var_mean":
        refs = torch.var_mean(x, dim=tuple(case["dim"]))
    elif kind == "logsumexp":
        refs = (torch.logsumexp(x, dim=-1),)
    elif kind == "softmax":
        refs = (torch.softmax(x, dim=-1),)
    elif kind == "cross_entropy":
        refs = (torch.nn.functional.cross_entropy(x, args[1].long(), reduction="none"),)
    errs = [pt.rel_error(o, r) for o, r in zip(outs, refs)]
    tol = max(pt.TOLERANCE.get(o.dtype, 1e-3) for o in outs)
    worst = max(errs) if errs else math.inf
    return len(outs) == len(refs) and worst <= tol, dict(rel_err=None if math.isinf(worst) else worst, tol=tol)


def warm_case(name):
    """Compiles one case with torch.compile and runs it once (fills the caches)."""
    import peers_torch as pt  # first: it sets the Inductor/Triton cache directories
    import torch
    case = load_cases([name])[0]
    t0 = time.time()
    with torch.no_grad():
        fn = pt.compile_fn(torch_function(case))
        fn(*torch_inputs(case))
        torch.cuda.synchronize()
    print(json.dumps(dict(kind="warm", case=name, compile_s=round(time.time() - t0, 2))), flush=True)
    return 0


def torch_time(opts):
    """Eager and torch.compile of every case, one JSON line each, appended to opts.torch_out."""
    import peers_torch as pt  # first: it sets the Inductor/Triton cache directories
    import torch
    if not torch.cuda.is_available():
        print("tuple_bench: torch sees no CUDA device", file=sys.stderr)
        return 3
    timer = pt.Timer(opts.iterations)
    wrong = False
    with open(opts.torch_out, "a") as out:
        p = torch.cuda.get_device_properties(0)
        out.write(json.dumps(dict(kind="env", device=p.name, torch=torch.__version__, cuda=torch.version.cuda,
                                  triton=pt._triton_version())) + "\n")
        for case in load_cases(opts.only):
            rec = dict(kind="case", case=case["name"])
            try:
                with torch.no_grad():
                    args = torch_inputs(case)
                    eager = torch_function(case)
                    rec["bytes_in"] = sum(a.numel() * a.element_size() for a in args)
                    for label, make in (("eager", lambda: eager), ("compile", lambda: pt.compile_fn(eager))):
                        try:
                            with pt.Deadline(opts.case_timeout_s):
                                fn = make()
                                t0 = time.time()
                                outs = fn(*args)
                                torch.cuda.synchronize()
                                rec[label + "_first_call_s"] = round(time.time() - t0, 3)
                                ok, detail = check_result(case, args, outs)
                                rec[label + "_ok"], rec[label + "_check"] = ok, detail
                                o = outs if isinstance(outs, tuple) else (outs,)
                                rec.setdefault("bytes_out", sum(t.numel() * t.element_size() for t in o))
                                del outs, o
                                if not ok:
                                    wrong = True
                                    print(f"WRONG RESULT: {label} on {case['name']}: {detail}", flush=True)
                                rec[label + "_us"] = timer.time(fn, args)
                        except Exception as e:  # noqa: BLE001 - recorded, the run goes on
                            rec[label + "_error"] = f"{type(e).__name__}: {e}"[:300]
            except Exception as e:  # noqa: BLE001
                rec["error"] = f"{type(e).__name__}: {e}"[:300]
            out.write(json.dumps(rec) + "\n")
            out.flush()
            print(json.dumps(rec), flush=True)
            args = None
            torch.cuda.empty_cache()
    return 10 if wrong else 0


# ---------------------------------------------------------------- driver


class Run:
    def __init__(self, opts):
        self.opts, self.start = opts, time.time()
        self.failed, self.wrong = [], False
        self.logs = os.path.join(WORK, "logs")
        os.makedirs(self.logs, exist_ok=True)

    def left(self, reserve=0):
        return self.opts.budget_s - (time.time() - self.start) - reserve

    def say(self, msg):
        print(f"[tuple_bench t={time.time() - self.start:5.0f} s] {msg}", flush=True)

    def sub(self, cmd, log, timeout, **kw):
        """Runs a command with its output in LOGS/log; returns its exit status (124: timeout)."""
        with open(os.path.join(self.logs, log), "a") as f:
            f.write("$ " + " ".join(cmd) + "\n")
            f.flush()
            try:
                return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=max(5, timeout), **kw).returncode
            except subprocess.TimeoutExpired:
                f.write(f"[TIMEOUT after {timeout:.0f} s]\n")
                return 124
            except OSError as e:
                f.write(f"[cannot run: {e}]\n")
                return 127


def start_builds(run):
    nvcc = os.environ.get("NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    builds = {}
    for name in ("peers_cub_argmax", "stream_meter"):
        out = os.path.join(WORK, name)
        if os.path.exists(out):
            os.remove(out)
        cmd = [nvcc, "-O3", "-arch=sm_90", "-std=c++17", os.path.join(HERE, name + ".cu"), "-o", out]
        try:
            builds[name] = subprocess.Popen(cmd, stdout=open(os.path.join(run.logs, f"build_{name}.log"), "w"),
                                            stderr=subprocess.STDOUT)
        except OSError as e:
            run.failed.append(f"build {name}: {e}")
    return builds


def start_warm(run, cases):
    env = dict(os.environ, TORCHINDUCTOR_COMPILE_THREADS="1")
    procs = []
    for c in cases:
        log = open(os.path.join(run.logs, f"warm_{c['name']}.log"), "w")
        procs.append((c["name"], subprocess.Popen([sys.executable, os.path.abspath(__file__), WORK,
                                                   "--warm-case", c["name"]], stdout=log,
                                                  stderr=subprocess.STDOUT, env=env)))
    return procs


def wait_warm(run, procs):
    deadline = time.time() + min(run.opts.warm_budget_s, max(10, run.left(240)))
    warm = {}
    for name, p in procs:
        try:
            p.wait(timeout=max(1.0, deadline - time.time()))
            warm[name] = "ok" if p.returncode == 0 else f"exit {p.returncode} (logs/warm_{name}.log)"
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            warm[name] = "stopped at the warm budget (compiled in the timing process instead)"
    run.say("warm: " + ", ".join(f"{k} {v}" for k, v in warm.items()))
    return warm


def polyred_runs(run, cases):
    res = {}
    for c in cases:
        name = c["name"]
        out = os.path.join(WORK, f"polyred_{name}.json")
        if os.path.exists(out):
            os.remove(out)
        timeout = min(run.opts.polyred_timeout_s, run.left(150))
        rc = run.sub([polyred_bin(), "run", c["file"], "--json=" + out, f"--iterations={run.opts.iterations}"],
                     "polyred.log", timeout)
        r = dict(exit=rc)
        try:
            with open(out) as f:
                doc = json.load(f)
            got = doc["results"][0]
            r.update(us=got.get("micros"), ok=got.get("ok"), kernels=got.get("kernels"),
                     bytes_read=got.get("bytes_read"), bytes_written=got.get("bytes_written"),
                     bytes=got.get("bytes"), device=doc.get("device"))
        except (OSError, ValueError, KeyError, IndexError) as e:
            r["error"] = f"no result (exit {rc}; see logs/polyred.log): {type(e).__name__}"
            if rc == 124:  # the limit comes from what --budget-s leaves after the 150 s kept for the peers
                r["error"] += (f"; stopped at its {max(5, timeout):.0f} s limit -- raise --budget-s "
                               f"(150 s of it are kept for the peers and the meter)")
        if r.get("ok") is False:
            run.wrong = True
        if "error" in r:
            run.failed.append(f"polyred {name}")
        res[name] = r
        run.say(f"polyred {name}: " + (f"{r['us']} us, {r['kernels']} kernel(s), ok={r['ok']}" if "error" not in r
                                       else r["error"]))
    return res


def declared_bytes(case):
    """(read, written) from the composite file's declared inputs and outputs."""
    with open(case["file"]) as f:
        doc = json.load(f)

    def size(d):
        n = ITEMSIZE.get(d["data_type"], 4)
        for k in d["shape"]:
            n *= k
        return n
    return (sum(size(d) for arg in doc["input_desc"] for d in arg if "value" not in d),
            sum(size(d) for d in doc["output_desc"]))


def torch_runs(run, cases):
    path = os.path.join(WORK, "torch.jsonl")
    if os.path.exists(path):
        os.remove(path)
    timeout = run.left(70)
    cmd = [sys.executable, os.path.abspath(__file__), WORK, "--torch-time", "--torch-out", path,
           "--iterations", str(run.opts.iterations), "--cases", ",".join(c["name"] for c in cases),
           "--case-timeout-s", str(run.opts.case_timeout_s)]
    rc = run.sub(cmd, "torch.log", timeout)
    recs, env = {}, None
    if os.path.exists(path):
        for line in open(path):
            r = json.loads(line)
            if r.get("kind") == "env":
                env = r
            elif r.get("kind") == "case":
                recs[r["case"]] = r
    if rc == 10:
        run.wrong = True
    elif rc != 0:
        run.failed.append(f"torch (exit {rc}, logs/torch.log)")
    run.say(f"torch: exit {rc}, {len(recs)} cases")
    return recs, env


def cub_run(run, builds, cases):
    case = next((c for c in cases if c["torch"] == "argmax"), None)
    if case is None:
        return None
    b = builds.get("peers_cub_argmax")
    if b is not None:
        b.wait()
    exe = os.path.join(WORK, "peers_cub_argmax")
    if not os.path.exists(exe):
        run.failed.append("cub: peers_cub_argmax was not built (logs/build_peers_cub_argmax.log)")
        return dict(error="not built")
    rows, cols = case["inputs"][0][1]
    out = os.path.join(WORK, "cub_argmax.json")
    rc = run.sub([exe, str(rows), str(cols), out, f"--iterations={run.opts.iterations}"], "cub.log",
                 min(90, run.left(30)))
    try:
        r = json.load(open(out))
    except (OSError, ValueError):
        run.failed.append(f"cub (exit {rc})")
        return dict(error=f"exit {rc}, no result (logs/cub.log)")
    if not r.get("ok"):
        run.wrong = True
    return r


def meter_runs(run, builds, cases, poly):
    b = builds.get("stream_meter")
    if b is not None:
        b.wait()
    exe = os.path.join(WORK, "stream_meter")
    if not os.path.exists(exe):
        run.failed.append("meter: stream_meter was not built (logs/build_stream_meter.log)")
        return {}
    lines = []
    for c in cases:
        p = poly.get(c["name"], {})
        if p.get("bytes_read") is not None:
            read, written, src = p["bytes_read"], p["bytes_written"], "polyred"
        else:
            (read, written), src = declared_bytes(c), "declared"
        lines.append(f"{c['name']} {read} {written}\n")
        p.setdefault("bytes_source", src)
    cases_txt, out = os.path.join(WORK, "meter_cases.txt"), os.path.join(WORK, "meter.jsonl")
    with open(cases_txt, "w") as f:
        f.writelines(lines)
    if os.path.exists(out):
        os.remove(out)
    rc = run.sub([exe, cases_txt, out, f"--iterations={run.opts.iterations}"], "meter.log", min(150, run.left(10)))
    res = {}
    if os.path.exists(out):
        for line in open(out):
            r = json.loads(line)
            res[r["key"]] = r
    if rc != 0:
        run.failed.append(f"meter (exit {rc})")
    return res


def fmt(v, digits=1):
    return "-" if v is None else f"{v:.{digits}f}"


def peer_cell(t, label):
    if t is None:
        return "-"
    if label + "_error" in t:
        return "error"
    us = t.get(label + "_us")
    if us is None:
        return "-"
    return f"{us:.1f}" + ("" if t.get(label + "_ok") else " WRONG")


def table(cases, poly, torch_recs, cub, meter):
    rows = ["| case | MB moved | launches | polyred us | limit us | % limit | eager us | compile us | CUB us "
            "| x eager | x compile |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    records = []
    for c in cases:
        n = c["name"]
        p, t, m = poly.get(n, {}), torch_recs.get(n), meter.get(n)
        nbytes = p.get("bytes")
        if nbytes is None:
            r, w = declared_bytes(c)
            nbytes = r + w
        pus = p.get("us") if p.get("ok") else None
        lim = m.get("us") if m else None
        cus = None
        if c["torch"] == "argmax" and cub and cub.get("us") is not None:
            cus = cub["us"]
        rec = dict(case=n, file=os.path.relpath(c["file"], REPO) if c["file"].startswith(REPO) else c["file"],
                   bytes=nbytes, polyred=p, limit=m, torch=t, cub=cub if c["torch"] == "argmax" else None)

        def speedup(label):
            if not (pus and t and t.get(label + "_ok") and t.get(label + "_us")):
                return None
            return t[label + "_us"] / pus
        rec["pct_limit"] = 100.0 * lim / pus if (pus and lim) else None
        rec["x_eager"], rec["x_compile"] = speedup("eager"), speedup("compile")
        records.append(rec)
        pcell = "error" if "error" in p else ("WRONG" if p.get("ok") is False else fmt(p.get("us")))
        ccell = "-" if c["torch"] != "argmax" else (
            "error" if not cub or "error" in cub else fmt(cus) + ("" if cub.get("ok") else " WRONG"))
        rows.append(f"| {n} | {nbytes / 1e6:.1f} | {p.get('kernels', '-')} | {pcell} | {fmt(lim)} | "
                    f"{fmt(rec['pct_limit'], 0)}{'%' if rec['pct_limit'] else ''} | {peer_cell(t, 'eager')} | "
                    f"{peer_cell(t, 'compile')} | {ccell} | {fmt(rec['x_eager'], 2)} | {fmt(rec['x_compile'], 2)} |")
    return "\n".join(rows), records


def main_run(opts):
    run = Run(opts)
    os.makedirs(opts.outdir, exist_ok=True)
    os.environ.setdefault("POLYRED_CACHE_DIR", os.path.join(WORK, "cache", "polyred"))
    os.environ["LD_LIBRARY_PATH"] = "/usr/local/cuda/lib64" + (
        ":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH") else "")
    rc = run.sub([sys.executable, os.path.join(HERE, "make_tuple_workloads.py"), "--out", WORK], "workloads.log", 60)
    if rc != 0:
        print("tuple_bench: make_tuple_workloads.py failed (logs/workloads.log)")
        return 3
    cases = load_cases(opts.only)
    run.say(f"{len(cases)} cases in {WORK}/tuple; polyred: {polyred_bin()}")
    builds = start_builds(run)
    warm = wait_warm(run, start_warm(run, cases)) if not opts.no_warm else {}
    poly = polyred_runs(run, cases)
    torch_recs, torch_env = torch_runs(run, cases)
    cub = cub_run(run, builds, cases)
    run.say(f"cub: {cub}")
    meter = meter_runs(run, builds, cases, poly)
    run.say(f"meter: {len(meter)} cases")
    for b in builds.values():
        if b.poll() is None:
            b.kill()

    def query(field):
        try:
            return subprocess.run(["nvidia-smi", f"--query-gpu={field}", "--format=csv,noheader"], capture_output=True,
                                  text=True, timeout=20).stdout.strip().splitlines()[0]
        except (OSError, subprocess.TimeoutExpired, IndexError):
            return None
    env = dict(gpu=query("name"), driver=query("driver_version"), torch=torch_env,
               date=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), iterations=opts.iterations,
               polyred=polyred_bin(), wall_s=round(time.time() - run.start, 1))
    text, records = table(cases, poly, torch_recs, cub, meter)
    head = (f"# Tuple reductions (issue #13): polyred against torch and CUB\n\n"
            f"Device {env['gpu']}, driver {env['driver']}, torch {(torch_env or {}).get('torch')}, "
            f"CUDA {(torch_env or {}).get('cuda')}, triton {(torch_env or {}).get('triton')}, {env['date']}. "
            f"Method: docs/method.md (CUDA graph, L2 flush, median of {opts.iterations}). "
            f"limit = bench/stream_meter.cu over the bytes polyred reports (inputs read once + outputs written); "
            f"% limit = limit / polyred; x PEER = peer time / polyred time (> 1: polyred faster). "
            f"CUB: cub::DeviceSegmentedReduce::ArgMax, argmax only.\n\n")
    notes = []
    if run.failed:
        notes.append("Failed steps: " + "; ".join(run.failed))
    if run.wrong:
        notes.append("WRONG RESULTS: see tuple_bench.json")
    doc = head + text + "\n" + ("\n" + "\n".join(notes) + "\n" if notes else "")
    print(doc)
    with open(os.path.join(opts.outdir, "tuple_bench.md"), "w") as f:
        f.write(doc)
    with open(os.path.join(opts.outdir, "tuple_bench.json"), "w") as f:
        json.dump(dict(env=env, warm=warm, cases=records, failed=run.failed, wrong=run.wrong), f, indent=1)
    run.say("done")
    return 1 if run.wrong else 3 if run.failed else 0


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("outdir", help="OUTDIR (results); in the internal modes, the work dir")
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--budget-s", type=float, default=450, help="the whole run (must stay under 8 minutes)")
    p.add_argument("--warm-budget-s", type=float, default=170)
    p.add_argument("--polyred-timeout-s", type=float, default=150, help="per file")
    p.add_argument("--case-timeout-s", type=float, default=120, help="torch, per case and peer")
    p.add_argument("--cases", default="", help="comma list of case names (default: all)")
    p.add_argument("--no-warm", action="store_true", help="no parallel torch.compile warm-up")
    p.add_argument("--warm-case", default="", help=argparse.SUPPRESS)
    p.add_argument("--torch-time", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--torch-out", default="", help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    opts.only = {c for c in opts.cases.split(",") if c} or None
    return opts


def main(argv=None):
    opts = parse_args(argv)
    if opts.warm_case or opts.torch_time:
        sys.path.insert(0, HERE)
        return warm_case(opts.warm_case) if opts.warm_case else torch_time(opts)
    return main_run(opts)


if __name__ == "__main__":
    sys.exit(main())
