#!/usr/bin/env python3
"""The peers' check of thresholded outputs (bench/peers_torch.py): a dropout mask that
flips a few elements on the threshold passes by its kept fraction and says so; many
flips, or a wrong output that no comparison feeds, still fail. Needs PyTorch (CPU)."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import composite_torch as ct  # noqa: E402
import peers_torch as pt  # noqa: E402

N = 4096


def desc(name, dtype="float32", **extra):
    return dict(tensor_name=name, shape=[N], data_type=dtype, format="DefaultFormat", **extra)


def dropout_like():
    """m = u <= 0.9 (a mask); y = x * x (no comparison upstream)."""
    return ct.Composite({
        "op": "drop",
        "input_desc": [[desc("x")], [desc("u")]],
        "op_desc": [
            {"name": "LessEqual", "input_desc": [[desc("u")], [dict(desc("k"), shape=[1], value=0.9)]],
             "output_desc": [desc("m", "bool")]},
            {"name": "Mul", "input_desc": [[desc("x")], [desc("x")]], "output_desc": [desc("y")]},
        ],
        "output_desc": [desc("m", "bool"), desc("y")],
    })


def main():
    comp = dropout_like()
    assert comp.thresholded_outputs() == [0], comp.thresholded_outputs()
    torch.manual_seed(0)
    mask, y = torch.rand(N) <= 0.9, torch.randn(N)
    one_flip = mask.clone()
    one_flip[7] = ~one_flip[7]
    ok, _, how = pt.check((one_flip, y), (mask, y), comp)
    assert ok and how == "mask", (ok, how)
    ok, _, how = pt.check((mask, y), (mask, y), comp)
    assert ok and how == "elementwise", (ok, how)
    many = mask.clone()
    many[:100] = ~many[:100]
    assert not pt.check((many, y), (mask, y), comp)[0], "100 flips in 4096 must fail"
    assert not pt.check((mask, y + 1), (mask, y), comp)[0], "a wrong output without a comparison must fail"
    print("peers' mask check: 4 cases ok")


if __name__ == "__main__":
    main()
