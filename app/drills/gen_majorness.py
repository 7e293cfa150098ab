"""Drill kind ``majorness``: row-major, column-major or neither, decided from the offsets (a padded pitch still
counts); LayoutRight / LayoutLeft are read as answers. The target class is drawn first, so "neither" is not the
usual answer."""

from __future__ import annotations

import random
import re
from typing import Any

import algebra as A
from app.drills import sheet
from app.drills.common import offsets_grid, ordered_layout, pick, step, table
from app.drills.core import Drill, Grade, register
from app.drills.gen_coords import small_layout
from app.drills.parse_words import tokens
from app.drills.parsing import AnswerError, clean, parse_choice

MAJOR = {"row": ["row-major", "row major", "r", "rows", "LayoutRight", "right", "C order"],
         "column": ["col", "column-major", "col-major", "c", "columns", "colmajor", "LayoutLeft", "left",
                    "Fortran order", "Fortran", "F"],
         "neither": ["none", "no", "n", "neither row nor column", "other", "none of them", "neither of them",
                     "not row or column major", "not row- or column-major"]}


def classify(layout: Any) -> str:
    """'row' when L(i,j) = ld*i + j with ld >= N, 'column' when L(i,j) = i + ld*j with ld >= M, else 'neither'
    (offsets from the engine)."""
    t = table(layout)
    m, n = len(t), len(t[0])
    if all(t[i][j] == t[i][0] + j for i in range(m) for j in range(n)) and \
            all(t[i][0] == i * (t[1][0] if m > 1 else 0) for i in range(m)) and (m == 1 or t[1][0] >= n):
        return "row"
    if all(t[i][j] == t[0][j] + i for i in range(m) for j in range(n)) and \
            all(t[0][j] == j * (t[0][1] if n > 1 else 0) for j in range(n)) and (n == 1 or t[0][1] >= m):
        return "column"
    return "neither"


@register("majorness", "Row-major, column-major or neither", "Decide from the strides whether a layout is row-major, "
          "column-major or neither (a padded pitch still counts).", 4)
def make_majorness(rng: random.Random, seed: int) -> Drill:
    target = pick(rng, ["row", "row", "column", "column", "neither"])
    from_sheet = sheet.take(rng) and target == "neither"  # the sheet's part 3.4: (2,(2,2)):(4,(2,1))
    for _ in range(0 if from_sheet else 200):
        style = pick(rng, ["plain", "padded", "padded", "hier", "hier", "strided", "strided"])
        if style == "plain":
            layout = small_layout(rng)
        elif style == "padded":
            m, n = rng.randint(2, 8), rng.randint(2, 8)
            pad = pick(rng, [0, 1, 2, 3, 4, 5, 8])
            layout = A.Layout((m, n), (n + pad, 1)) if rng.random() < 0.5 else A.Layout((m, n), (1, m + pad))
        elif style == "hier":
            m = pick(rng, [2, 3, 4, 5, 6, 8])
            a, b = pick(rng, [(2, 2), (2, 4), (4, 2), (2, 3), (3, 2), (3, 3), (2, 5), (5, 2)])
            if rng.random() < 0.6:
                order: Any = pick(rng, [(1, (0, 2)), (2, (0, 1)), (0, (1, 2)), (0, (2, 1)), (2, (1, 0)), (1, (2, 0))])
                layout = ordered_layout((m, (a, b)), order)
            else:
                order = pick(rng, [((0, 1), 2), ((1, 2), 0), ((0, 2), 1), ((2, 1), 0), ((1, 0), 2), ((2, 0), 1)])
                layout = ordered_layout(((a, b), m), order)
        else:
            m, n = rng.randint(2, 8), rng.randint(2, 8)
            k = pick(rng, [2, 3])
            layout = A.Layout((m, n), pick(rng, [(k, k * m), (k * n, k), (n, k), (k, m), (1, 1), (n + 3, 1),
                                                 (1, m + 5), (n - 1, 1), (1, m - 1), (0, 1), (1, 0), (n, 1),
                                                 (1, m), (m * n, 1), (1, m * n)]))
        if classify(layout) == target:
            break
    if from_sheet:
        layout, style = A.parse(sheet.L3), "hier"
    want = classify(layout)
    t = table(layout)
    why = {"row": "consecutive columns are adjacent (offset + 1) and each row starts one pitch after the previous",
           "column": "consecutive rows are adjacent (offset + 1) and each column starts one pitch after the previous",
           "neither": "neither walking along a row nor down a column steps through memory by 1 everywhere"}[want]
    steps = [step("Row-major: moving one column right adds 1 and rows follow each other at a fixed pitch; "
                  "column-major is the same with rows and columns swapped.", layout),
             step(f"Row 0 of the offset table: {t[0]}; column 0: {[r[0] for r in t]}."),
             step(f"So L is {want if want == 'neither' else want + '-major'}: {why}.")]
    return Drill("majorness", seed,
                 f"L = {layout}, read as a {len(t)}x{len(t[0])} matrix (2-D coordinates). Is it row-major, "
                 f"column-major or neither? (A padded pitch counts, e.g. {_example(layout)}.)",
                 "row, column or neither (LayoutRight / LayoutLeft are read)", want,
                 lambda ans: _choice_grade(ans, want), steps,
                 ["Look at which coordinate has stride 1 as a 1-D walk, and whether the other mode jumps whole rows "
                  "or columns.", steps[1]["text"]],
                 variant=style, grids=[offsets_grid(layout, "The offset table")]).with_data(layout=str(layout))


#: Padded layouts the prompt names as examples of the rule (a drill names one that is not its own layout).
PADDED_EXAMPLES = (("(4,8):(9,1)", "row-major"), ("(3,5):(1,4)", "column-major"), ("(5,3):(4,1)", "row-major"))


def _example(layout: Any) -> str:
    text, major = next(e for e in PADDED_EXAMPLES if e[0] != str(layout))
    return f"{text} is {major}"


_CLASS_WORDS = {"row": "row", "right": "row", "layoutright": "row", "column": "column", "col": "column",
                "left": "column", "layoutleft": "column", "fortran": "column", "neither": "neither"}


def read_major(answer: str) -> str:
    """The class an answer names: a choice (``row-major``, ``LayoutLeft``, ``neither``), optionally followed by
    ``order`` / ``layout`` and, after a comma, colon or ``because``, a reason. Post-condition: AnswerError when the
    reason names another class (``row-major, column-major``, ``row, or column``); ``not column-major or neither`` in a
    reason names no other class."""
    try:
        return parse_choice(answer, MAJOR)
    except AnswerError:
        pass
    text = clean(answer).strip()
    cut = min([i for i in (text.find(","), text.find(";"), text.find(":")) if i > 0] + [len(text)])
    head, reason = text[:cut], text[cut:]
    for word in (" because ", " since ", " as "):
        if word in head.lower():
            k = head.lower().index(word)
            head, reason = head[:k], head[k:] + reason
    head = re.sub(r"(?i)[ -](order|layout)\.?$", "", head.strip())
    got = parse_choice(head, MAJOR)
    negating = False  # inside "not column-major or neither": each class of the list is negated
    for tok in tokens(reason):
        other = _CLASS_WORDS.get(tok)
        if other and other != got and not negating:
            raise AnswerError(f"two different answers: {got} and {other}")  # "row, or column" hedges
        if tok in ("not", "nor", "no", "never"):
            negating = True
        elif not other and tok not in ("or", "and", "-", "major", ",", "/"):
            negating = False
    return got


def _choice_grade(answer: str, want: str) -> Grade:
    got = read_major(answer)
    return Grade.right() if got == want else Grade.wrong(f"not {got}: look again at which mode has stride 1 and "
                                                          "whether the other mode's stride is a full pitch")
