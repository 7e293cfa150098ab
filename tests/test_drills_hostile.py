"""Hostile and hedged answers on fresh drills (seeds 16100-16199): two formulas or two answers in one text, text
around the key, and the routes' answers to them (a verdict or a 4xx, never a 500)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.drills.core import generate


@pytest.fixture()
def client(app: Any) -> TestClient:
    return TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False)


def _symbolic(variant: str) -> Any:
    for seed in range(16100, 16200):
        d = generate("symbolic", seed)
        if d.variant.startswith(variant):
            return d
    raise AssertionError(f"no symbolic {variant} drill in 16100-16199")


@pytest.mark.parametrize("variant", ["element", "formula"])
def test_two_formulas_in_one_answer_are_unreadable_not_a_crash(client: TestClient, variant: str) -> None:
    d = _symbolic(variant)
    key = d.expected
    texts = [f"{key}\n{key} + 1", f"{key}\n{key}"] + ([f"{key} 7", f"{key} {key}"] if key[-1].isdigit() else [])
    for text in texts:
        g = d.grade(text)
        assert not g.correct and not g.readable, (d.id, text, g)
        r = client.post(f"/api/drills/{d.id}/answer", json={"answer": text})
        assert r.status_code == 200 and r.json()["readable"] is False, (d.id, text, r.status_code, r.text[:200])


@pytest.mark.parametrize("kind", ["symbolic", "index_formula"])
def test_a_formula_broken_over_lines_reads_as_one(client: TestClient, kind: str) -> None:
    d = generate(kind, next(s for s in range(16100, 16200) if "+" in generate(kind, s).expected))
    head, _, tail = d.expected.rpartition("+")
    g = d.grade(f"{head.strip()}\n+ {tail.strip()}")
    assert g.correct, (d.id, d.expected, g)
    r = client.post(f"/api/drills/{d.id}/answer", json={"answer": f"{head.strip()}\n+ {tail.strip()} + 1"})
    assert r.status_code == 200 and r.json()["correct"] is False and r.json()["readable"] is True


def _first(kind: str, test: Any) -> Any:
    for seed in range(16100, 16200):
        d = generate(kind, seed)
        if test(d):
            return d
    raise AssertionError(f"no {kind} drill in 16100-16199 passes the test")


def test_defined_two_verdicts_in_one_answer_are_never_right(client: TestClient) -> None:
    for key in ("defined", "shape and stride"):
        d = _first("defined", lambda d, key=key: d.expected == key)
        for text in ("defined or both", "both or defined", "defined, both", "both\ndefined", "defined; both",
                     "shape or stride", "either shape or stride", "shape / stride", "shape and stride or shape",
                     "shape fails or stride fails", "shape and stride, shape", "shape\nshape and stride",
                     "shape, shape and stride"):
            g = d.grade(text)
            assert not g.correct and not g.readable, (d.id, text, g)
        r = client.post(f"/api/drills/{d.id}/answer", json={"answer": "both, defined"})
        assert r.status_code == 200 and r.json()["correct"] is False and r.json()["readable"] is False
        assert "expected" not in r.json()
    d = _first("defined", lambda d: d.expected == "defined")
    assert d.grade("both hold").correct and d.grade("both are ok").correct and d.grade("none").correct
    d = _first("defined", lambda d: d.expected == "shape and stride")
    assert d.grade("both").correct and d.grade("both fail, so it is not defined").correct


def test_umma_descriptor_hedges_and_stray_words_are_never_right(client: TestClient) -> None:
    d = _first("umma_desc", lambda d: d.expected.startswith("SWIZZLE_128B,"))
    typ, lbo, sbo = (p.split("=")[-1] for p in d.expected.split(", "))
    hedges = [f"SWIZZLE_128B or SWIZZLE_64B, LBO={lbo}, SBO={sbo}",
              f"SWIZZLE_64B or SWIZZLE_128B, LBO={lbo}, SBO={sbo}",
              f"{d.expected}, not 128B", f"SWIZZLE_128B, LBO={lbo} or 16, SBO={sbo}", f"{d.expected}, SBO=16",
              f"{d.expected}, LBO={lbo}", f"SWIZZLE_128B hello, LBO={lbo}, SBO={sbo}",
              f"<script>{d.expected}</script>x", f"{d.expected}\nSWIZZLE_128B, LBO={lbo}, SBO={int(sbo) + 16}"]
    for text in hedges:
        g = d.grade(text)
        assert not g.correct, (d.id, text, g)
    r = client.post(f"/api/drills/{d.id}/answer", json={"answer": hedges[0]})
    assert r.status_code == 200 and r.json()["correct"] is False and "expected" not in r.json()
    for text in (d.expected, f"128B swizzle, LBO = {lbo} bytes, SBO = {sbo} B", f"layout type 2, LBO={lbo}, SBO={sbo}",
                 f"sw128, sbo: {sbo}, lbo: {lbo}", f"LBO={lbo} SBO={sbo} swizzle 128B"):
        assert d.grade(text).correct, (d.id, text, d.grade(text))
    assert not d.grade(f"SWIZZLE_32B, LBO={lbo}, SBO={sbo}").correct


def test_the_key_in_backticks_after_an_equals_sign_or_ending_a_sentence_is_read() -> None:
    for kind in ("index_formula", "symbolic", "offsets", "tmem_lanes", "majorness", "algebra_op", "natural_coord",
                 "read_rung", "layout_stats"):
        d = generate(kind, 16120)
        k = d.expected
        forms = [f"`{k}`", f"```{k}```"] + ([f"= {k}", f"{k}."] if "\n" not in k else [])
        for text in forms:
            g = d.grade(text)
            assert g.correct, (d.id, k, text, g.reason)
        assert not d.grade(f"`{k}` or `{k}1`").correct


def test_a_coordinate_stride_in_b_is_refused_by_composition_not_a_crash(client: TestClient) -> None:
    import algebra as A

    for b in ("(4,6):((6),1)", "4:(1)", "(4,6):(6,(1,0))"):
        with pytest.raises(A.LayoutError, match="coordinate"):
            A.composition(A.parse("(6,4):(1,6)"), A.parse(b))
    with pytest.raises(A.LayoutError, match="coordinate"):
        A.composition(A.parse("(6,4):(1,6)"), (A.parse("4:(1)"), A.Layout(2, 1)))
    r = client.post("/api/algebra", json={"op": "composition", "args": ["(6,4):(1,6)", "<4:(1), 2:1>"]})
    assert r.status_code == 422 and "coordinate" in r.json()["detail"] and "AttributeError" not in r.json()["detail"]
    d = _first("design_view", lambda d: ":(" in d.expected and re.search(r":\(\d+,", d.expected))
    text = re.sub(r":\((\d+),", r":((\1),", d.expected, count=1)
    g = d.grade(text)
    assert not g.correct and g.readable, (d.id, text, g)
    r = client.post(f"/api/drills/{d.id}/answer", json={"answer": text})
    assert r.status_code == 200 and r.json()["correct"] is False


@pytest.mark.parametrize("variant", ["fix", "ldmatrix_fix"])
def test_a_swizzle_fix_in_cute_cpp_spelling_is_read(client: TestClient, variant: str) -> None:
    d = _first("banks", lambda d: d.variant == variant and d.expected.startswith("Sw<"))
    b, m, s = re.findall(r"\d+", d.expected)
    r, c, p = re.search(r"\((\d+),(\d+)\):\((\d+),1\)", d.prompt).groups()
    right = f"composition(Swizzle<{b},{m},{s}>{{}}, Layout<Shape<_{r},_{c}>,Stride<_{p},_1>>{{}})"
    assert d.grade(right).correct, (d.id, right, d.grade(right).reason)
    cpp = f"make_composed_layout(Swizzle<{b},{m},{s}>{{}}, _0{{}}, make_layout(make_shape({r},{c}), LayoutRight{{}}))"
    wrong = f"composition(Swizzle<{b},{m},{s}>{{}}, Layout<Shape<_{r},_{c}>,Stride<_1,_{r}>>{{}})"
    assert not d.grade(wrong).correct, (d.id, wrong)
    r = client.post(f"/api/drills/{d.id}/answer", json={"answer": right})
    assert r.status_code == 200 and r.json()["correct"] is True
    d.grade(cpp)  # another C++ form: read or refused, never a crash


@pytest.mark.parametrize("kind", ["majorness", "explain"])
def test_a_choice_with_an_alternative_in_parentheses_is_never_right(client: TestClient, kind: str) -> None:
    d = generate(kind, 16100)
    other = next(w for w in ("row", "column", "neither", "a", "b", "c", "d") if w != d.expected
                 and (kind == "explain") == (len(w) == 1))
    for text in (f"{d.expected} (or {other})", f"{d.expected} (or not)", f"{d.expected} (maybe {other})"):
        g = d.grade(text)
        assert not g.correct and not g.readable, (d.id, text, g)
    r = client.post(f"/api/drills/{d.id}/answer", json={"answer": f"{d.expected} (or {other})"})
    assert r.status_code == 200 and r.json()["correct"] is False and "expected" not in r.json()
    if kind == "majorness":
        assert d.grade(f"{d.expected} (the columns are adjacent)").correct


@pytest.mark.parametrize("kind", ["banks", "read_rung", "sectors", "triton_layout", "layout_stats", "tmem_lanes"])
def test_a_bound_or_an_estimate_in_front_of_the_key_is_never_right(client: TestClient, kind: str) -> None:
    d = generate(kind, 16110)
    for text in (f">{d.expected}", f"<= {d.expected}", f">= {d.expected}", f"~{d.expected}", f"≈ {d.expected}",
                 f"<{d.expected}", f"=> {d.expected}"):
        g = d.grade(text)
        assert not g.correct and not g.readable, (d.id, text, g)
    r = client.post(f"/api/drills/{d.id}/answer", json={"answer": f"> {d.expected}"})
    assert r.status_code == 200 and r.json()["correct"] is False and "expected" not in r.json()
    assert d.grade(d.expected).correct


def test_a_tiler_in_angle_brackets_is_still_read() -> None:
    d = _first("design_view", lambda d: d.variant != "transpose")
    assert d.grade("<4:2, 8:1>").readable


def test_overlap_with_a_second_answer_after_it_is_never_right(client: TestClient) -> None:
    d = _first("defined", lambda d: d.expected == "overlap")
    for text in ("overlap; defined, 1:0", "overlap, defined", "overlap, or defined", "overlap, (2,2):(1,2)"):
        g = d.grade(text)
        assert not g.correct and not g.readable, (d.id, text, g)
    for text in ("overlap (not injective)", "no, the modes overlap", "overlap: offset 4 is reached twice"):
        assert d.grade(text).correct, (d.id, text)
    r = client.post(f"/api/drills/{d.id}/answer", json={"answer": "overlap; defined, 1:0"})
    assert r.status_code == 200 and r.json()["correct"] is False and "expected" not in r.json()
