#!/usr/bin/env python3
"""StandardNormal's benchmark: polyred's counter-based normal values (PhiloxNormal,
docs/format.md) generated alone, added to a tensor, and added then summed over rows,
against torch eager and torch.compile writing the same computation with torch.randn
(Philox too, in Inductor's generated kernel), and the practical limit, in one run.

    python3 bench/random_bench.py [--iterations 50] [--cases a,b]

polyred runs through its Python package (POLYRED_LIBRARY) on the same torch tensors as
the peers, timed by bench/peers_torch.py's Timer (CUDA graph, L2 flush, median). The
numbers differ between implementations (each generator is its own), so every result is
checked by its statistics: the normal values (or the noise recovered from the output)
have mean 0 and standard deviation 1 within 5 standard errors. The limit is
bench/stream_meter.cu over the bytes each case must move (built with nvcc here).
Prints a markdown table; exit 1 if a result failed its check.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
sys.path.insert(0, HERE)

ROWS, COLS, NOISE = 8192, 8192, 0.1

# name: (dtype, what the polyred graph and the torch function compute)
CASES = {
    "normal_f32": ("float32", "values"),        # StandardNormal [8192, 8192]
    "noise_add_f16": ("float16", "add"),        # x + 0.1 N
    "noise_row_sum_f32": ("float32", "rowsum"),  # sum over rows of x + 0.1 N
}


def polyred_kernel(name):
    import polyred
    dtype, kind = CASES[name]
    b = polyred.Builder(name)
    noise = b.standard_normal((ROWS, COLS), seed=1234, dtype=dtype)
    if kind == "values":
        b.output(noise)
    else:
        x = b.input("x", dtype, (ROWS, COLS))
        y = b.binary("add", x, b.binary("mul", noise, b.constant(NOISE, dtype)))
        b.output(y if kind == "add" else b.reduce_sum(y, axes=[1]))
    return b.compile()


def torch_function(name):
    import torch
    dtype, kind = CASES[name]
    t = getattr(torch, dtype)
    if kind == "values":
        return lambda: torch.randn((ROWS, COLS), dtype=t, device="cuda")
    if kind == "add":
        return lambda x: x + NOISE * torch.randn_like(x)
    return lambda x: (x + NOISE * torch.randn_like(x)).sum(dim=1)


def noise_statistics(name, args, out):
    """(mean, std) of the standard normal values a result holds."""
    import torch
    kind = CASES[name][1]
    out = out[0] if isinstance(out, (tuple, list)) else out
    if kind == "values":
        z = out.double()
    elif kind == "add":
        z = (out.double() - args[0].double()) / NOISE
    else:  # each row sum carries the sum of COLS noise values
        z = (out.double() - args[0].double().sum(dim=1)) / (NOISE * math.sqrt(COLS))
    return float(z.mean()), float(z.std())


def check(name, args, out):
    mean, std = noise_statistics(name, args, out)
    n = ROWS if CASES[name][1] == "rowsum" else ROWS * COLS
    se = 1 / math.sqrt(n)
    # float16 outputs round x + 0.1 z: the recovered noise carries that rounding too
    slack = 0.02 if CASES[name][0] == "float16" else 0
    return abs(mean) <= 5 * se + slack and abs(std - 1) <= 5 * se * math.sqrt(2) + slack, dict(mean=mean, std=std)


def case_bytes(name, args, out):
    out = out[0] if isinstance(out, (tuple, list)) else out
    return sum(a.numel() * a.element_size() for a in args), out.numel() * out.element_size()


def meter(cases_bytes, iterations):
    nvcc = os.environ.get("NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    work = tempfile.mkdtemp(prefix="random-bench-")
    exe = os.path.join(work, "stream_meter")
    subprocess.run([nvcc, "-O3", "-arch=sm_90", "-std=c++17", os.path.join(HERE, "stream_meter.cu"), "-o", exe],
                   check=True)
    txt, out = os.path.join(work, "cases.txt"), os.path.join(work, "meter.jsonl")
    with open(txt, "w") as f:
        for name, (read, written) in cases_bytes.items():
            f.write(f"{name} {max(read, 16)} {written}\n")
    subprocess.run([exe, txt, out, f"--iterations={iterations}"], check=True)
    return {r["key"]: r["us"] for r in map(json.loads, open(out))}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--cases", default=",".join(CASES))
    opts = p.parse_args(argv)
    import peers_torch as pt  # first: it sets the Inductor/Triton cache directories
    import torch
    timer = pt.Timer(opts.iterations)
    rows, wrong, moved = [], False, {}
    for name in opts.cases.split(","):
        dtype = getattr(torch, CASES[name][0])
        torch.manual_seed(1)
        args = [] if CASES[name][1] == "values" else [torch.randn((ROWS, COLS), device="cuda").to(dtype)]
        rec = dict(case=name)
        peers = (("polyred", lambda: polyred_kernel(name)), ("eager", lambda: torch_function(name)),
                 ("compile", lambda: pt.compile_fn(torch_function(name))))
        with torch.no_grad():
            for label, make in peers:
                try:
                    fn = make()
                    out = fn(*args)
                    ok, stats = check(name, args, out)
                    moved[name] = case_bytes(name, args, out)
                    rec[label + "_ok"], rec[label + "_stats"] = ok, stats
                    wrong |= not ok
                    rec[label + "_us"] = timer.time(fn, args)
                except Exception as e:  # noqa: BLE001 - recorded, the run goes on
                    rec[label + "_error"] = f"{type(e).__name__}: {e}"[:300]
        rows.append(rec)
        print(json.dumps(rec), flush=True)
    limits = meter(moved, opts.iterations)
    print(f"\n{torch.cuda.get_device_name(0)}, torch {torch.__version__}, {opts.iterations} launches per median\n")
    print("| case | MB moved | polyred us | limit us | % limit | eager us | compile us | x eager | x compile |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        n, lim = r["case"], limits.get(r["case"])
        mb = sum(moved.get(n, (0, 0))) / 1e6
        pu, eu, cu = r.get("polyred_us"), r.get("eager_us"), r.get("compile_us")
        f = lambda v: "-" if v is None else f"{v:.1f}"
        ratio = lambda a, b: "-" if a is None or b is None else f"{a / b:.2f}"
        pct = "-" if pu is None or lim is None else f"{100 * lim / pu:.0f}%"
        print(f"| {n} | {mb:.1f} | {f(pu)} | {f(lim)} | {pct} | {f(eu)} | {f(cu)} | {ratio(eu, pu)} | {ratio(cu, pu)} |")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
