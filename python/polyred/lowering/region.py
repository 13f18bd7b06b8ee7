"""A region of an aten graph as one polyred program.

Takes a set of fx nodes (in graph order), the nodes outside it that they read and the
nodes whose values leave it; gives the composite JSON of a polyred graph computing
those values from those inputs (input k named "in<k>", output k the k-th value), with
each output's torch shape, strides and dtype -- the program text the region op runs
(backend/region_op.py). Each node goes through its lowering in lowering/aten.py.
"""
import json
import math

import torch.fx

from ..builder import Builder
from . import aten
from .aten import HALF_FLOATS, Unsupported, dtype_name


def polyred_shape(shape):
    """A torch shape as polyred's: rank 0 is [1]."""
    return [int(n) for n in shape] or [1]


class RegionGraph:
    """What a lowering function works with: the builder, and conversions that follow
    torch's dtype rules."""

    def __init__(self, name):
        self.b = Builder(name)
        self.values = {}  # fx node -> Value (or a tuple of them)

    @staticmethod
    def out_dtype(node):
        return dtype_name(node.meta["val"].dtype)

    @staticmethod
    def out_shape(node):
        return polyred_shape(node.meta["val"].shape)

    def const(self, value, dtype):
        if dtype == "bool":
            value = bool(value)
        elif dtype in aten.INTEGERS:
            if isinstance(value, float) and not value.is_integer():
                raise Unsupported(f"the constant {value} in an integer op")
            value = int(value)
        else:
            value = float(value)  # inf and nan as Builder.constant writes them
        return self.b.constant(value, dtype)

    def to(self, x, dtype):
        """x (a Value or a Python number) in `dtype`."""
        if isinstance(x, (bool, int, float)):
            return self.const(x, dtype)
        if x is None:
            raise Unsupported("a missing operand")
        return x if x.dtype == dtype else self.b.cast(x, dtype)

    def compare(self, op, node):
        """A comparison in the operands' promoted dtype (torch.result_type: a Python
        scalar is rounded to the tensor's dtype), 16-bit floats compared in float32."""
        a, b = (self.values.get(v, v) if isinstance(v, torch.fx.Node) else v for v in node.args[:2])
        promoted = dtype_name(torch.result_type(*(_representative(v) for v in node.args[:2])))
        return self.compare_values(op, a, b, promoted)

    def compare_values(self, op, a, b, promoted):
        a, b = self.to(a, promoted), self.to(b, promoted)
        if promoted in HALF_FLOATS:
            a, b = self.to(a, "float32"), self.to(b, "float32")
        return self.b.binary(op, a, b)


def _representative(v):
    """A meta tensor standing for an operand in torch.result_type (its dtype and
    whether it is rank 0), or the Python scalar itself."""
    if isinstance(v, torch.fx.Node):
        val = v.meta["val"]
        return torch.empty((1,) * min(val.dim(), 1), dtype=val.dtype, device="meta")
    return v


def lower_region(name, nodes, inputs, outputs):
    """The program text of the region and its outputs' specs. Raises Unsupported
    (a BadInputError) naming the op when a lowering refuses."""
    aten.ensure_registered()
    g = RegionGraph(name)
    for k, n in enumerate(inputs):
        val = n.meta["val"]
        g.values[n] = g.b.input(f"in{k}", dtype_name(val.dtype), polyred_shape(val.shape))
    for n in nodes:
        args, kwargs = torch.fx.node.map_arg((n.args, n.kwargs), lambda x: g.values[x])
        try:
            g.values[n] = aten.LOWERINGS[n.target](g, n, aten.bind(n.target, args, kwargs))
        except Unsupported as e:
            raise Unsupported(f"{_op_name(n)}: {e}") from None
    specs = []
    for o in outputs:
        v, val = g.values[o], o.meta["val"]
        want = (dtype_name(val.dtype), polyred_shape(val.shape))
        if (v.dtype, list(v.shape)) != want:
            raise Unsupported(f"{_op_name(o)}: lowered to {v.dtype}{list(v.shape)}, torch gives {want[0]}{want[1]}")
        g.b.output(v)
        specs.append({"shape": list(val.shape), "stride": list(val.stride()), "dtype": want[0]})
    return g.b.build(), specs


def _op_name(n):
    return str(getattr(n.target, "__name__", n.target)) if not hasattr(n.target, "_schema") else str(n.target)


def program_text(graph, outputs, options):
    """The region op's argument: everything needed to compile and call the program
    (also in a process that only loaded compiled code from a cache)."""
    return json.dumps({"graph": graph, "outputs": outputs, "options": options}, sort_keys=True,
                      separators=(",", ":"))


def symbolic_program_text(name, template, symbols, options):
    """The region op's argument for a region of symbolic sizes: its ops as a template
    (lowering/template.py) and its symbols, in the order of the op's size values."""
    return json.dumps({"name": name, "template": template, "symbols": symbols, "options": options},
                      sort_keys=True, separators=(",", ":"))


def lower_instance(name, template, values, device):
    """A symbolic region (lowering/template.py) at the symbol `values`: its graph module
    (what it computes with aten ops, at these sizes) and the program text that computes
    it with polyred, or Unsupported where this instance does not lower."""
    from .template import instantiate
    module, nodes, inputs, outputs = instantiate(template, values, device)
    graph, specs = lower_region(name, nodes, inputs, outputs)
    return module, graph, specs


def elements(shape):
    return math.prod(shape)
