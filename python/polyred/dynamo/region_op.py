"""The region op: torch.ops.polyred.region(program, inputs, sizes) -> outputs.

Takes the program text of a region (lowering/region.py: the polyred graph, the
outputs' torch shapes, strides and dtypes, the compile options), its input tensors and
the values of its symbolic sizes (none for a region of static sizes); gives the
outputs, computed by the compiled polyred program -- on a CUDA tensor's stream, or
by the CPU target (the same lowered kernels run on the host) for CPU tensors. One
torch custom op for every region, with a fake kernel, so that the graphs that hold it
stay traceable, CUDA-graph-able and compilable by Inductor. The program text is the
op's own argument, so code that Inductor or AOTAutograd cached in another process runs
without the backend having seen the graph: each text is compiled once per process (and
per device type) on first use, through polyred's kernel cache.

A region traced with symbolic sizes (torch.compile's dynamic shapes) has a symbolic
program text: its aten ops as a template (lowering/template.py) and the names of its
size symbols, whose values each call passes. One graph serves every size. Each new
assignment of the symbols is lowered (in Python, tens of milliseconds); where polyred
makes the region's graph symbolic in one symbol (lowering/generalize.py: two
assignments that differ in that symbol alone suggest it, and every later assignment's
lowered graph must equal it at its value), one polyred program, compiled once, serves
every value of that symbol (docs/design/symbolic-dims.md); elsewhere each assignment is
compiled on its own, once. A region of one symbol tries this at trace time, with a
second value of the symbol; a region of several, once a second assignment shows which
one changes. An assignment that polyred does not compile (an empty tensor, say) runs
the region's own aten ops, with a warning (an error under POLYRED_STRICT=1).
"""
import json
import os
import threading
import warnings

import torch

from ..errors import Error
from ..kernel import load_json
from ..lowering import sizes as symbolic_sizes
from ..lowering.generalize import generalize
from ..lowering.region import lower_instance
from . import compile_log

_regions = {}  # program text -> _Region
_lock = threading.RLock()  # a symbolic region's first call compiles its instance under it


class _Region:
    """A region of static sizes: one polyred program per device type."""

    def __init__(self, spec):
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

    def serve_with(self, device_type, kernel):
        """Runs on `kernel` (a symbolic program computing this region at its sizes)."""
        self._kernels[device_type] = kernel

    def run(self, inputs, sizes=()):
        device = inputs[0].device
        # (a view costs microseconds of host time: made only where the shape differs)
        xs = [x if x.shape == shape and x.is_contiguous() else x.contiguous().view(shape)
              for x, shape in zip(inputs, self.input_shapes)]
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
        if result.shape != shape:
            result = result.view(shape)
        if dense:
            return result
        # torch's own kernel gave this layout (an elementwise op over a permuted
        # input keeps the permutation): the graph after the region was traced with it.
        out = torch.empty_strided(shape, stride, dtype=dtype, device=result.device)
        out.copy_(result)
        return out

    def fake(self, inputs, sizes=()):
        device = inputs[0].device
        return [torch.empty_strided(shape, stride, dtype=dtype, device=device) for shape, stride, dtype in self.outputs]


class _SymbolicRegion:
    """A region of symbolic sizes: one concrete _Region per assignment of its symbols,
    served where it can be by a symbolic polyred program (a _Family) compiled once for
    every value of one symbol."""

    def __init__(self, spec):
        self.name = spec["name"]
        self.template = spec["template"]
        self.symbols = spec["symbols"]
        self.options = spec.get("options", {})
        self._instances = {}  # (device type, symbol values) -> _Region, or the aten module it falls back to
        self._lowered = {}  # (device type, symbol values) -> the graph of an assignment no family serves
        self._families = []  # _Family, each compiled for one device type
        self._refused = set()  # (device type, symbol, the other symbols' values) polyred would not make symbolic
        self.reference = None  # the region's name under POLYRED_VERIFY

    def values(self, sizes):
        return dict(zip(self.symbols, sizes))

    def instance(self, device, sizes):
        key = (device.type, tuple(int(s) for s in sizes))
        found = self._instances.get(key)
        if found is None:
            with _lock:
                found = self._instances.get(key)
                if found is None:
                    found = self._instance(device, key[1])
                    self._instances[key] = found
        return found

    def _instance(self, device, sizes):
        values = self.values(sizes)
        module = None
        try:
            module, graph, specs = lower_instance(self.name, self.template, values, device)
            concrete = _Region({"graph": graph, "outputs": specs, "options": self.options})
            family = self._family_for(device.type, sizes, graph)
            if family is not None:
                concrete.serve_with(device.type, family.kernel)
            else:
                concrete.kernel(device.type)
                self._lowered[(device.type, sizes)] = graph  # a family may yet be made from it
        except Error as e:
            if os.environ.get("POLYRED_STRICT", "") not in ("", "0") or module is None:
                raise
            warnings.warn(f"polyred: {self.name} at sizes {values} runs its aten ops: {e}", stacklevel=2)
            return module
        if self.reference is not None:
            concrete.reference = (module, f"{self.reference} at sizes {values}")
        return concrete

    def _family_for(self, device_type, sizes, graph):
        """The family whose symbolic program is `graph` at these sizes, made from an
        earlier assignment that differs in one symbol if none is; None where polyred
        compiles these sizes on their own."""
        for family in self._families:
            if family.serves(device_type, sizes, graph):
                return family
        for (seen_device, seen), seen_graph in list(self._lowered.items()):
            differing = [k for k, (a, b) in enumerate(zip(seen, sizes)) if a != b]
            if seen_device != device_type or len(differing) != 1:
                continue
            s = differing[0]
            key = (device_type, s, _others(sizes, s))
            if key in self._refused:
                continue
            symbolic = generalize(seen_graph, seen[s], graph, sizes[s], self.symbols[s])
            family = None
            if symbolic is not None:
                try:
                    family = _Family(device_type, s, _others(sizes, s), symbolic, self.options)
                except Error as e:
                    compile_log.note(f"polyred: {self.name} is compiled per value of {self.symbols[s]}: {e}")
            if family is None or not family.serves(device_type, sizes, graph):
                self._refused.add(key)
                continue
            compile_log.note(f"polyred: {self.name}: one program for every value of {self.symbols[s]}")
            self._families.append(family)
            return family
        return None

    def kernel_at(self, device, sizes):
        """Compiles the region for `sizes` (the backend checks the example's this way).
        A region of one symbol is also lowered at a second value of it, so that its
        symbolic program, where polyred makes one, serves the example's sizes too."""
        if len(self.symbols) == 1:
            probe = (2 * int(sizes[0]) + 1,)
            try:
                _, graph, _ = lower_instance(self.name, self.template, self.values(probe), device)
                self._lowered[(device.type, probe)] = graph
            except Exception as e:  # noqa: BLE001 -- only a second sample: without it, sizes compile on their own
                compile_log.note(f"polyred: {self.name} does not lower at {self.symbols[0]} = {probe[0]}: {e}")
        found = self.instance(device, sizes)
        if not isinstance(found, _Region):
            raise Error(f"{self.name} does not compile at sizes {self.values(sizes)}")

    def program_counts(self):
        """(symbolic programs made, assignments compiled on their own): how often this
        region was compiled (the benchmarks report it)."""
        family_kernels = {id(f.kernel) for f in self._families}
        own = sum(1 for inst in self._instances.values() if isinstance(inst, _Region)
                  and not family_kernels & {id(k) for k in inst._kernels.values()})
        return len(self._families), own

    def run(self, inputs, sizes):
        found = self.instance(inputs[0].device, sizes)
        if isinstance(found, _Region):
            return found.run(inputs)
        with torch.no_grad():  # the aten ops' results, copied: an op's output never aliases its inputs
            return [out.copy_(got) for out, got in zip(self.fake(inputs, sizes), found(*inputs))]

    def fake(self, inputs, sizes):
        """Empty outputs of the traced shapes and strides (SymInts while torch traces)."""
        values, device = self.values(sizes), inputs[0].device
        outs = []
        for spec in self.template["output_specs"]:
            shape = [symbolic_sizes.evaluate(s, values) for s in spec["shape"]]
            stride = [symbolic_sizes.evaluate(s, values) for s in spec["stride"]]
            outs.append(torch.empty_strided(shape, stride, dtype=getattr(torch, spec["dtype"]), device=device))
        return outs


class _Family:
    """One symbolic polyred program serving a symbolic region at every value of one
    symbol (the others at fixed values): compiled once, for one device type. It serves
    an assignment only where the region's graph lowered there is the program's graph at
    that value (lowering/generalize.py), so no lowering choice is taken on trust."""

    def __init__(self, device_type, symbol, others, symbolic, options):
        self.device_type, self.symbol, self.others, self.graph = device_type, symbol, others, symbolic
        composite = symbolic.composite()
        self.kernel = load_json(composite, label=composite.get("op", "region"),
                                target="gpu" if device_type == "cuda" else None,
                                deterministic=options.get("deterministic", False))

    def serves(self, device_type, sizes, graph):
        return device_type == self.device_type and _others(sizes, self.symbol) == self.others \
            and self.graph.matches(graph, sizes[self.symbol])


def _others(sizes, symbol):
    return tuple(v for k, v in enumerate(sizes) if k != symbol)


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
    """Makes every call of the region `text` compare with `module` (POLYRED_VERIFY); a
    symbolic region compares each instance with its own aten ops at its sizes."""
    r = region(text)
    if isinstance(r, _SymbolicRegion):
        r.reference = name
        r._instances.clear()  # made again, each with its reference
    else:
        r.reference = (module, name)


def region(text):
    r = _regions.get(text)
    if r is None:
        with _lock:
            r = _regions.get(text)
            if r is None:
                spec = json.loads(text)
                r = _SymbolicRegion(spec) if "template" in spec else _Region(spec)
                _regions[text] = r
    return r


# The op is registered with the dispatcher directly, a kernel per device type and a
# fake one, not through torch.library.custom_op, whose wrapper (autograd redispatch,
# alias checks, a Dynamo guard) costs about 30 us of host time per call against 7 for
# the region's own Python (docs/design/torch-backend.md, "The region op"). No autograd
# kernel: the op runs inside graphs AOTAutograd already differentiated. The
# needs_contiguous_strides tag makes Inductor lay out each input's producer
# contiguously (or copy in a kernel of its own) rather than hand over a padded or
# permuted buffer that every call would copy.
_CONTIGUOUS_INPUTS = getattr(torch.Tag, "needs_contiguous_strides", None)  # torch 2.8 on
_library = torch.library.Library("polyred", "FRAGMENT")
_library.define("region(str program, Tensor[] inputs, SymInt[] sizes) -> Tensor[]",
                tags=(_CONTIGUOUS_INPUTS,) if _CONTIGUOUS_INPUTS else ())


def _region_kernel(program, inputs, sizes):
    return region(program).run(inputs, sizes)


for _device_type in ("CPU", "CUDA"):
    _library.impl("region", _region_kernel, _device_type)


@torch.library.register_fake("polyred::region", lib=_library)
def _region_fake(program, inputs, sizes):
    return region(program).fake(inputs, sizes)


OP = torch.ops.polyred.region.default
