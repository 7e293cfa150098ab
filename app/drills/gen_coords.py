"""Drill kinds on evaluating layouts: offsets, 1-D -> natural coordinates, index formulas, row/column major."""

from __future__ import annotations

import random
import re
from typing import Any

import algebra as A
from app.drills import sheet
from app.drills.common import (
    grade_list,
    grade_table,
    idx2crd_row_major,
    lstr,
    natural,
    offsets_grid,
    ordered_layout,
    pick,
    row_major,
    split,
    step,
    table,
)
from app.drills.core import Drill, Grade, Grid, register
from app.drills.parse_words import parse_coord
from app.drills.parsing import AnswerError, parse_int, parse_int_list, parse_table

RULE = ("A layout is a function: split the coordinate to the natural coordinate of the shape, then take the inner "
        "product with the stride, mode by mode.")


def small_layout(rng: random.Random, max_size: int = 32) -> Any:
    """A rank-2 layout of at most ``max_size`` elements: column/row major, padded, or hierarchical with the flat
    modes laid out in a random order."""
    style = pick(rng, ["col", "row", "padded", "hier", "hier"])
    m, n = pick(rng, [(2, 4), (4, 2), (4, 4), (3, 4), (4, 3), (2, 8), (4, 8), (8, 4), (2, 6), (6, 2), (3, 2),
                      (2, 3), (4, 6), (6, 4), (3, 8), (8, 3), (2, 16), (16, 2), (3, 3)])
    while m * n > max_size:
        m, n = max(2, m // 2), max(2, n // 2)
    if style == "col":
        return A.Layout((m, n))
    if style == "row":
        return row_major((m, n))
    if style == "padded":
        pad = pick(rng, [1, 2, 3, 4])
        return A.Layout((m, n), (n + pad, 1)) if rng.random() < 0.5 else A.Layout((m, n), (1, m + pad))
    shape = (m, split(rng, n)) if rng.random() < 0.7 else (split(rng, m), n)
    k = len(A.flatten(shape))
    order = list(range(k))
    rng.shuffle(order)
    return ordered_layout(shape, _like(shape, order))


def _like(shape: Any, values: list[int]) -> Any:
    it = iter(values)

    def walk(s: Any) -> Any:
        return tuple(walk(x) for x in s) if isinstance(s, tuple) else next(it)

    return walk(shape)


def contributions(layout: Any, natural: Any) -> str:
    """Text ``c0*d0 + c1*d1 + ... = offset`` for a natural coordinate, values from the engine."""
    cs, ds = A.flatten(natural), A.flatten(layout.stride)
    terms = " + ".join(f"{c}*{d}" for c, d in zip(cs, ds, strict=True))
    return f"{terms} = {layout(natural)}"


def coord_steps(layout: Any, coord: Any) -> dict[str, Any]:
    nat = natural(coord, layout.shape)
    lead = f"{lstr(coord)} is the natural coordinate {lstr(nat)}" if nat != coord else f"{lstr(coord)}"
    return step(f"{lead}: {contributions(layout, nat)}.")


@register("offsets", "Offsets of a layout", "From shape:stride and a coordinate (1-D, 2-D or natural) to the "
          "offset; the full offset table of a small layout.", 1)
def make_offsets(rng: random.Random, seed: int) -> Drill:
    given = None
    if sheet.take(rng):  # the sheet's parts 1-3: its layouts and the coordinates it asks
        text, given = pick(rng, [(sheet.L1, sheet.COORDS_12), (sheet.L2, sheet.COORDS_12), (sheet.L3, sheet.COORDS_3)])
        layout = A.parse(text)
    else:
        layout = small_layout(rng)
    m, n = A.size(layout[0]), A.size(layout[1])
    if rng.random() < 0.4:
        want = table(layout)
        grid = offsets_grid(layout, "The offset table")
        # the table a learner gets by numbering the cells row by row through the 1-D coordinate (row-major split)
        swapped = [[layout(i * n + j) for j in range(n)] for i in range(m)]
        steps = [step(RULE, layout)] + [coord_steps(layout, (i, j)) for i in range(min(m, 2)) for j in range(n)]
        steps.append(step(f"Doing this for every (row, column) gives the {m}x{n} table shown.", layout))
        return Drill("offsets", seed,
                     f"Fill the full {m}x{n} offset table of L = {layout}: row i, column j holds L(i, j) "
                     f"(j is a 1-D coordinate into mode 1 when that mode is nested).",
                     f"{m} rows of {n} numbers, one row per line (or all {m * n} numbers row by row)",
                     "\n".join(" ".join(str(v) for v in row) for row in want),
                     lambda ans: grade_table(ans, want), steps,
                     [RULE, f"Row 0 holds L(0, j) for j = 0..{n - 1}. For instance "
                      + coord_steps(layout, (0, 1))["text"]],
                     variant="table", grids=[grid], table_shape=(m, n)).with_data(layout=str(layout)).mistake(
            "the 1-D order filled in row by row (a row-major split of a 1-D index): cell (i, j) is L(i, j), not "
            "L(N*i + j)",
            lambda ans: parse_table(ans, m, n) == swapped, "\n".join(" ".join(map(str, r)) for r in swapped))
    coords: list[Any] = list(given or [])
    while len(coords) < 6 and not given:
        form = rng.randrange(3)
        if form == 0:
            c: Any = rng.randrange(A.size(layout))
        elif form == 1:
            c = (rng.randrange(m), rng.randrange(n))
        else:
            c = natural((rng.randrange(m), rng.randrange(n)), layout.shape)
        if c not in coords:
            coords.append(c)
    want = [layout(c) for c in coords]
    labels = [lstr(c) for c in coords]
    rowmajor = [layout(_row_major_coord(c, layout.shape)) for c in coords]
    cells = [natural(c, layout.shape) for c in coords]
    hl = [(_index(layout[0], x[0]), _index(layout[1], x[1])) for x in cells]
    return Drill("offsets", seed,
                 f"L = {layout}. Give the offset of each coordinate, in order: " + ", ".join(labels) + ".",
                 f"{len(coords)} integers separated by commas or spaces",
                 ", ".join(str(v) for v in want),
                 lambda ans: grade_list(parse_int_list(ans, len(coords)), want, labels),
                 [step(RULE, layout)] + [coord_steps(layout, c) for c in coords],
                 [RULE, "First turn each coordinate into a natural one: " + coord_steps(layout, coords[0])["text"]],
                 variant="coords", grids=[offsets_grid(layout, "The offsets, asked cells highlighted", hl)]).with_data(
                     layout=str(layout), coords=coords).mistake(
        "a row-major split of a 1-D index (CuTe splits with mode 0 fastest)",
        lambda ans: parse_int_list(ans, len(coords)) == rowmajor, ", ".join(map(str, rowmajor)))


def _row_major_coord(c: Any, shape: Any) -> Any:
    """Where a learner who splits indices row-major would look: each integer that lands on a multi-element mode is
    split last-mode-fastest (a 1-D index through the whole shape, a per-mode index through a nested mode)."""
    if isinstance(c, int):
        return idx2crd_row_major(c, shape)
    return tuple(idx2crd_row_major(x, s) if isinstance(x, int) else x for x, s in zip(c, shape, strict=True))


def _index(mode: Any, natural: Any) -> int:
    """The 1-D coordinate of a natural coordinate within one mode (column-major over the mode's shape)."""
    return A.crd2idx(natural, mode.shape)


def grade_coord(answer: str, want: Any) -> Grade:
    """A natural coordinate, nested like the shape: a flattened form with the right numbers is wrong (the nesting is
    the skill), and says so."""
    got = parse_coord(answer)
    if got == want:
        return Grade.right()
    if A.flatten(got) == A.flatten(want):
        return Grade.wrong(f"{lstr(got)} has the right numbers but not the nesting: the natural coordinate nests "
                           f"like the shape, one entry per mode and a tuple for each multi-mode")
    if isinstance(got, tuple) and isinstance(want, tuple) and len(got) == len(want):
        bad = [str(k) for k in range(len(want)) if got[k] != want[k]]
        return Grade.wrong(f"{lstr(got)} is not the coordinate: mode{'s' if len(bad) > 1 else ''} "
                           f"{', '.join(bad)} {'are' if len(bad) > 1 else 'is'} wrong")
    return Grade.wrong(f"{lstr(got)} is not the coordinate (the natural coordinate has one entry per mode, nested "
                       f"like the shape)")


def hier_layout(rng: random.Random) -> Any:
    """A hierarchical rank-2 layout like (3,(2,3)):(3,(12,1)) with a random stride order."""
    a = pick(rng, [2, 3, 4])
    b, c = pick(rng, [2, 3, 4]), pick(rng, [2, 3, 4])
    shape = (a, (b, c)) if rng.random() < 0.75 else ((b, c), a)
    order = list(range(3))
    rng.shuffle(order)
    return ordered_layout(shape, _like(shape, order))


def formula_layout(rng: random.Random) -> Any:
    """A layout for an index formula: a nested rank-2 layout (one or both modes split, e.g. ((2,3),(2,2))) laid out
    in a random order, compact, with a padded pitch (its largest stride + 1..4) or all strides scaled by 2 or 3;
    or a small_layout. Post-condition: at most 4 flat modes and 64 elements (48 when 4)."""
    style = pick(rng, ["one", "one", "both", "both", "small"])
    if style == "small":
        return small_layout(rng)
    if style == "one":
        return hier_layout(rng) if rng.random() < 0.4 else _spread(rng, hier_layout(rng))
    a, b, c, d = next(x for x in iter(lambda: [pick(rng, [2, 2, 3, 4]) for _ in range(4)], None)
                      if x[0] * x[1] * x[2] * x[3] <= 48)
    order = list(range(4))
    rng.shuffle(order)
    lay = ordered_layout(((a, b), (c, d)), ((order[0], order[1]), (order[2], order[3])))
    return lay if rng.random() < 0.4 else _spread(rng, lay)


def _spread(rng: random.Random, lay: Any) -> Any:
    """``lay`` with its largest stride padded by 1..4, or every stride scaled by 2 or 3."""
    strides = A.flatten(lay.stride)
    top = max(strides)
    k, pad = pick(rng, [(1, 1), (1, 2), (1, 3), (1, 4), (2, 0), (3, 0)])
    new = iter(k * d + (pad if d == top else 0) for d in strides)
    return A.Layout(lay.shape, _like(lay.shape, list(new)))


def idx_steps(layout: Any, x: int) -> list[dict[str, Any]]:
    """Splitting a 1-D coordinate mode by mode (mode 0 fastest), then the offset."""
    out = []
    rest = x
    shape = layout.shape
    for i in range(len(shape)):
        s = A.size(shape[i])
        if i < len(shape) - 1:
            out.append(step(f"Mode {i} has size {s}: {rest} = {rest % s} + {s}*{rest // s}, so mode {i} gets "
                            f"{rest % s} and {rest // s} carries on."))
            rest //= s
        else:
            out.append(step(f"The last mode takes the rest, {rest}."))
        if isinstance(shape[i], tuple):
            sub = A.idx2crd(rest % s if i < len(shape) - 1 else rest, shape[i])
            out.append(step(f"Mode {i} is nested {lstr(shape[i])}: its 1-D coordinate splits again into {lstr(sub)}."))
    nat = A.idx2crd(x, shape)
    out.append(step(f"Natural coordinate {lstr(nat)}; offset {contributions(layout, nat)}.", layout))
    return out


@register("natural_coord", "1-D to natural coordinates", "Split a 1-D or 2-D coordinate through a hierarchical "
          "shape, mode 0 fastest: the step where people go wrong.", 2)
def make_natural(rng: random.Random, seed: int) -> Drill:
    from_sheet = sheet.take(rng)  # the sheet's part 4: (3,(2,3)):(3,(12,1)) at 16, (1,5) and (1,(1,2))
    layout = A.parse(sheet.L4) if from_sheet else hier_layout(rng)
    shape = layout.shape
    variant = pick(rng, ["idx", "flat", "offset", "mapping", "three"])
    rule = "A 1-D coordinate splits mode by mode with mode 0 fastest: c0 = x mod s0, the rest is x div s0, and so on."
    if variant == "mapping":
        inner = shape[1] if isinstance(shape[1], tuple) else shape[0]
        which = 1 if isinstance(shape[1], tuple) else 0
        want_list = [A.idx2crd(k, inner) for k in range(A.size(inner))]
        expected = " ".join(lstr(c) for c in want_list)

        def grade_map(ans: str) -> Grade:
            items = parse_coord_map(ans, len(want_list))
            return grade_list(items, want_list, [f"n = {k}" for k in range(len(want_list))])

        steps = [step(rule)] + [step(f"n = {k} -> {lstr(c)}") for k, c in enumerate(want_list)]
        return Drill("natural_coord", seed,
                     f"L = {layout}. Mode {which} is the multi-mode {lstr(inner)}; a 1-D coordinate n into it runs "
                     f"0..{A.size(inner) - 1}. Give the natural coordinate of each n, in order.",
                     "one coordinate per n, in order of n, each nested like the multi-mode", expected, grade_map,
                     steps,
                     [rule, f"n = 1 -> {lstr(want_list[1])}: the left-most sub-mode moves first."],
                     variant=variant).with_data(shape=shape, mode=which).mistake(
            ROW_MAJOR, lambda ans: _same_items(ans, [idx2crd_row_major(k, inner) for k in range(A.size(inner))]),
            " ".join(lstr(idx2crd_row_major(k, inner)) for k in range(A.size(inner))))
    x = sheet.X4 if from_sheet else rng.randrange(1, A.size(layout))
    if variant == "flat":
        m0, n0 = A.size(shape[0]), A.size(shape[1])
        c: Any = sheet.FLAT4 if from_sheet else (rng.randrange(m0), rng.randrange(1, n0))
        want = natural(c, shape)
        prompt = (f"The shape is {lstr(shape)}. Convert the 2-D coordinate {lstr(c)} (one 1-D coordinate per "
                  f"top-level mode) into the natural coordinate.")
        steps = [step(rule), step(f"Each top-level mode splits its own coordinate: {lstr(c)} -> {lstr(want)}."),
                 step(f"With stride {lstr(layout.stride)}: {contributions(layout, want)}.", layout)]
        wrong = _row_major_coord(c, shape)
        return Drill("natural_coord", seed, prompt, "a nested coordinate such as {ex}", lstr(want),
                     lambda ans: grade_coord(ans, want), steps, [rule, steps[1]["text"].split(":")[0] + "."],
                     variant=variant).with_data(shape=shape, coord=c).mistake(
            ROW_MAJOR, lambda ans: grade_coord(ans, wrong).correct, lstr(wrong)).with_example(*COORD_EXAMPLES)
    nat = A.idx2crd(x, shape)
    if variant == "three":
        return _three(layout, x, seed, rule)
    if variant == "offset":
        off = layout(x)
        top = A.idx2crd(x, tuple(A.size(s) for s in shape))
        steps = idx_steps(layout, x) + [step(f"The 2-D coordinate {lstr(top)} and the natural {lstr(nat)} name the "
                                             f"same element, so L({x}) = L{lstr(top)} = L{lstr(nat)} = {off}.")]
        return Drill("natural_coord", seed,
                     f"L = {layout} (size {A.size(layout)}). What is the offset of the 1-D coordinate {x}? "
                     f"(Convert it to the natural coordinate first.)", "one integer", str(off),
                     lambda ans: _int_grade(ans, off), steps, [rule, steps[0]["text"]], variant=variant).with_data(
                         layout=str(layout), x=x).mistake(
            ROW_MAJOR, lambda ans: parse_int(ans) == layout(idx2crd_row_major(x, shape)),
            str(layout(idx2crd_row_major(x, shape))))
    steps = idx_steps(layout, x)
    return Drill("natural_coord", seed,
                 f"The shape is {lstr(shape)} (size {A.size(layout)}). Convert the 1-D coordinate {x} into the natural "
                 f"coordinate.", "a nested coordinate such as {ex}", lstr(nat),
                 lambda ans: grade_coord(ans, nat), steps, [rule, steps[0]["text"]], variant="idx").with_data(
                     shape=shape, x=x).mistake(
        ROW_MAJOR, lambda ans: grade_coord(ans, idx2crd_row_major(x, shape)).correct,
        lstr(idx2crd_row_major(x, shape))).with_example(*COORD_EXAMPLES)


#: Example coordinates the formats show (each drill takes one that is wrong for it), and example triples.
COORD_EXAMPLES = ("(2,(0,1))", "((1,1),0)", "(0,(2,1))", "((0,2),1)")
THREE_EXAMPLES = ("(2,3) (2,(1,1)) 25", "(0,4) (0,(0,2)) 9", "(1,2) ((1,0),1) 6", "(3,1) (3,(1,0)) 14")

ROW_MAJOR = "a row-major split of a 1-D index (CuTe splits with mode 0 fastest)"


#: A label in front of one coordinate of a list: ``0 ->``, ``0:``, ``n=0:``, ``n = 0 ->``, ``0 =>``, ``0 →``.
_MAP_LABEL = re.compile(r"(?:\b[nNxXkKiI]\s*=\s*)?\b(\d+)\s*(?:->|=>|→|:)")


def parse_coord_map(answer: str, n: int) -> list[Any]:
    """The coordinates of n = 0..n-1, in order: either listed bare (``(0,0) (1,0) ...``) or each labelled with its
    n (``0 -> (0,0), 1 -> (1,0)``, ``n=0: (0,0), n=1: (1,0)``; labelled entries may come in any order).
    Post-condition: a list of ``n`` coordinates, else AnswerError naming what is missing or doubled."""
    labels = list(_MAP_LABEL.finditer(answer))
    if not labels:
        got = parse_coord(answer)
        items = list(got) if isinstance(got, tuple) and not (n == 1 and all(isinstance(v, int) for v in got)) \
            else [got]
        if len(items) != n:
            raise AnswerError(f"expected {n} coordinates, one for each n = 0..{n - 1} in order, and read "
                              f"{len(items)}")
        return items
    if answer[:labels[0].start()].strip(" ,;\n"):
        raise AnswerError("text before the first label n -> ...; label every coordinate or none")
    found: dict[int, Any] = {}
    for k, m in enumerate(labels):
        end = labels[k + 1].start() if k + 1 < len(labels) else len(answer)
        body = answer[m.end():end].strip().strip(",;").strip()
        if not body:
            raise AnswerError(f"no coordinate after the label {m.group(1)}")
        idx = int(m.group(1))
        if idx in found:
            raise AnswerError(f"n = {idx} is given twice")
        found[idx] = parse_coord(body)
    missing = [k for k in range(n) if k not in found]
    extra = sorted(k for k in found if k >= n)
    if extra:
        raise AnswerError(f"n runs 0..{n - 1}; there is no n = {extra[0]}")
    if missing:
        raise AnswerError(f"no coordinate for n = {', '.join(map(str, missing[:4]))}")
    return [found[k] for k in range(n)]


def _same_items(answer: str, want: list[Any]) -> bool:
    return parse_coord_map(answer, len(want)) == want


def _three(layout: Any, x: int, seed: int, rule: str) -> Drill:
    """One element, three coordinates: the 1-D coordinate x, its 2-D (top-level) and natural forms, and the offset."""
    shape = layout.shape
    top = A.idx2crd(x, tuple(A.size(s) for s in shape))
    nat = A.idx2crd(x, shape)
    off = layout(x)
    want = [top, nat, off]

    def grade(ans: str) -> Grade:
        got = parse_coord(ans)
        if not isinstance(got, tuple) or len(got) != 3:
            raise AnswerError("expected three things: the 2-D coordinate, the natural coordinate and the offset")
        g = grade_list(list(got), want, ["the 2-D coordinate", "the natural coordinate", "the offset"])
        if not g.correct and got[1] != nat and A.flatten(got[1]) == A.flatten(nat):
            g.reason = (f"{g.reason}; the natural coordinate has the right numbers but not the nesting: it nests like "
                        f"the shape")
        return g

    top_rm = idx2crd_row_major(x, tuple(A.size(s) for s in shape))
    nat_rm = idx2crd_row_major(x, shape)

    def row_major(ans: str) -> bool:
        got = parse_coord(ans)
        return isinstance(got, tuple) and len(got) == 3 and (got[0] == top_rm or A.flatten(got[1]) == A.flatten(nat_rm))

    steps = idx_steps(layout, x) + [
        step(f"Top-level modes have sizes {lstr(tuple(A.size(s) for s in shape))}, so {x} is the 2-D coordinate "
             f"{lstr(top)}; splitting each entry by its mode gives the natural {lstr(nat)}."),
        step(f"All three name the same element because each split is the same colexicographic order: "
             f"L({x}) = L{lstr(top)} = L{lstr(nat)} = {off}.", layout)]
    return Drill("natural_coord", seed,
                 f"L = {layout} (size {A.size(layout)}). For the 1-D coordinate {x}, give its 2-D coordinate (one "
                 f"entry per top-level mode), its natural coordinate, and its offset.",
                 "three answers: the 2-D coordinate, the natural one and the offset, e.g. {ex}",
                 f"{lstr(top)} {lstr(nat)} {off}", grade, steps,
                 [rule, steps[0]["text"]], variant="three").with_data(layout=str(layout), x=x).mistake(
        ROW_MAJOR, row_major, f"{lstr(top_rm)} {lstr(nat_rm)} {layout(nat_rm)}").with_example(*THREE_EXAMPLES)


def _int_grade(answer: str, want: int) -> Grade:
    got = parse_int(answer, "")  # an offset: a number with no unit
    return Grade.right() if got == want else Grade.wrong(f"{got} is not right")


__all__ = ["make_offsets", "make_natural", "small_layout", "hier_layout", "formula_layout", "contributions", "Grid"]
