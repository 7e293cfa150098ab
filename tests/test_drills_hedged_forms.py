"""Answers a learner types around the key, on fresh seeds of every kind: a bound or an estimate in words (``at
least K``, ``K or more``, ``approximately K``), a negation (``not K``), a hedge after a comma (``row, or column``) and
a combining mark are never graded right; the key in LaTeX math (``$K$``, ``\\(K\\)``) or after an ``answer:`` label
is read as the key. Checked through the grader and through the JSON route a learner uses."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.drills.core import generate, kinds

SEEDS = range(17100, 17104)

BOUNDS = ("at least {k}", "at most {k}", "up to {k}", "{k} or more", "{k} or less", "approximately {k}",
          "about {k}", "roughly {k}", "{k}, roughly", "maybe {k}", "{k} at most", "no more than {k}")
WRAPPED = ("${k}$", "$$ {k} $$", "\\({k}\\)", "\\[ {k} \\]", "answer: {k}", "Answer = {k}", "The answer is {k}")


def drills() -> list[Any]:
    return [generate(k.kind, s) for k in kinds() for s in SEEDS]


def test_a_bound_or_estimate_in_words_is_never_right() -> None:
    bad = [(d.id, f.format(k=d.expected)) for d in drills() for f in BOUNDS
           if d.grade(f.format(k=d.expected)).correct]
    assert not bad, bad[:10]


def test_a_bound_or_estimate_after_a_number_is_never_right() -> None:
    for d in drills():
        if d.expected[-1:].isdigit() or d.expected[-1:] in ")%":
            assert not d.grade(d.expected + "+").correct, d.id


def test_the_key_in_latex_math_or_after_an_answer_label_is_read() -> None:
    bad = [(d.id, f.format(k=d.expected)) for d in drills() for f in WRAPPED
           if not d.grade(f.format(k=d.expected)).correct]
    assert not bad, bad[:10]


def test_a_negated_list_or_coverage_answer_is_never_right() -> None:
    for kind in ("tv_layout", "mma_registers", "copy_coverage"):
        for s in range(17100, 17110):
            d = generate(kind, s)
            for text in (f"not {d.expected}", f"never {d.expected}", f"except {d.expected}"):
                assert not d.grade(text).correct, (d.id, text)
    d = next(generate("copy_coverage", s) for s in range(17100, 17200)
             if generate("copy_coverage", s).expected.startswith("hole"))
    assert d.grade(f"no, {d.expected}").correct  # "does it cover? no, a hole at ..." names the right answer


@pytest.mark.parametrize("hedge", ["{k}, or {w}", "{k}; or {w}", "{k}: or {w}"])
def test_majorness_hedged_after_a_comma_is_not_an_answer(hedge: str) -> None:
    for s in SEEDS:
        d = generate("majorness", s)
        for w in {"row", "column", "neither"} - {d.expected}:
            g = d.grade(hedge.format(k=d.expected, w=w))
            assert not g.correct, (d.id, hedge)
        others = sorted({"row", "column", "neither"} - {d.expected})
        assert d.grade(f"{d.expected}, not {others[0]} or {others[1]}").correct, d.id
        assert d.grade(f"{d.expected}: not {others[0]}").correct, d.id


def test_a_combining_mark_is_refused_not_dropped() -> None:
    for d in drills():
        g = d.grade(d.expected + "\u0338")  # COMBINING LONG SOLIDUS OVERLAY: "K" struck through
        assert not g.correct and not g.readable, d.id


def test_the_json_route_grades_the_same(app: Any) -> None:
    c = TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False)
    for kind in ("tv_layout", "majorness", "sectors", "algebra_op"):
        d = generate(kind, 17105)
        for text, right in ((f"at least {d.expected}", False), (f"${d.expected}$", True),
                            (f"answer: {d.expected}", True)):
            r = c.post(f"/api/drills/{d.id}/answer", json={"answer": text})
            assert r.status_code == 200 and r.json()["correct"] is right, (d.id, text, r.json())


def test_a_layout_in_the_cute_dsl_or_pycute_spelling_is_read() -> None:
    from drill_forms import is_layout_answer, python_forms

    import algebra as A

    seen = 0
    for k in kinds():
        for s in range(17110, 17116):
            d = generate(k.kind, s)
            if not is_layout_answer(d) or " o " in d.expected:
                continue
            lay = A.parse(d.expected)
            for text in python_forms(lay):
                assert d.grade(text).correct, (d.id, text)
                seen += 1
            wrong = f"Layout({d.expected.split(':')[1]}, {d.expected.split(':')[0]})"  # shape and stride swapped
            try:
                w = A.parse(d.expected.split(":")[1] + ":" + d.expected.split(":")[0])
            except A.LayoutError:  # a stride 0 is no shape: the swap is not a layout at all
                assert not d.grade(wrong).correct, (d.id, wrong)
                continue
            if A.size(w) != A.size(lay) or any(w(i) != lay(i) for i in range(A.size(lay))):
                assert not d.grade(wrong).correct, (d.id, wrong)
    assert seen >= 40


def test_the_key_wrapped_in_markup_or_a_statement_is_not_an_answer() -> None:
    for d in drills():
        for text in (f"<script>{d.expected}</script>x", f"{d.expected}'; DROP TABLE attempts; --",
                     f"<b>{d.expected}</b>"):
            g = d.grade(text)
            assert not g.correct and not g.readable, (d.id, text)
    d = generate("banks", next(s for s in range(17100, 17200) if generate("banks", s).expected.startswith("Sw<")))
    b, m, s = d.expected[3:-1].split(",")
    assert d.grade(f"Swizzle<{b},{m},{s}>").correct and d.grade(f"cute::Swizzle<{b},{m},{s}>{{}}").correct


UNIT_WORDS = {"way": "ways", "wavefront": "wavefronts", "sector": "sectors", "bank": "banks", "lane": "lanes",
              "chunk": "chunks", "percent": "%", "": None}


def test_the_right_number_in_the_wrong_unit_is_not_right() -> None:
    """A count answered in another unit than the question's (``256 sectors`` for wavefronts, ``9 banks`` for an
    offset) is refused in every kind with a one-integer key; its own unit still reads."""
    from app.drills.parse_words import units_named

    ways = ("way", "wavefront")  # the N of a phase's N-way conflict is its wavefront count
    asked = {"banks:distinct": ("bank",), "banks:ways": ways, "banks:wavefronts": ways, "banks:ldmatrix_ways": ways,
             "natural_coord:offset": ("",), "read_rung:chunk": ("chunk",), "read_rung:next": ways,
             "read_rung:shift": ("bank",), "read_rung:wavefronts": ways, "triton_layout:store": ("wavefront",)}
    seen = set()
    for k in ("banks", "natural_coord", "read_rung", "triton_layout"):
        for s in range(17100, 17160):
            d = generate(k, s)
            if not d.expected.isdigit() or d.skill not in asked:
                continue
            seen.add(d.skill)
            unit = asked[d.skill]
            for other, word in UNIT_WORDS.items():
                if word is None:
                    continue
                text = f"{d.expected} {word}"
                assert d.grade(text).correct is (other in unit), (d.id, text)
            assert d.grade(d.expected).correct and units_named(f"{d.expected}-way bank conflict") == ["way"]
    assert len(seen) >= 7, seen


def test_a_second_answer_in_case_the_first_is_wrong_is_not_an_answer() -> None:
    for d in drills():
        for text in (f"{d.expected}, if not then 0", f"{d.expected}, otherwise 1", f"{d.expected} or else 2"):
            assert not d.grade(text).correct, (d.id, text)
    for s in range(17100, 17200):
        d = generate("copy_coverage", s)
        if d.expected != "covers":
            assert d.grade(f"{d.expected} (the only one)").correct, d.id
            for other in {"covers", "hole", "duplicate"} - {d.expected.split()[0]}:
                assert not d.grade(f"{d.expected} (or {other})").correct, (d.id, other)


def test_a_minus_sign_before_a_pair_is_not_the_pair() -> None:
    for kind in ("swizzle", "triton_layout", "mma_registers", "tv_layout"):
        for s in range(17100, 17112):
            d = generate(kind, s)
            if not d.expected.startswith("("):
                continue
            assert not d.grade("-" + d.expected).correct, (d.id, "-" + d.expected)
            assert not d.grade("- " + d.expected).correct, (d.id, "- " + d.expected)
            assert d.grade(d.expected).correct, d.id
