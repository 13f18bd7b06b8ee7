"""Symbolic sizes from Python: a kernel built with a size symbol in a shape compiles once
and runs on CPU tensors of many row counts, the symbol's value read from the tensors'
shapes (python/polyred/symbolic.py), each result compared with torch."""
import random

import pytest

import polyred
from polyred.errors import BadInputError


def _layer_norm_builder():
    b = polyred.Builder("py_sym_layer_norm")
    x = b.input("x", "float32", ("S", 64))
    w = b.input("w", "float32", (64,))
    mean = b.reduce("mean", x, axes=[1], keep_dims=True)
    c = b.binary("sub", x, mean)
    var = b.reduce("mean", b.binary("mul", c, c), axes=[1], keep_dims=True)
    inv = b.unary("rsqrt", b.binary("add", var, b.constant(1e-5, "float32")))
    b.output(b.binary("mul", b.binary("mul", c, inv), w))
    return b


def test_symbolic_kernel_runs_at_many_row_counts(torch_or_skip):
    torch = torch_or_skip
    k = _layer_norm_builder().compile()
    assert k.symbols == ("S",)
    assert k.inputs[0].shape == ("S", 64) and k.outputs[0].shape == ("S", 64)
    rng = random.Random(69)
    w = torch.randn(64)
    for rows in [1, 2, 3, 17, 64, 127] + [rng.randint(1, 400) for _ in range(4)]:
        x = torch.randn(rows, 64)
        y = k(x, w)
        assert y.shape == (rows, 64)
        want = torch.nn.functional.layer_norm(x, (64,), eps=1e-5) * w
        torch.testing.assert_close(y, want, rtol=1e-4, atol=1e-5)
    assert k.check_cpu(sizes={"S": 33}).count("ok") == 1


def test_symbolic_sizes_are_inferred_and_checked(torch_or_skip):
    torch = torch_or_skip
    b = polyred.Builder("py_sym_add")
    x = b.input("x", "float32", ("S", 8))
    y = b.input("y", "float32", ("S", 8))
    b.output(b.unary("tanh", b.binary("add", x, y)))
    k = b.compile()
    x, y = torch.randn(5, 8), torch.randn(5, 8)
    torch.testing.assert_close(k(x, y), torch.tanh(x + y))
    assert k(torch.randn(0, 8), torch.randn(0, 8)).shape == (0, 8)
    with pytest.raises(BadInputError, match="gives S = 6"):
        k(torch.randn(5, 8), torch.randn(6, 8))
    with pytest.raises(BadInputError, match="the kernel takes"):
        k(torch.randn(5, 9), torch.randn(5, 9))
    with pytest.raises(BadInputError, match="size symbols"):
        k.check_cpu()


def test_a_symbol_in_a_reduced_axis_is_refused():
    b = polyred.Builder("py_sym_reduce_rows")
    x = b.input("x", "float32", ("S", 8))
    b.output(b.reduce_sum(x, axes=[0]))
    with pytest.raises(BadInputError, match="reduced axis"):
        b.compile()
