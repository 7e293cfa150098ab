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
    return cc.distinct(n, lambda: gen_case(rng, rng.choice(SWIZZLE_OPS)))


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


# --------------------------------------------------------------------------------------------- the wide generator

WIDE_OPS = ["right_inverse", "left_inverse", "composition", "composition", "composition_left", "composition_sw",
            "swizzle_swizzle", "complement", "complement_sw", "logical_divide", "zipped_divide", "tiled_divide",
            "flat_divide", "logical_product", "zipped_product", "blocked_product", "raked_product",
            "product_sw_tiler", "tile_to_shape", "coalesce", "filter", "upcast", "downcast", "recast_layout",
            "max_common_vector", "max_common_layout"]
BITS = [8, 16, 16, 32, 32, 64, 128]


def wide_swizzle(rng: random.Random) -> tuple[int, int, int]:
    """B up to 5, M up to 6, |S| up to 8 (negative a third of the time), B + M + |S| <= 16."""
    while True:
        b = rng.choice([0, 1, 2, 2, 3, 3, 4, 5])
        m = rng.choice([0, 0, 1, 2, 3, 4, 5, 6])
        s = rng.randint(max(b, 1), 8) * (-1 if rng.random() < 0.35 else 1)
        if b + m + abs(s) <= 16:
            return b, m, s


def wide_layout(rng: random.Random) -> str:
    """The inner layout: a power-of-two tile in a random stride order (row- or column-major, nested), a tile with a
    gap, or any small layout (shapes 3, 5, 6, strides that carry into the swizzle's bits)."""
    k = rng.random()
    if k < 0.55:
        shape = [2 ** rng.randint(0, 5) for _ in range(rng.choice([1, 2, 2, 2, 3]))]
        order = list(range(len(shape)))
        rng.shuffle(order)
        stride, step = [0] * len(shape), 1
        for j in order:
            stride[j] = step
            step *= shape[j] * (2 if rng.random() < 0.15 else 1)  # now and then a gap of one bit
        if len(shape) >= 2 and rng.random() < 0.2:  # nest the first mode: ((r/2, 2), ...)
            r = shape[0]
            if r >= 4:
                return cc.lay(((r // 2, 2),) + tuple(shape[1:]),
                              ((stride[0], stride[0] * r // 2),) + tuple(stride[1:]))
        return cc.lay(tuple(shape) if len(shape) > 1 else shape[0], tuple(stride) if len(shape) > 1 else stride[0])
    if k < 0.8:
        return cc.rand_layout(rng, 256, kind=rng.choice(["compact", "perm", "gap"]))
    return cc.rand_layout(rng, 128, kind=rng.choice(["arb", "zero", "perm"]))


def wide_atom(rng: random.Random) -> str:
    b, m, s = wide_swizzle(rng)
    off = 0 if rng.random() < 0.6 else rng.choice([1, 3, 8, 32, 64, 512, rng.randint(1, 200)])
    return f"Sw<{b},{m},{s}> o {off} o {wide_layout(rng)}"


def gen_wide_case(rng: random.Random, op: str) -> dict:
    atom = wide_atom(rng)
    sw, _off, lay = (x.strip() for x in atom.split(" o ", 2))
    zero = f"{sw} o 0 o {lay}"
    shape, _ = cc.split_layout(lay)
    n = cc.prod(shape)
    if op in ("right_inverse", "left_inverse"):
        return {"op": op, "args": [atom if rng.random() < 0.9 else sw]}
    if op == "composition":
        return {"op": op, "args": [atom, cc.rand_tiler(rng, lay) if rng.random() < 0.5 else cc.fitted_layout(rng, n)]}
    if op == "composition_left":  # a layout after a swizzled layout (CuTe: offset 0 only)
        return {"op": "composition", "args": [cc.rand_layout(rng, 1024, kind=rng.choice(["compact", "perm"])),
                                              zero if rng.random() < 0.85 else atom]}
    if op == "composition_sw":
        return {"op": "composition", "args": [cc.rand_layout(rng, 4096, kind=rng.choice(["compact", "perm", "gap"])),
                                              sw]}
    if op == "swizzle_swizzle":
        b, m, s = wide_swizzle(rng)
        s0 = cc.split_composed(atom)[0][2]
        s = s0 if abs(s0) >= b and rng.random() < 0.7 else s  # the same shift: CuTe merges them
        return {"op": "composition", "args": [sw, f"Sw<{b},{m},{s}>"]}
    if op == "complement":
        return {"op": op, "args": [atom] if rng.random() < 0.3 else [atom, n * rng.choice([1, 2, 3, 4])]}
    if op == "complement_sw":  # a swizzled cotarget: CuTe reads its shape
        return {"op": "complement", "args": [cc.rand_layout(rng, 16, kind=rng.choice(["compact", "perm", "gap"])),
                                             atom]}
    if op.endswith("_divide"):
        return {"op": op, "args": [atom, cc.rand_tiler(rng, lay)]}
    if op.endswith("_product"):
        return {"op": op, "args": [atom, cc.rand_layout(rng, 16, kind=rng.choice(["compact", "perm"]), max_rank=2)]}
    if op == "product_sw_tiler":  # a swizzled tiler (offset 0, else CuTe refuses)
        left = cc.rand_layout(rng, 32, kind=rng.choice(["compact", "perm"]), max_rank=2)
        return {"op": rng.choice(["logical_product", "blocked_product", "zipped_product"]),
                "args": [left, zero if rng.random() < 0.85 else atom]}
    if op == "tile_to_shape":
        modes = shape if isinstance(shape, tuple) else (shape,)
        tgt = tuple(cc.prod(x) * rng.choice([1, 2, 4]) for x in modes)
        return {"op": op, "args": [atom, cc.tstr(tgt)]}
    if op in ("coalesce", "filter"):
        return {"op": op, "args": [atom] if rng.random() < 0.4 else [atom, cc.rand_profile(rng, shape)]}
    if op in ("upcast", "downcast"):
        return {"op": op, "args": [atom if rng.random() < 0.85 else sw, rng.choice([2, 4, 8, 16])]}
    if op == "recast_layout":
        return {"op": op, "args": [atom if rng.random() < 0.85 else sw, rng.choice(BITS), rng.choice(BITS)]}
    if op in ("max_common_vector", "max_common_layout"):
        other = cc.lay(shape, cc.rand_stride(rng, shape, rng.choice(["compact", "perm"])))
        return {"op": op, "args": [atom, other] if rng.random() < 0.6 else [other, atom]}
    raise ValueError(op)


def gen_wide_cases(seed: int, n: int) -> list[dict]:
    """``n`` distinct cases on swizzled layouts the other generators reach rarely: B up to 5, M up to 6, negative
    shifts, offsets, inner layouts whose offsets carry into the swizzle's bits, a swizzled layout on either side of
    a composition or product, complement / divide / product / recast of swizzled layouts, and the inverses; then
    ``n // 3`` more (``wide_more``, its own stream: a seed's first n cases are as before)."""
    rng, more = random.Random(seed), random.Random(seed * 7919 + 3)
    return cc.distinct(n, lambda: gen_wide_case(rng, rng.choice(WIDE_OPS))) + cc.distinct(n // 3,
                                                                                           lambda: wide_more(more))


def _off_grid(rng: random.Random, x: int) -> int:
    """A coordinate entry of a mode of x: inside it mostly, past it or negative now and then."""
    return rng.randrange(x) if rng.random() < 0.7 else rng.choice([x, x + rng.randrange(1, 4), -1, -x])


def wide_more(rng: random.Random) -> dict:
    """Wide swizzled layouts sliced (``_`` in the coordinate, a fixed entry past its mode or negative now and then),
    tiled (``local_tile`` at a tile coordinate inside, past or below the grid) and partitioned (``local_partition``
    by thread layouts with negative strides, indices that are no thread's), divided and multiplied by a swizzled
    layout on either side, and recast after a slice."""
    from cute_fresh import slice_coord

    atom = wide_atom(rng)
    sw, _off, lay = (x.strip() for x in atom.split(" o ", 2))
    shape, _ = cc.split_layout(lay)
    modes = shape if isinstance(shape, tuple) else (shape,)
    k = rng.random()
    if k < 0.3:
        crd = slice_coord(rng, shape)
        if isinstance(crd, tuple) and rng.random() < 0.3:  # a fixed top-level entry past its mode or negative
            crd = tuple(_off_grid(rng, cc.prod(m)) if c is not None and not isinstance(c, tuple) else c
                        for c, m in zip(crd, modes, strict=True))
        return {"op": "evaluate", "args": [atom, cc.tstr(crd)]}
    if k < 0.55:
        tiler = [rng.choice(cc.divisors(cc.prod(m))) for m in modes[: rng.choice(range(1, len(modes) + 1))]]
        reps = [cc.prod(m) // t for m, t in zip(modes, tiler, strict=False)] + [cc.prod(m) for m in modes[len(tiler):]]
        crd = tuple(_off_grid(rng, x) if rng.random() < 0.8 else None for x in reps)
        return {"op": "local_tile", "args": [atom, tiler, cc.tstr(crd)]}
    if k < 0.8:
        thr = tuple(rng.choice(cc.divisors(cc.prod(m))) for m in modes)
        fd = cc.flat(cc.rand_stride(rng, thr, rng.choice(["compact", "perm", "gap"])))
        fd = [-d if rng.random() < 0.3 else d for d in fd]
        n = cc.prod(thr)
        idx = rng.randrange(n) if rng.random() < 0.75 else rng.choice([n, n + 1, -1])
        return {"op": "local_partition", "args": [atom, cc.lay(thr, cc.unflat(fd, thr)), idx]}
    zero = f"{sw} o 0 o {lay}"
    other = cc.rand_layout(rng, 64, kind=rng.choice(["compact", "perm"]), max_rank=2)
    if k < 0.9:
        op = rng.choice(["logical_divide", "zipped_divide", "logical_product", "blocked_product", "raked_product"])
        return {"op": op, "args": [atom, other] if rng.random() < 0.5 else [other, zero]}
    return {"op": rng.choice(["upcast", "downcast"]), "args": [atom, rng.choice([2, 4])]}


# ------------------------------------------------------------------------------------------- nested composed layouts

NESTED_OPS = ["composition", "coalesce", "right_inverse", "left_inverse", "complement", "logical_divide",
              "logical_product", "upcast", "evaluate", "size"]


def gen_nested_cases(seed: int, n: int) -> list[dict]:
    """``n`` distinct cases whose answer (or argument) is a nested composed layout: a swizzled layout composed with
    a swizzle (``Sw o O o (Sw' o 0 o L)``), ``L o O o Sw`` composed with a layout (``L o O o (Sw o 0 o B)``), a layout
    composed with ``L o 0 o Sw``, and the ops of ``NESTED_OPS`` on such a nested layout; then ``n // 2`` more
    (``draw_more``)."""
    rng = random.Random(seed)

    def draw() -> dict:
        atom = wide_atom(rng)
        sw, off, lay = (x.strip() for x in atom.split(" o ", 2))
        b, m, s = wide_swizzle(rng)
        size = cc.prod(cc.split_layout(lay)[0])
        left = cc.rand_layout(rng, 256, kind=rng.choice(["compact", "perm"]))
        inv = f"{left} o {rng.randint(-64, 64)} o {sw}"
        k = rng.random()
        if k < 0.3:
            return {"op": "composition", "args": [atom, f"Sw<{b},{m},{s}>"]}
        if k < 0.5:
            return {"op": "composition", "args": [inv, cc.fitted_layout(rng, 64) if rng.random() < 0.7 else
                                                  rng.choice([4, 8, 16, 32])]}
        if k < 0.55:
            return {"op": "composition", "args": [cc.rand_layout(rng, 1024, kind="compact"),
                                                  f"{left} o 0 o {sw}"]}
        nested = f"{sw} o {off} o Sw<{b},{m},{s}> o 0 o {lay}"
        op = rng.choice(NESTED_OPS)
        args = {"composition": [nested, cc.fitted_layout(rng, size)],
                "complement": [nested, size * 4], "logical_divide": [nested, cc.rand_tiler(rng, lay)],
                "logical_product": [nested, cc.rand_layout(rng, 8, kind="compact", max_rank=2)],
                "upcast": [nested, 2], "evaluate": [nested, rng.randrange(size)]}.get(op, [nested])
        return {"op": op, "args": args}

    more = random.Random(seed * 7919 + 1)  # its own stream: the first n cases of a seed are as before

    def draw_more() -> dict:
        """Slices (``_`` in the coordinate) of ``Sw o O o (Sw' o 0 o L)`` and of ``A o O o (Sw o 0 o B)``, the
        inverses of the latter (A a layout: its inverse comes last in CuTe's chain), recasts of ``A o O o Sw``."""
        from cute_fresh import slice_coord

        atom = wide_atom(more)
        sw, off, lay = (x.strip() for x in atom.split(" o ", 2))
        b, m, s = wide_swizzle(more)
        left = cc.rand_layout(more, 256, kind=more.choice(["compact", "perm"]))
        inner = cc.fitted_layout(more, 64) if more.random() < 0.5 else wide_layout(more)
        led = f"{left} o {more.choice([0, more.randint(-64, 64)])} o {sw} o 0 o {inner}"
        k = more.random()
        if k < 0.3:
            return {"op": "evaluate", "args": [f"{sw} o {off} o Sw<{b},{m},{s}> o 0 o {lay}",
                                               cc.tstr(slice_coord(more, cc.split_layout(lay)[0]))]}
        if k < 0.6:
            return {"op": "evaluate", "args": [led, cc.tstr(slice_coord(more, cc.split_layout(inner)[0]))]}
        if k < 0.85:
            return {"op": more.choice(["left_inverse", "right_inverse"]), "args": [led]}
        return {"op": more.choice(["upcast", "downcast"]),
                "args": [f"{left} o {more.randint(-64, 64)} o {sw}", more.choice([2, 4])]}

    return cc.distinct(n, draw) + cc.distinct(n // 2, draw_more)


# ------------------------------------------------------------------------------------- swizzle bits cut across

def cut_stride(rng: random.Random, b: int, m: int, s: int) -> int:
    """A stride that lands inside, between or just off the swizzle's bit fields: 2^k for k around M, M+|S|, M+B+|S|,
    an odd multiple of them, or plus one."""
    k = rng.choice([m - 1, m, m + 1, m + b - 1, m + abs(s), m + abs(s) + 1, m + b + abs(s) - 1, 0, 1])
    d = 1 << max(k, 0)
    return d * rng.choice([1, 1, 1, 3]) + (1 if rng.random() < 0.15 else 0)


def cut_tiler(rng: random.Random, n: int, b: int, m: int, s: int) -> str:
    """A layout of one or two modes whose strides cut across the swizzle's bits, its reach within n."""
    for _ in range(50):
        r = rng.choice([1, 2, 2])
        shape = [rng.choice([2, 2, 4, 8, 3]) for _ in range(r)]
        stride = [cut_stride(rng, b, m, s) for _ in range(r)]
        if sum((x - 1) * d for x, d in zip(shape, stride, strict=True)) < n:
            return cc.lay(tuple(shape) if r > 1 else shape[0], tuple(stride) if r > 1 else stride[0])
    return cc.lay(2, 1)


def gen_cut_case(rng: random.Random) -> dict:
    """Inverses of swizzled tiles with negative shifts and offsets (and of CuTe's ``L^-1 o -O o Sw`` back), and
    compositions / divides / products of swizzled tiles with tilers whose strides cut across the swizzle's bits."""
    b, m, s = wide_swizzle(rng)
    b = max(b, 1)
    s = -abs(s) if rng.random() < 0.6 and abs(s) >= b else s if abs(s) >= b else b
    off = rng.choice([0, 1 << m, (1 << (m + abs(s))), (1 << m) + 1, 3 << m, rng.randint(1, 300)])
    atom = f"Sw<{b},{m},{s}> o {off} o {wide_layout(rng)}"
    shape, _ = cc.split_layout(atom.split(" o ", 2)[2])
    n, k = cc.prod(shape), rng.random()
    if k < 0.35:
        return {"op": rng.choice(["right_inverse", "left_inverse"]), "args": [atom]}
    if k < 0.7:
        modes = shape if isinstance(shape, tuple) else (shape,)
        tiler = cut_tiler(rng, n, b, m, s) if rng.random() < 0.7 or len(modes) < 2 else [
            cut_tiler(rng, cc.prod(x), b, m, s) for x in modes]
        return {"op": "composition", "args": [atom, tiler]}
    op = rng.choice(["logical_divide", "zipped_divide", "logical_product", "blocked_product"])
    return {"op": op, "args": [atom, cut_tiler(rng, n if op.endswith("divide") else 64, b, m, s)]}


def gen_cut_cases(seed: int, n: int) -> list[dict]:
    """``n`` distinct ``gen_cut_case``s, then the inverses of each inverse that our engine answers as a layout after
    a swizzle (CuTe's ``L^-1 o -O o Sw``)."""
    import algebra as A

    rng = random.Random(seed)
    cases = cc.distinct(n, lambda: gen_cut_case(rng))
    for case in list(cases):
        if case["op"].endswith("inverse"):
            try:
                r = getattr(A, case["op"])(A.parse(case["args"][0]))
            except A.LayoutError:
                continue
            if isinstance(r, A.ComposedLayout) and isinstance(r.layout_b, A.Swizzle):
                cases.append({"op": rng.choice(["right_inverse", "left_inverse"]), "args": [str(r)]})
    return cases
