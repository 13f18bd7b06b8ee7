"""A compiled polyred program: its inputs and outputs, a CPU check, and calls on torch
CUDA tensors (zero copies, on the current stream, outputs allocated by torch)."""
import ctypes
import struct
from dataclasses import dataclass

from . import _lib, symbolic
from .errors import BadInputError, raise_for

_TORCH_DTYPES = {"bool": "bool", "int8": "int8", "uint8": "uint8", "int32": "int32", "int64": "int64",
                 "float16": "float16", "bfloat16": "bfloat16", "float32": "float32", "float64": "float64",
                 "complex64": "complex64", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64"}


@dataclass(frozen=True)
class TensorSpec:
    name: str
    dtype: str          # polyred's dtype name, e.g. "float32"
    shape: tuple        # a symbolic program's symbolic axes: the symbol ("S", "12*S")
    in_place_of_input: int = -1  # outputs written into an input's buffer: that input
    # Symbolic programs: per axis, (symbol index, coefficient), or None for a constant axis.
    symbolic: tuple = ()


def _options(deterministic, horizontal_fusion, target):
    o = _lib.Options()
    _lib.lib.polyred_default_options(ctypes.byref(o))
    o.deterministic = int(bool(deterministic))
    o.horizontal_fusion = int(bool(horizontal_fusion))
    if target == "gpu":  # the current GPU's compute capability and SM count
        o.cc_major, o.sm_count = 0, 0
    elif target is not None:  # "sm_90"
        if not (isinstance(target, str) and target.startswith("sm_") and target[3:].isdigit()):
            raise BadInputError(f"target must be 'gpu', None or 'sm_XY', not {target!r}")
        o.cc_major, o.cc_minor = int(target[3:-1]), int(target[-1])
    return o


class Kernel:
    """Load with polyred.load(path) or polyred.load_json(text); call with tensors."""

    def __init__(self, handle):
        self._handle = ctypes.c_void_p(handle)
        self._plan = None  # _CallPlan, made at the first call
        lib = _lib.lib
        # Size symbols (docs/format.md, "Symbolic sizes"): a call takes their values from
        # its tensors' shapes (symbolic.py).
        self.symbols = tuple(lib.polyred_symbol_name(self._handle, k).decode()
                             for k in range(lib.polyred_num_symbols(self._handle)))
        self.inputs = [self._info(lib.polyred_input_info, lib.polyred_input_symbols, k)
                       for k in range(lib.polyred_num_inputs(self._handle))]
        self.outputs = [self._info(lib.polyred_output_info, lib.polyred_output_symbols, k)
                        for k in range(lib.polyred_num_outputs(self._handle))]

    def _info(self, info_fn, symbols_fn, k):
        info = _lib.TensorInfo()
        raise_for(info_fn(self._handle, k, ctypes.byref(info)), _lib.last_error())
        shape = tuple(info.shape[d] for d in range(info.rank))
        if not self.symbols:
            return TensorSpec(info.name.decode(), _lib.DTYPES[info.dtype], shape, info.in_place_of_input)
        axes = _lib.TensorSymbols()
        raise_for(symbols_fn(self._handle, k, ctypes.byref(axes)), _lib.last_error())
        symbolic = tuple(None if axes.shape_symbol[d] < 0 else (axes.shape_symbol[d], axes.shape_coefficient[d])
                         for d in range(info.rank))
        shape = tuple(n if a is None else (self.symbols[a[0]] if a[1] == 1 else f"{a[1]}*{self.symbols[a[0]]}")
                      for n, a in zip(shape, symbolic))
        return TensorSpec(info.name.decode(), _lib.DTYPES[info.dtype], shape, info.in_place_of_input, symbolic)

    def __del__(self):
        if getattr(self, "_handle", None):
            _lib.lib.polyred_program_free(self._handle)
            self._handle = None

    @property
    def launches(self):
        """Kernel launches per call."""
        return _lib.lib.polyred_num_launches(self._handle)

    def cuda_source(self, launch=0):
        src = _lib.lib.polyred_cuda_source(self._handle, launch)
        if src is None:
            raise BadInputError(f"no launch {launch}: the program has {self.launches}")
        return src.decode()

    def check_cpu(self, seed=1, max_points=1 << 20, sizes=None):
        """Runs the lowered kernels on the CPU against the reference; raises
        MismatchError with the comparison when they differ. Returns the comparison. A
        symbolic kernel is checked at `sizes`, a dict of its symbols' values."""
        values = symbolic.size_array(self, sizes or {})
        raise_for(_lib.lib.polyred_check_cpu_sized(self._handle, seed, max_points, values, len(self.symbols)),
                  _lib.last_error())
        return _lib.last_error()

    def as_torch_op(self, name):
        """The kernel as the custom op torch.ops.polyred.<name> (see as_torch_op)."""
        return as_torch_op(self, name)

    def _torch_specs(self):
        """Per input (torch dtype, shape) and per output (torch dtype, shape, in-place
        input or -1), resolved once: the per-call path only compares."""
        plan = self._plan or self._make_plan()
        return plan.inputs, plan.outputs

    def _make_plan(self):
        self._plan = _CallPlan(self)
        return self._plan

    def _refuse(self, k, t, device, what="input"):
        """The BadInputError for input (or out=) tensor k, built only once a check failed."""
        specs = self.inputs if what == "input" else [o for o in self.outputs if o.in_place_of_input < 0]
        spec = specs[k]
        where = f"{what} {k} ({spec.name!r})"
        if str(t.dtype) != "torch." + _TORCH_DTYPES[spec.dtype]:
            return BadInputError(f"{where} is {t.dtype}, the kernel takes {spec.dtype}")
        if tuple(t.shape) != spec.shape:
            return BadInputError(f"{where} has shape {tuple(t.shape)}, the kernel takes {spec.shape}")
        if not t.is_contiguous():
            return BadInputError(f"{where} is not contiguous (call .contiguous())")
        if t.device.type != "cuda":
            return BadInputError(f"{where} is on {t.device}, not on a CUDA device")
        return BadInputError(f"{where} is on {t.device}, the inputs on {device}")

    def __call__(self, *tensors, out=None):
        """Runs on torch CUDA tensors (or DLPack arrays) in input order; returns the
        output tensor, or a tuple of them. In-place outputs are their input tensors.
        `out`: the outputs to write (a tensor, or a sequence in output order without the
        in-place ones) instead of tensors that torch allocates at each call."""
        # The per-call path (issue #15: host overhead) compares against a plan resolved
        # at the first call and passes the pointers as packed 64-bit buffers.
        if self.symbols:
            return symbolic.call(self, tensors, out)
        plan = self._plan or self._make_plan()
        if len(tensors) != len(plan.inputs):
            raise BadInputError(f"the kernel takes {len(plan.inputs)} tensors, got {len(tensors)}")
        if not all(type(t) is plan.tensor_type for t in tensors):
            tensors = [t if isinstance(t, plan.tensor_type) else plan.from_dlpack(t) for t in tensors]
        if tensors and tensors[0].device.type == "cpu":
            return self.run_cpu(*tensors, out=out)
        index = tensors[0].get_device() if tensors else plan.torch.cuda.current_device()
        for k, (t, (dtype, shape)) in enumerate(zip(tensors, plan.inputs)):
            if t.dtype is not dtype or t.shape != shape or not t.is_contiguous() or t.get_device() != index or index < 0:
                raise self._refuse(k, t, tensors[0].device)
        outputs = self._outputs(plan, tensors, index, out)
        if plan.in_place or out is not None:
            _refuse_overlaps(plan, tensors, outputs, out is not None)
        ins = plan.pack_inputs(*[t.data_ptr() for t in tensors])
        outs = plan.pack_outputs(*[t.data_ptr() for t in outputs])
        if index == plan.current_device():  # (CUDA is initialized: the inputs are on it)
            status = plan.launch(self._handle, ins, outs, plan.raw_stream(index))
        else:  # the launch uses the current CUDA context: make it the tensors' device
            with plan.torch.cuda.device(index):
                status = plan.launch(self._handle, ins, outs, plan.raw_stream(index))
        if status:
            raise_for(status, _lib.last_error())
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def run_cpu(self, *tensors, out=None):
        """The CPU target: the same lowered kernels run on the host (slow; for tests and
        machines without a GPU) on torch CPU tensors, with the checks and the results of
        a GPU call."""
        if self.symbols:
            return symbolic.call(self, tensors, out, cpu=True)
        plan = self._plan or self._make_plan()
        if len(tensors) != len(plan.inputs):
            raise BadInputError(f"the kernel takes {len(plan.inputs)} tensors, got {len(tensors)}")
        for k, (t, (dtype, shape)) in enumerate(zip(tensors, plan.inputs)):
            if t.dtype is not dtype or t.shape != shape or not t.is_contiguous() or t.device.type != "cpu":
                raise self._refuse_cpu(k, t)
        outputs = self._outputs(plan, tensors, None, out)
        if plan.in_place or out is not None:
            _refuse_overlaps(plan, tensors, outputs, out is not None)
        ins = plan.pack_inputs(*[t.data_ptr() for t in tensors])
        outs = plan.pack_outputs(*[t.data_ptr() for t in outputs])
        raise_for(_lib.lib.polyred_run_cpu(self._handle, ins, outs), _lib.last_error())
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _refuse_cpu(self, k, t):
        if t.device.type != "cpu":
            return BadInputError(f"input {k} ({self.inputs[k].name!r}) is on {t.device}, the other inputs on the CPU")
        return self._refuse(k, t, t.device)

    def _outputs(self, plan, tensors, index, out):
        """The output tensors: in-place ones are their inputs; the others come from `out`
        (checked like inputs) or are allocated by torch on the inputs' device."""
        if out is None:
            device = plan.device(index) if index is not None else plan.cpu
            return [tensors[alias] if alias >= 0 else plan.empty_strided(*layout, dtype=dtype, device=device)
                    for (dtype, _, alias), layout in zip(plan.outputs, plan.layouts)]
        given = [out] if isinstance(out, plan.tensor_type) else list(out)
        if len(given) != len(plan.not_in_place):
            raise BadInputError(f"out= takes {len(plan.not_in_place)} tensor(s) (the outputs not written in place), "
                                f"got {len(given)}")
        for k, (t, (dtype, shape)) in enumerate(zip(given, plan.not_in_place)):
            if not isinstance(t, plan.tensor_type):
                raise BadInputError(f"out= tensor {k} is a {type(t).__name__}, not a torch.Tensor")
            device_matches = t.get_device() == index if index is not None else t.device.type == "cpu"
            if t.dtype is not dtype or t.shape != shape or not t.is_contiguous() or not device_matches:
                raise self._refuse(k, t, tensors[0].device if tensors else index, what="out=")
        it = iter(given)
        return [tensors[alias] if alias >= 0 else next(it) for _, _, alias in plan.outputs]


class _CallPlan:
    """What every call of one kernel needs, resolved at its first call (torch is imported
    lazily): the specs as torch objects, the pointer packers and the fastest accessors
    this torch has (the internal ones Inductor's generated code calls, where they exist)."""

    def __init__(self, kernel):
        import torch

        self.torch = torch
        self.tensor_type = torch.Tensor
        self.from_dlpack = torch.from_dlpack
        # Outputs come from torch.empty_strided with the sizes and contiguous strides as
        # plain tuples: 4.2 us per call on the GPU machine against 8.7 for torch.empty of
        # a torch.Size (torch 2.11, 2026-11-25, devbuild-only micro-benchmark).
        self.empty_strided = torch.empty_strided
        self.inputs = [(getattr(torch, _TORCH_DTYPES[s.dtype]), torch.Size(s.shape)) for s in kernel.inputs]
        self.outputs = [(getattr(torch, _TORCH_DTYPES[s.dtype]), torch.Size(s.shape), s.in_place_of_input)
                        for s in kernel.outputs]
        self.not_in_place = [(dtype, shape) for dtype, shape, alias in self.outputs if alias < 0]  # what out= gives
        self.in_place = any(alias >= 0 for _, _, alias in self.outputs)
        self.layouts = [(tuple(s.shape), _contiguous_strides(s.shape)) for s in kernel.outputs]  # sizes, strides
        # Pointer arrays as packed native 64-bit words: a fresh immutable buffer per call
        # (ctypes releases the GIL during the launch, so a shared array could be rewritten
        # by another thread), built faster than a ctypes array.
        self.pack_inputs = _packer(len(kernel.inputs))
        self.pack_outputs = _packer(len(kernel.outputs))
        self.launch = _lib.lib.polyred_launch
        self.current_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
        self.raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
            lambda i: torch.cuda.current_stream(i).cuda_stream)
        self._devices = {}
        self.cpu = torch.device("cpu")

    def device(self, index):
        d = self._devices.get(index)
        if d is None:
            d = self._devices[index] = self.torch.device("cuda", index)
        return d


def _span(t):
    start = t.data_ptr()
    return start, start + t.numel() * t.element_size()


def _refuse_overlaps(plan, tensors, outputs, out_given):
    """Every buffer a kernel writes must be apart from the other tensors of the call (the
    kernels read their inputs while they write, and declare them __restrict__): an input
    written in place that overlaps another input, or an out= tensor that overlaps an
    input or another out= tensor, is refused."""
    spans = [_span(t) for t in tensors]

    def overlap(x, y):
        return x[0] < y[1] and y[0] < x[1]

    for k in {alias for _, _, alias in plan.outputs if alias >= 0}:
        for other, span in enumerate(spans):
            if other != k and overlap(spans[k], span):
                raise BadInputError(f"input {k} is written in place but overlaps input {other}: pass separate tensors")
    if not out_given:
        return
    names = [f"input {k}" for k in range(len(spans))]
    for k, (t, (_, _, alias)) in enumerate(zip(outputs, plan.outputs)):
        if alias >= 0:
            continue
        span = _span(t)
        for other, name in zip(spans, names):
            if overlap(span, other):
                raise BadInputError(f"out= output {k} overlaps {name}: polyred reads its inputs while it writes "
                                    f"its outputs (write an input in place with an Assign in the graph instead)")
        spans.append(span)
        names.append(f"out= output {k}")


def _contiguous_strides(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(int(extent), 1)
    return tuple(reversed(strides))


def _packer(n):
    """pack(p0, ..., pn-1) -> n native 64-bit words (one zero word for n == 0: never read)."""
    return struct.Struct(f"={n}Q").pack if n else (lambda: bytes(8))


def as_torch_op(kernel, name):
    """Registers `kernel` as the PyTorch custom op polyred::<name> (torch >= 2.4:
    torch.library.custom_op, CUDA, with a fake implementation for tracing), so that it
    composes with torch.compile graphs. Programs with in-place outputs are refused (a
    custom op that mutates its inputs needs a schema that says so)."""
    import torch

    if not hasattr(torch.library, "custom_op"):
        raise BadInputError(f"as_torch_op needs torch >= 2.4 (torch.library.custom_op); this is {torch.__version__}")
    if any(o.in_place_of_input >= 0 for o in kernel.outputs):
        raise BadInputError("as_torch_op: the program writes an input in place")
    if not name.isidentifier():
        raise BadInputError(f"as_torch_op: {name!r} is not an identifier")
    args = ", ".join(f"Tensor x{k}" for k in range(len(kernel.inputs)))
    rets = "Tensor" if len(kernel.outputs) == 1 else "(" + ", ".join("Tensor" for _ in kernel.outputs) + ")"

    def run(*xs):
        return kernel(*xs)

    op = torch.library.custom_op(f"polyred::{name}", run, mutates_args=(), device_types="cuda",
                                 schema=f"({args}) -> {rets}")

    def fake(*xs):
        outs = tuple(torch.empty(o.shape, dtype=getattr(torch, _TORCH_DTYPES[o.dtype]), device=xs[0].device)
                     for o in kernel.outputs)
        return outs[0] if len(outs) == 1 else outs

    op.register_fake(fake)
    return op


def _load(fn, *args, deterministic=False, horizontal_fusion=True, target=None):
    handle = ctypes.c_void_p()
    o = _options(deterministic, horizontal_fusion, target)
    raise_for(fn(*args, ctypes.byref(o), ctypes.byref(handle)), _lib.last_error())
    return Kernel(handle.value)


def load(path, **options):
    """Compiles a composite JSON file. Options: deterministic, horizontal_fusion,
    target (None: sm_90 assumed, 'gpu': the current GPU, 'sm_XY')."""
    return _load(_lib.lib.polyred_load_file, str(path).encode(), **options)


def load_json(text, label="<memory>", **options):
    """Compiles composite JSON text (a str, or a dict that is dumped)."""
    import json

    if not isinstance(text, str):
        text = json.dumps(text)
    data = text.encode()
    return _load(_lib.lib.polyred_load_json, data, len(data), label.encode(), **options)
