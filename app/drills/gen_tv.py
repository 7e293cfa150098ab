"""Drill kinds on thread partitions: TV layouts of a TiledCopy and of the m16n8k16 MMA fragments, and the 32-byte
sector efficiency of a thread partition."""

from __future__ import annotations

import random
from fractions import Fraction

import algebra as A
from algebra.hw import coalescing as C
from app.drills import tv_atoms as T
from app.drills.common import grade_cells, lstr, natural, pick, step
from app.drills.core import Drill, Grade, register
from app.drills.parse_words import parse_sector_answer
from app.drills.parsing import parse_pairs

MMA = "SM80_16x8x16_F32F16F16F32_TN"
TV_RULE = ("A TV layout maps (thread, value) to the column-major index of an element in the tile: split the thread "
           "and the value by their shapes, take the inner product with the strides, then index -> (row, column) "
           "with row = index mod rows.")


owner_grid = T.owner_grid  # one implementation, in tv_atoms


@register("tv_layout", "TV layouts", "Read a TV layout: which elements a thread owns in a TiledCopy, the TV layout "
          "make_tiled_copy builds, where a thread's value sits in an mma.sync / wgmma fragment, which thread holds an "
          "element, what ldmatrix delivers to a lane.", 10)
def make_tv(rng: random.Random, seed: int) -> Drill:
    from algebra import atoms

    variant = pick(rng, ["copy", "tiled_copy_tv", "mma_pos", "mma_pos", "mma_owner", "ldmatrix"])
    if variant in ("mma_pos", "mma_owner"):
        return T.mma_drill(rng, seed, variant)
    if variant == "ldmatrix":
        return T.ldmatrix_drill(rng, seed)
    if variant == "tiled_copy_tv":
        return T.tiled_copy_drill(rng, seed)
    if variant == "copy":
        bits, vals = pick(rng, [(16, 8), (32, 4)])
        thr = pick(rng, [A.Layout((16, 8), (8, 1)), A.Layout((32, 4), (4, 1)), A.Layout((8, 4), (4, 1)),
                         A.Layout((32, 8), (8, 1))])
        make_tiled_copy = getattr(atoms, "make_tiled_copy", None)
        if make_tiled_copy is None:  # the tiled forms live beside the atoms
            from algebra.hw.atoms_tiled import make_tiled_copy
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
            return grade_cells(parse_pairs(ans), want, f"thread {t}", "owned by")

        return Drill("tv_layout", seed,
                     f"make_tiled_copy with threads {thr} and values {A.Layout((1, vals))} ({bits}-bit elements) "
                     f"gives the tile {lstr((rows, cols))} and the TV layout {tv} (values are column-major indices "
                     f"in the tile). Which elements (row, col) does thread {t} own?",
                     "(row,col) pairs in any order; a range such as {ex} is read",
                     " ".join(lstr(w) for w in want), grade_copy, steps, [TV_RULE, steps[1]["text"]], variant,
                     [owner_grid(tv, rows, cols, "Tile owners (thread.value)", set(want))]).with_data(
                         tv=str(tv), tiler=[rows, cols], thread=t).with_example(
                             "(1, 8..15)", "(2, 0..7)", "(3, 16..23)", "(0, 4..7)")
    raise AssertionError(variant)  # pragma: no cover


def _sector_answer(answer: str) -> tuple[int, Fraction, Fraction]:
    """Read "sectors, utilization": ``8, 50%``, ``8 sectors 0.5``, ``8, 1/8``. Post-condition: (sectors, utilization
    as a fraction, the rounding the typed digits allow) -- app.drills.parse_words.parse_sector_answer."""
    return parse_sector_answer(answer)


def percent(p: Fraction) -> str:
    """``p`` percent as typed: exactly when it has at most 3 decimals (6.25%, 3.125%), else to one decimal (33.3%),
    so that changing the last digit always gives a wrong utilization. Post-condition: ends with "%"."""
    for k in range(4):
        if (p * 10 ** k).denominator == 1:
            return f"{p.numerator / p.denominator:.{k}f}%"
    return f"{round(float(p), 1):g}%"


@register("sectors", "Sector efficiency", "Count the 32-byte sectors one warp instruction touches for a thread "
          "partition of a tile, and its utilization (the 50 % / 100 % example and variations).", 11)
def make_sectors(rng: random.Random, seed: int) -> Drill:
    rows, cols = pick(rng, [(16, 8), (32, 8), (16, 16), (32, 4), (8, 16), (8, 32), (64, 4), (64, 8), (32, 16),
                            (16, 32), (4, 32), (32, 32), (8, 8), (16, 4), (4, 16)])
    etype, eb = pick(rng, [("fp32", 4), ("fp32", 4), ("fp16", 2), ("fp16", 2), ("fp64", 8), ("int8", 1)])
    data_major = pick(rng, ["column", "column", "row"])
    tile = A.Layout((rows, cols))
    memory = None if data_major == "column" else A.make_layout_row_major((rows, cols))
    style = pick(rng, ["blocked", "thread", "thread"])
    vector = 1
    if style == "blocked":
        bh, bw = pick(rng, [b for b in [(2, 2), (4, 1), (1, 4), (2, 1), (1, 2), (4, 2), (2, 4), (8, 1), (1, 8)]
                            if rows % b[0] == 0 and cols % b[1] == 0 and rows * cols >= 32 * b[0] * b[1]])
        d = A.zipped_divide(tile, (A.Layout(bh), A.Layout(bw)))
        tv = A.make_layout(d[1], d[0])
        widest = C.widest_vector(tv, eb, memory)
        vector = pick(rng, [n for n in (1, 2, 4, 8) if n <= widest])
        nb = (rows // bh) * (cols // bw)
        how = (f"the tile is cut into {nb} blocks of {bh}x{bw} (numbered column-major) and thread t takes block t"
               + (f"; the warp is threads 0..31, so one instruction covers blocks 0..31 of the {nb}" if nb > 32
                  else ", one block per thread"))
    else:
        tm, tn = pick(rng, [(t, 32 // t) for t in (32, 16, 8, 4, 2, 1) if rows % t == 0 and cols % (32 // t) == 0])
        order = pick(rng, ["column", "row"])
        thr = A.Layout((tm, tn)) if order == "column" else A.make_layout_row_major((tm, tn))
        d = A.zipped_divide(tile, (A.Layout(tm), A.Layout(tn)))
        tv = A.make_layout(A.composition(d[0], A.right_inverse(thr)), d[1])
        how = f"local_partition with a {order}-major {tm}x{tn} thread layout {thr}"
    try:
        rep = C.partition_sectors(tv, eb, memory=memory, vector=vector)
    except A.LayoutError:
        vector = 1
        rep = C.partition_sectors(tv, eb, memory=memory, vector=1)
    first = rep.instructions[0]
    addrs = first.byte_addresses
    want_s = first.num_sectors
    shown = percent(Fraction(100 * first.bytes_used, 32 * want_s))
    what = f"one {eb}-byte value per thread (value 0)" if vector == 1 else f"values 0..{vector - 1} of each thread " \
        f"as one {eb * vector}-byte vector"
    steps = [step("One warp instruction fetches every 32-byte sector any lane touches; utilization = bytes asked / "
                  "(32 x sectors)."),
             step(f"The partition as a TV layout (thread, value) -> tile index: {tv}.", tv),
             step(f"Lanes 0..3 read byte addresses {addrs[:4]}...; {len(addrs)} lanes x {eb * vector} bytes = "
                  f"{first.bytes_requested} bytes."),
             step(f"They fall in sectors {first.sectors[:8]}{'...' if want_s > 8 else ''}: {want_s} sectors, "
                  f"{first.bytes_used} of {32 * want_s} bytes used = {shown}."),
             step("Rule: the thread layout's fast mode should run along the contiguous direction of the data.")]

    def grade(ans: str) -> Grade:
        s, u, tol = _sector_answer(ans)
        exact = Fraction(first.bytes_used, 32 * want_s)
        items = [s == want_s, abs(u - exact) <= tol]
        if all(items):
            return Grade(True, "both right", items=items)
        wrong = [w for w, ok in zip(("the number of sectors", "the utilization"), items, strict=True) if not ok]
        return Grade.wrong(f"{' and '.join(wrong)} {'are' if len(wrong) > 1 else 'is'} wrong", items=items)

    return Drill("sectors", seed,
                 f"A {rows}x{cols} {etype} tile ({eb}-byte elements) is stored {data_major}-major. 32 threads (one "
                 f"warp) partition it: {how}. "
                 f"One instruction reads {what}. How many 32-byte sectors does it touch, and what is the utilization?",
                 "two numbers: sectors, utilization (e.g. {ex}; a fraction such as 1/8 is read)",
                 f"{want_s}, {shown}", grade, steps,
                 [steps[0]["text"], steps[2]["text"]], variant=f"{style}/{data_major}/v{vector}").with_data(
                     tv=str(tv), memory=None if memory is None else str(memory), vector=vector,
                     element_bytes=eb).with_example(*SECTOR_EXAMPLES)


#: Example answers the sector format shows (each drill takes one that is wrong for it).
SECTOR_EXAMPLES = ("8, 50%", "12, 25%", "6, 75%", "20, 40%", "3, 62.5%")
