"""Edge-heavy random cases for the C++ oracle: the ops and argument shapes the plain generator (``cute_cases``)
reaches rarely or never.

- inverses of layouts with size-1 modes, stride-0 modes, 1-tuples and repeated strides;
- coalesce / filter with nested profiles; complement with cotargets that are not multiples of the cosize, tuple
  and Layout cotargets; composition with tuple tilers mixing ints, ``_`` and nested lists;
- products of layouts with zero strides; ``flat_product``, ``tile_unzip``, ``nullspace``, ``filter_zeros``,
  ``max_common_layout``, ``upcast`` / ``downcast`` / ``recast_layout``;
- negative strides now and then (arbitrary-stride layouts);
- coordinate layouts (scaled-basis strides ``k@i``) through composition, the divides, coalesce and filter;
- swizzled layouts through the ops the plain swizzle generator leaves out: the inverses, ``max_common_vector`` /
  ``max_common_layout`` (either side swizzled), ``composition(Layout, Swizzle)``, the recasts.

    python tests/oracle/cute_cpp.py --edge --seed 1 --n 400 --out tests/oracle/data/corpus_e1.json
"""

from __future__ import annotations

import random
from typing import Any

import cute_cases as cc
import cute_swizzle

EDGE_LEAVES = [1, 1, 1, 2, 2, 3, 4, 4, 6, 8]


def edge_layout(rng: random.Random, max_size: int = 128, kind: str | None = None) -> str:
    """A small layout with many size-1 modes, stride-0 modes and 1-tuples."""
    old = cc.SCALE["leaves"]
    cc.SCALE["leaves"] = EDGE_LEAVES
    try:
        shape = cc.rand_shape(rng, max_size, max_rank=rng.choice([1, 2, 3, 3, 4]), max_depth=rng.choice([2, 3]))
        kind = kind or rng.choice(["compact", "perm", "gap", "zero", "zero", "arb"])
        stride = cc.rand_stride(rng, shape, kind)
    finally:
        cc.SCALE["leaves"] = old
    if rng.random() < 0.15:
        shape, stride = (shape,), (stride,)  # a 1-tuple around the whole layout
    return cc.lay(shape, stride)


def tiler_entry(rng: random.Random, mode: Any, depth: int = 0) -> Any:
    n = cc.prod(mode)
    r = rng.random()
    if r < 0.25:
        return None
    if r < 0.5:
        return rng.choice(cc.divisors(n))
    if r < 0.65 and isinstance(mode, tuple) and depth < 2:
        return [tiler_entry(rng, m, depth + 1) for m in mode[: rng.choice(range(1, len(mode) + 1))]]
    return cc.fitted_layout(rng, n) if rng.random() < 0.8 else edge_layout(rng, 16)


def tuple_tiler(rng: random.Random, layout: str) -> list:
    shape, _ = cc.split_layout(layout)
    modes = shape if isinstance(shape, tuple) else (shape,)
    return [tiler_entry(rng, m) for m in modes[: rng.choice(range(1, len(modes) + 1))]]


def nested_profile(rng: random.Random, shape: Any) -> Any:
    if not isinstance(shape, tuple):
        return "1" if rng.random() < 0.2 else cc.rand_profile(rng, shape)
    return cc.rand_profile(rng, shape)


BASIS_OPS = ["composition", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "coalesce", "filter"]


def identity_layout(rng: random.Random) -> str:
    """A coordinate layout: mode k strides over coordinate k (``make_identity_layout``), sometimes split."""
    old = cc.SCALE["leaves"]
    cc.SCALE["leaves"] = [2, 2, 3, 4, 4, 6, 8, 8, 16]
    try:
        shape = cc.rand_shape(rng, 256, max_rank=rng.choice([1, 2, 2, 3]), max_depth=2)
    finally:
        cc.SCALE["leaves"] = old
    modes = shape if isinstance(shape, tuple) else (shape,)
    strides = []
    for k, m in enumerate(modes):
        leaves, cur = cc.flat(m), 1
        basis = []
        for x in leaves:
            basis.append(f"{cur}@{k}")
            cur *= x
        strides.append(cc.unflat(basis, m) if isinstance(m, tuple) else basis[0])
    stride = tuple(strides) if isinstance(shape, tuple) else strides[0]
    return cc.lay(shape, stride)


def gen_basis(rng: random.Random) -> dict:
    L = identity_layout(rng)
    shape, _ = cc.split_layout(L)
    op = rng.choice(BASIS_OPS)
    if op in ("coalesce", "filter"):
        return {"op": op, "args": [L]}
    if op == "composition" and rng.random() < 0.5:
        return {"op": op, "args": [L, cc.fitted_layout(rng, cc.prod(shape))]}
    return {"op": op, "args": [L, tuple_tiler(rng, L) if rng.random() < 0.6 else cc.rand_tiler(rng, L)]}


def gen_plain(rng: random.Random, op: str) -> dict:
    L = edge_layout(rng)
    shape, _ = cc.split_layout(L)
    if op in ("right_inverse", "left_inverse", "nullspace", "filter_zeros"):
        return {"op": op, "args": [edge_layout(rng, kind=rng.choice(["perm", "gap", "zero", "zero", "arb"]))]}
    if op in ("coalesce", "filter"):
        return {"op": op, "args": [L, nested_profile(rng, shape)] if rng.random() < 0.8 else [L]}
    if op == "complement":
        L = edge_layout(rng, 64, kind=rng.choice(["perm", "gap", "zero", "compact", "arb"]))
        fs, fd = cc.split_layout(L)
        cos = 1 + sum((s - 1) * abs(d) for s, d in zip(cc.flat(fs), cc.flat(fd), strict=True))
        r = rng.random()
        if r < 0.5:
            return {"op": op, "args": [L, rng.choice([cos + 1, cos - 1 or 1, cos * 3 // 2 or 1, 5, 7, 1, 2, 3 * cos])]}
        if r < 0.8:
            tgt = cc.group(rng, cc.factorize(rng, rng.choice([cos, cos + 1, 2 * cos + 2, 12, 30])))
            return {"op": op, "args": [L, cc.tstr(tgt if isinstance(tgt, tuple) else (tgt,))]}
        return {"op": op, "args": [L, edge_layout(rng, 64)]}
    if op == "composition":
        return {"op": op, "args": [L, tuple_tiler(rng, L) if rng.random() < 0.7 else edge_layout(rng, 64)]}
    if op == "tile_unzip":
        return unzip_case(rng)
    if op in ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide"):
        return {"op": op, "args": [L, tuple_tiler(rng, L) if rng.random() < 0.7 else cc.rand_tiler(rng, L)]}
    if op in ("logical_product", "zipped_product", "tiled_product", "flat_product", "blocked_product",
              "raked_product"):
        blk = edge_layout(rng, 32, kind=rng.choice(["zero", "zero", "compact", "perm", "gap"]))
        if op in ("blocked_product", "raked_product") or rng.random() < 0.6:
            return {"op": op, "args": [blk, edge_layout(rng, 16, kind=rng.choice(["zero", "zero", "compact", "perm"]))]}
        return {"op": op, "args": [blk, tuple_tiler(rng, blk)]}
    if op in ("max_common_vector", "max_common_layout"):
        if rng.random() < 0.6:
            return {"op": op, "args": [L, cc.lay(shape, cc.rand_stride(rng, shape))]}
        return {"op": op, "args": [L, edge_layout(rng)]}
    if op == "local_tile":
        modes = shape if isinstance(shape, tuple) else (shape,)
        tiler = [rng.choice(cc.divisors(cc.prod(m))) for m in modes[: rng.choice(range(1, len(modes) + 1))]]
        reps = [cc.prod(m) // t for m, t in zip(modes, tiler, strict=False)] + [cc.prod(m) for m in modes[len(tiler):]]
        k = rng.random()
        coord: Any = rng.randrange(cc.prod(tuple(reps))) if k < 0.3 else \
            cc.tstr(tuple(rng.randrange(x) for x in reps[: rng.choice(range(1, len(reps) + 1))]))
        return {"op": op, "args": [L, tiler if rng.random() < 0.8 else cc.fitted_layout(rng, cc.prod(shape)), coord]}
    if op == "local_partition":
        modes = shape if isinstance(shape, tuple) else (shape,)
        thr = tuple(rng.choice(cc.divisors(cc.prod(m))) for m in modes[: rng.choice(range(1, len(modes) + 1))])
        tl = cc.lay(thr, cc.rand_stride(rng, thr, rng.choice(["compact", "perm"])))
        return {"op": op, "args": [L, tl, rng.randrange(cc.prod(thr))]}
    if op in ("idx2crd", "crd2idx", "evaluate"):
        n = cc.prod(shape)
        k = rng.random()
        if k < 0.5:  # a 1-D index, now and then past the end (CuTe extends the last mode)
            crd: Any = rng.randrange(n) if rng.random() < 0.8 else rng.randrange(n, 4 * n)
        elif k < 0.8:  # a natural coordinate
            crd = cc.tstr(_natural(rng, shape))
        else:  # a coordinate per top mode, each a 1-D index into its mode
            modes = shape if isinstance(shape, tuple) else (shape,)
            crd = cc.tstr(tuple(rng.randrange(cc.prod(m)) for m in modes))
        if op == "evaluate":
            return {"op": op, "args": [L if rng.random() < 0.85 else identity_layout(rng), crd]}
        return {"op": op, "args": [crd, cc.tstr(shape)]}
    if op == "make_ordered_layout":  # orders with ties, and orders coarser than the shape
        return {"op": op, "args": [cc.tstr(shape), cc.tstr(_order(rng, shape))]}
    if op == "tile_to_shape":
        blk = edge_layout(rng, 16, kind=rng.choice(["compact", "perm", "zero"]))
        bshape, _ = cc.split_layout(blk)
        bm = [cc.prod(m) for m in (bshape if isinstance(bshape, tuple) else (bshape,))]
        tgt = tuple(m * rng.choice([1, 2, 3]) for m in bm)
        tgt += tuple(rng.choice([1, 2]) for _ in range(rng.choice([0, 1])))
        return {"op": op, "args": [blk, cc.tstr(tgt), cc.tstr(tuple(rng.choice([0, 1, 1, 2]) for _ in tgt))]}
    if op in ("upcast", "downcast"):
        return {"op": op, "args": [L, rng.choice([1, 2, 2, 4, 4, 8, 16])]}
    if op == "recast_layout":
        return {"op": op, "args": [L, rng.choice(BITS), rng.choice(BITS)]}
    raise ValueError(op)


def _order(rng: random.Random, shape: Any, depth: int = 0) -> Any:
    if isinstance(shape, tuple) and (depth == 0 or rng.random() < 0.5):
        return tuple(_order(rng, m, depth + 1) for m in shape)
    return rng.choice([0, 1, 1, 2, 3, 5])


def _natural(rng: random.Random, shape: Any) -> Any:
    if isinstance(shape, tuple):
        return tuple(_natural(rng, m) for m in shape)
    return rng.randrange(shape)


def unzip_case(rng: random.Random) -> dict:
    """tile_unzip(L, tiler) where L has a rank-2 mode at each terminal of the tiler (as a divide or product
    leaves it), now and then not (CuTe refuses)."""

    def pair() -> Any:
        return tuple(rng.choice(EDGE_LEAVES) if rng.random() < 0.7 else (rng.choice(EDGE_LEAVES), 2)
                     for _ in range(2 if rng.random() < 0.95 else 3))

    modes, tiler = [], []
    for _ in range(rng.choice([1, 2, 2, 3])):
        if rng.random() < 0.15:
            modes.append((pair(), pair()))
            tiler.append([rng.choice([None, 2, "2:1"]), rng.choice([None, 4])])
        else:
            modes.append(pair())
            tiler.append(rng.choice([None, 2, 4, "2:1", "(2,2):(1,2)"]))
    extra = [rng.choice(EDGE_LEAVES) for _ in range(rng.choice([0, 0, 1, 2]))]
    shape = tuple(modes + extra)
    stride = cc.rand_stride(rng, shape, rng.choice(["compact", "perm", "zero"]))
    return {"op": "tile_unzip", "args": [cc.lay(shape, stride), tiler]}


BITS = [1, 2, 4, 8, 8, 16, 16, 32, 32, 64, 128]
PLAIN_OPS = ["right_inverse", "left_inverse", "nullspace", "filter_zeros", "coalesce", "filter", "complement",
             "composition", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "tile_unzip",
             "logical_product", "zipped_product", "tiled_product", "flat_product", "blocked_product", "raked_product",
             "max_common_vector", "max_common_layout", "upcast", "downcast", "recast_layout", "local_tile",
             "local_partition", "idx2crd", "crd2idx", "evaluate", "make_ordered_layout", "tile_to_shape"]
SWIZZLE_OPS = ["right_inverse", "left_inverse", "max_common_vector", "max_common_layout", "composition_sw",
               "upcast", "downcast", "recast_layout", "flat_product", "tile_unzip", "nullspace", "filter_zeros",
               "swizzled_tiler", "swizzled_tiler", "swizzle_swizzle", "complement_sw"]
TILER_OPS = ["composition", "logical_product", "zipped_product", "tiled_product", "flat_product", "logical_divide",
             "blocked_product"]


def gen_swizzled(rng: random.Random, op: str) -> dict:
    atom, (r, c) = cute_swizzle.rand_atom(rng)
    lay = cc.split_composed(atom)[2]
    if op in ("right_inverse", "left_inverse", "nullspace", "filter_zeros"):
        if op.endswith("inverse") and rng.random() < 0.1:
            return {"op": op, "args": [atom.split(" o ")[0]]}  # a bare swizzle
        return {"op": op, "args": [atom]}
    if op == "swizzled_tiler":  # a swizzled layout as the second argument
        tiler = atom if rng.random() < 0.8 else f"{atom.split(' o ')[0]} o 0 o {lay}"
        left = cc.rand_layout(rng, 64, kind=rng.choice(["compact", "perm"]), max_rank=2)
        return {"op": rng.choice(TILER_OPS), "args": [left if rng.random() < 0.7 else cc.lay(r * c, 1), tiler]}
    if op == "swizzle_swizzle":
        s0 = atom.split(" o ")[0]
        b, m, sh = (int(x) for x in s0[3:-1].split(","))
        s1 = f"Sw<{rng.choice(range(0, abs(sh) + 1))},{rng.choice([0, 1, 2, m])},{sh if rng.random() < 0.85 else -sh}>"
        return {"op": "composition", "args": [s0, s1]}
    if op == "complement_sw":
        left = cc.rand_layout(rng, 16, kind=rng.choice(["compact", "perm", "gap"]))
        return {"op": "complement", "args": [left, atom]}
    if op in ("max_common_vector", "max_common_layout"):
        shape, _ = cc.split_layout(lay)
        other = cc.lay(shape, cc.rand_stride(rng, shape, rng.choice(["compact", "perm"])))
        if rng.random() < 0.3:
            other = lay
        k = rng.random()
        if k < 0.4:
            return {"op": op, "args": [atom, other]}
        if k < 0.7:
            return {"op": op, "args": [other, atom]}
        return {"op": op, "args": [atom, cute_swizzle.rand_atom(rng)[0] if rng.random() < 0.5 else atom]}
    if op == "composition_sw":
        sw = atom.split(" o ")[0]
        return {"op": "composition", "args": [cc.rand_layout(rng, 1024, kind=rng.choice(["compact", "perm"])), sw]}
    if op in ("upcast", "downcast"):
        return {"op": op, "args": [atom, rng.choice([2, 4, 8])]}
    if op == "recast_layout":
        return {"op": op, "args": [atom, rng.choice(BITS), rng.choice(BITS)]}
    if op == "flat_product":
        return {"op": op, "args": [atom, cc.rand_layout(rng, 16, kind=rng.choice(["compact", "perm"]), max_rank=2)]}
    if op == "tile_unzip":
        case = unzip_case(rng)
        return {"op": op, "args": [f"{atom.rsplit(' o ', 1)[0]} o {case['args'][0]}", case["args"][1]]}
    raise ValueError(op)


def gen_cases(seed: int, n: int, swizzled: float = 0.3) -> list[dict]:
    """``n`` distinct edge cases from ``seed``; a fraction ``swizzled`` on swizzled layouts."""
    rng = random.Random(seed)

    def draw() -> dict:
        k = rng.random()
        if k < swizzled:
            return gen_swizzled(rng, rng.choice(SWIZZLE_OPS))
        if k < swizzled + 0.08:
            return gen_basis(rng)
        cc.SCALE["neg"] = 0.4 if rng.random() < 0.1 else 0.0  # negative strides in arbitrary-stride layouts
        try:
            return gen_plain(rng, rng.choice(PLAIN_OPS))
        finally:
            cc.SCALE["neg"] = 0.0

    return cc.distinct(n, draw)
