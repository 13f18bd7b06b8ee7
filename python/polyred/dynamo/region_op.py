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
        outputs = [self._restride(g, spec, dense) for g, spec, dense in zip(got, self.outputs, self.contiguous)]
        if self.reference is not None:
            self._compare(inputs, outputs)
        return outputs

    reference = None  # (graph module of the region's aten ops, its name) under POLYRED_VERIFY

    def _compare(self, inputs, outputs):
        module, name = self.reference
        with torch.no_grad():
            want = module(*inputs)
        for k, (got, expected) in enumerate(zip(outputs, want)):
            tolerance = _TOLERANCES.get(expected.dtype, {"rtol": 0, "atol": 0})
            try:
                torch.testing.assert_close(got, expected, **tolerance)
            except AssertionError as e:
                raise AssertionError(f"polyred: {name}, output {k}, differs from eager aten: {e}") from None

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


# POLYRED_VERIFY's bounds: float outputs of reductions add in another order than ATen's.
_TOLERANCES = {torch.float32: {"rtol": 1e-4, "atol": 1e-5}, torch.float64: {"rtol": 1e-9, "atol": 1e-12},
               torch.float16: {"rtol": 1e-2, "atol": 1e-3}, torch.bfloat16: {"rtol": 2e-2, "atol": 1e-2}}


def verify_against(text, module, name):
    """Makes every call of the region `text` compare with `module` (POLYRED_VERIFY)."""
    region(text).reference = (module, name)


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
