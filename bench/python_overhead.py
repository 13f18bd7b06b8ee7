#!/usr/bin/env python3
"""Host overhead of one polyred kernel call from Python (issue #15): the wall time of
back-to-back calls of a tiny kernel (a sum of 1280 floats, Table 2 sg05), enqueue
only (no synchronization inside the loop), per call, against the same for the
equivalent torch ops eagerly and under torch.compile, an empty torch op (x.add_(0)) as
the floor of what PyTorch itself costs per call, and the floors under polyred's own
launch: a ctypes call that does nothing, and cuLaunchKernel of an empty kernel through
ctypes.

Three columns. "burst": BURST calls after a synchronize, so the GPU's launch queue
never fills and the wall time is the host's alone. "sustained": N calls in a row; once
the queue is full the host would wait for the GPU, so this column is the larger of the
host's cost and the GPU's time per launch. "GPU": the GPU's own time per launch, from
events around BURST launches enqueued behind a sleeping kernel (so the host's enqueue
is done before the GPU reaches them). burst ~ sustained > GPU: the host is the limit.

    PYTHONPATH=python POLYRED_LIBRARY=build/src/libpolyred.so python3 bench/python_overhead.py
"""
import os
import statistics
import time

import torch

import polyred

N = 2000     # sustained: calls per sample (past the launch queue's depth)
BURST = 100  # burst: calls per sample (well inside it)


def host_us(fn, args, calls):
    """Host microseconds per call of `calls` calls in a row, started on an idle GPU."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    return (time.perf_counter() - start) / calls * 1e6


def per_call_us(fn, *args):
    """(burst, sustained, GPU) microseconds per call; see the module's comment."""
    for _ in range(50):
        fn(*args)
    burst = [host_us(fn, args, BURST) for _ in range(41)]
    sustained = [host_us(fn, args, N) for _ in range(5)]
    torch.cuda.synchronize()
    gpu = []
    for _ in range(5):
        first, last = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(100_000_000)  # ~50 ms at the H100's clock: the enqueue below ends first
        first.record()
        for _ in range(BURST):
            fn(*args)
        last.record()
        torch.cuda.synchronize()
        gpu.append(first.elapsed_time(last) / BURST * 1e3)
    return statistics.median(burst), statistics.median(sustained), statistics.median(gpu)


def launch_floors(k):
    """What a launch costs below polyred: a ctypes call that does nothing, and
    cuLaunchKernel of an empty kernel (PTX, loaded into torch's context) through ctypes."""
    import ctypes

    from polyred import _lib

    cuda = ctypes.CDLL("libcuda.so.1")
    ptx = b".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry empty()\n{\n ret;\n}\n"
    module, function = ctypes.c_void_p(), ctypes.c_void_p()
    torch.cuda.synchronize()  # torch's primary context is current
    assert cuda.cuModuleLoadData(ctypes.byref(module), ptx) == 0
    assert cuda.cuModuleGetFunction(ctypes.byref(function), module, b"empty") == 0
    launch = cuda.cuLaunchKernel
    u, p = ctypes.c_uint, ctypes.c_void_p
    launch.argtypes = [p, u, u, u, u, u, u, u, p, p, p]
    stream = torch.cuda.current_stream().cuda_stream
    count, handle = _lib.lib.polyred_num_launches, k._handle
    return [("floor: a ctypes call that does nothing", per_call_us(lambda: count(handle))),
            ("floor: cuLaunchKernel (empty kernel) via ctypes",
             per_call_us(lambda: launch(function, 1, 1, 1, 32, 1, 1, 0, stream, None, None)))]


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    k = polyred.load(os.path.join(root, "examples/table2/sg05_neg_mul_sum.json"), target="gpu")
    a, b = (torch.randn(1280, device="cuda") for _ in range(2))
    (got,) = k(a, b) if isinstance(k(a, b), (tuple, list)) else (k(a, b),)
    torch.testing.assert_close(got.reshape(-1), (-a * b).sum().reshape(-1), rtol=1e-5, atol=1e-4)
    x = torch.zeros(1, device="cuda")
    preallocated = torch.empty_like(got)
    compiled = torch.compile(lambda p, q: (-p * q).sum())
    torch.testing.assert_close(compiled(a, b), (-a * b).sum())
    rows = [("polyred kernel call (sg05)", per_call_us(k, a, b)),
            ("polyred kernel call, out= preallocated", per_call_us(lambda p, q: k(p, q, out=preallocated), a, b)),
            ("torch (-a * b).sum(): 3 ops", per_call_us(lambda p, q: (-p * q).sum(), a, b)),
            ("torch.compile((-a * b).sum())", per_call_us(compiled, a, b)),
            ("torch x.add_(0): 1 op", per_call_us(lambda t: t.add_(0), x))]
    rows += breakdown(k, a, b)
    rows += launch_floors(k)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}; us per call: burst = "
          f"{BURST} calls after a synchronize (median of 41), sustained = {N} in a row (median of 5), "
          f"GPU = the GPU's own time per launch (events, launches queued behind a sleep)")
    print(f"{'':52} {'burst':>7} {'sustained':>9} {'GPU':>7}")
    for name, (burst, sustained, gpu) in rows:
        print(f"{name:52} {burst:7.2f} {sustained:9.2f} {gpu:7.2f}")


def breakdown(k, a, b):
    """The parts of one call, each timed alone: where the per-call time goes."""
    import struct

    from polyred import _lib

    device = a.device
    out_dtype, out_shape, _ = k._torch_specs()[1][0]
    out = torch.empty(out_shape, dtype=out_dtype, device=device)
    ins = struct.pack("=2Q", a.data_ptr(), b.data_ptr())
    outs = struct.pack("=1Q", out.data_ptr())
    stream = torch.cuda.current_stream(device).cuda_stream
    sizes, strides = tuple(out_shape), out.stride()
    launch = _lib.lib.polyred_launch
    handle = k._handle
    parts = [
        ("part: polyred_launch via ctypes, prebuilt args", lambda: launch(handle, ins, outs, stream)),
        ("part: 2 x data_ptr + struct pack", lambda: struct.pack("=2Q", a.data_ptr(), b.data_ptr())),
        ("part: torch.empty(output)", lambda: torch.empty(out_shape, dtype=out_dtype, device=device)),
        ("part: torch.empty_strided(output) (used)",
         lambda: torch.empty_strided(sizes, strides, dtype=out_dtype, device=device)),
        ("part: torch.cuda.current_stream().cuda_stream", lambda: torch.cuda.current_stream(device).cuda_stream),
        ("part: torch.cuda.current_device()", lambda: torch.cuda.current_device()),
        ("part: input checks (dtype, shape, contiguous, device)",
         lambda: [t.dtype != out_dtype or t.shape != (1280,) or not t.is_contiguous() or t.device != device
                  for t in (a, b)]),
    ]
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        parts.append(("part: torch._C._cuda_getCurrentRawStream(i)", lambda: raw(device.index)))
    return [(name, per_call_us(fn)) for name, fn in parts]


if __name__ == "__main__":
    main()
