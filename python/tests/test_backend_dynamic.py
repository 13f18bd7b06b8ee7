"""The torch.compile backend with symbolic sizes (dynamic=True, and the automatic
dynamic shapes torch.compile turns to after a second size), on the CPU target.

Each test compares with eager PyTorch at every size (float32 within rtol 1e-4 / atol
1e-5: polyred's reductions add in another order than ATen's), counts the graphs Dynamo
handed the backend (one for every size is the point), and checks that polyred's
symbolic regions served the sizes (a test that passed with the regions left to
PyTorch would prove nothing)."""
import pytest

torch = pytest.importorskip("torch", minversion="2.5")

import polyred  # noqa: E402
from polyred.dynamo import compile_log, region_op  # noqa: E402
from polyred.errors import BadInputError  # noqa: E402
from polyred.lowering import sizes  # noqa: E402

F32 = dict(rtol=1e-4, atol=1e-5)


@pytest.fixture(autouse=True)
def strict(monkeypatch):
    monkeypatch.setenv("POLYRED_STRICT", "1")
    with torch._inductor.config.patch(force_disable_caches=True):
        yield


class Counting:
    """The backend, counting the graphs Dynamo gives it."""

    def __init__(self, **options):
        self.graphs = 0
        self.backend = polyred.backend.with_options(rest="eager", **options)

    def __call__(self, gm, example_inputs, **kwargs):
        self.graphs += 1
        return self.backend(gm, example_inputs, **kwargs)


def compiled(fn, **compile_options):
    torch._dynamo.reset()
    compile_log.clear()
    region_op._regions.clear()  # what the checks below count: this test's regions alone
    counting = Counting()
    return torch.compile(fn, backend=counting, **compile_options), counting


def symbolic_instances():
    """{region name: the symbol values it was compiled for} of the symbolic regions run."""
    return {r.name: {key[1] for key in r._instances} for r in region_op._regions.values()
            if isinstance(r, region_op._SymbolicRegion)}


def taken(kind):
    return [ops for r in compile_log.records() if r.graph.startswith(kind) for ops, _ in r.taken]


def layer_norm_then_softmax(x, w):
    y = torch.nn.functional.layer_norm(x, (x.shape[-1],), w)
    return y.view(-1, x.shape[-1]).softmax(-1) * 2


def check_training_step(fn, compiled_fn, inputs):
    xs = [x.detach().clone().requires_grad_() for x in inputs]
    ys = [x.detach().clone().requires_grad_() for x in inputs]
    got, want = compiled_fn(*xs), fn(*ys)
    torch.testing.assert_close(got, want, **F32)
    g = torch.randn_like(want)
    got.backward(g)
    want.backward(g)
    for x, y in zip(xs, ys):
        torch.testing.assert_close(x.grad, y.grad, rtol=1e-4, atol=1e-4)


def test_one_graph_serves_every_sequence_length_forward_and_backward():
    fn, counting = compiled(layer_norm_then_softmax, dynamic=True)
    lengths = (7, 13, 2, 64, 31)
    w = torch.randn(48)
    for seq in lengths:
        check_training_step(layer_norm_then_softmax, fn, [torch.randn(3, seq, 48), w])
    assert counting.graphs == 1
    assert taken("forward") and taken("backward")
    served = symbolic_instances()
    assert served and all(len(values) == len(lengths) for values in served.values()), served


def test_a_new_size_sets_every_node_as_running_the_ops_on_fake_tensors_would():
    # A symbolic region's template carries each op's result sizes as the trace gave them;
    # at a new size they are evaluated instead of running the ops on fake tensors. Both
    # must give every node the same shape, strides and dtype.
    from polyred.lowering.template import instantiate

    fn, _ = compiled(layer_norm_then_softmax, dynamic=True)
    w = torch.randn(48)
    for seq in (7, 13):
        check_training_step(layer_norm_then_softmax, fn, [torch.randn(3, seq, 48), w])
    regions = [r for r in region_op._regions.values() if isinstance(r, region_op._SymbolicRegion)]
    assert regions

    def metas(nodes):
        return [[(tuple(v.shape), v.stride(), v.dtype) for v in (n.meta["val"] if isinstance(n.meta["val"], tuple)
                                                                 else (n.meta["val"],))] for n in nodes]

    for region in regions:
        assert all(op["val"] is not None for op in region.template["ops"]), region.name
        values = {s: 29 for s in region.symbols}
        _, from_specs, _, _ = instantiate(region.template, values, torch.device("cpu"))
        traced = {**region.template, "ops": [{**op, "val": None} for op in region.template["ops"]]}
        _, from_fakes, _, _ = instantiate(traced, values, torch.device("cpu"))
        assert metas(from_specs) == metas(from_fakes), region.name


def test_automatic_dynamic_after_a_second_size_compiles_no_more():
    fn, counting = compiled(layer_norm_then_softmax)
    w = torch.randn(32)
    for seq in (5, 9, 17, 33):
        check_training_step(layer_norm_then_softmax, fn, [torch.randn(2, seq, 32), w])
    assert counting.graphs == 2  # the first size static, then one symbolic graph for the rest
    assert any(len(values) == 3 for values in symbolic_instances().values())


def test_reductions_over_a_symbolic_axis_and_views_of_products():
    def fn(x, t):
        rows = x.reshape(-1, x.shape[-1])
        loss = torch.nn.functional.cross_entropy(rows, t.reshape(-1))
        return loss + x.mean(dim=1).sum() + x.var(dim=(0, 1)).sum()

    dynamic_fn, counting = compiled(fn, dynamic=True)
    for seq in (3, 10, 25):
        x, t = torch.randn(2, seq, 40), torch.randint(0, 40, (2, seq))
        xs, xe = x.clone().requires_grad_(), x.clone().requires_grad_()
        got, want = dynamic_fn(xs, t), fn(xe, t)
        torch.testing.assert_close(got, want, **F32)
        got.backward()
        want.backward()
        torch.testing.assert_close(xs.grad, xe.grad, rtol=1e-4, atol=1e-6)
    assert counting.graphs == 1
    assert symbolic_instances()


def test_inductor_runs_the_rest_around_symbolic_regions():
    torch._dynamo.reset()
    compile_log.clear()
    fn = torch.compile(layer_norm_then_softmax, backend=polyred.backend, dynamic=True)
    w = torch.randn(16)
    for seq in (4, 11):
        check_training_step(layer_norm_then_softmax, fn, [torch.randn(2, seq, 16), w])
    assert taken("forward") and taken("backward")


def test_a_tiny_gpt2_over_two_sequence_lengths():
    transformers = pytest.importorskip("transformers")
    import copy
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=64, n_positions=64,
                                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    eager = transformers.GPT2LMHeadModel(config)
    model = copy.deepcopy(eager)
    forward, counting = compiled(model, dynamic=True)
    first_length_graphs = None
    for seq in (9, 20, 33):
        ids = torch.randint(0, 64, (2, seq), generator=torch.Generator().manual_seed(seq))
        for m in (eager, model):
            m.zero_grad(set_to_none=True)
        loss_e = eager(input_ids=ids, labels=ids).loss
        loss_c = forward(input_ids=ids, labels=ids).loss
        torch.testing.assert_close(loss_c, loss_e, rtol=1e-5, atol=1e-6)
        loss_e.backward()
        loss_c.backward()
        for (name, pe), (_, pc) in zip(eager.named_parameters(), model.named_parameters()):
            error = (pc.grad - pe.grad).norm().item()
            assert error <= 1e-4 * max(pe.grad.norm().item(), 1e-6), f"{name} at {seq}: {error}"
        first_length_graphs = first_length_graphs or counting.graphs
    # Hugging Face's model breaks its graph where it logs (plain torch.compile too): the
    # graphs of the first length serve the others, nothing is compiled again.
    assert counting.graphs == first_length_graphs
    assert taken("forward") and taken("backward")


# ---- one symbolic polyred program for every value of a size --------------------------

def served_by_family(name_prefix):
    """{region name: (families, the distinct kernels its instances run on)}."""
    out = {}
    for r in region_op._regions.values():
        if isinstance(r, region_op._SymbolicRegion) and r.name.startswith(name_prefix):
            kernels = {id(k) for inst in r._instances.values() if isinstance(inst, region_op._Region)
                       for k in inst._kernels.values()}
            out[r.name] = (len(r._families), len(kernels))
    return out


def layer_norm_scaled(x, w):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w) * 2


@pytest.mark.parametrize("function", [layer_norm_scaled, layer_norm_then_softmax])  # 1 kernel; 2 and temporaries
def test_one_compiled_program_serves_every_sequence_length(function):
    fn, counting = compiled(function, dynamic=True)
    w = torch.randn(40)
    lengths = (7, 13, 2, 64, 31, 9)
    with torch.no_grad():
        for seq in lengths:
            x = torch.randn(3, seq, 40)
            torch.testing.assert_close(fn(x, w), function(x, w), **F32)
    assert counting.graphs == 1
    served = served_by_family("inference")
    # dynamic=True makes every size a symbol; the first length is compiled on its own, the
    # second shows that only the sequence length changes: one program serves it and the rest.
    assert served and all(v == (1, 2) for v in served.values()), served
    assert all(len(values) == len(lengths) for values in symbolic_instances().values())


def test_automatic_dynamic_makes_the_symbolic_program_at_trace_time():
    fn, counting = compiled(layer_norm_scaled)
    w = torch.randn(24)
    with torch.no_grad():
        for seq in (5, 9, 17, 33):
            x = torch.randn(2, seq, 24)
            torch.testing.assert_close(fn(x, w), layer_norm_scaled(x, w), **F32)
    assert counting.graphs == 2  # the first size static, then one symbolic graph for the rest
    served = served_by_family("inference")
    assert served and all(v == (1, 1) for v in served.values()), served  # not one per-size compile


def test_a_region_polyred_cannot_make_symbolic_is_compiled_per_size(caplog):
    # The backward's weight gradient sums over the rows: a symbol in a reduced axis.
    fn, _ = compiled(layer_norm_scaled, dynamic=True)
    w = torch.randn(16)
    with caplog.at_level("INFO", logger="polyred.backend"):
        for seq in (4, 6, 10):
            check_training_step(layer_norm_scaled, fn, [torch.randn(2, seq, 16), w])
    backward = served_by_family("backward")
    assert backward and all(families == 0 and kernels == 3 for families, kernels in backward.values()), backward
    assert "compiled per value of" in caplog.text and "reduced axis" in caplog.text


def test_llama_inference_over_random_prompt_lengths_compiles_nothing_after_warm_up():
    transformers = pytest.importorskip("transformers")
    import random
    torch.manual_seed(0)
    config = transformers.LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, vocab_size=256,
                                      max_position_embeddings=512)
    model = transformers.LlamaForCausalLM(config).eval()
    fn, counting = compiled(model)  # automatic dynamic: the second length makes the sizes symbolic
    rng = random.Random(0)
    lengths = [rng.randrange(2, 300) for _ in range(7)]
    with torch.no_grad():
        for k, seq in enumerate(lengths):
            ids = torch.randint(0, 256, (1, seq), generator=torch.Generator().manual_seed(seq))
            torch.testing.assert_close(fn(input_ids=ids).logits, model(input_ids=ids).logits, **F32)
            if k == 1:
                warm = counting.graphs
    assert counting.graphs == warm == 2
    served = served_by_family("inference")
    # The embedding with its first RMSNorm, each layer's residual add and RMSNorm, the
    # final norm: every region one program for all lengths, and no per-length compile.
    assert len(served) >= 3 and all(v == (1, 1) for v in served.values()), served


# ---- the size expressions a program text carries ----------------------------------

def test_size_expressions_evaluate_with_ints_and_torch_functions():
    assert sizes.evaluate("2*s0 - 1", {"s0": 5}) == 9
    assert sizes.evaluate("s27*s77", {"s27": 3, "s77": 4}) == 12
    assert sizes.evaluate("FloorDiv(s0, 2) + CeilDiv(s0, 4)", {"s0": 9}) == 4 + 3
    assert sizes.evaluate("ModularIndexing(s0, 2, 3) + Max(s0, 20) + Min(s0, 1)", {"s0": 9}) == 1 + 20 + 1
    assert sizes.evaluate(768, {}) == 768
    assert sizes.symbols_of("s1*s0 + 2") == {"s0", "s1"}


@pytest.mark.parametrize("text", ["__import__('os')", "s0.real", "lambda: 0", "s0 / 2", "[s0]", "f(s0)"])
def test_size_expressions_outside_the_language_are_refused(text):
    with pytest.raises(BadInputError):
        sizes.evaluate(text, {"s0": 1})


def test_a_size_without_a_value_is_named():
    with pytest.raises(BadInputError, match="s3"):
        sizes.evaluate("s3 + 1", {"s0": 1})
