"""The op table's three faces on one input: the library (a Python tuple as a tiler), ``POST /api/algebra`` and the
workbench read a typed argument as CuTe reads it, and answer and refuse with the same words (fresh inputs, seeds
17700-17799)."""

from __future__ import annotations

import html
import random
import re

import pytest

import algebra as A
from algebra import LayoutError, registry
from algebra.core.notation import show

P = A.parse
TILER_OPS = [name for name, op in registry.OPS.items() if any(a.kind == "tiler" for a in op.args)]


def _page_text(client, op: str, args: list[str]) -> str:
    page = client.get("/algebra", params={"op": op, **dict(zip("abc", args, strict=False))})
    assert page.status_code == 200
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page.text)))


def _library(op: str, args: tuple) -> str:
    try:
        res = registry.get(op).fn(*args)
    except LayoutError as err:
        return f"refused: {err}"
    return show(res[0] if registry.get(op).result == "tile" else res)


@pytest.mark.parametrize("text", ["(4,3)", "(4, 3)", "(_4,_3)", "Shape<_4,_3>{}", "[4,3]", "<4:1, 3:1>"])
def test_a_shape_typed_as_a_tiler_is_a_tiler_by_mode(text):
    """CuTe reads a Shape used as a tiler mode by mode (``local_tile(t, make_shape(4,3), coord)``): the text
    ``(4,3)`` is the tiler <4:1, 3:1>, not the one layout (4,3):(1,4) composed on the 1-D coordinate."""
    assert registry.parse_value(text, "tiler", "tiler") in ((4, 3), (P("4:1"), P("3:1")))
    a = P("(8,12):(1,8)")
    assert str(A.logical_divide(a, registry.parse_value(text, "tiler", "tiler"))) == "((4,2),(3,4)):((1,4),(8,24))"


def test_a_layout_typed_as_a_tiler_stays_one_layout():
    for text in ["(4,3):(1,4)", "Layout<Shape<_4,_3>>{}", "4", "_4"]:
        v = registry.parse_value(text, "tiler", "tiler")
        assert v == 4 or isinstance(v, A.Layout), (text, v)


def test_shape_tilers_agree_on_every_face(client):
    """Every op with a tiler argument, a fresh shape tiler typed as text: the API's result, the workbench's and the
    library's (the tiler as a Python tuple) are the same, and so is a refusal's text."""
    rng = random.Random(17731)
    for op in TILER_OPS:
        for _ in range(3):
            a = A.Layout((rng.choice((4, 8, 12)), rng.choice((6, 8, 12))), (1, 16))
            tiler = (rng.choice((2, 4)), rng.choice((2, 3, 4)))
            extra = [] if op != "local_tile" else [show((rng.randrange(2), rng.randrange(2)))]
            texts = [str(a), show(tiler), *extra]
            want = _library(op, (a, tiler, *[registry.parse_value(x, "coord", "c") for x in extra]))
            r = client.post("/api/algebra", json={"op": op, "args": texts})
            got = r.json()["result"] if r.status_code == 200 else f"refused: {r.json()['detail']}"
            assert got == want, (op, texts)
            assert want.removeprefix("refused: ") in _page_text(client, op, texts), (op, texts)


@pytest.mark.parametrize(("op", "args"), [
    ("flat_product", ["(6,2):(1,6)", "<(6,8):(0,8), (3,4):(6,4)>"]),
    ("tiled_product", ["(2,(6,6)):(16,(6,2))", "<(4,(1,(3,4)),2):(3,(4,(3,32)),6), _>"]),
    ("zipped_divide", ["(1,3,8):(3,3,3)", "<(8,4):(-1,16)>"]),
])
def test_a_long_refusal_reaches_the_api_whole(client, op, args):
    """A refusal of short arguments whose text runs past the echo cap (the composition inside, its counterexample and
    what CuTe prints for the whole op): the API's detail is the library's text, counterexample included, as the
    workbench shows it."""
    with pytest.raises(LayoutError) as exc:
        registry.get(op).fn(*registry.parse_args(registry.get(op), list(args)))
    assert len(str(exc.value)) > 400
    r = client.post("/api/algebra", json={"op": op, "args": args})
    assert r.status_code == 422 and r.json()["detail"] == str(exc.value)
    assert str(exc.value) in _page_text(client, op, args)


@pytest.mark.parametrize(("op", "args", "named"), [
    ("logical_divide", ["(8,8):(1,8)", "0"], "tiler"),
    ("zipped_divide", ["(8,8):(1,8)", "-2"], "tiler"),
    ("local_tile", ["(16,16):(16,1)", "0", "(1,2)"], "tiler"),
    ("composition", ["(8,8):(1,8)", "0"], "B"),
    ("logical_product", ["(2,2):(1,2)", "0"], "B"),
    ("local_tile", ["(16,16):(16,1)", "<4:1, 4:1>", "(1,(0,1))"], "tile coordinate"),
    ("local_tile", ["(16,16):(16,1)", "<4:1, 4:1>", "((((((1))))))"], "tile coordinate"),
    ("tile_unzip", ["((2,4),(4,2)):((1,2),(8,32))", "((((((1))))))"], "tiler"),
    ("zipped_product", ["(4,2):(1,4)", "<3:16, _>"], "tiler"),
    ("recast_layout", ["(8,8):(1,8)", "0", "32"], "old bits"),
    ("recast_layout", ["(8,8):(1,8)", "16", "-3"], "new bits"),
])
def test_a_bad_argument_is_named_on_both_faces(client, op, args, named):
    """A 422 that says which argument is wrong (and how), the same words on the workbench."""
    r = client.post("/api/algebra", json={"op": op, "args": args})
    assert r.status_code == 422
    detail = r.json()["detail"]
    assert named in detail, detail
    assert detail in _page_text(client, op, args)


@pytest.mark.parametrize("tiler", [[0], [2, -1], "[0]", "<0>", "<2:1, 0>", "(2,0)", "0", 0])
def test_a_tile_size_below_one_is_named_in_every_tiler_form(client, tiler):
    """An integer of a tiler stands for the layout n:1: in a JSON list, ``<...>``, a shape or alone, a size <= 0 is a
    422 that names the tiler."""
    r = client.post("/api/algebra", json={"op": "logical_divide", "args": ["(8,8):(1,8)", tiler]})
    assert r.status_code == 422 and r.json()["detail"].startswith("tiler: shape entries must be positive"), r.json()


@pytest.mark.parametrize(("op", "args"), [
    ("complement", ["(2,2):(3,8)", "16"]),  # "..., but CuTe would print 3:1 here, of size 3; ..."
    ("complement", ["(8,24):(9,97)", "2298"]),
    ("composition", ["(6,2):(8,2)", "4:4"]),
    ("logical_divide", ["(6,2):(8,2)", "4:4"]),
    ("left_inverse", ["(6,3):(2,1)"]),
    ("right_inverse", ["Sw<2,0,-7> o 4:1"]),
    ("complement", ["2:-1", "8"]),
])
def test_the_workbench_states_the_refusal_in_the_librarys_words(client, op, args):
    """The lesson splits the refusal (the condition, CuTe's print, the counterexample) but keeps its words: the page
    reads as the library's text, the joins included."""
    with pytest.raises(LayoutError) as exc:
        registry.get(op).fn(*registry.parse_args(registry.get(op), list(args)))
    assert str(exc.value) in _page_text(client, op, args)


@pytest.mark.parametrize(("op", "args"), [
    ("logical_divide", ["(2,1):(4,-1)", "<_, 2>"]),  # the tiler's 2 does not divide A's mode of size 1
    ("logical_divide", ["(4,3):(1,4)", "<_, 2>"]),
])
def test_a_divide_the_library_answers_is_answered_on_every_face(client, op, args):
    """The size note under a divide (its tiler does not divide A) must not refuse the answer: logical_divide with a
    ``_`` tiler mode answers even where zipped_divide of the same arguments is refused (zip2_by needs a pair)."""
    want = _library(op, tuple(registry.parse_args(registry.get(op), list(args))))
    assert not want.startswith("refused")
    r = client.post("/api/algebra", json={"op": op, "args": args})
    assert r.status_code == 200 and r.json()["result"] == want, r.json()
    assert f"= {want}" in _page_text(client, op, args)
