"""aten -> polyred: the lowering of one aten op at a time into a polyred graph.

Takes the fx nodes of an aten graph (what AOTAutograd and Inductor's decompositions
give: functional aten and prims ops whose node.meta["val"] is a (fake) tensor with
static sizes) and gives Builder values computing them with eager PyTorch's results:

- dtypes follow node.meta["val"]: operands are cast to the result's dtype, and
  arithmetic on float16/bfloat16 runs in float32 with one rounding per op, as eager's
  "opmath" does (a Python scalar is never rounded to 16 bits first);
- sums, means and products accumulate in float32 for 16-bit floats and in int64 for
  integers (the result dtype torch gives), then round once;
- a rank-0 tensor is a polyred tensor of shape [1] (the region op views it back).

`lowering_of(node)` answers the partitioner (which ops this module lowers, and why not
where it refuses); `LOWERINGS` holds one function per op, called with the context
(RegionGraph in lowering/region.py) and the op's arguments bound by its schema.
"""
import math
import operator

from ..errors import BadInputError
from . import sizes


class Unsupported(BadInputError):
    """An op or an argument this module does not lower (the op stays with PyTorch)."""


# torch dtype name -> polyred dtype name (the element types polyred computes).
DTYPES = {"bool": "bool", "int8": "int8", "uint8": "uint8", "int32": "int32", "int64": "int64",
          "float16": "float16", "bfloat16": "bfloat16", "float32": "float32", "float64": "float64"}
FLOATS = ("float16", "bfloat16", "float32", "float64")
HALF_FLOATS = ("float16", "bfloat16")
INTEGERS = ("bool", "int8", "uint8", "int32", "int64")

LOWERINGS = {}  # OpOverload (or a Python callable such as operator.getitem) -> function
_REFUSALS = {}  # OpOverload -> function(bound args, node) -> reason or None


def dtype_name(torch_dtype):
    return str(torch_dtype).replace("torch.", "")


def lowers(*targets, refuses=None):
    """Registers the decorated function as the lowering of each target; `refuses(args,
    node)` returns why a given use cannot be lowered (None: it can)."""
    def register(fn):
        for t in targets:
            LOWERINGS[t] = fn
            if refuses is not None:
                _REFUSALS[t] = refuses
        return fn
    return register


def bind(target, args, kwargs):
    """The op's arguments by schema name, defaults filled in."""
    schema = getattr(target, "_schema", None)
    if schema is None:
        return {"args": args, **kwargs}
    bound = {}
    for k, a in enumerate(schema.arguments):
        if k < len(args) and not a.kwarg_only:
            bound[a.name] = args[k]
        elif a.name in kwargs:
            bound[a.name] = kwargs[a.name]
        elif a.has_default_value():
            bound[a.name] = a.default_value
        else:
            bound[a.name] = None
    return bound


def why_not_lowered(node):
    """None when `node` can be lowered, else the reason (for the compile log)."""
    if node.op != "call_function":
        return f"{node.op} node"
    if node.target not in LOWERINGS:
        return "no polyred lowering"
    if node.target is operator.getitem:  # a part of a multi-output op polyred lowers
        source = node.args[0]
        if getattr(source, "op", None) != "call_function" or why_not_lowered(source) is not None:
            return "a part of an op polyred does not lower"
    reason = _check_values(node)
    if reason:
        return reason
    refuse = _REFUSALS.get(node.target)
    if refuse is not None:
        return refuse(bind(node.target, node.args, node.kwargs), node)
    return None


def _tensors_of(val):
    if isinstance(val, (list, tuple)):
        return [t for v in val for t in _tensors_of(v)]
    return [val] if hasattr(val, "dtype") and hasattr(val, "shape") else []


def _check_values(node):
    """Every tensor read or produced: a polyred dtype, sizes that are ints or symbolic
    sizes polyred can carry (lowering/sizes.py), not known to be empty, one device."""
    val = node.meta.get("val")
    if val is None:
        return "no shape information (meta['val'])"
    produced = _tensors_of(val)
    if not produced and node.target is not operator.getitem:
        return "produces no tensor"
    read = []
    for n in node.all_input_nodes:
        v = n.meta.get("val")
        if sizes.is_size(v):
            continue
        ts = _tensors_of(v)
        if not ts:
            return f"reads {n.name}, which is not a tensor"
        read += ts
    devices = set()
    for t in produced + read:
        name = dtype_name(t.dtype)
        if name not in DTYPES:
            return f"dtype {name} is not computed by polyred"
        try:
            for s in list(t.shape) + list(t.stride()):
                sizes.size_expr(s)
        except sizes.UnsupportedSize as e:
            return str(e)
        if sizes.known_true(math.prod(t.shape) == 0):
            return "an empty tensor"
        devices.add(t.device.type)
    if len(devices - {"cpu"}) > 1 or (devices - {"cpu", "cuda"}):
        return f"tensors on {', '.join(sorted(devices))}"
    return None


# ---- elementwise -----------------------------------------------------------------

def _compute_dtype(out):
    """The dtype an op with result dtype `out` computes in: float32 for 16-bit floats
    (eager's opmath), int32 for bools (torch's bool add/mul/max are or/and/or: the int
    result cast back to bool), else `out`."""
    return "float32" if out in HALF_FLOATS else "int32" if out == "bool" else out


def _elementwise(g, node, op, *operands):
    """op over operands in the result's compute dtype, rounded once to the result."""
    out = g.out_dtype(node)
    compute = _compute_dtype(out)
    values = [g.to(x, compute) for x in operands]
    r = g.b.binary(op, *values) if len(values) == 2 else g.b.unary(op, values[0])
    return g.to(r, out)


def _scaled(g, node, x, alpha):
    if alpha is None or alpha == 1:
        return x
    compute = _compute_dtype(g.out_dtype(node))
    return g.b.binary("mul", g.to(x, compute), g.const(alpha, compute))


def _torch():
    import torch
    return torch


def _aten():
    return _torch().ops.aten


def _prims():
    return _torch().ops.prims


def _register_elementwise():
    aten = _aten()

    def add(g, node, a):
        out = g.out_dtype(node)
        compute = _compute_dtype(out)
        other = _scaled(g, node, a["other"], a.get("alpha"))
        return g.to(g.b.binary("add", g.to(a["self"], compute), g.to(other, compute)), out)

    def sub(g, node, a):
        out = g.out_dtype(node)
        compute = _compute_dtype(out)
        other = _scaled(g, node, a["other"], a.get("alpha"))
        return g.to(g.b.binary("sub", g.to(a["self"], compute), g.to(other, compute)), out)

    def rsub(g, node, a):
        out = g.out_dtype(node)
        compute = _compute_dtype(out)
        other = _scaled(g, node, a["self"], a.get("alpha"))
        return g.to(g.b.binary("sub", g.to(a["other"], compute), g.to(other, compute)), out)

    lowers(aten.add.Tensor, aten.add.Scalar)(add)
    lowers(aten.sub.Tensor, aten.sub.Scalar)(sub)
    lowers(aten.rsub.Tensor, aten.rsub.Scalar)(rsub)

    for name, op in (("mul", "mul"), ("maximum", "maximum"), ("minimum", "minimum"), ("atan2", "atan2"),
                     ("fmod", "fmod"), ("remainder", "remainder")):
        targets = [getattr(getattr(aten, name), ov) for ov in ("Tensor", "Scalar", "default")
                   if hasattr(getattr(aten, name), ov)]
        lowers(*targets)(lambda g, node, a, op=op: _elementwise(g, node, op, a["self"], a["other"]))

    lowers(aten.div.Tensor, aten.div.Scalar)(lambda g, node, a: _elementwise(g, node, "div", a["self"], a["other"]))

    def div_mode(g, node, a):
        mode = a.get("rounding_mode")
        if mode is None:
            return _elementwise(g, node, "div", a["self"], a["other"])
        return _elementwise(g, node, "floor_divide" if mode == "floor" else "Div", a["self"], a["other"])

    def div_mode_refused(a, node):
        if a.get("rounding_mode") is not None and _node_dtype(node) in FLOATS:
            return "division of floats with a rounding mode (polyred floors the rounded quotient)"
        return None

    lowers(aten.div.Tensor_mode, aten.div.Scalar_mode, refuses=div_mode_refused)(div_mode)

    def pow_(g, node, a):
        out = g.out_dtype(node)
        compute = "float32" if out in HALF_FLOATS else out
        base = a.get("self")
        exponent = a.get("exponent")
        return g.to(g.b.binary("pow", g.to(base, compute), g.to(exponent, compute)), out)

    lowers(aten.pow.Tensor_Scalar, aten.pow.Tensor_Tensor, aten.pow.Scalar)(pow_)

    unaries = {"neg": "neg", "abs": "abs", "exp": "exp", "log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt",
               "tanh": "tanh", "sigmoid": "sigmoid", "relu": "relu", "erf": "erf", "erfc": "erfc", "sin": "sin",
               "cos": "cos", "reciprocal": "reciprocal", "expm1": "expm1", "log1p": "log1p", "sign": "sign",
               "floor": "floor", "ceil": "ceil", "asin": "asin", "acos": "acos", "atan": "atan",
               "asinh": "asinh", "acosh": "acosh", "logical_not": "logical_not"}
    for name, op in unaries.items():
        lowers(getattr(aten, name).default)(lambda g, node, a, op=op: _elementwise(g, node, op, a["self"]))
    lowers(aten.round.default)(lambda g, node, a: _elementwise(g, node, "round", a["self"]))
    lowers(aten.square.default)(lambda g, node, a: _elementwise(g, node, "mul", a["self"], a["self"]))

    def unary_bool(op):
        def lower(g, node, a):
            x = a["self"]
            return g.b.unary(op, g.to(x, "float32") if x.dtype in HALF_FLOATS else x)
        return lower

    lowers(aten.isnan.default)(unary_bool("isnan"))
    lowers(aten.isinf.default)(unary_bool("isinf"))

    def silu(g, node, a):
        out = g.out_dtype(node)
        x = g.to(a["self"], "float32" if out in HALF_FLOATS else out)
        return g.to(g.b.binary("mul", x, g.b.unary("sigmoid", x)), out)

    lowers(aten.silu.default)(silu)

    def gelu(g, node, a):
        out = g.out_dtype(node)
        compute = "float32" if out in HALF_FLOATS else out
        x = g.to(a["self"], compute)
        if a.get("approximate", "none") == "tanh":
            return g.to(g.b.unary("gelu", x), out)
        c = g.const(0.7071067811865476, compute)
        half = g.const(0.5, compute)
        one = g.const(1.0, compute)
        r = g.b.binary("mul", g.b.binary("mul", x, half), g.b.binary("add", one, g.b.unary("erf", g.b.binary("mul", x, c))))
        return g.to(r, out)

    lowers(aten.gelu.default)(gelu)

    # Comparisons: operands in their promoted dtype (a scalar rounded to it, as torch).
    for name, op in (("eq", "eq"), ("ne", "ne"), ("lt", "lt"), ("le", "le"), ("gt", "gt"), ("ge", "ge")):
        targets = [getattr(getattr(aten, name), ov) for ov in ("Tensor", "Scalar")]
        lowers(*targets)(lambda g, node, a, op=op: g.compare(op, node))

    for name, op in (("logical_and", "logical_and"), ("logical_or", "logical_or")):
        lowers(getattr(aten, name).default)(
            lambda g, node, a, op=op: g.b.binary(op, g.to(a["self"], "bool"), g.to(a["other"], "bool")))

    def bool_only(a, node):
        if any(getattr(v, "meta", {}).get("val") is not None and dtype_name(v.meta["val"].dtype) != "bool"
               for v in node.all_input_nodes):
            return "bitwise ops on integers"
        return None

    lowers(aten.bitwise_and.Tensor, refuses=bool_only)(
        lambda g, node, a: g.b.binary("logical_and", a["self"], a["other"]))
    lowers(aten.bitwise_or.Tensor, refuses=bool_only)(
        lambda g, node, a: g.b.binary("logical_or", a["self"], a["other"]))
    lowers(aten.bitwise_not.default, refuses=bool_only)(lambda g, node, a: g.b.unary("logical_not", a["self"]))

    def where(g, node, a):
        out = g.out_dtype(node)
        return g.b.select(g.to(a["condition"], "bool"), g.to(a["self"], out), g.to(a["other"], out))

    lowers(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar)(where)

    def masked_fill(g, node, a):
        out = g.out_dtype(node)
        return g.b.select(g.to(a["mask"], "bool"), g.to(a["value"], out), g.to(a["self"], out))

    lowers(aten.masked_fill.Scalar, aten.masked_fill.Tensor)(masked_fill)

    def clamp(g, node, a):
        out = g.out_dtype(node)
        compute = "float32" if out in HALF_FLOATS else out
        x = g.to(a["self"], compute)
        if a.get("min") is not None:
            x = g.b.binary("maximum", x, g.to(a["min"], compute))
        if a.get("max") is not None:
            x = g.b.binary("minimum", x, g.to(a["max"], compute))
        return g.to(x, out)

    lowers(aten.clamp.default, aten.clamp.Tensor)(clamp)
    lowers(aten.clamp_min.default)(lambda g, node, a: clamp(g, node, {"self": a["self"], "min": a["min"]}))
    lowers(aten.clamp_max.default)(lambda g, node, a: clamp(g, node, {"self": a["self"], "max": a["max"]}))

    def threshold_backward(g, node, a):
        out = g.out_dtype(node)
        x = a["self"]
        below = g.compare_values("le", x, a["threshold"], x.dtype)
        return g.b.select(below, g.const(0, out), g.to(a["grad_output"], out))

    lowers(aten.threshold_backward.default)(threshold_backward)

    def sigmoid_backward(g, node, a):  # grad * y * (1 - y)
        out = g.out_dtype(node)
        compute = "float32" if out in HALF_FLOATS else out
        y, grad = g.to(a["output"], compute), g.to(a["grad_output"], compute)
        r = g.b.binary("mul", grad, g.b.binary("mul", y, g.b.binary("sub", g.const(1.0, compute), y)))
        return g.to(r, out)

    def tanh_backward(g, node, a):  # grad * (1 - y^2)
        out = g.out_dtype(node)
        compute = "float32" if out in HALF_FLOATS else out
        y, grad = g.to(a["output"], compute), g.to(a["grad_output"], compute)
        r = g.b.binary("mul", grad, g.b.binary("sub", g.const(1.0, compute), g.b.binary("mul", y, y)))
        return g.to(r, out)

    def fma(g, node, a):  # prims.fma(a, b, c) = a * b + c (Inductor's softmax backward), in opmath
        out = g.out_dtype(node)
        compute = _compute_dtype(out)
        x, y, z = (g.to(a[k], compute) for k in ("a", "b", "c"))
        return g.to(g.b.binary("add", g.b.binary("mul", x, y), z), out)

    import torch._inductor.inductor_prims  # noqa: F401 -- defines prims.fma, which its decompositions emit
    lowers(_prims().fma.default)(fma)
    lowers(aten.sigmoid_backward.default)(sigmoid_backward)
    lowers(aten.tanh_backward.default)(tanh_backward)

    def cast(g, node, a):
        return g.to(a.get("a", a.get("self")), g.out_dtype(node))

    def to_copy_refused(a, node):
        if a.get("device") is not None and node.all_input_nodes and \
                _torch().device(a["device"]).type != node.all_input_nodes[0].meta["val"].device.type:
            return "a copy to another device"
        if a.get("layout") not in (None, _torch().strided):
            return "a layout change"
        return None

    lowers(_prims().convert_element_type.default)(cast)
    lowers(aten._to_copy.default, refuses=to_copy_refused)(cast)
    lowers(aten.clone.default, aten.alias.default, aten.lift_fresh_copy.default)(lambda g, node, a: a["self"])


def _node_dtype(node):
    return dtype_name(node.meta["val"].dtype)


# ---- reductions ------------------------------------------------------------------

def _reduced_axes(x, dim):
    rank = len(x.shape)
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(rank))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted({d % rank for d in dims}) if rank else []


def _accumulating(g, node, kind, x, dim, keepdim, dtype=None):
    """sum, mean, prod: accumulate in float32 for 16-bit results, else in the result's
    dtype (torch's int64 for integer sums), then round once to the result."""
    out = g.out_dtype(node)
    acc = "float32" if out in HALF_FLOATS else out
    x = g.to(x, acc)
    r = g.b.reduce(kind, x, _reduced_axes(x, dim), bool(keepdim))
    return g.to(r, out)


def _register_reductions():
    aten = _aten()
    lowers(aten.sum.dim_IntList)(lambda g, node, a: _accumulating(g, node, "sum", a["self"], a["dim"], a["keepdim"]))
    lowers(aten.sum.default)(lambda g, node, a: _accumulating(g, node, "sum", a["self"], None, False))
    lowers(aten.mean.dim)(lambda g, node, a: _accumulating(g, node, "mean", a["self"], a["dim"], a["keepdim"]))
    lowers(aten.mean.default)(lambda g, node, a: _accumulating(g, node, "mean", a["self"], None, False))
    lowers(aten.prod.dim_int)(lambda g, node, a: _accumulating(g, node, "prod", a["self"], a["dim"], a["keepdim"]))
    lowers(aten.prod.default)(lambda g, node, a: _accumulating(g, node, "prod", a["self"], None, False))

    def extremum(kind):
        def lower(g, node, a):
            x = a["self"]
            return g.to(g.b.reduce(kind, x, _reduced_axes(x, a.get("dim")), bool(a.get("keepdim", False))),
                        g.out_dtype(node))
        return lower

    lowers(aten.amax.default)(extremum("max"))
    lowers(aten.amin.default)(extremum("min"))
    lowers(aten.max.default)(extremum("max"))
    lowers(aten.min.default)(extremum("min"))

    def logical(kind):
        def lower(g, node, a):
            x = g.to(a["self"], "bool")
            return g.to(g.b.reduce(kind, x, _reduced_axes(x, a.get("dim")), bool(a.get("keepdim", False))),
                        g.out_dtype(node))
        return lower

    for name, kind in (("any", "any"), ("all", "all")):
        op = getattr(aten, name)
        lowers(*[getattr(op, ov) for ov in ("dim", "dims", "default") if hasattr(op, ov)])(logical(kind))

    def var_parts(g, node, a, with_mean):
        """torch's var (and var_mean): sum((x - mean)^2) / max(n - correction, 0), in
        float32 for 16-bit floats, both results rounded once."""
        x = a["self"]
        dtype = dtype_name(node.meta["val"][0].dtype if with_mean else node.meta["val"].dtype)
        compute = "float32" if dtype in HALF_FLOATS else dtype
        xf = g.to(x, compute)
        axes = _reduced_axes(xf, a.get("dim"))
        n = math.prod(xf.shape[d] for d in axes) if xf.shape else 1
        correction = a.get("correction")
        correction = 1 if correction is None else correction
        mean = g.b.reduce("mean", xf, axes, True)
        d = g.b.binary("sub", xf, mean)
        s = g.b.reduce("sum", g.b.binary("mul", d, d), axes, bool(a.get("keepdim")))
        var = g.to(g.b.binary("div", s, g.const(float(max(n - correction, 0)), compute)), dtype)
        if not with_mean:
            return var
        if not a.get("keepdim"):
            mean = g.b.reshape(mean, list(var.shape))
        return var, g.to(mean, dtype)

    lowers(aten.var_mean.correction)(lambda g, node, a: var_parts(g, node, a, True))
    lowers(aten.var.correction)(lambda g, node, a: var_parts(g, node, a, False))

    def arg_extremum(kind):
        def lower(g, node, a):
            x = a["self"]
            if a.get("dim") is None:
                flat = g.b.reshape(x, [math.prod(x.shape)])
                r = getattr(g.b, kind)(flat, 0)
                return g.b.reshape(r, [1] * len(x.shape)) if a.get("keepdim") else r
            return getattr(g.b, kind)(x, a["dim"], bool(a.get("keepdim")))
        return lower

    lowers(aten.argmax.default)(arg_extremum("argmax"))
    lowers(aten.argmin.default)(arg_extremum("argmin"))

    def softmax(log):
        def lower(g, node, a):
            out = g.out_dtype(node)
            x = g.to(a["self"], out)
            return g.b.softmax(x, a["dim"] % max(len(x.shape), 1), log=log)
        return lower

    lowers(aten._softmax.default)(softmax(False))
    lowers(aten._log_softmax.default)(softmax(True))

    def cumsum(g, node, a):
        out = g.out_dtype(node)
        x = g.to(a["self"], out)
        return g.b.cumsum(x, a["dim"] % len(x.shape))

    lowers(aten.cumsum.default)(cumsum)


# ---- movement --------------------------------------------------------------------

def _register_movement():
    aten = _aten()

    def reshape(g, node, a):
        return g.b.reshape(a["self"], g.out_shape(node))

    lowers(aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten.squeeze.dim, aten.squeeze.dims,
           aten.squeeze.default, aten.unsqueeze.default, aten.view_copy.default, aten.flatten.using_ints)(reshape)

    def permute(g, node, a):
        x = a["self"]
        perm = [d % len(x.shape) for d in a["dims"]]
        return x if perm == sorted(perm) else g.b.transpose(x, perm)

    lowers(aten.permute.default)(permute)

    def transpose(g, node, a):
        x = a["self"]
        rank = len(x.shape)
        perm = list(range(rank))
        if rank >= 2:
            d0, d1 = (a.get("dim0", 0) % rank, a.get("dim1", 1) % rank) if "dim0" in a else (0, 1)
            perm[d0], perm[d1] = perm[d1], perm[d0]
        return x if perm == list(range(rank)) else g.b.transpose(x, perm)

    lowers(aten.transpose.int, aten.t.default)(transpose)

    def expand(g, node, a):
        x, shape = a["self"], g.out_shape(node)
        return x if list(x.shape) == shape else g.b.broadcast_to(x, shape)

    lowers(aten.expand.default)(expand)

    def slice_(g, node, a):
        x = a["self"]
        rank = len(x.shape)
        dim = a.get("dim", 0) % rank
        n = x.shape[dim]
        start, step = a.get("start") or 0, a.get("step") or 1
        start = max(0, min(n, start + n if start < 0 else start))
        shape = g.out_shape(node)
        if shape == list(x.shape):
            return x
        begin, steps = [0] * rank, [1] * rank
        begin[dim], steps[dim] = start, step
        return g.b.window(x, begin, steps, shape)

    lowers(aten.slice.Tensor, refuses=lambda a, node: None if (a.get("step") or 1) > 0 else "a negative step")(slice_)

    def select(g, node, a):
        x = a["self"]
        rank = len(x.shape)
        dim = a["dim"] % rank
        index = a["index"] % x.shape[dim]
        begin = [0] * rank
        begin[dim] = index
        window = g.b.window(x, begin, [1] * rank, [1 if d == dim else n for d, n in enumerate(x.shape)])
        return g.b.reshape(window, g.out_shape(node))

    lowers(aten.select.int)(select)

    def split(g, node, a):
        x = a["self"]
        rank = len(x.shape)
        dim = a.get("dim", 0) % rank
        vals = node.meta["val"]
        parts, start = [], 0
        for v in vals:
            size = v.shape[dim]
            begin = [0] * rank
            begin[dim] = start
            shape = [size if d == dim else n for d, n in enumerate(x.shape)]
            parts.append(x if shape == list(x.shape) else g.b.window(x, begin, [1] * rank, shape))
            start += size
        return tuple(parts)

    lowers(aten.split.Tensor, aten.split_with_sizes.default)(split)

    def cat(g, node, a):
        out = g.out_dtype(node)
        xs = [g.to(x, out) for x in a["tensors"] if math.prod(x.shape) > 0]
        if len(xs) == 1:
            return xs[0]
        return g.b.concat(xs, a.get("dim", 0))

    def cat_refused(a, node):
        ranks = {len(n.meta["val"].shape) for n in node.all_input_nodes}
        return None if len(ranks) == 1 else "tensors of different ranks"

    lowers(aten.cat.default, refuses=cat_refused)(cat)

    def getitem(g, node, a):
        return a["args"][0][a["args"][1]]

    lowers(operator.getitem)(getitem)


# ---- creation and gathers -----------------------------------------------------------

def _register_creation():
    aten, prims = _aten(), _prims()

    def full(g, node, a):
        value = a.get("fill_value", a.get("s"))
        return g.b.broadcast_to(g.const(value, g.out_dtype(node)), g.out_shape(node) or [1])

    lowers(aten.full.default, aten.full_like.default, aten.scalar_tensor.default)(full)
    lowers(aten.zeros_like.default, aten.new_zeros.default, aten.zeros.default)(
        lambda g, node, a: g.b.broadcast_to(g.const(0, g.out_dtype(node)), g.out_shape(node) or [1]))
    lowers(aten.ones_like.default, aten.new_ones.default, aten.ones.default)(
        lambda g, node, a: g.b.broadcast_to(g.const(1, g.out_dtype(node)), g.out_shape(node) or [1]))

    def iota(g, node, a):
        out = g.out_dtype(node)
        n = g.out_shape(node)[0]
        idx = g.b.iota([n], 0, "int64")
        start, step = a.get("start", 0), a.get("step", 1)
        if out in FLOATS:
            idx = g.to(idx, "float64" if out == "float64" else "float32")
        v = idx
        if step != 1:
            v = g.b.binary("mul", v, g.const(step, v.dtype))
        if start != 0:
            v = g.b.binary("add", v, g.const(start, v.dtype))
        return g.to(v, out)

    lowers(prims.iota.default, aten.arange.start_step, aten.arange.start, aten.arange.default)(iota)

    def embedding(g, node, a):
        return g.b.gather(a["weight"], g.to(a["indices"], "int64"), 0)

    lowers(aten.embedding.default)(embedding)

    def index_select(g, node, a):
        return g.b.gather(a["self"], g.to(a["index"], "int64"), a["dim"])

    lowers(aten.index_select.default)(index_select)

    def gather_along(g, node, a):
        """torch.gather(x, dim, index): out[p] = x[p with p[dim] = index[p]], as a Gather of
        x flattened at each element's row-major position; an index outside [0, n) reads
        nothing and gives 0 (polyred's Gather rule, where torch raises)."""
        x, index = a["self"], g.to(a["index"], "int64")
        rank = len(x.shape)
        dim = a["dim"] % rank
        shape = list(index.shape)
        position, stride = None, 1
        for d in reversed(range(rank)):
            coordinate = index if d == dim else g.b.iota(shape, d, "int64")
            term = coordinate if stride == 1 else g.b.binary("mul", coordinate, g.const(stride, "int64"))
            position = term if position is None else g.b.binary("add", position, term)
            stride *= x.shape[d]
        inside = g.b.binary("logical_and", g.b.binary("ge", index, g.const(0, "int64")),
                            g.b.binary("lt", index, g.const(x.shape[dim], "int64")))
        position = g.b.select(inside, position, g.const(-1, "int64"))
        return g.b.gather(g.b.reshape(x, [math.prod(x.shape)]), position, 0)

    def gather_refused(a, node):
        x, index = (n.meta["val"] for n in node.all_input_nodes[:2])
        if x.dim() != index.dim() or not all(sizes.known_true(i <= n) for i, n in zip(index.shape, x.shape)):
            return "an index larger than the tensor off dim"
        return None

    lowers(aten.gather.default, refuses=gather_refused)(gather_along)

    def scatter_one_hot(g, node, a):
        """x.scatter(dim, index, value) with one index per row along dim (the gradient of
        nll_loss): out = where(iota_dim == index, value, x)."""
        x = a["self"]
        out = g.out_dtype(node)
        rank = len(x.shape)
        dim = a["dim"] % rank
        index = g.b.broadcast_to(g.to(a["index"], "int64"), list(x.shape))
        hit = g.b.binary("eq", g.b.iota(list(x.shape), dim, "int64"), index)
        value = a.get("value")
        return g.b.select(hit, g.to(value if value is not None else a["src"], out), g.to(x, out))

    def scatter_refused(a, node):
        x, index = (n.meta["val"] for n in node.all_input_nodes[:2])
        dim = a["dim"] % max(x.dim(), 1)
        if x.dim() != index.dim() or not sizes.known_true(index.shape[dim] == 1) or \
                not all(sizes.known_true(i == n) for d, (i, n) in enumerate(zip(index.shape, x.shape)) if d != dim):
            return "a scatter of more than one index per row"
        if a.get("reduce") is not None:
            return "a scatter with a reduce mode"
        src = node.all_input_nodes[2].meta["val"] if len(node.all_input_nodes) > 2 else None
        if src is not None and not sizes.known_true(src.numel() == 1):
            return "a scatter of a source tensor"
        return None

    lowers(aten.scatter.value, aten.scatter.src, refuses=scatter_refused)(scatter_one_hot)


_registered = False


def ensure_registered():
    """Fills LOWERINGS (torch is imported only here, on first use)."""
    global _registered
    if not _registered:
        _register_elementwise()
        _register_reductions()
        _register_movement()
        _register_creation()
        _registered = True
