"""Drill kind ``swizzle``: Sw<B,M,S> as a function on offsets, a swizzle composed with a layout (Sw o L, CuTe's
swizzled smem layouts), and its inverse (a swizzle is its own inverse, so (Sw o L)^-1 = L^-1 o Sw).

Keys come from the engine's ``Swizzle`` and ``composition``; the inverse key is found by searching the layout's
coordinates for the one whose swizzled offset is asked, so it does not rely on the involution it teaches.
"""

from __future__ import annotations

import random
from typing import Any

import algebra as A
from app.drills.common import grade_list, lstr, pick, step
from app.drills.core import Drill, Grade, register
from app.drills.parse_words import parse_rc
from app.drills.parsing import parse_int_list

RULE = ("Sw<B,M,S>(x) = x XOR ((x & ((2^B - 1) << (M+S))) >> S): the B bits of x starting at bit M+S are XORed into "
        "the B bits starting at bit M; the other bits pass through. Applying it twice gives x back.")
SWIZZLES = [(3, 3, 3), (2, 3, 3), (3, 4, 3), (1, 3, 3), (2, 2, 3), (3, 0, 3), (2, 0, 4), (2, 1, 3), (3, 2, 3)]


def _bits(x: int, lo: int, n: int) -> int:
    return (x >> lo) & ((1 << n) - 1)


def _tile(rng: random.Random, b: int, m: int, s: int) -> Any:
    """A row-major tile whose offsets cover every bit the swizzle reads (closed under it)."""
    need = b + m + s
    cols = pick(rng, [c for c in (8, 16, 32, 64) if (c.bit_length() - 1) <= need])
    rows = max(2, (1 << need) // cols)
    return A.make_layout_row_major((rows, cols))


@register("swizzle", "Swizzles as functions", "Apply Sw<B,M,S> to an offset by its bits, read a swizzled layout "
          "Sw o L at a coordinate, and invert it (a swizzle is its own inverse).", 12)
def make_swizzle(rng: random.Random, seed: int) -> Drill:
    b, m, s = pick(rng, SWIZZLES)
    sw = A.Swizzle(b, m, s)
    variant = pick(rng, ["apply", "composed", "inverse"])
    if variant == "apply":
        xs = sorted(rng.sample(range(1 << (b + m + s + 1)), 3))
        while sum(sw(x) != x for x in xs) < 2:  # mostly x with row bits set: else the answer repeats the question
            xs = sorted(rng.sample(range(1 << (b + m + s + 1)), 3))
        want = [sw(x) for x in xs]
        steps = [step(RULE)] + [step(f"x = {x} = 0b{x:b}: bits {m + s}.. give {_bits(x, m + s, b)}, XORed into bits "
                                     f"{m}..: {x} XOR {_bits(x, m + s, b) << m} = {sw(x)}.") for x in xs]
        drill = Drill("swizzle", seed, f"Compute {sw}(x) for x = {', '.join(map(str, xs))}.", "three integers",
                      ", ".join(map(str, want)),
                      lambda ans: grade_list(parse_int_list(ans, 3), want, [f"x = {x}" for x in xs]), steps,
                      [RULE, steps[1]["text"]], variant).with_data(swizzle=[b, m, s], xs=xs)
        wrong_dir = [x ^ ((x & (((1 << b) - 1) << m)) << s) for x in xs]
        drill.mistake("the shift the wrong way: the bits at M+S move down to M, not up",
                      lambda ans: parse_int_list(ans, 3) == wrong_dir, ", ".join(map(str, wrong_dir)))
        return drill
    tile = _tile(rng, b, m, s)
    lay = A.composition(sw, tile)
    rows, cols = A.size(tile[0]), A.size(tile[1])
    if variant == "composed":
        coords = [(rng.randrange(rows), rng.randrange(cols)) for _ in range(3)]
        while len(set(coords)) < 3 or sum(lay(c) != tile(c) for c in coords) < 2:  # distinct, mostly moved
            coords = [(rng.randrange(rows), rng.randrange(cols)) for _ in range(3)]
        want = [lay(c) for c in coords]
        plain = [tile(c) for c in coords]
        steps = [step(RULE), step(f"L = {tile}: offset of (r, c) = {cols}*r + c; then the swizzle."),
                 *[step(f"{lstr(c)}: L = {tile(c)}, {sw}({tile(c)}) = {lay(c)}.") for c in coords]]
        drill = Drill("swizzle", seed,
                      f"A shared-memory tile is {lay} (the swizzle applied to L's offset). Give the offsets of "
                      + ", ".join(lstr(c) for c in coords) + ".", "three integers", ", ".join(map(str, want)),
                      lambda ans: grade_list(parse_int_list(ans, 3), want, [lstr(c) for c in coords]), steps,
                      [RULE, steps[1]["text"]], variant).with_data(layout=str(lay), coords=coords)
        if plain != want:
            drill.mistake("the swizzle forgotten: those are L's offsets before Sw",
                          lambda ans: parse_int_list(ans, 3) == plain, ", ".join(map(str, plain)))
        return drill
    y = rng.randrange(A.size(tile))
    where = next((r, c) for r in range(rows) for c in range(cols) if lay((r, c)) == y)
    naive = (y // cols, y % cols)
    steps = [step(RULE), step(f"A swizzle is its own inverse, so (Sw o L)^-1 = L^-1 o Sw: first {sw}({y}) = {sw(y)}."),
             step(f"L^-1: offset {sw(y)} of the row-major {tile} is row {sw(y) // cols}, column {sw(y) % cols}."),
             step(f"Check: {lay}{lstr(where)} = {y}.")]

    def grade(ans: str) -> Grade:
        got = parse_rc(ans)
        if got == where:
            return Grade.right()
        return Grade.wrong(f"{lstr(got)} is not it: at {lstr(got)} the tile holds another offset")

    drill = Drill("swizzle", seed,
                  f"A shared-memory tile is {lay}. Which coordinate (row, col) holds offset {y}?", "(row,col)",
                  lstr(where), grade, steps, [RULE, steps[1]["text"]], variant).with_data(layout=str(lay), offset=y)
    if naive != where:
        drill.mistake("the swizzle forgotten: that is where L alone puts the offset",
                      lambda ans: parse_rc(ans) == naive, lstr(naive))
    return drill
