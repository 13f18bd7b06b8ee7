#!/usr/bin/env python3
"""Write the issue-13 benchmark cases (argmax, var_mean, logsumexp, softmax, cross-entropy)
as composite JSON files, in OUT/tuple/ (default bench/workloads/tuple/).

    make_tuple_workloads.py [--scale full|small] [--out DIR]

Cases (full shapes; --scale small writes the same graphs at small shapes, for
`polyred check` on the CPU):

  argmax_f16            Argmax (int64 index, as torch.argmax) of f16 [4096, 50257], last axis
  var_mean_f32          TupleReduce "welford" (count, mean, m2; Chan's merge, n == 0 kept at
                        the identity) of f32 [32, 64, 56, 56] over (0, 2, 3): unbiased variance
                        and mean (torch.var_mean's default, correction 1)
  logsumexp_f16         TupleReduce "logsumexp" (max, sum of exp(x - max); a side at the max
                        keeps its sum, so two -inf sides give 0, not NaN) of f16 [8192, 32000],
                        last axis, result cast to f16
  softmax_f16           softmax of f16 [4096, 50257] as MindSpore writes it: Cast f32, ReduceMax
                        keep_dims, Sub, Exp, ReduceSum keep_dims, RealDiv, Cast f16
  softmax_lse_f16       the same softmax through the logsumexp tuple: Cast(Exp(x - lse(x)))
  cross_entropy_f16     per-row loss (reduction none) of f16 logits [8192, 32000] with int32
                        labels: lse(x) - ReduceSum(x * OneHot(labels)), cast to f16

The formulas are those of polyred's built-ins (docs/tuple_reductions.md); the declaration
syntax is docs/format.md's. OUT/tuple/cases.json lists every case with its torch
equivalent (used by bench/tuple_bench.py).
"""
import argparse
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

SHAPES = {
    "full": dict(argmax=(4096, 50257), var_mean=(32, 64, 56, 56), lse=(8192, 32000),
                 softmax=(4096, 50257), ce=(8192, 32000)),
    "small": dict(argmax=(64, 5003), var_mean=(4, 8, 7, 9), lse=(64, 3001),
                  softmax=(48, 5003), ce=(64, 3001)),
}


# ---------------------------------------------------------------- tuple declarations


def c(v, t="float32"):
    return {"value": v, "data_type": t}


def welford():
    """(count, mean, m2) with Chan et al.'s merge, one division per combine (share =
    nb / n; src/ir/tuple_reduction.cc's welfordTuple); n == 0 (two identities) stays 0."""
    n = ["Add", "a0", "b0"]
    delta = ["Sub", "b1", "a1"]
    empty = ["Equal", n, c(0)]
    share = ["RealDiv", "b0", n]
    mean = ["Add", "a1", ["Mul", delta, share]]
    m2 = ["Add", ["Add", "a2", "b2"], ["Mul", ["Mul", delta, delta], ["Mul", "a0", share]]]
    return {
        "name": "welford", "inputs": ["float32"], "commutative": True,
        "fields": [
            {"name": "count", "data_type": "float32", "identity": 0, "lift": c(1), "combine": n},
            {"name": "mean", "data_type": "float32", "identity": 0, "lift": "in0",
             "combine": ["Select", empty, c(0), mean]},
            {"name": "m2", "data_type": "float32", "identity": 0, "lift": c(0),
             "combine": ["Select", empty, c(0), m2]},
        ],
        # unbiased (correction 1), then the mean: torch.var_mean's order
        "results": [{"name": "var", "value": ["RealDiv", "a2", ["Sub", "a0", c(1)]]},
                    {"name": "mean", "value": "a1"}],
    }


def logsumexp(in_dtype):
    """(max, sum of exp(x - max)) with one Exp per combine (logSumExpTuple in
    src/ir/tuple_reduction.cc): the side with the larger max keeps its sum, the other's
    is rescaled; equal maxima add directly, so two empty sides (-inf - -inf) give 0."""
    m = ["Maximum", "a0", "b0"]
    a_higher = ["GreaterEqual", "a0", "b0"]
    rescaled = ["Mul", ["Select", a_higher, "b1", "a1"], ["Exp", ["Sub", ["Select", a_higher, "b0", "a0"], m]]]
    total = ["Select", ["Equal", "a0", "b0"], ["Add", "a1", "b1"],
             ["Add", ["Select", a_higher, "a1", "b1"], rescaled]]
    return {
        "name": "logsumexp", "inputs": [in_dtype], "commutative": True,
        "fields": [
            {"name": "max", "data_type": "float32", "identity": "-inf", "lift": "in0", "combine": m},
            {"name": "sum", "data_type": "float32", "identity": 0, "lift": c(1),
             "combine": total},
        ],
        "results": [{"name": "lse", "value": ["Add", "a0", ["Log", "a1"]]}],
    }


# ---------------------------------------------------------------- graph writer


class Graph:
    """A composite document built op by op; tensors are (name, dtype, shape)."""

    def __init__(self, name):
        self.name, self.inputs, self.ops, self.outputs, self.decls = name, [], [], [], []
        self.count = 0

    def input(self, name, dtype, shape):
        t = (name, dtype, list(shape))
        self.inputs.append(t)
        return t

    def op(self, name, ins, outs, attrs=()):
        """ins: tensors or constants (number, dtype); outs: (dtype, shape) pairs."""
        descs = []
        for k, t in enumerate(ins):
            if isinstance(t, tuple) and len(t) == 2:  # a constant (value, dtype)
                self.count += 1
                descs.append([{"data_type": t[1], "format": "DefaultFormat", "name": f"input_{k}",
                               "shape": [1], "tensor_name": f"const_{self.count}", "value": t[0]}])
            else:
                descs.append([desc(t, f"input_{k}")])
        made = []
        for k, (dtype, shape) in enumerate(outs):
            self.count += 1
            made.append((f"t{self.count}_{name.lower()}", dtype, list(shape)))
        self.ops.append({"name": name, "attr": [{"data_type": a[2], "name": a[0], "value": a[1]} for a in attrs],
                         "input_desc": descs,
                         "output_desc": [desc(t, f"output_{k}") for k, t in enumerate(made)]})
        return made[0] if len(made) == 1 else made

    def doc(self, outputs):
        d = {"composite": True, "op": self.name}
        if self.decls:
            d["tuple_reductions"] = self.decls
        d.update({"input_desc": [[desc(t)] for t in self.inputs], "op_desc": self.ops,
                  "output_desc": [desc(t) for t in outputs], "platform": "AKG", "process": "cuda"})
        return d


def desc(t, op_name=None):
    d = {"data_type": t[1], "format": "DefaultFormat", "shape": t[2], "tensor_name": t[0]}
    if op_name:
        d["name"] = op_name
    return d


def axis_attrs(axes, keep):
    return [("axis", list(axes), "listInt"), ("keep_dims", keep, "bool")]


def reduced(shape, axes, keep):
    return [1 if d in axes else n for d, n in enumerate(shape)] if keep else \
        [n for d, n in enumerate(shape) if d not in axes] or [1]


def lse_of(g, xf, keep):
    """The logsumexp tuple of f32 rows (last axis): an f32 tensor."""
    if not any(d["name"] == "logsumexp" for d in g.decls):
        g.decls.append(logsumexp("float32"))
    last = len(xf[2]) - 1
    return g.op("TupleReduce", [xf], [("float32", reduced(xf[2], [last], keep))],
                [("reduction", "logsumexp", "str")] + axis_attrs([last], keep))


# ---------------------------------------------------------------- the cases


def argmax_case(shape):
    g = Graph("argmax_f16")
    x = g.input("x", "float16", shape)
    idx = g.op("Argmax", [x], [("int64", shape[:-1])], [("axis", -1, "int"), ("output_type", "int64", "str")])
    return g.doc([idx]), dict(torch="argmax", inputs=[["float16", shape]], dim=-1)


def var_mean_case(shape):
    g = Graph("var_mean_f32")
    g.decls.append(welford())
    x = g.input("x", "float32", shape)
    axes = [0, 2, 3]
    out = reduced(shape, axes, False)
    var, mean = g.op("TupleReduce", [x], [("float32", out), ("float32", out)],
                     [("reduction", "welford", "str")] + axis_attrs(axes, False))
    return g.doc([var, mean]), dict(torch="var_mean", inputs=[["float32", shape]], dim=axes)


def logsumexp_case(shape):
    g = Graph("logsumexp_f16")
    x = g.input("x", "float16", shape)
    xf = g.op("Cast", [x], [("float32", shape)], [("dst_type", "float32", "str")])
    lse = lse_of(g, xf, False)
    y = g.op("Cast", [lse], [("float16", lse[2])], [("dst_type", "float16", "str")])
    return g.doc([y]), dict(torch="logsumexp", inputs=[["float16", shape]], dim=-1)


def softmax_case(shape):
    """MindSpore's expansion of Softmax on f16 (what its graph kernel fusion writes)."""
    g = Graph("softmax_f16")
    last = len(shape) - 1
    x = g.input("x", "float16", shape)
    xf = g.op("Cast", [x], [("float32", shape)], [("dst_type", "float32", "str")])
    mx = g.op("ReduceMax", [xf], [("float32", reduced(shape, [last], True))], axis_attrs([last], True))
    d = g.op("Sub", [xf, mx], [("float32", shape)])
    e = g.op("Exp", [d], [("float32", shape)])
    s = g.op("ReduceSum", [e], [("float32", reduced(shape, [last], True))], axis_attrs([last], True))
    p = g.op("RealDiv", [e, s], [("float32", shape)])
    y = g.op("Cast", [p], [("float16", shape)], [("dst_type", "float16", "str")])
    return g.doc([y]), dict(torch="softmax", inputs=[["float16", shape]], dim=-1)


def softmax_lse_case(shape):
    """Softmax through the logsumexp tuple: exp(x - lse(x))."""
    g = Graph("softmax_lse_f16")
    x = g.input("x", "float16", shape)
    xf = g.op("Cast", [x], [("float32", shape)], [("dst_type", "float32", "str")])
    lse = lse_of(g, xf, True)
    d = g.op("Sub", [xf, lse], [("float32", shape)])
    e = g.op("Exp", [d], [("float32", shape)])
    y = g.op("Cast", [e], [("float16", shape)], [("dst_type", "float16", "str")])
    return g.doc([y]), dict(torch="softmax", inputs=[["float16", shape]], dim=-1)


def cross_entropy_case(shape):
    """Per-row loss: lse(x) - sum(x * OneHot(label)), f16 logits, int32 labels."""
    g = Graph("cross_entropy_f16")
    rows, classes = shape
    x = g.input("x", "float16", shape)
    labels = g.input("labels", "int32", [rows])
    xf = g.op("Cast", [x], [("float32", shape)], [("dst_type", "float32", "str")])
    hot = g.op("OneHot", [labels, (1.0, "float32"), (0.0, "float32")], [("float32", shape)],
               [("depth", classes, "int"), ("axis", -1, "int")])
    picked = g.op("Mul", [xf, hot], [("float32", shape)])
    target = g.op("ReduceSum", [picked], [("float32", [rows])], axis_attrs([1], False))
    lse = lse_of(g, xf, False)
    loss = g.op("Sub", [lse, target], [("float32", [rows])])
    y = g.op("Cast", [loss], [("float16", [rows])], [("dst_type", "float16", "str")])
    return g.doc([y]), dict(torch="cross_entropy", inputs=[["float16", shape], ["int32", [rows]]],
                            classes=classes)


CASES = [("argmax_f16", argmax_case, "argmax"), ("var_mean_f32", var_mean_case, "var_mean"),
         ("logsumexp_f16", logsumexp_case, "lse"), ("softmax_f16", softmax_case, "softmax"),
         ("softmax_lse_f16", softmax_lse_case, "softmax"), ("cross_entropy_f16", cross_entropy_case, "ce")]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scale", choices=sorted(SHAPES), default="full")
    p.add_argument("--out", default=os.path.join(HERE, "workloads"),
                   help="the files go to OUT/tuple (default bench/workloads)")
    a = p.parse_args(argv)
    out = os.path.join(a.out, "tuple")
    os.makedirs(out, exist_ok=True)
    listing = []
    for name, make, shape_key in CASES:
        doc, spec = make(tuple(SHAPES[a.scale][shape_key]))
        spec = dict(name=name, file=os.path.join(out, name + ".json"), scale=a.scale, **spec)
        spec["inputs"] = [[t, list(s)] for t, s in spec["inputs"]]
        with open(spec["file"], "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        listing.append(spec)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(listing, f, indent=1)
    print(f"make_tuple_workloads: {len(listing)} cases ({a.scale}) in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
