#!/usr/bin/env python3
"""An LLM inference loop over random prompt lengths: does anything compile after
warm-up, and what does each forward cost (issue "Dynamic shapes", its inference
target).

    PYTHONPATH=python POLYRED_LIBRARY=build/src/libpolyred.so \
        python3 bench/inference_loop.py [--layers 4] [--prompts 24] [--impls eager,compile,polyred]

The Llama-shaped model of bench/models.py (hidden 2048, 16 heads, 4 KV heads,
intermediate 5632, vocab 32000; config-built, random weights, bf16, eval), `--layers`
of its layers. Prompts of one sequence each, lengths drawn at random from 16..2048
(fixed seed); the first two lengths are the warm-up (torch.compile makes the sizes
symbolic at the second). Per implementation: Dynamo graphs compiled during and after
the warm-up, polyred programs compiled (symbolic ones, and per-length ones where a
region could not be symbolic), the forward time per prompt (CUDA events around one
forward, median over the prompts after warm-up) and the largest difference of the
logits from eager's, relative to their scale.
"""
import argparse
import random
import statistics
import time

import torch


def build(layers):
    import transformers
    config = transformers.LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=layers,
                                      num_attention_heads=16, num_key_value_heads=4, vocab_size=32000,
                                      max_position_embeddings=4096)
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config).to("cuda", torch.bfloat16).eval()


class Counting:
    def __init__(self, backend):
        self.backend, self.graphs = backend, 0

    def __call__(self, gm, example_inputs, **kwargs):
        self.graphs += 1
        return self.backend(gm, example_inputs, **kwargs)


def polyred_programs():
    """(symbolic programs, per-length programs) the backend's symbolic regions compiled."""
    from polyred.dynamo import region_op
    counts = [r.program_counts() for r in region_op._regions.values() if isinstance(r, region_op._SymbolicRegion)]
    return sum(c[0] for c in counts), sum(c[1] for c in counts)


def run(impl, model, lengths, reference):
    torch._dynamo.reset()
    if impl == "eager":
        fn, counting = model, None
    else:
        if impl == "polyred":
            import polyred
            backend = polyred.backend
        else:
            from torch._inductor.compile_fx import compile_fx
            backend = compile_fx
        counting = Counting(backend)
        fn = torch.compile(model, backend=counting)
    times, errors, graphs_after_warm_up = [], [], None
    t0 = time.time()
    with torch.no_grad():
        for k, seq in enumerate(lengths):
            ids = torch.randint(0, 32000, (1, seq), device="cuda", generator=torch.Generator("cuda").manual_seed(seq))
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            logits = fn(input_ids=ids).logits
            b.record()
            torch.cuda.synchronize()
            if k >= 2:
                times.append(a.elapsed_time(b) * 1000)
            else:
                graphs_after_warm_up = counting.graphs if counting else 0
            want = reference[k]
            errors.append(float((logits.float() - want).abs().max()) / max(float(want.abs().max()), 1e-6))
    total_s = time.time() - t0
    graphs = counting.graphs if counting else 0
    row = dict(impl=impl, median_us=statistics.median(times), total_s=total_s, graphs_warm_up=graphs_after_warm_up,
               graphs_after=graphs - graphs_after_warm_up, max_error=max(errors))
    if impl == "polyred":
        row["symbolic_programs"], row["per_length_programs"] = polyred_programs()
    return row


def eager_logits(model, lengths):
    out = []
    with torch.no_grad():
        for seq in lengths:
            ids = torch.randint(0, 32000, (1, seq), device="cuda", generator=torch.Generator("cuda").manual_seed(seq))
            out.append(model(input_ids=ids).logits.float())
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--prompts", type=int, default=24)
    parser.add_argument("--impls", default="eager,compile,polyred")
    args = parser.parse_args()
    rng = random.Random(0)
    lengths = [rng.randrange(16, 2049) for _ in range(args.prompts)]
    p = torch.cuda.get_device_properties(0)
    print(f"{p.name}, torch {torch.__version__}, {time.strftime('%Y-%m-%d %H:%M')}; Llama-shaped, {args.layers} layers, "
          f"bf16; {args.prompts} prompts, lengths {lengths}")
    model = build(args.layers)
    reference = eager_logits(model, lengths)
    print("| impl | forward us (median after warm-up) | Dynamo graphs (warm-up / after) | polyred programs "
          "(symbolic / per length) | wall s | max error vs eager |")
    print("|---|---|---|---|---|---|")
    for impl in args.impls.split(","):
        r = run(impl, model, lengths, reference)
        programs = f"{r.get('symbolic_programs', '-')} / {r.get('per_length_programs', '-')}"
        print(f"| {impl} | {r['median_us']:.0f} | {r['graphs_warm_up']} / {r['graphs_after']} | {programs} "
              f"| {r['total_s']:.1f} | {r['max_error']:.1e} |", flush=True)


if __name__ == "__main__":
    main()
