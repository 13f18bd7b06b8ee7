"""The torch.compile backend inside DistributedDataParallel, on the CPU: two processes
(gloo), each compiling its model with polyred's regions on the CPU target, train a
tiny GPT-2 on halves of a global batch; after three SGD steps every parameter equals
the one of eager single-process training on the whole batch (float32, within 1e-4 of
each tensor's norm: the gradients' all-reduce and polyred's reductions add in other
orders). The model (2.4 MB of parameters) spans several 1 MB buckets, so that Dynamo's
DDP optimizer splits the graph at bucket boundaries and the backend compiles each
piece (torch requires buckets of at least its 1 MB first bucket under compile)."""
import os
import pickle

import pytest

torch = pytest.importorskip("torch", minversion="2.5")
transformers = pytest.importorskip("transformers")
dist = pytest.importorskip("torch.distributed")

STEPS, RANKS, LR = 3, 2, 0.1


def _model():
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=3, n_embd=128, n_head=4, vocab_size=64, n_positions=32,
                                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return transformers.GPT2LMHeadModel(config)


def _batches():
    g = torch.Generator().manual_seed(1)
    return [torch.randint(0, 64, (RANKS * 2, 12), generator=g) for _ in range(STEPS)]


def _train(model, batches, forward, rank=0, ranks=1):
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for ids in batches:
        local = ids.chunk(ranks)[rank]
        optimizer.zero_grad(set_to_none=True)
        loss = forward(input_ids=local, labels=local).loss
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def _rank(rank, init_file, out_dir):
    os.environ["POLYRED_STRICT"] = "1"
    import polyred
    from polyred.dynamo import compile_log
    from torch.nn.parallel import DistributedDataParallel

    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=RANKS)
    try:
        model = _model()
        ddp = DistributedDataParallel(model, bucket_cap_mb=1)
        forward = torch.compile(ddp, backend=polyred.backend.with_options(rest="eager"))
        losses = _train(model, _batches(), forward, rank, RANKS)
        taken = sum(len(r.taken) for r in compile_log.records())
        graphs = len({r.graph.split()[-1] for r in compile_log.records()})
        with open(os.path.join(out_dir, f"rank{rank}.pkl"), "wb") as f:
            pickle.dump({"losses": losses, "taken": taken, "graphs": graphs,
                         "state": {k: v.detach() for k, v in model.state_dict().items()}}, f)
    finally:
        dist.destroy_process_group()


def test_ddp_with_the_backend_trains_as_one_process_on_the_whole_batch(tmp_path):
    import torch.multiprocessing as mp

    mp.spawn(_rank, args=(str(tmp_path / "init"), str(tmp_path)), nprocs=RANKS, join=True)
    results = []
    for r in range(RANKS):
        with open(tmp_path / f"rank{r}.pkl", "rb") as f:
            results.append(pickle.load(f))

    reference = _model()
    whole = _train(reference, _batches(), reference)
    for rank, got in enumerate(results):
        assert got["taken"] > 0, f"rank {rank}: polyred took no region"
        assert got["graphs"] > 1, f"rank {rank}: the DDP optimizer did not split the graph"
        local = [sum(x) / RANKS for x in zip(*(r["losses"] for r in results))]
        for step, (a, b) in enumerate(zip(local, whole)):
            assert abs(a - b) <= 1e-5 * abs(b), f"step {step}: mean of the ranks' losses {a}, one process {b}"
        for name, want in reference.state_dict().items():
            error = (got["state"][name] - want).norm().item()
            assert error <= 1e-4 * max(want.norm().item(), 1e-6), f"rank {rank}, {name}: {error}"
