"""Puts polyred into an aten graph: every taken region becomes one region-op call.

Takes a graph module and its regions (backend/partition.py); for each taken region,
lowers it (lowering/region.py), compiles the program once to know it compiles, and
replaces its nodes by torch.ops.polyred.region(program, inputs, sizes) and one getitem
per output. A region traced with symbolic sizes gets a symbolic program (its ops as a
template, lowering/template.py), checked by compiling it at the example's sizes, and
`sizes` are the graph's nodes that give its symbols' values (placeholders, or
aten.sym_size of an input). A region that does not lower or compile stays as it was, with one warning
naming the op and the reason (POLYRED_STRICT=1 makes it an error). Gives the
rewritten graph module and, per region, what happened (for the compile log).
"""
import operator
import os
import warnings

import torch

from ..errors import Error
from ..lowering import sizes as symbolic_sizes
from ..lowering.region import lower_region, program_text, symbolic_program_text
from ..lowering.template import region_template, template_symbols
from . import region_op


class RegionFailed(Error):
    """A region polyred could not compile, under POLYRED_STRICT=1."""


def strict():
    return os.environ.get("POLYRED_STRICT", "") not in ("", "0")


def verifying():
    """POLYRED_VERIFY=1: every region call also runs the region's aten ops and compares."""
    return os.environ.get("POLYRED_VERIFY", "") not in ("", "0")


def _extract(region):
    """The region's nodes as a graph module of their own (inputs -> outputs)."""
    graph = torch.fx.Graph()
    env = {n: graph.placeholder(f"in{k}") for k, n in enumerate(region.inputs)}
    for n in region.nodes:
        env[n] = graph.node_copy(n, lambda a: env[a])
    graph.output(tuple(env[o] for o in region.outputs))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def apply_regions(gm, regions, options, graph_name):
    """Rewrites gm in place; returns the regions, each with .taken and .reason updated."""
    changed = False
    replaced = {}  # an earlier region's output node -> the getitem that now stands for it
    for k, region in enumerate(regions):
        if not region.taken:
            continue
        region.inputs = [replaced.get(n, n) for n in region.inputs]
        name = f"{graph_name}_r{k}"
        try:
            template = region_template(region.nodes, region.inputs, region.outputs) if _symbolic(region) else None
            symbols = template_symbols(template) if template else []
            if symbols:
                text, size_nodes = _symbolic_program(gm.graph, name, template, symbols, region, options)
            else:
                graph, outputs = lower_region(name, region.nodes, region.inputs, region.outputs)
                text, size_nodes = program_text(graph, outputs, options), []
                region_op.region(text).kernel(region.inputs[0].meta["val"].device.type)
        except Error as e:
            region.taken = False
            region.reason = f"polyred could not compile it: {e}"
            if strict():
                raise RegionFailed(f"region {k} of the {graph_name} graph: {e}") from None
            warnings.warn(f"polyred: a region of the {graph_name} graph stays with PyTorch: {e}", stacklevel=2)
            continue
        if verifying():
            reference = None if size_nodes else _extract(region)  # a symbolic region instantiates its own
            region_op.verify_against(text, reference, f"region {k} of the {graph_name} graph")
        replaced.update(_replace(gm.graph, region, text, size_nodes))
        region.program = text
        changed = True
    if changed:
        _stable_topological_sort(gm.graph)
        gm.graph.lint()
        gm.recompile()
    return regions


def _symbolic(region):
    """Whether the region was traced with symbolic sizes (a tensor's or an argument's)."""
    def sized(val):
        return symbolic_sizes.is_symint(val) or any(symbolic_sizes.is_symint(s) for s in getattr(val, "shape", ()))

    def vals(n):
        v = n.meta.get("val")
        return v if isinstance(v, (list, tuple)) else [v]

    return any(sized(v) for n in region.nodes + list(region.inputs) for v in vals(n)) or \
        any(sized(a.meta.get("val")) for n in region.nodes for a in n.all_input_nodes)


def _symbolic_program(graph, name, template, symbols, region, options):
    """The symbolic program text of a region and the nodes giving its symbols' values;
    raises Error where a symbol has no such node or the example's sizes do not compile."""
    size_nodes = []
    try:
        for symbol in symbols:
            size_nodes.append(_size_node(graph, symbol, region))
        text = symbolic_program_text(name, template, symbols, options)
        example = [symbolic_sizes.hint(n.meta["val"]) for n in size_nodes]
        region_op.region(text).kernel_at(region.inputs[0].meta["val"].device, example)
    except Error:
        for n in size_nodes:
            if n.op != "placeholder" and not n.users:
                graph.erase_node(n)
        raise
    return text, size_nodes


def _size_node(graph, symbol, region):
    """A node whose value is `symbol`: the graph's SymInt placeholder for it, or
    aten.sym_size of a placeholder or region input with a dimension of exactly that size
    (made just before the region)."""
    candidates = [n for n in graph.nodes if n.op == "placeholder"]
    for n in candidates:
        val = n.meta.get("val")
        if symbolic_sizes.is_symint(val) and str(val.node.expr) == symbol:
            return n
    for n in candidates + list(region.inputs):
        val = n.meta.get("val")
        for d, size in enumerate(getattr(val, "shape", ())):
            if symbolic_sizes.is_symint(size) and str(size.node.expr) == symbol:
                with graph.inserting_before(region.nodes[0]):
                    node = graph.call_function(torch.ops.aten.sym_size.int, (n, d))
                node.meta["val"] = size
                return node
    raise Error(f"no node of the graph gives the size {symbol}")


def _replace(graph, region, text, size_nodes):
    """Replaces the region's nodes by the region-op call; returns {output node: its getitem}."""
    members = set(region.nodes)
    items = {}
    with graph.inserting_before(region.nodes[0]):
        call = graph.call_function(region_op.OP, (text, list(region.inputs), list(size_nodes)))
        call.meta["val"] = [o.meta["val"] for o in region.outputs]
        for k, o in enumerate(region.outputs):
            item = graph.call_function(operator.getitem, (call, k))
            item.meta["val"] = o.meta["val"]
            o.replace_all_uses_with(item, delete_user_cb=lambda user: user not in members)
            items[o] = item
    for n in reversed(region.nodes):
        graph.erase_node(n)
    return items


def _stable_topological_sort(graph):
    """Moves each node after its inputs, keeping the graph's order otherwise (a region
    call goes where its first node was; an input defined later pulls it down)."""
    placed, sequence = set(), []

    def place(n):
        stack = [(n, False)]
        while stack:
            node, ready = stack.pop()
            if node in placed:
                continue
            if ready:
                placed.add(node)
                sequence.append(node)
                continue
            stack.append((node, True))
            stack.extend((a, False) for a in reversed(node.all_input_nodes) if a not in placed)

    for n in list(graph.nodes):
        place(n)
    previous = None
    for n in sequence:
        if previous is not None and previous.next is not n:
            previous.append(n)
        previous = n
