#!/usr/bin/env python3
"""Synthetic transposes for the tiled-transpose measurements (docs/results/notes-2026-11-28.md).

    python3 bench/make_transposes.py OUTDIR

writes composite files t_<dtype>_<shape>_<perm>.json (one Transpose) and
ct_<from><to>_<shape>_<perm>.json (a Cast, then the Transpose) into OUTDIR, in the
format of the vgg16 corpus files they were modelled on. `polyred run` times them;
`--config=transpose=off` gives the 1-D loop, `transpose=on` tiles every one.
"""
import json
import os
import sys

CASES = [  # (dtype, shape, perm, cast-to or None)
    ("float16", [64, 3, 224, 224], [0, 2, 3, 1], None),
    ("float32", [512, 3, 3, 512], [0, 3, 1, 2], None),
    ("float16", [64, 512, 3, 3], [0, 2, 3, 1], None),
    ("float16", [4096, 4096], [1, 0], None),
    ("float32", [4096, 4096], [1, 0], None),
    ("int8", [4096, 4096], [1, 0], None),
    ("float32", [4096, 4096], [1, 0], "float16"),
    ("float16", [8192, 64], [1, 0], None),
    ("float16", [64, 8192], [1, 0], None),
    ("float16", [1024, 8, 4096], [0, 2, 1], None),
    ("float32", [1024, 8, 4096], [0, 2, 1], None),
    ("float16", [128, 3, 65536], [0, 2, 1], None),
    ("float16", [1024, 16, 2048], [0, 2, 1], None),
]

SHORT = {"float16": "f16", "float32": "f32", "int8": "i8"}


def tensor(dtype, shape, name, op_name=None):
    t = {"data_type": dtype, "format": "DefaultFormat", "shape": shape, "tensor_name": name}
    if op_name:
        t["name"] = op_name
    return t


def graph(name, dtype, shape, perm, cast):
    out_shape = [shape[p] for p in perm]
    ops, src, src_type = [], "input_0", dtype
    if cast:
        ops.append({"attr": [{"data_type": "str", "name": "dst_type", "value": cast}], "impl_path": "",
                    "input_desc": [[tensor(dtype, shape, "input_0", "input_0")]], "name": "Cast",
                    "output_desc": [tensor(cast, shape, "cast_0", "output_0")]})
        src, src_type = "cast_0", cast
    ops.append({"attr": [{"data_type": "listInt", "name": "perm", "value": perm}], "impl_path": "",
                "input_desc": [[tensor(src_type, shape, src, "input_0")]], "name": "Transpose",
                "output_desc": [tensor(src_type, out_shape, "output_0_0", "output_0")]})
    return {"composite": True, "composite_graph": name, "id": 0, "op": name, "op_desc": ops,
            "input_desc": [[tensor(dtype, shape, "input_0")]],
            "output_desc": [tensor(src_type, out_shape, "output_0_0")], "platform": "AKG", "process": "cuda"}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "transposes"
    os.makedirs(out, exist_ok=True)
    for dtype, shape, perm, cast in CASES:
        dims = "x".join(map(str, shape))
        order = "".join(map(str, perm))
        name = (f"ct_{SHORT[dtype]}{SHORT[cast]}_{dims}_{order}" if cast else f"t_{SHORT[dtype]}_{dims}_{order}")
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(graph(name, dtype, shape, perm, cast), f, indent=1)
    print(f"wrote {len(CASES)} files into {out}")


if __name__ == "__main__":
    main()
