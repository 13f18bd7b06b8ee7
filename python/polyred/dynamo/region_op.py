"""The region op: torch.ops.polyred.region(program, inputs) -> outputs.

Takes the program text of a region (lowering/region.py: the polyred graph, the
outputs' torch shapes, strides and dtypes, the compile options) and its input tensors;
gives the outputs, computed by the compiled polyred program -- on a CUDA tensor's
stream, or by the CPU target (the same lowered kernels run on the host) for CPU
tensors. One torch custom op for every region, with a fake kernel, so that the graphs
that hold it stay traceable, CUDA-graph-able and compilable by Inductor. The program
text is the op's own argument, so code that Inductor or AOTAutograd cached in another
process runs without the backend having seen the graph: each text is compiled once
per process (and per device type) on first use, through polyred's kernel cache.
"""
import json
import threading

import torch

from ..kernel import load_json

_regions = {}  # program text -> _Region
_lock = threading.Lock()


class _Region:
    def __init__(self, text):
        spec = json.loads(text)
        self.graph = spec["graph"]
        self.options = spec.get("options", {})
        self.outputs = [(tuple(o["shape"]), tuple(o["stride"]), getattr(torch, o["dtype"])) for o in spec["outputs"]]
        self.input_shapes = [tuple(d[0]["shape"]) for d in self.graph["input_desc"]]
        self.contiguous = [stride == _contiguous_strides(shape) for shape, stride, _ in self.outputs]
        self._kernels = {}  # "cpu" / "cuda" -> Kernel

    def kernel(self, device_type):
        k = self._kernels.get(device_type)
        if k is None:
            with _lock:
                k = self._kernels.get(device_type)
                if k is None:
                    target = "gpu" if device_type == "cuda" else None
                    k = load_json(self.graph, label=self.graph.get("op", "region"), target=target,
                                  deterministic=self.options.get("deterministic", False))
                    self._kernels[device_type] = k
        return k

    def run(self, inputs):
        device = inputs[0].device
        xs = [x.contiguous().view(shape) for x, shape in zip(inputs, self.input_shapes)]
        got = self.kernel(device.type)(*xs)
        if not isinstance(got, tuple):
            got = (got,)
        return [self._restride(g, spec, dense) for g, spec, dense in zip(got, self.outputs, self.contiguous)]

    @staticmethod
    def _restride(result, spec, dense):
        shape, stride, dtype = spec
        result = result.view(shape)
        if dense:
            return result
        # torch's own kernel gave this layout (an elementwise op over a permuted
        # input keeps the permutation): the graph after the region was traced with it.
        out = torch.empty_strided(shape, stride, dtype=dtype, device=result.device)
        out.copy_(result)
        return out

    def fake(self, inputs):
        device = inputs[0].device
        return [torch.empty_strided(shape, stride, dtype=dtype, device=device) for shape, stride, dtype in self.outputs]


def _contiguous_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(int(n), 1)
    return tuple(reversed(strides))


def region(text):
    r = _regions.get(text)
    if r is None:
        with _lock:
            r = _regions.setdefault(text, _Region(text))
    return r


@torch.library.custom_op("polyred::region", mutates_args=())
def region_op(program: str, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    return region(program).run(inputs)


@region_op.register_fake
def _region_fake(program, inputs):
    return region(program).fake(inputs)


OP = torch.ops.polyred.region.default
