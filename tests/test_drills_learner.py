"""What a learner meets: no drill shows its key before it is solved or revealed (prompt, format, hints 1-2, feedback
to unreadable and wrong answers), the spellings learners use are read, the natural coordinate's nesting is graded,
the explain options carry no length cue per question, the sheet's parts 5.2 and 7.2 are drilled and its numbers are
a choice, and the docs count the kinds there are."""

from __future__ import annotations

import os
import re
from collections import Counter

import pytest
from drill_forms import rejected

import algebra as A
from app.drills import sheet
from app.drills.core import from_id, generate, key_written, kinds, shows_key
from app.drills.gen_explain import ITEMS, combinations, length_rank

SEEDS = range(int(os.environ.get("LAYOUTLAB_DRILL_SEEDS", "200")))
KINDS = [k.kind for k in kinds()]
#: Answers that cannot be read, or read wrong, whose feedback must not name the key.
PROBES = ["", "x", "banana split", "(", "((1,2)", "1", "0 -> (0,0)", "n=0: (0,0)", "Sw<9,9,9>", "(N,M):x",
          "defined, (", "chunk #", "0b102", "12 percent", "stride, ?"]


def _bare(text: str) -> str:
    return re.sub(r"\s", "", text)


@pytest.mark.parametrize("kind", KINDS)
def test_no_key_before_it_is_solved_or_revealed(kind: str) -> None:
    for seed in SEEDS:
        d = generate(kind, seed)
        where = f"{d.id} ({d.variant}): key {d.expected!r}"
        for text in (d.prompt, d.answer_format, d.hints[0], d.hints[1], *(g.title for g in d.shown)):
            assert not key_written(d.expected, text), f"{where} in {text!r}"
        assert not shows_key(d), f"{where} in its given data or shown grids"
        h3 = d.hint(3)
        assert not any(key_written(d.expected, f"{st['text']} {st['layout']}") for st in h3["steps"]), where
        for answer in PROBES + rejected(d)[:3]:
            g = d.grade(answer)
            if not g.correct and not key_written(d.expected, answer):
                assert not key_written(d.expected, g.reason), f"{where} in the feedback to {answer!r}: {g.reason}"


def test_key_written_sees_layouts_and_lists_but_not_their_parts() -> None:
    assert key_written("(4,8):(8,1)", "A = (4, 8):(8, 1) here")
    assert key_written("(1,(1,2))", "give the coordinate, e.g. (1,(1,2))")
    assert key_written("8, 50%", "expected two numbers (e.g. 8, 50%)")
    assert not key_written("(4,8):(8,1)", "A = (4,8):(8,16)")
    assert not key_written("4, 0", "4, 01")
    assert not key_written("row", "row, column or neither")  # a choice is named in its own format by design


def test_a_divide_that_leaves_a_as_it_is_is_never_asked() -> None:
    n = 0
    for seed in range(1500):
        d = generate("algebra_op", seed)
        if d.variant == "divide_tile":
            continue
        args = [a for a in d.data["args"] if isinstance(a, str)]
        assert _bare(d.expected) not in {_bare(a) for a in args}, (d.id, d.prompt)
        n += d.variant.endswith("divide")
    assert n > 100


def _first(kind: str, test, seeds=range(3000)):
    return next(d for d in (generate(kind, s) for s in seeds) if test(d))


def test_symbolic_feedback_gives_no_example_layout() -> None:
    for seed in range(400):
        d = generate("symbolic", seed)
        for answer in ("(N,M):x", "(N,M):(1,", "x:y"):
            g = d.grade(answer)
            assert "(N,M):(1,ld)" not in g.reason and not key_written(d.expected, g.reason), (d.id, g.reason)


def test_the_spellings_learners_use_are_read() -> None:
    d = _first("read_rung", lambda d: d.variant.startswith("chunk"))
    for form in (f"chunk {d.expected}", f"chunk #{d.expected}", f"#{d.expected}", f"Chunk {d.expected}."):
        assert d.grade(form).correct, form
    assert not d.grade(f"chunk {(int(d.expected) + 1) % 8}").correct
    n = 0
    for seed in range(300):
        d = generate("triton_layout", seed)
        if d.variant.startswith("store"):
            for form in (f"{d.expected} in total", f"{d.expected} wavefronts", f"{d.expected} wavefronts in total",
                         f"in total {d.expected}"):
                assert d.grade(form).correct, (d.id, form)
            assert d.grade(f"{int(d.expected) + 1} in total").readable
            n += 1
    assert n >= 10
    d = _first("sectors", lambda d: True)
    s, u = d.expected.split(", ")
    for form in (f"{s} sectors, {u[:-1]} percent", f"{s} sectors, {u[:-1]} per cent", f"{s}, {u[:-1]} pct"):
        assert d.grade(form).correct, form
    d = _first("swizzle", lambda d: d.variant == "apply")
    nums = [int(x) for x in d.expected.split(", ")]
    assert d.grade(", ".join(bin(x) for x in nums)).correct
    assert d.grade(", ".join(f"0b{x:012b}" for x in nums)).correct
    assert not d.grade(", ".join(bin(x + 1) for x in nums)).correct


def test_natural_coordinate_mappings_in_labelled_forms() -> None:
    n = 0
    for seed in range(400):
        d = generate("natural_coord", seed)
        if d.variant != "mapping":
            continue
        items = re.findall(r"\((?:[^()]|\([^()]*\))*\)", d.expected)
        for form in (", ".join(f"{k} -> {c}" for k, c in enumerate(items)),
                     ", ".join(f"n={k}: {c}" for k, c in enumerate(items)),
                     "; ".join(f"n = {k} -> {c}" for k, c in enumerate(items)),
                     "\n".join(f"{k}: {c}" for k, c in reversed(list(enumerate(items))))):
            g = d.grade(form)
            assert g.correct, (d.id, form, g.reason)
        short = d.grade(", ".join(f"{k} -> {c}" for k, c in enumerate(items[:2])))
        assert not short.readable and "no coordinate for n = 2" in short.reason and "got 2" not in short.reason
        n += 1
    assert n >= 20


def test_the_natural_coordinates_nesting_is_graded() -> None:
    n = 0
    for seed in range(600):
        d = generate("natural_coord", seed)
        if d.variant not in ("idx", "flat") or "(" not in d.expected[1:]:
            continue
        flat = "(" + ",".join(re.findall(r"\d+", d.expected)) + ")"
        g = d.grade(flat)
        assert g.readable and not g.correct and "nesting" in g.reason, (d.id, g.reason)
        assert d.grade(d.expected).correct
        n += 1
    assert n >= 40


def test_explain_options_have_no_length_cue_per_question() -> None:
    """Every item can put its right option at every length rank, and over 500 seeds each item's right option is
    the longest, second, third and shortest in 10-45 % of its drills."""
    for item in ITEMS:
        assert {length_rank(c) for c in combinations(item)} == {0, 1, 2, 3}, item.key
    ranks: dict[str, Counter] = {}
    for seed in range(500):
        d = generate("explain", seed)
        options = d.data["options"]
        right = options["abcd".index(d.expected)]
        assert len(set(map(len, options))) == 4
        ranks.setdefault(d.variant, Counter())[sorted(map(len, options), reverse=True).index(len(right))] += 1
    assert set(ranks) == {i.key for i in ITEMS}
    for key, c in ranks.items():
        total = sum(c.values())
        assert all(0.1 * total <= c[r] <= 0.45 * total for r in range(4)), (key, c)


def test_the_swizzle_key_says_what_is_true_of_padding() -> None:
    d = _first("explain", lambda d: d.variant == "swizzle")
    right = d.data["options"]["abcd".index(d.expected)]
    assert "TMA" in right and "wgmma" in right
    wrong = next(x for x in "abcd" if "breaks" in d.data["options"]["abcd".index(x)]
                 and "ldmatrix" in d.data["options"]["abcd".index(x)]) if any(
        "ldmatrix" in o and "breaks" in o for o in d.data["options"]) else None
    if wrong:
        assert not d.grade(wrong).correct and "ldmatrix" in d.grade(wrong).reason


def test_seed_002_parts_5_2_and_7_2_are_drilled_with_the_sheets_numbers() -> None:
    prove = _first("transpose_view", lambda d: d.variant == "prove" and d.sheet)
    assert prove.data["matrix"] == sheet.L5 and tuple(prove.data["coord"]) == (1, 5)
    assert prove.expected == "13, 13" and "A(1,5)" in prove.prompt and "T(5,1)" in prove.prompt
    assert prove.grade("13, 13").correct and prove.grade("A(1,5) = 13, T(5,1) = 13").correct
    assert not prove.grade("13, 41").correct  # T's offset with A's strides
    banks = _first("banks", lambda d: d.variant == "banks" and d.sheet)
    assert banks.data["layout"] == "(32,32):(33,1)" and banks.data["col"] == 5 and banks.data["lanes"] == [0, 1, 2, 3]
    assert banks.expected == "5, 6, 7, 8"
    lay = A.parse(banks.data["layout"])
    assert [lay((r, 5)) % 32 for r in range(4)] == [5, 6, 7, 8]


def test_whiteboard_sessions_ask_5_2_and_7_2_and_may_take_the_sheets_numbers() -> None:
    import random

    from app.drills.whiteboard import SHEET, pick_sheet

    slots = [(p, kind, test) for p, (_, qs) in enumerate(SHEET) for kind, test in qs]
    ids = pick_sheet(random.Random(3), slots)
    drills = [generate(*(i.rsplit("-", 1)[0], int(i.rsplit("-", 1)[1]))) for i in ids]
    assert any(d.kind == "transpose_view" and d.variant == "prove" for d in drills)
    assert any(d.kind == "banks" and d.variant == "banks" and A.parse(d.data["layout"]).stride[0] == 33
               or (d.kind == "banks" and d.variant == "banks") for d in drills)
    from app.drills.whiteboard import _with_sheet_numbers

    sheet_slots = [(p, k, _with_sheet_numbers(k, t)) for p, k, t in slots]
    own = [generate(i.rsplit("-", 1)[0], int(i.rsplit("-", 1)[1])) for i in pick_sheet(random.Random(4), sheet_slots)]
    assert all(d.sheet or d.kind == "explain" for d in own), [d.id for d in own if not d.sheet]
    assert any(d.kind == "banks" and d.data.get("layout") == "(32,32):(33,1)" and d.data.get("lanes") == [0, 1, 2, 3]
               for d in own)


def test_the_docs_count_the_kinds() -> None:
    from pathlib import Path

    words = {19: "nineteen", 20: "twenty", 21: "twenty-one", 22: "twenty-two", 23: "twenty-three",
             24: "twenty-four", 25: "twenty-five", 26: "twenty-six", 27: "twenty-seven"}
    text = (Path(__file__).resolve().parent.parent / "docs" / "features.md").read_text()
    assert f"{words.get(len(KINDS), len(KINDS))} drill kinds" in text


def test_the_sheets_numbers_are_a_choice_through_the_api_and_the_page(client) -> None:
    r = client.get("/api/drills/next", params={"kind": "transpose_view", "numbers": "sheet"}).json()
    assert r["sheet"] is True and "(4,8):(8,1)" in r["prompt"]
    assert client.get("/api/drills/next", params={"numbers": "sheet"}).json()["sheet"] is True
    fresh = client.get("/api/drills/next", params={"kind": "banks", "seed": 1}).json()
    assert fresh["sheet"] == generate("banks", 1).sheet
    bad = client.get("/api/drills/next", params={"kind": "explain", "numbers": "sheet"})
    assert bad.status_code == 422 and "sheet" in bad.json()["detail"]
    assert client.get("/api/drills/next", params={"numbers": "mine"}).status_code == 422
    page = client.get("/drills", params={"kind": "banks", "numbers": "sheet"}, follow_redirects=False)
    assert page.status_code == 303
    kind, seed = re.search(r"kind=(\w+)&seed=(\d+)", page.headers["location"]).groups()
    assert kind == "banks" and generate(kind, int(seed)).sheet
    assert 'id="sheet-tag"' in client.get(page.headers["location"]).text
    s = client.post("/api/drills/whiteboard", json={"numbers": "sheet"}).json()
    ids = [p["id"] for p in s["parts"]]
    assert all(from_id(i).sheet for i in ids if not i.startswith("explain"))
    assert "expected" not in s["parts"][0]  # the keys come with the review, once every question is answered
    assert client.post("/api/drills/whiteboard", json={"numbers": "odd"}).status_code == 422
    page = client.post("/drills/whiteboard", data={"numbers": "odd"}, follow_redirects=False)
    assert page.status_code == 422 and "numbers" in page.text  # the form refuses it too, never a fresh session
