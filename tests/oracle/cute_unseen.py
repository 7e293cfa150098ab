"""Plain-layout argument combinations the other generators never draw (``cute_cpp.py --unseen``):

- the divides and ``flat_product`` / ``logical_product`` / ... by tilers nested deeper than the layout (``[[2]]`` or
  ``[2, [3]]`` on a leaf mode, a 1-tuple around a whole mode), with stride-0, negative and size-1 entries;
- ``blocked_product`` / ``raked_product`` of nested, stride-0, negative and 1-tuple layouts on both sides;
- ``logical_product`` of a layout whose complement's cotarget is not a multiple of its cosize (gaps of 3, 5, 7);
- the inverses of layouts mixing size-1 and stride-0 modes at depth, with negative strides and 1-tuples;
- complement by tuple cotargets holding 1s and sizes that do not divide, nested, or a Layout's nested shape;
- coalesce / filter by profiles deeper or shorter than the shape;
- composition by a B with stride-0 modes inside nested shapes over an A with negative strides and 1-tuples;
- upcast / downcast by odd ratios (3, 5, 6, 7, 9, 12) of layouts whose strides the ratio divides or not;
- max_common_vector / max_common_layout of non-injective layouts (stride 0, repeated strides, both sides);
- size / cosize of negative and stride-0 layouts; make_layout (col- and row-major) and make_ordered_layout of nested
  shapes with size-1 modes, ties and orders coarser than the shape; tile_to_shape of such blocks;
- local_tile by those deep tilers (coordinates nested like the tiler or flat), local_partition by nested thread
  layouts with size-1 and stride-0 modes, tile_unzip by deep tilers, slices / crd2idx with coordinates deeper or
  coarser than the shape (1-tuples around an index, ``_`` over a nested mode);
- ``--ops inttuple``: shape_div / ceil_div of IntTuples, idx2crd / crd2idx with a stride (congruent or not).

    python tests/oracle/cute_cpp.py --unseen --seed 11500 --n 200 --out /tmp/unseen_11500.json
"""

from __future__ import annotations

import random
from typing import Any

import cute_bymode as cb
import cute_cases as cc
import cute_notation as cn

import algebra

LEAVES = [1, 1, 2, 2, 3, 4, 4, 5, 6, 8]
STRIDES = [0, 0, 1, 1, 2, 3, 4, 5, 6, 8, 12, 16, -1, -2, -4]


def odd_layout(rng: random.Random, max_size: int = 128, depth: int = 3, rank: int = 3, zero: float = 0.2,
               neg: float = 0.15, one_tuple: float = 0.15) -> str:
    """A layout with size-1 and stride-0 modes at depth, negative strides, and 1-tuples around modes."""
    shape = cb.shape_of(rng, max_size, leaves=LEAVES, depth=depth, rank=rank)
    stride = cb.stride_for(rng, shape, zero=zero, neg=neg)
    if rng.random() < 0.3:
        stride = cc.unflat([rng.choice(STRIDES) for _ in cc.flat(shape)], shape)
    if rng.random() < one_tuple:
        shape, stride = (shape,), (stride,)
    return cc.lay(shape, stride)


def deep_entry(rng: random.Random, mode: Any) -> Any:
    """A tiler entry nested deeper than ``mode`` (a leaf takes ``[x]``, ``[[x]]`` or ``[x, y]``), or a plain one."""
    n = cc.prod(mode)
    base = rng.choice([None, rng.choice(cc.divisors(n)), rng.choice([2, 3, 4]),
                       cc.lay(rng.choice(cc.divisors(n)), rng.choice([0, 1, 2, -1])),
                       cb.uneven_entry(rng, mode)])
    k = rng.random()
    if k < 0.35:
        return [base]
    if k < 0.5:
        return [[base]]
    if k < 0.6:
        return [base, rng.choice([None, 1, 2])]  # more modes than the mode: CuTe refuses unless the mode is a tuple
    if isinstance(mode, tuple) and k < 0.85:
        return [deep_entry(rng, m) for m in mode[: rng.choice(range(1, len(mode) + 1))]]
    return base


def deep_tiler(rng: random.Random, lay_text: str) -> Any:
    shape, _ = cc.split_layout(lay_text)
    modes = shape if isinstance(shape, tuple) else (shape,)
    out = [deep_entry(rng, m) for m in modes[: rng.choice(range(1, len(modes) + 1))]]
    return [out] if rng.random() < 0.1 else out  # a 1-tuple around the whole tiler


def gapped(rng: random.Random) -> str:
    """A layout whose strides leave gaps that its sizes do not divide (the complement's cotarget is not a multiple)."""
    r = rng.choice([1, 2, 2, 3])
    shape = tuple(rng.choice([2, 3, 4, 5]) for _ in range(r))
    stride, cur = [], 1
    for s in shape:
        cur *= rng.choice([1, 2, 3, 5, 7]) if rng.random() < 0.7 else 1
        stride.append(cur if rng.random() < 0.85 else rng.choice([3, 5, 7]))
        cur *= s
    order = list(range(r))
    rng.shuffle(order)
    shape, stride = tuple(shape[i] for i in order), tuple(stride[i] for i in order)
    return cc.lay(shape if r > 1 else shape[0], stride if r > 1 else stride[0])


def deep_profile(rng: random.Random, shape: Any, top: bool = True) -> Any:
    if isinstance(shape, tuple) and (top or rng.random() < 0.6):
        k = len(shape) if rng.random() < 0.6 else rng.choice(range(1, len(shape) + 1))
        return tuple(deep_profile(rng, m, False) for m in shape[:k])
    k = rng.random()
    return (1,) if k < 0.15 else (1, 1) if k < 0.25 else ((1,),) if k < 0.3 else 1


def cotarget(rng: random.Random, lay_text: str) -> Any:
    fs, fd = cc.split_layout(lay_text)
    cos = 1 + sum((s - 1) * abs(d) for s, d in zip(cc.flat(fs), cc.flat(fd), strict=True))
    n = rng.choice([cos, cos + 1, 2 * cos - 1, 3 * cos, cos * 2, 7, 30, 1])
    tgt: Any = cc.group(rng, cc.factorize(rng, n))
    tgt = list(tgt) if isinstance(tgt, tuple) else [tgt]
    for _ in range(rng.choice([0, 1, 2])):
        tgt.insert(rng.randrange(len(tgt) + 1), 1)
    k = rng.random()
    if k < 0.2:
        return n
    if k < 0.3:
        return cc.lay(tuple(tgt), cc.unflat([1] * len(cc.flat(tuple(tgt))), tuple(tgt)))  # a Layout cotarget
    out = tuple(tgt)
    return cc.tstr((out[0], out[1:]) if len(out) > 2 and rng.random() < 0.4 else out)


def ratio_layout(rng: random.Random, f: int) -> str:
    """A layout for upcast / downcast by ``f``: strides multiples of f or not, stride 0, negative, size-1 modes."""
    shape = cb.shape_of(rng, 128, leaves=[1, 2, 3, 4, 5, 6, 9, 12], depth=2)
    fd = []
    for _s in cc.flat(shape):
        k = rng.random()
        fd.append(0 if k < 0.15 else f * rng.choice([1, 2, 3, -1]) if k < 0.55 else rng.choice([1, 1, 2, 3, 4, -1, 6]))
    if rng.random() < 0.4:  # a unit-stride first mode (upcast groups it)
        fd[0] = 1
    return cc.lay(shape, cc.unflat(fd, shape))


def noninjective(rng: random.Random) -> str:
    shape = cb.shape_of(rng, 128, leaves=[1, 2, 2, 3, 4, 4, 8], depth=2)
    fd = cc.flat(cc.rand_stride(rng, shape, rng.choice(["compact", "perm"])))
    k = rng.random()
    if k < 0.4:
        fd = [0 if rng.random() < 0.4 else d for d in fd]
    elif k < 0.7 and len(fd) > 1:
        i, j = rng.sample(range(len(fd)), 2)
        fd[j] = fd[i]  # a repeated stride
    else:
        fd = [d * rng.choice([1, 1, -1]) for d in fd]
        fd[0] = 0
    return cc.lay(shape, cc.unflat(fd, shape))


def order_of(rng: random.Random, shape: Any, top: bool = True) -> Any:
    if isinstance(shape, tuple) and (top or rng.random() < 0.6):
        return tuple(order_of(rng, m, False) for m in shape)
    return rng.choice([0, 1, 1, 2, 3, 4, 7])


OPS = ["logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "flat_product", "flat_product",
       "logical_product", "zipped_product", "tiled_product", "blocked_product", "raked_product", "gapped_product",
       "right_inverse", "left_inverse", "complement", "complement", "coalesce", "filter", "composition",
       "composition", "upcast", "downcast", "max_common_vector", "max_common_layout", "size", "cosize",
       "make_layout", "make_layout_row_major", "make_ordered_layout", "tile_to_shape", "local_tile", "local_tile",
       "local_partition", "tile_unzip", "evaluate", "crd2idx", "inttuple"]


def gen_inttuple(rng: random.Random) -> dict:
    """shape_div / ceil_div of IntTuples by tuples (ranks more, fewer, nested) and ints that divide or not;
    idx2crd / crd2idx with a stride (congruent with the shape or not, 0 and negative entries)."""
    a = cb.shape_of(rng, 256, leaves=LEAVES + [7, 9, 12], depth=3)
    op = rng.choice(["shape_div", "ceil_div", "idx2crd", "crd2idx"])
    if op in ("shape_div", "ceil_div"):
        k = rng.random()
        b: Any = rng.choice(cc.divisors(cc.prod(a)) + [3, 5, 8]) if k < 0.4 else cb.shape_of(
            rng, 64, leaves=[1, 2, 3, 4], depth=2)
        if k > 0.8 and isinstance(a, tuple):  # the shape of a with each leaf split or cut
            b = cc.unflat([rng.choice(cc.divisors(x)) for x in cc.flat(a)], a)
        return {"op": op, "args": [cc.tstr(a), cc.tstr(b)]}
    fd = [rng.choice(STRIDES) for _ in cc.flat(a)]
    d: Any = cc.unflat(fd, a)
    if rng.random() < 0.15:
        d = cb.shape_of(rng, 64, leaves=[1, 2, 3], depth=2)  # mostly not congruent with a
    n = cc.prod(a)
    idx: Any = rng.randrange(-n, 3 * n) if rng.random() < 0.7 else cc.tstr(deep_crd(rng, a))
    if isinstance(idx, str) and "_" in idx:
        idx = rng.randrange(n)
    return {"op": op, "args": [idx if isinstance(idx, int) else idx, cc.tstr(a), cc.tstr(d)]}


def grid_crd(rng: random.Random, mode: Any, tile: Any) -> Any:
    """A tile coordinate for ``mode`` tiled by ``tile`` (nested like the tiler, or one index), in the grid mostly."""
    if isinstance(tile, list) and len(tile) == 1 and rng.random() < 0.7:
        return (grid_crd(rng, mode, tile[0]),)
    if isinstance(tile, list) and isinstance(mode, tuple) and len(tile) <= len(mode) and rng.random() < 0.7:
        return tuple(grid_crd(rng, m, t) for m, t in zip(mode, tile, strict=False))
    t = tile if isinstance(tile, int) else cc.prod(cc.split_layout(tile)[0]) if isinstance(tile, str) else 1
    return rng.randrange(max(1, -(-cc.prod(mode) // max(1, t))) + (1 if rng.random() < 0.1 else 0))


def deep_crd(rng: random.Random, shape: Any, top: bool = True) -> Any:
    """A coordinate (``_`` allowed) nested like ``shape``, deeper (a 1-tuple around an index) or coarser."""
    k = rng.random()
    if not top and k < 0.2:
        return None
    if isinstance(shape, tuple) and (top or k < 0.75):
        return tuple(deep_crd(rng, m, False) for m in shape)
    i = rng.randrange(cc.prod(shape))
    return (i,) if rng.random() < 0.12 else i


def gen_tile(rng: random.Random, op: str, L: str) -> dict:
    shape, stride = cc.split_layout(L)
    modes = shape if isinstance(shape, tuple) else (shape,)
    if op == "local_tile":
        tiler = [deep_entry(rng, m) or 1 for m in modes[: rng.choice(range(1, len(modes) + 1))]]
        crd = tuple(grid_crd(rng, m, t) for m, t in zip(modes, tiler, strict=False))
        return {"op": op, "args": [L, tiler, cc.tstr(crd) if rng.random() < 0.9 else rng.randrange(4)]}
    if op == "local_partition":
        thr = tuple(cc.group(rng, [1] * rng.choice([0, 0, 1]) + cc.factorize(rng, rng.choice(
            cc.divisors(cc.prod(m))))) for m in modes)
        fd = cc.flat(cc.rand_stride(rng, thr, rng.choice(["compact", "perm"])))
        fd = [0 if rng.random() < 0.15 else d for d in fd]
        return {"op": op, "args": [L, cc.lay(thr, cc.unflat(fd, thr)), rng.randrange(cc.prod(thr))]}
    if op == "tile_unzip":  # of logical_divide(L, tiler) (as this tree prints it), and now and then of L itself
        tiler = deep_tiler(rng, L)
        try:
            div = str(algebra.logical_divide(cn.to_py(L), cn.to_py(tiler))) if rng.random() < 0.85 else L
        except algebra.LayoutError:
            div = L
        return {"op": op, "args": [div, tiler]}
    if op == "evaluate":
        return {"op": op, "args": [L, cc.tstr(deep_crd(rng, shape))]}
    crd = deep_crd(rng, shape)
    crd = cc.unflat([0 if x is None else x for x in cc.flat(crd)], crd) if isinstance(crd, tuple) else crd
    return {"op": op, "args": [cc.tstr(crd), cc.tstr(shape)] + ([cc.tstr(stride)] if rng.random() < 0.5 else [])}


def gen_case(rng: random.Random, op: str) -> dict:
    L = odd_layout(rng)
    shape, _ = cc.split_layout(L)
    if op in ("local_tile", "local_partition", "tile_unzip", "evaluate", "crd2idx"):
        return gen_tile(rng, op, L)
    if op == "inttuple":
        return gen_inttuple(rng)
    if op.endswith("_divide"):
        return {"op": op, "args": [L, deep_tiler(rng, L)]}
    if op in ("blocked_product", "raked_product"):
        return {"op": op, "args": [odd_layout(rng, 32, rank=4), odd_layout(rng, 16, rank=4)]}
    if op == "gapped_product":
        A = gapped(rng)
        B = odd_layout(rng, 16, zero=0.1, neg=0.1) if rng.random() < 0.7 else gapped(rng)
        return {"op": rng.choice(["logical_product", "blocked_product", "raked_product", "zipped_product"]),
                "args": [A, B]}
    if op.endswith("_product"):
        blk = odd_layout(rng, 32)
        return {"op": op, "args": [blk, deep_tiler(rng, blk) if rng.random() < 0.6 else odd_layout(rng, 16)]}
    if op in ("right_inverse", "left_inverse"):
        return {"op": op, "args": [odd_layout(rng, 128, depth=4, zero=0.3, neg=0.2, one_tuple=0.25)]}
    if op == "complement":
        A = odd_layout(rng, 64) if rng.random() < 0.7 else gapped(rng)
        return {"op": op, "args": [A, cotarget(rng, A)]}
    if op in ("coalesce", "filter"):
        return {"op": op, "args": [L, cc.tstr(deep_profile(rng, shape))]}
    if op == "composition":
        n = cc.prod(shape)
        if rng.random() < 0.6:
            return {"op": op, "args": [L, cb.stride0_layout(rng, n)]}
        modes = shape if isinstance(shape, tuple) else (shape,)
        return {"op": op, "args": [L, [cb.stride0_layout(rng, cc.prod(m)) if rng.random() < 0.6 else
                                       deep_entry(rng, m) for m in modes[: rng.choice(range(1, len(modes) + 1))]]]}
    if op in ("upcast", "downcast"):
        f = rng.choice([3, 5, 6, 7, 9, 12])
        return {"op": op, "args": [ratio_layout(rng, f), f]}
    if op in ("max_common_vector", "max_common_layout"):
        A = noninjective(rng)
        s, _ = cc.split_layout(A)
        B = noninjective(rng) if rng.random() < 0.3 else cc.lay(s, cb.stride_for(rng, s, zero=0.3))
        return {"op": op, "args": [A, B] if rng.random() < 0.6 else [B, A]}
    if op in ("size", "cosize"):
        return {"op": op, "args": [odd_layout(rng, 256, neg=0.4)]}
    if op in ("make_layout", "make_layout_row_major"):
        return {"op": op, "args": [cc.tstr(cb.shape_of(rng, 256, leaves=LEAVES, depth=4, rank=4))]}
    if op == "make_ordered_layout":
        s = cb.shape_of(rng, 256, leaves=LEAVES, depth=3, rank=4)
        return {"op": op, "args": [cc.tstr(s), cc.tstr(order_of(rng, s) if isinstance(s, tuple) else
                                                       (rng.choice([0, 2]),))]}
    if op == "tile_to_shape":
        blk = odd_layout(rng, 32, one_tuple=0.0)
        bs, _ = cc.split_layout(blk)
        bm = [cc.prod(m) for m in (bs if isinstance(bs, tuple) else (bs,))]
        tgt = [m * rng.choice([1, 2, 3]) for m in bm] + [rng.choice([1, 2]) for _ in range(rng.choice([0, 0, 1]))]
        tgt = [cc.group(rng, [1] + cc.factorize(rng, t)) if rng.random() < 0.3 else t for t in tgt]
        args = [blk, cc.tstr(tuple(tgt))]
        if rng.random() < 0.6:
            args.append(cc.tstr(order_of(rng, tuple(tgt))))
        return {"op": op, "args": args}
    raise ValueError(op)


def gen_cases(seed: int, n: int, ops: list[str] | None = None) -> list[dict]:
    rng = random.Random(seed)
    pool = [o for o in OPS if not ops or o in ops]
    return cc.distinct(n, lambda: gen_case(rng, rng.choice(pool)))
