"""PyTorch as a second oracle: every composite file given is computed by polyred's
reference interpreter (through `polyred compile FILE -o DIR --test-data`, which also
writes the seeded inputs) and by PyTorch (bench/composite_torch.py) on the same
inputs; outputs are compared with polyred's per-dtype tolerances (exact for integers
and bool). The reference and the kernels are compared on every file by the corpus
test, so an op polyred reads differently from PyTorch shows up here.

  python3 bench/torch_oracle.py [--device cpu|cuda] [--polyred BIN] PATH...

On the CPU PyTorch runs composite_torch's "reference" mode (float64 with every op's
result rounded to its declared dtype, as polyred's reference); on a GPU, "native" mode
(every tensor in its declared dtype). Exit 1 on an unexplained disagreement.
Files that are out of polyred's scope, too large for test data (2^24 elements), or use
an op the translator lacks are counted and skipped.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import composite_torch as ct  # noqa: E402

RAW = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "float64": torch.float64,
       "int32": torch.int32, "int64": torch.int64, "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool}

# Documented semantic choices where polyred and PyTorch differ on purpose (docs/format.md):
# file name fragments -> reason. Empty: none found on the public corpus so far.
EXPLAINED = {}


def raw_tensor(path, dtype, shape):
    data = bytearray(Path(path).read_bytes())
    if not data:
        return torch.empty(shape, dtype=RAW[dtype])
    return torch.frombuffer(data, dtype=RAW[dtype]).reshape(shape).clone()


def compare(got, want, rtol, atol):
    if want.dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        g, w = got.to(torch.float64), want.to(torch.float64)
        both_nan = torch.isnan(g) & torch.isnan(w)
        close = (g == w) | both_nan | ((g - w).abs() <= atol + rtol * w.abs())
    else:
        close = got.to(want.dtype) == want
    bad = (~close).nonzero()
    return bad.shape[0], (bad[0].tolist() if bad.shape[0] else None)


def files_under(paths):
    for p in map(Path, paths):
        if p.is_dir():
            yield from sorted(f for f in p.rglob("*") if f.suffix in (".info", ".json"))
        else:
            yield p


def check_file(path, polyred, device, tmp):
    out = Path(tmp) / "art"
    r = subprocess.run([polyred, "compile", str(path), "-o", str(out), "--test-data"], capture_output=True, text=True)
    if r.returncode == 2:
        return "skipped", r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "exit 2"
    if r.returncode != 0:
        return "polyred error", r.stderr.strip()[-300:]
    m = json.loads((out / "manifest.json").read_text())
    inputs = [raw_tensor(out / f, t["dtype"], t["shape"]).to(device) for f, t in zip(m["test"]["inputs"], m["inputs"])]
    comp = ct.load(str(path))
    mode = "native" if device == "cuda" else "reference"
    try:
        fn = ct.make_function(comp, mode, device)
        args = ct.reference_inputs(inputs) if mode == "reference" else inputs
        got = fn(*args)
    except ct.Unsupported as e:
        return "skipped", f"translator lacks {e}"
    except RuntimeError as e:  # an op PyTorch lacks for this dtype on this device
        return "skipped", f"PyTorch: {str(e).splitlines()[0]}"
    problems = []
    for k, (spec, want) in enumerate(zip(m["outputs"], m["test"]["expected"])):
        expected = raw_tensor(out / want["file"], spec["dtype"], spec["shape"])
        g = got[k].reshape(spec["shape"]).cpu()
        if mode == "reference" and RAW[spec["dtype"]] in ct.FLOATS:
            g = g.to(RAW[spec["dtype"]])
        n, first = compare(g, expected, want["rtol"], want["atol"])
        if n:
            at = tuple(first)
            problems.append(f"output {k} ({spec['name']}): {n} of {expected.numel()} differ; at {list(at)} polyred "
                            f"{expected[at].item()!r}, PyTorch {g[at].item()!r}")
    return ("disagree", "; ".join(problems)) if problems else ("agree", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--polyred", default=os.environ.get("POLYRED_BIN", "build/tools/polyred"))
    a = ap.parse_args()
    counts, unexplained = {}, []
    for path in files_under(a.paths):
        with tempfile.TemporaryDirectory() as tmp:
            verdict, detail = check_file(path, a.polyred, a.device, tmp)
        explained = verdict == "disagree" and any(k in str(path) for k in EXPLAINED)
        counts[verdict] = counts.get(verdict, 0) + 1
        if verdict in ("disagree", "polyred error") and not explained:
            unexplained.append((path, detail))
        print(f"{verdict:13s} {path}{': ' + detail if detail else ''}", flush=True)
    print("\ntorch oracle (" + a.device + "): " + ", ".join(f"{v} {n}" for v, n in sorted(counts.items())))
    for path, detail in unexplained:
        print(f"UNEXPLAINED {path}: {detail}")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
