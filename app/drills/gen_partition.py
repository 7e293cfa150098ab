"""Drill kind ``partition``: local_tile and local_partition, the two "divide, then fix one mode" partitions.

local_tile(L, tiler, coord) keeps the tile at tile coordinate ``coord`` (zipped_divide(L, tiler)(_, coord)): a CTA's
block. local_partition(L, thr, t) keeps, in every tile of shape(thr), the element at thread t's position in thr
(zipped_divide(L, shape(thr))(crd, _) with thr(crd) = t): one thread's values. Keys are the engine's; each is checked
point by point against the zipped_divide it is defined by.
"""

from __future__ import annotations

import random
from typing import Any

import algebra as A
from app.drills.common import grade_list, lstr, pick, row_major, step
from app.drills.core import Drill, Grade, register
from app.drills.parsing import AnswerError, parse_int_list

RULE = ("Both divide first: zipped_divide(L, tiler) = ((inside a tile), (which tile)). local_tile fixes the tile "
        "coordinate (a CTA's whole block); local_partition fixes the position inside each tile to the thread's "
        "coordinate in the thread layout (one element per tile for that thread).")


def _matrix(rng: random.Random) -> Any:
    m, n = pick(rng, [(8, 8), (8, 16), (16, 8), (16, 16), (4, 16), (12, 8)])
    return A.Layout((m, n)) if rng.random() < 0.5 else row_major((m, n))


def _tile_drill(rng: random.Random, seed: int, mat: Any) -> Drill:
    m, n = A.size(mat[0]), A.size(mat[1])
    tm = pick(rng, [t for t in (2, 4, 8) if m % t == 0 and t < m])
    tn = pick(rng, [t for t in (2, 4, 8) if n % t == 0 and t < n and t * tm <= 16] or [2])
    coord = (rng.randrange(m // tm), rng.randrange(n // tn))
    tiler = (A.Layout(tm), A.Layout(tn))
    tile, off = A.local_tile(mat, tiler, coord)
    z = A.zipped_divide(mat, tiler)
    assert all(off + tile((i, j)) == z(((i, j), coord)) for i in range(tm) for j in range(tn))
    want = [off + tile((i, j)) for j in range(tn) for i in range(tm)]
    steps = [step(RULE, mat), step(f"zipped_divide(L, <{tm}:1, {tn}:1>) = {z}.", z),
             step(f"Fix the tile coordinate {lstr(coord)}: the tile is {tile} starting at offset {off}.", tile),
             step("Its offsets, column by column: " + ", ".join(map(str, want)) + ".")]
    labels = [f"element ({i},{j})" for j in range(tn) for i in range(tm)]
    drill = Drill("partition", seed,
                  f"L = {mat}. A CTA takes local_tile(L, <{tm}:1, {tn}:1>, {lstr(coord)}). List the offsets of its "
                  f"{tm}x{tn} tile column by column (element (0,0), (1,0), ... then the next column).",
                  f"{tm * tn} integers", ", ".join(map(str, want)),
                  lambda ans: grade_list(parse_int_list(ans, tm * tn), want, labels), steps, [RULE, steps[1]["text"]],
                  "local_tile").with_data(op="local_tile", args=[str(mat), [str(t) for t in tiler], list(coord)])
    rows_first = [off + tile((i, j)) for i in range(tm) for j in range(tn)]
    if rows_first != want:
        drill.mistake("the tile read row by row; the question lists it column by column",
                      lambda ans: parse_int_list(ans, tm * tn) == rows_first, ", ".join(map(str, rows_first)))
    return drill


def _partition_drill(rng: random.Random, seed: int, mat: Any) -> Drill:
    m, n = A.size(mat[0]), A.size(mat[1])
    tm, tn = pick(rng, [(a, b) for a in (2, 4, 8) for b in (2, 4) if m % a == 0 and n % b == 0 and a * b < m * n])
    thr = A.Layout((tm, tn)) if rng.random() < 0.5 else row_major((tm, tn))
    t = rng.randrange(tm * tn)
    part, off = A.local_partition(mat, thr, t)
    crd = next((i, j) for i in range(tm) for j in range(tn) if thr((i, j)) == t)
    z = A.zipped_divide(mat, (A.Layout(tm), A.Layout(tn)))
    rest = (m // tm, n // tn)
    want = [off + part(v) for v in range(A.size(part))]
    assert want == [z((crd, A.idx2crd(v, rest))) for v in range(A.size(part))]
    steps = [step(RULE, mat), step(f"Thread {t} sits at {lstr(crd)} in the thread layout {thr}."),
             step(f"zipped_divide(L, ({tm},{tn})) = {z}: fix the inside-tile coordinate to {lstr(crd)}.", z),
             step(f"Thread {t}'s values: {part} from offset {off}: " + ", ".join(map(str, want)) + ".", part)]
    drill = Drill("partition", seed,
                  f"L = {mat}. local_partition(L, {thr}, {t}): which offsets does thread {t} own? List them in value "
                  f"order (value v = the v-th tile, tiles numbered column-major).", f"{len(want)} integers",
                  ", ".join(map(str, want)),
                  lambda ans: grade_list(parse_int_list(ans, len(want)), want,
                                         [f"value {v}" for v in range(len(want))]),
                  steps, [RULE, steps[1]["text"]], "local_partition").with_data(
        op="local_partition", args=[str(mat), str(thr), t])
    tile, toff = A.local_tile(mat, (A.Layout(tm), A.Layout(tn)), A.idx2crd(t % (rest[0] * rest[1]), rest))
    as_tile = [toff + tile(i) for i in range(A.size(tile))]
    if len(as_tile) == len(want) and as_tile != want:
        drill.mistake("local_tile instead of local_partition: that is tile t's elements, not thread t's element "
                      "of every tile", lambda ans: parse_int_list(ans, len(want)) == as_tile,
                      ", ".join(map(str, as_tile)))
    naive = A.idx2crd(t, (tm, tn))
    if naive != crd:
        wrong = [z((naive, A.idx2crd(v, rest))) for v in range(A.size(part))]
        drill.mistake("thread t placed at the column-major coordinate of t: the thread layout decides where "
                      "thread t sits", lambda ans: parse_int_list(ans, len(want)) == wrong, ", ".join(map(str, wrong)))
    return drill


@register("partition", "local_tile and local_partition", "Which elements a CTA's local_tile keeps and which a "
          "thread's local_partition keeps: divide, then fix the tile or the position inside it.", 11)
def make_partition(rng: random.Random, seed: int) -> Drill:
    mat = _matrix(rng)
    if rng.random() < 0.5:
        return _tile_drill(rng, seed, mat)
    return _partition_drill(rng, seed, mat)


__all__ = ["make_partition", "AnswerError", "Grade"]
