"""Random cases on swizzled layouts (``Sw<B,M,S> o O o L``, CuTe's ComposedLayout) for the C++ oracle.

The ops CuTe overloads for a ComposedLayout (``cute/layout_composed.hpp``, ``cute/swizzle_layout.hpp``) apply to the
inner layout and keep the swizzle and offset: composition (also ``Swizzle o Layout``), the divides, the products
(blocked / raked included), tile_to_shape, coalesce, filter (with a profile; complement drops the swizzle), as
with smem atoms such as ``Sw<3,4,3> o 0 o (8,64):(64,1)`` tiled to a (128,64) tile.
"""

from __future__ import annotations

import random
from typing import Any

import cute_cases as cc

SWIZZLE_OPS = ["composition", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "logical_product",
               "zipped_product", "tiled_product", "blocked_product", "raked_product", "tile_to_shape", "coalesce",
               "filter", "complement"]


def rand_atom(rng: random.Random) -> tuple[str, tuple[int, int]]:
    """A swizzled atom in notation, and its (rows, cols)."""
    b = rng.choice([0, 1, 2, 3, 3])
    m = rng.choice([0, 1, 2, 3, 4])
    s = rng.choice([x for x in (1, 2, 3, 4, 5) if x >= b] or [b])
    if rng.random() < 0.1:  # CuTe allows a negative shift (|S| >= B): bits move up instead of down
        s = -max(s, 1)
    r, c = rng.choice([8, 8, 4, 16, 2]), rng.choice([8, 16, 32, 64, 64])
    lay = cc.lay((r, c), (c, 1)) if rng.random() < 0.6 else cc.lay((r, c), (1, r))
    if rng.random() < 0.2:
        lay = cc.lay(((r // 2 or 1, 2), c), ((c, (r // 2 or 1) * c), 1))
    off = 0 if rng.random() < 0.85 else rng.choice([1, 8, 64, 512])
    return f"Sw<{b},{m},{s}> o {off} o {lay}", (r, c)


def gen_case(rng: random.Random, op: str) -> dict:
    atom, (r, c) = rand_atom(rng)
    lay = cc.split_composed(atom)[2]
    if op == "composition":
        k = rng.random()
        if k < 0.2:
            return {"op": op, "args": [atom.split(" o ")[0], lay]}
        if k < 0.6:
            return {"op": op, "args": [atom, cc.fitted_layout(rng, r * c)]}
        return {"op": op, "args": [atom, cc.rand_tiler(rng, lay)]}
    if op.endswith("_divide"):
        return {"op": op, "args": [atom, cc.rand_tiler(rng, lay)]}
    if op.endswith("_product"):
        return {"op": op, "args": [atom, cc.rand_layout(rng, 16, kind=rng.choice(["compact", "perm"]), max_rank=2)]}
    if op == "tile_to_shape":
        tgt = (r * rng.choice([1, 2, 4, 8]), c * rng.choice([1, 2, 4]))
        if rng.random() < 0.15:
            tgt = tgt + (rng.choice([1, 2, 3]),)
        args: list[Any] = [atom, cc.tstr(tgt)]
        if rng.random() < 0.4:
            order = list(range(1, len(tgt) + 1))
            rng.shuffle(order)
            args.append(cc.tstr(tuple(order)))
        return {"op": op, "args": args}
    if op in ("coalesce", "filter"):
        k = rng.random()
        return {"op": op, "args": [atom] if k < 0.4 else [atom, cc.rand_profile(rng, cc.split_layout(lay)[0])]}
    if op == "complement":
        return {"op": op, "args": [atom] if rng.random() < 0.3 else [atom, r * c * rng.choice([1, 2, 4])]}
    raise ValueError(op)


def gen_cases(seed: int, n: int) -> list[dict]:
    rng = random.Random(seed)
    out, seen = [], set()
    while len(out) < n:
        case = gen_case(rng, rng.choice(SWIZZLE_OPS))
        k = cc.key(case)
        if k not in seen and cc.fits_int32(case):
            seen.add(k)
            out.append(case)
    return out


def gen_inverse_cases(seed: int, n: int) -> list[dict]:
    """The inverses of ``n`` random swizzled tiles ``Sw o O o L`` (mostly with an offset: CuTe's ``L^-1 o -O o Sw``),
    and of each such ``L^-1 o -O o Sw`` our engine answers (a layout after a swizzle as the argument)."""
    from test_algebra_swizzled_inverse import _tiles

    import algebra as A

    cases = []
    for k, tile in enumerate(_tiles(seed, n)):
        if not tile.offset and k % 4:
            continue
        op = ("right_inverse", "left_inverse")[k % 2]
        cases.append({"op": op, "args": [str(tile)]})
        try:
            r = getattr(A, op)(tile)
        except A.LayoutError:
            continue
        if isinstance(r, A.ComposedLayout) and isinstance(r.layout_b, A.Swizzle):
            cases.append({"op": op, "args": [str(r)]})
    return cases
