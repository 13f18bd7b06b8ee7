"""lowering/generalize.py: a region's graph at two values of a size made symbolic, and
the check that a graph lowered at a third value is that symbolic graph there."""
from polyred.builder import Builder
from polyred.lowering.generalize import generalize


def rows_then_max(rows, scale=2.0, width=48):
    b = Builder("g")
    x = b.input("x", "float32", [3, rows, width])
    y = b.binary("Mul", x, b.constant(scale, "float32"))
    b.output(b.reduce_max(b.reshape(y, [3 * rows, width]), axes=[1]))
    return b.build()


def test_sizes_that_follow_the_symbol_become_multiples_of_it():
    symbolic = generalize(rows_then_max(7), 7, rows_then_max(11), 11, "S")
    composite = symbolic.composite()
    assert composite["input_desc"][0][0]["shape"] == [3, "S", 48]
    reshape = next(op for op in composite["op_desc"] if op["name"] == "Reshape")
    assert reshape["output_desc"][0]["shape"] == ["3*S", 48]
    assert reshape["attr"] is None  # its target holds the symbol: the declared shape says it
    assert composite["output_desc"][0]["shape"] == ["3*S"]
    assert symbolic.at(13) == rows_then_max(13)


def test_a_graph_is_served_only_where_it_is_the_symbolic_graph_at_its_value():
    symbolic = generalize(rows_then_max(7), 7, rows_then_max(11), 11, "S")
    assert symbolic.matches(rows_then_max(29), 29)
    assert not symbolic.matches(rows_then_max(29), 28)
    assert not symbolic.matches(rows_then_max(29, scale=3.0), 29)  # a lowering choice that changed
    assert not symbolic.matches(rows_then_max(29, width=47), 29)


def test_graphs_that_differ_otherwise_are_not_generalized():
    assert generalize(rows_then_max(7), 7, rows_then_max(11, scale=3.0), 11, "S") is None
    assert generalize(rows_then_max(7), 7, rows_then_max(11, width=50), 11, "S") is None
    assert generalize(rows_then_max(7), 7, rows_then_max(7), 7, "S") is None
    # rows 7 and 11 given as values 7 and 12: 11 is not the same multiple of 12 as 7 of 7
    assert generalize(rows_then_max(7), 7, rows_then_max(11), 12, "S") is None


def test_a_symbol_no_input_holds_is_not_generalized():
    def iota(n):
        b = Builder("g")
        x = b.input("x", "float32", [4])
        b.output(b.reduce_sum(x))
        b.output(b.iota([n, 4], axis=0, dtype="int64"))
        return b.build()

    assert generalize(iota(5), 5, iota(9), 9, "S") is None
