"""Drill kind ``index_formula``: the index formula of a (hierarchical) layout for its natural coordinate, graded by
evaluating it on every coordinate."""

from __future__ import annotations

import random
from typing import Any

import algebra as A
from app.drills import sheet
from app.drills.common import lstr, names_str, natural_names, offsets_grid, step
from app.drills.core import Drill, Grade, register
from app.drills.formula import Formula
from app.drills.gen_coords import RULE, contributions, formula_layout

#: Example formulas the format shows, over the drill's first two names (each drill takes one that is wrong for it).
EXAMPLES = ("{0}*2 + {1}*8", "{0}*5 + {1}", "3*{0} + {1}*7", "{0} + {1}*6")


@register("index_formula", "Index formula", "Write the index formula of a (hierarchical) layout for its natural "
          "coordinate; graded by evaluating it on every coordinate.", 3)
def make_formula(rng: random.Random, seed: int) -> Drill:
    layout = A.parse(sheet.pick_formula(rng)) if sheet.take(rng) else formula_layout(rng)
    names = natural_names(layout.shape)
    vars_ = list(A.flatten(names))
    expected = _engine_formula(layout, names)
    coords = [A.idx2crd(x, layout.shape) for x in range(A.size(layout))]
    cases = [({v: c for v, c in zip(vars_, A.flatten(nat), strict=True)}, layout(nat)) for nat in coords]

    def grade(ans: str) -> Grade:
        f = Formula(ans, vars_)
        bad = [(vals, want, f(vals)) for vals, want in cases if f(vals) != want]
        if not bad:
            return Grade.right(f"agrees with L at all {len(cases)} coordinates")
        vals, want, got = bad[0]
        at = ", ".join(f"{k}={v}" for k, v in vals.items())
        return Grade.wrong(f"wrong at {len(bad)} of {len(cases)} coordinates, e.g. at {at} your formula gives "
                           f"{got}, which is not L's offset there")

    strides = A.flatten(layout.stride)
    first = f"The stride of {vars_[0]} is {strides[0]}, so the formula starts {vars_[0]}*{strides[0]}."
    steps = [step(RULE, layout)] + [step(f"{v} runs over 0..{s - 1} with stride {d}: term {v}*{d}.")
                                    for v, s, d in zip(vars_, A.flatten(layout.shape), strides, strict=True)]
    steps.append(step(f"index{names_str(names)} = {expected}"))
    sample = coords[-1]
    steps.append(step(f"Check at {lstr(sample)}: {contributions(layout, sample)}.", layout))
    drill = Drill("index_formula", seed,
                 f"L = {layout}. Write the index formula for the natural coordinate {names_str(names)}.",
                 f"a formula in {', '.join(vars_)}, e.g. {{ex}} (3i, mod, / and () are read)",
                 expected, grade, steps, [RULE, first], variant="formula",
                 grids=[offsets_grid(layout, "Offsets (rows: mode 0, columns: mode 1 as 1-D)")]).with_data(
                     layout=str(layout), names=vars_)
    for a in range(len(vars_)):
        for b in range(a + 1, len(vars_)):
            if strides[a] == strides[b]:
                continue
            swapped = list(strides)
            swapped[a], swapped[b] = swapped[b], swapped[a]
            alt = " + ".join(f"{v}*{d}" for v, d in zip(vars_, swapped, strict=True))
            drill.mistake(f"swapped modes: the strides of {vars_[a]} and {vars_[b]} are exchanged",
                          _formula_is(alt, vars_, cases), alt)
    return drill.with_example(*(e.format(vars_[0], vars_[1]) for e in EXAMPLES))


def _formula_is(alt: str, vars_: list[str], cases: list[tuple[dict[str, int], int]]) -> Any:
    """A mistake test: the answer agrees with the formula ``alt`` at every coordinate of ``cases``."""
    ref = Formula(alt, vars_)

    def matches(ans: str) -> bool:
        f = Formula(ans, vars_)
        return all(f(v) == ref(v) for v, _ in cases)

    return matches


def _engine_formula(layout: Any, names: Any) -> str:
    """The engine's index formula text of ``layout`` over the given coordinate names."""
    fn = getattr(A, "formula", None)
    if fn is None:
        from algebra.teach.formula import formula as fn
    return fn(layout, names)




__all__ = ["make_formula"]
