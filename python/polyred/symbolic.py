"""Calls of a symbolic kernel (one whose shapes name size symbols, docs/format.md):
the symbols' values are read from the tensors' shapes -- every axis that holds a symbol
must agree -- the outputs are allocated at the shapes those values give, and the C
API's sized entry points run the one compiled program at them. Kernel.__call__ and
Kernel.run_cpu come here for such kernels; the call path of other kernels is untouched."""
import ctypes
import struct

from . import _lib
from .errors import BadInputError, raise_for


def size_array(kernel, sizes):
    """The values of `kernel`'s symbols, from the dict `sizes`, as a c_int64 array."""
    unknown = set(sizes) - set(kernel.symbols)
    if unknown:
        raise BadInputError(f"{sorted(unknown)} are not size symbols of the kernel (it has {list(kernel.symbols)})")
    missing = [s for s in kernel.symbols if s not in sizes]
    if missing:
        raise BadInputError(f"give the values of the size symbols {missing}")
    return (ctypes.c_int64 * max(len(kernel.symbols), 1))(*[int(sizes[s]) for s in kernel.symbols])


def infer_sizes(kernel, tensors):
    """The symbols' values that the tensors' shapes give; BadInputError where an input
    does not fit its spec or two axes disagree."""
    if len(tensors) != len(kernel.inputs):
        raise BadInputError(f"the kernel takes {len(kernel.inputs)} tensors, got {len(tensors)}")
    values, seen_at = {}, {}
    for k, (t, spec) in enumerate(zip(tensors, kernel.inputs)):
        where = f"input {k} ({spec.name!r})"
        if len(t.shape) != len(spec.shape):
            raise BadInputError(f"{where} has shape {tuple(t.shape)}, the kernel takes {spec.shape}")
        for d, (extent, axis) in enumerate(zip(t.shape, spec.symbolic)):
            if axis is None:
                if extent != spec.shape[d]:
                    raise BadInputError(f"{where} has shape {tuple(t.shape)}, the kernel takes {spec.shape}")
                continue
            symbol, coefficient = kernel.symbols[axis[0]], axis[1]
            if extent % coefficient:
                raise BadInputError(f"{where}: axis {d} has {extent} elements, not a multiple of {coefficient} "
                                    f"({spec.shape[d]})")
            value = extent // coefficient
            if symbol in values and values[symbol] != value:
                raise BadInputError(f"{where}: axis {d} gives {symbol} = {value}, but {seen_at[symbol]} gave "
                                    f"{symbol} = {values[symbol]}")
            values.setdefault(symbol, value)
            seen_at.setdefault(symbol, f"axis {d} of {where}")
    missing = [s for s in kernel.symbols if s not in values]
    if missing:
        raise BadInputError(f"no input holds the size symbols {missing}: their values cannot be inferred")
    return values


def _shape_at(spec, kernel, values):
    return tuple(n if a is None else a[1] * values[kernel.symbols[a[0]]] for n, a in zip(spec.shape, spec.symbolic))


def call(kernel, tensors, out, cpu=False):
    """Runs `kernel` (symbolic) on torch tensors, on their device: CPU tensors on the CPU
    target, CUDA tensors on the current stream. Returns the output(s)."""
    import torch

    if out is not None:
        raise BadInputError("out= with a kernel of symbolic sizes is not supported yet")
    tensors = [t if isinstance(t, torch.Tensor) else torch.from_dlpack(t) for t in tensors]
    values = infer_sizes(kernel, tensors)
    device = tensors[0].device if tensors else torch.device("cpu")
    on_cpu = cpu or device.type == "cpu"
    for k, (t, spec) in enumerate(zip(tensors, kernel.inputs)):
        if str(t.dtype) != "torch." + spec.dtype:
            raise BadInputError(f"input {k} ({spec.name!r}) is {t.dtype}, the kernel takes {spec.dtype}")
        if not t.is_contiguous():
            raise BadInputError(f"input {k} ({spec.name!r}) is not contiguous (call .contiguous())")
        if t.device != device:
            raise BadInputError(f"input {k} ({spec.name!r}) is on {t.device}, input 0 on {device}")
    outputs = [tensors[o.in_place_of_input] if o.in_place_of_input >= 0
               else torch.empty(_shape_at(o, kernel, values), dtype=getattr(torch, o.dtype), device=device)
               for o in kernel.outputs]
    pack = lambda ts: struct.pack(f"={max(len(ts), 1)}Q", *([t.data_ptr() for t in ts] or [0]))  # noqa: E731
    sizes = size_array(kernel, values)
    lib = _lib.lib
    if on_cpu:
        status = lib.polyred_run_cpu_sized(kernel._handle, pack(tensors), pack(outputs), sizes, len(kernel.symbols))
    else:
        with torch.cuda.device(device):
            stream = ctypes.c_void_p(torch.cuda.current_stream(device).cuda_stream)
            status = lib.polyred_launch_sized(kernel._handle, pack(tensors), pack(outputs), stream, sizes,
                                              len(kernel.symbols))
    raise_for(status, _lib.last_error())
    return outputs[0] if len(outputs) == 1 else tuple(outputs)
