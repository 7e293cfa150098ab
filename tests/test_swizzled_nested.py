"""Nested composed layouts (CuTe's ``ComposedLayout<A,O,B>`` with B itself composed): ``composition`` builds them as
CuTe does, they print as CuTe prints and parse back; every op, route and page answers one or refuses it with a 4xx."""

from __future__ import annotations

from urllib.parse import quote

import pytest

import algebra as A
from algebra.teach.registry import OPS

NESTED = ["Sw<3,0,3> o 0 o Sw<3,0,-3> o 0 o (8,8):(8,1)", "(16,4):(4,1) o -8 o Sw<1,2,4> o 0 o 8:1",
          "Sw<2,4,3> o 16 o Sw<1,2,3> o 0 o (16,8):(1,16)", "Sw<1,0,2> o 0 o Sw<1,1,2> o 0 o Sw<1,2,2> o 0 o 16:1"]


def test_cute_examples_print_as_cute_prints_and_parse_back():
    r = A.composition(A.parse("Sw<3,0,3> o 0 o (8,8):(8,1)"), A.Swizzle(3, 0, 3))
    assert str(r) == "Sw<3,0,3> o 0 o Sw<3,0,-3> o 0 o (8,8):(8,1)"
    assert A.parse(str(r)) == r and r.shape == (8, 8) and A.size(r) == 64
    a, sw = A.parse("Sw<3,0,3> o 0 o (8,8):(8,1)"), A.Swizzle(3, 0, 3)
    assert [r(i) for i in range(64)] == [a(sw(i)) for i in range(64)]  # R = A o Sw
    r = A.composition(A.parse("(16,4):(4,1) o -8 o Sw<1,2,4>"), A.parse("8:1"))
    assert str(r) == "(16,4):(4,1) o -8 o Sw<1,2,4> o 0 o 8:1" and A.parse(str(r)) == r and r.shape == 8
    with pytest.raises(A.LayoutError, match="not defined at x = 0"):
        r(0)  # -8 + Sw(0) < 0: off the domain of the outer L o -8 o Sw


def test_nested_evaluates_as_the_chain():
    for text in NESTED:
        x = A.parse(text)
        assert A.parse(str(x)) == x
        inner = x.layout_b
        for i in range(A.size(x)):
            y = x.offset + inner(i)
            if y >= 0:
                assert x(i) == x.layout_a(y)


def test_cute_refuses_a_swizzle_with_an_int():
    with pytest.raises(A.LayoutError, match="composes a swizzle with a layout only"):
        A.composition(A.parse("3:1 o 15 o Sw<3,1,-5>"), 4)  # CuTe: no composition(Swizzle, C<4>)


def _args(op, nested):
    """Each example of ``op`` with each of its layout arguments replaced by ``nested``."""
    for ex in op.examples[:1]:
        for k, arg in enumerate(op.args[:len(ex.args)]):
            if arg.kind in ("layout", "tiler"):
                yield [nested if j == k else a for j, a in enumerate(ex.args)]


@pytest.mark.parametrize("op", list(OPS.values()), ids=lambda o: o.name)
def test_every_op_answers_or_refuses(client, op):
    for text in NESTED:
        for args in _args(op, text):
            r = client.post("/api/algebra", json={"op": op.name, "args": args})
            assert r.status_code in (200, 422), (op.name, args, r.status_code, r.text[:300])
            if r.status_code == 422:
                assert r.json()["detail"], (op.name, args)


@pytest.mark.parametrize("text", NESTED)
def test_routes_and_pages(client, text):
    r = client.post("/api/layout", json={"layout": text})
    assert r.status_code in (200, 422), r.text[:300]
    assert client.get(f"/?layout={quote(text)}").status_code == 200
    for op in ("composition", "coalesce", "right_inverse", "logical_divide", "complement"):
        assert client.get(f"/algebra?op={op}&a={quote(text)}&b=2:1").status_code == 200
    for path, body in (("/api/banks", {"layout": text}), ("/api/solve/linear", {"layout": text}),
                       ("/api/solve/descriptor/encode", {"tile": text})):
        r = client.post(path, json=body)
        assert r.status_code < 500, (path, r.text[:300])


def test_drill_answers(client):
    """A nested composed layout typed as the answer of any drill: judged or refused, never a server error."""
    for k in client.get("/api/drills/kinds").json():
        d = client.get(f"/api/drills/next?kind={k['kind']}&seed=7")
        if d.status_code != 200:
            continue
        for text in NESTED[:2]:
            r = client.post(f"/api/drills/{d.json()['id']}/answer", json={"answer": text})
            assert r.status_code < 500, (k["kind"], text, r.text[:300])


@pytest.mark.parametrize("text", [*NESTED, "8:1 o -3 o Sw<1,0,2>", "Sw<1,0,2> o 0 o 8:1 o -3 o Sw<1,0,2>"])
def test_facts_answer_or_refuse(text):
    """cosize, a slice with _, a mode, the C++ / DSL expressions: an answer or a LayoutError, never a crash."""
    x = A.parse(text)
    for fact in (lambda: A.cosize(x), lambda: x(None), lambda: x[0], lambda: A.to_cpp(x), lambda: A.to_dsl(x)):
        try:
            fact()
        except A.LayoutError as e:
            assert str(e)


def _defined(x, i):
    try:
        return x(i)
    except A.LayoutError:
        return None


def test_inverse_of_a_nested_layout_with_an_offset_is_cutes_chain():
    """CuTe's ``inverse(B) o -O o inverse(A)`` with inverse(B) itself composed: one chain, checked on its domain."""
    x = A.parse("Sw<4,0,-5> o 64 o Sw<2,4,8> o 0 o (8,32,1):(1,16,8)")
    r = A.left_inverse(x)
    assert str(r) == "Sw<2,3,8> o 0 o (16,32):(1,8) o -64 o Sw<4,0,-5>" and A.parse(str(r)) == r
    assert all(r(x(i)) == i for i in range(A.size(x)))
    x = A.parse("Sw<2,5,-3> o 512 o Sw<3,6,7> o 0 o (4,4):(1,4)")
    r = A.right_inverse(x)
    assert str(r) == "Sw<3,6,7> o 0 o 16:1 o -512 o Sw<2,5,-3>" and len(r.domain()) == 16
    assert all(x(r(v)) == v for v in r.domain())
    x = A.parse("(16,4):(4,1) o -8 o Sw<1,2,4> o 0 o (8,2):(1,8)")  # a layout first: its inverse comes last
    r = A.left_inverse(x)
    assert str(r) == "Sw<1,2,4> o 0 o 16:1 o 8 o (4,16):(16,1)"
    assert [r(y) for i in range(16) if (y := _defined(x, i)) is not None] == list(range(8, 16))
    with pytest.raises(A.LayoutError, match=r"right inverse condition.*CuTe would print Sw<1,2,4> o 0 o 16:1 o 0 o "
                                            r"64:1 here; at i = 16 < size\(R\) = 64, R is not defined"):
        A.right_inverse(A.parse("(16,4):(1,16) o 0 o Sw<1,2,4> o 0 o (8,2):(1,8)"))


def test_the_inverse_check_reads_a_nested_chain():
    from algebra.core.checks import post_left_inverse

    x = A.parse("Sw<4,0,-5> o 64 o Sw<2,4,8> o 0 o (8,32,1):(1,16,8)")
    with pytest.raises(A.LayoutError, match="quasi-inverse condition"):
        post_left_inverse((x,), A.parse("Sw<2,3,8> o 0 o (16,32):(1,8) o -64 o Sw<4,0,-4>"))


@pytest.mark.parametrize(("text", "crd", "want"), [
    ("Sw<3,0,3> o 0 o Sw<3,0,-3> o 0 o (8,8):(8,1)", (None, None), "Sw<3,0,3> o 0 o Sw<3,0,-3> o 0 o (8,8):(8,1)"),
    ("Sw<0,0,3> o 0 o Sw<0,4,-8> o 0 o (1,16):(1,1)", None, "(1,16):(1,1)"),
    ("(16,4):(4,1) o -8 o Sw<1,2,4> o 0 o (8,2):(1,8)", (None, 1), "(16,4):(4,1) o 0 o (8):(1)"),
    ("(16,4):(4,1) o -8 o Sw<1,2,4> o 0 o (8,2):(1,8)", (None, None),
     "(16,4):(4,1) o -8 o Sw<1,2,4> o 0 o (8,2):(1,8)"),
    ("Sw<3,0,3> o 0 o Sw<3,0,-3> o 0 o (8,8):(8,1)", (None, 3), "refused: no rank"),
    ("(16,4):(4,1) o -8 o Sw<1,2,4> o 0 o (8,2):(1,8)", (3, None), "refused: 4294967291 o (2):(8)"),
])
def test_slices_of_nested_layouts_as_cute(text, crd, want):
    ev = OPS["evaluate"].fn
    if not want.startswith("refused"):
        assert str(ev(A.parse(text), crd)) == want
    else:
        with pytest.raises(A.LayoutError, match=want.split(": ")[1].replace("(", r"\(").replace(")", r"\)")):
            ev(A.parse(text), crd)


def test_refusals_show_cutes_unsigned_offsets():
    with pytest.raises(A.LayoutError, match=r"CuTe would print upcast<2>\(.*\) = \(16,2\):\(2,1\) o 2147483644 o "
                                            r"Sw<1,1,4>$"):
        A.upcast(A.parse("(16,4):(4,1) o -8 o Sw<1,2,4>"), 2)
    with pytest.raises(A.LayoutError, match=r"CuTe would print evaluate\(4:1 o -52 o Sw<2,1,3> o 0 o 6:1, 2\) = -50$"):
        OPS["evaluate"].fn(A.parse("4:1 o -52 o Sw<2,1,3> o 0 o 6:1"), 2)
