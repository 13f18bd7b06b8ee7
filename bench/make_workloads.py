#!/usr/bin/env python3
"""Write the paper's single-operator benchmark cases as composite JSON files.

The cases are those of the team's reference suite single_ops(): eleven shapes (all-,
x-, y- and mixed reductions), each reduced with

    sum f32, sum f16 (f16 output), sum i32 (int32 output), max f32, max f16,
    and bool (ReduceAll, bool output).

Each case becomes OUT/single/<name>.json in the composite format of
examples/table2/*.json (read by src/frontend/composite_reader.cc): one input
"input_0", one reduce op, one output.  A reduction over every axis declares its
output as [1], as MindSpore's dumps do.  OUT/cases.txt lists the same cases for
bench/peers_cub.cu, one per line:

    name op dtype dims axes        e.g.  sum_f32_y_8192x768 sum f32 8192,768 0

op is sum|max|and, dtype f32|f16|i32|bool, dims and axes comma-separated.

usage: make_workloads.py [OUT]   (default: bench/workloads beside this file)
"""
import json
import os
import sys

# (label, shape, reduced axes; None = every axis): suite.py single_ops(), verbatim.
SHAPES = [
    ("all_16226304", (16226304,), None),
    ("all_1024x1024", (1024, 1024), None),
    ("all_64x2", (64, 2), None),
    ("x_1024x131072", (1024, 131072), (1,)),
    ("x_1048576x512", (1048576, 512), (1,)),
    ("x_768x21128", (768, 21128), (1,)),
    ("y_131072x1024", (131072, 1024), (0,)),
    ("y_21128x768", (21128, 768), (0,)),
    ("y_8192x768", (8192, 768), (0,)),
    ("mix_40x20x10x5_r023", (40, 20, 10, 5), (0, 2, 3)),
    ("mix_64x128x56x56_r023", (64, 128, 56, 56), (0, 2, 3)),
]

# (op, dtype) in suite.py's order; "and" is on bool only.
OPS = [("sum", "f32"), ("sum", "f16"), ("sum", "i32"), ("max", "f32"), ("max", "f16"),
       ("and", "bool")]

COMPOSITE_DTYPE = {"f32": "float32", "f16": "float16", "i32": "int32", "bool": "bool"}
REDUCE_OP = {"sum": "ReduceSum", "max": "ReduceMax", "and": "ReduceAll"}


def single_cases():
    """Every single-op case as a dict: name, op, dtype, shape, axes (a tuple)."""
    cases = []
    for label, shape, axes in SHAPES:
        for op, dt in OPS:
            cases.append(dict(name=f"{op}_{dt}_{label}", op=op, dtype=dt, shape=shape,
                              axes=tuple(range(len(shape))) if axes is None else axes))
    return cases


def tensor(dtype, shape, name, op_name=None):
    """A tensor descriptor; op_name is the "name" key that descriptors inside ops carry."""
    d = {"data_type": dtype, "format": "DefaultFormat"}
    if op_name:
        d["name"] = op_name
    d.update({"shape": list(shape), "tensor_name": name})
    return d


def output_shape(shape, axes):
    kept = [n for d, n in enumerate(shape) if d not in axes]
    return kept or [1]  # a reduction to a scalar is declared [1] (MindSpore's convention)


def composite(case, ident):
    """The composite document of one single-op case."""
    dt = COMPOSITE_DTYPE[case["dtype"]]
    out_shape = output_shape(case["shape"], case["axes"])
    reduce_name = REDUCE_OP[case["op"]]
    op = {
        "attr": [
            {"data_type": "listInt", "name": "axis", "value": list(case["axes"])},
            {"data_type": "bool", "name": "keep_dims", "value": False},
        ],
        "impl_path": "",
        "input_desc": [[tensor(dt, case["shape"], "input_0", op_name="input_0")]],
        "name": reduce_name,
        "output_desc": [tensor(dt, out_shape, "output_0_0", op_name="output_0")],
    }
    return {
        "composite": True,
        "id": ident,
        "input_desc": [[tensor(dt, case["shape"], "input_0")]],
        "op": f"Fused_{reduce_name}_single_{case['name']}",
        "op_desc": [op],
        "output_desc": [tensor(dt, out_shape, "output_0_0")],
        "platform": "AKG",
        "process": "cuda",
    }


def dumps(value, indent=0, key=None):
    """JSON text laid out like examples/table2/*.json (number lists, attr entries and the
    top-level output_desc on one line; everything else one item per line)."""
    pad, inner = "  " * indent, "  " * (indent + 1)
    if isinstance(value, dict):
        if "value" in value:  # an attr entry
            return json.dumps(value)
        items = [inner + json.dumps(k) + ": " + dumps(v, indent + 1, k) for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        scalars = all(not isinstance(v, (list, dict)) for v in value)
        if scalars or (key == "output_desc" and indent == 1) or (key == "attr" and len(value) == 1):
            return json.dumps(value)
        return "[\n" + ",\n".join(inner + dumps(v, indent + 1) for v in value) + "\n" + pad + "]"
    return json.dumps(value)


def case_line(case):
    dims = ",".join(str(n) for n in case["shape"])
    axes = ",".join(str(a) for a in case["axes"])
    return f"{case['name']} {case['op']} {case['dtype']} {dims} {axes}"


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "workloads")
    single = os.path.join(out, "single")
    os.makedirs(single, exist_ok=True)
    cases = single_cases()
    for ident, case in enumerate(cases, start=1):
        with open(os.path.join(single, case["name"] + ".json"), "w") as f:
            f.write(dumps(composite(case, ident)) + "\n")
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("# name op dtype dims axes  (written by bench/make_workloads.py)\n")
        f.writelines(case_line(c) + "\n" for c in cases)
    print(f"make_workloads: {len(cases)} single-op cases in {single}, list in {out}/cases.txt")


if __name__ == "__main__":
    main()
