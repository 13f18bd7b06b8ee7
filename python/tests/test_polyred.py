"""The Python package (python/polyred) on the CPU: loading, the builder, tracing
PyTorch functions, the CPU check against the reference, and errors as exceptions.
GPU tests are in test_polyred_gpu.py (skipped without a GPU)."""
import ctypes
import json
from pathlib import Path

import pytest

import polyred

REPO = Path(__file__).resolve().parents[2]
SG09 = REPO / "examples" / "table2" / "sg09_sum_sum.json"


def test_load_describes_inputs_and_outputs_and_checks_on_the_cpu():
    k = polyred.load(SG09)
    assert [(i.dtype, i.shape) for i in k.inputs] == [("float32", (8192, 768))] * 2
    assert [(o.dtype, o.shape) for o in k.outputs] == [("float32", (768,))] * 2
    assert k.launches == 1
    assert "__global__" in k.cuda_source(0)
    assert "ok" in k.check_cpu(max_points=1 << 14)


def test_bad_files_raise_with_the_file_and_reason(tmp_path):
    with pytest.raises(polyred.BadInputError, match="missing.json"):
        polyred.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"op": ')
    with pytest.raises(polyred.BadInputError, match="bad.json"):
        polyred.load(bad)
    with pytest.raises(polyred.BadInputError, match="target must be"):
        polyred.load(SG09, target="volta")
    with pytest.raises(polyred.BadInputError):
        polyred.load(SG09).cuda_source(7)


def test_builder_mirrors_the_cpp_builder():
    b = polyred.Builder("col_sum_and_softmax")
    x = b.input("x", "float16", (300, 70))
    b.output(b.reduce_sum(b.cast(x, "float32"), axes=[0]))
    b.output(b.softmax(x, axis=-1))
    k = b.compile()
    assert [o.shape for o in k.outputs] == [(70,), (300, 70)]
    assert [o.dtype for o in k.outputs] == ["float32", "float16"]
    k.check_cpu()
    doc = b.build()
    assert doc["op_desc"][0]["name"] == "Cast" and json.loads(b.to_json()) == doc


def test_check_cpu_reports_one_line_per_output():
    b = polyred.Builder("three_reductions")
    x = b.input("x", "float32", (64, 48))
    b.output(b.reduce_sum(x, axes=[0]))
    b.output(b.reduce_sum(x, axes=[1]))
    b.output(b.reduce_max(x))
    report = b.compile().check_cpu()
    lines = report.splitlines()
    assert "%0A" not in report and len(lines) == 3, report
    assert all(line.startswith("  output %") and ": ok (" in line for line in lines), report


def test_builder_segment_sum_is_one_atomic_scatter_kernel():
    b = polyred.Builder("embedding_grad")
    grad, ids = b.input("grad", "float32", (500, 24)), b.input("ids", "int64", (500,))
    b.output(b.segment_sum(b.binary("mul", grad, grad), ids, 37))
    k = b.compile()
    assert [(o.dtype, o.shape) for o in k.outputs] == [("float32", (37, 24))]
    assert "ok" in k.check_cpu()
    assert "pr_scatter_add(" in k.cuda_source()


def test_builder_standard_normal_fuses_into_a_reduction():
    b = polyred.Builder("noisy_sum")
    x = b.input("x", "float32", (64, 500))
    b.output(b.reduce_sum(b.binary("add", x, b.standard_normal((64, 500), seed=3)), axes=[1]))
    k = b.compile()
    assert k.launches == 1 and "pr_philox_normal_float(" in k.cuda_source()
    assert "ok" in k.check_cpu()


def test_builder_declares_reductions_of_its_own():
    b = polyred.Builder("max_abs_rows")
    x = b.input("x", "float16", (33, 1001))
    b.declare_reduction("max_abs", "float32", 0, ["Maximum", ["Abs", "a"], ["Abs", "b"]])
    b.output(b.user_reduce("max_abs", b.binary("mul", x, x), axes=[1], dtype="float32"))
    b.output(b.user_reduce("max_abs", x, axes=None, keep_dims=True, dtype="float32"))
    k = b.compile()
    assert [(o.dtype, o.shape) for o in k.outputs] == [("float32", (33,)), ("float32", (1, 1))]
    assert "ok" in k.check_cpu()
    assert b.build()["reductions"][0]["name"] == "max_abs"
    with pytest.raises(polyred.BadInputError, match="declared twice"):
        b.declare_reduction("max_abs", "float32", 0, ["Add", "a", "b"])
    with pytest.raises(polyred.BadInputError, match="no reduction 'median'"):
        b.user_reduce("median", x)
    bad = polyred.Builder("sub")
    y = bad.input("y", "float32", (4, 8))
    bad.declare_reduction("minus", "float32", 0, ["Sub", "a", "b"])
    bad.output(bad.user_reduce("minus", y, axes=[1]))
    with pytest.raises(polyred.BadInputError, match="not neutral"):
        bad.compile()


MEAN = {"name": "mean", "inputs": ["float32"], "commutative": True,
        "fields": [{"name": "sum", "data_type": "float64", "identity": 0, "lift": "in0", "combine": ["Add", "a0", "b0"]},
                   {"name": "count", "data_type": "int64", "identity": 0, "lift": {"value": 1, "data_type": "int64"},
                    "combine": ["Add", "a1", "b1"]}],
        "results": [{"name": "mean", "value": ["RealDiv", "a0", "a1"]}, {"name": "count", "value": "a1"}]}


def test_builder_declares_tuple_reductions_of_its_own():
    b = polyred.Builder("means")
    x = b.input("x", "float32", (37, 129))
    b.declare_tuple_reduction(MEAN)
    mean, count = b.tuple_reduce("mean", [x], ["float64", "int64"], axes=[1])
    b.output(mean)
    b.output(count)
    everything, _ = b.tuple_reduce("mean", [x], ["float64", "int64"], keep_dims=True)
    b.output(everything)
    k = b.compile()
    assert [(o.dtype, o.shape) for o in k.outputs] == [("float64", (37,)), ("int64", (37,)), ("float64", (1, 1))]
    assert "ok" in k.check_cpu()
    with pytest.raises(polyred.BadInputError, match="declared twice"):
        b.declare_tuple_reduction(MEAN)
    wrong = polyred.Builder("wrong")
    y = wrong.input("y", "float32", (4, 8))
    wrong.declare_tuple_reduction(MEAN)
    wrong.output(wrong.tuple_reduce("mean", [y], ["float32", "int64"], axes=[1])[0])
    with pytest.raises(polyred.BadInputError, match="computes float64"):
        wrong.compile()


def test_builder_shape_errors_are_bad_input():
    b = polyred.Builder()
    with pytest.raises(polyred.BadInputError, match="do not broadcast"):
        b.binary("add", b.input("a", "float32", (3, 4)), b.input("c", "float32", (5,)))
    with pytest.raises(polyred.BadInputError, match="axis 2 out of range"):
        b.argmax(b.input("d", "float32", (3, 4)), 2)


def lowered(fn, *tensors):
    """polyred.compile(fn)'s lowering for these tensors, for the sm_90 target (no GPU):
    the kernel, and where each returned value comes from."""
    return polyred.compile(fn, target=None).lower(tensors)


def trace(fn, *tensors):
    return lowered(fn, *tensors)[0]


def test_traced_functions_lower_and_match_the_reference(torch_or_skip):
    torch = torch_or_skip
    x = torch.randn(64, 300)
    w, bias = torch.randn(300), torch.randn(300)
    cases = {
        "column sum": (lambda a: a.sum(0), (x,)),
        "mean and max": (lambda a: (torch.mean(a, 1), torch.amax(a, dim=1, keepdim=True)), (x,)),
        "softmax": (lambda a: torch.softmax(a, -1), (x,)),
        "log_softmax f16": (lambda a: torch.nn.functional.log_softmax(a, dim=1), (x.half(),)),
        "logsumexp": (lambda a: torch.logsumexp(a, 1), (x,)),
        "var and std": (lambda a: (torch.var(a, 1), a.std(dim=0, unbiased=False)), (x,)),
        "layer norm": (lambda a, g, c: torch.nn.functional.layer_norm(a, (300,), g, c, 1e-5), (x, w, bias)),
        "scalar arithmetic": (lambda a: torch.exp(-(a * 2.0 + 1)) - 3, (x,)),
        "rms norm written out": (lambda a, g: a * torch.rsqrt(a.pow(2).mean(-1, keepdim=True) + 1e-6) * g, (x, w)),
        "views": (lambda a: a.view(8, -1).sum(1).unsqueeze(0), (x,)),
        "argmax and argmin": (lambda a: (torch.argmax(a, 1), a.argmin(dim=0, keepdim=True)), (x,)),
        "argmax f16, flattened": (lambda a: (torch.argmax(a), a.argmin(1)), (x.half(),)),
        "math ops": (lambda a, b: (torch.expm1(a) + torch.log1p(a.abs()) + torch.erfc(a) + torch.atan(a)
                                   + torch.asinh(a) + torch.asin(torch.tanh(a)) + torch.acos(torch.tanh(b))
                                   + torch.acosh(1 + b.abs()) + torch.atan2(a, b)).sum(1), (x, x.flip(0))),
        "remainders": (lambda a, b: (torch.remainder(a, b), torch.fmod(a, b), a % b), (x, x.flip(1))),
        "embedding bag and index_select": (lambda w, i, c: (torch.nn.functional.embedding(i, w).sum(1),
                                                            torch.index_select(w, 1, c).amax(0)),
                                           (torch.randn(100, 32), torch.randint(0, 100, (8, 5)), torch.randint(0, 32, (7,)))),
        "embedding of a computed table": (lambda w, s, i: torch.nn.functional.embedding(i, (w * s).half()),
                                          (torch.randn(100, 32), torch.randn(100, 1), torch.randint(0, 100, (8, 5)))),
        "tensor methods": (lambda a, b: (a.expm1() + a.atan2(b) + a.fmod(b) + a.remainder(b)).sum(1), (x, x.flip(0))),
        "scans, flips and pooling": (lambda a, b: (torch.cumsum(a, 1), b.cumsum(0), torch.cumprod(a, 0), b.cumprod(1),
                                                   a.flip(0, 1),
                                                   torch.nn.functional.max_pool2d(a.view(1, 4, 16, 300), 3, 2, 1),
                                                   torch.nn.functional.avg_pool2d(a.view(1, 4, 16, 300), 2)),
                                     (x, torch.randint(-9, 9, (64, 30), dtype=torch.int32))),
        "index_add": (lambda a, i, s: (a.index_add(0, i, s), torch.index_add(a, 0, i, s, alpha=2)),
                      (torch.randn(50, 8), torch.randint(0, 50, (30,)), torch.randn(30, 8))),
        "index_add along dim 1 and -1": (lambda a, j, t, k, u: (a.index_add(1, j, t), torch.index_add(a, -1, k, u, alpha=3)),
                                         (torch.randn(6, 50, 7), torch.randint(0, 50, (20,)), torch.randn(6, 20, 7),
                                          torch.randint(0, 7, (30,)), torch.randn(6, 50, 30))),
        "scatter_add": (lambda a, i, j, s, t: (a.scatter_add(0, i, s), torch.scatter_add(a, 1, j, t)),
                        (torch.randn(50, 8), torch.randint(0, 50, (30, 8)), torch.randint(0, 8, (50, 5)),
                         torch.randn(30, 8), torch.randn(50, 5))),
        "index_put accumulate": (lambda a, i, j, v, w: (torch.index_put(a, (i,), v, accumulate=True),
                                                        a.index_put((i, j), w, accumulate=True)),
                                 (torch.randn(50, 8), torch.randint(-50, 50, (30,)), torch.randint(0, 8, (30,)),
                                  torch.randn(30, 8), torch.randn(30))),
        "integer floor division": (lambda i, j: (i // j, torch.floor_divide(i, j), i % j, i.floor_divide(j)),
                                   (torch.randint(-1000, 1000, (64, 300), dtype=torch.int32),
                                    torch.randint(1, 50, (300,), dtype=torch.int32))),
    }
    for name, (fn, args) in cases.items():
        k = trace(fn, *args)
        assert k.launches >= 1, name
        k.check_cpu(max_points=1 << 16)


def test_traced_output_shapes_follow_torch(torch_or_skip):
    torch = torch_or_skip
    x = torch.randn(8, 5, 7)
    fns = [lambda a: a.sum((0, 2)), lambda a: torch.logsumexp(a, 2, keepdim=True), lambda a: torch.var(a, 1),
           lambda a: torch.argmax(a, 1), lambda a: a.argmin(-1, keepdim=True), lambda a: torch.argmax(a, 0, True)]
    for fn in fns:
        k = trace(fn, x)
        assert k.outputs[0].shape == tuple(fn(x).shape)
        assert k.outputs[0].dtype == str(fn(x).dtype).replace("torch.", "")
    # A full reduction is (1,) to polyred; the callable views it as torch's () from the
    # shapes a run on meta tensors gives.
    assert trace(lambda a: a.sum(), x).outputs[0].shape == (1,)
    assert polyred.compile(lambda a: (a.sum(), a.amax(1)), target=None).torch_shapes((x,)) == [(), (8, 7)]


def test_unsupported_ops_name_themselves_and_fallback_runs_eagerly(torch_or_skip):
    torch = torch_or_skip
    x = torch.randn(4, 4)

    def uses_cummax(a):
        return torch.cummax(a, 0).values

    with pytest.raises(polyred.BadInputError, match="cummax"):
        trace(uses_cummax, x)
    eager = polyred.compile(uses_cummax, fallback=True, target=None)
    assert torch.equal(eager(x), torch.cummax(x, 0).values)
    with pytest.raises(polyred.BadInputError, match="pooling with dilation"):
        trace(lambda a: torch.nn.functional.avg_pool2d(a.view(1, 1, 4, 4), 2, ceil_mode=True), x)
    # Floor division of floats: torch floors the exact quotient (1 // 0.1 = 9), polyred's
    # FloorDiv the rounded one (10), as MindSpore; refused rather than differ.
    with pytest.raises(polyred.BadInputError, match="floor division of floats"):
        trace(lambda a: a // 0.1, x)
    with pytest.raises(polyred.BadInputError, match="floor division of floats"):
        trace(lambda a: a.floor_divide(a), x)
    # index_put as a store is refused with the reason (accumulate=True is a scatter).
    i, v = torch.tensor([0, 3, 3]), torch.ones(3, 4)
    with pytest.raises(polyred.BadInputError, match="accumulate=True"):
        trace(lambda a, j, w: a.index_put((j,), w), x, i, v)
    with pytest.raises(polyred.BadInputError, match="one shape"):
        trace(lambda a, j, w: a.scatter_add(0, j, w), x, torch.zeros(2, 4, dtype=torch.int64), v)


def test_in_place_methods_write_their_arguments_back(torch_or_skip):
    torch = torch_or_skip

    def adam(p, g, m, v):  # one step, as optimizers write it
        m.mul_(0.9).add_(g, alpha=0.1)
        v.mul_(0.999).addcmul_(g, g, value=0.001)
        p.addcdiv_(m, v.sqrt().add_(1e-8), value=-1e-3)

    p, g, m, v = (torch.randn(1000, 300) for _ in range(4))
    kernel, returns = lowered(adam, p, g, m, v.abs())
    assert returns == [] and kernel.launches == 1
    assert [o.in_place_of_input for o in kernel.outputs] == [0, 2, 3]  # p, m, v; not g
    kernel.check_cpu(max_points=1 << 16)
    # A changed argument that is returned is returned itself; the others are outputs.
    kernel, returns = lowered(lambda a, b: (a.add_(b, alpha=2), b * 3), p, g)
    assert returns == [("input", 0), ("output", 0)]
    assert [o.in_place_of_input for o in kernel.outputs] == [-1, 0]
    kernel = trace(lambda a, i, w: a.index_put_((i,), w, accumulate=True), torch.randn(4, 4),
                      torch.tensor([0, 3, 3]), torch.ones(3, 4))
    assert [o.in_place_of_input for o in kernel.outputs] == [0]
    kernel.check_cpu()


def test_what_traced_code_cannot_mean_is_refused(torch_or_skip):
    torch = torch_or_skip
    x = torch.randn(16, 8)
    with pytest.raises(polyred.BadInputError, match="shares its storage with a view"):
        trace(lambda a: a.view(-1).add_(1), x)
    with pytest.raises(polyred.BadInputError, match="shares its storage with a view"):
        trace(lambda a: (a.reshape(-1), a.mul_(2))[0].sum(), x)
    for fn, what in [(lambda a: torch.div(a, a, rounding_mode="floor"), "rounding_mode"),
                     (lambda a: a.div(2, rounding_mode="trunc"), "rounding_mode"),
                     (lambda a: torch.add(a, a, out=a), "out")]:
        with pytest.raises(polyred.BadInputError, match=what):
            trace(fn, x)
    # Integer and bool sums count in int64 as torch's do; dtype= casts first.
    n = torch.randint(-5, 5, (8, 6), dtype=torch.int32)
    for fn in [lambda a: a.sum(0), lambda a: a.bool().sum(0), lambda a: torch.prod(a, 1), lambda a: a.sum(0, dtype=torch.float64)]:
        kernel = trace(fn, n)
        assert kernel.outputs[0].dtype == str(fn(n).dtype).replace("torch.", "")
        kernel.check_cpu()
    with pytest.raises(polyred.BadInputError, match="mean of int32"):
        trace(lambda a: a.mean(0), n)
    with pytest.raises(polyred.BadInputError, match="out"):
        trace(lambda a, o: torch.sum(a, 0, out=o), x, x[0])
    # var/std's positional unbiased and keepdim, logsumexp's keepdim and softmax's dtype
    # are read, not dropped (the values: test_polyred_gpu.py).
    for fn, shape, dtype in [(lambda a: torch.var(a, 1, False, True), (16, 1), "float32"),
                             (lambda a: torch.logsumexp(a, 1, True), (16, 1), "float32"),
                             (lambda a: torch.softmax(a.half(), -1, dtype=torch.float32), (16, 8), "float32")]:
        kernel = trace(fn, x)
        assert (tuple(kernel.outputs[0].shape), kernel.outputs[0].dtype) == (shape, dtype)
    # x += y on an argument changes it in place eagerly; fx records x = x + y.
    def augmented(a, b):
        a += b
        return a.sum()

    with pytest.raises(polyred.BadInputError, match="'a op= ...' changes the argument a in place"):
        trace(augmented, x, x)

    def rebinding(a, b):  # a local, not an argument: fine
        c = a * 2
        c += b
        return c.sum()

    trace(rebinding, x, x).check_cpu()
    # add and sub honour alpha (it was dropped before 2026-11-27).
    kernel = trace(lambda a, b: torch.add(a, b, alpha=3) - a.sub(b, alpha=0.5), x, x)
    kernel.check_cpu()


def test_tensor_arguments_are_checked_before_any_launch(torch_or_skip):
    torch = torch_or_skip
    k = polyred.load(SG09)
    good = torch.zeros(8192, 768)
    with pytest.raises(polyred.BadInputError, match="takes 2 tensors"):
        k(good)
    with pytest.raises(polyred.BadInputError, match="float16"):
        k(good.half(), good)
    with pytest.raises(polyred.BadInputError, match="shape"):
        k(good[:10], good)
    with pytest.raises(polyred.BadInputError, match="not contiguous"):
        k(torch.zeros(768, 8192).t(), good)
    with pytest.raises(polyred.BadInputError, match="not on a CUDA device"):
        k(good.to("meta"), good.to("meta"))


def test_cpu_tensors_run_on_the_cpu_target(torch_or_skip):
    torch = torch_or_skip
    b = polyred.Builder("sums")
    x = b.input("x", "float32", (300, 70))
    b.output(b.reduce_sum(b.unary("exp", x), axes=[0]))
    b.output(b.reduce("max", x, axes=[1]))
    k = b.compile()
    t = torch.randn(300, 70)
    col, row = k(t)
    torch.testing.assert_close(col, t.exp().sum(0), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(row, t.amax(1))
    with pytest.raises(polyred.BadInputError, match="float16"):
        k(t.half())


def test_custom_op_registration_is_refused_where_it_cannot_work(torch_or_skip):
    torch = torch_or_skip
    k = polyred.load(SG09)
    if hasattr(torch.library, "custom_op"):
        with pytest.raises(polyred.BadInputError, match="not an identifier"):
            k.as_torch_op("not an identifier")
    else:
        with pytest.raises(polyred.BadInputError, match="torch >= 2.4"):
            k.as_torch_op("sg09")


def test_dtypes_follow_the_c_api_and_unsigned_files_load():
    from polyred import _lib
    _lib.lib.polyred_dtype_name.restype = ctypes.c_char_p
    _lib.lib.polyred_dtype_name.argtypes = [ctypes.c_int]
    assert [_lib.lib.polyred_dtype_name(k).decode() for k in range(len(_lib.DTYPES))] == _lib.DTYPES
    assert _lib.DTYPES[10:] == ["uint16", "uint32", "uint64"]
    k = polyred.load(REPO / "examples" / "unsigned" / "uint32_mask_sum.json")
    assert [i.dtype for i in k.inputs] == ["uint32", "float16"]
    assert k.outputs[2].dtype == "uint32"
    assert "ok" in k.check_cpu(max_points=1 << 14)
