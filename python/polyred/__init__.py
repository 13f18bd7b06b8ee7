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

Backed by libpolyred's C API through ctypes (polyred/_lib.py says where the library
is looked for).
"""
from ._lib import lib as _libpolyred
from .builder import Builder, Value
from .errors import BadInputError, Error, InternalError, MismatchError, NoGpuError
from .kernel import Kernel, TensorSpec, load, load_json
from .trace import compile

__version__ = _libpolyred.polyred_version().decode()
__all__ = ["Builder", "Value", "Kernel", "TensorSpec", "load", "load_json", "compile", "Error", "BadInputError",
           "MismatchError", "NoGpuError", "InternalError"]
