#!/usr/bin/env python3
"""An optimizer step written with PyTorch's in-place methods -- Adam as a
single-tensor loop writes it -- traced by polyred.compile into one kernel that updates
p, m and v in place (docs/design/frontend.md, "In-place outputs"), against the same function
eagerly and under torch.compile, and the practical limit of METHOD.md: a streaming
copy moving the same bytes (4 tensors read, 3 written). Every column is checked
against eager first (relative error); timed as bench/peers_torch.py times (L2 flush,
events around one CUDA-graph replay, median of 50).

    PYTHONPATH=python:bench POLYRED_LIBRARY=build/src/libpolyred.so python3 bench/optimizer_step.py [N ...]
"""
import sys

import torch

import polyred
from peers_torch import Timer


def adam(p, g, m, v):
    m.mul_(0.9).add_(g, alpha=0.1)
    v.mul_(0.999).addcmul_(g, g, value=0.001)
    p.addcdiv_(m, v.sqrt().add_(1e-8), value=-1e-3)


def fresh(n):
    torch.manual_seed(0)
    p, g, m, v = (torch.randn(n, device="cuda") for _ in range(4))
    return [p, g, m, v.abs()]


def max_relative_error(fn, n):
    got, want = fresh(n), fresh(n)
    fn(*got)
    adam(*want)
    return max(float(((a - b).abs() / b.abs().clamp_min(1e-6)).max()) for a, b in zip(got, want))


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [1 << 20, 1 << 22, 1 << 24]
    timer = Timer(50)
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("| elements (f32) | MB moved | polyred us | limit us | % limit | eager us | compile us | x eager | x compile "
          "| polyred rel err | compile rel err |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        step, compiled = polyred.compile(adam), torch.compile(adam)
        errors = [max_relative_error(step, n), max_relative_error(compiled, n)]
        moved = 7 * 4 * n
        src, dst = torch.empty(moved // 8, device="cuda"), torch.empty(moved // 8, device="cuda")
        limit = timer.time(lambda a, b: b.copy_(a), (src, dst))
        times = [timer.time(fn, fresh(n)) for fn in (step, adam, compiled)]
        print(f"| {n} | {moved / 1e6:.1f} | {times[0]:.2f} | {limit:.2f} | {100 * limit / times[0]:.0f}% | {times[1]:.2f} "
              f"| {times[2]:.2f} | {times[1] / times[0]:.2f}x | {times[2] / times[0]:.2f}x | {errors[0]:.1e} "
              f"| {errors[1]:.1e} |", flush=True)


if __name__ == "__main__":
    main()
