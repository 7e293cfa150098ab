"""Every printed result of every op of the op table parses back to the same layout: ``parse(result) == R`` and
``str(parse(result)) == result``, over fresh arguments with integer, basis (``1@0``) and F2 strides.

``layout_add`` of basis-strided layouts gives strides that are sums of bases, arithmetic tuples that CuTe prints as
tuples: ``(4,8):(1@0,1@1)`` + ``(4,8):(1@1,1@0)`` is ``(4,8):((1,1),(1,1))``. A tuple standing where the shape has
a leaf is such a stride (``algebra.core.notation``).
"""

from __future__ import annotations

import random

import pytest

import algebra as A
from algebra import LayoutError
from algebra.core.arith import F2, ArithTuple
from algebra.teach import registry
from app.services.algebra_ops import run_op

SEEDS = range(15510, 15514)
KINDS = ("int", "basis", "f2")


def _shape(r: random.Random, depth: int = 0):
    n = r.choice([1, 1, 2, 2, 3])
    out = [_shape(r, depth + 1) if depth < 1 and r.random() < 0.2 else r.choice([1, 2, 2, 3, 4, 4, 8])
           for _ in range(n)]
    return tuple(out) if n > 1 or r.random() < 0.3 else out[0]


def _map(s, f):
    return tuple(_map(x, f) for x in s) if isinstance(s, tuple) else f(s)


def _layout(r: random.Random, kind: str) -> A.Layout:
    s = _shape(r)
    if kind == "int":
        return A.Layout(s, _map(s, lambda _: r.choice([0, 1, 2, 3, 4, 8, 16, -1, -2])))
    if kind == "basis":
        paths = [(0,), (1,), (0,), (1,), (2,), (1, 0)]
        return A.Layout(s, _map(s, lambda _: r.choice([0, 1, 2]) * A.E(*r.choice(paths)) if r.random() < 0.85
                                else r.choice([0, 1, 2])))
    return A.Layout(s, _map(s, lambda _: F2(r.choice([0, 1, 2, 3, 4, 5, 8, 9, 16]))))


def _arg(r: random.Random, kind: str, arg_kind: str) -> str:
    if arg_kind == "layout":
        return str(_layout(r, kind if r.random() < 0.8 else r.choice(KINDS)))
    if arg_kind == "tiler":
        c = r.random()
        if c < 0.4:
            return str(_layout(r, "int"))
        if c < 0.55:
            return str(r.choice([1, 2, 4]))
        if c < 0.7:  # a shape: a tiler by mode, as CuTe reads make_shape(2,4)
            return "(" + ",".join(str(r.choice([1, 2, 4])) for _ in range(r.choice([1, 2]))) + ")"
        modes = [str(A.Layout(r.choice([1, 2, 4]), r.choice([1, 2]))) for _ in range(r.choice([1, 2]))]
        return "<" + ", ".join(modes) + ">"
    if arg_kind == "int":
        return str(r.choice([1, 2, 4, 8, 16, 32]))
    if arg_kind in ("shape", "cotarget"):
        return str(A.Layout(_shape(r))).split(":")[0]
    if arg_kind == "profile":
        return r.choice(["(1,1)", "1", "(1,(1,1))"])
    return r.choice(["0", "1", "(1,0)", "(0,_)", "(_,1)", "3"])  # coord


def _cases():
    for seed in SEEDS:
        r = random.Random(seed)
        for name, op in registry.OPS.items():
            if op.result == "value":
                continue
            for kind in KINDS:
                for _ in range(2):
                    yield name, [_arg(r, kind, a.kind) for a in op.args if not a.optional or r.random() < 0.3]


def _check(name: str, args: list[str]) -> bool:
    """False where the op refuses; otherwise asserts the printed result reads back as the same layout."""
    try:
        res = run_op(name, args)
    except A.LayoutError:
        return False
    op = registry.get(name)
    direct = op.fn(*res.parsed)
    direct = direct[0] if op.result == "tile" else direct
    back = A.parse(res.result)
    assert back == direct and str(back) == res.result, (name, args, res.result, str(back))
    return True


def test_every_printed_op_result_parses_back_to_the_same_layout():
    answered = {kind: 0 for kind in ("int", "basis", "f2")}
    for name, args in _cases():
        if _check(name, args):
            answered["basis" if "@" in "".join(args) else "f2" if "F" in "".join(args) else "int"] += 1
    assert min(answered.values()) > 50, answered  # each stride kind answered, not only refused


@pytest.mark.parametrize(("a", "b", "printed"), [
    ("(4,8):(1@0,1@1)", "(4,8):(1@1,1@0)", "(4,8):((1,1),(1,1))"),
    ("3:1@2", "(3,1):(0@0,2@2)", "3:1@2"),  # a sum in one mode is a stride leaf
    ("(2,4):(1@0@1,2@0)", "(2,4):(1@0,1@1@1)", "(2,4):((1,(1,0)),(2,(0,1)))"),
])
def test_layout_add_of_basis_strides_prints_what_parses_back(a, b, printed):
    r = A.layout_add(A.parse(a), A.parse(b))
    assert str(r) == printed
    assert A.parse(printed) == r and str(A.parse(printed)) == printed
    assert A.Layout(r.shape, r.stride) == r
    for i in range(A.size(r)):
        assert r(i) == A.parse(a)(i) + A.parse(b)(i)
    assert _check("layout_add", [a, b])


def test_a_tuple_stride_at_a_shape_leaf_is_an_arithmetic_tuple():
    L = A.parse("(4,(2,3)):((1,1),(1@1,(0,2)))")
    assert L.stride == (ArithTuple(1, 1), (A.E(1), ArithTuple(0, 2)))
    assert L(3) == ArithTuple(3, 3) and L((1, (1, 2))) == ArithTuple(1, 6)
    assert str(A.parse("4:(1,1)")) == "4:(1,1)"


@pytest.mark.parametrize(("text", "needle"), [
    ("4:(1@0,1)", "arithmetic tuple"),  # a basis element inside a coordinate stride
    ("4:(F1,1)", "arithmetic tuple"),
    ("(4,8):(1,2,3)", "not congruent"),  # a tuple of the wrong length where the shape is a tuple
    ("(4,8):((1,1),F2)", "mixes"),
])
def test_a_stride_that_is_no_coordinate_is_refused(text, needle):
    with pytest.raises(A.LayoutError, match=needle):
        A.parse(text)


def test_the_api_answers_layout_add_of_bases_in_a_form_the_explorer_reads(client):
    j = client.post("/api/algebra", json={"op": "layout_add", "args": ["(4,8):(1@0,1@1)", "(4,8):(1@1,1@0)"]})
    assert j.status_code == 200, j.text
    printed = j.json()["result"]
    assert printed == "(4,8):((1,1),(1,1))"
    back = client.post("/api/layout", json={"layout": printed})
    assert back.status_code == 200, back.text
    assert back.json()["layout"] == printed


@pytest.mark.parametrize(("a", "b"), [("(4,8):(1@0,1@1)", "(4,8):(1@1,1@0)"), ("3:1@2", "(3,1):(0@0,2@2)")])
def test_the_workbench_draws_layout_add_of_bases_and_its_printed_result(client, a, b):
    r = client.get("/algebra", params={"op": "layout_add", "a": a, "b": b})
    assert r.status_code == 200, r.text[-500:]
    printed = str(A.layout_add(A.parse(a), A.parse(b)))
    assert printed in r.text
    assert "cannot evaluate" not in r.text
    r = client.get("/", params={"layout": printed})
    assert r.status_code == 200 and "cannot evaluate" not in r.text


def _outcome(fn, *args):
    try:
        return "answer", fn(*args)
    except A.LayoutError as err:
        return "refused", str(err)
    except TypeError as err:  # basis strides where an op divides (upcast, local_partition): the API names them
        return "type", str(err)


def test_the_workbench_answers_what_the_op_answers_on_fresh_arguments():
    """The workbench and /api/algebra run the op inside a derivation (``explain.derive``); an op such as local_tile
    calls zipped_divide outside any cached op, and a derivation took CuTe's divide with a shape <= 0 as it stood: the
    tile ``(2,2):(-4@1,-1@0)`` that the op itself refuses (A o B is not A's function there)."""
    from algebra.teach.explain import derive

    for name, args in [("local_tile", ["(3,3):(2@1,1@0)", "4:-2", "1"]), *_cases()]:
        op = registry.get(name)
        parsed = registry.parse_args(op, args)
        got = _outcome(lambda *a, n=name: derive(n, *a)[0], *parsed)
        assert got == _outcome(op.fn, *parsed), (name, args)


@pytest.mark.parametrize("b", ["4:F3", "(4,4):(F3,F5)", "(4,4,4):(F3,F5,F4)"])
@pytest.mark.parametrize("op", ["logical_product", "blocked_product", "raked_product"])
def test_a_product_of_a_negative_stride_by_f2_strides_is_refused_not_crashed(op, b):
    """The complement of 4:-1 has a shape <= 0 (CuTe's arithmetic); composing it with F2 strides read A's offset
    table, empty for such a shape (IndexError, a 422 "cannot evaluate" on the workbench)."""
    with pytest.raises(A.LayoutError, match="A has a shape <= 0"):
        getattr(A, op)(A.parse("4:-1"), A.parse(b))


@pytest.mark.parametrize("call", [lambda L: A.upcast(L, 2), lambda L: A.recast_layout(L, 16, 32)])
@pytest.mark.parametrize("text", ["(4,2):(1@0,1@1)", "(2,2):(1@0@1,0@0)", "(4,8):(1,2@1)"])
def test_a_recast_of_basis_strides_is_refused_by_the_op_not_a_type_error(call, text):
    """upcast / recast_layout divide integer strides: called directly on a coordinate layout they raised
    TypeError (``1@0 % 2``); the op itself now refuses, naming a basis stride, as /api/algebra says."""
    with pytest.raises(LayoutError, match=r"needs integer strides; .* has basis \(E\) strides such as \d@"):
        call(A.parse(text))
