"""ctypes bindings of libpolyred's C API (include/polyred/polyred.h), and where the
library is found: $POLYRED_LIBRARY, else inside the package (a wheel), else next to an
installed package (PREFIX/lib/libpolyred.so), else the source tree's build/ directory, else the system's
loader path."""
import ctypes
import ctypes.util
import os
from pathlib import Path

OK, MISMATCH, BAD_INPUT, INTERNAL, NO_GPU = 0, 1, 2, 3, 4

DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64",
          "uint16", "uint32", "uint64"]


class Options(ctypes.Structure):
    _fields_ = [("deterministic", ctypes.c_int), ("horizontal_fusion", ctypes.c_int),
                ("cc_major", ctypes.c_int), ("cc_minor", ctypes.c_int), ("sm_count", ctypes.c_int)]


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("in_place_of_input", ctypes.c_int)]


class TensorSymbols(ctypes.Structure):  # symbolic programs (API version 3)
    _fields_ = [("shape_symbol", ctypes.POINTER(ctypes.c_int)), ("shape_coefficient", ctypes.POINTER(ctypes.c_int64))]


def _candidates():
    env = os.environ.get("POLYRED_LIBRARY")
    if env:
        yield Path(env)
        return
    here = Path(__file__).resolve().parent  # .../polyred
    # A wheel (pip install .): the library inside the package, under its SONAME.
    yield from sorted(here.glob("libpolyred.so*"))
    # Installed: PREFIX/lib/python3/dist-packages/polyred -> PREFIX/lib/libpolyred.so.
    for parent in list(here.parents)[:4]:
        yield parent / "libpolyred.so"
    # The source tree: python/polyred -> build/src/libpolyred.so.
    yield here.parents[1] / "build" / "src" / "libpolyred.so"
    found = ctypes.util.find_library("polyred")
    if found:
        yield Path(found)


def _load():
    tried = []
    for path in _candidates():
        tried.append(str(path))
        if path.is_absolute() and not path.exists():
            continue
        try:
            return ctypes.CDLL(str(path))
        except OSError:
            continue
    raise ImportError("polyred: libpolyred.so not found (set POLYRED_LIBRARY); tried " + ", ".join(tried))


lib = _load()
P = ctypes.c_void_p
lib.polyred_version.restype = ctypes.c_char_p
lib.polyred_last_error.restype = ctypes.c_char_p
lib.polyred_default_options.argtypes = [ctypes.POINTER(Options)]
lib.polyred_load_file.argtypes = [ctypes.c_char_p, ctypes.POINTER(Options), ctypes.POINTER(P)]
lib.polyred_load_json.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.POINTER(Options),
                                  ctypes.POINTER(P)]
lib.polyred_program_free.argtypes = [P]
for f in ("polyred_num_inputs", "polyred_num_outputs", "polyred_num_launches"):
    getattr(lib, f).argtypes = [P]
lib.polyred_input_info.argtypes = [P, ctypes.c_int, ctypes.POINTER(TensorInfo)]
lib.polyred_output_info.argtypes = [P, ctypes.c_int, ctypes.POINTER(TensorInfo)]
lib.polyred_input_symbols.argtypes = [P, ctypes.c_int, ctypes.POINTER(TensorSymbols)]
lib.polyred_output_symbols.argtypes = [P, ctypes.c_int, ctypes.POINTER(TensorSymbols)]
lib.polyred_cuda_source.argtypes = [P, ctypes.c_int]
lib.polyred_cuda_source.restype = ctypes.c_char_p
# The pointer arrays (void* const*) arrive as bytes of packed native 64-bit words
# (kernel.py's _CallPlan): c_char_p passes the buffer's address, without a conversion.
lib.polyred_launch.argtypes = [P, ctypes.c_char_p, ctypes.c_char_p, P]
lib.polyred_check_cpu.argtypes = [P, ctypes.c_uint64, ctypes.c_int64]
lib.polyred_run_cpu.argtypes = [P, ctypes.c_char_p, ctypes.c_char_p]
# Symbolic programs: the size symbols' values as a c_int64 array and their count.
lib.polyred_num_symbols.argtypes = [P]
lib.polyred_symbol_name.argtypes = [P, ctypes.c_int]
lib.polyred_symbol_name.restype = ctypes.c_char_p
_SIZES = ctypes.POINTER(ctypes.c_int64)
lib.polyred_launch_sized.argtypes = [P, ctypes.c_char_p, ctypes.c_char_p, P, _SIZES, ctypes.c_int]
lib.polyred_check_cpu_sized.argtypes = [P, ctypes.c_uint64, ctypes.c_int64, _SIZES, ctypes.c_int]
lib.polyred_run_cpu_sized.argtypes = [P, ctypes.c_char_p, ctypes.c_char_p, _SIZES, ctypes.c_int]


def last_error():
    return lib.polyred_last_error().decode("utf-8", "replace")
