"""Signs, spellings of integers and hostile characters in drill answers, on fresh seeds (14300-14399).

- A minus sign is part of the number: ``(-8,7)`` is not ``(8,7)``, ``-16, 100%`` is not ``16, 100%``, ``-96-111`` is
  no lane range, ``defined, -2:4`` is not the complement ``2:4``.
- An integer written ``+8``, ``08`` or ``_8`` is 8 in every notation a kind reads (layouts, pairs, formulas, swizzles,
  descriptors).
- Characters no answer is written with (control and invisible characters, digits other than ASCII 0-9) and brackets
  nested past the cap make an answer unreadable (never read as the number they resemble), on the JSON route and the
  page route alike, and an unreadable answer is never recorded.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from app.drills.core import generate, kinds

SEEDS = range(14300, 14400)
INT = re.compile(r"(?<![\w.@<])(\d+)(?![\w.>])")


def drill_of(kind: str, variant: str) -> Any:
    """The first drill of ``kind`` in this file's seed range whose variant starts with ``variant``."""
    for s in SEEDS:
        d = generate(kind, s)
        if d.variant.split("/")[0] == variant:
            return d
    raise AssertionError(f"no {kind}:{variant} in seeds {SEEDS}")


def negate(text: str, n: int) -> str:
    """``text`` with its n-th integer written with a minus sign (0 as -1)."""
    m = list(INT.finditer(text))[n]
    value = m.group(1)
    return text[:m.start()] + ("-" + value if value.strip("0") else "-1") + text[m.end():]


@pytest.mark.parametrize("kind,variant", [("swizzle", "inverse"), ("triton_layout", "holds"), ("tv_layout", "mma_pos"),
                                          ("mma_registers", "register"), ("sectors", "blocked"),
                                          ("sectors", "thread"), ("tmem_lanes", "16dp256b"),
                                          ("tmem_lanes", "32dp32b"), ("defined", "complement")])
@pytest.mark.parametrize("which", [0, 1])
def test_a_minus_sign_is_never_dropped(kind: str, variant: str, which: int) -> None:
    d = drill_of(kind, variant)
    assert d.grade(d.expected).correct
    if len(INT.findall(d.expected)) <= which:
        pytest.skip("one number only")
    wrong = negate(d.expected, which)
    assert not d.grade(wrong).correct, (d.id, d.expected, wrong)


def test_lane_ranges_with_stray_signs_are_refused() -> None:
    d = drill_of("tmem_lanes", "16dp256b")
    first, last = (int(x) for x in d.expected.split("-"))
    for wrong in (f"-{first}-{last}", f"{first}--{last}", f"{first}-{last}.5", f"lanes {first} - {last} x"):
        assert not d.grade(wrong).correct, wrong
    for right in (f"{first}-{last}", f"lanes {first} to {last}", f"[{first}, {last}]", f"+{first}-+{last}",
                  f"{first}..{last}"):
        assert d.grade(right).correct, right


def test_a_label_sign_inside_parentheses_cuts_nothing() -> None:
    """``((1:2):(3:4))`` is no labelled integer (its colons are inside parentheses); ``L(16) = 25`` still is."""
    d = drill_of("banks", "ldmatrix_ways")
    n = int(d.expected)
    assert not d.grade(f"((1:2):(3:{n}))").correct
    assert d.grade(f"L(16) = {n}").correct
    assert d.grade(f"L(3,(1,2)): {n}").correct
    assert d.grade(f"{n}-way").correct
    for wrong in (f"100000000000000000000:{n}", f"16:{n}"):  # a layout n:d is no labelled integer
        g = d.grade(wrong)
        assert not g.correct and not g.readable, wrong


def spellings(text: str) -> list[str]:
    return [INT.sub(lambda m: "+" + m.group(1), text), INT.sub(lambda m: "0" + m.group(1), text),
            INT.sub(lambda m: "_" + m.group(1), text)]


@pytest.mark.parametrize("kind", [k.kind for k in kinds()])
def test_plus_leading_zero_and_underscore_integers_are_the_key(kind: str) -> None:
    for s in list(SEEDS)[:12]:
        d = generate(kind, s)
        for form in spellings(d.expected):
            g = d.grade(form)
            assert g.correct, (d.id, d.expected, form, g.reason)


def test_formulas_read_leading_zeros_and_compile_time_integers() -> None:
    d = drill_of("tiled_view", "formula")
    assert d.grade(INT.sub(lambda m: "0" + m.group(1), d.expected)).correct
    assert d.grade(INT.sub(lambda m: "_" + m.group(1), d.expected)).correct
    d = drill_of("index_formula", "formula")
    assert d.grade("offset = " + INT.sub(lambda m: "0" + m.group(1), d.expected)).correct


def test_a_failed_shape_condition_prints_no_layout() -> None:
    """CuTe stops at a static_assert when the shape condition fails: naming the right conditions and then a layout
    CuTe would print is not the answer."""
    for s in SEEDS:
        d = generate("defined", s)
        if d.variant == "composition" and d.expected in ("shape", "shape and stride"):
            break
    else:
        raise AssertionError("no shape-failing composition drill")
    assert d.grade(d.expected).correct
    assert not d.grade(f"{d.expected}, (2,2):(4,1)").correct
    for stray in (f"{d.expected} 999", f"{d.expected} {'9' * 60}"):  # a number that is no layout is not read past
        g = d.grade(stray)
        assert not g.correct and not g.readable, stray


HOSTILE = ["\x00", "\u200b", "\u202e", "\ufeff", "\x07"]
DIGITS = [str.maketrans("0123456789", "０１２３４５６７８９"), str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"),
          str.maketrans("0123456789", "𝟎𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖𝟗")]


@pytest.mark.parametrize("kind", [k.kind for k in kinds()])
def test_hostile_characters_are_unreadable(kind: str) -> None:
    for s in list(SEEDS)[:6]:
        d = generate(kind, s)
        answers = [d.expected + ch for ch in HOSTILE] + [d.expected[:1] + "\u200b" + d.expected[1:]]
        if re.search(r"\d", d.expected):
            answers += [d.expected.translate(t) for t in DIGITS] + [d.expected + "²"]
        answers += ["(" * 300 + d.expected + ")" * 300, "<" * 300, "(" * 3000]
        for a in answers:
            g = d.grade(a)
            assert not g.correct and not g.readable, (d.id, ascii(a[:40]), g.reason)
            assert g.reason


def test_hostile_answers_on_both_routes_are_graded_and_never_recorded(client: Any) -> None:
    d = drill_of("swizzle", "inverse")
    fresh = client.__class__(client.app, raise_server_exceptions=False)  # its own learner cookie
    with fresh:
        before = fresh.get("/api/drills/progress").json()
        for a in (d.expected + "\x00", d.expected.translate(DIGITS[0]), "(" * 300 + d.expected + ")" * 300):
            r = fresh.post(f"/api/drills/{d.id}/answer", json={"answer": a})
            assert r.status_code == 200, r.text
            body = r.json()
            assert body["correct"] is False and body["readable"] is False and "expected" not in body
            r = fresh.post("/drills/answer", data={"id": d.id, "answer": a}, headers={"HX-Request": "true"})
            assert r.status_code == 200
            assert "could not read the answer" in r.text
        assert fresh.get("/api/drills/progress").json() == before
        r = fresh.post(f"/api/drills/{d.id}/answer", json={"answer": "x" * 65536})
        assert r.status_code == 422
        r = fresh.post(f"/api/drills/{d.id}/answer", json={"answer": negate(d.expected, 0)})
        assert r.status_code == 200 and r.json()["readable"] and not r.json()["correct"]
        r = fresh.post(f"/api/drills/{d.id}/answer", json={"answer": INT.sub(lambda m: "+" + m.group(1), d.expected)})
        assert r.json()["correct"] is True


@pytest.mark.parametrize("did", ["offsets-\u0661", "offsets-\uff11", "offsets-1\u0663", "offsets-\U0001d7cf"])
def test_a_drill_id_is_written_with_ascii_digits(client: Any, did: str) -> None:
    """``offsets-١`` is no drill id (it was graded as offsets-1): 404 on the JSON routes and the page routes."""
    assert client.post(f"/api/drills/{did}/answer", json={"answer": "1"}).status_code == 404
    assert client.post(f"/api/drills/{did}/reveal", json={}).status_code == 404
    assert client.post(f"/api/drills/{did}/hint", json={"level": 1}).status_code == 404
    assert client.post("/drills/answer", data={"id": did, "answer": "1"}).status_code == 404
    assert client.post("/drills/reveal", data={"id": did}).status_code == 404


def pycute(t: Any) -> str:
    """A tuple as pycute prints it (Python's repr: ``(24,)`` for a 1-tuple, ``(4, 8)``)."""
    if isinstance(t, tuple):
        return "(" + ", ".join(pycute(x) for x in t) + ("," if len(t) == 1 else "") + ")"
    return str(t)


@pytest.mark.parametrize("kind", ["algebra_op", "vector", "transpose_view", "design_view", "tiled_view", "tv_layout"])
def test_pycute_prints_of_the_key_are_the_key(kind: str) -> None:
    """pycute prints a layout as Python tuples: ``(4, 8):(1, 4)``, and a rank-1 tuple with a trailing comma,
    ``(24,):(1,)``; both are the key."""
    import algebra as A

    seen = 0
    for s in SEEDS:
        d = generate(kind, s)
        if ":" not in d.expected or d.variant.split("/")[0] in ("divide_tile", "prove", "spot", "formula", "mma_owner",
                                                                "mma_pos", "copy", "ldmatrix", "max_common_vector"):
            continue
        lay = A.parse(d.expected)
        forms = [f"{pycute(lay.shape)}:{pycute(lay.stride)}"]
        if isinstance(lay.shape, int):
            forms.append(f"({lay.shape},):({lay.stride},)")
        for form in forms:
            g = d.grade(form)
            assert g.correct, (d.id, d.expected, form, g.reason)
        seen += 1
    assert seen


def test_symbolic_formulas_right_only_below_some_size_are_wrong() -> None:
    """A symbolic answer is graded at admissible values of its symbols; one that agrees with the layout only while
    ``lda`` (or ``N``) stays below a bound (``lda % 5000``, ``lda // 5200``, ``N % 33``) must meet a value past it."""
    for s in list(SEEDS)[:40]:
        d = generate("symbolic", s)
        e = d.expected
        if not d.variant.startswith("formula"):
            continue
        names = re.findall(r"\b(ld\w*|[MNB])\b", e)
        if not names:
            continue
        sym = names[0]
        assert d.grade(e).correct
        for bound in (5000, 2_000_000) if sym.startswith("ld") else (33, 90):  # sizes are probed up to about 100
            tricked = re.sub(rf"\b{sym}\b", f"({sym} % {bound})", e, count=1)
            assert not d.grade(tricked).correct, (d.id, e, tricked)
            floor = f"{e} + {sym} // {bound}"
            assert not d.grade(floor).correct, (d.id, e, floor)
