"""Input kinds the other generators reach rarely, for the C++ oracle (``cute_cpp.py --fresh``):

- negative strides in the layouts of the divides, the products, composition and the inverses, and in tiler layouts;
- tilers with nested modes (nested lists, and layouts with nested shapes as tiler entries);
- shape-1 modes everywhere, with arbitrary (also negative) strides on them;
- large but int32-safe sizes and strides (primes, 2^k, 3 * 2^k);
- complement with tuple and Layout cotargets over negative / zero / shape-1 strides;
- the recasts, max_common_*, nullspace, filter_zeros, tile_unzip, local_tile / local_partition on such layouts.

    python tests/oracle/cute_cpp.py --fresh --seed 8101 --n 300 --out /tmp/cpp_f8101.json
"""

from __future__ import annotations

import random
from typing import Any

import cute_cases as cc
import cute_edge
import cute_swizzle

ONE_HEAVY = [1, 1, 1, 1, 2, 2, 3, 4, 4, 5, 6, 8]
ODD = [1, 2, 3, 5, 6, 7, 9, 10, 12, 15]
BIG = [1, 2, 3, 7, 16, 96, 128, 257, 1024, 1536, 4096, 8191]
STRIDES = [0, 1, 1, 2, 3, 4, 5, 6, 8, 12, 16, 32, 48, 64, 96, 128]


def wild_layout(rng: random.Random, max_size: int = 256, leaves: list | None = None, neg: float = 0.3,
                kind: str | None = None, max_rank: int = 4, max_depth: int = 3) -> str:
    """A layout whose leaves come from ``leaves`` with strides of one of the kinds of ``cute_cases.rand_stride``,
    then each stride negated with probability ``neg``, and the strides of shape-1 modes set at random now and then."""
    old = dict(cc.SCALE)
    cc.SCALE.update(leaves=leaves or rng.choice([ONE_HEAVY, ODD, cc.LEAVES]), start=rng.choice([0, 2, 2]))
    try:
        shape = cc.rand_shape(rng, max_size, max_rank=rng.choice(range(1, max_rank + 1)), max_depth=max_depth)
    finally:
        cc.SCALE.clear()
        cc.SCALE.update(old)
    kind = kind or rng.choice(["compact", "perm", "gap", "zero", "arb", "arb"])
    if kind == "arb":
        stride = cc.unflat([rng.choice(STRIDES) for _ in cc.flat(shape)], shape)
    else:
        stride = cc.rand_stride(rng, shape, kind)
    fs = cc.flat(shape)
    fd = [-d if rng.random() < neg else d for d in cc.flat(stride)]
    fd = [rng.choice([0, 1, 7, -3, 64]) if s == 1 and rng.random() < 0.5 else d for s, d in zip(fs, fd, strict=True)]
    stride = cc.unflat(fd, shape)
    if rng.random() < 0.08:
        shape, stride = (shape,), (stride,)
    return cc.lay(shape, stride)


def big_layout(rng: random.Random, neg: float = 0.15) -> str:
    """Large sizes and strides that stay inside CuTe's 32-bit ints."""
    while True:
        r = rng.choice([1, 2, 2, 3])
        shape = tuple(rng.choice(BIG) for _ in range(r))
        if cc.prod(shape) > 1 << 24:
            continue
        stride = cc.rand_stride(rng, shape, rng.choice(["compact", "perm", "gap", "zero"]))
        mul = rng.choice([1, 1, 2, 3, 64])
        fd = [(-d if rng.random() < neg else d) * mul for d in cc.flat(stride)]
        if r == 1 and rng.random() < 0.5:
            return cc.lay(shape[0], fd[0])
        return cc.lay(shape, tuple(fd))


def any_layout(rng: random.Random, max_size: int = 256, **kw: Any) -> str:
    return big_layout(rng) if rng.random() < 0.12 else wild_layout(rng, max_size, **kw)


def nested_entry(rng: random.Random, mode: Any, depth: int = 0) -> Any:
    """A tiler entry for ``mode``: _, a divisor, a nested list, a layout with a nested shape (fitted or wild)."""
    n = cc.prod(mode)
    r = rng.random()
    if r < 0.12:
        return None
    if r < 0.3:
        return rng.choice(cc.divisors(n))
    if r < 0.55 and isinstance(mode, tuple) and depth < 3:
        return [nested_entry(rng, m, depth + 1) for m in mode[: rng.choice(range(1, len(mode) + 1))]]
    if r < 0.8:
        fs = cc.factorize(rng, rng.choice(cc.divisors(n)))
        shape = cc.group(rng, fs)
        shape = shape if isinstance(shape, tuple) or rng.random() < 0.5 else (shape,)
        if isinstance(shape, tuple) and len(shape) > 1 and rng.random() < 0.5:
            shape = (shape[0], tuple(shape[1:]))
        stride = cc.rand_stride(rng, shape, rng.choice(["compact", "perm", "zero", "gap"]))
        if rng.random() < 0.25:
            stride = cc.unflat([-d for d in cc.flat(stride)], shape)
        return cc.lay(shape, stride)
    return wild_layout(rng, max(2, n), max_rank=2)


def nested_tiler(rng: random.Random, layout: str) -> Any:
    shape, _ = cc.split_layout(layout)
    r = rng.random()
    if r < 0.25:
        return nested_entry(rng, shape if not isinstance(shape, tuple) else cc.prod(shape)) or 1
    modes = shape if isinstance(shape, tuple) else (shape,)
    return [nested_entry(rng, m) for m in modes[: rng.choice(range(1, len(modes) + 1))]]


def cotarget(rng: random.Random, layout: str) -> Any:
    fs, fd = cc.split_layout(layout)
    cos = 1 + sum((s - 1) * abs(d) for s, d in zip(cc.flat(fs), cc.flat(fd), strict=True))
    r = rng.random()
    if r < 0.2:
        return rng.choice([cos, 2 * cos, cos + 3, cc.prod(fs) * 2, 1, 13])
    if r < 0.75:
        tgt = cc.group(rng, cc.factorize(rng, rng.choice([cos, 2 * cos, 4 * cos, cos + 1, 96, 60])))
        tgt = tgt if isinstance(tgt, tuple) else (tgt,)
        if rng.random() < 0.2:
            tgt = tgt + (1,)
        if rng.random() < 0.15:
            tgt = (tgt,)
        return cc.tstr(tgt)
    return wild_layout(rng, 128, neg=0.2)


OPS = ["composition", "composition", "complement", "complement", "coalesce", "filter", "right_inverse",
       "left_inverse", "logical_divide", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
       "logical_product", "logical_product", "zipped_product", "tiled_product", "flat_product", "blocked_product",
       "raked_product", "max_common_vector", "max_common_layout", "upcast", "downcast", "recast_layout", "nullspace",
       "filter_zeros", "tile_to_shape", "local_tile", "local_partition", "idx2crd", "crd2idx", "evaluate",
       "tile_unzip", "slice", "slice_tile", "swz_tile", "nested_thr"]


def slice_coord(rng: random.Random, shape: Any, top: bool = True) -> Any:
    """A coordinate of ``shape`` with ``_`` here and there (a whole mode kept), nested like the shape or coarser."""
    if rng.random() < (0.15 if top else 0.3):
        return None
    if isinstance(shape, tuple) and (top or rng.random() < 0.6):
        return tuple(slice_coord(rng, m, False) for m in shape)
    return rng.randrange(cc.prod(shape))


def gen_case(rng: random.Random, op: str) -> dict:
    L = any_layout(rng)
    shape, stride = cc.split_layout(L)
    if op == "composition":
        k = rng.random()
        if k < 0.5:
            return {"op": op, "args": [L, nested_tiler(rng, L)]}
        return {"op": op, "args": [L, wild_layout(rng, max(2, cc.prod(shape)), neg=0.3)]}
    if op == "complement":
        A = wild_layout(rng, 64, neg=0.25) if rng.random() < 0.85 else big_layout(rng)
        return {"op": op, "args": [A, cotarget(rng, A)] if rng.random() < 0.85 else [A]}
    if op in ("coalesce", "filter"):
        return {"op": op, "args": [L, cute_edge.nested_profile(rng, shape)] if rng.random() < 0.6 else [L]}
    if op in ("right_inverse", "left_inverse", "nullspace", "filter_zeros"):
        return {"op": op, "args": [L]}
    if op.endswith("_divide"):
        return {"op": op, "args": [L, nested_tiler(rng, L) if rng.random() < 0.75 else cc.rand_tiler(rng, L)]}
    if op.endswith("_product"):
        blk = wild_layout(rng, 32, neg=0.3)
        if op in ("blocked_product", "raked_product") or rng.random() < 0.5:
            return {"op": op, "args": [blk, wild_layout(rng, 16, neg=0.2, max_rank=3)]}
        return {"op": op, "args": [blk, nested_tiler(rng, blk)]}
    if op in ("max_common_vector", "max_common_layout"):
        if rng.random() < 0.6:
            fd = [d if rng.random() < 0.6 else -d for d in cc.flat(cc.rand_stride(rng, shape))]
            return {"op": op, "args": [L, cc.lay(shape, cc.unflat(fd, shape))]}
        return {"op": op, "args": [L, any_layout(rng)]}
    if op in ("upcast", "downcast"):
        return {"op": op, "args": [L, rng.choice([1, 2, 3, 4, 8, 16, 32])]}
    if op == "recast_layout":
        return {"op": op, "args": [L, rng.choice(cute_edge.BITS), rng.choice(cute_edge.BITS)]}
    if op == "tile_to_shape":
        blk = wild_layout(rng, 32, neg=0.2)
        bshape, _ = cc.split_layout(blk)
        bm = [cc.prod(m) for m in (bshape if isinstance(bshape, tuple) else (bshape,))]
        tgt = [m * rng.choice([1, 2, 3]) for m in bm] + [rng.choice([1, 2, 3]) for _ in range(rng.choice([0, 0, 1]))]
        tgt = [cc.group(rng, cc.factorize(rng, t)) if rng.random() < 0.3 else t for t in tgt]
        args = [blk, cc.tstr(tuple(tgt))]
        if rng.random() < 0.5:
            args.append(cc.tstr(tuple(rng.choice([0, 1, 2, 3]) for _ in tgt)))
        return {"op": op, "args": args}
    if op == "slice":  # layout(crd) with _ in crd: CuTe's slice (of a swizzled or a coordinate layout now and then)
        k = rng.random()
        if k < 0.15:
            L = cute_swizzle.rand_atom(rng)[0]
            if rng.random() < 0.5:
                sw, off, inner = cc.split_composed(L)
                L = f"Sw<{sw[0]},{sw[1]},{sw[2]}> o {rng.choice([0, 8, 32])} o {inner}"
            shape, _ = cc.split_layout(cc.split_composed(L)[2])
        elif k < 0.25:
            L = cute_edge.identity_layout(rng)
            shape, _ = cc.split_layout(L)
        crd = slice_coord(rng, shape)
        return {"op": "evaluate", "args": [L, cc.tstr(crd)]}
    if op == "slice_tile":  # local_tile with _ in the tile coordinate (the tiles along that mode are kept)
        modes = shape if isinstance(shape, tuple) else (shape,)
        tiler = [rng.choice(cc.divisors(cc.prod(m))) if rng.random() < 0.8 else None
                 for m in modes[: rng.choice(range(1, len(modes) + 1))]]
        reps = [cc.prod(m) // (t or cc.prod(m)) for m, t in zip(modes, tiler, strict=False)]
        reps += [cc.prod(m) for m in modes[len(tiler):]]
        keep = reps[: rng.choice(range(1, len(reps) + 1))]
        crd = tuple(rng.randrange(x) if rng.random() < 0.6 else None for x in keep)
        if rng.random() < 0.2:
            crd = tuple(rng.randrange(x) if rng.random() < 0.6 else None for x in reps)
        return {"op": "local_tile", "args": [L, tiler, cc.tstr(crd)]}
    if op == "nested_thr":  # local_partition by a thread layout with nested modes (get_flat_coord of a nested index)
        modes = shape if isinstance(shape, tuple) else (shape,)
        thr = tuple(cc.group(rng, cc.factorize(rng, rng.choice(cc.divisors(cc.prod(m))))) for m in modes)
        thr = thr if len(thr) > 1 or rng.random() < 0.5 else thr[0]
        tl = cc.lay(thr, cc.rand_stride(rng, thr, rng.choice(["compact", "perm", "perm"])))
        return {"op": "local_partition", "args": [L, tl, rng.randrange(cc.prod(thr))]}
    if op == "swz_tile":  # local_tile / local_partition / a slice of a swizzled layout (with an offset now and then)
        atom = cute_swizzle.rand_atom(rng)[0]
        sw, off, inner = cc.split_composed(atom)
        if rng.random() < 0.4:
            atom = f"Sw<{sw[0]},{sw[1]},{sw[2]}> o {rng.choice([1, 8, 16, 32, 64, 96])} o {inner}"
        shape, _ = cc.split_layout(inner)
        modes = shape if isinstance(shape, tuple) else (shape,)
        k = rng.random()
        if k < 0.45:
            tiler = [rng.choice(cc.divisors(cc.prod(m))) for m in modes[: rng.choice(range(1, len(modes) + 1))]]
            reps = [cc.prod(m) // t for m, t in zip(modes, tiler, strict=False)]
            reps += [cc.prod(m) for m in modes[len(tiler):]]
            crd: Any = tuple(rng.randrange(x) if rng.random() < 0.75 else None for x in reps)
            crd = crd[: rng.choice(range(1, len(crd) + 1))] if rng.random() < 0.3 else crd
            return {"op": "local_tile", "args": [atom, tiler, cc.tstr(crd) if rng.random() < 0.9 else
                                                 rng.randrange(cc.prod(tuple(reps)))]}
        if k < 0.75:
            thr = tuple(rng.choice(cc.divisors(cc.prod(m))) for m in modes)
            tl = cc.lay(thr, cc.rand_stride(rng, thr, rng.choice(["compact", "perm"])))
            return {"op": "local_partition", "args": [atom, tl, rng.randrange(cc.prod(thr))]}
        return {"op": "evaluate", "args": [atom, cc.tstr(slice_coord(rng, shape))]}
    if op in ("local_tile", "local_partition", "idx2crd", "crd2idx", "evaluate", "tile_unzip"):
        old = cute_edge.edge_layout
        cute_edge.edge_layout = lambda r, max_size=128, kind=None: wild_layout(r, max_size, neg=0.25)
        try:
            return cute_edge.gen_plain(rng, op)
        finally:
            cute_edge.edge_layout = old
    raise ValueError(op)


def gen_cases(seed: int, n: int, ops: list[str] | None = None) -> list[dict]:
    rng = random.Random(seed)
    pool = [o for o in OPS if not ops or o in ops]
    return cc.distinct(n, lambda: gen_case(rng, rng.choice(pool)))
