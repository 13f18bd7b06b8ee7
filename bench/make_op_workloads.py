#!/usr/bin/env python3
"""GPU-sized composite files for the ops added on 2026-11-26 (FloorMod, Atan2, Concat, Tile,
StridedSlice with a stride, Split, Gather, LayerNorm, Pool2D, GatherNd,
BiasAdd + HSwish), to time them against PyTorch with the benchmark:

    python3 bench/make_op_workloads.py OUTDIR
    mkdir -p EMPTY && touch EMPTY/cases.txt
    CORPUS_DIR=OUTDIR TABLE2_DIR=EMPTY WORKLOADS_DIR=EMPTY \\
      STAGES=manifest,build,polyred,meter,warm,torch,report bash bench/run_all.sh RESULTS
"""
import json
import os
import sys


class Graph:
    """A composite file built op by op (MindSpore's layout)."""

    def __init__(self, name):
        self.name, self.inputs, self.ops, self.outputs, self.tensors, self.count = name, [], [], [], {}, 0

    def desc(self, name):
        dtype, shape = self.tensors[name]
        return {"data_type": dtype, "format": "DefaultFormat", "shape": shape, "tensor_name": name}

    def input(self, name, dtype, shape):
        self.tensors[name] = (dtype, shape)
        self.inputs.append([self.desc(name)])
        return name

    def op(self, kind, ins, outs, attrs=None, grouped=False):
        names = []
        for dtype, shape in outs:
            names.append(f"t{self.count}")
            self.tensors[names[-1]] = (dtype, shape)
            self.count += 1
        self.ops.append({"name": kind, "attr": [{"name": k, "value": v} for k, v in (attrs or {}).items()] or None,
                         "input_desc": [[self.desc(x) for x in ins]] if grouped else [[self.desc(x)] for x in ins],
                         "output_desc": [self.desc(n) for n in names]})
        return names[0] if len(names) == 1 else names

    def write(self, directory, outputs):
        doc = {"composite": True, "op": self.name, "process": "cuda", "input_desc": self.inputs,
               "op_desc": self.ops, "output_desc": [self.desc(n) for n in outputs]}
        with open(os.path.join(directory, self.name + ".json"), "w") as f:
            json.dump(doc, f)


def main(out):
    os.makedirs(out, exist_ok=True)
    g = Graph("ops_floormod_f32_16M")  # elementwise, 128 MB in, 64 MB out
    x, y = g.input("x", "float32", [16777216]), g.input("y", "float32", [16777216])
    g.write(out, [g.op("FloorMod", [x, y], [("float32", [16777216])])])

    g = Graph("ops_atan2_rowsum_f32_4096x4096")  # 128 MB in, a row sum out
    x, y = g.input("x", "float32", [4096, 4096]), g.input("y", "float32", [4096, 4096])
    a = g.op("Atan2", [x, y], [("float32", [4096, 4096])])
    g.write(out, [g.op("ReduceSum", [a], [("float32", [4096])], {"axis": [1], "keep_dims": False})])

    g = Graph("ops_concat3_rowsum_f16_4096x3072")  # three [4096,1024] halves joined, summed per row
    parts = [g.input(f"x{k}", "float16", [4096, 1024]) for k in range(3)]
    c = g.op("Concat", parts, [("float16", [4096, 3072])], {"axis": 1}, grouped=True)
    g.write(out, [c, g.op("ReduceSum", [c], [("float16", [4096])], {"axis": [1], "keep_dims": False})])

    g = Graph("ops_tile_add_f32_8192x1024")  # x + Tile(b, [1,4])
    x, b = g.input("x", "float32", [8192, 1024]), g.input("b", "float32", [1, 256])
    t = g.op("Tile", [b], [("float32", [1, 1024])], {"multiples": [1, 4]})
    g.write(out, [g.op("Add", [x, t], [("float32", [8192, 1024])])])

    g = Graph("ops_strided_rowsum_f32_8192x4096")  # every other column, summed per row
    x = g.input("x", "float32", [8192, 4096])
    s = g.op("StridedSlice", [x], [("float32", [8192, 2048])],
             {"begin": [0, 0], "end": [8192, 4096], "strides": [1, 2], "begin_mask": 0, "end_mask": 0,
              "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 0})
    g.write(out, [g.op("ReduceSum", [s], [("float32", [8192])], {"axis": [1], "keep_dims": False})])

    g = Graph("ops_split_glu_f16_8192x4096")  # a * sigmoid-free GLU: first half times second, per-row sum too
    x = g.input("x", "float16", [8192, 4096])
    a, b = g.op("Split", [x], [("float16", [8192, 2048]), ("float16", [8192, 2048])], {"axis": 1, "output_num": 2})
    m = g.op("Mul", [a, b], [("float16", [8192, 2048])])
    g.write(out, [m, g.op("ReduceSum", [m], [("float16", [8192])], {"axis": [1], "keep_dims": False})])

    g = Graph("ops_gather_embedding_bag_f16_30522x768")  # BERT's word embeddings, 64 bags of 128 ids, summed
    table, ids = g.input("table", "float16", [30522, 768]), g.input("ids", "int32", [64, 128])
    rows = g.op("Gather", [table, ids], [("float16", [64, 128, 768])], {"axis": 0})
    wide = g.op("Cast", [rows], [("float32", [64, 128, 768])], {"dst_type": "float32"})
    g.write(out, [g.op("ReduceSum", [wide], [("float32", [64, 768])], {"axis": [1], "keep_dims": False})])

    layer_workloads(out)


def layer_workloads(out):
    g = Graph("ops_layernorm_f16_8192x1024")  # y, mean and variance per row
    x, gamma, beta = g.input("x", "float16", [8192, 1024]), g.input("g", "float16", [1024]), g.input("b", "float16", [1024])
    y, mean, var = g.op("LayerNorm", [x, gamma, beta],
                        [("float16", [8192, 1024]), ("float32", [8192, 1]), ("float32", [8192, 1])],
                        {"begin_norm_axis": 1, "begin_params_axis": 1, "epsilon": 1e-5})
    g.write(out, [y, mean, var])

    g = Graph("ops_maxpool_nhwc_f16_32x112x112x64")  # ResNet's stem pool: 3x3, stride 2, pad 1
    x = g.input("x", "float16", [32, 112, 112, 64])
    g.write(out, [g.op("Pool2D", [x], [("float16", [32, 56, 56, 64])],
                       {"global": False, "pool_type": "max", "data_layout": "NHWC", "kernel_size": [3, 3],
                        "strides": [2, 2], "pad": [1, 1, 1, 1], "round_mode": 1})])

    g = Graph("ops_avgpool_global_f16_64x7x7x2048")  # ResNet-50's head
    x = g.input("x", "float16", [64, 7, 7, 2048])
    g.write(out, [g.op("Pool2D", [x], [("float16", [64, 1, 1, 2048])],
                       {"global": True, "pool_type": "avg", "data_layout": "NHWC"})])

    g = Graph("ops_gathernd_rowsum_f32_1024x64x256")  # 8192 (i, j) pairs pick rows of 256
    p, i = g.input("p", "float32", [1024, 64, 256]), g.input("i", "int32", [8192, 2])
    rows = g.op("GatherNd", [p, i], [("float32", [8192, 256])])
    g.write(out, [g.op("ReduceSum", [rows], [("float32", [8192])], {"axis": [1], "keep_dims": False})])

    g = Graph("ops_cumsum_f32_64x4096")  # 64 rows: one block scan each
    x = g.input("x", "float32", [64, 4096])
    g.write(out, [g.op("CumSum", [x], [("float32", [64, 4096])], {"axis": 1})])
    scan_workloads(out)

    g = Graph("ops_segment_sum_f32_4096x128_256")  # 4096 rows summed into 256 segments
    d, ids = g.input("d", "float32", [4096, 128]), g.input("ids", "int32", [4096])
    g.write(out, [g.op("UnsortedSegmentSum", [d, ids], [("float32", [256, 128])], {"num_segments": 256})])

    g = Graph("ops_embedding_grad_f32_16384x1024_30522")  # BERT's word-embedding gradient (atomic scatter)
    d, ids = g.input("d", "float32", [16384, 1024]), g.input("ids", "int32", [16384])
    g.write(out, [g.op("UnsortedSegmentSum", [d, ids], [("float32", [30522, 1024])], {"num_segments": 30522})])

    g = Graph("ops_tensor_scatter_add_f32_30522x768_8192")  # index_add of 8192 rows into a table
    x, i, u = g.input("x", "float32", [30522, 768]), g.input("i", "int32", [8192, 1]), g.input("u", "float32", [8192, 768])
    g.write(out, [g.op("TensorScatterAdd", [x, i, u], [("float32", [30522, 768])])])

    g = Graph("ops_segment_sum_scaled_i64_65536x16_1000")  # int64 sums of a fused product
    d, s, ids = g.input("d", "int64", [65536, 16]), g.input("s", "int64", [16]), g.input("ids", "int64", [65536])
    scaled = g.op("Mul", [d, s], [("int64", [65536, 16])])
    g.write(out, [g.op("UnsortedSegmentSum", [scaled, ids], [("int64", [1000, 16])], {"num_segments": 1000})])

    scatter_temporary_workloads(out)

    g = Graph("ops_biasadd_hswish_f16_32x256x56x56")  # NCHW bias, then HSwish
    x, b = g.input("x", "float16", [32, 256, 56, 56]), g.input("b", "float16", [256])
    biased = g.op("BiasAdd", [x, b], [("float16", [32, 256, 56, 56])], {"data_format": "NCHW"})
    g.write(out, [g.op("HSwish", [biased], [("float16", [32, 256, 56, 56])])])


def scatter_temporary_workloads(out):
    """Scatters whose atomic store cannot be a finished output (2026-11-27): 16- and
    8-bit sums (added in a 32-bit temporary, then cast) and sums another op reads, from
    a few thousand mask elements (where a masked sum is one launch) to BERT's embedding
    gradient in float16 (refused before: a masked sum of 5 * 10^11 elements); table
    updates written back in place (Assign: atomics into the table's own buffer)."""
    for dtype, rows, cols, segments in [("float16", 256, 16, 16), ("float16", 1024, 32, 32),
                                        ("float16", 2048, 64, 64), ("float16", 4096, 128, 256),
                                        ("float16", 16384, 1024, 30522), ("bfloat16", 16384, 1024, 30522),
                                        ("int8", 4096, 128, 256)]:
        g = Graph(f"ops_segment_sum_{dtype}_{rows}x{cols}_{segments}")
        d, ids = g.input("d", dtype, [rows, cols]), g.input("ids", "int32", [rows])
        g.write(out, [g.op("UnsortedSegmentSum", [d, ids], [(dtype, [segments, cols])], {"num_segments": segments})])
    for dtype in ["float32", "float16"]:  # an embedding-table update written back in place
        g = Graph(f"ops_tensor_scatter_add_in_place_{dtype}_30522x768_8192")
        x, i, u = g.input("x", dtype, [30522, 768]), g.input("i", "int32", [8192, 1]), g.input("u", dtype, [8192, 768])
        y = g.op("TensorScatterAdd", [x, i, u], [(dtype, [30522, 768])])
        g.write(out, [g.op("Assign", [x, y], [(dtype, [30522, 768])])])
    for rows, cols, segments in [(1024, 32, 32), (4096, 128, 256)]:
        g = Graph(f"ops_segment_sum_then_exp_f32_{rows}x{cols}_{segments}")
        d, ids = g.input("d", "float32", [rows, cols]), g.input("ids", "int32", [rows])
        sums = g.op("UnsortedSegmentSum", [d, ids], [("float32", [segments, cols])], {"num_segments": segments})
        g.write(out, [g.op("Exp", [sums], [("float32", [segments, cols])])])


def scan_workloads(out):
    """The scan kernel's shapes: many rows, columns, long rows, reversed, exclusive."""
    g = Graph("ops_cumsum_f16_4096x4096")  # many rows: the x form with lanes
    x = g.input("x", "float16", [4096, 4096])
    g.write(out, [g.op("CumSum", [x], [("float16", [4096, 4096])], {"axis": 1})])

    g = Graph("ops_cumsum_f32_axis0_4096x1024")  # down columns: the y form
    x = g.input("x", "float32", [4096, 1024])
    g.write(out, [g.op("CumSum", [x], [("float32", [4096, 1024])], {"axis": 0})])

    g = Graph("ops_cumsum_exclusive_reverse_i32_1024x2000")  # a reversed exclusive int scan
    x = g.input("x", "int32", [1024, 2000])
    g.write(out, [g.op("CumSum", [x], [("int32", [1024, 2000])], {"axis": 1, "exclusive": True, "reverse": True})])

    g = Graph("ops_cumprod_f32_8x32x1000")  # the middle axis: y form over 8 x 1000 columns
    x = g.input("x", "float32", [8, 32, 1000])
    g.write(out, [g.op("CumProd", [x], [("float32", [8, 32, 1000])], {"axis": 1})])

    g = Graph("ops_cumsum_f32_4x1048576")  # few long rows: one block each
    x = g.input("x", "float32", [4, 1048576])
    g.write(out, [g.op("CumSum", [x], [("float32", [4, 1048576])], {"axis": 1})])

    g = Graph("ops_cumsum_f16_axis0_8192x4096")  # many long columns: 8 points of a column per thread
    x = g.input("x", "float16", [8192, 4096])
    g.write(out, [g.op("CumSum", [x], [("float16", [8192, 4096])], {"axis": 0})])

    g = Graph("ops_cumsum_f32_32x4096x64")  # a middle axis of 4096 under 32 x 64 columns
    x = g.input("x", "float32", [32, 4096, 64])
    g.write(out, [g.op("CumSum", [x], [("float32", [32, 4096, 64])], {"axis": 1})])


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
