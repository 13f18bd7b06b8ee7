"""One polyred graph for every value of one size: a region's graph made symbolic.

Takes the composite JSON that lowering/region.py gave for one region at two values of
one torch size symbol (every other symbol at the same value in both); gives a
`SymbolicGraph`: the graph with every shape entry that changed written as
`"c*<symbol>"` (docs/format.md, "Symbolic sizes"), which polyred compiles once for all
values of the symbol, or None where the two graphs differ otherwise -- in structure, in
a constant, in an attribute other than a Reshape's target, or in a size that is not the
same multiple of the symbol in both.

Two samples only suggest the pattern; `matches` proves it for each value the region
meets: the graph lowered at that value must equal the symbolic graph at it, entry for
entry, before the symbolic kernel runs it (region_op.py). A lowering whose choices
depend on a size in any other way therefore never runs on the symbolic kernel.
"""
import copy


class _Multiple:
    """A size that is `coefficient` times the symbol."""

    __slots__ = ("coefficient",)

    def __init__(self, coefficient):
        self.coefficient = coefficient


class SymbolicGraph:
    def __init__(self, pattern, symbol):
        self._pattern = pattern  # the graph, its symbolic sizes as _Multiple
        self.symbol = symbol

    def composite(self):
        """The composite JSON polyred compiles: sizes "c*S" (or "S"); a Reshape's or
        BroadcastTo's `shape` attribute that holds the symbol is left out (the reader
        only checks it against the declared output shape, which says the same)."""
        graph = _substitute(self._pattern, lambda m: self.symbol if m.coefficient == 1
                            else f"{m.coefficient}*{self.symbol}")
        for op, pattern_op in zip(graph["op_desc"], self._pattern["op_desc"]):
            attrs = pattern_op.get("attr") or []
            if any(_is_shape_attr(a) and any(isinstance(v, _Multiple) for v in a["value"]) for a in attrs):
                op["attr"] = [a for a in op["attr"] if not _is_shape_attr(a)] or None
        return graph

    def at(self, value):
        """The concrete graph at symbol `value`."""
        return _substitute(self._pattern, lambda m: m.coefficient * value)

    def matches(self, graph, value):
        """Whether `graph` is this graph at symbol `value`, entry for entry."""
        return graph == self.at(value)


class _Differs(Exception):
    pass


def generalize(graph_a, value_a, graph_b, value_b, symbol):
    """The SymbolicGraph of which graph_a is the value value_a and graph_b the value
    value_b of `symbol`, or None (see the module's comment)."""
    if value_a == value_b or min(value_a, value_b) < 1:
        return None

    def size(a, b):
        if a == b:
            return a
        if _is_int(a) and _is_int(b) and a % value_a == 0 and a > 0 and a * value_b == b * value_a:
            return _Multiple(a // value_a)
        raise _Differs

    def walk(a, b, sizes=False):
        if type(a) is not type(b):
            raise _Differs
        if isinstance(a, dict):
            if a.keys() != b.keys():
                raise _Differs
            return {k: walk(a[k], b[k], k == "shape" or (k == "value" and _is_shape_attr(a))) for k in a}
        if isinstance(a, list):
            if len(a) != len(b):
                raise _Differs
            return [size(x, y) if sizes else walk(x, y) for x, y in zip(a, b)]
        if a != b:
            raise _Differs
        return a

    try:
        pattern = walk(graph_a, graph_b)
    except _Differs:
        return None
    if not any(isinstance(v, _Multiple) for v in _leaves(pattern["input_desc"])):
        return None  # the symbol changes no input (a call reads its value from the inputs' shapes)
    return SymbolicGraph(pattern, symbol)


def _is_shape_attr(attr):
    return isinstance(attr, dict) and attr.get("name") == "shape" and isinstance(attr.get("value"), list) \
        and "tensor_name" not in attr


def _substitute(x, f):
    if isinstance(x, _Multiple):
        return f(x)
    if isinstance(x, dict):
        return {k: _substitute(v, f) for k, v in x.items()}
    if isinstance(x, list):
        return [_substitute(v, f) for v in x]
    return x


def _leaves(x):
    if isinstance(x, dict):
        for v in x.values():
            yield from _leaves(v)
    elif isinstance(x, list):
        for v in x:
            yield from _leaves(v)
    else:
        yield x


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)
