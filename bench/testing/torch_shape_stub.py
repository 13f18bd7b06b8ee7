"""A stand-in for the parts of PyTorch that bench/peers_torch.py and composite_torch.py use.

For machines without PyTorch (the development machine): tensors carry a shape and a
dtype and no values; every op checks its operands the way PyTorch would (broadcasting,
reshape sizes, permutations, reduction axes) and gives the result's shape and dtype.
Norms are 0 and comparisons equal, so every check "passes": this exercises the control
flow and the shape logic, not the numbers. CUDA graphs, events and streams do nothing;
each event pair "measures" 1 ms.

install() puts it in sys.modules as "torch" (and torch.cuda, ...). Used by
bench/testing/smoke_peers_torch.py only.
"""
import math
import sys
import types


class DType:
    def __init__(self, name, size, is_float):
        self.name, self.itemsize, self.is_floating_point = name, size, is_float

    def __repr__(self):
        return "torch." + self.name


float64, float32, float16, bfloat16 = (DType("float64", 8, True), DType("float32", 4, True),
                                       DType("float16", 2, True), DType("bfloat16", 2, True))
int64, int32, int8, uint8, bool_ = (DType("int64", 8, False), DType("int32", 4, False), DType("int8", 1, False),
                                    DType("uint8", 1, False), DType("bool", 1, False))
ORDER = [bool_, uint8, int8, int32, int64, float16, bfloat16, float32, float64]


def promote(a, b):
    if a.is_floating_point != b.is_floating_point:
        return a if a.is_floating_point else b
    return max(a, b, key=ORDER.index)


def broadcast(*shapes):
    rank = max(len(s) for s in shapes)
    out = []
    for d in range(rank):
        sizes = {s[d - rank + len(s)] for s in shapes if d - rank + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise RuntimeError(f"shapes {shapes} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


class Size(tuple):
    def numel(self):
        return math.prod(self)


class Tensor:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = Size(int(n) for n in shape), dtype

    # ---- shape and dtype
    def dim(self):
        return len(self.shape)

    def numel(self):
        return math.prod(self.shape)

    def element_size(self):
        return self.dtype.itemsize

    def to(self, dtype):
        return Tensor(self.shape, dtype)

    def double(self):
        return self.to(float64)

    def reshape(self, *shape):
        shape = list(shape[0]) if len(shape) == 1 and isinstance(shape[0], (list, tuple)) else list(shape)
        if -1 in shape:
            known = math.prod(n for n in shape if n != -1)
            shape[shape.index(-1)] = self.numel() // known if known else 0
        if math.prod(shape) != self.numel():
            raise RuntimeError(f"shape {shape} is invalid for input of size {self.numel()}")
        return Tensor(shape, self.dtype)

    def permute(self, *perm):
        perm = list(perm[0]) if len(perm) == 1 and isinstance(perm[0], (list, tuple)) else list(perm)
        if sorted(p % max(1, self.dim()) for p in perm) != list(range(self.dim())):
            raise RuntimeError(f"bad permutation {perm} of {self.shape}")
        return Tensor([self.shape[p] for p in perm], self.dtype)

    def expand(self, *shape):
        shape = list(shape[0]) if len(shape) == 1 and isinstance(shape[0], (list, tuple)) else list(shape)
        if broadcast(self.shape, tuple(shape)) != tuple(shape):
            raise RuntimeError(f"cannot expand {self.shape} to {shape}")
        return Tensor(shape, self.dtype)

    def clone(self):
        return Tensor(self.shape, self.dtype)

    def detach(self):
        return self

    def copy_(self, other):
        broadcast(self.shape, other.shape)
        return self

    def zero_(self):
        return self

    def item(self):
        return 0.0

    def __getitem__(self, mask):
        return Tensor((0,), self.dtype)

    # ---- arithmetic
    def _binary(self, other, result=None):
        o = other if isinstance(other, Tensor) else Tensor((), self.dtype)
        return Tensor(broadcast(self.shape, o.shape), result or promote(self.dtype, o.dtype))

    def __add__(self, o):
        return self._binary(o)
    __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __add__

    def __lt__(self, o):
        return self._binary(o, bool_)
    __le__ = __gt__ = __ge__ = __eq__ = __ne__ = __lt__
    __hash__ = object.__hash__

    def __or__(self, o):
        return self._binary(o, bool_)
    __and__ = __or__

    def __invert__(self):
        return Tensor(self.shape, self.dtype)


def _t(x, like=None):
    return x if isinstance(x, Tensor) else Tensor((), like.dtype if like is not None else float32)


# ---- elementwise functions
def _unary(dtype_of=None):
    return lambda x, *a, **k: Tensor(x.shape, dtype_of(x) if dtype_of else x.dtype)


def _float_result(x):
    return x.dtype if x.dtype.is_floating_point else float32


neg = abs = sign = floor = ceil = round = _unary()
exp = log = sqrt = rsqrt = reciprocal = tanh = sin = cos = erf = _unary(_float_result)
logical_not = isnan = isinf = isfinite = _unary(lambda x: bool_)


def _binary_fn(result=None, float_result=False):
    def f(a, b, **kwargs):
        a, b = _t(a, b if isinstance(b, Tensor) else None), _t(b, a if isinstance(a, Tensor) else None)
        dt = result or promote(a.dtype, b.dtype)
        if float_result and not dt.is_floating_point and kwargs.get("rounding_mode") is None:
            dt = float32
        return Tensor(broadcast(a.shape, b.shape), dt)
    return f


add = sub = mul = pow = maximum = minimum = _binary_fn()
div = _binary_fn(float_result=True)
eq = ne = lt = le = gt = ge = logical_and = logical_or = _binary_fn(bool_)


def where(cond, a, b):
    a, b = _t(a, b), _t(b, a)
    return Tensor(broadcast(cond.shape, a.shape, b.shape), promote(a.dtype, b.dtype))


# ---- reductions
def _reduce(x, dim, keepdim, dtype):
    if dim is None:
        dims = tuple(range(x.dim()))
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = {d % x.dim() for d in dims} if x.dim() else set()
    if dim is not None and len(dims) != len(dim if not isinstance(dim, int) else [dim]):
        raise RuntimeError(f"repeated dims {dim}")
    shape = [1 if d in dims else n for d, n in enumerate(x.shape) if keepdim or d not in dims]
    return Tensor(shape, dtype)


def sum(x, dim=None, keepdim=False, dtype=None):
    default = int64 if not x.dtype.is_floating_point else x.dtype
    return _reduce(x, dim, keepdim, dtype or default)


def amax(x, dim=None, keepdim=False):
    return _reduce(x, dim, keepdim, x.dtype)


amin = amax


def prod(x, dim=None, keepdim=False, dtype=None):
    if isinstance(dim, (tuple, list)):
        raise TypeError("prod takes one dim")
    return _reduce(x, dim, keepdim, dtype or (int64 if not x.dtype.is_floating_point else x.dtype))


def all(x, dim=None, keepdim=False):
    return _reduce(x, dim, keepdim, bool_)


any = all


def equal(a, b):
    return True


class _Linalg:
    @staticmethod
    def vector_norm(x):
        return Tensor((), float64)


linalg = _Linalg()


# ---- factories
def _shape(shape):
    return tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)


def full(shape, value, dtype=None, device=None):
    return Tensor(_shape(shape), dtype or float32)


def full_like(x, value):
    return Tensor(x.shape, x.dtype)


def rand(shape, device=None, dtype=None):
    return Tensor(_shape(shape), dtype or float32)


def randint(low, high, shape, device=None, dtype=None):
    return Tensor(_shape(shape), dtype or int64)


def empty(n, dtype=None, device=None):
    return Tensor(_shape(n), dtype or float32)


def manual_seed(seed):
    pass


class no_grad:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def compile(fn, dynamic=None):
    return fn


# ---- cuda
class _Event:
    def __init__(self, enable_timing=False):
        pass

    def record(self):
        pass

    def elapsed_time(self, other):
        return 1.0


class _Graph:
    def replay(self):
        pass


class _Context:
    def __init__(self, *a, **k):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


class _Stream:
    def wait_stream(self, other):
        pass


class _Props:
    name, multi_processor_count = "stub GPU (no CUDA)", 132


cuda = types.ModuleType("torch.cuda")
cuda.Event, cuda.CUDAGraph, cuda.Stream, cuda.graph, cuda.stream = _Event, _Graph, _Stream, _Context, _Context
cuda.current_stream = lambda: _Stream()
cuda.is_available = lambda: True
cuda.synchronize = cuda.empty_cache = lambda: None
cuda.get_device_properties = lambda i: _Props()
_dynamo = types.SimpleNamespace(reset=lambda: None)
backends = types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(allow_tf32=False)))
version = types.SimpleNamespace(cuda="stub")
__version__ = "stub"
bool = bool_


def install():
    """Registers this module as torch (and torch.cuda)."""
    me = sys.modules[__name__]
    sys.modules["torch"] = me
    sys.modules["torch.cuda"] = cuda
    return me
