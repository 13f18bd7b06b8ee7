#!/usr/bin/env python3
"""Time PyTorch eager and torch.compile on composite JSON files, per docs/method.md.

    peers_torch.py --manifest M --out OUT.jsonl [--groups G,..] [--compile-groups G,..]
                   [--iterations 50] [--budget-s S] [--case-timeout-s S]
    peers_torch.py --manifest M --out OUT.jsonl --warm N [--budget-s S]

The manifest (written by bench/run_polyred.py) lists the workload files; only the ones
polyred compiles ("in_scope") are run, so every peer sees the same file set. Each file
is translated by bench/composite_torch.py.

Timing mode (the default) writes JSON lines: one "env" record, one "ceilings" record
(read ceiling: torch.sum over 2 GiB of f32; launch floor: x + 1 on one element), then
one "case" record per file with eager_us / compile_us, the relative error of each
against a float64 reference of the same graph (composite_torch "reference" mode), and
ok flags. Per timed call: the L2 is flushed (256 MiB write), CUDA events around one
CUDA-graph replay of everything the function launches, median of --iterations (>= 50).
Inputs are random, never zero (bool 99.9% true, ints in [-100, 100)). A wrong result
is printed as WRONG and makes the exit status 10; an exception or a timeout is recorded
in the case's "*_error" field and the run goes on (exit 3: no PyTorch or no GPU).

Warm mode (--warm N) compiles every file of --compile-groups with torch.compile in N
worker processes at once (each calls the compiled function once, so Inductor's
autotuning runs there), filling Inductor's and Triton's on-disk caches; a later timing
run then loads the compiled code instead of compiling it. Workers still running at
--budget-s are stopped; their files are compiled in the timing run instead.
"""
import argparse
import gc
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time

# Inductor and Triton caches shared by the warm workers and the timing run (set before torch loads).
_CACHE = os.environ.get("PEERS_CACHE_DIR", "/tmp/polyred-bench-cache")
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(_CACHE, "inductor"))
os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(_CACHE, "triton"))
os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "1")
os.environ.setdefault("TORCHINDUCTOR_AUTOGRAD_CACHE", "1")
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")

try:
    import torch  # noqa: E402
except ImportError as _e:
    print(f"peers_torch: PyTorch is not installed here ({_e})", file=sys.stderr)
    sys.exit(3)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import composite_torch as ct  # noqa: E402

FLUSH_BYTES = 256 * 1024 * 1024
# ||out - ref|| / ||ref|| allowed per output dtype (METHOD.md: f32 lands far under 1e-3).
TOLERANCE = {torch.float64: 1e-9, torch.float32: 1e-3, torch.float16: 1e-2, torch.bfloat16: 5e-2}
TOLERANCE_INEXACT_INT = 1e-2  # int/bool outputs computed from floats (rounding may flip a few)


# ---------------------------------------------------------------- inputs and timing


def rand(dt, shape, device):
    """Random, never zero; bool mostly true; ints in [-100, 100)."""
    if dt == torch.bool:
        return torch.rand(shape, device=device) < 0.999
    if dt in (torch.int32, torch.int64, torch.int8, torch.uint8):
        low = 0 if dt == torch.uint8 else -100
        return torch.randint(low, 100, shape, device=device, dtype=dt)
    x = (torch.rand(shape, device=device, dtype=torch.float32) * 2 - 1).to(dt)
    return torch.where(x == 0, torch.full_like(x, 0.5), x)


class Timer:
    """L2 flush + events around one CUDA-graph replay; median over the calls."""

    def __init__(self, iterations):
        self.iterations = iterations
        self.flush = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")

    @staticmethod
    def graph_of(fn, args):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                fn(*args)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        # Captured on the warm-up stream: a polyred kernel's first launch on a stream sets
        # up its workspaces, which a capture may not do.
        with torch.cuda.graph(g, stream=s):
            fn(*args)
        g.replay()  # the first replay uploads the graph
        torch.cuda.synchronize()
        return g

    def median_us(self, g):
        pairs = []
        for _ in range(self.iterations):
            self.flush.zero_()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            g.replay()
            b.record()
            pairs.append((a, b))
        torch.cuda.synchronize()
        return statistics.median(a.elapsed_time(b) * 1000.0 for a, b in pairs)

    def time(self, fn, args):
        g = self.graph_of(fn, args)
        try:
            return round(self.median_us(g), 3)
        finally:
            del g


class Deadline:
    """Raises TimeoutError in the main thread after `seconds` (SIGALRM); 0 = none."""

    def __init__(self, seconds):
        self.seconds = int(math.ceil(seconds)) if seconds else 0

    def __enter__(self):
        if self.seconds:
            signal.signal(signal.SIGALRM, self._fire)
            signal.alarm(self.seconds)

    def __exit__(self, *exc):
        if self.seconds:
            signal.alarm(0)
        return False

    def _fire(self, *_):
        raise TimeoutError(f"case took longer than {self.seconds} s")


# ---------------------------------------------------------------- correctness


def rel_error(got, ref):
    """||got - ref|| / ||ref|| over finite values; inf if NaN/inf positions or values differ."""
    g, r = got.detach().to(torch.float64).reshape(-1), ref.detach().to(torch.float64).reshape(-1)
    if g.shape != r.shape:
        return math.inf
    gn, rn = torch.isnan(g), torch.isnan(r)
    if not torch.equal(gn, rn):
        return math.inf
    special = torch.isinf(g) | torch.isinf(r)
    if not torch.equal(g[special], r[special]):
        return math.inf
    keep = ~(gn | special)
    diff, norm = torch.linalg.vector_norm(g[keep] - r[keep]).item(), torch.linalg.vector_norm(r[keep]).item()
    return diff / norm if norm > 0 else diff


def tolerance(dtype, comp):
    """An output's tolerance: its dtype's, loosened to that of the least precise float in the
    graph (torch.compile keeps f16 intermediates in f32, eager rounds them); exact for
    integer/bool outputs of graphs without floats."""
    inside = [TOLERANCE[ct.DT[n]] for n in comp.dtypes() if ct.DT.get(n) in TOLERANCE]
    if dtype in TOLERANCE:
        return max([TOLERANCE[dtype]] + inside)
    return TOLERANCE_INEXACT_INT if inside else 0.0


# A thresholded output (a dropout mask and what it feeds) may differ from the reference
# in the elements on the threshold: at most this fraction of elements, and the fraction
# of nonzero (kept) elements within this much of the reference's.
MASK_FLIPS = 1e-3
MASK_KEPT = 1e-3


def mask_agrees(got, ref, tol):
    """(ok, fraction of differing elements) of a thresholded output: elements differ when
    they are not within `tol` (relative and absolute) of the reference."""
    g, r = got.detach().reshape(-1).to(torch.float64), ref.detach().reshape(-1).to(torch.float64)
    if g.shape != r.shape or g.numel() == 0:
        return g.shape == r.shape, 0.0
    differ = (~torch.isclose(g, r, rtol=tol, atol=tol, equal_nan=True)).double().mean().item()
    kept = abs((g != 0).double().mean().item() - (r != 0).double().mean().item())
    return differ <= MASK_FLIPS and kept <= MASK_KEPT, differ


def check(outs, refs, comp):
    """(ok, worst relative error, how) of a peer's outputs against the reference outputs:
    element by element, except thresholded outputs (Composite.thresholded_outputs) that
    fail that, which pass when only elements on the threshold flip ("mask")."""
    worst, ok, how = 0.0, len(outs) == len(refs), "elementwise"
    masks = set(comp.thresholded_outputs())
    for k, (o, r) in enumerate(zip(outs, refs)):
        e = rel_error(o, r)
        if e > tolerance(o.dtype, comp) and k in masks:
            agrees, flipped = mask_agrees(o, r, max(tolerance(o.dtype, comp), 1e-6))
            if agrees:
                how = "mask"  # compared by kept fraction; flipped elements on the threshold
                continue
        worst = max(worst, e)
        ok = ok and e <= tolerance(o.dtype, comp)
    return ok, worst, how


# ---------------------------------------------------------------- one case


def as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


class CaseInputs:
    """The inputs of one case: `timed` for the timing runs (a graph that writes into its
    inputs changes them at every replay) and fresh(), untouched inputs for every check."""

    def __init__(self, comp):
        self.timed = [rand(dt, shape, "cuda") for dt, shape in comp.input_specs()]
        self.pristine = [a.clone() for a in self.timed] if comp.has_writes() else None

    def fresh(self):
        return [a.clone() for a in self.pristine] if self.pristine else self.timed


def compile_fn(fn):
    torch._dynamo.reset()
    return torch.compile(fn, dynamic=False)


def run_peer(rec, label, fn, inputs, refs, comp, timer):
    """Checks and times one peer (eager or compile); fills rec[label + '_*']."""
    t0 = time.time()
    outs = as_tuple(fn(*inputs.fresh()))
    torch.cuda.synchronize()
    rec[label + "_first_call_s"] = round(time.time() - t0, 3)
    ok, err, how = check(outs, refs, comp)
    rec[label + "_ok"], rec[label + "_rel_err"] = ok, (None if math.isinf(err) else err)
    if how != "elementwise":
        rec[label + "_check"] = how
    if not ok:
        print(f"WRONG RESULT: {label} on {rec['key']}: relative error {err:.3g}", flush=True)
    rec[label + "_us"] = timer.time(fn, inputs.timed)
    return outs


def run_case(entry, opts, timer):
    comp = ct.load(entry["file"])
    rec = dict(kind="case", key=entry["key"], group=entry["group"], net=entry.get("net"))
    torch.manual_seed(entry.get("seed", 1))
    inputs = CaseInputs(comp)
    eager = ct.make_function(comp, "native", "cuda")
    with torch.no_grad():
        refs = as_tuple(ct.make_function(comp, "reference", "cuda")(*ct.reference_inputs(inputs.fresh())))
        outs = ()
        try:
            outs = run_peer(rec, "eager", eager, inputs, refs, comp, timer)
        except Exception as e:  # noqa: BLE001 - recorded, the run goes on
            rec["eager_error"] = f"{type(e).__name__}: {e}"[:300]
        rec["bytes"] = sum(a.numel() * a.element_size() for a in inputs.timed) + \
            sum(o.numel() * o.element_size() for o in outs)
        if entry["group"] in opts.compile_groups:
            try:
                run_peer(rec, "compile", compile_fn(eager), inputs, refs, comp, timer)
            except Exception as e:  # noqa: BLE001
                rec["compile_error"] = f"{type(e).__name__}: {e}"[:300]
        if opts.polyred_python:
            try:
                run_peer(rec, "polyred_torch", polyred_kernel(entry["file"]), inputs, refs, comp, timer)
            except Exception as e:  # noqa: BLE001
                rec["polyred_torch_error"] = f"{type(e).__name__}: {e}"[:300]
    return rec


def polyred_kernel(path):
    """polyred's kernels for `path` through its Python package (python/, over the C API),
    called on the peers' own torch tensors: the same buffers and the same harness as
    torch.compile. (Where buffers sit matters: on the H100 one polyred kernel ran 16.2 us
    on torch's tensors and 18.2 us on buffers from cuMemAlloc, docs/results/notes-2026-11-27.md.)"""
    import polyred
    return polyred.load(path)


# ---------------------------------------------------------------- ceilings and environment


def ceilings(timer):
    n = 1 << 29  # 2 GiB of f32
    x = rand(torch.float32, (n,), "cuda")
    us = timer.time(lambda t: torch.sum(t), [x])
    del x
    one = rand(torch.float32, (1,), "cuda")
    floor = timer.time(lambda t: t + 1, [one])
    return dict(kind="ceilings", read_ceiling=dict(impl="torch.sum f32", bytes=4 * n, us=us,
                                                   GBps=round(4 * n / us / 1e3, 1)),
                launch_floor=dict(impl="torch x + 1 (one element)", us=floor))


def environment():
    p = torch.cuda.get_device_properties(0)
    return dict(kind="env", device=p.name, sms=p.multi_processor_count, torch=torch.__version__,
                cuda=torch.version.cuda, triton=_triton_version(), date=time.strftime("%Y-%m-%d %H:%M:%S"))


def _triton_version():
    try:
        import triton
        return triton.__version__
    except ImportError:
        return None


# ---------------------------------------------------------------- driver


def entries_of(opts):
    with open(opts.manifest) as f:
        manifest = json.load(f)
    order = {g: k for k, g in enumerate(opts.groups)}
    picked = [e for e in manifest["entries"] if e.get("in_scope") and e["group"] in order]
    return sorted(picked, key=lambda e: order[e["group"]])  # stable: manifest order within a group


def write(out, rec):
    out.write(json.dumps(rec) + "\n")
    out.flush()


def summary_line(rec):
    parts = [rec["key"]]
    for label in ("eager", "compile", "polyred_torch"):
        if label + "_us" in rec:
            parts.append(f"{label} {rec[label + '_us']:.2f} us" + ("" if rec.get(label + "_ok") else " WRONG"))
        elif label + "_error" in rec:
            parts.append(f"{label} error: {rec[label + '_error'][:80]}")
    return "  ".join(parts)


def timing_run(opts):
    if not torch.cuda.is_available():
        print("peers_torch: no CUDA device", file=sys.stderr)
        return 3
    torch.backends.cuda.matmul.allow_tf32 = False
    timer = Timer(opts.iterations)
    start, wrong = time.time(), False
    with open(opts.out, "a") as out:
        write(out, environment())
        write(out, ceilings(timer))
        for entry in entries_of(opts):
            if opts.budget_s and time.time() - start > opts.budget_s:
                write(out, dict(kind="case", key=entry["key"], group=entry["group"], net=entry.get("net"),
                                skipped="budget"))
                continue
            try:
                with Deadline(opts.case_timeout_s):
                    rec = run_case(entry, opts, timer)
            except Exception as e:  # noqa: BLE001 - a timeout or a failure outside the peers
                rec = dict(kind="case", key=entry["key"], group=entry["group"], net=entry.get("net"),
                           error=f"{type(e).__name__}: {e}"[:300])
            wrong = wrong or rec.get("eager_ok") is False or rec.get("compile_ok") is False
            write(out, rec)
            print(summary_line(rec) if "error" not in rec else f"{entry['key']}: {rec['error']}", flush=True)
            gc.collect()
            torch.cuda.empty_cache()
    print(f"peers_torch: done in {time.time() - start:.0f} s" + ("; WRONG RESULTS above" if wrong else ""))
    return 10 if wrong else 0


def warm_worker(opts):
    """Compiles (and runs once) this worker's share of the files; one JSON line per file."""
    k, n = (int(v) for v in opts.warm_worker.split("/"))
    todo = [e for e in entries_of(opts) if e["group"] in opts.compile_groups][k::n]
    with open(opts.out, "a") as out, torch.no_grad():
        for entry in todo:
            rec = dict(kind="warm", key=entry["key"])
            t0 = time.time()
            try:
                comp = ct.load(entry["file"])
                args = [rand(dt, shape, "cuda") for dt, shape in comp.input_specs()]
                compile_fn(ct.make_function(comp, "native", "cuda"))(*args)
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001
                rec["error"] = f"{type(e).__name__}: {e}"[:300]
            rec["compile_s"] = round(time.time() - t0, 2)
            write(out, rec)
            args = None
            torch.cuda.empty_cache()
    return 0


def warm(opts):
    """Starts opts.warm workers, waits for them until the budget, stops the rest."""
    base = [sys.executable, os.path.abspath(__file__), "--manifest", opts.manifest,
            "--groups", ",".join(opts.groups), "--compile-groups", ",".join(opts.compile_groups)]
    procs = [subprocess.Popen(base + ["--out", f"{opts.out}.w{k}", "--warm-worker", f"{k}/{opts.warm}"])
             for k in range(opts.warm)]
    deadline = time.time() + (opts.budget_s or 1e9)
    for p in procs:
        try:
            p.wait(timeout=max(1.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            print(f"peers_torch warm: worker {p.pid} stopped at the budget", flush=True)
    with open(opts.out, "a") as out:
        for k in range(opts.warm):
            part = f"{opts.out}.w{k}"
            if os.path.exists(part):
                out.write(open(part).read())
                os.remove(part)
    return 0


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--manifest", required=True)
    p.add_argument("--out", required=True, help="JSON lines, appended to")
    p.add_argument("--groups", default="table2,single,corpus")
    p.add_argument("--compile-groups", default="table2,single,corpus")
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--budget-s", type=float, default=0, help="0: none")
    p.add_argument("--case-timeout-s", type=float, default=120)
    p.add_argument("--warm", type=int, default=0, help="compile in N worker processes, no timing")
    p.add_argument("--polyred-python", action="store_true",
                   help="also time polyred through its Python package on the same torch tensors")
    p.add_argument("--warm-worker", default="", help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    opts.groups = [g for g in opts.groups.split(",") if g]
    opts.compile_groups = {g for g in opts.compile_groups.split(",") if g}
    if opts.iterations < 50:
        print("peers_torch: note: fewer than 50 iterations is below METHOD.md's minimum", file=sys.stderr)
    return opts


def main(argv=None):
    opts = parse_args(argv)
    if opts.warm_worker:
        return warm_worker(opts)
    if opts.warm:
        return warm(opts)
    return timing_run(opts)


if __name__ == "__main__":
    sys.exit(main())
