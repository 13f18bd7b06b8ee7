"""Builds graphs in Python, mirroring the C++ GraphBuilder (src/frontend/builder.h), as
composite JSON (docs/format.md) that polyred compiles:

    b = polyred.Builder("col_sum")
    x = b.input("x", "float16", (8192, 768))
    b.output(b.reduce_sum(b.cast(x, "float32"), axes=[0]))
    kernel = b.compile()

A string in a shape names a size symbol: the kernel is compiled once for every value of
it and a call takes it from its tensors' shapes (docs/format.md, "Symbolic sizes"):

    x = b.input("x", "float32", ("S", 768))

A reduction of your own is declared once (its combiner an expression of composite ops
over "a", the accumulator, and "b", the element or a later partial) and used like a
built-in one:

    b.declare_reduction("max_abs", "float32", 0, ["Maximum", ["Abs", "a"], ["Abs", "b"]])
    b.output(b.user_reduce("max_abs", x, axes=[1], dtype="float32"))
"""
import json
import math
from dataclasses import dataclass

from .errors import BadInputError


@dataclass(frozen=True)
class Value:
    name: str
    dtype: str
    shape: tuple
    constant: object = None  # a Python number for constants


_UNARY = {"neg": "Neg", "abs": "Abs", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "rsqrt": "Rsqrt",
          "reciprocal": "Reciprocal", "tanh": "Tanh", "sin": "Sin", "cos": "Cos", "erf": "Erf", "sign": "Sign",
          "floor": "Floor", "ceil": "Ceil", "round": "Round", "logical_not": "LogicalNot", "isnan": "IsNan",
          "isinf": "IsInf", "isfinite": "IsFinite", "relu": "ReLU", "sigmoid": "Sigmoid", "square": "Square",
          "gelu": "GeLU", "softplus": "Softplus", "erfc": "Erfc", "expm1": "Expm1", "log1p": "Log1p",
          "asin": "Asin", "acos": "ACos", "atan": "Atan", "asinh": "Asinh", "acosh": "Acosh"}
_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "RealDiv", "pow": "Pow", "maximum": "Maximum",
           "minimum": "Minimum", "eq": "Equal", "ne": "NotEqual", "lt": "Less", "le": "LessEqual", "gt": "Greater",
           "ge": "GreaterEqual", "logical_and": "LogicalAnd", "logical_or": "LogicalOr",
           "floor_divide": "FloorDiv", "remainder": "FloorMod", "fmod": "Mod", "atan2": "Atan2"}
_BOOL_RESULT = {"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual", "LogicalAnd", "LogicalOr",
                "LogicalNot", "IsNan", "IsInf", "IsFinite"}
_REDUCE = {"sum": "ReduceSum", "prod": "ReduceProd", "max": "ReduceMax", "min": "ReduceMin", "all": "ReduceAll",
           "any": "ReduceAny", "mean": "ReduceMean"}


def _broadcast(a, b):
    """Numpy broadcasting; a string is a size symbol, which matches itself or 1."""
    out = []
    for k in range(max(len(a), len(b))):
        x = a[len(a) - 1 - k] if k < len(a) else 1
        y = b[len(b) - 1 - k] if k < len(b) else 1
        if x != y and 1 not in (x, y):
            raise BadInputError(f"shapes {a} and {b} do not broadcast")
        out.append(y if x == 1 else x)
    return tuple(reversed(out))


class Builder:
    def __init__(self, name="graph"):
        self.name = name
        self._inputs, self._ops, self._outputs, self._count = [], [], [], 0
        self._reductions = {}  # declared scalar reductions by name
        self._tuples = {}      # declared tuple reductions by name

    def _fresh(self, stem):
        self._count += 1
        return f"{stem}_{self._count}"

    @staticmethod
    def _desc(v):
        d = {"data_type": v.dtype, "format": "DefaultFormat", "shape": list(v.shape), "tensor_name": v.name}
        if v.constant is not None:
            d["value"] = v.constant
        return d

    def _op(self, op, ins, dtype, shape, attrs=()):
        return self._op_outputs(op, ins, [dtype], shape, attrs)[0]

    def _op_outputs(self, op, ins, dtypes, shape, attrs=()):
        """Appends op over `ins` with one output of `shape` per dtype; returns them."""
        outs = [Value(self._fresh(op.lower()), dtype, tuple(shape)) for dtype in dtypes]
        self._ops.append({"name": op, "attr": [{"name": k, "value": v} for k, v in attrs] or None,
                          "input_desc": [[self._desc(v)] for v in ins], "output_desc": [self._desc(o) for o in outs]})
        return outs

    def input(self, name, dtype, shape):
        v = Value(name, dtype, tuple(shape))
        self._inputs.append(v)
        return v

    def constant(self, value, dtype):
        if isinstance(value, float) and not math.isfinite(value):  # JSON numbers cannot hold them
            value = "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"
        return Value(self._fresh("const"), dtype, (), value)

    def unary(self, op, x):
        op = _UNARY.get(op, op)
        return self._op(op, [x], "bool" if op in _BOOL_RESULT else x.dtype, x.shape)

    def binary(self, op, a, b):
        op = _BINARY.get(op, op)
        return self._op(op, [a, b], "bool" if op in _BOOL_RESULT else a.dtype, _broadcast(a.shape, b.shape))

    def select(self, cond, a, b):
        return self._op("Select", [cond, a, b], a.dtype, _broadcast(_broadcast(cond.shape, a.shape), b.shape))

    def cast(self, x, dtype):
        return self._op("Cast", [x], dtype, x.shape, [("dst_type", dtype)])

    def gather(self, params, indices, axis=0):
        """params[a.., indices[i..], b..] along `axis` (0 where an index is out of range);
        params must be an input of the graph."""
        axis = axis + len(params.shape) if axis < 0 else axis
        shape = params.shape[:axis] + indices.shape + params.shape[axis + 1:]
        return self._op("Gather", [params, indices], params.dtype, shape, [("axis", axis)])

    def segment_sum(self, data, ids, num_segments):
        """MindSpore's UnsortedSegmentSum: out[s, rest] sums data[i.., rest] over the i.. with
        ids[i..] == s (ids of shape data[:r]; ids outside [0, num_segments) are dropped).
        An atomic scatter kernel (docs/format.md)."""
        shape = [num_segments] + list(data.shape[len(ids.shape):])
        return self._op("UnsortedSegmentSum", [data, ids], data.dtype, shape, [("num_segments", num_segments)])

    def tensor_scatter_add(self, x, indices, updates):
        """MindSpore's TensorScatterAdd: x plus each updates[l.., rest] added at
        x[indices[l.., 0..k-1], rest] (1-D indices: k = 1; tuples outside x are dropped)."""
        return self._op("TensorScatterAdd", [x, indices, updates], x.dtype, x.shape, [])

    def iota(self, shape, axis, dtype="int64"):
        """The coordinate along `axis` of every element of a tensor of `shape` (polyred's Iota)."""
        return self._op("Iota", [], dtype, list(shape), [("axis", axis)])

    def standard_normal(self, shape, seed=0, seed2=0, dtype="float32"):
        """MindSpore's StandardNormal: standard normal values, a pure function of the seeds
        and each element's position (polyred's PhiloxNormal; docs/format.md)."""
        return self._op("StandardNormal", [], dtype, list(shape), [("seed", seed), ("seed2", seed2)])

    def concat(self, xs, axis=0):
        """MindSpore's Concat of tensors of one dtype and rank along `axis`."""
        axis %= len(xs[0].shape)
        shape = list(xs[0].shape)
        shape[axis] = sum(x.shape[axis] for x in xs)
        return self._op("Concat", list(xs), xs[0].dtype, shape, [("axis", axis)])

    def cumsum(self, x, axis, exclusive=False, reverse=False):
        """MindSpore's CumSum along `axis`: one scan kernel (docs/design/frontend.md, "Scans")."""
        return self._op("CumSum", [x], x.dtype, x.shape,
                        [("axis", axis), ("exclusive", bool(exclusive)), ("reverse", bool(reverse))])

    def cumprod(self, x, axis, exclusive=False, reverse=False):
        """MindSpore's CumProd along `axis` (the products before the first element: 1)."""
        return self._op("CumProd", [x], x.dtype, x.shape,
                        [("axis", axis), ("exclusive", bool(exclusive)), ("reverse", bool(reverse))])

    def flip(self, x, dims):
        """x reversed along `dims`: a StridedSlice with stride -1 there."""
        rank = len(x.shape)
        dims = {d % rank for d in dims}
        every = (1 << rank) - 1
        return self._op("StridedSlice", [x], x.dtype, x.shape,
                        [("begin", [0] * rank), ("end", [0] * rank),
                         ("strides", [-1 if d in dims else 1 for d in range(rank)]), ("begin_mask", every),
                         ("end_mask", every), ("ellipsis_mask", 0), ("new_axis_mask", 0), ("shrink_axis_mask", 0)])

    def pool2d(self, x, kind, kernel, stride, padding, out_hw, layout="NCHW"):
        """Pool2D (AKG's): `kind` max or avg over `kernel` windows at `stride`, `padding`
        [top, left, bottom, right]; the output's H and W (out_hw) give the rounding."""
        h, w = (2, 3) if layout == "NCHW" else (1, 2)
        shape = list(x.shape)
        shape[h], shape[w] = out_hw
        return self._op("Pool2D", [x], x.dtype, shape,
                        [("global", False), ("pool_type", kind), ("data_layout", layout), ("kernel_size", list(kernel)),
                         ("strides", list(stride)), ("pad", list(padding)), ("round_mode", 1)])

    def window(self, x, begin, steps, shape):
        """polyred's Window: out[idx] = x[(begin[d] + steps[d] * idx[d]) mod x.shape[d]] of
        `shape` (a slice, a strided or reversed slice; docs/format.md)."""
        return self._op("Window", [x], x.dtype, list(shape), [("begin", list(begin)), ("steps", list(steps))])

    def reshape(self, x, shape):
        # A symbolic target (a size symbol's name in it) is the declared output shape alone.
        symbolic = any(isinstance(d, str) for d in shape)
        return self._op("Reshape", [x], x.dtype, shape, [] if symbolic else [("shape", list(shape))])

    def transpose(self, x, perm):
        return self._op("Transpose", [x], x.dtype, [x.shape[p] for p in perm], [("perm", list(perm))])

    def broadcast_to(self, x, shape):
        return self._op("BroadcastTo", [x], x.dtype, shape, [("shape", list(shape))])

    def reduce(self, kind, x, axes=None, keep_dims=False, dtype=None):
        """kind: sum, prod, max, min, all, any, mean; axes None: every axis."""
        return self._op(_REDUCE[kind], [x], dtype or x.dtype, self._reduced_shape(x, axes, keep_dims) or [1],
                        [("axis", self._axes(x, axes)), ("keep_dims", bool(keep_dims))])

    def declare_reduction(self, name, acc_dtype, identity, combine):
        """Declares a scalar reduction (docs/format.md, "reductions") for user_reduce:
        accumulating in `acc_dtype` (int32, int64, float32 or float64) from `identity`
        (a number, or "inf", "-inf", "nan"), folding by `combine`, an expression over
        "a" and "b" as nested lists [op, operand, ...] of composite elementwise ops, or
        {"value": v, "data_type": t} constants. polyred samples its laws (identity,
        associativity, commutativity) when the graph is compiled and refuses it with the
        law that failed. Returns `name`."""
        if not isinstance(name, str) or not name:
            raise BadInputError("a declared reduction needs a name")
        if name in self._reductions:
            raise BadInputError(f"reduction {name!r} is declared twice")
        self._reductions[name] = {"name": name, "data_type": acc_dtype, "identity": identity, "combine": combine}
        return name

    def user_reduce(self, name, x, axes=None, keep_dims=False, dtype=None):
        """Reduces x over `axes` (None: every axis) by the declared reduction `name`; the
        result in `dtype` (default: x's)."""
        if name not in self._reductions:
            raise BadInputError(f"no reduction {name!r} is declared (declare_reduction)")
        return self._op("UserReduce", [x], dtype or x.dtype, self._reduced_shape(x, axes, keep_dims) or [1],
                        [("reduction", name), ("axis", self._axes(x, axes)), ("keep_dims", bool(keep_dims))])

    def declare_tuple_reduction(self, declaration):
        """Declares a tuple reduction (docs/format.md, "tuple_reductions") for
        tuple_reduce: a dict with "name", "inputs" (their dtypes), "commutative",
        "fields" (name, data_type, identity, lift over "in0".., combine over "a0".. and
        "b0"..) and "results" (name, value over "a0"..). Checked, laws sampled, when the
        graph is compiled. Returns its name."""
        name = declaration.get("name") if isinstance(declaration, dict) else None
        if not isinstance(name, str) or not name:
            raise BadInputError("a tuple reduction's declaration is a dict with a \"name\"")
        if name in self._tuples:
            raise BadInputError(f"tuple reduction {name!r} is declared twice")
        self._tuples[name] = dict(declaration)
        return name

    def tuple_reduce(self, name, inputs, dtypes, axes=None, keep_dims=False):
        """Reduces `inputs` (all of one shape) over `axes` (None: every axis) by the
        declared tuple reduction `name`: one Value per result, in order, of `dtypes` (the
        results' types, which the compiler checks)."""
        if name not in self._tuples:
            raise BadInputError(f"no tuple reduction {name!r} is declared (declare_tuple_reduction)")
        inputs = list(inputs)
        if not inputs or any(v.shape != inputs[0].shape for v in inputs):
            raise BadInputError(f"tuple_reduce {name!r}: needs inputs of one shape")
        return tuple(self._op_outputs("TupleReduce", inputs, dtypes, self._reduced_shape(inputs[0], axes, keep_dims) or [1],
                                      [("reduction", name), ("axis", self._axes(inputs[0], axes)),
                                       ("keep_dims", bool(keep_dims))]))

    @staticmethod
    def _axes(x, axes):
        """The reduced axes of x, normalized and sorted (None: every axis)."""
        rank = len(x.shape)
        return list(range(rank)) if axes is None else sorted({a % rank for a in ([axes] if isinstance(axes, int) else axes)})

    @classmethod
    def _reduced_shape(cls, x, axes, keep_dims):
        axes = cls._axes(x, axes)
        return [1 if d in axes else n for d, n in enumerate(x.shape)] if keep_dims else \
            [n for d, n in enumerate(x.shape) if d not in axes]

    def reduce_sum(self, x, axes=None, keep_dims=False, dtype=None):
        return self.reduce("sum", x, axes, keep_dims, dtype)

    def reduce_max(self, x, axes=None, keep_dims=False):
        return self.reduce("max", x, axes, keep_dims)

    def argmax(self, x, axis=-1, keep_dims=False, index="int64"):
        """The index of the largest element along `axis` (PyTorch's rules: ties give
        the smallest index, NaN wins); `index`: "int64" (torch's) or "int32"."""
        return self._arg_extremum("Argmax", x, axis, keep_dims, index)

    def argmin(self, x, axis=-1, keep_dims=False, index="int64"):
        return self._arg_extremum("Argmin", x, axis, keep_dims, index)

    def _arg_extremum(self, op, x, axis, keep_dims, index):
        rank = len(x.shape)
        if not -rank <= axis < rank:
            raise BadInputError(f"{op}: axis {axis} out of range for rank {rank}")
        axis %= rank
        shape = [n for d, n in enumerate(x.shape) if d != axis]
        r = self._op(op, [x], index, shape or [1], [("axis", axis), ("output_type", index)])
        if keep_dims:  # MindSpore's Argmax has no keep_dims: the axis comes back by a reshape
            r = self.reshape(r, [1 if d == axis else n for d, n in enumerate(x.shape)])
        return r

    def softmax(self, x, axis=-1, log=False):
        return self._op("LogSoftmax" if log else "Softmax", [x], x.dtype, x.shape, [("axis", [axis])])

    def output(self, v):
        self._outputs.append(v)

    def output_into(self, v, input):
        """Writes v into `input`'s buffer (MindSpore's Assign; an in-place output): every
        other read of `input` sees its value from before the launch."""
        if (v.dtype, tuple(v.shape)) != (input.dtype, tuple(input.shape)):
            raise BadInputError(f"output_into: a {v.dtype}{list(v.shape)} value into the {input.dtype}"
                                f"{list(input.shape)} input {input.name!r}")
        self._outputs.append(self._op("Assign", [input, v], v.dtype, v.shape))

    def build(self):
        """The graph as a composite JSON dict."""
        if not self._outputs:
            raise BadInputError(f"graph {self.name!r} has no output")
        doc = {"composite": True, "composite_graph": self.name, "id": 0, "op": self.name, "platform": "AKG",
               "process": "cuda", "input_desc": [[self._desc(v)] for v in self._inputs], "op_desc": self._ops,
               "output_desc": [self._desc(v) for v in self._outputs]}
        if self._reductions:
            doc["reductions"] = list(self._reductions.values())
        if self._tuples:
            doc["tuple_reductions"] = list(self._tuples.values())
        return doc

    def to_json(self):
        return json.dumps(self.build())

    def compile(self, **options):
        from .kernel import load_json
        return load_json(self.to_json(), label=self.name, **options)
