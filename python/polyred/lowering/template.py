"""A region of aten ops as data, to be lowered once its sizes are known.

Takes a region traced with symbolic sizes (fx nodes whose meta["val"] holds SymInts,
the region's input nodes and output nodes); gives a template -- the region's ops, their
arguments (a size an op reads from outside the region, e.g. a view's SymInt, as its
expression text; lowering/sizes.py), and every input's and output's shape, strides and
dtype as expression texts -- that a program text carries as plain JSON. `instantiate`
rebuilds the ops for given symbol values as an fx graph with concrete sizes (fake
tensors, nothing computed), which lowering/region.py lowers as it lowers any region,
and which also runs on real tensors (the reference POLYRED_VERIFY compares with).
"""
import math
import operator

import torch
import torch.fx

from . import sizes
from .aten import Unsupported, dtype_name

_GETITEM = "operator.getitem"


def region_template(nodes, inputs, outputs):
    """The template of a region (see the module's comment); raises Unsupported for an
    argument it cannot carry."""
    index = {n: k for k, n in enumerate(nodes)}
    inputs_at = {n: k for k, n in enumerate(inputs)}

    def arg(a):
        if isinstance(a, torch.fx.Node):
            if a in index:
                return {"node": index[a]}
            if a in inputs_at:
                return {"input": inputs_at[a]}
            val = a.meta.get("val")
            if sizes.is_size(val):
                return {"size": sizes.size_expr(val)}
            raise Unsupported(f"reads {a.name}, which is neither a tensor of the region nor a size")
        if isinstance(a, (list, tuple)):
            return [arg(x) for x in a]
        if isinstance(a, torch.dtype):
            return {"dtype": dtype_name(a)}
        if isinstance(a, torch.device):
            return {"device": str(a)}
        if isinstance(a, torch.layout):
            return {"layout": str(a).replace("torch.", "")}
        if isinstance(a, torch.memory_format):
            return {"memory_format": str(a).replace("torch.", "")}
        if isinstance(a, float) and not math.isfinite(a):
            return {"float": str(a)}
        if a is None or isinstance(a, (bool, int, float, str)):
            return a
        raise Unsupported(f"an argument of type {type(a).__name__}")

    device = inputs[0].meta["val"].device if inputs else None
    ops = []
    for n in nodes:
        ops.append({"target": _target_name(n.target), "args": arg(list(n.args)),
                    "kwargs": {k: arg(v) for k, v in n.kwargs.items()}, "val": _value_spec(n.meta.get("val"), device)})
    return {"inputs": [_tensor_spec(n.meta["val"]) for n in inputs], "ops": ops,
            "outputs": [index[o] for o in outputs], "output_specs": [_tensor_spec(o.meta["val"]) for o in outputs]}


def _tensor_spec(val):
    return {"shape": [sizes.size_expr(s) for s in val.shape], "stride": [sizes.size_expr(s) for s in val.stride()],
            "dtype": dtype_name(val.dtype)}


def _value_spec(val, device):
    """An op's result as specs: a tensor's, or a list of them (a tuple of tensors); None
    where it is anything else, on another device, or has a size the expressions do not
    hold (instantiate then runs the ops on fake tensors instead)."""
    try:
        if isinstance(val, torch.Tensor) and val.device == device:
            return _tensor_spec(val)
        if isinstance(val, (tuple, list)) and val and all(isinstance(v, torch.Tensor) and v.device == device
                                                          for v in val):
            return [_tensor_spec(v) for v in val]
    except (Unsupported, sizes.UnsupportedSize):
        pass
    return None


def template_symbols(template):
    """The symbol names a template's sizes use, sorted."""
    found = set()

    def visit(x):
        if isinstance(x, dict):
            if "size" in x:
                found.update(sizes.symbols_of(x["size"]))
            else:
                for v in x.values():
                    visit(v)
        elif isinstance(x, list):
            for v in x:
                visit(v)

    for spec in template["inputs"] + template["output_specs"]:
        for s in spec["shape"] + spec["stride"]:
            found.update(sizes.symbols_of(s))
    visit(template["ops"])
    return sorted(found)


def concrete_spec(spec, values):
    """A tensor spec's shape and strides for the symbol values."""
    return ([int(sizes.evaluate(s, values)) for s in spec["shape"]],
            [int(sizes.evaluate(s, values)) for s in spec["stride"]], getattr(torch, spec["dtype"]))


def instantiate(template, values, device):
    """The template's ops for symbol `values` (ints): (graph module, its op nodes, its
    input placeholders, its output nodes), every node's meta["val"] a fake tensor of
    the concrete sizes on `device`."""
    graph = torch.fx.Graph()
    inputs = [graph.placeholder(f"in{k}") for k in range(len(template["inputs"]))]
    nodes = []

    def arg(a):
        if isinstance(a, list):
            return [arg(x) for x in a]
        if not isinstance(a, dict):
            return a
        (kind, v), = a.items()
        if kind == "node":
            return nodes[v]
        if kind == "input":
            return inputs[v]
        if kind == "size":
            return int(sizes.evaluate(v, values))
        if kind == "dtype":
            return getattr(torch, v)
        if kind == "device":
            return torch.device(v)
        if kind in ("layout", "memory_format"):
            return getattr(torch, v)
        return float(v)  # "float": inf, -inf, nan

    for op in template["ops"]:
        nodes.append(graph.call_function(_target(op["target"]), tuple(arg(op["args"])),
                                         {k: arg(v) for k, v in op["kwargs"].items()}))
    outputs = [nodes[k] for k in template["outputs"]]
    graph.output(tuple(outputs))
    module = torch.fx.GraphModule(torch.nn.Module(), graph)
    if all(op.get("val") is not None for op in template["ops"]):
        _set_fake_from_specs(inputs + nodes, template["inputs"] + [op["val"] for op in template["ops"]], values, device)
    else:
        _propagate_fake(module, [concrete_spec(s, values) for s in template["inputs"]], device)
    return module, nodes, inputs, outputs


def _set_fake_from_specs(nodes, value_specs, values, device):
    """Sets each node's meta["val"] (the placeholders' too) from the sizes the trace gave
    it, evaluated at `values`: what running the ops on fake tensors gives (the trace's
    expressions hold wherever its guards do), without dispatching each op (most of a new
    size's host time: 40 of 50 ms for an RMSNorm region on a 2-core machine)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    def fake(spec):
        shape, stride, dtype = concrete_spec(spec, values)
        return torch.empty_strided(shape, stride, dtype=dtype, device=device)

    with FakeTensorMode():
        for node, spec in zip(nodes, value_specs):
            node.meta["val"] = tuple(fake(s) for s in spec) if isinstance(spec, list) else fake(spec)


def _propagate_fake(module, input_specs, device):
    """Sets every node's meta["val"]: the ops run on fake tensors of the given sizes."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            result = super().run_node(n)
            n.meta["val"] = result
            return result

    with FakeTensorMode():
        fakes = [torch.empty_strided(shape, stride, dtype=dtype, device=device) for shape, stride, dtype in input_specs]
        Recorder(module).run(*fakes)


def _target_name(target):
    if target is operator.getitem:
        return _GETITEM
    schema = getattr(target, "_schema", None)
    if schema is None:
        raise Unsupported(f"the op {target} has no schema")
    return f"{schema.name}.{target._overloadname}"


def _target(name):
    if name == _GETITEM:
        return operator.getitem
    qualified, overload = name.rsplit(".", 1)
    namespace, op = qualified.split("::")
    return getattr(getattr(getattr(torch.ops, namespace), op), overload)
