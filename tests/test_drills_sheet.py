"""The whiteboard sheet is drillable with its own numbers, prompts state the conventions their keys depend on, and
the explain drills give no length cue."""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any

import algebra as A
from app.drills import sheet
from app.drills.core import Drill, generate
from app.drills.whiteboard import SHEET

SEEDS = range(1500)


def _find(kind: str, test: Any) -> Drill | None:
    return next((d for d in (generate(kind, s) for s in SEEDS) if test(d)), None)


def test_part_4_of_the_sheet_is_drilled_with_its_numbers() -> None:
    """(3,(2,3)):(3,(12,1)) at 1-D 16 is (1,5) and (1,(1,2)), offset 3 + 12 + 2 = 17."""
    three = _find("natural_coord", lambda d: d.variant == "three" and d.data["layout"] == sheet.L4)
    assert three is not None and three.data["x"] == 16 and three.expected == "(1,5) (1,(1,2)) 17"
    assert three.grade("(1,5) (1,(1,2)) 17").correct and not three.grade("(1,5) (1,(1,2)) 16").correct
    idx = _find("natural_coord", lambda d: d.variant == "idx" and d.data["shape"] == (3, (2, 3)) and d.data["x"] == 16)
    assert idx is not None and idx.expected == "(1,(1,2))"
    flat = _find("natural_coord", lambda d: d.variant == "flat" and d.data["coord"] == (1, 5)
                 and d.data["shape"] == (3, (2, 3)))
    assert flat is not None and flat.expected == "(1,(1,2))"
    off = _find("natural_coord", lambda d: d.variant == "offset" and d.data["layout"] == sheet.L4)
    assert off is not None and off.expected == "17" and off.data["x"] == 16


def _sheet_numbers(d: Drill) -> bool:
    """Whether a drill carries the sheet's own numbers for its part."""
    x = d.data
    if d.kind == "index_formula":
        return x["layout"] in (sheet.L1, sheet.L3)
    if d.kind == "offsets":
        return x["layout"] in (sheet.L1, sheet.L2, sheet.L3) and (d.variant == "table" or x["coords"] in (
            sheet.COORDS_12, sheet.COORDS_3))
    if d.kind == "natural_coord":
        return x.get("layout") == sheet.L4 or x.get("shape") in ((3, (2, 3)), (2, (2, 2)))
    if d.kind == "majorness":
        return x["layout"] == sheet.L3
    if d.kind in ("transpose_view", "design_view"):
        return x["matrix"] == sheet.L5
    if d.kind == "tiled_view":
        return x["matrix"] == sheet.L6 and tuple(x["tile"]) == sheet.TILE6 and (
            d.variant != "spot" or [tuple(map(tuple, p)) for p in x["picks"]] == sheet.SPOTS6)
    if d.kind == "banks":
        return x["col"] == sheet.COL7 and x["layout"] in ("(32,32):(32,1)", "(32,32):(33,1)", "(32,128):(128,1)")
    return d.kind == "explain"


def test_every_question_of_the_sheet_is_in_the_session_with_its_own_numbers_among_the_variants() -> None:
    """Each slot of the whiteboard sheet, its choice of a swizzle for a 32- and a 128-word pitch too, is met by some
    drill carrying the sheet's own numbers."""
    kinds = Counter(kind for _, qs in SHEET for kind, _ in qs)
    assert kinds["banks"] == 7 and len(SHEET[6][1]) == 8 and len(SHEET[2][1]) == 5 and len(SHEET[4][1]) == 4
    fix = [t for k, t in SHEET[6][1] if k == "banks"]
    for label, qs in SHEET:
        for kind, test in qs:
            d = _find(kind, lambda d, t=test: t(d) and _sheet_numbers(d))
            assert d is not None, (label, kind)
    pitches = {_find("banks", lambda d, t=t: t(d)).data["layout"] for t in (fix[4], fix[6])}
    assert pitches == {"(32,32):(32,1)", "(32,128):(128,1)"}, pitches


def test_prompts_state_their_conventions() -> None:
    past = exact = 0
    for seed in range(600):
        d = generate("algebra_op", seed)
        if d.variant == "divide_tile":
            a, b = (A.parse(t) for t in d.data["args"])
            dd = A.logical_divide(a, b)
            tiles_exactly = A.size(dd) == A.size(a) and {dd(i) for i in range(A.size(dd))} <= \
                {a(i) for i in range(A.size(a))}
            said = "does not tile A exactly" in d.prompt and "past" in d.prompt
            assert said != tiles_exactly, d.prompt
            past += not tiles_exactly
            exact += tiles_exactly
        v = generate("vector", seed)
        if v.variant == "max_common_vector":
            assert "at most 128 bits" in v.prompt, v.prompt
        t = generate("tv_layout", seed)
        if t.data.get("atom", "").startswith("SM70"):
            assert "quad-pair" in t.prompt and "not the lane" in t.prompt, t.prompt
        s = generate("symbolic", seed)
        if s.variant == "formula/batched":
            assert not re.search(r"\*B\b|\bB\*", s.answer_format), s.answer_format  # the batch count is no stride
    assert past >= 3 and exact >= 3


def test_explain_gives_no_length_cue() -> None:
    """No length rank gives the right option away: it is the longest, the second, the third and the shortest option
    in 10-40 % of drills each (always skipping the shortest or taking the longest wins no more than chance allows)."""
    ranks = Counter()
    for seed in random.Random(10).sample(range(10**6, 10**9), 300):
        d = generate("explain", seed)
        options = d.data["options"]
        right = options["abcd".index(d.expected)]
        ranks[sorted(map(len, options), reverse=True).index(len(right))] += 1
    assert all(0.1 * 300 <= ranks[r] <= 0.4 * 300 for r in range(4)), ranks
