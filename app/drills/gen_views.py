"""Drill kinds on views of existing memory: a transposed view, a tiled view, a composition for a described view."""

from __future__ import annotations

import random
from math import prod
from typing import Any

import algebra as A
from app.drills import sheet
from app.drills.common import (
    grade_layout,
    grade_list,
    layout_matches,
    lstr,
    offsets_grid,
    pick,
    read_layout,
    row_major,
    step,
    table,
)
from app.drills.core import Drill, Grade, register
from app.drills.formula import Formula
from app.drills.parsing import AnswerError, layout_text, parse_int, parse_int_list, parse_nested


def matrix(rng: random.Random, sizes: list[tuple[int, int]]) -> tuple[Any, str]:
    """A row- or column-major (sometimes padded) M x N matrix layout and its description."""
    m, n = pick(rng, sizes)
    style = pick(rng, ["row", "row", "col", "row-padded", "col-padded"])
    if style == "row":
        return row_major((m, n)), "row-major"
    if style == "col":
        return A.Layout((m, n)), "column-major"
    pad = pick(rng, [1, 2, 3, 4, 8])
    if style == "col-padded":
        return A.Layout((m, n), (1, m + pad)), f"column-major with a pitch of {m + pad}"
    return A.Layout((m, n), (n + pad, 1)), f"row-major with a pitch of {n + pad}"


#: Matrix sizes of the transposed-view drill: any M x N works, so many (a fresh question most of the time).
TRANSPOSE_SIZES = [(m, n) for m in (2, 3, 4, 6, 8, 12, 16) for n in (2, 3, 4, 6, 8, 12, 16) if m * n >= 8]


def grid_coords(rows: int, cols: int) -> list[tuple[int, int]]:
    return [(i, j) for j in range(cols) for i in range(rows)]


@register("transpose_view", "Transposed view", "Write the shape:stride of the transposed view of existing memory; "
          "no data moves. Any layout with the right function is accepted.", 5)
def make_transpose(rng: random.Random, seed: int) -> Drill:
    from_sheet = sheet.take(rng)  # the sheet's part 5: (4,8):(8,1), and element (1,5) against the view's (5,1)
    mat, desc = (A.parse(sheet.L5), "row-major") if from_sheet else matrix(rng, TRANSPOSE_SIZES)
    m, n = A.size(mat[0]), A.size(mat[1])
    b = A.Layout((n, m), (m, 1))
    want = A.composition(mat, b)
    i, j = sheet.PROVE5 if from_sheet else (rng.randrange(m), rng.randrange(1, n))
    if rng.random() < 0.3:
        return _prove_transpose(seed, mat, desc, want, i, j)
    rule = "A view is a new layout over the same offsets: T(j, i) must equal A(i, j) for every i, j."
    steps = [step(rule, mat),
             step(f"Swap the modes: mode 0 of the view walks A's columns (stride {lstr(mat[1].stride)}), mode 1 walks "
                  f"A's rows (stride {lstr(mat[0].stride)})."),
             step(f"Equivalently compose A with B = {b}, which sends (j, i) to A's 1-D coordinate i + {m}*j.", b),
             step(f"A o B = {want}", want),
             step(f"Check: A({i},{j}) = {mat((i, j))} and T({j},{i}) = {want((j, i))}.")]
    steps += _engine_steps("composition", mat, b)
    drill = Drill("transpose_view", seed,
                 f"A {m}x{n} matrix is stored {desc}: A = {mat}. Write the layout of the {n}x{m} transposed view T, "
                 f"so that T(j, i) is the same element as A(i, j), without moving data.",
                 f"a layout of shape ({n},{m}) in CuTe notation, e.g. ({n},{m}):(?,?)", str(want),
                 lambda ans: grade_layout(ans, want, 1, lambda w: grid_coords(n, m), "view"),
                 steps, [rule, steps[1]["text"]], variant=desc.split(" with")[0].replace("row-major", "row")
                 .replace("column-major", "column") + ("-padded" if "pitch" in desc else ""),
                 grids=[offsets_grid(mat, "A"), offsets_grid(want, "The transposed view T")]).with_data(matrix=str(mat))
    drill.mistake("swapped modes the wrong way: that is A itself, not its transpose (mode 0 of the view must walk "
                  "A's columns)", layout_matches(mat, 1), str(mat))
    alt = shape_stride_swapped(want)
    if alt is not None:
        drill.mistake("shape and stride swapped", layout_matches(alt, 1), str(alt))
    return drill


def _prove_transpose(seed: int, mat: Any, desc: str, view: Any, i: int, j: int) -> Drill:
    """The sheet's part 5.2: element (i, j) of A and element (j, i) of the transposed view compute the same offset;
    the view's layout is not shown (it is part 5.1's answer), only its shape."""
    m, n = A.size(mat[0]), A.size(mat[1])
    off = mat((i, j))
    (sa0, sa1), (sv0, sv1) = mat.stride, view.stride
    rule = "A layout's offset is the inner product of the coordinate with the stride: L(c0, c1) = c0*s0 + c1*s1."
    steps = [step(rule, mat),
             step(f"A({i},{j}) = {i}*{sa0} + {j}*{sa1} = {off}.", mat),
             step(f"The view swaps the modes, so its stride is A's swapped: T = {view}.", view),
             step(f"T({j},{i}) = {j}*{sv0} + {i}*{sv1} = {view((j, i))}: the same offset, the same element.", view)]
    wrong = j * sa0 + i * sa1

    def grade(ans: str) -> Grade:
        try:
            got = parse_int_list(ans, 2)
        except AnswerError:
            got = [parse_int(ans, "")] * 2  # "13": both compute it
        return grade_list(got, [off, off], [f"A({i},{j})", f"T({j},{i})"])

    d = Drill("transpose_view", seed,
              f"A {m}x{n} matrix is stored {desc}: A = {mat}. T is its {n}x{m} transposed view, ({n},{m}):(?,?), the "
              f"same memory with the modes swapped (no data moves). Prove it on one element: compute the offset of "
              f"A({i},{j}) from A's strides and of T({j},{i}) from T's strides.",
              f"two integers: the offset of A({i},{j}), then of T({j},{i})", f"{off}, {off}", grade, steps,
              [rule, steps[1]["text"].split("=")[0] + f"= {i}*{sa0} + {j}*{sa1}; T's strides are A's, swapped."],
              variant="prove", grids=[offsets_grid(mat, "A", [(i, j)])]).with_data(matrix=str(mat), coord=[i, j])
    if wrong != off:
        d.mistake("T's offset with A's strides unswapped: the view's mode 0 walks A's columns",
                  lambda ans: parse_int_list(ans, 2) == [off, wrong], f"{off}, {wrong}")
    return d


def shape_stride_swapped(want: Any) -> Any:
    """``want``'s stride read as a shape and its shape as a stride (None when a stride is 0)."""
    if 0 in A.flatten(want.stride):
        return None
    return A.Layout(want.stride, want.shape)


def _engine_steps(op: str, *args: Any) -> list[dict[str, Any]]:
    from app.drills.common import explain

    out = explain(op, *args)
    if out:
        out = [step(f"The engine's derivation of {op}:")] + out
    return out


def strides_or_layout(answer: str, shape: Any) -> str:
    """Accept either a whole layout or only its stride tuple (congruent with ``shape``)."""
    text = layout_text(answer)
    if ":" in text:
        return text
    stride = parse_nested(answer)
    return f"{lstr(shape)}:{lstr(stride)}"


@register("tiled_view", "Tiled view", "View a matrix as a grid of tiles, ((tile),(which tile)):((?,?),(?,?)); the "
          "strides of zipped_divide, the offset formula and spot checks.", 6)
def make_tiled(rng: random.Random, seed: int) -> Drill:
    from_sheet = sheet.take(rng)  # the sheet's part 6: (8,8):(8,1) as 2x2 tiles of 4x4
    mat, desc = (A.parse(sheet.L6), "row-major") if from_sheet else \
        matrix(rng, [(8, 8), (8, 8), (8, 16), (16, 8), (16, 16), (4, 8), (12, 8)])
    m, n = A.size(mat[0]), A.size(mat[1])
    if from_sheet:
        tm, tn = sheet.TILE6
    else:
        tm = pick(rng, [t for t in (2, 4, 8) if m % t == 0 and t < m])
        tn = pick(rng, [t for t in (2, 4, 8) if n % t == 0 and t < n])
    gm, gn = m // tm, n // tn
    want = A.zipped_divide(mat, (A.Layout(tm), A.Layout(tn)))
    shape = ((tm, tn), (gm, gn))
    rule = (f"Element (i, j) of tile (ti, tj) is row {tm}*ti + i, column {tn}*tj + j; substitute into A's formula "
            f"and read one stride per variable.")
    d_r, d_c = mat((1, 0)), mat((0, 1)) if n > 1 else 0
    steps = [step(rule, mat),
             step(f"A(r, c) = {d_r}*r + {d_c}*c, so the offset is {d_r}*({tm}*ti + i) + {d_c}*({tn}*tj + j) = "
                  f"{d_r}*i + {d_c}*j + {d_r * tm}*ti + {d_c * tn}*tj."),
             step(f"Strides: i -> {d_r}, j -> {d_c}, ti -> {d_r * tm}, tj -> {d_c * tn}.", want),
             step(f"This is zipped_divide(A, ({tm},{tn})) = {want}.", want)]
    steps += _engine_steps("zipped_divide", mat, (A.Layout(tm), A.Layout(tn)))
    variant = pick(rng, ["layout", "layout", "spot", "formula"])
    intro = (f"A {m}x{n} matrix is stored {desc}: A = {mat}. View it as a {gm}x{gn} grid of {tm}x{tn} tiles, "
             f"indexed ((i,j),(ti,tj)) with mode 0 the element inside the tile and mode 1 the tile.")
    hints = [rule, f"A(r, c) = {d_r}*r + {d_c}*c; put r = {tm}*ti + i and c = {tn}*tj + j into it."]
    grids = [offsets_grid(mat, "A"), offsets_grid(want, "The tiled view (rows: within-tile, columns: tile)")]
    if variant == "spot":
        picks: list[Any] = list(sheet.SPOTS6) if from_sheet else []
        while len(picks) < 2:  # two different elements, neither the origin (offset 0 whatever the layout)
            p = ((rng.randrange(tm), rng.randrange(tn)), (rng.randrange(gm), rng.randrange(gn)))
            if p not in picks and p != ((0, 0), (0, 0)):
                picks.append(p)
        vals = [want(p) for p in picks]
        labels = [f"tile {lstr(t)} element {lstr(e)}" for e, t in picks]
        steps.append(step("Spot checks: " + "; ".join(f"{lab}: {v}" for lab, v in zip(labels, vals, strict=True))))
        return Drill("tiled_view", seed, intro + " What are the offsets of " + " and ".join(labels) + "?",
                     "two integers", ", ".join(map(str, vals)),
                     lambda ans: grade_list(parse_int_list(ans, 2), vals, labels), steps, hints, variant,
                     grids).with_data(matrix=str(mat), tile=[tm, tn], picks=picks)
    if variant == "formula":
        names = ["i", "j", "ti", "tj"]
        cases = [({"i": e0, "j": e1, "ti": t0, "tj": t1}, want(((e0, e1), (t0, t1))))
                 for t1 in range(gn) for t0 in range(gm) for e1 in range(tn) for e0 in range(tm)]

        def grade_formula(ans: str) -> Grade:
            f = Formula(ans, names)
            bad = [(v, w, f(v)) for v, w in cases if f(v) != w]
            if not bad:
                return Grade.right(f"agrees at all {len(cases)} coordinates")
            v, w, g = bad[0]
            return Grade.wrong(f"wrong at {len(bad)} of {len(cases)} coordinates, e.g. "
                               + ", ".join(f"{k}={x}" for k, x in v.items()) + f": {w}, not {g}")

        expected = f"{d_r}*i + {d_c}*j + {d_r * tm}*ti + {d_c * tn}*tj"
        return Drill("tiled_view", seed, intro + " Write the offset of element (i,j) of tile (ti,tj) as a formula.",
                     "a formula in i, j, ti, tj", expected, grade_formula, steps, hints, variant, grids).with_data(
                         matrix=str(mat), tile=[tm, tn])
    drill = Drill("tiled_view", seed, intro + f" Fill in {lstr(shape)}:((?,?),(?,?)).",
                  f"the layout {lstr(shape)}:((?,?),(?,?)), or just the strides ((?,?),(?,?))", str(want),
                  lambda ans: grade_layout(strides_or_layout(ans, shape), want, 2, what="tiled view"),
                  steps, hints, variant, grids).with_data(matrix=str(mat), tile=[tm, tn])
    logical = A.logical_divide(mat, (A.Layout(tm), A.Layout(tn)))
    drill.mistake("logical_divide's grouping ((tile rows, row tiles), (tile columns, column tiles)) where "
                  "zipped_divide gathers ((the tile), (which tile))",
                  lambda ans: grade_layout(strides_or_layout(ans, logical.shape), logical, 2).correct, str(logical))
    if "pitch" in desc:
        rows_pitched = desc.startswith("row")
        plain = A.zipped_divide(row_major((m, n)) if rows_pitched else A.Layout((m, n)), (A.Layout(tm), A.Layout(tn)))
        gap = (f"rows are {mat.stride[0]} elements apart, not {n}" if rows_pitched else
               f"columns are {mat.stride[1]} elements apart, not {m}")
        drill.mistake(f"a forgotten leading dimension: {gap}",
                      lambda ans: grade_layout(strides_or_layout(ans, shape), plain, 2).correct, str(plain))
    swapped = A.Layout(shape, ((want.stride[0][1], want.stride[0][0]), (want.stride[1][1], want.stride[1][0])))
    drill.mistake("swapped modes: the row and column strides are exchanged",
                  lambda ans: grade_layout(strides_or_layout(ans, shape), swapped, 2).correct, str(swapped))
    return drill


#: Matrix sizes of the design drill: every view below divides at least one of them.
DESIGN_SIZES = [(m, n) for m in (4, 6, 8, 12, 16) for n in (4, 6, 8, 12, 16)]

class WrongSize(Exception):
    """A typed B whose composition cannot have the view's size (raised before composing)."""


VIEWS = {
    "cols2": ("every other column (columns 0, 2, 4, ...)", 1, 2),
    "rows2": ("the even rows (rows 0, 2, 4, ...)", 2, 1),
    "cols4": ("every fourth column (columns 0, 4, ...)", 1, 4),
    "both2": ("the even rows of every other column", 2, 2),
    "transpose": ("the transpose", 0, 0),
}


@register("design_view", "Design a composition", "Find B (a layout or a tiler <..>) so that A o B is a described "
          "view: every other column, even rows, a transpose.", 9)
def make_design(rng: random.Random, seed: int) -> Drill:
    from_sheet = sheet.take(rng)  # the sheet's part 5: the transposed view of (4,8):(8,1), as a composition
    while True:
        mat, desc = (A.parse(sheet.L5), "row-major") if from_sheet else matrix(rng, DESIGN_SIZES)
        m, n = A.size(mat[0]), A.size(mat[1])
        key = "transpose" if from_sheet else pick(rng, [k for k, (_, r, c) in VIEWS.items() if (
            r == 0 or (m % r == 0 and n % c == 0 and n // c >= 2))])
        if not (key == "transpose" and str(A.Layout((n, m), (m, 1))) == str(mat)):
            break  # a square row-major A would be its own transposing B: the prompt would show the key
    what, rs, cs = VIEWS[key]
    if key == "transpose":
        vm, vn = n, m
        b = A.Layout((n, m), (m, 1))

        def src(i: int, j: int) -> tuple[int, int]:
            return j, i
    else:
        vm, vn = m // rs, n // cs
        b = A.Layout((vm, vn), (A.crd2idx((rs, 0), (m, n)), A.crd2idx((0, cs), (m, n))))

        def src(i: int, j: int) -> tuple[int, int]:
            return rs * i, cs * j
    view = A.composition(mat, b)
    cases = [((i, j), mat(src(i, j))) for j in range(vn) for i in range(vm)]
    rule = ("R = A o B means R(c) = A(B(c)): B maps each view coordinate to A's 1-D coordinate of the element it "
            "shows (A's 1-D coordinate of (r, c) is r + M*c).")

    def compose(ans: str) -> Any:
        """A o B for a typed B (a layout or a tiler); AnswerError when B cannot be read."""
        arg = read_layout(ans, tiler=True)
        if isinstance(arg, tuple) and len(arg) > A.rank(mat):
            raise AnswerError(f"a tiler for A has at most {A.rank(mat)} modes")
        if isinstance(arg, tuple):
            size = prod(A.size(t) for t in arg) * prod(A.size(mat[k]) for k in range(len(arg), A.rank(mat)))
        else:
            size = A.size(arg)
        if size != vm * vn:  # A o B has B's size: say so before composing (a huge B would be slow to check)
            raise WrongSize(f"A o B has as many elements as B, {size}; the view has {vm}x{vn} = {vm * vn}")
        return A.composition(mat, arg)

    def grade(ans: str) -> Grade:
        try:
            got = compose(ans)
        except WrongSize as err:
            return Grade.wrong(str(err))
        except A.LayoutError as err:
            return Grade.wrong(f"A o B is refused by the algebra: {str(err)[:200]}")
        sizes = tuple(A.size(got[k]) for k in range(A.rank(got))) if A.rank(got) > 1 else (A.size(got),)
        if sizes != (vm, vn):
            return Grade.wrong(f"A o B has mode sizes {lstr(sizes)}; the view is {vm}x{vn}")
        bad = [c for c, w in cases if got(c) != w]
        if bad:
            return Grade.wrong(f"A o B shows the wrong element at {len(bad)} of {len(cases)} view coordinates, e.g. "
                               + ", ".join(lstr(c) for c in bad[:3]))
        return Grade.right(f"A o B = {got}, the requested view")

    def is_view(ans: str) -> bool:
        got = read_layout(ans)
        return A.size(got) == A.size(view) and all(got(c) == view(c) for c, _ in cases)

    steps = [step(rule, mat),
             step(f"View element (i, j) is A's element {_src_text(key, rs, cs)}.", None),
             step(f"Its 1-D coordinate in A: B = {b}.", b),
             step(f"A o B = {view}.", view)]
    steps += _engine_steps("composition", mat, b)
    drill = Drill("design_view", seed,
                 f"A = {mat} is a {m}x{n} matrix stored {desc}. Give B such that A o B is the {vm}x{vn} view of "
                 f"{what}: view element (i, j) = {_src_text(key, rs, cs)} of A.",
                  "a layout B in CuTe notation, or a tiler such as {ex}", str(b), grade,
                  steps, [rule, steps[1]["text"]], variant=key,
                  grids=[offsets_grid(mat, "A"), offsets_grid(view, "The view A o B")]).with_data(
                      matrix=str(mat), view=key)
    if not grade(str(view)).correct:
        drill.mistake("the view instead of B: A o B is the view; B is the map from view coordinates to A's 1-D "
                      "coordinates", is_view)
    return drill.with_example("<4:2, 8:1>", "<3:2, 4:1>", "<2:4, 6:1>", "<8:1, 2:3>",
                              shown=lambda t: f"{t} or " + "(" + ",".join(
                                  "_" + p.strip().replace(":", ":_") for p in t[1:-1].split(",")) + ")")


def _src_text(key: str, rs: int, cs: int) -> str:
    if key == "transpose":
        return "(j, i)"
    r = "i" if rs == 1 else f"{rs}i"
    c = "j" if cs == 1 else f"{cs}j"
    return f"({r}, {c})"


__all__ = ["make_transpose", "make_tiled", "make_design", "table", "read_layout"]
