"""python -m polyred: what a bug report needs -- polyred's version, the library that
was loaded, PyTorch, the GPU, and whether torch.compile finds the "polyred" backend."""
import sys


def _report():
    import polyred
    from polyred import _lib

    lines = [f"polyred {polyred.__version__} (C API {_lib.lib.polyred_api_version()})",
             f"library: {_lib.lib._name}",
             f"python: {sys.version.split()[0]} ({sys.executable})"]
    try:
        import torch
    except ImportError:
        lines.append("torch: not installed (the torch.compile backend needs torch >= 2.5)")
        return lines
    lines.append(f"torch: {torch.__version__}")
    if torch.cuda.is_available():
        index = torch.cuda.current_device()
        p = torch.cuda.get_device_properties(index)
        lines.append(f"GPU: {p.name} (sm_{p.major}{p.minor}, {p.multi_processor_count} SMs, "
                     f"{p.total_memory / 2**30:.0f} GiB), CUDA {torch.version.cuda}")
    else:
        lines.append("GPU: none found (regions on CPU tensors run on polyred's CPU target)")
    from importlib.metadata import entry_points
    found = [e.value for e in entry_points(group="torch_dynamo_backends") if e.name == "polyred"]
    lines.append("backend: torch.compile(backend=\"polyred\") " +
                 (f"through the entry point {found[0]}" if found else
                  "after `import polyred.dynamo` (no entry point: polyred is not pip-installed)"))
    return lines


if __name__ == "__main__":
    print("\n".join(_report()))
