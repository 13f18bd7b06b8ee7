"""polyred from Python: compile fused elementwise+reduction sub-graphs into CUDA
kernels and run them on torch tensors.

    import polyred
    k = polyred.load("examples/table2/sg09_sum_sum.json", target="gpu")
    y0, y1 = k(x0, x1)                # torch CUDA tensors, current stream, no copies
    k.check_cpu()                     # the lowered kernels vs the reference, on the CPU

    b = polyred.Builder("col_sum")    # or build the graph here
    b.output(b.reduce_sum(b.input("x", "float32", (4096, 1024)), axes=[0]))
    col_sum = b.compile(target="gpu")

    f = polyred.compile(lambda x: torch.softmax(x, -1))   # trace a PyTorch function

    model = torch.compile(model, backend="polyred")        # whole models, forward and backward


Backed by libpolyred's C API through ctypes (polyred/_lib.py says where the library
is looked for).
"""
from ._lib import lib as _libpolyred
from .builder import Builder, Value
from .errors import BadInputError, Error, InternalError, MismatchError, NoGpuError
from .kernel import Kernel, TensorSpec, load, load_json
from . import trace as _trace

__version__ = _libpolyred.polyred_version().decode()
__all__ = ["Builder", "Value", "Kernel", "TensorSpec", "load", "load_json", "compile", "backend", "Error",
           "BadInputError", "MismatchError", "NoGpuError", "InternalError"]


class _Backend:
    """torch.compile(model, backend=polyred.backend): the Dynamo backend (polyred.dynamo),
    imported with torch on first use; with_options(...) fixes its options."""

    __name__ = "polyred"

    def __call__(self, gm, example_inputs, **kwargs):
        from .dynamo import polyred_backend
        return polyred_backend(gm, example_inputs, **kwargs)

    @staticmethod
    def with_options(**options):
        from .dynamo import with_options
        return with_options(**options)


backend = _Backend()


def _autograd_compiler(fn, deterministic):
    """What polyred.compile runs when gradients are needed: fn through the torch.compile
    backend (AOTAutograd traces forward and backward; polyred computes their regions)."""
    import torch
    from .dynamo import with_options
    return torch.compile(fn, backend=with_options(deterministic=deterministic))


def compile(fn, *, fallback=False, deterministic=False, target="gpu"):
    """fn (a PyTorch function of tensors) as one polyred program per input signature,
    traced with torch.fx (polyred/trace.py lists what it lowers); a call whose inputs
    require grad goes through the torch.compile backend, so results carry a grad_fn."""
    return _trace.compile(fn, fallback=fallback, deterministic=deterministic, target=target,
                          autograd=_autograd_compiler)


def _register_with_torch():
    """Makes backend="polyred" work without installing the package, where torch is
    already imported (an installed package registers through its entry point)."""
    import sys
    if "torch._dynamo" in sys.modules:
        from .dynamo import register
        register()


_register_with_torch()
