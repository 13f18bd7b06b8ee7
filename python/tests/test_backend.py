"""The torch.compile backend on the CPU: polyred's regions run on its CPU target (the
lowered kernels executed on the host), so these tests exercise the regions a GPU gets.

Every test compares with eager PyTorch on the same inputs -- outputs, and for training
every input's and parameter's gradient -- and checks from the compile log that
polyred took the regions the test is about (a test that passed with everything left
to PyTorch would prove nothing). Tolerances, stated once: float32 values of functions
agree within rtol 1e-4 / atol 1e-5 (polyred's reductions add in another order than
ATen's); a model's float32 loss within rtol 1e-5 and each gradient within 1e-4 of
its norm; bfloat16 autocast within 2e-2 of each tensor's norm (bf16 keeps 8 bits; the
order of additions moves the roundings)."""
import math
import warnings

import pytest

torch = pytest.importorskip("torch", minversion="2.5")

import polyred  # noqa: E402
from polyred.dynamo import compile_log  # noqa: E402

F32 = dict(rtol=1e-4, atol=1e-5)


@pytest.fixture(autouse=True)
def strict(monkeypatch):
    """A region that fails to compile is an error here, not a fallback; and every
    compile goes through the backend (no cached code), so the compile log shows it."""
    monkeypatch.setenv("POLYRED_STRICT", "1")
    with torch._inductor.config.patch(force_disable_caches=True):
        yield


def backend(**options):
    return polyred.backend.with_options(rest="eager", **options)


def compile_with(fn, **options):
    torch._dynamo.reset()
    compile_log.clear()
    return torch.compile(fn, backend=backend(**options), fullgraph=False)


def taken(kind=None):
    """Regions polyred took (in graphs of `kind`: forward, backward, inference)."""
    return [ops for r in compile_log.records() if kind is None or r.graph.startswith(kind) for ops, _ in r.taken]


def taken_ops(kind=None):
    return {op for ops in taken(kind) for op in ops}


def grads_of(fn, inputs, seed=0):
    """fn's outputs and the gradients of a fixed random projection of them."""
    xs = [x.detach().clone().requires_grad_(x.is_floating_point()) for x in inputs]
    outs = fn(*xs)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    g = torch.Generator().manual_seed(seed)
    loss = sum((o.float() * torch.randn(o.shape, generator=g)).sum() for o in outs if o.is_floating_point())
    loss.backward()
    return [o.detach() for o in outs], [x.grad for x in xs if x.requires_grad]


def assert_same_training(fn, inputs, **tolerance):
    tolerance = tolerance or F32
    want_out, want_grads = grads_of(fn, inputs)
    got_out, got_grads = grads_of(compile_with(fn), inputs)
    for got, want in zip(got_out + got_grads, want_out + want_grads):
        assert got.dtype == want.dtype and got.shape == want.shape
        torch.testing.assert_close(got, want, **tolerance)


def test_softmax_forward_and_backward_run_in_polyred():
    x = torch.randn(33, 257)
    assert_same_training(lambda x: torch.softmax(x, -1), [x])
    assert taken("forward") and taken("backward")
    assert "aten.amax.default" in taken_ops("forward")


def test_layer_norm_gradients_reduce_rows_and_columns():
    x, w, b = torch.randn(8, 100), torch.randn(100), torch.randn(100)
    assert_same_training(lambda x, w, b: torch.nn.functional.layer_norm(x, (100,), w, b, 1e-5), [x, w, b])
    assert "aten.var_mean.correction" in taken_ops("forward")
    assert "aten.sum.dim_IntList" in taken_ops("backward")


def test_rms_norm_as_hugging_face_writes_it():
    def rms_norm(x, weight):
        variance = x.float().pow(2).mean(-1, keepdim=True)
        h = x * torch.rsqrt(variance + 1e-6)
        return weight * h.to(x.dtype)

    assert_same_training(rms_norm, [torch.randn(4, 7, 64), torch.randn(64)])
    assert "aten.mean.dim" in taken_ops("forward")


def test_gelu_with_a_bias_gradient_column_sum():
    def mlp_tail(x, bias):
        return torch.nn.functional.gelu(x + bias)

    assert_same_training(mlp_tail, [torch.randn(64, 48), torch.randn(48)])
    assert "aten.sum.dim_IntList" in taken_ops("backward")


def test_cross_entropy_loss_and_its_gradient():
    logits, target = torch.randn(16, 50), torch.randint(0, 50, (16,))

    def loss(logits):
        return torch.nn.functional.cross_entropy(logits, target)

    assert_same_training(loss, [logits])
    assert "aten.gather.default" in taken_ops("forward")
    assert "aten.scatter.value" in taken_ops("backward")


def test_batch_norm_training_statistics():
    x = torch.randn(4, 3, 5, 5)
    w, b = torch.randn(3), torch.randn(3)

    def bn(x, w, b):
        return torch.nn.functional.batch_norm(x, torch.zeros(3), torch.ones(3), w, b, training=True)

    assert_same_training(bn, [x, w, b])
    assert "aten.var_mean.correction" in taken_ops("forward")


def test_dropout_masks_are_polyred_kernels_forward_and_backward():
    # torch's generator draws the random numbers (aten.rand stays out: polyred does not
    # reproduce its stream); the mask, its scaling and its use in the backward are
    # polyred's. The reference is the same aten graph run eagerly: with one seed both
    # draw the same numbers, so outputs and gradients must agree.
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd
    from torch._inductor.decomposition import select_decomp_table

    def fn(x, w):
        h = torch.nn.functional.dropout(torch.nn.functional.gelu(x @ w), p=0.3, training=True)
        return h, torch.nn.functional.layer_norm(h, (h.shape[-1],))

    inputs = [torch.randn(16, 24), torch.randn(24, 40)]
    torch.manual_seed(7)
    got_out, got_grads = grads_of(compile_with(fn), inputs)
    records = compile_log.records()
    torch._dynamo.reset()
    same_graph_eagerly = aot_autograd(fw_compiler=lambda gm, _: make_boxed_func(gm.forward),
                                      decompositions=select_decomp_table())
    torch.manual_seed(7)
    want_out, want_grads = grads_of(torch.compile(fn, backend=same_graph_eagerly), inputs)
    for got, want in zip(got_out + got_grads, want_out + want_grads):
        torch.testing.assert_close(got, want, **F32)
    assert 0.15 < float((got_out[0] == 0).float().mean()) < 0.45  # about p of the 640 values dropped
    forward_ops = {op for r in records if r.graph.startswith("forward") for ops, _ in r.taken for op in ops}
    assert forward_ops & {"aten.gt.Scalar", "aten.lt.Scalar"}, forward_ops  # the mask
    assert any(r.graph.startswith("backward") and r.taken for r in records)
    assert "aten.rand.default" in {op for r in records for (op, _) in r.ops_left_out}


def test_type_promotion_and_scalars_follow_torch():
    def f(x, mask, y):
        a = x.float() * mask                      # float32 * bfloat16 -> float32
        b = (y > 0.1).to(x.dtype) * 0.1           # a scalar not representable in bf16
        either = (y > 0) + (y < -1)               # bool + bool: or, in torch
        return (a.sum(-1), (x * 0.3).sum(0), b.sum(), (y.int() + 3).sum(-1), either.sum(-1),
                ((y > 0) * (y < 1)).any(-1))

    x = torch.randn(6, 40).to(torch.bfloat16)
    mask = (torch.rand(6, 40) > 0.3).to(torch.bfloat16)
    y = torch.randn(6, 40) * 4
    with torch.no_grad():
        want = f(x, mask, y)
        got = compile_with(f)(x, mask, y)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        torch.testing.assert_close(g, w, rtol=1e-2 if w.dtype == torch.bfloat16 else 1e-5, atol=1e-5)
    assert taken("inference")


def test_infinite_constants_as_attention_masks_write_them():
    def masked_softmax(x, keep):
        return torch.softmax(x.masked_fill(~keep, float("-inf")), -1) + torch.finfo(x.dtype).min * 0

    x, keep = torch.randn(4, 16), torch.rand(4, 16) > 0.3
    keep[:, 0] = True
    with torch.no_grad():
        torch.testing.assert_close(compile_with(masked_softmax)(x, keep), masked_softmax(x, keep), **F32)
    assert taken("inference")


def test_matrix_products_stay_out_with_their_reason():
    def f(x, w):
        return torch.softmax(x @ w, -1)

    assert_same_training(f, [torch.randn(8, 16), torch.randn(16, 24)])
    left = {op for r in compile_log.records() for (op, _reason) in r.ops_left_out}
    assert "aten.mm.default" in left
    reasons = {reason for r in compile_log.records() for (op, reason) in r.ops_left_out if op == "aten.mm.default"}
    assert reasons == {"no polyred lowering"}


def test_elementwise_only_regions_stay_with_the_rest():
    def f(x):
        return torch.sigmoid(x) * 2 + 1

    assert_same_training(f, [torch.randn(10, 10)])
    assert not taken()
    assert any("no reduction" in reason for r in compile_log.records() for _, reason in r.left)


def test_elementwise_work_beside_a_reduction_stays_with_the_rest():
    # torch's partitioner puts both sums and the unrelated exp-and-add in one region; the
    # exp-and-add, connected to no reduction, leaves it.
    def f(x, y, a, b):
        return x.sum(0), y.sum(0), torch.exp(a) + b

    assert_same_training(f, [torch.randn(8, 6), torch.randn(8, 5), torch.randn(7, 3), torch.randn(7, 3)])
    forward = [ops for ops in taken("forward")]
    assert len(forward) == 1 and forward[0].count("aten.sum.dim_IntList") == 2
    assert "aten.exp.default" not in forward[0] and "aten.add.Tensor" not in forward[0]
    assert any("aten.exp.default" in ops and "no reduction" in reason
               for r in compile_log.records() if r.graph.startswith("forward") for ops, reason in r.left)


def test_a_slice_the_region_reads_and_the_graph_returns_is_repeated_inside(monkeypatch):
    # The slice leaves the graph (an output) and feeds the softmax: outside the region it
    # stays a free view; inside, the region repeats it and reads `a` itself (before, the
    # region was left out: its output would have been the slice's rows with gaps).
    def f(a):
        s = a[:, :50]
        return torch.softmax(s, -1), s

    from polyred.dynamo import partition

    taken_regions = []
    find = partition.find_regions

    def spy(gm, device_filter=None):
        regions, refused = find(gm, device_filter)
        taken_regions.extend(r for r in regions if r.taken)
        return regions, refused

    monkeypatch.setattr(partition, "find_regions", spy)
    assert_same_training(f, [torch.randn(8, 64)])
    softmax = [r for r in taken_regions if "aten.amax.default" in r.ops()]
    assert len(softmax) == 1
    assert "aten.slice.Tensor" in softmax[0].ops()
    assert all(i.meta["val"].is_contiguous() for i in softmax[0].inputs)


def test_a_region_that_fails_to_compile_falls_back_with_a_warning(monkeypatch):
    from polyred.lowering import aten as lowering
    lowering.ensure_registered()
    amax = torch.ops.aten.amax.default

    def refuse(g, node, a):
        raise lowering.Unsupported("refused for the test")

    monkeypatch.setitem(lowering.LOWERINGS, amax, refuse)
    monkeypatch.delenv("POLYRED_STRICT")
    x = torch.randn(5, 9)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = compile_with(lambda x: torch.softmax(x, -1))(x)
    torch.testing.assert_close(got, torch.softmax(x, -1))
    assert any("refused for the test" in str(w.message) for w in caught)
    monkeypatch.setenv("POLYRED_STRICT", "1")
    with pytest.raises(Exception, match="refused for the test"):
        compile_with(lambda x: torch.softmax(x, -1))(x)


def test_verify_mode_catches_a_region_that_differs_from_eager(monkeypatch):
    from polyred.lowering import aten as lowering
    lowering.ensure_registered()
    exp = torch.ops.aten.exp.default
    monkeypatch.setitem(lowering.LOWERINGS, exp, lambda g, node, a: g.b.unary("neg", a["self"]))  # a wrong lowering
    monkeypatch.setenv("POLYRED_VERIFY", "1")
    with pytest.raises(Exception, match="differs from eager aten"):
        compile_with(lambda x: torch.softmax(x, -1))(torch.randn(4, 8))


def test_the_backend_is_registered_by_name():
    import polyred.dynamo
    polyred.dynamo.register()
    torch._dynamo.reset()
    compile_log.clear()
    x = torch.randn(4, 30)
    f = torch.compile(lambda x: x.sum(-1) * 2, backend="polyred", options={"rest": "eager"})
    torch.testing.assert_close(f(x), x.sum(-1) * 2)
    assert taken()


def test_an_installed_entry_point_is_left_to_torch_to_register(monkeypatch):
    """pip-installed, torch registers the backend from the entry point when it imports
    polyred: polyred registering itself then would make torch's registration a duplicate."""
    import polyred.dynamo
    from torch._dynamo.backends import registry
    monkeypatch.setattr(polyred.dynamo, "installed_entry_point", lambda: True)
    monkeypatch.delitem(registry._COMPILER_FNS, "polyred", raising=False)
    polyred.dynamo.register()
    assert "polyred" not in registry._COMPILER_FNS
    registry.register_backend(compiler_fn=polyred.dynamo.polyred_backend, name="polyred")  # torch's own step


def test_python_m_polyred_reports_what_a_bug_report_needs():
    import os
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "polyred"], capture_output=True, text=True, env=dict(os.environ),
                         check=True).stdout
    assert out.startswith(f"polyred {polyred.__version__} (C API ")
    for field in ("library: ", f"torch: {torch.__version__}", "GPU: ", "backend: "):
        assert field in out, out


def test_unknown_options_are_refused():
    with pytest.raises(polyred.BadInputError, match="unknown option"):
        polyred.backend.with_options(fast=True)


def test_plain_torch_compile_caches_never_stand_in_for_polyred(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))  # caches empty at the start

    def f(x, w):
        return torch.softmax(x, -1) * w

    x, w = torch.randn(16, 64), torch.randn(64)
    with torch._inductor.config.patch(force_disable_caches=False):
        torch._dynamo.reset()
        torch.compile(f)(x, w)                   # fills Inductor's and AOTAutograd's caches
        torch._dynamo.reset()
        compile_log.clear()
        torch.testing.assert_close(torch.compile(f, backend=polyred.backend)(x, w), f(x, w), **F32)
    assert taken(), "a cached plain Inductor compile was taken for polyred's"


def test_inductor_runs_the_rest():
    torch._dynamo.reset()
    compile_log.clear()
    f = torch.compile(lambda x, w: torch.softmax(x, -1) * w, backend=polyred.backend)
    x, w = torch.randn(16, 64), torch.randn(64)
    torch.testing.assert_close(f(x, w), torch.softmax(x, -1) * w, **F32)
    assert taken()


def test_polyred_compile_gains_autograd_through_the_backend():
    compile_log.clear()
    torch._dynamo.reset()
    f = polyred.compile(lambda x, w: torch.nn.functional.layer_norm(x, (32,), w))
    x, w = torch.randn(6, 32, requires_grad=True), torch.randn(32, requires_grad=True)
    y = f(x, w)
    assert y.grad_fn is not None
    y.pow(2).sum().backward()
    xe, we = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    torch.nn.functional.layer_norm(xe, (32,), we).pow(2).sum().backward()
    torch.testing.assert_close(x.grad, xe.grad, **F32)
    torch.testing.assert_close(w.grad, we.grad, **F32)
    assert taken("backward")


# ---- real models, built from configs with random weights (no download) -----------

transformers = pytest.importorskip("transformers")


def _hf_loss(model, batch):
    return model(**batch).loss


def _train_step_matches(model, batch, loss_of=_hf_loss, relative=1e-4):
    """Loss and every parameter's gradient of eager and compiled copies of `model`: the
    loss within rtol 1e-5, each gradient within `relative` of its norm (float32; a whole
    network's gradient moves by more than one element's tolerance when the order of a
    reduction's additions changes -- eager against its own decomposed graph, without
    polyred, differs by 1e-5 of the norm on ResNet-18)."""
    import copy
    eager = model
    compiled = copy.deepcopy(model)
    compiled_forward = compile_with(compiled)
    loss_e = loss_of(eager, batch)
    loss_c = loss_of(compiled_forward, batch)
    torch.testing.assert_close(loss_c, loss_e, rtol=1e-5, atol=1e-6)
    loss_e.backward()
    loss_c.backward()
    for (name, pe), (_, pc) in zip(eager.named_parameters(), compiled.named_parameters()):
        if pe.grad is None:
            assert pc.grad is None, name
            continue
        error = (pc.grad - pe.grad).norm().item()
        assert error <= relative * max(pe.grad.norm().item(), 1e-6), f"{name}: {error} of {pe.grad.norm().item()}"
    assert taken("forward") and taken("backward")


def _tokens(vocab, batch=2, seq=16):
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, vocab, (batch, seq), generator=g)
    return {"input_ids": ids, "labels": ids.clone()}


def test_gpt2_trains_like_eager():
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=128, n_positions=64,
                                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    _train_step_matches(transformers.GPT2LMHeadModel(config), _tokens(128))


def test_llama_trains_like_eager():
    torch.manual_seed(0)
    config = transformers.LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, vocab_size=128,
                                      max_position_embeddings=64)
    _train_step_matches(transformers.LlamaForCausalLM(config), _tokens(128))


def test_bert_trains_like_eager():
    torch.manual_seed(0)
    config = transformers.BertConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                     num_attention_heads=4, vocab_size=128, max_position_embeddings=64,
                                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    _train_step_matches(transformers.BertForMaskedLM(config), _tokens(128))


def test_resnet_with_batch_norm_in_training_mode_trains_like_eager():
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10)
    batch = {"x": torch.randn(4, 3, 64, 64), "labels": torch.tensor([1, 7, 3, 0])}

    def loss_of(m, b):
        return torch.nn.functional.cross_entropy(m(b["x"]), b["labels"])

    _train_step_matches(model, batch, loss_of)
    assert "aten.var_mean.correction" in taken_ops("forward")


def test_gpt2_under_bf16_autocast_is_within_bf16_tolerance():
    import copy
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=1, n_embd=64, n_head=4, vocab_size=128, n_positions=64,
                                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    eager = transformers.GPT2LMHeadModel(config)
    compiled = copy.deepcopy(eager)
    forward = compile_with(compiled)
    batch = _tokens(128)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss_e, loss_c = eager(**batch).loss, forward(**batch).loss
    assert abs(loss_c.item() - loss_e.item()) <= 2e-2 * abs(loss_e.item())
    loss_e.backward()
    loss_c.backward()
    for (name, pe), (_, pc) in zip(eager.named_parameters(), compiled.named_parameters()):
        err = (pc.grad.float() - pe.grad.float()).norm().item()
        assert err <= 2e-2 * max(pe.grad.float().norm().item(), 1e-6), name
    assert taken("forward") and taken("backward")
    assert not any(math.isnan(p.grad.float().sum().item()) for p in compiled.parameters())
