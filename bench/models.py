"""End-to-end model benchmark (GPU): training steps and inference of real models under
eager PyTorch, torch.compile (default and max-autotune-no-cudagraphs), the polyred
backend, and eager patched with Liger-Kernel where Liger supports the model.

    python3 bench/models.py --models gpt2,llama --impls eager,compile,polyred,liger --out results.jsonl

Models are built from configs with random weights (no download), trained with AdamW
under bf16 autocast (ResNet-50 channels-last): gpt2 (GPT-2 small, seq 1024), llama
(a Llama-architecture model with the shapes of a 1B one: hidden 2048, 16 layers by
default, --llama-layers to change it; vocab 32000, or 128256 with --vocab),
bert (BERT-base, seq 512), resnet50. Per model and implementation, one JSON line:
median training-step time over --steps steps after --warmup (CUDA events around a
whole step: forward, backward, optimizer), the host's time to issue a step (near the
step time: the host, not the GPU, sets the pace), tokens (images) per second, median
inference forward time, peak memory, compile time (the first steps' wall time less
the steady steps'), and from one profiled step the polyred kernels per step, their
share of the GPU time and the GPU's busy time (the kernels' sum). Every implementation starts from the same weights and batch;
the first step's loss is printed beside eager's (a wrong region shows there).
"""
import argparse
import copy
import json
import statistics
import sys
import time


def build(name, args, torch):
    import transformers
    if name == "gpt2":
        cfg = transformers.GPT2Config(resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
        return transformers.GPT2LMHeadModel(cfg), ("tokens", args.batch or 8, args.seq or 1024, cfg.vocab_size)
    if name == "llama":
        cfg = transformers.LlamaConfig(hidden_size=2048, intermediate_size=8192, num_hidden_layers=args.llama_layers,
                                       num_attention_heads=32, num_key_value_heads=8, vocab_size=args.vocab,
                                       max_position_embeddings=4096)
        return transformers.LlamaForCausalLM(cfg), ("tokens", args.batch or 4, args.seq or 1024, cfg.vocab_size)
    if name == "bert":
        cfg = transformers.BertConfig(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
        return transformers.BertForMaskedLM(cfg), ("tokens", args.batch or 16, args.seq or 512, cfg.vocab_size)
    if name == "resnet50":
        import torchvision
        return torchvision.models.resnet50(), ("images", args.batch or 64, 224, 1000)
    raise SystemExit(f"unknown model {name}")


def make_batch(kind, torch):
    what, batch, size, classes = kind
    g = torch.Generator(device="cuda").manual_seed(0)
    if what == "tokens":
        ids = torch.randint(0, classes, (batch, size), device="cuda", generator=g)
        return {"input_ids": ids, "labels": ids.clone()}, batch * size
    x = torch.randn(batch, 3, size, size, device="cuda", generator=g).to(memory_format=torch.channels_last)
    return {"x": x, "labels": torch.randint(0, classes, (batch,), device="cuda", generator=g)}, batch


def loss_of(model, batch, kind, torch):
    if kind[0] == "tokens":
        return model(**batch).loss
    return torch.nn.functional.cross_entropy(model(batch["x"]), batch["labels"])


def prepare(impl, model, torch):
    if impl == "eager":
        return model
    if impl == "compile":
        return torch.compile(model)
    if impl == "compile-max":
        return torch.compile(model, mode="max-autotune-no-cudagraphs")
    if impl == "polyred":
        import polyred
        return torch.compile(model, backend=polyred.backend)
    if impl == "liger":
        from liger_kernel.transformers import _apply_liger_kernel_to_instance
        _apply_liger_kernel_to_instance(model=model)
        return model
    raise SystemExit(f"unknown implementation {impl}")


def profile_step(step, torch):
    """The CUDA kernels of one step: [(name, launches, GPU us)], longest first."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()

    def gpu_us(e):  # device_time_total from torch 2.4 on; cuda_time_total before
        return e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total

    rows = [(e.key, e.count, gpu_us(e)) for e in prof.key_averages() if gpu_us(e) > 0]
    return sorted(rows, key=lambda r: -r[2])


def polyred_share(kernels):
    """(polyred kernel launches, all launches, polyred's share of the GPU time)."""
    total = sum(us for _, _, us in kernels)
    ours = [(count, us) for name, count, us in kernels if name.startswith("polyred_")]
    return (sum(c for c, _ in ours), sum(c for _, c, _ in kernels),
            sum(us for _, us in ours) / total if total else 0.0)


def top_kernels(kernels, top=15):
    """The kernels that hold the step, longest first."""
    return [(name[:90], count, round(us, 1)) for name, count, us in kernels[:top]]


# Liger-Kernel patches these Hugging Face architectures (its apply_liger_kernel_to_*).
LIGER_MODELS = {"llama"}


def run_one(name, impl, args, torch):
    if impl == "liger" and name not in LIGER_MODELS:
        return {"model": name, "impl": impl, "skipped": "Liger-Kernel has no patch for this architecture"}
    torch.manual_seed(0)
    base, kind = build(name, args, torch)
    model = copy.deepcopy(base).cuda()
    if kind[0] == "images":
        model = model.to(memory_format=torch.channels_last)
    batch, units = make_batch(kind, torch)
    runner = prepare(impl, model, torch)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_of(runner, batch, kind, torch)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    first_loss = step().item()
    for _ in range(args.warmup - 1):
        step()
    torch.cuda.synchronize()
    warm_wall = time.perf_counter() - t0
    times, host = [], []
    for _ in range(args.steps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        t = time.perf_counter()
        step()
        host.append((time.perf_counter() - t) * 1e3)  # the host's time to issue the step
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    train_ms = statistics.median(times)
    peak = torch.cuda.max_memory_allocated()
    kernels = profile_step(step, torch) if impl == "polyred" or args.profile else []
    ours, launches, share = polyred_share(kernels) if impl == "polyred" else (0, 0, 0.0)
    infer = []
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for k in range(args.warmup + args.steps):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            loss_of(runner, batch, kind, torch)
            b.record()
            b.synchronize()
            if k >= args.warmup:
                infer.append(a.elapsed_time(b))
    return {"model": name, "impl": impl, "train_step_ms": round(train_ms, 3),
            "units_per_s": round(units / train_ms * 1e3, 1), "unit": kind[0],
            "inference_ms": round(statistics.median(infer), 3), "peak_mib": round(peak / 2**20, 1),
            "compile_s": round(max(warm_wall - args.warmup * train_ms / 1e3, 0.0), 2), "first_loss": first_loss,
            "polyred_kernels_per_step": ours, "kernels_per_step": launches, "polyred_share": round(share, 4),
            "host_issue_ms": round(statistics.median(host), 3),
            **({"gpu_busy_ms": round(sum(us for _, _, us in kernels) / 1e3, 3)} if kernels else {}),
            "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            **({"top_kernels": top_kernels(kernels)} if args.profile else {})}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="gpt2")
    p.add_argument("--impls", default="eager,compile,polyred")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--batch", type=int, default=0)
    p.add_argument("--seq", type=int, default=0)
    p.add_argument("--llama-layers", type=int, default=16)
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--out", default="")
    p.add_argument("--profile", action="store_true", help="also the 15 kernels that hold a training step")
    args = p.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("models: no CUDA GPU; nothing measured", file=sys.stderr)
        return 3
    out = open(args.out, "a") if args.out else None
    for name in args.models.split(","):
        for impl in args.impls.split(","):
            try:
                r = run_one(name, impl, args, torch)
            except Exception as e:  # one implementation failing must not hide the others
                r = {"model": name, "impl": impl, "error": f"{type(e).__name__}: {e}"[:2000]}
            torch._dynamo.reset()
            torch.cuda.empty_cache()
            line = json.dumps(r)
            print(line, flush=True)
            if out:
                out.write(line + "\n")
                out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
