"""Symbolic sizes: the sizes of a graph that torch.compile traced with dynamic shapes.

Takes torch's sizes -- Python ints, or SymInts whose expressions (sympy, over symbols
such as s0, s27) Dynamo made for dimensions that change from call to call; gives them
as data a program text can carry: an int, or the expression's text ("s27*s77",
"2*s0 - 1"), and evaluates such a text for given symbol values (ints at run time,
SymInts while torch traces). The texts are a small language of their own -- integer
arithmetic (+ - * // % **), the functions torch's size expressions use (FloorDiv,
CeilDiv, Mod, PythonMod, ModularIndexing, Max, Min) and symbol names -- parsed here
without eval, so a text from a cache file cannot run code.
"""
import ast
import functools
import operator

from ..errors import BadInputError


class UnsupportedSize(BadInputError):
    """A size whose expression polyred cannot carry (the op stays with PyTorch)."""


def _ceil_div(a, b):
    return -((-a) // b)


def _extremum(pick, symbolic):
    """Max/Min: Python's over ints, torch.sym_max/sym_min where a SymInt takes part."""
    def apply(*xs):
        if all(isinstance(x, int) for x in xs):
            return pick(xs)
        import torch
        return functools.reduce(getattr(torch, symbolic), xs)
    return apply


_FUNCTIONS = {
    "FloorDiv": operator.floordiv, "CeilDiv": _ceil_div,
    "Mod": operator.mod, "PythonMod": operator.mod,
    "ModularIndexing": lambda base, divisor, modulus: (base // divisor) % modulus,
    "Max": _extremum(max, "sym_max"), "Min": _extremum(min, "sym_min"),
}
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
           ast.Mod: operator.mod, ast.Pow: operator.pow}


def is_symint(value):
    """A symbolic size (torch.SymInt; torch is not imported here)."""
    return type(value).__name__ == "SymInt"


def is_size(value):
    """An int or SymInt an op reads as an argument (a view's size, say), not a tensor."""
    return isinstance(value, int) and not isinstance(value, bool) or is_symint(value)


def size_expr(size):
    """A torch size (int or SymInt) as program data: the int, or its expression's text.
    Raises UnsupportedSize for what the expression language does not hold."""
    if isinstance(size, int) and not isinstance(size, bool):
        return size
    if not is_symint(size):
        raise UnsupportedSize(f"the size {size!r} is not an integer")
    expr = size.node.expr
    if expr.is_Integer:
        return int(expr)
    text = str(expr)
    _parse(text)  # refuses what evaluate() could not read back
    return text


def symbols_of(text):
    """The symbol names in an expression text (an int has none)."""
    if isinstance(text, int):
        return set()
    return {n.id for n in ast.walk(_parse(text)) if isinstance(n, ast.Name) and n.id not in _FUNCTIONS}


def evaluate(text, values):
    """The value of an expression text (or int) for `values` {symbol: int or SymInt}."""
    if isinstance(text, int):
        return text
    return _value(_parse(text).body, values)


@functools.lru_cache(maxsize=4096)
def _parse(text):
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise UnsupportedSize(f"the size expression {text!r} is not one polyred reads") from None
    for n in ast.walk(tree):
        if not isinstance(n, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.USub, ast.Name, ast.Load, ast.Call,
                              ast.Constant) + tuple(_BINARY)):
            raise UnsupportedSize(f"the size expression {text!r} is not one polyred reads")
        if isinstance(n, ast.Constant) and (not isinstance(n.value, int) or isinstance(n.value, bool)):
            raise UnsupportedSize(f"the size expression {text!r} holds the constant {n.value!r}")
        if isinstance(n, ast.Call) and (not isinstance(n.func, ast.Name) or n.func.id not in _FUNCTIONS
                                        or n.keywords):
            raise UnsupportedSize(f"the size expression {text!r} calls a function polyred does not know")
    return tree


def _value(node, values):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        try:
            return values[node.id]
        except KeyError:
            raise BadInputError(f"no value for the size {node.id}") from None
    if isinstance(node, ast.UnaryOp):
        return -_value(node.operand, values)
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_value(node.left, values), _value(node.right, values))
    return _FUNCTIONS[node.func.id](*(_value(a, values) for a in node.args))


def hint(size):
    """The value a size had in the example inputs torch traced with."""
    if isinstance(size, int):
        return size
    value = getattr(size.node, "hint", None)
    if value is None:
        raise UnsupportedSize(f"the size {size} has no example value (a size that depends on data)")
    return int(value)


def known_true(condition):
    """True only where torch can prove `condition` (a bool or SymBool) without adding a
    guard: a choice that depends on a symbolic size must not pin the compiled graph to
    the example's sizes."""
    if isinstance(condition, bool):
        return condition
    from torch.fx.experimental.symbolic_shapes import statically_known_true
    return statically_known_true(condition)
