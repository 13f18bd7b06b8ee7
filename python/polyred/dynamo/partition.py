"""The partitioner: which parts of an aten graph polyred computes.

Takes an aten fx graph (a forward, backward or inference graph from AOTAutograd);
gives its regions -- maximal sets of nodes that lowering/aten.py lowers, connected and
without a cycle through the rest (torch's CapabilityBasedPartitioner) -- each with its
inputs, its outputs and the decision whether polyred takes it, and the reason of every
node left out. What decides, by rule:

- a region is taken when it holds a reduction, a scan or a gather (what polyred
  fuses with its producers and consumers into one kernel); a region of elementwise
  and movement ops only stays with the rest (Inductor fuses it into its neighbours'
  kernels, which polyred would cost a launch and a round trip through memory);
- torch's partitioner merges supported nodes that share no edge; the parts of a region
  connected to none of its reductions, scans or gathers (a tied embedding's two weight
  gradients added beside the bias gradients' column sums) leave it as a region of
  their own, which then stays with the rest by the rule above (in polyred it would be a
  separate kernel anyway, and its inputs would be laid out contiguously for it);
- movement ops (views, permutes, expands, slices, clones) whose result leaves a region
  move out of it: outside they are free views, inside they would be copies; where the
  region reads the result too, the op is repeated inside for it (an index map there);
- a region whose output torch lays out with overlapping strides (an expand) that
  cannot move out is not taken.
"""
import operator
from dataclasses import dataclass, field

import torch
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from ..lowering import aten as lowering
from ..lowering import sizes

_aten = torch.ops.aten


def _anchor_ops():
    """The ops that make a region worth a polyred kernel."""
    ops = [_aten.sum.dim_IntList, _aten.sum.default, _aten.mean.dim, _aten.mean.default, _aten.prod.dim_int,
           _aten.prod.default, _aten.amax.default, _aten.amin.default, _aten.max.default, _aten.min.default,
           _aten.var_mean.correction, _aten.var.correction, _aten.argmax.default, _aten.argmin.default,
           _aten._softmax.default, _aten._log_softmax.default, _aten.cumsum.default, _aten.embedding.default,
           _aten.index_select.default, _aten.gather.default]
    for name in ("any", "all"):
        op = getattr(_aten, name)
        ops += [getattr(op, ov) for ov in ("dim", "dims", "default") if hasattr(op, ov)]
    return set(ops)


def _movement_ops():
    ops = [_aten.view.default, _aten._unsafe_view.default, _aten.reshape.default, _aten.squeeze.dim,
           _aten.squeeze.dims, _aten.squeeze.default, _aten.unsqueeze.default, _aten.permute.default,
           _aten.transpose.int, _aten.t.default, _aten.expand.default, _aten.slice.Tensor, _aten.select.int,
           _aten.clone.default, _aten.alias.default, _aten.view_copy.default, _aten.flatten.using_ints]
    return set(ops)


ANCHORS = _anchor_ops()
MOVEMENT = _movement_ops()


@dataclass
class Region:
    nodes: list                 # in graph order
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    taken: bool = False
    reason: str = ""

    def ops(self):
        return [str(n.target) for n in self.nodes if n.target is not operator.getitem]


class _Support(OperatorSupportBase):
    def __init__(self):
        self.refused = {}  # node -> reason

    def is_node_supported(self, submodules, node):
        if node.op != "call_function":
            return False
        reason = lowering.why_not_lowered(node)
        if reason is not None:
            self.refused[node] = reason
        return reason is None


def find_regions(gm, device_filter=None):
    """The regions of gm's graph, taken or not, and {node: reason} for the compute nodes
    outside every region. `device_filter(device_type)` says which devices' tensors polyred
    may take (None: all)."""
    lowering.ensure_registered()
    support = _Support()
    partitions = CapabilityBasedPartitioner(gm, support, allows_single_node_partition=True).propose_partitions()
    order = {n: k for k, n in enumerate(gm.graph.nodes)}
    regions = []
    for p in partitions:
        for region in _split_off_unanchored(Region(sorted(p.nodes, key=order.__getitem__))):
            _move_out_movement(region, gm)
            _decide(region, device_filter)
            regions.append(region)
    order = {n: k for k, n in enumerate(gm.graph.nodes)}  # with the movement ops repeated inside regions
    regions.sort(key=lambda r: order[r.nodes[0]] if r.nodes else 0)
    return regions, support.refused


def _boundary(nodes):
    """(inputs, outputs) of a node set, in graph order; the inputs are the tensors read
    (a size an op reads, a SymInt, is not an input: its value is the program's)."""
    members = set(nodes)
    inputs, outputs = [], []
    for n in nodes:
        for a in n.all_input_nodes:
            if a not in members and a not in inputs and not sizes.is_size(a.meta.get("val")):
                inputs.append(a)
        if any(u not in members for u in n.users):
            outputs.append(n)
    return inputs, outputs


def _split_off_unanchored(region):
    """[region] or [the parts connected to an anchor, the other parts]: the nodes joined
    to none of the region's anchors by edges inside it go to a second region."""
    members = set(region.nodes)
    parent = {n: n for n in region.nodes}

    def root(n):
        while parent[n] is not n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for n in region.nodes:
        for a in n.all_input_nodes:
            if a in members:
                parent[root(a)] = root(n)
    anchored = {root(n) for n in region.nodes if n.target in ANCHORS}
    if not anchored:
        return [region]
    kept = [n for n in region.nodes if root(n) in anchored]
    rest = [n for n in region.nodes if root(n) not in anchored]
    return [Region(kept), Region(rest)] if rest else [region]


def _move_out_movement(region, gm):
    """Movement ops whose results leave the region move out, until none is left at its
    edge. Where nodes of the region read one too, it is repeated inside for them: the
    region then reads its source, never a view with gaps or a transpose that Inductor
    would first copy contiguously for the region op (the sliced logits of a matrix
    product it padded to an aligned width, which the model also returns)."""
    while True:
        _, outputs = _boundary(region.nodes)
        leaving = [n for n in outputs if n.target in MOVEMENT]
        if not leaving:
            return
        for n in leaving:
            _repeat_inside(region, gm, n)
        region.nodes = [n for n in region.nodes if n not in leaving]


def _repeat_inside(region, gm, node):
    """`node` repeated right after itself in the graph, for the region's nodes to read
    instead; the original serves every other user."""
    members = set(region.nodes)
    readers = [u for u in node.users if u in members]
    if not readers:
        return
    with gm.graph.inserting_after(node):
        copy = gm.graph.call_function(node.target, node.args, node.kwargs)
    copy.meta = dict(node.meta)
    for user in readers:
        user.replace_input_with(node, copy)
    first = min(region.nodes.index(u) for u in readers)
    region.nodes.insert(first, copy)


def _decide(region, device_filter):
    region.inputs, region.outputs = _boundary(region.nodes)
    if not region.nodes:
        region.reason = "only movement ops"
        return
    if not region.inputs:
        region.reason = "reads no tensor"
        return
    if not any(n.target in ANCHORS for n in region.nodes):
        region.reason = "no reduction, scan or gather: elementwise work stays with the rest"
        return
    for o in region.outputs:
        val = o.meta.get("val")
        if not hasattr(val, "stride"):
            region.reason = f"{o.name} leaves the region as a tuple"
            return
        if not _dense(val):
            region.reason = f"{o.name} leaves the region with overlapping strides {tuple(val.stride())}"
            return
    devices = {n.meta["val"].device.type for n in region.inputs}
    if device_filter is not None and not all(device_filter(d) for d in devices):
        region.reason = f"tensors on {', '.join(sorted(devices))} are left to the rest"
        return
    region.taken = True
    anchors = sorted({str(n.target) for n in region.nodes if n.target in ANCHORS})
    region.reason = "holds " + ", ".join(anchors)


def _dense(t):
    """Non-overlapping and dense: some permutation of the dims is contiguous (for
    symbolic sizes: provably so, in the order of the strides' example values, never
    by a guard on the example's sizes)."""
    dims = [d for d in range(t.dim()) if not sizes.known_true(t.shape[d] == 1)]
    dims.sort(key=lambda d: sizes.hint(t.stride()[d]))
    step = 1
    for d in dims:
        if not sizes.known_true(t.stride()[d] == step):
            return False
        step = step * t.shape[d]
    return True
