"""The Python package on the GPU: kernels called on torch CUDA tensors match PyTorch,
on the current stream, with outputs allocated by torch. Skipped without a GPU."""
import pytest

import polyred
from conftest import gpu_available

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="no CUDA GPU for torch")]


@pytest.fixture(autouse=True)
def seeded_inputs():
    """Every test draws the same inputs on every run, so a failure can be replayed."""
    import torch
    torch.manual_seed(0)


def test_softmax_and_column_sum_in_a_few_lines():
    import torch
    x = torch.randn(4096, 1024, device="cuda")
    softmax = polyred.compile(lambda a: torch.softmax(a, -1))
    col_sum = polyred.compile(lambda a: a.sum(0))
    torch.testing.assert_close(softmax(x), torch.softmax(x, -1), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(col_sum(x), x.sum(0), rtol=1e-5, atol=1e-3)


def test_staged_softmax_rows_from_an_aligned_and_a_misaligned_tensor():
    # 300 rows of 20001 halves: on sm_90 the rows reach shared memory by bulk copies
    # (codegen/row_stage.h). x[1:] of a flat buffer is contiguous but 2 bytes off the
    # 16-byte boundary: its lanes load one by one and may straddle two copies.
    import torch
    softmax = polyred.compile(lambda a: torch.softmax(a, -1))
    flat = torch.randn(300 * 20001 + 1, device="cuda", dtype=torch.float16)
    for x in (flat[:-1].view(300, 20001), flat[1:].view(300, 20001)):
        expected = torch.softmax(x.float(), -1).half()
        torch.testing.assert_close(softmax(x), expected, rtol=1e-2, atol=1e-4)


def test_traced_argmax_agrees_with_torch():
    import torch
    x = torch.randn(512, 50257, device="cuda").half()
    x[7, 100:110] = float("nan")   # the first NaN wins
    x[9, [3, 50000]] = 1e4         # ties give the smallest index
    fn = polyred.compile(lambda a: (torch.argmax(a, -1), a.argmin(dim=0, keepdim=True), torch.argmax(a)))
    for got, want in zip(fn(x), (torch.argmax(x, -1), x.argmin(dim=0, keepdim=True), torch.argmax(x))):
        assert got.dtype == torch.int64
        assert torch.equal(got.reshape(want.shape), want)


def test_traced_math_ops_and_remainders_agree_with_torch():
    import torch
    x, y = torch.randn(512, 3000, device="cuda") * 4, torch.randn(512, 3000, device="cuda") * 4
    # Zero divisors on purpose: fmod and % by 0 are NaN on both sides (randn draws an exact
    # 0.0 about once in 10^6 elements; NaN != NaN made this test fail at random before).
    y[0, :3] = 0.0
    math = polyred.compile(lambda a, b: (torch.expm1(a), torch.log1p(a.abs()), torch.erfc(a), torch.atan(a),
                                         torch.asinh(a), torch.asin(torch.tanh(a)), torch.acos(torch.tanh(b)),
                                         torch.acosh(1 + b.abs()), torch.atan2(a, b), torch.fmod(a, b), a % b,
                                         (torch.expm1(a) * torch.atan2(a, b)).sum(1)))
    want = (torch.expm1(x), torch.log1p(x.abs()), torch.erfc(x), torch.atan(x), torch.asinh(x),
            torch.asin(torch.tanh(x)), torch.acos(torch.tanh(y)), torch.acosh(1 + y.abs()), torch.atan2(x, y),
            torch.fmod(x, y), x % y, (torch.expm1(x) * torch.atan2(x, y)).sum(1))
    for k, (got, expected) in enumerate(zip(math(x, y), want)):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-3, equal_nan=True, msg=f"output {k}")
    i = torch.randint(-100000, 100000, (256, 1000), device="cuda", dtype=torch.int32)
    sign = 1 - 2 * (torch.arange(1000, device="cuda", dtype=torch.int32) % 2)  # divisors of both signs
    j = torch.randint(1, 300, (1000,), device="cuda", dtype=torch.int32) * sign
    ints = polyred.compile(lambda a, b: (a // b, a % b, torch.fmod(a, b), (a % b).sum(0)))
    for got, expected in zip(ints(i, j), (i // j, i % j, torch.fmod(i, j), (i % j).sum(0))):
        assert torch.equal(got, expected.to(got.dtype))


def test_traced_embedding_bag_agrees_with_torch():
    import torch
    w = torch.randn(30522, 768, device="cuda").half()
    ids = torch.randint(0, 30522, (64, 128), device="cuda")
    cols = torch.randint(0, 768, (100,), device="cuda")
    fn = polyred.compile(lambda a, i, c: (torch.nn.functional.embedding(i, a).float().sum(1),
                                          torch.index_select(a, 1, c)))
    bag, picked = fn(w, ids, cols)
    torch.testing.assert_close(bag, torch.nn.functional.embedding(ids, w).float().sum(1), rtol=1e-4, atol=1e-2)
    assert torch.equal(picked, torch.index_select(w, 1, cols))


def test_traced_scans_flips_and_pooling_agree_with_torch():
    import torch
    F = torch.nn.functional
    x = torch.randn(16, 64, 57, 43, device="cuda")
    ints = torch.randint(-100, 100, (8, 3000), device="cuda", dtype=torch.int32)
    fn = polyred.compile(lambda a, i: (F.max_pool2d(a, 3, 2, 1), F.avg_pool2d(a, 2), F.max_pool2d(a, 2, ceil_mode=True),
                                       torch.cumsum(a, 3), i.cumsum(1), a.flip(1, 3), torch.cumprod(1 + a / 64, 1)))
    got = fn(x, ints)
    want = (F.max_pool2d(x, 3, 2, 1), F.avg_pool2d(x, 2), F.max_pool2d(x, 2, ceil_mode=True), torch.cumsum(x, 3),
            ints.cumsum(1), x.flip(1, 3), torch.cumprod(1 + x / 64, 1))
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-4)


def test_declared_reduction_agrees_with_torch():
    import torch
    b = polyred.Builder("max_abs")
    x = b.input("x", "float32", (300, 70000))
    b.declare_reduction("max_abs", "float32", 0, ["Maximum", ["Abs", "a"], ["Abs", "b"]])
    b.output(b.user_reduce("max_abs", x, axes=[1]))
    b.output(b.user_reduce("max_abs", x, axes=[0]))
    b.output(b.user_reduce("max_abs", x))
    k = b.compile(target="gpu")
    a = torch.randn(300, 70000, device="cuda")
    a[123, 4567] = -50.0
    rows, cols, everything = k(a)
    assert torch.equal(rows, a.abs().amax(1))
    assert torch.equal(cols, a.abs().amax(0))
    assert torch.equal(everything.reshape(()), a.abs().amax())


def test_declared_tuple_reduction_agrees_with_torch():
    import torch
    decl = {"name": "mean", "inputs": ["float32"], "commutative": True,
            "fields": [{"name": "sum", "data_type": "float64", "identity": 0, "lift": "in0",
                        "combine": ["Add", "a0", "b0"]},
                       {"name": "count", "data_type": "int64", "identity": 0,
                        "lift": {"value": 1, "data_type": "int64"}, "combine": ["Add", "a1", "b1"]}],
            "results": [{"name": "mean", "value": ["RealDiv", "a0", "a1"]}, {"name": "count", "value": "a1"}]}
    b = polyred.Builder("means")
    x = b.input("x", "float32", (300, 70000))
    b.declare_tuple_reduction(decl)
    for axes in ([1], [0], None):
        for v in b.tuple_reduce("mean", [x], ["float64", "int64"], axes=axes):
            b.output(v)
    k = b.compile(target="gpu")
    a = torch.randn(300, 70000, device="cuda")
    got = k(a)
    for (mean, count), dim in zip(zip(got[0::2], got[1::2]), (1, 0, None)):
        want = a.double().mean() if dim is None else a.double().mean(dim)
        torch.testing.assert_close(mean.reshape(want.shape), want, rtol=1e-9, atol=1e-12)
        assert torch.all(count == (a.numel() if dim is None else a.shape[dim]))


def test_segment_sum_agrees_with_index_add_on_a_side_stream_and_into_a_used_buffer():
    # The atomic scatter adds into an output the launch zeroes first, on the caller's
    # stream: a preallocated output full of garbage, on a side stream, twice.
    import torch
    b = polyred.Builder("embedding_grad")
    grad, ids = b.input("grad", "float32", (8192, 768)), b.input("ids", "int64", (8192,))
    b.output(b.segment_sum(grad, ids, 30522))
    k = b.compile(target="gpu")
    g = torch.randn(8192, 768, device="cuda")
    i = torch.randint(-5, 30522, (8192,), device="cuda")  # negative ids are dropped
    kept = i >= 0
    want = torch.zeros(30522, 768, device="cuda").index_add_(0, i[kept], g[kept])
    out = torch.full((30522, 768), 7.0, device="cuda")
    s = torch.cuda.Stream()
    for _ in range(2):
        with torch.cuda.stream(s):
            k(g, i, out=(out,))
        s.synchronize()
        torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-4)


def test_traced_index_add_agrees_with_torch():
    import torch
    fn = polyred.compile(lambda a, i, s: (a.index_add(0, i, s), torch.index_add(a, 0, i, s, alpha=0.5)))
    a, s = torch.randn(30522, 768, device="cuda"), torch.randn(4096, 768, device="cuda")
    i = torch.randint(0, 30522, (4096,), device="cuda")
    for got, want in zip(fn(a, i, s), (a.index_add(0, i, s), torch.index_add(a, 0, i, s, alpha=0.5))):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    # Along another dim: every element at its whole coordinate.
    cols = polyred.compile(lambda a, j, t: a.index_add(1, j, t, alpha=2))
    b, t = torch.randn(64, 1000, 32, device="cuda"), torch.randn(64, 300, 32, device="cuda")
    j = torch.randint(0, 1000, (300,), device="cuda")
    torch.testing.assert_close(cols(b, j, t), b.index_add(1, j, t, alpha=2), rtol=1e-5, atol=1e-4)


def test_traced_scatter_add_and_index_put_agree_with_torch():
    import torch
    a = torch.randn(4096, 768, device="cuda")
    i, s = torch.randint(0, 4096, (2048, 768), device="cuda"), torch.randn(2048, 768, device="cuda")
    j, t = torch.randint(0, 768, (4096, 300), device="cuda"), torch.randn(4096, 300, device="cuda")
    fn = polyred.compile(lambda a, i, s, j, t: (a.scatter_add(0, i, s), torch.scatter_add(a, 1, j, t)))
    for got, want in zip(fn(a, i, s, j, t), (a.scatter_add(0, i, s), torch.scatter_add(a, 1, j, t))):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-4)
    rows = torch.randint(-4096, 4096, (1000,), device="cuda")  # negative rows count from the end
    cols = torch.randint(0, 768, (1000,), device="cuda")
    v, w = torch.randn(1000, 768, device="cuda"), torch.randn(1000, device="cuda")
    put = polyred.compile(lambda a, r, c, v, w: (torch.index_put(a, (r,), v, accumulate=True),
                                                 a.index_put((r, c), w, accumulate=True)))
    for got, want in zip(put(a, rows, cols, v, w), (torch.index_put(a, (rows,), v, accumulate=True),
                                                    a.index_put((rows, cols), w, accumulate=True))):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-4)


def test_loaded_file_on_a_side_stream():
    import torch
    k = polyred.load(polyred.__file__.rsplit("/python/", 1)[0] + "/examples/table2/sg09_sum_sum.json", target="gpu")
    a, b = (torch.randn(8192, 768, device="cuda") for _ in range(2))
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y0, y1 = k(a, b)
    s.synchronize()
    torch.testing.assert_close(y0, a.sum(0), rtol=1e-5, atol=1e-3)
    torch.testing.assert_close(y1, b.sum(0), rtol=1e-5, atol=1e-3)


def test_preallocated_outputs():
    import torch
    k = polyred.load(polyred.__file__.rsplit("/python/", 1)[0] + "/examples/table2/sg09_sum_sum.json", target="gpu")
    a, b = (torch.randn(8192, 768, device="cuda") for _ in range(2))
    o0, o1 = torch.empty(768, device="cuda"), torch.empty(768, device="cuda")
    y0, y1 = k(a, b, out=(o0, o1))
    assert y0 is o0 and y1 is o1
    torch.testing.assert_close(o0, a.sum(0), rtol=1e-5, atol=1e-3)
    torch.testing.assert_close(o1, b.sum(0), rtol=1e-5, atol=1e-3)
    with pytest.raises(polyred.BadInputError, match="out= takes 2"):
        k(a, b, out=o0)
    with pytest.raises(polyred.BadInputError, match="out= 1 .* has shape"):
        k(a, b, out=(o0, torch.empty(767, device="cuda")))
    with pytest.raises(polyred.BadInputError, match="out= 0 .* is torch.float16"):
        k(a, b, out=(o0.half(), o1))
    with pytest.raises(polyred.BadInputError, match="not on a CUDA device"):
        k(a, b, out=(o0.cpu(), o1))
    with pytest.raises(polyred.BadInputError, match="out= output 1 overlaps input 0"):
        k(a, b, out=(o0, a[0]))
    with pytest.raises(polyred.BadInputError, match="out= output 1 overlaps out= output 0"):
        k(a, b, out=(o0, o0))


def test_in_place_outputs_are_their_inputs_and_may_not_alias_other_inputs():
    import torch
    k = polyred.load(polyred.__file__.rsplit("/python/", 1)[0] + "/tests/data/ops/in_place_hazards.json", target="gpu")
    x, m, y = torch.randn(1024, 1024, device="cuda"), torch.randn(1024, device="cuda"), torch.randn(4096, 1024, device="cuda")
    c, z = torch.randn(512, 3000, device="cuda").half(), torch.randn(768, 256, device="cuda")
    want = [x.t().contiguous(), 0.9 * m + y.sum(0) / 4096, m.expand(8, 1024) + 1,
            (c.float() - c.float().mean(1, keepdim=True)).half(), 2 * z, z.sum(0)]
    got = k(x, m, y, c, z)
    assert got[0] is x and got[1] is m and got[3] is c and got[4] is z  # written in place
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-3, atol=2e-3)
    shared = torch.randn(4096 * 1024, device="cuda")  # x is the first quarter of y
    with pytest.raises(polyred.BadInputError, match="input 0 is written in place but overlaps input 2"):
        k(shared[:1024 * 1024].view(1024, 1024), m, shared.view(4096, 1024), c, z)


def test_traced_in_place_updates_agree_with_torch():
    import torch

    def adam(p, g, m, v):
        m.mul_(0.9).add_(g, alpha=0.1)
        v.mul_(0.999).addcmul_(g, g, value=0.001)
        p.addcdiv_(m, v.sqrt().add_(1e-8), value=-1e-3)

    def running_mean(x, mean):  # returns the centered batch, updates the statistics
        batch = x.mean(0)
        mean.lerp_(batch, 0.1)
        return x - batch

    step = polyred.compile(adam)
    args = [torch.randn(4096, 1024, device="cuda") for _ in range(4)]
    args[3] = args[3].abs()
    want = [a.clone() for a in args]
    for _ in range(3):  # the same three steps on both sides
        assert step(*args) is None
        adam(*want)
    for got, expected in zip(args, want):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
    x, mean = torch.randn(8192, 512, device="cuda"), torch.randn(512, device="cuda")
    expected_mean = mean.clone()
    expected = running_mean(x, expected_mean)
    got = polyred.compile(running_mean)(x, mean)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(mean, expected_mean, rtol=1e-5, atol=1e-6)
    a, b = torch.randn(1000, device="cuda"), torch.randn(1000, device="cuda")
    expected_a = a + 2 * b
    same = polyred.compile(lambda u, w: u.add_(w, alpha=2))(a, b)
    assert same is a
    torch.testing.assert_close(a, expected_a)


def test_traced_positional_and_keyword_arguments_agree_with_torch():
    import torch
    x = torch.randn(512, 3000, device="cuda")
    cases = [lambda a: torch.var(a, 1, False), lambda a: torch.var(a, 1, True, True), lambda a: a.std(0, False),
             lambda a: torch.std(a, dim=1, correction=0, keepdim=True), lambda a: torch.logsumexp(a, 1, True),
             lambda a: torch.softmax(a.half(), -1, dtype=torch.float32), lambda a: a.half().log_softmax(0, torch.float32)]
    for fn in cases:
        got, want = polyred.compile(fn)(x), fn(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_traced_integer_sums_and_alpha_agree_with_torch():
    import torch
    n = torch.randint(-(1 << 30), 1 << 30, (4096, 256), dtype=torch.int32, device="cuda")  # int32 sums overflow
    for fn in [lambda a: a.sum(0), lambda a: (a > 0).sum(1), lambda a: torch.sum(a, 0, dtype=torch.float64)]:
        got, want = polyred.compile(fn)(n), fn(n)
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want)
    x, y = torch.randn(1000, 64, device="cuda"), torch.randn(1000, 64, device="cuda")
    total = polyred.compile(lambda a: a.sum())(x)
    assert total.shape == () and total.shape == x.sum().shape
    torch.testing.assert_close(total, x.sum(), rtol=1e-5, atol=1e-3)
    fn = lambda a, b: torch.add(a, b, alpha=3) - a.sub(b, alpha=0.5)  # noqa: E731
    torch.testing.assert_close(polyred.compile(fn)(x, y), fn(x, y))


def test_tensor_on_another_device_is_refused():
    import torch
    if torch.cuda.device_count() < 2:
        pytest.skip("one GPU")
    k = polyred.load(polyred.__file__.rsplit("/python/", 1)[0] + "/examples/table2/sg09_sum_sum.json", target="gpu")
    with pytest.raises(polyred.BadInputError, match="the inputs on"):
        k(torch.zeros(8192, 768, device="cuda:0"), torch.zeros(8192, 768, device="cuda:1"))


def test_custom_op_composes_with_torch_compile():
    import torch
    if not hasattr(torch.library, "custom_op"):
        pytest.skip("torch.library.custom_op needs torch >= 2.4")
    b = polyred.Builder("row_max")
    b.output(b.reduce_max(b.input("x", "float32", (512, 1000)), axes=[1]))
    op = b.compile(target="gpu").as_torch_op("row_max_512x1000")
    x = torch.randn(512, 1000, device="cuda")
    f = torch.compile(lambda a: op(a) * 2 + 1)
    torch.testing.assert_close(f(x), x.amax(1) * 2 + 1)
