#!/usr/bin/env python3
"""Symbolic against static kernels: one polyred program compiled for every sequence
length against one compiled per length, and torch.compile(dynamic=True), over 64
sequence lengths from 1 to 8192 (docs/design/symbolic-dims.md; issue "Dynamic shapes").

    PYTHONPATH=python:bench POLYRED_LIBRARY=build/src/libpolyred.so \
        python3 bench/symbolic.py [--ops layer_norm,rms_norm,softmax,cross_entropy] [--lengths 64] [--out F.jsonl]

Cases (bf16 in, float32 inside, batch 4): layer norm over 1024 columns, RMSNorm as
Hugging Face's Llama writes it over 4096, softmax over 4096 (bf16 out), the
cross-entropy loss of each row over a vocabulary of 32000 (float32 out); the sequence
length S is the symbol (rows 4*S). Per length, every column is checked against eager
PyTorch (max abs error within bf16's 2e-2 of the output's scale) and timed as
bench/peers_torch.py times (L2 flush, events around one CUDA-graph replay, median of
50). The practical limit of each case is a streaming copy of the same bytes. Prints a
markdown table per op and a summary: the geometric mean of symbolic / static and its
worst case, and symbolic against torch.compile(dynamic=True).
"""
import argparse
import json
import math
import random
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

import torch

import polyred
from peers_torch import Timer

BATCH = 4
EPS = 1e-5


def layer_norm_graph(rows, width):
    b = polyred.Builder("layer_norm")
    x = b.cast(b.input("x", "bfloat16", [BATCH, rows, width]), "float32")
    w, bias = b.input("w", "float32", [width]), b.input("b", "float32", [width])
    inv = b.constant(1.0 / width, "float32")
    mean = b.binary("Mul", b.reduce_sum(x, axes=[2], keep_dims=True), inv)
    d = b.binary("Sub", x, mean)
    var = b.binary("Mul", b.reduce_sum(b.binary("Mul", d, d), axes=[2], keep_dims=True), inv)
    scale = b.unary("Rsqrt", b.binary("Add", var, b.constant(EPS, "float32")))
    y = b.binary("Add", b.binary("Mul", b.binary("Mul", d, scale), w), bias)
    b.output(b.cast(y, "bfloat16"))
    return b


def rms_norm_graph(rows, width):
    b = polyred.Builder("rms_norm")
    x = b.cast(b.input("x", "bfloat16", [BATCH, rows, width]), "float32")
    w = b.input("w", "float32", [width])
    ms = b.binary("Mul", b.reduce_sum(b.binary("Mul", x, x), axes=[2], keep_dims=True),
                  b.constant(1.0 / width, "float32"))
    y = b.binary("Mul", b.binary("Mul", x, b.unary("Rsqrt", b.binary("Add", ms, b.constant(EPS, "float32")))), w)
    b.output(b.cast(y, "bfloat16"))
    return b


def softmax_graph(rows, width):
    b = polyred.Builder("softmax")
    x = b.cast(b.input("x", "bfloat16", [BATCH, rows, width]), "float32")
    b.output(b.cast(b.softmax(x, axis=2), "bfloat16"))
    return b


def cross_entropy_graph(rows, width):
    """The loss of each row (logsumexp minus the label's logit); the label's logit
    picked by a compare with the column index, so the row kernel reads each logit once."""
    b = polyred.Builder("cross_entropy")
    x = b.cast(b.input("x", "bfloat16", [BATCH, rows, width]), "float32")
    labels = b.input("labels", "int64", [BATCH, rows, 1])
    top = b.reduce_max(x, axes=[2], keep_dims=True)
    sum_exp = b.reduce_sum(b.unary("Exp", b.binary("Sub", x, top)), axes=[2], keep_dims=True)
    lse = b.binary("Add", b.unary("Log", sum_exp), top)
    is_label = b.binary("Equal", b.iota([BATCH, rows, width], axis=2), labels)
    picked = b.reduce_sum(b.select(is_label, x, b.constant(0.0, "float32")), axes=[2], keep_dims=True)
    b.output(b.binary("Sub", lse, picked))
    return b


def torch_cross_entropy(x, labels):
    v = x.shape[-1]
    loss = torch.nn.functional.cross_entropy(x.float().reshape(-1, v), labels.reshape(-1), reduction="none")
    return loss.reshape(labels.shape)


def torch_layer_norm(x, w, bias):
    return torch.nn.functional.layer_norm(x.float(), (x.shape[-1],), w, bias, EPS).to(torch.bfloat16)


def torch_rms_norm(x, w):
    h = x.float()
    return (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS) * w).to(torch.bfloat16)


def torch_softmax(x):
    return torch.softmax(x.float(), -1).to(torch.bfloat16)


OPS = {  # name: (graph, columns, eager function, parameter count or "labels")
    "layer_norm": (layer_norm_graph, 1024, torch_layer_norm, 2),
    "rms_norm": (rms_norm_graph, 4096, torch_rms_norm, 1),
    "softmax": (softmax_graph, 4096, torch_softmax, 0),
    "cross_entropy": (cross_entropy_graph, 32000, torch_cross_entropy, "labels"),
}


def lengths_from_1_to_8192(count):
    found = sorted({max(1, round(8192 ** (k / (count - 1)))) for k in range(count)})
    rng = random.Random(0)
    while len(found) < count:
        found = sorted(set(found) | {rng.randrange(2, 8192)})
    return found


def inputs(seq, width, params):
    torch.manual_seed(seq)
    x = (torch.rand(BATCH, seq, width, device="cuda") * 4 - 2).to(torch.bfloat16)
    if params == "labels":
        return [x, torch.randint(0, width, (BATCH, seq, 1), device="cuda")]
    return [x] + [torch.rand(width, device="cuda") + 0.5 for _ in range(params)]


def error(got, want):
    return float((got.float() - want.float()).abs().max()) / max(float(want.float().abs().max()), 1e-6)


def run_op(name, lengths, timer, out):
    graph, width, eager, params = OPS[name]
    t0 = time.time()
    symbolic = graph("S", width).compile()
    symbolic_s = time.time() - t0
    t0 = time.time()
    with ThreadPoolExecutor(8) as pool:  # the per-length compiles (ctypes releases the GIL)
        static = dict(zip(lengths, pool.map(lambda s: graph(s, width).compile(), lengths)))
    static_s = time.time() - t0
    dynamic = torch.compile(eager, dynamic=True)
    print(f"\n### {name} ({BATCH} x S x {width}, bf16): symbolic compiled once in {symbolic_s:.2f} s; "
          f"{len(lengths)} static compiles {static_s:.1f} s (8 threads)", flush=True)
    print("| S | MB moved | limit us | static us | symbolic us | symbolic/static | compile(dynamic) us "
          "| compile/symbolic | max error (static, symbolic, compile) |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    for seq in lengths:
        args = inputs(seq, width, params)
        want = eager(*args)
        errors = [error(fn(*args), want) for fn in (static[seq], symbolic, dynamic)]
        moved = sum(a.numel() * a.element_size() for a in args) + want.numel() * want.element_size()
        src, dst = torch.empty(moved // 8, device="cuda"), torch.empty(moved // 8, device="cuda")
        limit = timer.time(lambda a, b: b.copy_(a), (src, dst))
        times = [timer.time(fn, args) for fn in (static[seq], symbolic, dynamic)]
        row = dict(op=name, seq=seq, mb=moved / 1e6, limit_us=limit, static_us=times[0], symbolic_us=times[1],
                   compile_dynamic_us=times[2], errors=errors, ok=all(e <= 2e-2 for e in errors))
        rows.append(row)
        if out:
            out.write(json.dumps(row) + "\n")
        flag = "" if row["ok"] else " WRONG"
        print(f"| {seq} | {moved / 1e6:.2f} | {limit:.2f} | {times[0]:.2f} | {times[1]:.2f} | {times[1] / times[0]:.3f} "
              f"| {times[2]:.2f} | {times[2] / times[1]:.2f}x | {errors[0]:.1e}, {errors[1]:.1e}, {errors[2]:.1e}{flag} |",
              flush=True)
    ratios = [r["symbolic_us"] / r["static_us"] for r in rows]
    ahead = [r["compile_dynamic_us"] / r["symbolic_us"] for r in rows]
    summary = dict(op=name, kind="summary", geomean_symbolic_over_static=_geomean(ratios), worst=max(ratios),
                   worst_seq=rows[ratios.index(max(ratios))]["seq"], geomean_compile_over_symbolic=_geomean(ahead),
                   behind_compile=[r["seq"] for r, a in zip(rows, ahead) if a < 1.0],
                   wrong=[r["seq"] for r in rows if not r["ok"]], symbolic_compile_s=symbolic_s)
    print(f"\n{name}: symbolic/static geomean {summary['geomean_symbolic_over_static']:.3f}, worst "
          f"{summary['worst']:.3f} at S={summary['worst_seq']}; torch.compile(dynamic)/symbolic geomean "
          f"{summary['geomean_compile_over_symbolic']:.2f}x, behind it at S in {summary['behind_compile']}; "
          f"wrong at {summary['wrong']}", flush=True)
    if out:
        out.write(json.dumps(summary) + "\n")
    return summary


def _geomean(xs):
    return math.exp(statistics.fmean(math.log(x) for x in xs))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--lengths", type=int, default=64)
    parser.add_argument("--out")
    args = parser.parse_args()
    p = torch.cuda.get_device_properties(0)
    print(f"{p.name}, torch {torch.__version__}, CUDA {torch.version.cuda}, {time.strftime('%Y-%m-%d %H:%M')}")
    timer = Timer(50)
    out = open(args.out, "w") if args.out else None
    lengths = lengths_from_1_to_8192(args.lengths)
    summaries = [run_op(name, lengths, timer, out) for name in args.ops.split(",")]
    if any(s["wrong"] for s in summaries):
        raise SystemExit(10)


if __name__ == "__main__":
    main()
