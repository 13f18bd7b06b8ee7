"""PyTorch's verdict on polyred's edge-value semantics: every case exported by the
EdgeValues.DISABLED_ExportForPyTorch test (every elementwise op on every dtype over NaN, +-inf,
+-0, ties, extremes and every pair of them; every cast; max/min reductions) computed
by PyTorch in the declared dtypes (bench/composite_torch.py, native mode) and compared
with polyred's reference, bit for bit for exact cases (NaN matching NaN), within
polyred's tolerance for transcendental functions.

  python3 bench/torch_edge_oracle.py EXPORT_DIR [--device cpu|cuda]

Each disagreement is either one of the documented choices below (docs/format.md, with
the reason), printed and counted as explained, or unexplained (exit 1). Cases PyTorch
cannot compute on this device (an op not implemented for a dtype) are listed and
counted apart: they are not compared, so they are no evidence either way.
"""
import argparse
import json
import math
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import composite_torch as ct  # noqa: E402
from torch_oracle import raw_tensor  # noqa: E402

INT_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1)}
FLOATS = ("float16", "bfloat16", "float32", "float64")


def _float_to_int(name):
    src, dst = name.split("/")[1].split("->") if "->" in name else ("", "")
    return name.startswith("Cast/") and src in FLOATS and dst in INT_RANGE


def _outside_int_range(name, args, poly, torch_value):
    lo, hi = INT_RANGE[name.split("->")[1]]
    x = args["x"]
    return math.isnan(x) or math.isinf(x) or not lo <= math.trunc(x) <= hi


def _integer_division_edge(name, args, poly, torch_value):
    """A divisor of 0, or INT_MIN divided by -1 (whose quotient wraps)."""
    lo = INT_RANGE[name.split("/")[1]][0]
    return args["y"] == 0 or (args["y"] == -1 and args["x"] == lo)


# polyred's documented choices where PyTorch differs (docs/format.md): which cases they
# concern, which differing elements they explain -- explains(case name, the element's
# operands by input name ("x", "y"), polyred's value, PyTorch's) -- and why.
CHOICES = [
    (lambda n: n.startswith(("Maximum/", "Minimum/", "ReduceMaxMin/", "ReduceMaxMin64/")) and n.split("/")[1] in FLOATS,
     lambda name, args, p, t: p == 0 and t == 0,  # the two zeros, whatever their signs
     "Maximum/Minimum of -0 and +0 give +0 / -0 in either order; PyTorch returns one operand"),
    (_float_to_int, _outside_int_range,
     "float -> integer casts of NaN, +-inf and out-of-range values saturate to the target type (NaN -> 0), as CUDA's "
     "cvt, PyTorch CUDA and AKG do; PyTorch on the CPU leaves them undefined"),
    (lambda n: n.startswith("Cast/int") and n.endswith("->bfloat16"),
     lambda name, args, p, t: abs(args["x"]) > 2**24,  # where float32 already rounds
     "integer -> bfloat16 rounds once (16842753 -> 16908288); PyTorch converts through float32 and rounds twice"),
    (lambda n: n.startswith(("Div/int", "Div/uint")), _integer_division_edge,
     "integer division by zero gives 0 and INT_MIN / -1 gives INT_MIN (MindSpore's RealDiv on integers is C "
     "division); PyTorch raises ZeroDivisionError on the CPU"),
    (lambda n: n.startswith(("Pow/int", "Pow/uint")), lambda name, args, p, t: args["y"] < 0,
     "integer Pow with a negative exponent gives 0 except for bases 1 and -1; PyTorch refuses negative exponents"),
    (lambda n: n.split("/")[0] in ("FloorDiv", "FloorMod", "Mod") and n.split("/")[1] in INT_RANGE,
     _integer_division_edge,
     "integer FloorDiv / FloorMod / Mod by zero give 0 / the dividend / the dividend (the quotient is 0, as "
     "Div), and INT_MIN // -1 wraps; PyTorch raises ZeroDivisionError on the CPU"),
    # Not polyred's choices but PyTorch CPU's inexact vectorized kernels, checked against
    # C's fmod / log1p (and PyTorch CUDA, which calls them):
    (lambda n: n.split("/")[0] in ("FloorMod", "Mod") and n.split("/")[1] in FLOATS,
     lambda name, args, p, t: math.isnan(t) and not math.isnan(p),
     "fmod is exact (C, CUDA, PyTorch CUDA); PyTorch's vectorized CPU fmod/remainder give NaN where the quotient "
     "leaves the float range (x / y overflows or is denormal)"),
    (lambda n: n.startswith("Log1p/"),
     lambda name, args, p, t: args["x"] > 1e38 and math.isinf(t),
     "log1p(x) past 1e38 is about 88.7 (C, CUDA); PyTorch's CPU log1p (SLEEF) returns inf there"),
]
# The choices a PyTorch exception stands for (PyTorch refuses what polyred defines).
RAISING = ("Div/int", "Div/uint", "Pow/int", "Pow/uint", "FloorDiv/int", "FloorDiv/uint", "FloorMod/int",
           "FloorMod/uint", "Mod/int", "Mod/uint")


def choice_for(name):
    for applies, explains, reason in CHOICES:
        if applies(name):
            return explains, reason
    return None, None



def same(got, want, exact, dtype):
    if dtype in FLOATS:
        g, w = got.to(torch.float64), want.to(torch.float64)
        nan = torch.isnan(g) & torch.isnan(w)
        if exact:
            equal = (g == w) & (torch.signbit(g) == torch.signbit(w))
            return nan | equal
        rtol = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-5, "float64": 1e-12}[dtype]
        inf_ok = torch.isinf(w) & (g == w)
        return nan | inf_ok | ((g - w).abs() <= 4 * rtol + rtol * w.abs()) | (g == w)
    return got.to(want.dtype) == want


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("export_dir")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = ap.parse_args()
    root = Path(a.export_dir)
    index = json.loads((root / "index.json").read_text())
    agree, explained, unexplained, cannot = 0, {}, [], 0
    for case in index:
        name, d = case["name"], root / case["dir"]
        comp = ct.load(str(d / "graph.json"))
        inputs = [raw_tensor(d / f"input{k}.bin", t["data_type"], t["shape"]).to(a.device)
                  for k, t in enumerate(comp.inputs)]
        explains, reason = choice_for(name)
        try:
            got = ct.make_function(comp, "native", a.device)(*inputs)
        except (RuntimeError, ZeroDivisionError) as e:
            if reason and name.startswith(RAISING):
                explained.setdefault(reason, []).append(name + " (PyTorch raised)")
            else:
                cannot += 1
                print(f"PyTorch cannot: {name}: {str(e).splitlines()[0]}")
            continue
        left, differed = [], False  # differences no documented choice explains; any difference
        for k, desc in enumerate(json.loads((d / "graph.json").read_text())["output_desc"]):
            want = raw_tensor(d / f"expected{k}.bin", desc["data_type"], desc["shape"]).reshape(-1)
            g = got[k].reshape(-1).cpu()
            for i in (~same(g, want, case["exact"], desc["data_type"])).nonzero().reshape(-1).tolist():
                differed = True
                p, t = want[i].item(), g[i].item()
                args = {desc_in["tensor_name"]: x.reshape(-1)[i].item()
                        for desc_in, x in zip(comp.inputs, inputs) if x.numel() == want.numel()}
                if reason and explains(name, args, p, t):
                    continue
                left.append(f"output {k} element {i}: operands {args}, polyred {p!r}, PyTorch {t!r}")
        if left:
            unexplained.append((name, f"{len(left)} element(s), e.g. " + "; ".join(left[:3])))
        elif differed:
            explained.setdefault(reason, []).append(name)
        else:
            agree += 1
    print(f"edge values vs PyTorch ({a.device}, torch {torch.__version__}): {len(index)} cases, {agree} agree, "
          f"{sum(map(len, explained.values()))} differ by a documented choice, {len(unexplained)} unexplained, "
          f"{cannot} PyTorch cannot compute")
    for reason, names in explained.items():
        print(f"\nchoice ({len(names)} cases): {reason}\n  " + ", ".join(names))
    for name, detail in unexplained:
        print(f"UNEXPLAINED {name}: {detail}")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
