#!/usr/bin/env python3
"""Merge the benchmark's raw results into results.json, tables.md and plots; print the gaps.

    report.py --work DIR --out OUTDIR [--require-plots]
    report.py --selftest

DIR holds what bench/run_all.sh gathered: manifest.json (bench/run_polyred.py),
polyred.json, torch.jsonl (bench/peers_torch.py), cub.json (bench/peers_cub),
compile_times.json and env.json; any of the last five may be missing. OUTDIR gets:

  results.json   one merged record per workload file, the ceilings, the environment
  tables.md      one table per workload (single ops, Table 2 sub-graphs, corpus networks)
                 and the gaps to the issue-5 targets
  speedup.png    polyred's speedup over each peer per case        (needs matplotlib)
  bandwidth.png  achieved bandwidth against bytes moved, with the read ceiling

Definitions (docs/method.md): bytes = inputs read + outputs written, counted
once (polyred's count where it ran); GB/s = bytes / time; SoL = bytes / read ceiling +
launch floor, the ceiling being the best large f32 sum of the run (torch or CUB) and the
floor the fastest trivial kernel of the run; SoL efficiency = SoL / polyred time;
limit = the practical limit (bench/stream_meter.cu: the best plain streaming kernel
reading the case's input bytes and writing its output bytes, same run) / polyred time;
speedup over a peer = peer time / polyred time. A peer's time counts only if its result
passed its check; a wrong result is shown as WRONG and listed at the end. "(mask)": a
dropout mask that a peer's reordered arithmetic flips on the threshold, compared by its
kept fraction and the other outputs (bench/peers_torch.py).

Pure Python (no numpy); plots need matplotlib, optional unless --require-plots.
"""
import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tempfile

PEERS = ("eager", "compile", "cub", "cudnn")
PEER_TITLE = {"eager": "eager", "compile": "compile", "cub": "CUB", "cudnn": "cuDNN"}
GROUP_TITLE = {"single": "Single operators (the paper's reduce cases)",
               "table2": "Table 2 sub-graphs", "corpus": "Corpus networks"}
MB = 1e6
TARGETS = dict(limit_4mb=0.95, sol_10mb=0.90, ceiling_256mb=0.95, tiny_slack=1.03, table2_geomean=1.25, network_total=1.3)


# ---------------------------------------------------------------- loading


def load_json(path, default=None):
    if not os.path.exists(path):
        return default
    with open(path) as f:
        return json.load(f)


def load_jsonl(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


class Inputs:
    """Everything report.py reads from the work folder."""

    def __init__(self, work):
        self.manifest = load_json(os.path.join(work, "manifest.json"), {"entries": []})
        self.polyred = load_json(os.path.join(work, "polyred.json"), {"results": [], "errors": []})
        self.torch = load_jsonl(os.path.join(work, "torch.jsonl"))
        self.cub = load_json(os.path.join(work, "cub.json"), {"results": []})
        self.compile_times = load_json(os.path.join(work, "compile_times.json"), {"times": []})
        self.env = load_json(os.path.join(work, "env.json"), {})
        self.meter = {r["key"]: r for r in load_jsonl(os.path.join(work, "meter.jsonl"))}


# ---------------------------------------------------------------- merging


def peer_entry(us, ok, err=None, error=None, **extra):
    if error:
        return dict(error=error)
    if us is None:
        return None
    return dict(us=us, ok=bool(ok), rel_err=err, **extra)


def torch_peers(rec):
    out = {}
    for label in ("eager", "compile"):
        if rec.get(label + "_error"):
            out[label] = dict(error=rec[label + "_error"])
        elif rec.get(label + "_us") is not None:
            out[label] = peer_entry(rec[label + "_us"], rec.get(label + "_ok"), rec.get(label + "_rel_err"),
                                    check=rec.get(label + "_check", "elementwise"))
        elif rec.get("error") or rec.get("skipped"):
            out[label] = dict(error=rec.get("error") or "skipped: " + rec["skipped"])
    return out


def merge(inp):
    """One record per manifest entry, with polyred's and every peer's figures."""
    by_file = {r["file"]: r for r in inp.polyred.get("results", [])}
    errors = {e["file"]: e["error"] for e in inp.polyred.get("errors", [])}
    torch_by_key = {r["key"]: r for r in inp.torch if r.get("kind") == "case"}
    warm_by_key = {r["key"]: r for r in inp.torch if r.get("kind") == "warm"}
    cub = {}
    for r in inp.cub.get("results", []):
        cub.setdefault(r["case"], {})[r["impl"]] = r
    cases = []
    for e in inp.manifest["entries"]:
        c = dict(key=e["key"], file=e["file"], group=e["group"], net=e.get("net"), name=e.get("name", e["key"]),
                 in_scope=e.get("in_scope", False), status=e.get("status"), reason=e.get("reason"),
                 in_bytes=e.get("in_bytes"), bytes=None, polyred=None, peers={})
        if c["in_scope"]:
            fill_polyred(c, by_file.get(e["file"]), errors.get(e["file"]), e)
            if e["file"] in inp.meter:
                c["limit_us"] = inp.meter[e["file"]]["us"]
            lib = cub.get(e.get("name"), {}) if e["group"] == "single" else {}
            fill_peers(c, torch_by_key.get(e["key"]), warm_by_key.get(e["key"]), lib)
        cases.append(c)
    return cases


def fill_polyred(c, res, error, entry):
    if res:
        c["polyred"] = dict(us=res.get("micros"), ok=res.get("ok"), kernels=res.get("kernels"),
                            bitwise_repeatable=res.get("bitwise_repeatable"))
        c["bytes"] = res.get("bytes")
    elif error:
        c["polyred"] = dict(error=error)
    if not c["bytes"] and entry.get("in_bytes") is not None:
        c["bytes"] = entry["in_bytes"] + entry.get("out_bytes", 0)


def fill_peers(c, trec, warm, cub):
    if trec:
        c["peers"].update(torch_peers(trec))
        if trec.get("polyred_torch_us") is not None:  # polyred again, on the peers' own tensors
            c["polyred_torch"] = peer_entry(trec["polyred_torch_us"], trec.get("polyred_torch_ok"),
                                            trec.get("polyred_torch_rel_err"))
        if not c["bytes"] and trec.get("bytes"):
            c["bytes"] = trec["bytes"]
    if warm:
        c["torch_compile_s"] = warm.get("compile_s")
    for impl in ("cub", "cudnn"):
        r = cub.get(impl)
        if r:
            c["peers"][impl] = peer_entry(r.get("us"), r.get("ok"), r.get("rel_err"), r.get("error"),
                                          how=r.get("how"), graph_nodes=r.get("graph_nodes"))


def ceilings(inp):
    """(read ceiling GB/s, its source, launch floor us, its source) of the run."""
    ceil, floor = [], []
    for r in inp.torch:
        if r.get("kind") == "ceilings":
            ceil.append((r["read_ceiling"]["GBps"], r["read_ceiling"]["impl"]))
            floor.append((r["launch_floor"]["us"], r["launch_floor"]["impl"]))
    if inp.cub.get("read_ceiling"):
        ceil.append((inp.cub["read_ceiling"]["GBps"], inp.cub["read_ceiling"]["impl"]))
        floor.append((inp.cub["launch_floor"]["us"], inp.cub["launch_floor"]["impl"]))
    best_c = max(ceil) if ceil else (None, None)
    best_f = min(floor) if floor else (None, None)
    return dict(read_ceiling_GBps=best_c[0], read_ceiling_impl=best_c[1], launch_floor_us=best_f[0],
                launch_floor_impl=best_f[1], all_ceilings=ceil, all_floors=floor)


# ---------------------------------------------------------------- derived figures


def valid_us(p):
    """A peer's time when its result passed, else None."""
    return p["us"] if p and p.get("ok") and p.get("us") else None


def polyred_us(c):
    p = c["polyred"]
    return p["us"] if p and p.get("ok") and p.get("us") else None


def derive(c, ceil):
    """Adds GB/s, SoL efficiency, speedups and the fastest peer to a merged case."""
    us = polyred_us(c)
    c["speedup"], c["fastest_peer"] = {}, None
    times = {k: valid_us(c["peers"].get(k)) for k in PEERS}
    times = {k: v for k, v in times.items() if v}
    if times:
        c["fastest_peer"] = min(times, key=times.get)
    if us and c["bytes"]:
        c["GBps"] = c["bytes"] / us / 1e3
        if ceil["read_ceiling_GBps"]:
            sol = c["bytes"] / (ceil["read_ceiling_GBps"] * 1e3) + ceil["launch_floor_us"]
            c["sol_us"], c["sol_eff"] = sol, sol / us
            c["ceiling_frac"] = c["GBps"] / ceil["read_ceiling_GBps"]
    if us and c.get("limit_us"):
        c["limit_eff"] = c["limit_us"] / us  # 1.0: as fast as merely moving the bytes
    if us:
        c["speedup"] = {k: v / us for k, v in times.items()}
    return c


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def network_totals(cases):
    """Per network: totals over its in-scope files (with the count of files lacking a time) and,
    per peer, the speedup over the files where both polyred and that peer have a time."""
    nets = {}
    for c in cases:
        if c["group"] != "corpus":
            continue
        n = nets.setdefault(c["net"], dict(net=c["net"], files=0, excluded=0, one_kernel=0, totals={},
                                           missing={}, paired={}, speedup={}))
        if not c["in_scope"]:
            n["excluded"] += 1
            continue
        n["files"] += 1
        n["one_kernel"] += (c["polyred"] or {}).get("kernels") == 1
        mine = polyred_us(c)
        for impl in ("polyred", "eager", "compile"):
            t = mine if impl == "polyred" else valid_us(c["peers"].get(impl))
            if t:
                n["totals"][impl] = n["totals"].get(impl, 0.0) + t
            else:
                n["missing"][impl] = n["missing"].get(impl, 0) + 1
            if impl != "polyred" and t and mine:
                pair = n["paired"].setdefault(impl, [0, 0.0, 0.0])  # files, polyred us, peer us
                pair[0], pair[1], pair[2] = pair[0] + 1, pair[1] + mine, pair[2] + t
    for n in nets.values():
        n["complete"] = {k: not n["missing"].get(k) for k in ("polyred", "eager", "compile")}
        n["speedup"] = {k: peer / mine for k, (_, mine, peer) in n["paired"].items()}
    return [nets[k] for k in sorted(nets)]


# ---------------------------------------------------------------- gaps to the targets


def gaps(cases, nets, compile_times):
    """The issue-5 target checks as a dict of lists/values."""
    ran = [c for c in cases if polyred_us(c)]
    g = dict(
        sol_10mb=[c for c in ran if c["bytes"] >= 10 * MB and c.get("sol_eff", 1) < TARGETS["sol_10mb"]],
        limit_4mb=[c for c in ran if c["bytes"] >= 4 * MB and c.get("limit_eff", 1) < TARGETS["limit_4mb"]],
        ceiling_256mb=[c for c in ran if c["bytes"] >= 256 * MB
                       and c.get("ceiling_frac", 1) < TARGETS["ceiling_256mb"]],
        slower_1mb=[c for c in ran if c["bytes"] >= MB and c["fastest_peer"]
                    and c["speedup"][c["fastest_peer"]] < 1.0],
        tiny_slower=[c for c in ran if c["bytes"] < MB and c["fastest_peer"]
                     and c["speedup"][c["fastest_peer"]] < 1 / TARGETS["tiny_slack"]],
    )
    t2 = [c for c in cases if c["group"] == "table2" and c["in_scope"]]
    t2_speed = [c["speedup"].get("compile") for c in t2]
    g["table2_geomean_compile"] = geomean(t2_speed) if all(t2_speed) and t2 else None
    g["table2_with_compile"] = sum(1 for s in t2_speed if s)
    g["table2_count"] = len(t2)
    g["networks"] = [(n["net"], n["speedup"].get("compile"), n["complete"]["polyred"] and n["complete"]["compile"])
                     for n in nets if n["files"]]
    g["one_kernel"] = {grp: (sum(1 for c in cases if c["group"] == grp and (c["polyred"] or {}).get("kernels") == 1),
                             sum(1 for c in cases if c["group"] == grp and (c["polyred"] or {}).get("kernels")))
                       for grp in ("single", "table2", "corpus")}
    times = [t for t in compile_times.get("times", []) if t.get("cold_s")]
    g["compile"] = dict(files=len(times),
                        cold_median_s=statistics.median(t["cold_s"] for t in times) if times else None,
                        cold_max_s=max((t["cold_s"] for t in times), default=None),
                        cached_median_s=statistics.median(t["cached_s"] for t in times) if times else None)
    warm = [c["torch_compile_s"] for c in cases if c.get("torch_compile_s")]
    g["torch_compile"] = dict(files=len(warm), median_s=statistics.median(warm) if warm else None,
                              max_s=max(warm, default=None))
    g["polyred_wrong"] = [c["key"] for c in cases if c["polyred"] and c["polyred"].get("ok") is False]
    g["polyred_missing"] = [c["key"] for c in cases if c["in_scope"] and not polyred_us(c)
                            and not (c["polyred"] and c["polyred"].get("ok") is False)]
    g["peer_wrong"] = [(c["key"], k) for c in cases for k, p in c["peers"].items() if p and p.get("ok") is False]
    g["not_repeatable"] = [c["key"] for c in cases if c["polyred"] and c["polyred"].get("bitwise_repeatable") is False]
    return g


def gap_lines(g):
    def names(cs, fig):
        return "; ".join(f"{c['key']} ({fig(c)})" for c in cs) or "none"
    lines = [
        f"cases >= 4 MB below {TARGETS['limit_4mb']:.0%} of the practical limit: {len(g['limit_4mb'])}: "
        + names(g["limit_4mb"], lambda c: f"{c['limit_eff']:.0%}"),
        f"cases >= 10 MB below {TARGETS['sol_10mb']:.0%} SoL: {len(g['sol_10mb'])}: "
        + names(g["sol_10mb"], lambda c: f"{c['sol_eff']:.0%}"),
        f"cases >= 256 MB below {TARGETS['ceiling_256mb']:.0%} of the read ceiling: {len(g['ceiling_256mb'])}: "
        + names(g["ceiling_256mb"], lambda c: f"{c['ceiling_frac']:.0%}"),
        f"cases >= 1 MB slower than the fastest peer: {len(g['slower_1mb'])}: "
        + names(g["slower_1mb"], lambda c: f"{c['speedup'][c['fastest_peer']]:.2f}x vs {c['fastest_peer']}"),
        f"cases < 1 MB more than {TARGETS['tiny_slack'] - 1:.0%} slower than the fastest peer: "
        f"{len(g['tiny_slower'])}: "
        + names(g["tiny_slower"], lambda c: f"{c['speedup'][c['fastest_peer']]:.2f}x vs {c['fastest_peer']}"),
    ]
    gm = g["table2_geomean_compile"]
    lines.append(f"Table 2 geometric-mean speedup over torch.compile: "
                 + (f"{gm:.2f}x" if gm else f"n/a ({g['table2_with_compile']} of {g['table2_count']} with both times)")
                 + f" (target {TARGETS['table2_geomean']}x)")
    for net, s, complete in g["networks"]:
        lines.append(f"network {net}: total speedup over torch.compile "
                     + (f"{s:.2f}x" if s else "n/a")
                     + ("" if complete else " (INCOMPLETE: over the files where both have a time)")
                     + f" (target {TARGETS['network_total']}x)")
    lines.append("one kernel per sub-graph: " + ", ".join(
        f"{grp} {one}/{n}" for grp, (one, n) in g["one_kernel"].items()))
    cmp = g["compile"]
    if cmp["files"]:
        lines.append(f"polyred compile time ({cmp['files']} Table 2 files): cold median {cmp['cold_median_s']:.3f} s "
                     f"(max {cmp['cold_max_s']:.3f} s), cached median {cmp['cached_median_s']:.3f} s")
    tc = g["torch_compile"]
    if tc["files"]:
        lines.append(f"torch.compile compile time ({tc['files']} files, first call, in the parallel warm-up): "
                     f"median {tc['median_s']:.1f} s (max {tc['max_s']:.1f} s)")
    lines.append(f"polyred WRONG results: {len(g['polyred_wrong'])}: " + (", ".join(g["polyred_wrong"]) or "none"))
    lines.append(f"in-scope files without a polyred time: {len(g['polyred_missing'])}"
                 + (": " + ", ".join(g["polyred_missing"][:20]) if g["polyred_missing"] else ""))
    lines.append(f"peer WRONG results: {len(g['peer_wrong'])}: "
                 + (", ".join(f"{k} ({p})" for k, p in g["peer_wrong"]) or "none"))
    lines.append(f"polyred results not bitwise repeatable: {len(g['not_repeatable'])}"
                 + (": " + ", ".join(g["not_repeatable"]) if g["not_repeatable"] else ""))
    return lines


# ---------------------------------------------------------------- markdown


def fmt_us(v):
    return "-" if v is None else f"{v:.1f}" if v >= 100 else f"{v:.2f}"


def fmt_num(v):
    return "-" if v is None else f"{v:.0f}" if v >= 100 else f"{v:.3g}"


def peer_cell(p):
    if not p:
        return "-"
    if p.get("error"):
        return "skipped" if "budget" in p["error"] else "timeout" if "Timeout" in p["error"] else "error"
    # "mask": a dropout mask compared by its kept fraction (bench/peers_torch.py, check)
    mark = " (mask)" if p.get("check") == "mask" else ""
    return (fmt_us(p["us"]) + mark) if p.get("ok") else f"WRONG ({fmt_us(p['us'])})"


def polyred_cell(c):
    p = c["polyred"]
    if not p:
        return "-"
    if p.get("error"):
        return "no result"
    return fmt_us(p.get("us")) if p.get("ok") else f"WRONG ({fmt_us(p.get('us'))})"


def case_row(c, peers, same_tensors=False):
    sp = c.get("speedup", {})
    cells = [c["name"], fmt_num(c["in_bytes"] / MB) if c.get("in_bytes") is not None else "-",
             str((c["polyred"] or {}).get("kernels", "-")), polyred_cell(c), fmt_num(c.get("GBps")),
             f"{c['sol_eff']:.0%}" if c.get("sol_eff") else "-",
             f"{c['limit_eff']:.0%}" if c.get("limit_eff") else "-"]
    cells += [peer_cell(c["peers"].get(k)) for k in peers]
    cells += [f"{sp[k]:.2f}x" if k in sp else "-" for k in peers]
    cells.append(PEER_TITLE.get(c["fastest_peer"], "-") if c["fastest_peer"] else "-")
    if same_tensors:
        mine, theirs = valid_us(c.get("polyred_torch")), valid_us(c["peers"].get("compile"))
        cells += [peer_cell(c.get("polyred_torch")), f"{theirs / mine:.2f}x" if mine and theirs else "-"]
    return "| " + " | ".join(cells) + " |"


def case_table(cases):
    peers = [k for k in PEERS if any(c["peers"].get(k) for c in cases)] or ["eager", "compile"]
    head = ["case", "in MB", "kernels", "polyred us", "GB/s", "SoL", "limit"] + [PEER_TITLE[k] + " us" for k in peers] \
        + ["x " + PEER_TITLE[k] for k in peers] + ["fastest peer"]
    # polyred through its Python package on the peers' own tensors, timed by their harness
    same_tensors = any(c.get("polyred_torch") for c in cases)
    if same_tensors:
        head += ["polyred us, torch's tensors", "x compile, same tensors"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    return lines + [case_row(c, peers, same_tensors) for c in cases]


def network_table(nets):
    head = ["network", "files", "excluded", "one kernel", "polyred us", "eager us", "compile us",
            "x eager", "x compile"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for n in nets:
        def total(k):
            t = n["totals"].get(k)
            return "-" if t is None else fmt_us(t) + ("" if n["complete"][k] else f" ({n['missing'][k]} missing)")
        sp = n["speedup"]
        lines.append("| " + " | ".join([n["net"], str(n["files"]), str(n["excluded"]), f"{n['one_kernel']}/{n['files']}",
                                        total("polyred"), total("eager"), total("compile"),
                                        f"{sp['eager']:.2f}x" if "eager" in sp else "-",
                                        f"{sp['compile']:.2f}x" if "compile" in sp else "-"]) + " |")
    return lines


def header_lines(inp, ceil):
    env, dev = inp.env, inp.polyred.get("device") or inp.cub.get("device")
    torch_env = next((r for r in inp.torch if r.get("kind") == "env"), {})
    dev = dev or torch_env.get("device") or env.get("gpu")
    lines = [f"- device: {dev or 'unknown'}",
             f"- driver: {env.get('driver', 'unknown')}; CUDA: {env.get('cuda') or torch_env.get('cuda') or 'unknown'}"
             f"; PyTorch {torch_env.get('torch', '?')}, Triton {torch_env.get('triton', '?')}"
             f"; CUB {inp.cub.get('cub_version', '?')}, cuDNN {inp.cub.get('cudnn_version', '?')}",
             f"- date: {env.get('date') or torch_env.get('date') or 'unknown'}"]
    if ceil["read_ceiling_GBps"]:
        lines.append(f"- read ceiling {ceil['read_ceiling_GBps']:.0f} GB/s ({ceil['read_ceiling_impl']}, 2 GiB f32); "
                     f"launch floor {ceil['launch_floor_us']:.2f} us ({ceil['launch_floor_impl']}); measured in this run")
    else:
        lines.append("- read ceiling and launch floor: not measured (no peer ran): SoL is not computed")
    lines.append("- method: docs/method.md (L2 flush, events around one CUDA-graph replay, median of 50); "
                 "SoL = bytes / ceiling + floor; x PEER = peer time / polyred time; times in microseconds")
    return lines


def markdown(inp, cases, nets, ceil, g):
    out = ["# polyred benchmark results", ""] + header_lines(inp, ceil) + ["", "## Gaps to the issue-5 targets", ""]
    out += ["- " + line for line in gap_lines(g)]
    for grp in ("single", "table2"):
        cs = [c for c in cases if c["group"] == grp and c["in_scope"]]
        if cs:
            out += ["", f"## {GROUP_TITLE[grp]}", ""] + case_table(cs)
    if nets:
        out += ["", f"## {GROUP_TITLE['corpus']}", "",
                "A network's time is the sum over its sub-graphs that polyred compiles (the same files for every "
                "peer); files out of polyred's scope are listed at the end.", ""] + network_table(nets)
        for n in nets:
            cs = [c for c in cases if c["group"] == "corpus" and c["net"] == n["net"] and c["in_scope"]]
            out += ["", f"### {n['net']}: per sub-graph", ""] + case_table(cs)
        excluded = [c for c in cases if c["group"] == "corpus" and not c["in_scope"]]
        out += ["", "### Excluded corpus files (polyred does not compile them)", ""]
        out += [f"- {c['key']}: {c['status']}: {why(c)}" for c in excluded] or ["- none"]
    return "\n".join(out) + "\n"


def why(c):
    """The reason polyred gave, without the exit code and the file name."""
    reason = c.get("reason") or ""
    return reason.split(c["file"] + ": ", 1)[-1]


# ---------------------------------------------------------------- plots


def plots(cases, nets, ceil, outdir, require):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        if require:
            raise SystemExit("report: matplotlib is required for the plots (--require-plots)")
        print("report: matplotlib is not installed here: plots skipped")
        return []
    written = []
    for make in (lambda: speedup_plot(plt, cases, nets, outdir), lambda: bandwidth_plot(plt, cases, ceil, outdir)):
        try:
            written.append(make())
        except Exception as e:  # noqa: BLE001 - the tables are written already; say what failed
            print(f"report: PLOT FAILED: {type(e).__name__}: {e}")
            if require:
                raise
    return written


def speedup_plot(plt, cases, nets, outdir):
    panels = [(GROUP_TITLE[g], [c for c in cases if c["group"] == g and c.get("speedup")]) for g in ("single", "table2")]
    fig, axes = plt.subplots(3, 1, figsize=(16, 15))
    markers = dict(eager="o", compile="s", cub="^", cudnn="v")
    for ax, (title, cs) in zip(axes, panels):
        for k in PEERS:
            pts = [(i, c["speedup"][k]) for i, c in enumerate(cs) if k in c["speedup"]]
            if pts:
                ax.scatter([p[0] for p in pts], [p[1] for p in pts], marker=markers[k], label=PEER_TITLE[k])
        ax.set_xticks(range(len(cs)))
        ax.set_xticklabels([c["name"] for c in cs], rotation=90, fontsize=6)
        decorate(ax, title)
    ax = axes[2]
    for j, k in enumerate(("eager", "compile")):
        xs = [i + 0.4 * j for i, n in enumerate(nets) if k in n["speedup"]]
        ax.bar(xs, [n["speedup"][k] for n in nets if k in n["speedup"]], width=0.4, label=PEER_TITLE[k])
    ax.set_xticks([i + 0.2 for i in range(len(nets))])
    ax.set_xticklabels([n["net"] for n in nets])
    decorate(ax, "Corpus networks (sum over sub-graphs)")
    fig.tight_layout()
    path = os.path.join(outdir, "speedup.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def decorate(ax, title):
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_ylabel("speedup of polyred (peer time / polyred time)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", axis="y", alpha=0.3)


def bandwidth_plot(plt, cases, ceil, outdir):
    fig, ax = plt.subplots(figsize=(11, 7))
    ran = [c for c in cases if c["bytes"]]
    series = [("polyred", lambda c: polyred_us(c))] + [(PEER_TITLE[k], (lambda k: lambda c: valid_us(c["peers"].get(k)))(k))
                                                       for k in PEERS]
    for label, get in series:
        pts = [(c["bytes"], c["bytes"] / get(c) / 1e3) for c in ran if get(c)]
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=14 if label != "polyred" else 24,
                       label=label, alpha=0.8 if label == "polyred" else 0.5)
    limit = sorted((c["bytes"], c["bytes"] / c["limit_us"] / 1e3) for c in ran if c.get("limit_us"))
    if limit:  # the streaming meter over each case's bytes (bench/stream_meter.cu)
        ax.plot([p[0] for p in limit], [p[1] for p in limit], color="black", linewidth=1, marker=".",
                label="practical limit (streaming meter)")
    if ceil["read_ceiling_GBps"] and ran:
        ax.axhline(ceil["read_ceiling_GBps"], color="red", linestyle="--", label="read ceiling")
        lo, hi = min(c["bytes"] for c in ran), max(c["bytes"] for c in ran)
        xs = [lo * (hi / lo) ** (i / 100) for i in range(101)]
        sol = [x / (x / (ceil["read_ceiling_GBps"] * 1e3) + ceil["launch_floor_us"]) / 1e3 for x in xs]
        ax.plot(xs, sol, color="gray", label="SoL (ceiling + launch floor)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("bytes moved (inputs + outputs)")
    ax.set_ylabel("achieved GB/s")
    ax.set_title("Achieved bandwidth against size")
    ax.legend()
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    path = os.path.join(outdir, "bandwidth.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ---------------------------------------------------------------- summary and driver


def summary(cases, g):
    """A short table: per group, counts and geometric-mean speedups."""
    lines = [f"{'group':8} {'files':>5} {'timed':>5} {'1-kernel':>8} {'SoL med':>7} "
             + " ".join(f"{'x ' + PEER_TITLE[k]:>10}" for k in PEERS)]
    for grp in ("single", "table2", "corpus"):
        cs = [c for c in cases if c["group"] == grp and c["in_scope"]]
        if not cs:
            continue
        timed = [c for c in cs if polyred_us(c)]
        sol = [c["sol_eff"] for c in timed if c.get("sol_eff")]
        gms = [geomean([c["speedup"].get(k) for c in timed]) for k in PEERS]
        lines.append(f"{grp:8} {len(cs):>5} {len(timed):>5} {g['one_kernel'][grp][0]:>8} "
                     + f"{(f'{statistics.median(sol):.0%}' if sol else '-'):>7} "
                     + " ".join(f"{(f'{x:.2f}x' if x else '-'):>10}" for x in gms))
    return lines


def build(work, outdir, require_plots=False, quiet=False):
    inp = Inputs(work)
    ceil = ceilings(inp)
    cases = [derive(c, ceil) for c in merge(inp)]
    nets = network_totals(cases)
    g = gaps(cases, nets, inp.compile_times)
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "tables.md"), "w") as f:
        f.write(markdown(inp, cases, nets, ceil, g))
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump(dict(env=inp.env, ceilings=ceil, cases=cases, networks=nets,
                       compile_times=inp.compile_times, targets=TARGETS,
                       gaps=gap_lines(g)), f, indent=1, default=str)
    written = plots(cases, nets, ceil, outdir, require_plots)
    if not quiet:
        print("\n".join(["", "== gaps to the issue-5 targets =="] + gap_lines(g)
                        + ["", "== summary (geometric means over timed cases) =="] + summary(cases, g)))
        print(f"\nreport: wrote {outdir}/tables.md, results.json" + "".join(", " + os.path.basename(p) for p in written))
    return dict(cases=cases, nets=nets, gaps=g, ceil=ceil, plots=written)


# ---------------------------------------------------------------- self-test


def selftest():
    """Builds the report from bench/sample/ and checks its figures."""
    sample = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample")
    out = tempfile.mkdtemp(prefix="polyred-report-")
    try:
        r = build(sample, out, quiet=True)
        md = open(os.path.join(out, "tables.md")).read()
        res = json.load(open(os.path.join(out, "results.json")))
        check_selftest(r, md, res)
        print(f"report selftest: passed ({len(r['cases'])} cases, plots: "
              f"{', '.join(os.path.basename(p) for p in r['plots']) or 'skipped, no matplotlib'})")
    finally:
        shutil.rmtree(out)
    return 0


def expect(cond, what):
    if not cond:
        raise AssertionError("report selftest: " + what)


def check_selftest(r, md, res):
    ceil, cases = r["ceil"], {c["key"]: c for c in r["cases"]}
    expect(ceil["read_ceiling_GBps"] == 3100.0 and ceil["launch_floor_us"] == 4.2, "best ceiling and floor")
    big = cases["single/sum_f32_x_1048576x512"]
    # 2147483648 + 4194304 bytes in 700 us: 3073.8 GB/s; SoL = 2151677952 / 3.1e6 + 4.2 us.
    expect(abs(big["GBps"] - 3073.83) < 0.01, f"GB/s {big['GBps']}")
    expect(abs(big["sol_eff"] - (2151677952 / 3.1e6 + 4.2) / 700) < 1e-9, "SoL efficiency")
    expect(big["fastest_peer"] == "cub" and abs(big["speedup"]["cub"] - 690 / 700) < 1e-9, "fastest peer, speedup")
    expect("eager" not in big["speedup"], "a WRONG peer result is not a time")
    g = r["gaps"]
    expect([c["key"] for c in g["slower_1mb"]] == ["single/sum_f32_x_1048576x512"], "slower than the fastest peer")
    expect([c["key"] for c in g["tiny_slower"]] == ["table2/sg01_cast_chain_sum"], "tiny and slower")
    expect([c["key"] for c in g["sol_10mb"]] == ["single/max_f16_y_21128x768"], "below 90% SoL")
    expect([c["key"] for c in g["ceiling_256mb"]] == [], "256 MB below 95% of the ceiling")
    expect(abs(g["table2_geomean_compile"] - math.sqrt(4.5 / 4.7 * 30.0 / 21.0)) < 1e-9, "Table 2 geomean")
    expect(g["peer_wrong"] == [("single/sum_f32_x_1048576x512", "eager")], "peer WRONG list")
    expect(g["polyred_wrong"] == ["corpus/lenet/level0/b.info"], "polyred WRONG list")
    net = {n["net"]: n for n in r["nets"]}["lenet"]
    expect(net["files"] == 2 and net["excluded"] == 1 and not net["complete"]["polyred"], "network counts")
    expect(abs(net["totals"]["compile"] - 25.0) < 1e-9 and abs(net["speedup"]["compile"] - 1.2) < 1e-9,
           "network total and paired speedup")
    expect(g["one_kernel"]["table2"] == (1, 2), "one-kernel count")
    expect(g["compile"]["files"] == 2 and abs(g["compile"]["cold_median_s"] - 0.15) < 1e-9, "compile times")
    expect(g["torch_compile"]["files"] == 1 and g["torch_compile"]["median_s"] == 3.2, "torch.compile times")
    expect(cases["table2/sg01_cast_chain_sum"]["polyred_torch"]["us"] == 3.6, "polyred on the peers' tensors")
    for text in ("| 3.60 | 1.25x |", "## Single operators", "## Table 2 sub-graphs", "## Corpus networks", "| sum_f32_x_1048576x512 |",
                 "WRONG (600.0)", "H100", "580.159.04", "3100 GB/s", "Fused_MatMul_x.info: out_of_scope: op 'MatMul #0'", "10.00 (1 missing)", "| 2147 | 1 | 700.0 | 3074 | 100% |",
                 "Table 2 geometric-mean speedup over torch.compile: 1.17x", "network lenet: total speedup over torch.compile 1.20x (INCOMPLETE"):
        expect(text in md, f"tables.md lacks {text!r}")
    expect(len(res["cases"]) == len(r["cases"]) and res["ceilings"]["read_ceiling_GBps"] == 3100.0, "results.json")
    for p in r["plots"]:
        expect(os.path.getsize(p) > 10000, f"plot {p} is suspiciously small")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--work", help="folder with manifest.json, polyred.json, torch.jsonl, cub.json, ...")
    p.add_argument("--out", help="output folder")
    p.add_argument("--require-plots", action="store_true")
    p.add_argument("--selftest", action="store_true")
    a = p.parse_args(argv)
    if a.selftest:
        return selftest()
    if not a.work or not a.out:
        p.error("--work and --out are required (or --selftest)")
    build(a.work, a.out, a.require_plots)
    return 0


if __name__ == "__main__":
    sys.exit(main())
