"""polyred as a torch.compile backend.

    model = torch.compile(model, backend="polyred")          # registered by name
    model = torch.compile(model, backend=polyred.backend)    # or the callable
    model = torch.compile(model, backend="polyred", options={"rest": "eager"})

(polyred.backend is this module's polyred_backend, importable without torch.)

Dynamo captures the model; AOTAutograd traces its forward and backward into aten
graphs (Inductor's decompositions); the partitioner (partition.py) finds the regions
polyred computes, each becomes one call of the region op (region_op.py), and the rest
of every graph runs through Inductor (`rest="inductor"`, the default) or eager aten
(`rest="eager"`). Options, through torch.compile's `options=` or `polyred.backend.with_options(...)`:

- deterministic (False): bitwise-reproducible reductions;
- rest ("inductor"): what runs everything polyred does not take;
- cpu ("polyred"): CPU tensors' regions run on polyred's CPU target; "rest" hands them
  to the rest as well;
- mode: torch.compile's mode for the rest ("reduce-overhead": CUDA graphs).

The compile log (compile_log.py) says what polyred took and why.
"""
import functools
import itertools

from . import compile_log

_OPTIONS = {"deterministic": False, "rest": "inductor", "cpu": "polyred"}
_graph_ids = itertools.count()


def _check_options(options):
    unknown = set(options) - set(_OPTIONS) - {"mode"}
    if unknown:
        from ..errors import BadInputError
        raise BadInputError(f"polyred backend: unknown option(s) {sorted(unknown)}; known: {sorted(_OPTIONS)}")
    if options.get("rest", "inductor") not in ("inductor", "eager"):
        from ..errors import BadInputError
        raise BadInputError(f"polyred backend: rest must be 'inductor' or 'eager', not {options['rest']!r}")
    if options.get("cpu", "polyred") not in ("polyred", "rest"):
        from ..errors import BadInputError
        raise BadInputError(f"polyred backend: cpu must be 'polyred' or 'rest', not {options['cpu']!r}")


def take_regions(gm, graph_name, options):
    """Replaces the regions polyred takes in gm (in place) and logs the decisions."""
    from .partition import find_regions
    from .rewrite import apply_regions

    device_filter = None if options["cpu"] == "polyred" else (lambda d: d != "cpu")
    regions, refused = find_regions(gm, device_filter)
    apply_regions(gm, regions, {"deterministic": bool(options["deterministic"])}, graph_name.replace(" ", "_"))
    compile_log.record(graph_name, regions, refused)
    return gm


def polyred_backend(gm, example_inputs, mode=None, options=None, name=None):
    """The Dynamo backend (what torch.compile(backend="polyred") calls)."""
    options = dict(options or {})
    _check_options(options)
    if mode is not None:
        options["mode"] = mode
    merged = {**_OPTIONS, **options}
    graph = next(_graph_ids)
    # Code from Inductor's or AOTAutograd's cache calls the region op without this
    # backend rewriting anything in this process: the op must exist first.
    from . import region_op  # noqa: F401
    if merged["rest"] == "eager":
        return _with_eager_rest(gm, example_inputs, merged, graph)
    return _with_inductor_rest(gm, example_inputs, merged, graph)


def with_options(**options):
    """The backend with options fixed: torch.compile(m, backend=polyred.backend.with_options(rest="eager"))."""
    _check_options(options)
    return functools.partial(polyred_backend, options=options)


def _graph_name(kind, graph):
    return f"{kind} {graph}"


def _with_inductor_rest(gm, example_inputs, options, graph):
    from torch._inductor.compile_fx import compile_fx, compile_fx_inner

    def inner(gm, example_inputs, **kwargs):
        kind = "backward" if kwargs.get("is_backward") else "inference" if kwargs.get("is_inference") else "forward"
        take_regions(gm, _graph_name(kind, graph), options)
        return compile_fx_inner(gm, example_inputs, **kwargs)

    patches = {"triton.cudagraphs": True} if options.get("mode") == "reduce-overhead" else {}
    if options.get("mode") in ("max-autotune", "max-autotune-no-cudagraphs"):
        patches = {"max_autotune": True, "triton.cudagraphs": options["mode"] == "max-autotune"}
    patches["post_grad_custom_pre_pass"] = cache_key_pass(options)
    return compile_fx(gm, example_inputs, inner_compile=inner, config_patches=patches)


def cache_key_pass(options):
    """An Inductor graph pass that changes nothing but the key of Inductor's and
    AOTAutograd's caches: code compiled with polyred's regions and code compiled without
    them (plain torch.compile of the same model) must never be taken for each other.
    Its uuid hashes this package's Python sources and the options; a user's own pre
    pass still runs, first."""
    import hashlib
    import json
    from pathlib import Path

    import torch._inductor.config as inductor_config
    from torch._inductor.custom_graph_pass import CustomGraphPass

    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(json.dumps({k: options[k] for k in sorted(options)}, default=str).encode())
    for source in sorted(package.rglob("*.py")):
        digest.update(source.read_bytes())
    user_pass = inductor_config.post_grad_custom_pre_pass

    class PolyredCacheKey(CustomGraphPass):
        def __call__(self, graph):
            if user_pass is not None:
                user_pass(graph)

        def uuid(self):
            theirs = user_pass.uuid() if user_pass is not None and hasattr(user_pass, "uuid") else None
            return digest.hexdigest() + ("" if theirs is None else str(theirs))

    return PolyredCacheKey()


def _with_eager_rest(gm, example_inputs, options, graph):
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd
    import torch._inductor.lowering  # noqa: F401 -- some of Inductor's decompositions consult its lowerings
    from torch._inductor.decomposition import select_decomp_table

    def compiler(kind):
        def compile_graph(gm, example_inputs):
            take_regions(gm, _graph_name(kind, graph), options)
            return make_boxed_func(gm.forward)
        return compile_graph

    return aot_autograd(fw_compiler=compiler("forward"), bw_compiler=compiler("backward"),
                        inference_compiler=compiler("inference"),
                        decompositions=select_decomp_table())(gm, example_inputs)


def register():
    """Registers the backend under the name "polyred" where no installed distribution
    declares it: an installed polyred is found through its torch_dynamo_backends entry
    point, which torch loads (importing polyred) and registers itself -- registering here
    too would make torch's own registration fail as a duplicate. `import polyred` in a
    source tree registers it here."""
    from torch._dynamo.backends.registry import _COMPILER_FNS, register_backend
    if "polyred" not in _COMPILER_FNS and not installed_entry_point():
        register_backend(polyred_backend, name="polyred")


def installed_entry_point():
    """Whether an installed distribution declares the torch_dynamo_backends entry point
    "polyred"."""
    from importlib.metadata import entry_points
    return any(e.name == "polyred" for e in entry_points(group="torch_dynamo_backends"))
