"""Puts polyred into an aten graph: every taken region becomes one region-op call.

Takes a graph module and its regions (backend/partition.py); for each taken region,
lowers it (lowering/region.py), compiles the program once to know it compiles, and
replaces its nodes by torch.ops.polyred.region(program, inputs) and one getitem per
output. A region that does not lower or compile stays as it was, with one warning
naming the op and the reason (POLYRED_STRICT=1 makes it an error). Gives the
rewritten graph module and, per region, what happened (for the compile log).
"""
import operator
import os
import warnings

import torch

from ..errors import Error
from ..lowering.region import lower_region, program_text
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
        try:
            graph, outputs = lower_region(f"{graph_name}_r{k}", region.nodes, region.inputs, region.outputs)
            text = program_text(graph, outputs, options)
            device = region.inputs[0].meta["val"].device.type
            region_op.region(text).kernel(device)
        except Error as e:
            region.taken = False
            region.reason = f"polyred could not compile it: {e}"
            if strict():
                raise RegionFailed(f"region {k} of the {graph_name} graph: {e}") from None
            warnings.warn(f"polyred: a region of the {graph_name} graph stays with PyTorch: {e}", stacklevel=2)
            continue
        if verifying():
            region_op.verify_against(text, _extract(region), f"region {k} of the {graph_name} graph")
        replaced.update(_replace(gm.graph, region, text))
        region.program = text
        changed = True
    if changed:
        _stable_topological_sort(gm.graph)
        gm.graph.lint()
        gm.recompile()
    return regions


def _replace(graph, region, text):
    """Replaces the region's nodes by the region-op call; returns {output node: its getitem}."""
    members = set(region.nodes)
    items = {}
    with graph.inserting_before(region.nodes[0]):
        call = graph.call_function(region_op.OP, (text, list(region.inputs)))
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
