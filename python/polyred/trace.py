"""polyred.compile(fn): traces a PyTorch function with torch.fx and lowers its
elementwise ops and reductions into a polyred graph, compiled once per input
signature (shapes, dtypes, device) since polyred's kernels are shape-specialized.

Supported: + - * / (tensors and Python numbers), neg, abs, exp, log, sqrt, rsqrt,
tanh, sigmoid, relu, gelu (tanh form), pow, square, maximum, minimum, comparisons,
where, casts (.float(), .half(), .to(dtype)), reshape/view/unsqueeze, sum, mean, amax,
amin, prod, var and std (with `correction`/`unbiased`), softmax, log_softmax,
logsumexp, layer_norm, rms_norm (F.rms_norm, or written out as
x * rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w), argmax and argmin (int64
indices, PyTorch's ties and NaN rule; one tuple reduction), index_select and
embedding, index_add and scatter_add along any dim and index_put with
accumulate=True (atomic scatters; out-of-range indices are dropped where torch raises,
index_put's negative ones count from the end as in torch), cumsum and cumprod (one scan kernel), flip, max_pool2d and avg_pool2d (NCHW), addcmul,
addcdiv and lerp, and the in-place form of every method above (x.add_(g, alpha=-lr),
m.mul_(b).add_(g), copy_, fill_, zero_): the tensor is rebound to its new value and an
argument changed in place is written back into its buffer, returned as that very
tensor; an in-place op on a view, or on a tensor a view was taken of, is refused (fx
does not follow the aliasing). Anything else
raises BadInputError naming it; compile(fn, fallback=True) runs such a function
eagerly instead (for all its calls).

A call with an input that requires grad (grad mode on) goes through the torch.compile
backend instead (polyred.dynamo: AOTAutograd traces forward and backward, polyred
computes the regions of both), so its results carry a grad_fn."""
import dis
import math
import operator

from .builder import Builder
from .errors import BadInputError


def _dtype_name(torch_dtype):
    return str(torch_dtype).replace("torch.", "")


# Methods and functions whose result shares its argument's storage (a view, or the
# tensor itself): an in-place op on such a tensor, or on one a view was taken of, would
# change the other one too, which rebinding values (below) cannot follow.
_VIEW_METHODS = {"view", "reshape", "unsqueeze", "squeeze", "contiguous", "flatten", "unflatten", "t", "transpose",
                 "permute", "expand", "expand_as", "view_as", "narrow", "select", "detach", "movedim", "swapaxes",
                 "__getitem__", "as_strided", "unfold", "diagonal", "real", "imag", "T", "mT"}


_INTEGER_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8")


def _in_place_method(name):
    return name.endswith("_") and not name.endswith("__")


class _Lowering:
    def __init__(self, torch, builder):
        self.torch, self.b, self.env = torch, builder, {}
        self.same_tensor = {}  # fx node name -> the node whose tensor it is (an in-place op's result)
        self.viewed = set()    # tensors (their first node's name) that a view was taken of, or that are views

    def tensor_of(self, name):
        while name in self.same_tensor:
            name = self.same_tensor[name]
        return name

    def note_views(self, node):
        """Records that `node`'s result shares storage with its first argument, where it does."""
        t = self.torch
        functions = {t.reshape, t.flatten, t.transpose, t.permute, t.squeeze, t.unsqueeze, t.t, t.narrow, t.select,
                     t.movedim, t.swapaxes, t.detach, operator.getitem}
        shares = (node.op == "call_method" and node.target in _VIEW_METHODS) or (
            node.op == "call_function" and node.target in functions)
        first = node.args[0] if node.args else None
        if shares and hasattr(first, "name"):
            self.viewed.update({self.tensor_of(first.name), node.name})

    def in_place(self, node):
        """x.op_(...): the value op(x, ...) in x's dtype and shape, which x's node (and
        the in-place op's result, the same tensor) then stands for; a placeholder changed
        so is written back into its input's buffer (Compiled.lower)."""
        name, target = node.target, node.args[0]
        if not hasattr(target, "name"):
            raise BadInputError(f"polyred.compile: Tensor.{name} of a constant is not supported")
        tensor = self.tensor_of(target.name)
        if tensor in self.viewed:
            raise BadInputError(f"polyred.compile: Tensor.{name} changes a tensor that shares its storage with a view "
                                "(reshape, view, indexing, ...); polyred cannot follow the change through the view")
        x = self.arg(target)
        if name in ("index_add_", "scatter_add_", "index_put_"):
            value = self.method(name[:-1], node.args, node.kwargs)
        elif name == "zero_":
            value = self.b.constant(0, x.dtype)
        elif name == "fill_" and isinstance(node.args[1], (int, float, bool)):
            value = self.b.constant(node.args[1], x.dtype)
        else:
            value = self.method(name if name == "copy_" else name[:-1], node.args, dict(node.kwargs))
        if isinstance(value, (int, float, bool)):
            value = self.b.constant(value, x.dtype)
        if tuple(value.shape) != tuple(x.shape):
            if len(value.shape) > len(x.shape) or any(v not in (1, n) for v, n in zip(reversed(value.shape),
                                                                                    reversed(x.shape))):
                raise BadInputError(f"polyred.compile: Tensor.{name} of a {list(x.shape)} tensor with a "
                                    f"{list(value.shape)} result")
            value = self.b.broadcast_to(value, list(x.shape))
        if value.dtype != x.dtype:
            value = self.b.cast(value, x.dtype)
        self.env[tensor] = value
        self.same_tensor[node.name] = tensor
        return value

    def arg(self, a):
        if hasattr(a, "name"):
            a_name = self.tensor_of(a.name)
            if a_name in self.env:
                return self.env[a_name]
        return a

    def gather_call(self, target, a, kw):
        """index_select(x, dim, index) and embedding(index, weight) (F.embedding's order) as a Gather;
        the gathered tensor is an argument of the function or computed from arguments by
        elementwise ops (polyred gathers through them)."""
        t, F = self.torch, self.torch.nn.functional
        if target is t.index_select:
            return self.b.gather(a[0], a[2] if len(a) > 2 else kw["index"], a[1] if len(a) > 1 else kw["dim"])
        index, weight = (a[0], a[1]) if target is F.embedding else (a[1], a[0])  # torch.embedding(weight, index)
        # padding_idx, scale_grad_by_freq and sparse shape the gradient only; max_norm
        # renormalizes the weight in place.
        max_norm = kw.get("max_norm", a[3] if target is F.embedding and len(a) > 3 else None)
        if max_norm is not None:
            raise BadInputError("polyred.compile: embedding with max_norm (an in-place renormalization) is not supported")
        return self.b.gather(weight, index, 0)

    def index_add(self, x, dim, index, source, alpha=1):
        """x.index_add(dim, index, source): x plus source's slices along dim added at their
        indices, a ScatterAdd with x as its base (docs/format.md, TensorScatterAdd): along
        dim 0 the index picks rows; along another dim every element of source is added at
        its whole coordinate (the index broadcast along dim, Iota elsewhere)."""
        x, index, source = self.arg(x), self.arg(index), self.arg(source)
        rank = len(x.shape)
        dim %= rank
        if alpha != 1:
            source = self.b.binary("mul", source, self.b.constant(alpha, source.dtype))
        if dim == 0:
            return self.b.tensor_scatter_add(x, index, source)
        along = [1] * rank
        along[dim] = index.shape[0]
        spread = self.b.broadcast_to(self.b.reshape(index, along), list(source.shape))
        return self.scatter_at(x, [spread if k == dim else self.b.iota(source.shape, k) for k in range(rank)], source)

    def scatter_add(self, x, dim, index, src):
        """torch.scatter_add(x, dim, index, src): x plus every src[p] added at x[p with p[dim]
        replaced by index[p]], p over index's shape (src's): a TensorScatterAdd at whole
        coordinates, one atomic scatter kernel. Indices outside x are dropped where torch raises."""
        x, index, src = self.arg(x), self.arg(index), self.arg(src)
        rank = len(x.shape)
        dim %= rank
        if list(index.shape) != list(src.shape) or len(src.shape) != rank:
            raise BadInputError("polyred.compile: scatter_add needs index and src of one shape, of x's rank "
                                f"(got x {list(x.shape)}, index {list(index.shape)}, src {list(src.shape)})")
        if any(src.shape[k] > x.shape[k] for k in range(rank) if k != dim):
            raise BadInputError(f"polyred.compile: scatter_add's src {list(src.shape)} is larger than x "
                                f"{list(x.shape)} off dim {dim}")
        coordinates = [index if k == dim else self.b.iota(src.shape, k) for k in range(rank)]
        return self.scatter_at(x, coordinates, src)

    def index_put(self, x, indices, values, accumulate=False):
        """torch.index_put(x, (i0, .., ik-1), values, accumulate=True): x plus values added at
        x[i0[p], .., ik-1[p], ...] (negative indices count from the end, as in torch); one
        atomic scatter kernel. accumulate=False (a store whose duplicates race) is not supported."""
        if not accumulate:
            raise BadInputError("polyred.compile: index_put without accumulate=True (a store: duplicate indices "
                                "race) is not supported")
        x = self.arg(x)
        indices = [self.arg(i) for i in indices]
        if not indices or any(i is None for i in indices) or len(indices) > len(x.shape):
            raise BadInputError("polyred.compile: index_put takes 1 to rank(x) index tensors, none skipped")
        shape = list(indices[0].shape)
        if any(list(i.shape) != shape for i in indices):
            raise BadInputError("polyred.compile: index_put's index tensors must have one shape")
        values = self.arg(values)
        want = shape + list(x.shape[len(indices):])
        if isinstance(values, (int, float, bool)):
            values = self.b.constant(values, x.dtype)
        if list(values.shape) != want:
            values = self.b.broadcast_to(values, want)
        wrapped = []
        for axis, i in enumerate(indices):
            i = self.b.cast(i, "int64") if i.dtype != "int64" else i
            negative = self.b.binary("lt", i, self.b.constant(0, "int64"))
            wrapped.append(self.b.select(negative, self.b.binary("add", i, self.b.constant(x.shape[axis], "int64")), i))
        return self.scatter_at(x, wrapped, values)

    def scatter_at(self, x, coordinates, values):
        """x plus values added at the tuples of `coordinates` (tensors of one shape, one per
        leading axis of x): MindSpore's TensorScatterAdd with the tuples stacked last."""
        shape = list(coordinates[0].shape)
        columns = [self.b.reshape(self.b.cast(c, "int64") if c.dtype != "int64" else c, shape + [1])
                   for c in coordinates]
        stacked = columns[0] if len(columns) == 1 else self.b.concat(columns, -1)
        return self.b.tensor_scatter_add(x, stacked, values)

    def floor_divide(self, a, b):
        if self.is_float(a, b):
            raise BadInputError("polyred.compile: floor division of floats is not lowered (torch floors the exact "
                                "quotient, polyred's FloorDiv the rounded one, as MindSpore); write torch.floor(a / b), "
                                "or compile(fn, fallback=True) runs it eagerly")
        return self.binary("floor_divide", a, b)

    @staticmethod
    def is_float(*xs):
        return any(isinstance(x, float) or getattr(x, "dtype", None) in ("float16", "bfloat16", "float32", "float64")
                   for x in xs)

    def tensor_or_constant(self, x, like):
        if isinstance(x, (int, float, bool)):
            return self.b.constant(x, like.dtype)
        return x

    def binary(self, op, a, b):
        a, b = self.arg(a), self.arg(b)
        if isinstance(a, (int, float)):
            a = self.b.constant(a, b.dtype)
        b = self.tensor_or_constant(b, a)
        return self.b.binary(op, a, b)

    def elementwise_binary(self, op, a, b, rest, kw, what):
        """add/sub with torch's alpha (b scaled first); any other keyword -- div's
        rounding_mode, an out= tensor -- is refused rather than ignored."""
        rest, alpha = list(rest), 1
        if op in ("add", "sub"):
            alpha = kw.pop("alpha", rest.pop(0) if rest else 1)
        if kw or rest:
            extra = ", ".join(list(kw) or ["a third argument"])
            raise BadInputError(f"polyred.compile: {what} with {extra} is not supported")
        if alpha != 1:
            b = b * alpha if isinstance(b, (int, float)) else self.binary("mul", b, alpha)
        return self.binary(op, a, b)

    @staticmethod
    def axes(dim):
        if dim is None:
            return None
        return [dim] if isinstance(dim, int) else list(dim)

    def reduce(self, kind, x, dim=None, keepdim=False, dtype=None):
        """torch's reductions: `dtype` casts the input first; sums and products of
        integers and bools count in int64; a mean of integers is an error in torch."""
        x = self.arg(x)
        if dtype is not None:
            x = self.cast(x, dtype)
        elif x.dtype in _INTEGER_DTYPES and kind in ("sum", "prod"):
            x = self.b.cast(x, "int64")
        elif x.dtype in _INTEGER_DTYPES and kind == "mean":
            raise BadInputError(f"polyred.compile: mean of {x.dtype} values (torch wants a float dtype)")
        if kind in ("sum", "mean", "prod") and x.dtype in ("float16", "bfloat16"):
            r = self.b.reduce(kind, self.b.cast(x, "float32"), self.axes(dim), keepdim)
            return self.b.cast(r, x.dtype)
        return self.b.reduce(kind, x, self.axes(dim), keepdim)

    def count(self, x, dim):
        axes = range(len(x.shape)) if dim is None else ([dim] if isinstance(dim, int) else dim)
        return math.prod(x.shape[a % len(x.shape)] for a in axes)

    def var(self, x, dim=None, correction=1, keepdim=False, sqrt=False):
        x = self.arg(x)
        xf = self.b.cast(x, "float32") if x.dtype in ("float16", "bfloat16") else x
        mean = self.b.reduce("mean", xf, self.axes(dim), True)
        d = self.b.binary("sub", xf, mean)
        s = self.b.reduce("sum", self.b.binary("mul", d, d), self.axes(dim), keepdim)
        n = max(self.count(x, dim) - correction, 0)
        v = self.b.binary("div", s, self.b.constant(float(n), xf.dtype))
        if sqrt:
            v = self.b.unary("sqrt", v)
        return self.b.cast(v, x.dtype) if v.dtype != x.dtype else v

    def logsumexp(self, x, dim, keepdim=False):
        x = self.arg(x)
        m = self.b.reduce("max", x, self.axes(dim), True)
        s = self.b.reduce("sum", self.b.unary("exp", self.b.binary("sub", x, m)), self.axes(dim), True)
        r = self.b.binary("add", self.b.unary("log", s), m)
        if not keepdim:
            r = self.b.reshape(r, [n for k, n in enumerate(x.shape) if k not in [a % len(x.shape) for a in self.axes(dim)]] or [1])
        return r

    def layer_norm(self, x, normalized_shape, weight=None, bias=None, eps=1e-5):
        x = self.arg(x)
        axes = list(range(len(x.shape) - len(normalized_shape), len(x.shape)))
        xf = self.b.cast(x, "float32") if x.dtype in ("float16", "bfloat16") else x
        mean = self.b.reduce("mean", xf, axes, True)
        d = self.b.binary("sub", xf, mean)
        var = self.b.reduce("mean", self.b.binary("mul", d, d), axes, True)
        y = self.b.binary("mul", d, self.b.unary("rsqrt", self.b.binary("add", var, self.b.constant(eps, xf.dtype))))
        for p, op in ((weight, "mul"), (bias, "add")):
            if p is not None:
                p = self.arg(p)
                y = self.b.binary(op, y, self.b.cast(p, xf.dtype) if p.dtype != xf.dtype else p)
        return self.b.cast(y, x.dtype) if y.dtype != x.dtype else y

    def arg_extremum(self, kind, x, dim=None, keepdim=False):
        """torch.argmax/argmin: int64 indices; dim None: over the flattened tensor."""
        x = self.arg(x)
        if dim is None:
            r = getattr(self.b, kind)(self.b.reshape(x, [math.prod(x.shape)]), 0)
            return self.b.reshape(r, [1] * len(x.shape)) if keepdim else r
        return getattr(self.b, kind)(x, dim, keepdim)

    def cast(self, x, dtype):
        x = self.arg(x)
        name = _dtype_name(dtype)
        return x if name == x.dtype else self.b.cast(x, name)

    def call(self, target, args, kwargs):
        t, F = self.torch, self.torch.nn.functional
        if "out" in kwargs:  # a store into another tensor, which only Tensor.op_ methods express here
            raise BadInputError(f"polyred.compile: {getattr(target, '__name__', target)} with out is not supported")
        a = [self.arg(x) for x in args]
        kw = {k: self.arg(v) for k, v in kwargs.items()}
        binaries = {operator.add: "add", t.add: "add", operator.sub: "sub", t.sub: "sub", operator.mul: "mul",
                    t.mul: "mul", operator.truediv: "div", t.div: "div", t.maximum: "maximum", t.minimum: "minimum",
                    operator.gt: "gt", operator.lt: "lt", operator.ge: "ge", operator.le: "le", operator.eq: "eq",
                    t.pow: "pow", operator.pow: "pow", t.floor_divide: "floor_divide",
                    operator.floordiv: "floor_divide", t.remainder: "remainder", operator.mod: "remainder",
                    t.fmod: "fmod", t.atan2: "atan2"}
        unaries = {operator.neg: "neg", t.neg: "neg", t.abs: "abs", t.exp: "exp", t.log: "log", t.sqrt: "sqrt",
                   t.rsqrt: "rsqrt", t.tanh: "tanh", t.sigmoid: "sigmoid", t.relu: "relu", F.relu: "relu",
                   t.erf: "erf", t.sin: "sin", t.cos: "cos", t.erfc: "erfc", t.expm1: "expm1", t.log1p: "log1p",
                   t.asin: "asin", t.acos: "acos", t.atan: "atan", t.asinh: "asinh", t.acosh: "acosh"}
        if target in binaries:
            if binaries[target] == "floor_divide":
                return self.floor_divide(a[0], a[1])
            if target in (operator.sub, t.sub) and isinstance(a[0], (int, float)) and not kw and len(a) == 2:
                return self.b.binary("sub", self.b.constant(a[0], a[1].dtype), a[1])
            return self.elementwise_binary(binaries[target], a[0], a[1], a[2:], dict(kw), f"torch.{binaries[target]}")
        if target in unaries:
            if kw or len(a) > 1:
                raise BadInputError(f"polyred.compile: torch.{unaries[target]} with {', '.join(kw) or 'more arguments'} "
                                    "is not supported")
            return self.b.unary(unaries[target], a[0])
        if target is F.gelu and kw.get("approximate", "none") == "tanh":
            return self.b.unary("gelu", a[0])
        if target is t.where:
            return self.b.select(a[0], self.tensor_or_constant(a[1], a[2]), self.tensor_or_constant(a[2], a[1]))
        reductions = {t.sum: "sum", t.mean: "mean", t.amax: "max", t.amin: "min", t.prod: "prod"}
        if target in reductions:
            return self.reduce(reductions[target], a[0], a[1] if len(a) > 1 else kw.get("dim"),
                               kw.get("keepdim", a[2] if len(a) > 2 else False), kw.get("dtype"))
        if target in (t.var, t.std):
            return self.var(a[0], *self._var_arguments(a[1:], kw), target is t.std)
        if target in (t.softmax, F.softmax, t.log_softmax, F.log_softmax):
            dim = a[1] if len(a) > 1 else kw.get("dim", -1)
            return self.softmax(a[0], dim, a[2] if len(a) > 2 else kw.get("dtype"),
                                target in (t.log_softmax, F.log_softmax))
        if target is t.logsumexp:
            return self.logsumexp(a[0], a[1] if len(a) > 1 else kw["dim"], kw.get("keepdim", a[2] if len(a) > 2 else False))
        arg_extrema = {t.argmax: "argmax", t.argmin: "argmin"}
        if target in arg_extrema:
            return self.arg_extremum(arg_extrema[target], a[0], a[1] if len(a) > 1 else kw.get("dim"),
                                     kw.get("keepdim", a[2] if len(a) > 2 else False))
        if target in (t.index_select, t.embedding, F.embedding):
            return self.gather_call(target, a, kw)
        if target is t.square:
            return self.b.binary("mul", a[0], a[0])
        if target is t.index_add:
            return self.index_add(*a, **kw)
        if target is t.scatter_add:
            return self.scatter_add(*a, **kw)
        if target is t.index_put:
            return self.index_put(*a, **kw)
        if target in (t.cumsum, t.cumprod):
            return self.cumulative(target is t.cumsum, a[0], a[1] if len(a) > 1 else kw["dim"], kw.get("dtype"))
        if target is t.flip:
            return self.b.flip(a[0], a[1] if len(a) > 1 else kw["dims"])
        if target in (F.max_pool2d, F.avg_pool2d):
            return self.pool2d(target is F.max_pool2d, a, kw)
        if hasattr(F, "rms_norm") and target is F.rms_norm:
            names = ["normalized_shape", "weight", "eps"]
            extra = dict(zip(names, a[1:]))
            extra.update({k: v for k, v in kw.items() if k in names})
            return self.rms_norm(a[0], **extra)
        if target is F.layer_norm:
            names = ["normalized_shape", "weight", "bias", "eps"]
            extra = dict(zip(names, a[1:]))
            extra.update({k: v for k, v in kw.items() if k in names})
            return self.layer_norm(a[0], **extra)
        raise BadInputError(f"polyred.compile: {getattr(target, '__name__', target)} is not supported "
                            "(compile(fn, fallback=True) runs unsupported functions eagerly)")

    @staticmethod
    def resolve_shape(x, shape):
        """A view's shape with its -1 filled in."""
        if -1 in shape:
            known = math.prod(n for n in shape if n != -1)
            shape = [math.prod(x.shape) // known if n == -1 else n for n in shape]
        return shape

    def rms_norm(self, x, normalized_shape, weight=None, eps=None):
        x = self.arg(x)
        axes = list(range(len(x.shape) - len(normalized_shape), len(x.shape)))
        xf = self.b.cast(x, "float32") if x.dtype in ("float16", "bfloat16") else x
        eps = eps if eps is not None else 1.1920928955078125e-07  # torch: finfo(float32).eps by default
        ms = self.b.reduce("mean", self.b.binary("mul", xf, xf), axes, True)
        y = self.b.binary("mul", xf, self.b.unary("rsqrt", self.b.binary("add", ms, self.b.constant(eps, xf.dtype))))
        if weight is not None:
            w = self.arg(weight)
            y = self.b.binary("mul", y, self.b.cast(w, xf.dtype) if w.dtype != xf.dtype else w)
        return self.b.cast(y, x.dtype) if y.dtype != x.dtype else y

    def cumulative(self, is_sum, x, dim, dtype=None):
        """torch.cumsum / torch.cumprod: integers (and bools) accumulate in int64, as torch does."""
        if dtype is not None:
            x = self.cast(x, dtype)
        elif not self.is_float(x):
            x = self.cast(x, self.torch.int64)
        return (self.b.cumsum if is_sum else self.b.cumprod)(x, dim % len(x.shape))

    def pool2d(self, is_max, a, kw):
        """F.max_pool2d / F.avg_pool2d on NCHW: symmetric padding, dilation 1; average
        pooling counts the padding (count_include_pad) and rounds down (ceil_mode off:
        AKG's ceil windows divide by the whole window, torch's by the part inside)."""
        names = ["kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"] if is_max else \
                ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]
        o = dict(zip(names, a[1:]))
        o.update({k: v for k, v in kw.items() if k in names})
        pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)
        kernel = pair(o["kernel_size"])
        stride = pair(o.get("stride") or kernel)
        pad = pair(o.get("padding", 0))
        x = a[0]
        if len(x.shape) != 4:
            raise BadInputError("polyred.compile: 2-D pooling takes an NCHW tensor")
        if pair(o.get("dilation", 1)) != (1, 1) or o.get("return_indices") or o.get("divisor_override") or \
                (not is_max and (o.get("ceil_mode") or not o.get("count_include_pad", True))):
            raise BadInputError("polyred.compile: pooling with dilation, indices, a divisor override, or an average "
                                "with ceil_mode or without count_include_pad is not supported")
        out = []
        for d in range(2):
            n, k, s, p = x.shape[2 + d], kernel[d], stride[d], pad[d]
            size = (n + 2 * p - k + (s - 1 if o.get("ceil_mode") else 0)) // s + 1
            if o.get("ceil_mode") and (size - 1) * s >= n + p:  # torch: the last window starts inside
                size -= 1
            out.append(size)
        return self.b.pool2d(x, "max" if is_max else "avg", kernel, stride, [pad[0], pad[1], pad[0], pad[1]], out)

    @staticmethod
    def _var_arguments(rest, kw):
        """(dim, correction, keepdim) of var/std: var(dim, unbiased, keepdim) positionally,
        var(unbiased) alone, or correction= / unbiased= / keepdim= by keyword."""
        rest = list(rest)
        if rest and isinstance(rest[0], bool):  # var(input, unbiased)
            rest.insert(0, None)
        dim = rest[0] if rest else kw.get("dim")
        unbiased = rest[1] if len(rest) > 1 else kw.get("unbiased", True)
        correction = kw["correction"] if kw.get("correction") is not None else (1 if unbiased else 0)
        return dim, correction, rest[2] if len(rest) > 2 else kw.get("keepdim", False)

    def softmax(self, x, dim, dtype, log):
        """softmax/log_softmax; `dtype` casts the input first, as torch does."""
        x = self.arg(x)
        if dtype is not None:
            x = self.cast(x, dtype)
        return self.b.softmax(x, dim, log=log)

    def method(self, name, args, kwargs):
        x, rest = self.arg(args[0]), [self.arg(v) for v in args[1:]]
        t = self.torch
        casts = {"float": t.float32, "half": t.float16, "double": t.float64, "bfloat16": t.bfloat16, "int": t.int32,
                 "long": t.int64, "bool": t.bool}
        if name in casts:
            return self.cast(x, casts[name])
        if name == "to" and rest and isinstance(rest[0], t.dtype):
            return self.cast(x, rest[0])
        if name in ("sum", "mean", "amax", "amin", "prod"):
            kind = {"amax": "max", "amin": "min"}.get(name, name)
            return self.reduce(kind, x, rest[0] if rest else kwargs.get("dim"),
                               kwargs.get("keepdim", rest[1] if len(rest) > 1 else False), kwargs.get("dtype"))
        if name in ("argmax", "argmin"):
            return self.arg_extremum(name, x, rest[0] if rest else kwargs.get("dim"),
                                     kwargs.get("keepdim", rest[1] if len(rest) > 1 else False))
        if name in ("var", "std"):
            return self.var(x, *self._var_arguments(rest, kwargs), name == "std")
        if name in ("softmax", "log_softmax"):
            return self.softmax(x, rest[0] if rest else kwargs.get("dim", -1),
                                rest[1] if len(rest) > 1 else kwargs.get("dtype"), name == "log_softmax")
        if name in ("exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "abs", "neg", "erf", "erfc", "expm1",
                    "log1p", "asin", "acos", "atan", "asinh", "acosh", "sin", "cos"):
            if kwargs or rest:
                raise BadInputError(f"polyred.compile: Tensor.{name} with more arguments is not supported")
            return self.b.unary(name, x)
        if name in ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "remainder", "fmod", "atan2"):
            return self.elementwise_binary(name, x, rest[0], rest[1:], dict(kwargs), f"Tensor.{name}")
        if name in ("addcmul", "addcdiv"):  # x + value * t1 (* or /) t2
            if set(kwargs) - {"value"} or len(rest) != 2:
                raise BadInputError(f"polyred.compile: Tensor.{name} takes two tensors and value=")
            term = self.binary("mul" if name == "addcmul" else "div", rest[0], rest[1])
            value = kwargs.get("value", 1)
            return self.binary("add", x, term if value == 1 else self.binary("mul", term, value))
        if name == "lerp":  # x + weight * (end - x)
            end, weight = rest[0], rest[1] if len(rest) > 1 else kwargs["weight"]
            return self.binary("add", x, self.binary("mul", self.binary("sub", end, x), weight))
        if name == "copy_":  # the value of `src`, in x's dtype and shape (see Compiled.lower)
            return self.arg(rest[0]) if rest else self.arg(kwargs["src"])
        if name == "floor_divide":
            return self.floor_divide(x, rest[0])
        if name == "square":
            return self.b.binary("mul", x, x)
        if name in ("reshape", "view"):
            shape = list(rest[0]) if len(rest) == 1 and isinstance(rest[0], (tuple, list)) else list(rest)
            return self.b.reshape(x, self.resolve_shape(x, shape))
        if name == "unsqueeze":
            dim = rest[0] % (len(x.shape) + 1)
            return self.b.reshape(x, list(x.shape[:dim]) + [1] + list(x.shape[dim:]))
        if name == "contiguous":
            return x
        if name in ("cumsum", "cumprod"):
            return self.cumulative(name == "cumsum", x, rest[0] if rest else kwargs["dim"], kwargs.get("dtype"))
        if name == "index_add":
            return self.index_add(x, *rest, **kwargs)
        if name == "scatter_add":
            return self.scatter_add(x, *rest, **kwargs)
        if name == "index_put":
            return self.index_put(x, *rest, **kwargs)
        if name == "flip":
            dims = list(rest[0]) if len(rest) == 1 and isinstance(rest[0], (tuple, list)) else list(rest) or kwargs["dims"]
            return self.b.flip(x, dims)
        raise BadInputError(f"polyred.compile: Tensor.{name} is not supported "
                            "(compile(fn, fallback=True) runs unsupported functions eagerly)")


def _arguments_augmented(fn):
    """The parameters of `fn` that an augmented assignment (x += y) rebinds. Eagerly that
    changes the caller's tensor in place; torch.fx records it as x = x + y and the change
    is lost, so such functions are refused rather than traced."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return set()
    params = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    ins = list(dis.get_instructions(code))
    found = set()
    for op, store in zip(ins, ins[1:]):
        in_place = op.opname.startswith("INPLACE_") or (op.opname == "BINARY_OP" and op.argrepr.endswith("="))
        if in_place and store.opname == "STORE_FAST" and store.argval in params:
            found.add(store.argval)
    return found


class Compiled:
    """The callable polyred.compile returns: checks its arguments (CUDA tensors of the
    traced dtypes), compiles once per signature, launches on the current stream."""

    def __init__(self, fn, fallback, options, autograd=None):
        self.fn, self.fallback, self.options, self.kernels, self.eager = fn, fallback, options, {}, False
        self.autograd, self._with_grad = autograd, None

    def lower(self, tensors):
        import torch
        import torch.fx

        augmented = _arguments_augmented(self.fn)
        if augmented:
            name = sorted(augmented)[0]
            raise BadInputError(f"polyred.compile: '{name} op= ...' changes the argument {name} in place, which torch.fx "
                                f"does not record; write {name}.add_(...) (and the like) to change it, or "
                                f"{name} = {name} + ... for a new tensor")
        graph = torch.fx.symbolic_trace(self.fn).graph
        b = Builder(getattr(self.fn, "__name__", "fn").replace("<", "").replace(">", ""))
        low = _Lowering(torch, b)
        placeholders, inputs, returns = iter(tensors), {}, []
        for node in graph.nodes:
            if node.op == "placeholder":
                t = next(placeholders)
                low.env[node.name] = inputs[node.name] = b.input(node.name, _dtype_name(t.dtype), tuple(t.shape))
            elif node.op == "call_method" and _in_place_method(node.target):
                low.in_place(node)
            elif node.op == "call_function":
                low.env[node.name] = low.call(node.target, node.args, node.kwargs)
            elif node.op == "call_method":
                low.env[node.name] = low.method(node.target, node.args, node.kwargs)
            elif node.op == "output":
                results = node.args[0] if isinstance(node.args[0], (tuple, list)) else [node.args[0]]
                returns = [self._result(low, inputs, b, r) for r in results if r is not None]
            else:
                raise BadInputError(f"polyred.compile: fx node {node.op} {node.target} is not supported")
            if node.op in ("call_method", "call_function"):
                low.note_views(node)
        changed = [name for name, v in inputs.items() if low.env[name] is not v]
        for name in changed:  # arguments changed in place: their final values written back
            b.output_into(low.env[name], inputs[name])
        return b.compile(**self.options), returns

    @staticmethod
    def _result(low, inputs, b, r):
        """What the function returns in one slot: ("input", k) where it returns an argument
        it changed in place (the very tensor, as in eager), else ("output", k)."""
        name = low.tensor_of(r.name) if hasattr(r, "name") else None
        if name in inputs and low.env[name] is not inputs[name]:
            return "input", list(inputs).index(name)
        b.output(low.arg(r))
        return "output", len(b._outputs) - 1

    def __call__(self, *tensors):
        if self.eager:
            return self.fn(*tensors)
        if self._needs_autograd(tensors):
            return self._autograd_path()(*tensors)
        key = tuple((tuple(t.shape), str(t.dtype), str(t.device)) for t in tensors)
        compiled = self.kernels.get(key)
        if compiled is None:
            try:
                compiled = self.kernels[key] = (*self.lower(tensors), self.torch_shapes(tensors))
            except BadInputError:
                if not self.fallback:
                    raise
                self.eager = True
                return self.fn(*tensors)
        kernel, returns, shapes = compiled
        outputs = kernel(*tensors)
        if not isinstance(outputs, tuple):
            outputs = (outputs,)
        got = [tensors[k] if kind == "input" else outputs[k] for kind, k in returns]
        if shapes:  # a full reduction is shape (1,) to polyred, () to torch
            got = [g.view(want) if want is not None and g.shape != want and g.numel() == math.prod(want) else g
                   for g, want in zip(got, shapes)]
        return None if not got else got[0] if len(got) == 1 else tuple(got)

    @staticmethod
    def _needs_autograd(tensors):
        """A call whose result must carry a grad_fn: grad mode on and an input requiring grad."""
        if not any(getattr(t, "requires_grad", False) for t in tensors):
            return False
        import torch
        return torch.is_grad_enabled()

    def _autograd_path(self):
        """fn compiled by the `autograd` factory the package gives (the torch.compile
        backend, which sits above this layer), made at the first such call."""
        if self._with_grad is None:
            if self.autograd is None:
                raise BadInputError("polyred.compile: an input requires grad, and this callable was made without "
                                    "the torch.compile backend (use polyred.compile)")
            self._with_grad = self.autograd(self.fn, self.options.get("deterministic", False))
        return self._with_grad

    def torch_shapes(self, tensors):
        """The shapes `fn` returns, from a run on meta tensors (no data, no device), or
        None where that run fails."""
        import torch
        try:
            with torch.no_grad():
                result = self.fn(*[torch.empty(tuple(t.shape), dtype=t.dtype, device="meta") for t in tensors])
        except Exception:  # an op without a meta kernel: the shapes stay polyred's
            return None
        results = result if isinstance(result, (tuple, list)) else [result]
        return [tuple(r.shape) if isinstance(r, torch.Tensor) else None for r in results if r is not None]


def compile(fn, *, fallback=False, deterministic=False, target="gpu", autograd=None):
    """Returns a callable that runs `fn` as polyred kernels (see the module text);
    `autograd(fn, deterministic)` makes what runs calls that need gradients."""
    return Compiled(fn, fallback, {"deterministic": deterministic, "target": target}, autograd)
