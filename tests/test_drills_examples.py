"""Properties over every drill kind on fresh seeds: a prompt's or an answer format's example is never a right answer
(it is read, and graded wrong), and a right answer written in any spelling a learner uses -- the listed ones of
drill_forms.accepted and the words of a whiteboard (``offset 7``, ``16 banks``, ``row 7, col 0``, ``8, 1/8``, hex
offsets, ``pad 8 bytes``, ``cute::Swizzle<3,3,3>``, the full swizzled tile) -- is read and graded right.

``LAYOUTLAB_DRILL_SEEDS`` sets the seeds per kind (40 by default); the seeds are drawn afresh from a fixed source
so they are not the 0..N the other drill tests walk.
"""

from __future__ import annotations

import os
import random
import re
from fractions import Fraction
from typing import Any

import pytest
from drill_forms import accepted

import algebra as A
from app.drills.core import Drill, generate, kinds

KINDS = [k.kind for k in kinds()]
N = min(int(os.environ.get("LAYOUTLAB_DRILL_SEEDS", "40")), 400)
SEEDS = random.Random(23).sample(range(10**6, 2**31 - 1), N)
#: Where a format or prompt shows an example: the text after "e.g." / "such as" up to a clause's end.
EXAMPLE = re.compile(r"(?:e\.g\.|such as) (.+?)(?=;| \(| or | is read|\)?$|\.\s)")
#: Fragments that are templates, not answers (placeholders, the Sw<B,M,S> pattern, the stride cue).
TEMPLATE = re.compile(r"\?|Sw<B,M,S>|\bthe\b|\brow\b|\bcol\b")


#: Kinds whose formats show an example answer.
WITH_EXAMPLES = ("natural_coord", "index_formula", "symbolic", "banks", "algebra_op", "vector", "defined",
                 "design_view", "tv_layout", "sectors", "arith")


def shown_examples(d: Drill) -> list[str]:
    """Every concrete example the format and the prompt show (templates aside)."""
    out = []
    for text in (d.answer_format, d.prompt):
        for m in EXAMPLE.finditer(text):
            frag = m.group(1).strip().rstrip(".")
            if re.search(r"\d", frag) and not TEMPLATE.search(frag):
                out.append(frag)
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_no_example_is_the_key(kind: str) -> None:
    shown = 0
    for seed in SEEDS:
        d = generate(kind, seed)
        where = f"{kind}-{seed} ({d.variant})"
        assert "{ex}" not in d.answer_format, where
        for ex in d.examples:
            assert ex in d.answer_format, (where, ex, d.answer_format)
        for ex in d.examples + shown_examples(d):
            g = d.grade(ex)
            assert not g.correct, f"{where}: the example {ex!r} is a right answer (key {d.expected!r})"
            shown += 1
        for ex in d.examples:
            assert d.grade(ex).readable, f"{where}: the example {ex!r} is not even readable"
    assert shown or kind not in WITH_EXAMPLES, kind


def test_the_example_is_not_the_key_where_the_old_one_was() -> None:
    """The old fixed examples were the key of some drills (i*lda + j of a row-major symbolic formula, the sheet's
    own (1,5) (1,(1,2)) 16, 8, 50%); such a drill now shows another example."""
    hits = 0
    for seed in range(400):
        d = generate("symbolic", seed)
        if d.variant.startswith("formula") and re.fullmatch(r"i\*\w+ \+ j", d.expected):
            assert d.expected not in d.answer_format and d.examples, d.answer_format
            hits += 1
        s = generate("sectors", seed)
        if s.expected == "8, 50%":
            assert "8, 50%" not in s.answer_format, s.answer_format
    assert hits >= 5


def _swizzle_forms(key: str, layout: str) -> list[str]:
    b, m, s = re.fullmatch(r"Sw<(\d+),(\d+),(\d+)>", key).groups()
    static = re.sub(r"(\d+)", r"_\1", layout)
    return [f"cute::Swizzle<{b},{m},{s}>", f"Swizzle<{b},{m},{s}>{{}}", f"{key} o 0 o {layout}", f"{key} o {layout}",
            f"cute::Swizzle<{b},{m},{s}>{{}} o _0 o {static}",
            f"composition(Swizzle<{b},{m},{s}>{{}}, {layout})", f"B={b} M={m} S={s}"]


def spoken(d: Drill) -> list[str]:
    """Right answers as people write them on a whiteboard: labels, units, hex, fractions, other C++ spellings."""
    e, v = d.expected, d.variant
    out: list[str] = []
    if re.fullmatch(r"\d+", e):
        out += [f"= {e}", hex(int(e)), f"the answer is {e}"]
        if d.kind == "natural_coord" or v in ("coords", "spot"):
            out.append(f"offset {e}")
        if v == "distinct":
            out += [f"{e} banks", f"{e} distinct banks"]
        if v in ("ways",):
            out += [f"{e}-way", f"{e}-way bank conflict", f"{e} way"]
        if v == "ldmatrix_ways":
            out += [f"{e} wavefronts"]
    if re.fullmatch(r"\d+(, \d+)+", e) and d.kind in ("swizzle", "banks", "offsets", "tiled_view", "partition"):
        nums = e.split(", ")
        out += [", ".join(hex(int(x)) for x in nums), " and ".join(nums)]
        if d.kind == "swizzle" or v == "coords":
            out.append(", ".join(f"offset {x}" for x in nums))
        if d.kind == "banks":
            out.append(", ".join(f"bank {x}" for x in nums))
    if d.kind == "natural_coord" and v in ("idx", "flat"):
        out += [f"natural {e}", f"the natural coordinate is {e}", f"(i,(j,k)) = {e}"]
    if d.kind == "natural_coord" and v == "three":
        a, b, c = re.fullmatch(r"(\(.*?\)) (\(.*\)) (\d+)", e).groups()
        out += [f"2-D {a}, natural {b}, offset {c}", f"{a}; {b}; {c}", f"2-D: {a}, natural: {b}, offset: {c}"]
    if d.kind == "swizzle" and v == "inverse" or d.kind == "tv_layout" and v == "mma_pos":
        r, c = re.fullmatch(r"\((\d+),(\d+)\)", e).groups()
        out += [f"row {r}, col {c}", f"col {c}, row {r}", f"r={r} c={c}", f"(row, col) = ({r}, {c})",
                f"row {r} column {c}", f"({r}, {c})"]
    if d.kind == "sectors":
        s, u = e.split(", ")
        frac = Fraction(u[:-1]) / 100
        out += [f"{s}, {frac.numerator}/{frac.denominator}", f"{s} sectors, {u}", f"{s} sectors at {u} utilization",
                f"utilization {u}, {s} sectors"]
    if d.kind == "banks" and v.endswith("fix"):
        if e.startswith("Sw<"):
            out += _swizzle_forms(e, d.data["layout"])
        elif e.startswith("pad "):
            p, eb = int(e.split()[1]), d.data["ebytes"]
            out += [f"pad {p * eb} bytes", f"pad {p} elements", f"padding of {p}"]
            if p * eb % 4 == 0:
                out.append(f"pad {p * eb // 4} words")
    if d.kind == "banks" and v == "formula":
        out += [f"bank = {e}", e.replace(" mod ", " % ")]
    if d.kind == "majorness":
        out += {"row": ["row major", "it is row-major", "row-major (LayoutRight)", "Row", "row-major order",
                        "row major, because mode 1 has stride 1", "row-major, not column-major", "row major layout"],
                "column": ["column major", "col-major", "it's column-major", "LayoutLeft{}", "column-major order",
                           "column-major: mode 0 has stride 1"],
                "neither": ["neither", "Neither.", "it is neither", "none of them", "not row or column major",
                            "neither, the strides do not walk rows or columns"]}[e]
    if d.kind == "tiled_view" and v == "formula":
        out += [f"offset = {e}", e.replace("*", "")]
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_right_answers_in_every_spelling_are_read(kind: str) -> None:
    for seed in SEEDS:
        d = generate(kind, seed)
        for form in accepted(d) + spoken(d):
            g = d.grade(form)
            assert g.readable and g.correct, f"{kind}-{seed} ({d.variant}): {form!r} for {d.expected!r}: {g.reason}"


def test_the_swizzled_tile_is_the_bare_swizzle_both_ways() -> None:
    """Sw<B,M,S> o 0 o T (T the question's tile) grades exactly as the bare Sw<B,M,S>, right or wrong."""
    n = 0
    fixes = [d for d in (generate("banks", s) for s in range(200)) if d.variant == "fix"]
    for d in fixes[::4]:
        tile = d.data["layout"]
        for b in range(1, 6):
            for m in range(0, 2):
                for s in range(b, 7):
                    bare = d.grade(f"Sw<{b},{m},{s}>")
                    for form in (f"Sw<{b},{m},{s}> o 0 o {tile}", f"Sw<{b},{m},{s}> o {tile}",
                                 f"cute::Swizzle<{b},{m},{s}>"):
                        g = d.grade(form)
                        assert g.readable and g.correct == bare.correct, (d.id, form, g.reason, bare.reason)
                        n += 1
    assert n > 300


def test_a_padding_in_bytes_or_words_means_elements() -> None:
    from app.drills.parsing import AnswerError, parse_padding

    assert parse_padding("pad 8 bytes", 2) == 4 and parse_padding("pad 8 bytes", 8) == 1
    assert parse_padding("pad 1 word", 2) == 2 and parse_padding("pad 2 words", 4) == 2
    assert parse_padding("pad 3", 2) == 3 and parse_padding("row stride 136 bytes", 4) == -34
    with pytest.raises(AnswerError):
        parse_padding("pad 3 bytes", 2)
    with pytest.raises(AnswerError):
        parse_padding("pad 8 bytes")
    d = next(generate("banks", s) for s in range(400) if generate("banks", s).variant == "fix"
             and generate("banks", s).data["ebytes"] == 4 and generate("banks", s).expected.startswith("Sw<5,0"))
    assert d.grade("pad 4 bytes").correct and d.grade("pad 1 word").correct  # a pitch of 33 floats
    assert not d.grade("pad 8 bytes").correct and not d.grade("pad 2 bytes").readable


def test_readers_of_words_refuse_what_they_cannot_read() -> None:
    from app.drills.parse_words import parse_coord, parse_rc, parse_sector_answer
    from app.drills.parsing import AnswerError, parse_int

    for text in ("not 7", "seven", "7 8", "offset 7 or 8", "1" + " " * 3998 + "!"):
        with pytest.raises(AnswerError):
            parse_int(text)
    for text in ("row 7", "row 7, row 8", "(1,2,3)", "up 1, left 2"):
        with pytest.raises(AnswerError):
            parse_rc(text)
    for text in ("8", "8, 1/0", "8.5, 50%", "8 sectors, maybe 50%"):
        with pytest.raises(AnswerError):
            parse_sector_answer(text)
    with pytest.raises(AnswerError):
        parse_coord("not (1,(1,2))")
    assert parse_int("0x1c") == 28 and parse_rc("col 0, row 7") == (7, 0)
    assert parse_sector_answer("8, 1/8") == (8, Fraction(1, 8), Fraction(0))


def test_a_spoken_choice_with_another_class_in_its_reason_is_not_read() -> None:
    d = next(generate("majorness", s) for s in range(200) if generate("majorness", s).expected == "row")
    for text in ("row-major, column-major", "row-major: it is LayoutLeft", "row major since neither"):
        g = d.grade(text)
        assert not g.readable and not g.correct, text


def test_layouts_are_read_in_cute_cpp_spellings() -> None:
    from app.drills.common import read_layout

    want = A.parse("Sw<3,3,3> o 0 o (8,64):(64,1)")
    for text in ("cute::Swizzle<3,3,3>{} o (_8,_64):(_64,_1)", "composition(Swizzle<3,3,3>{}, (8,64):(64,1))",
                 "composition(Swizzle<3,3,3>{}, Layout<Shape<_8,_64>,Stride<_64,_1>>{})"):
        assert str(read_layout(text)) == str(want), text
    assert str(read_layout("cute::Layout<cute::Shape<_4,_2>,cute::Stride<_1,_4>>{}")) == "(4,2):(1,4)"


def _any(kind: str, test: Any, seeds: range = range(2000)) -> Drill:
    return next(d for d in (generate(kind, s) for s in seeds) if test(d))


def test_a_duplicate_cell_is_named() -> None:
    for variant, who in (("copy", "thread"), ("ldmatrix", "lane")):
        d = _any("tv_layout", lambda x, v=variant: x.variant == v)
        cells = d.expected.split(" ")
        g = d.grade(" ".join(cells[1:] + [cells[1]]))
        assert not g.correct and g.readable and f"{cells[1]} is listed 2 times" in g.reason, g.reason
        assert f"1 of {who} " in g.reason and "0 of" not in g.reason, g.reason
        g = d.grade(" ".join(cells + [cells[0]]))
        assert not g.correct and f"{cells[0]} is listed 2 times" in g.reason and "missing" not in g.reason, g.reason
