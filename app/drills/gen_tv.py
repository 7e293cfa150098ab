"""Drill kinds on thread partitions: TV layouts of a TiledCopy and of the m16n8k16 MMA fragments, and the 32-byte
sector efficiency of a thread partition."""

from __future__ import annotations

import random
import re
from typing import Any

import algebra as A
from algebra import coalescing as C
from app.drills.common import grade_list, lstr, natural, pick, step
from app.drills.core import Drill, Grade, Grid, register
from app.drills.parsing import AnswerError, clean, parse_int_list, parse_pairs

MMA = "SM80_16x8x16_F32F16F16F32_TN"
TV_RULE = ("A TV layout maps (thread, value) to the column-major index of an element in the tile: split the thread "
           "and the value by their shapes, take the inner product with the strides, then index -> (row, column) "
           "with row = index mod rows.")


def owner_grid(tv: Any, rows: int, cols: int, title: str, highlight: set[tuple[int, int]] | None = None) -> Grid:
    """Each tile element labelled with the thread (and value) that owns it, computed from the engine's TV layout."""
    cells: list[list[Any]] = [["" for _ in range(cols)] for _ in range(rows)]
    colours = [[-1] * cols for _ in range(rows)]
    nthr, nval = A.size(tv[0]), A.size(tv[1])
    for t in range(nthr):
        for v in range(nval):
            r, c = natural(tv((t, v)), (rows, cols))
            cells[r][c] = f"T{t}.{v}"
            colours[r][c] = t % 32
    hl = highlight or set()
    marks = [["hl" if (r, c) in hl else "" for c in range(cols)] for r in range(rows)]
    return Grid(title, cells, marks=marks, caption=str(tv), colours=colours)


@register("tv_layout", "TV layouts", "Read a TV layout: which elements a thread owns in a TiledCopy, where lane l's "
          "value v sits in an m16n8k16 fragment, which lane holds C(r, c).", 10)
def make_tv(rng: random.Random, seed: int) -> Drill:
    from algebra import atoms

    variant = pick(rng, ["copy", "mma_pos", "mma_pos", "mma_owner"])
    if variant == "copy":
        bits, vals = pick(rng, [(16, 8), (32, 4)])
        thr = pick(rng, [A.Layout((16, 8), (8, 1)), A.Layout((32, 4), (4, 1)), A.Layout((8, 4), (4, 1)),
                         A.Layout((32, 8), (8, 1))])
        make_tiled_copy = getattr(atoms, "make_tiled_copy", None)
        if make_tiled_copy is None:  # the tiled forms live beside the atoms
            from algebra.atoms_tiled import make_tiled_copy
        tc = make_tiled_copy("SM80_CP_ASYNC_CACHEALWAYS_16B", thr_layout=thr, val_layout=A.Layout((1, vals)),
                                   element_bits=bits)
        rows, cols = tc.tiler
        tv = tc.tv_layout
        t = rng.randrange(A.size(tv[0]))
        want = [tuple(natural(tv((t, v)), (rows, cols))) for v in range(A.size(tv[1]))]
        tsplit = natural(t, tv.shape[0])
        steps = [step(TV_RULE, tv),
                 step(f"Thread {t} splits by {lstr(tv.shape[0])} into {lstr(tsplit)}: index "
                      f"{tv((t, 0))} for value 0."),
                 *[step(f"Value {v}: index {tv((t, v))} -> (row, col) = {lstr(w)}.") for v, w in enumerate(want)]]

        def grade_copy(ans: str) -> Grade:
            got = parse_pairs(ans)
            if sorted(set(got)) == sorted(want) and len(got) == len(want):
                return Grade.right()
            missing = sorted(set(want) - set(got))
            extra = sorted(set(got) - set(want))
            return Grade.wrong(f"missing {missing[:4]}" + (f", not owned {extra[:4]}" if extra else ""))

        return Drill("tv_layout", seed,
                     f"make_tiled_copy with threads {thr} and values {A.Layout((1, vals))} ({bits}-bit elements) "
                     f"gives the tile {lstr((rows, cols))} and the TV layout {tv} (values are column-major indices "
                     f"in the tile). Which elements (row, col) does thread {t} own?",
                     "(row,col) pairs in any order; a range such as (1, 8..15) is read",
                     " ".join(lstr(w) for w in want), grade_copy, steps, [TV_RULE, steps[1]["text"]], variant,
                     [owner_grid(tv, rows, cols, "Tile owners (thread.value)", set(want))]).with_data(
                         tv=str(tv), tiler=[rows, cols], thread=t)
    mma = atoms.get(MMA)
    operand = pick(rng, ["C", "C", "A", "B"]) if variant == "mma_pos" else "C"
    tv = getattr(mma, operand)
    m, n, k = mma.shape_mnk
    rows, cols = {"C": (m, n), "A": (m, k), "B": (n, k)}[operand]
    names = {"C": "M x N", "A": "M x K", "B": "N x K, so (row, col) = (n, k)"}[operand]
    grids = [owner_grid(tv, rows, cols, f"The {operand} fragment: owner of each element")]
    if variant == "mma_pos":
        lane, v = rng.randrange(32), rng.randrange(A.size(tv[1]))
        idx = tv((lane, v))
        want = tuple(natural(idx, (rows, cols)))
        steps = [step(TV_RULE, tv),
                 step(f"Lane {lane} splits by {lstr(tv.shape[0])} into {lstr(natural(lane, tv.shape[0]))}; value {v} "
                      f"by {lstr(tv.shape[1])} into {lstr(natural(v, tv.shape[1]))}."),
                 step(f"Index {idx} in the {rows}x{cols} tile: row {idx} mod {rows} = {want[0]}, column {idx} div "
                      f"{rows} = {want[1]}.")]
        grids[0].marks = [["hl" if (r, c) == want else "" for c in range(cols)] for r in range(rows)]
        return Drill("tv_layout", seed,
                     f"{MMA} (mma.sync m16n8k16): the {operand} operand's TV layout is {tv}, mapping (lane, value) "
                     f"to the column-major index in the {rows}x{cols} tile ({names}). Where is lane {lane}'s "
                     f"value {v}?",
                     "(row,col)", lstr(want), lambda ans: _pair(ans, want), steps, [TV_RULE, steps[1]["text"]],
                     variant, grids).with_data(tv=str(tv), tile=[rows, cols], lane=lane, value=v)
    r, c = rng.randrange(rows), rng.randrange(cols)
    target = A.crd2idx((r, c), (rows, cols))
    owner = next((t, v) for t in range(32) for v in range(A.size(tv[1])) if tv((t, v)) == target)
    steps = [step(TV_RULE, tv),
             step(f"C({r},{c}) has column-major index {r} + {rows}*{c} = {target}."),
             step(f"Solve {tv}(lane, value) = {target}: lane {owner[0]}, value {owner[1]}.")]
    grids[0].marks = [["hl" if (i, j) == (r, c) else "" for j in range(cols)] for i in range(rows)]
    return Drill("tv_layout", seed,
                 f"{MMA}: the C accumulator's TV layout is {tv} over the {rows}x{cols} tile (column-major index). "
                 f"Which lane holds C({r},{c}), and as which of its values?",
                 "two integers: lane, value", f"{owner[0]}, {owner[1]}",
                 lambda ans: grade_list(parse_int_list(ans, 2), list(owner), ["lane", "value"]), steps,
                 [TV_RULE, steps[1]["text"]], variant, grids).with_data(tv=str(tv), tile=[rows, cols], rc=[r, c])


def _pair(answer: str, want: tuple[int, int]) -> Grade:
    got = tuple(parse_int_list(answer, 2))
    return Grade.right() if got == want else Grade.wrong(f"{lstr(got)} is not it: {lstr(want)}")


def _sector_answer(answer: str) -> tuple[int, float]:
    """Read "sectors, utilization": ``8, 50%``, ``8 sectors 0.5``. Post-condition: utilization as a fraction."""
    s = clean(answer)
    nums = re.findall(r"\d+(?:\.\d+)?", s)
    if len(nums) != 2:
        raise AnswerError("expected two numbers: sectors and utilization (e.g. 8, 50%)")
    if "." in nums[0]:
        raise AnswerError("the number of sectors is an integer")
    util = float(nums[1])
    if "%" in s or util > 1:
        util /= 100
    return int(nums[0]), util


@register("sectors", "Sector efficiency", "Count the 32-byte sectors one warp instruction touches for a thread "
          "partition of a tile, and its utilization (the 50 % / 100 % example and variations).", 11)
def make_sectors(rng: random.Random, seed: int) -> Drill:
    rows, cols = pick(rng, [(16, 8), (32, 8), (16, 16), (32, 4)])
    data_major = pick(rng, ["column", "column", "row"])
    tile = A.Layout((rows, cols))
    memory = None if data_major == "column" else A.make_layout_row_major((rows, cols))
    style = pick(rng, ["blocked", "thread", "thread"])
    vector = 1
    if style == "blocked":
        bh, bw = pick(rng, [(2, 2), (4, 1), (1, 4), (2, 1)])
        d = A.zipped_divide(tile, (A.Layout(bh), A.Layout(bw)))
        tv = A.make_layout(d[1], d[0])
        vector = pick(rng, [1, 2]) if bh * bw >= 2 else 1
        how = f"each thread takes one {bh}x{bw} block (thread t = the block index)"
    else:
        tm, tn = pick(rng, [(t, 32 // t) for t in (32, 16, 8, 4, 2) if rows % t == 0 and cols % (32 // t) == 0])
        order = pick(rng, ["column", "row"])
        thr = A.Layout((tm, tn)) if order == "column" else A.make_layout_row_major((tm, tn))
        d = A.zipped_divide(tile, (A.Layout(tm), A.Layout(tn)))
        tv = A.make_layout(A.composition(d[0], A.right_inverse(thr)), d[1])
        how = f"local_partition with a {order}-major {tm}x{tn} thread layout {thr}"
    try:
        rep = C.partition_sectors(tv, 4, memory=memory, vector=vector)
    except A.LayoutError:
        vector = 1
        rep = C.partition_sectors(tv, 4, memory=memory, vector=1)
    first = rep.instructions[0]
    util = first.utilization
    addrs = first.byte_addresses
    want_s = first.num_sectors
    what = "one 4-byte value per thread (value 0)" if vector == 1 else f"values 0..{vector - 1} of each thread as " \
        f"one {4 * vector}-byte vector"
    steps = [step("One warp instruction fetches every 32-byte sector any lane touches; utilization = bytes asked / "
                  "(32 x sectors)."),
             step(f"The partition as a TV layout (thread, value) -> tile index: {tv}.", tv),
             step(f"Lanes 0..3 read byte addresses {addrs[:4]}...; {len(addrs)} lanes x {4 * vector} bytes = "
                  f"{first.bytes_requested} bytes."),
             step(f"They fall in sectors {first.sectors[:8]}{'...' if want_s > 8 else ''}: {want_s} sectors, "
                  f"{first.bytes_used} of {32 * want_s} bytes used = {round(100 * util, 1):g}%."),
             step("Rule: the thread layout's fast mode should run along the contiguous direction of the data.")]

    shown = f"{round(100 * util, 1):g}%"

    def grade(ans: str) -> Grade:
        s, u = _sector_answer(ans)
        items = [s == want_s, abs(u - util) < 0.0051]
        if all(items):
            return Grade(True, "both right", items=items)
        return Grade.wrong(f"{want_s} sectors at {shown}; you gave {s} and {100 * u:g}%", items=items)

    return Drill("sectors", seed,
                 f"A {rows}x{cols} fp32 tile is stored {data_major}-major. 32 threads (one warp) partition it: {how}. "
                 f"One instruction reads {what}. How many 32-byte sectors does it touch, and what is the utilization?",
                 "two numbers: sectors, utilization (e.g. 8, 50%)", f"{want_s}, {shown}", grade, steps,
                 [steps[0]["text"], steps[2]["text"]], variant=f"{style}/{data_major}/v{vector}").with_data(
                     tv=str(tv), memory=None if memory is None else str(memory), vector=vector)
