#!/usr/bin/env python3
"""Sharded reductions on 2 GPUs: polyred (NCCL) vs PyTorch (local op + all_reduce) vs
one GPU on the whole tensor.  First run on two H200s on 2026-11-28 (1 and 4 GiB
cases; results in docs/multigpu.md, "Two GPUs").  Run it through bench/sharded.sh, which exports NCCL_NVLS_ENABLE=0.

Cases: op in sum|max|mean, dtype in float32|bfloat16, total input size in 1|4|16 GiB,
shape [rows, COLS] reduced over axis 0 (rows), the axis split across the GPUs (each
GPU holds rows/2 rows).  Every case is timed four ways:

  polyred_sharded  `polyred run FILE --shard=input_0:0 --gpus=N --no-check`: one
                   process, ncclCommInitAll; the fused local reduction stops at the
                   accumulator (f32 for bf16), NCCL combines (all-reduce for sum; for
                   float max all-gather + combine kernel), epilogue (mean: / rows; cast).
                   Median host wall time of one launch with every GPU synchronized.
  torch_sharded    one process per GPU (torch.multiprocessing, NCCL backend): local
                   torch.sum/amax over axis 0 (bf16: dtype=float32 for sum/mean, as
                   polyred keeps f32 partials), dist.all_reduce, mean divides by rows,
                   cast back; the same wall-clock method (all ranks synchronized by a
                   barrier-free cuda synchronize, the slowest rank reported).
  polyred_1gpu     `polyred run FILE` on GPU 0 with the whole tensor (CUDA-graph
                   median, docs/method.md -- NOT the same method as above; compare the
                   wall-clock torch_1gpu column instead when in doubt).
  torch_1gpu       the same torch op on GPU 0, whole tensor, wall clock.

usage: bench/sharded.sh [--polyred build/tools/polyred] [--gpus 2] [--sizes 1,4,16]
                        [--ops sum,max,mean] [--dtypes float32,bfloat16] [--out FILE]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_workloads import dumps, tensor  # noqa: E402

COLS = 4096
REDUCE = {"sum": "ReduceSum", "max": "ReduceMax", "mean": "ReduceMean"}
BYTES = {"float32": 4, "bfloat16": 2}


def composite(op, dtype, rows, cols):
    """One ReduceX over axis 0 of input_0 [rows, cols], as make_workloads.py writes them."""
    name = REDUCE[op]
    node = {
        "attr": [{"data_type": "listInt", "name": "axis", "value": [0]},
                 {"data_type": "bool", "name": "keep_dims", "value": False}],
        "impl_path": "",
        "input_desc": [[tensor(dtype, (rows, cols), "input_0", op_name="input_0")]],
        "name": name,
        "output_desc": [tensor(dtype, (cols,), "output_0_0", op_name="output_0")],
    }
    return {"composite": True, "id": 1, "input_desc": [[tensor(dtype, (rows, cols), "input_0")]],
            "op": f"Fused_{name}_sharded_{dtype}_{rows}x{cols}", "op_desc": [node],
            "output_desc": [tensor(dtype, (cols,), "output_0_0")], "platform": "AKG", "process": "cuda"}


def rows_for(gib, dtype, gpus):
    rows = gib * (1 << 30) // (BYTES[dtype] * COLS)
    return rows - rows % gpus  # an even split (uneven ones are covered by the tests)


def run_polyred(cmd):
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    out = p.stdout + p.stderr
    m = re.search(r"([0-9.]+) us", out)
    return {"rc": p.returncode, "us": float(m.group(1)) if m and p.returncode == 0 else None,
            "seconds": round(time.time() - t0, 1), "log": out[-2000:]}


# ---- PyTorch -------------------------------------------------------------------------
def torch_op(torch, x, op, dtype):
    if op == "max":
        return torch.amax(x, 0)
    acc = torch.float32 if dtype == "bfloat16" else None
    return torch.sum(x, 0, dtype=acc)


def torch_rank(rank, gpus, op, dtype, rows, iters, port, queue):
    import torch
    import torch.distributed as dist
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=gpus, device_id=torch.device("cuda", rank))
    tdt = getattr(torch, dtype)
    x = torch.randn(rows // gpus, COLS, device="cuda", dtype=tdt)
    red = dist.ReduceOp.MAX if op == "max" else dist.ReduceOp.SUM

    def step():
        part = torch_op(torch, x, op, dtype)
        dist.all_reduce(part, op=red)
        if op == "mean":
            part = part / rows
        return part.to(tdt)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        dist.barrier()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6)
    queue.put((rank, statistics.median(times)))
    dist.destroy_process_group()


def torch_sharded(gpus, op, dtype, rows, iters):
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    port = 29500 + os.getpid() % 1000
    procs = [ctx.Process(target=torch_rank, args=(r, gpus, op, dtype, rows, iters, port, queue)) for r in range(gpus)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    if any(p.exitcode != 0 for p in procs):
        return None
    return max(queue.get()[1] for _ in procs)  # the slowest rank


def torch_1gpu(op, dtype, rows, iters):
    import torch
    torch.cuda.set_device(0)
    x = torch.randn(rows, COLS, device="cuda", dtype=getattr(torch, dtype))

    def step():
        r = torch_op(torch, x, op, dtype)
        if op == "mean":
            r = r / rows
        return r.to(x.dtype)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6)
    del x
    torch.cuda.empty_cache()
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--polyred", default="build/tools/polyred")
    ap.add_argument("--gpus", type=int, default=2)
    ap.add_argument("--sizes", default="1,4,16", help="GiB of input per case (whole tensor)")
    ap.add_argument("--ops", default="sum,max,mean")
    ap.add_argument("--dtypes", default="float32,bfloat16")
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--out", default="sharded_results.json")
    ap.add_argument("--no-torch", action="store_true")
    a = ap.parse_args()
    if os.environ.get("NCCL_NVLS_ENABLE") != "0":
        sys.exit("sharded.py: export NCCL_NVLS_ENABLE=0 first (bench/sharded.sh does)")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for gib in [int(s) for s in a.sizes.split(",")]:
            for dtype in a.dtypes.split(","):
                for op in a.ops.split(","):
                    rows = rows_for(gib, dtype, a.gpus)
                    path = os.path.join(tmp, f"{op}_{dtype}_{gib}g.json")
                    with open(path, "w") as f:
                        f.write(dumps(composite(op, dtype, rows, COLS)) + "\n")
                    r = {"op": op, "dtype": dtype, "gib": gib, "shape": [rows, COLS], "gpus": a.gpus}
                    # The reference check is skipped for the GiB-sized runs; the tests
                    # (ctest -L gpu) check correctness.
                    sh = run_polyred([a.polyred, "run", path, f"--shard=input_0:0", f"--gpus={a.gpus}", "--no-check",
                                      f"--iterations={a.iterations}"])
                    one = run_polyred([a.polyred, "run", path, f"--iterations={a.iterations}"])
                    r["polyred_sharded_us"], r["polyred_1gpu_us"] = sh["us"], one["us"]
                    if sh["us"] is None:
                        r["polyred_sharded_log"] = sh["log"]
                    if one["us"] is None:
                        r["polyred_1gpu_log"] = one["log"]
                    if not a.no_torch:
                        r["torch_sharded_us"] = torch_sharded(a.gpus, op, dtype, rows, a.iterations)
                        r["torch_1gpu_us"] = torch_1gpu(op, dtype, rows, a.iterations)
                    print(json.dumps(r), flush=True)
                    results.append(r)
    with open(a.out, "w") as f:
        json.dump({"cases": results, "note": "wall-clock medians in us; polyred_1gpu uses CUDA-graph timing"}, f,
                  indent=1)
    print(f"sharded.py: {len(results)} cases -> {a.out}")


if __name__ == "__main__":
    main()
