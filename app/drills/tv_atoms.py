"""TV-layout drills over the whole atom table: MMA fragments of SM70 / SM80 mma.sync and SM90 wgmma (every distinct
TV layout the engine knows, not three), ldmatrix's destination layout, and the TV layout ``make_tiled_copy`` builds
from ``raked_product`` and ``right_inverse`` (the seed's exercise 2). Every key is read off the engine's layouts.
"""

from __future__ import annotations

import functools
import random
from typing import Any

import algebra as A
from algebra import atoms
from app.drills.common import grade_cells, grade_layout, layout_matches, lstr, natural, pick, step
from app.drills.core import Drill, Grade, Grid
from app.drills.parsing import parse_pairs

TV_RULE = ("A TV layout maps (thread, value) to the column-major index of an element in the tile: split the thread "
           "and the value by their shapes, take the inner product with the strides, then index -> (row, column) "
           "with row = index mod rows.")
TILE = {"C": ("M", "N"), "A": ("M", "K"), "B": ("N", "K")}


@functools.cache
def mma_fragments() -> tuple[tuple[str, str], ...]:
    """(atom, operand) for every distinct, injective TV layout whose threads each own their own elements (no
    stride-0 thread mode: the SS wgmma operands live in shared memory, not in threads)."""
    seen: dict[tuple, tuple[str, str]] = {}
    for name in atoms.mma_names():
        mma = atoms.get(name)
        for op in "ABC":
            tv = getattr(mma, op)
            if 0 in A.flatten(tv[0].stride) or not A.is_injective(tv):
                continue
            rows, cols = _tile(mma, op)
            seen.setdefault((rows, cols, str(tv)), (name, op))
    return tuple(sorted(seen.values()))


def _tile(mma: Any, op: str) -> tuple[int, int]:
    m, n, k = mma.shape_mnk
    return {"C": (m, n), "A": (m, k), "B": (n, k)}[op]


def owner_grid(tv: Any, rows: int, cols: int, title: str, highlight: set[tuple[int, int]] | None = None) -> Grid:
    """Each tile element labelled with the thread (and value) that owns it, computed from the engine's TV layout."""
    cells: list[list[Any]] = [["" for _ in range(cols)] for _ in range(rows)]
    colours = [[-1] * cols for _ in range(rows)]
    for t in range(A.size(tv[0])):
        for v in range(A.size(tv[1])):
            r, c = natural(tv((t, v)), (rows, cols))
            cells[r][c] = f"T{t}.{v}"
            colours[r][c] = t % 32
    hl = highlight or set()
    marks = [["hl" if (r, c) in hl else "" for c in range(cols)] for r in range(rows)]
    return Grid(title, cells, marks=marks, caption=str(tv), colours=colours)


def _pair_grade(want: tuple[int, int]) -> Any:
    from app.drills.parse_words import parse_rc

    def grade(ans: str) -> Grade:
        got = parse_rc(ans)
        if got == want:
            return Grade.right()
        bad = [n for n, g, w in zip(("the row", "the column"), got, want, strict=True) if g != w]
        return Grade.wrong(f"{lstr(got)} is not it: {' and '.join(bad)} {'are' if len(bad) > 1 else 'is'} wrong")

    return grade


def mma_drill(rng: random.Random, seed: int, variant: str) -> Drill:
    """Where thread t's value v sits (mma_pos), or which thread and value hold element (r, c) (mma_owner)."""
    family = pick(rng, ["SM70", "SM80", "SM80", "SM90"])
    name, op = pick(rng, [f for f in mma_fragments() if f[0].startswith(family)] or list(mma_fragments()))
    mma = atoms.get(name)
    tv = getattr(mma, op)
    rows, cols = _tile(mma, op)
    nthr, nval = A.size(tv[0]), A.size(tv[1])
    who = "lane" if nthr == 32 else "thread"
    group = {32: "a warp", 128: "a warpgroup (4 warps)"}.get(nthr, f"{nthr} threads")
    words = f"{TILE[op][0]} x {TILE[op][1]}"
    intro = (f"{name}: the {op} operand's TV layout is {tv} ({group}, {nval} values each), mapping ({who}, value) "
             f"to the column-major index in the {rows}x{cols} tile ({words})."
             + (" Here a thread is the index 0..7 inside one quad-pair, not the lane: CuTe's SM70 thread layout "
                "(4,2):(1,16) makes threads 0-3 lanes 0-3 and threads 4-7 lanes 16-19 of quad-pair 0."
                if name.startswith("SM70") else ""))
    grids = [owner_grid(tv, rows, cols, f"The {op} fragment: owner of each element")] if rows * cols <= 1024 else []
    if variant == "mma_pos":
        t, v = rng.randrange(nthr), rng.randrange(nval)
        idx = tv((t, v))
        want = (idx % rows, idx // rows)
        steps = [step(TV_RULE, tv),
                 step(f"{who.title()} {t} splits by {lstr(tv.shape[0])} into {lstr(natural(t, tv.shape[0]))}; value "
                      f"{v} by {lstr(tv.shape[1])} into {lstr(natural(v, tv.shape[1]))}."),
                 step(f"Index {idx} in the {rows}x{cols} tile: row {idx} mod {rows} = {want[0]}, column {idx} div "
                      f"{rows} = {want[1]}.")]
        swapped = (idx // cols, idx % cols) if (idx // cols, idx % cols) != want else None
        drill = Drill("tv_layout", seed, f"{intro} Where is {who} {t}'s value {v}? Give (row, col).", "(row,col)",
                      lstr(want), _pair_grade(want), steps, [TV_RULE, steps[1]["text"]], variant, grids).with_data(
            atom=name, operand=op, tv=str(tv), tile=[rows, cols], thread=t, value=v)
        if swapped and swapped[0] < rows and swapped[1] < cols:
            drill.mistake("a row-major reading of the index (the TV layout's index is column-major: row = index "
                          "mod rows)", lambda ans: _pair_grade(swapped)(ans).correct, lstr(swapped))
        return drill
    r, c = rng.randrange(rows), rng.randrange(cols)
    target = r + rows * c
    owner = next((t, v) for t in range(nthr) for v in range(nval) if tv((t, v)) == target)
    steps = [step(TV_RULE, tv), step(f"({r},{c}) has column-major index {r} + {rows}*{c} = {target}."),
             step(f"Solve {tv}({who}, value) = {target}: {who} {owner[0]}, value {owner[1]}.")]
    from app.drills.common import grade_list
    from app.drills.parsing import parse_int_list

    return Drill("tv_layout", seed, f"{intro} Which {who} holds element ({r},{c}), and as which of its values?",
                 f"two integers: {who}, value", f"{owner[0]}, {owner[1]}",
                 lambda ans: grade_list(parse_int_list(ans, 2), list(owner), [who, "value"]), steps,
                 [TV_RULE, steps[1]["text"]], variant, grids).with_data(
        atom=name, operand=op, tv=str(tv), tile=[rows, cols], rc=[r, c])


LDSM = ["SM75_U32x1_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N"]


def ldmatrix_elements(dst: Any, t: int, m: int) -> list[tuple[int, int]]:
    """(row, col) of the b16 elements of 8x8 matrix ``m`` that lane ``t`` receives, from the atom's destination TV
    layout over bits (1024 bits per matrix, elements numbered row-major)."""
    out = set()
    for v in range(A.size(dst[1])):
        bit = dst((t, v))
        if bit // 1024 == m:
            e = (bit % 1024) // 16
            out.add((e // 8, e % 8))
    return sorted(out)


def ldmatrix_drill(rng: random.Random, seed: int) -> Drill:
    """Which elements of matrix m a lane receives from ldmatrix (the destination TV layout, read bit by bit)."""
    name = pick(rng, LDSM)
    atom = atoms.get(name)
    dst = atom.dst
    nmat = A.size(dst) // 1024
    t, m = rng.randrange(32), rng.randrange(nmat)
    want = ldmatrix_elements(dst, t, m)
    rule = ("ldmatrix's destination TV layout maps (lane, value bit) to a bit of the 8x8 b16 matrices it loads: "
            "1024 bits per matrix, 16 bits per element, elements numbered row by row.")
    bits = sorted({dst((t, v)) for v in range(A.size(dst[1])) if dst((t, v)) // 1024 == m})
    steps = [step(rule, dst),
             step(f"Lane {t}'s bits in matrix {m}: {bits[0]}..{bits[-1]} ({len(bits)} bits, "
                  f"{len(bits) // 16} elements)."),
             step("Element = (bit mod 1024) / 16; row = element / 8, column = element mod 8: "
                  + " ".join(lstr(e) for e in want) + ".")]

    def grade(ans: str) -> Grade:
        return grade_cells(parse_pairs(ans), want, f"lane {t}", "received by")

    col_major = sorted({(e[1], e[0]) for e in want})
    drill = Drill("tv_layout", seed,
                  f"{name} ({atom.ptx}) loads {nmat} 8x8 matrices of 16-bit elements; its destination TV layout is "
                  f"{dst}. Which elements (row, col) of matrix {m} does lane {t} receive?",
                  "(row,col) pairs in any order", " ".join(lstr(e) for e in want), grade, steps,
                  [rule, steps[1]["text"]], "ldmatrix").with_data(atom=name, tv=str(dst), lane=t, matrix=m)
    if col_major != want:
        drill.mistake("a column-major reading of the matrix (ldmatrix numbers elements row by row)",
                      lambda ans: sorted(set(parse_pairs(ans))) == col_major, " ".join(lstr(e) for e in col_major))
    return drill


COPY_ATOMS = [("SM80_CP_ASYNC_CACHEALWAYS_16B", 16, 8), ("SM80_CP_ASYNC_CACHEALWAYS_16B", 32, 4),
              ("SM80_CP_ASYNC_CACHEALWAYS_8B", 16, 4), ("SM80_CP_ASYNC_CACHEALWAYS_8B", 32, 2),
              ("UniversalCopy_128b", 16, 8), ("UniversalCopy_64b", 32, 2)]


def tiled_copy_drill(rng: random.Random, seed: int) -> Drill:
    """make_tiled_copy's TV layout from its thread and value layouts: right_inverse(raked_product(thr, val)) read
    with shape (threads, values)."""
    op, bits, vals = pick(rng, COPY_ATOMS)
    tm, tn = pick(rng, [(16, 8), (8, 16), (32, 4), (8, 8), (4, 8), (32, 8)])
    thr = A.make_layout_row_major((tm, tn)) if rng.random() < 0.6 else A.Layout((tm, tn))
    val = A.Layout((1, vals)) if rng.random() < 0.7 else A.Layout((vals, 1))
    tc = atoms.make_tiled_copy(op, thr_layout=thr, val_layout=val, element_bits=bits)
    want = tc.tv_layout
    raked = A.raked_product(thr, val)
    inv = A.right_inverse(raked)
    rows, cols = tc.tiler
    rule = ("make_tiled_copy(atom, thr, val): raked_product(thr, val) maps a (row, col) of the tile to the "
            "(thread, value) index that copies it; its right_inverse maps back, read with shape (size(thr), "
            "size(val)): the TV layout, (thread, value) -> column-major index in the tile.")
    steps = [step(rule),
             step(f"raked_product({thr}, {val}) = {raked}: the tile is {lstr(tc.tiler)}.", raked),
             step(f"right_inverse of it = {inv}.", inv),
             step(f"With shape ({A.size(thr)},{A.size(val)}): TV = {want}.", want)]
    drill = Drill("tv_layout", seed,
                  f"make_tiled_copy(Copy_Atom<{op}, {bits}-bit>, thr = {thr}, val = {val}) tiles a {rows}x{cols} "
                  f"tile. Write its TV layout: (thread, value) -> column-major index in the tile, with mode sizes "
                  f"({A.size(thr)},{A.size(val)}).", "a layout in CuTe notation, e.g. {ex}",
                  str(want), lambda ans: grade_layout(ans, want, 1, what="TV layout"), steps,
                  [rule, steps[1]["text"]], "tiled_copy_tv").with_data(
        atom=op, element_bits=bits, thr=str(thr), val=str(val), tiler=[rows, cols])
    drill.mistake("the view instead of its inverse: raked_product(thr, val) maps tile coordinates to (thread, "
                  "value); the TV layout is its right inverse", layout_matches(raked, 0), str(raked))
    return drill.with_example("((8,16),8):((128,1),16)", "((4,32),4):((128,1),32)", "((16,8),2):((16,1),8)",
                              "((2,64),8):((512,1),64)")
