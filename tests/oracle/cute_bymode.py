"""By-mode and uneven plain-layout cases for the C++ oracle (``cute_cpp.py --bymode``): what the other generators
draw rarely.

- the divides and the products (logical / zipped / tiled / flat, blocked / raked) by tilers that are tuples of
  layouts (nested, gapped, stride 0, negative), of sizes that do not divide the mode they tile, and of more or fewer
  modes than the layout; blocked / raked products of layouts of other ranks;
- composition with a second layout of stride-0 modes, nested at every depth, and by tuples of such layouts;
- coalesce / filter by a profile (by-mode), complement with a nested shape-tuple cotarget;
- right_inverse / left_inverse of layouts with size-1 modes (any stride on them) and stride-0 modes;
- max_common_vector / max_common_layout of a layout and another split, permuted, padded or broadcast one, and of
  two layouts that start contiguous (A o right_inverse(B) is often not a layout there, CuTe's run may still be);
- local_tile / local_partition by tilers whose divide is not a layout somewhere (the tile kept may be right);
- slices (``_`` at depths 1 to 4 of a coordinate), crd2idx / idx2crd with nested and partly flattened coordinates
  (with a stride too).

    python tests/oracle/cute_cpp.py --bymode --seed 10100 --n 300 --out /tmp/bymode_10100.json
"""

from __future__ import annotations

import random
from typing import Any

import cute_cases as cc

UNEVEN = [2, 3, 4, 5, 6, 8, 9, 10, 12, 16]
STRIDE0 = [0, 0, 1, 2, 3, 4, -1, -2, 8]


def shape_of(rng: random.Random, max_size: int = 256, leaves: list | None = None, depth: int = 3,
             rank: int = 3) -> Any:
    old = dict(cc.SCALE)
    cc.SCALE.update(leaves=leaves or rng.choice([UNEVEN, cc.LEAVES, [1, 1, 2, 3, 4, 6]]), start=rng.choice([0, 1, 2]))
    try:
        for _ in range(50):  # mostly two modes or more, or a nested one
            shape = cc.rand_shape(rng, max_size, max_rank=rng.choice(range(1, rank + 1)), max_depth=depth)
            if isinstance(shape, tuple) and (len(shape) > 1 or isinstance(shape[0], tuple)) or rng.random() < 0.15:
                return shape
        return shape
    finally:
        cc.SCALE.clear()
        cc.SCALE.update(old)


def stride_for(rng: random.Random, shape: Any, zero: float = 0.0, neg: float = 0.0) -> Any:
    kind = rng.choice(["compact", "perm", "perm", "gap", "zero", "arb"])
    fd = cc.flat(cc.rand_stride(rng, shape, kind))
    fd = [0 if rng.random() < zero else -d if rng.random() < neg else d for d in fd]
    fd = [rng.choice(STRIDE0) if s == 1 and rng.random() < 0.5 else d for s, d in zip(cc.flat(shape), fd, strict=True)]
    return cc.unflat(fd, shape)


def layout(rng: random.Random, max_size: int = 256, zero: float = 0.0, neg: float = 0.0, **kw: Any) -> str:
    shape = shape_of(rng, max_size, **kw)
    return cc.lay(shape, stride_for(rng, shape, zero, neg))


def uneven_entry(rng: random.Random, mode: Any, depth: int = 0) -> Any:
    """A tiler entry for ``mode``: a layout (nested, gapped, stride 0, negative), of a size that divides the mode's or
    not, an int that may not divide it, a nested list, or ``_``."""
    n = cc.prod(mode)
    r = rng.random()
    if r < 0.08:
        return None
    if r < 0.22:
        return rng.choice(UNEVEN[:7])
    if r < 0.37 and isinstance(mode, tuple) and depth < 2:
        return [uneven_entry(rng, m, depth + 1) for m in mode[: rng.choice(range(1, len(mode) + 1))]]
    m = rng.choice(cc.divisors(n)) if rng.random() < 0.5 else rng.choice([2, 3, 4, 5, 6, 8, n + 1, 2 * n])
    if m > 64:
        m = rng.choice(cc.divisors(n))
    shape = cc.group(rng, cc.factorize(rng, m))
    if rng.random() < 0.2:
        shape = (shape, 1) if rng.random() < 0.5 else (1, shape)
    return cc.lay(shape, stride_for(rng, shape, zero=0.15, neg=0.1))


def tuple_tiler(rng: random.Random, lay_text: str, more: float = 0.05) -> list:
    shape, _ = cc.split_layout(lay_text)
    modes = shape if isinstance(shape, tuple) else (shape,)
    out = [uneven_entry(rng, m) for m in modes[: rng.choice(range(1, len(modes) + 1))]]
    if rng.random() < more:
        out.append(rng.choice([None, 2, "2:1"]))  # more modes than the layout: CuTe refuses
    return [cc.lay(x, 1) if isinstance(x, int) and rng.random() < 0.3 else x for x in out]  # an int as x:1 too


def stride0_layout(rng: random.Random, n: int) -> str:
    """A second argument of composition with stride-0 modes, nested at every depth, reading inside ``[0, n)``
    mostly."""
    shape = shape_of(rng, max(2, 2 * n), leaves=[1, 2, 2, 3, 4, 4, 8], depth=4)
    fd = [0 if rng.random() < 0.45 else rng.choice([1, 1, 2, 3, 4, 8, 16, -1]) for _ in cc.flat(shape)]
    return cc.lay(shape, cc.unflat(fd, shape))


def nested_cotarget(rng: random.Random, lay_text: str) -> str:
    fs, fd = cc.split_layout(lay_text)
    cos = 1 + sum((s - 1) * abs(d) for s, d in zip(cc.flat(fs), cc.flat(fd), strict=True))
    n = rng.choice([cos, 2 * cos, cos + 1, 4 * cos, max(1, cos - 1), 24, 60])
    tgt: Any = cc.group(rng, cc.factorize(rng, n))
    tgt = tgt if isinstance(tgt, tuple) else (tgt,)
    if rng.random() < 0.4:
        tgt = ((tgt[0], 1),) + tgt[1:] if rng.random() < 0.5 else (tgt,)
    return cc.tstr(tgt)


def profile(rng: random.Random, shape: Any, top: bool = True) -> Any:
    """A by-mode profile: 1 (a whole mode) or a tuple, now and then deeper than the shape."""
    if isinstance(shape, tuple) and (top or rng.random() < 0.5):
        k = len(shape) if rng.random() < 0.7 else rng.choice(range(1, len(shape) + 1))
        return tuple(profile(rng, m, False) for m in shape[:k])
    return (1, 1) if rng.random() < 0.06 else 1


def other_of(rng: random.Random, lay_text: str) -> str:
    """A partner for max_common_*: the same shape with other strides, a split / merged shape of the same size, a
    size-1 mode inserted, or broadcast (stride-0) modes."""
    shape, stride = cc.split_layout(lay_text)
    k = rng.random()
    if k < 0.3:
        return lay_text if rng.random() < 0.2 else cc.lay(shape, stride_for(rng, shape, zero=0.1))
    if k < 0.6:
        other = cc.group(rng, cc.factorize(rng, cc.prod(shape)))
        return cc.lay(other, stride_for(rng, other, zero=0.1))
    fs, fd = cc.flat(shape), cc.flat(stride)
    if k < 0.8:
        i = rng.randrange(len(fs) + 1)
        fs, fd = fs[:i] + [1] + fs[i:], fd[:i] + [rng.choice([0, 1, 5])] + fd[i:]
        return cc.lay(tuple(fs), tuple(fd))
    return cc.lay(shape, cc.unflat([0 if rng.random() < 0.4 else d for d in fd], shape))


def run_layout(rng: random.Random) -> str:
    """A layout whose first mode is contiguous, the others strided, overlapping or broadcast."""
    shape = [rng.choice([2, 3, 4, 6, 8, 12, 16])]
    shape += [rng.choice([2, 3, 4, 5, 6, 8]) for _ in range(rng.choice([1, 2, 3]))]
    stride, cur = [1], shape[0]
    for s in shape[1:]:
        cur *= rng.choice([1, 1, 2, 3])
        stride.append(cur if rng.random() < 0.7 else rng.choice([0, 1, 2, 3, 5, 7, 2 * cur, shape[0] + 1]))
        cur *= s
    if rng.random() < 0.3:
        i, j = rng.randrange(len(shape)), rng.randrange(len(shape))
        stride[i], stride[j] = stride[j], stride[i]
    return cc.lay(tuple(shape), tuple(stride))


def slice_crd(rng: random.Random, shape: Any, depth: int = 0) -> Any:
    """A coordinate with ``_`` at any depth (a whole mode kept), ints over whole sub-modes now and then."""
    if rng.random() < (0.1 if depth == 0 else 0.3):
        return None
    if isinstance(shape, tuple) and rng.random() < 0.85:
        return tuple(slice_crd(rng, m, depth + 1) for m in shape)
    return rng.randrange(cc.prod(shape))


def nested_crd(rng: random.Random, shape: Any, top: bool = True) -> Any:
    """A coordinate of ``shape``: natural, an int over a sub-mode here and there, past the end or negative at times."""
    if isinstance(shape, tuple) and (top or rng.random() < 0.7):
        return tuple(nested_crd(rng, m, False) for m in shape)
    n = cc.prod(shape)
    r = rng.random()
    return rng.randrange(n) if r < 0.85 else rng.randrange(n, 3 * n) if r < 0.95 else -rng.randrange(1, n + 1)


OPS = ["logical_divide", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "logical_product",
       "logical_product", "zipped_product", "tiled_product", "flat_product", "blocked_product", "raked_product",
       "composition", "composition", "composition_t", "coalesce", "filter", "complement", "complement",
       "right_inverse", "left_inverse", "max_common_vector", "max_common_layout", "slice", "slice",
       "crd2idx", "crd2idx", "idx2crd", "local_tile", "local_tile", "local_partition", "max_common_run"]


def gen_case(rng: random.Random, op: str) -> dict:
    L = layout(rng, 256, zero=0.05, neg=0.05)
    shape, stride = cc.split_layout(L)
    if op.endswith("_divide"):
        return {"op": op, "args": [L, tuple_tiler(rng, L)]}
    if op in ("blocked_product", "raked_product"):
        blk = layout(rng, 32, zero=0.1, neg=0.05, rank=4)
        return {"op": op, "args": [blk, layout(rng, 16, zero=0.15, rank=4)]}
    if op.endswith("_product"):
        blk = layout(rng, 32, zero=0.1, neg=0.05)
        if rng.random() < 0.25:
            return {"op": op, "args": [blk, layout(rng, 16, zero=0.15)]}
        return {"op": op, "args": [blk, tuple_tiler(rng, blk)]}
    if op == "composition":  # a second layout with stride-0 modes, nested
        return {"op": op, "args": [L, stride0_layout(rng, cc.prod(shape))]}
    if op == "composition_t":  # by mode, entries with stride-0 modes
        modes = shape if isinstance(shape, tuple) else (shape,)
        k = rng.choice(range(1, len(modes) + 1))
        return {"op": "composition", "args": [L, [stride0_layout(rng, cc.prod(m)) if rng.random() < 0.7 else
                                                  uneven_entry(rng, m) for m in modes[:k]]]}
    if op in ("coalesce", "filter"):
        return {"op": op, "args": [L, cc.tstr(profile(rng, shape))]}
    if op == "complement":
        A = layout(rng, 64, zero=0.15, neg=0.05)
        return {"op": op, "args": [A, nested_cotarget(rng, A)]}
    if op in ("right_inverse", "left_inverse"):
        A = layout(rng, 128, zero=0.2, leaves=rng.choice([[1, 1, 2, 3, 4], [1, 2, 4, 8], UNEVEN]))
        return {"op": op, "args": [A]}
    if op in ("max_common_vector", "max_common_layout"):
        A = layout(rng, 256, zero=0.1, leaves=rng.choice([[1, 2, 4, 8], UNEVEN, cc.LEAVES]))
        B = other_of(rng, A)
        return {"op": op, "args": [A, B] if rng.random() < 0.7 else [B, A]}
    if op == "max_common_run":  # both start with a stride-1 mode
        A, B = (run_layout(rng) for _ in range(2))
        return {"op": rng.choice(["max_common_vector", "max_common_layout"]), "args": [A, B]}
    if op == "local_tile":
        modes = shape if isinstance(shape, tuple) else (shape,)
        tiler = [rng.choice(cc.divisors(cc.prod(m))) if rng.random() < 0.7 else uneven_entry(rng, cc.prod(m)) or 2
                 for m in modes[: rng.choice(range(1, len(modes) + 1))]]
        reps = [-(-cc.prod(m) // cc.prod(t if isinstance(t, int) else cc.split_layout(t)[0]))
                for m, t in zip(modes, tiler, strict=False)] + [cc.prod(m) for m in modes[len(tiler):]]
        crd = tuple(0 if rng.random() < 0.3 else rng.randrange(x) for x in reps)
        return {"op": op, "args": [L, tiler, cc.tstr(crd)]}
    if op == "local_partition":
        modes = shape if isinstance(shape, tuple) else (shape,)
        thr = tuple(rng.choice(cc.divisors(cc.prod(m))) for m in modes)
        tl = cc.lay(thr, cc.rand_stride(rng, thr, rng.choice(["compact", "perm"])))
        return {"op": op, "args": [L, tl, 0 if rng.random() < 0.3 else rng.randrange(cc.prod(thr))]}
    if op == "slice":
        D = layout(rng, 512, zero=0.1, neg=0.1, depth=4, rank=4)
        return {"op": "evaluate", "args": [D, cc.tstr(slice_crd(rng, cc.split_layout(D)[0]))]}
    if op == "crd2idx":
        crd = cc.tstr(nested_crd(rng, shape))
        return {"op": op, "args": [crd, cc.tstr(shape)] + ([cc.tstr(stride)] if rng.random() < 0.5 else [])}
    if op == "idx2crd":
        n = cc.prod(shape)
        idx = rng.randrange(n) if rng.random() < 0.8 else rng.randrange(n, 3 * n)
        if isinstance(shape, tuple) and rng.random() < 0.35:  # one index per top mode
            idx = cc.tstr(tuple(rng.randrange(cc.prod(m)) for m in shape))
        return {"op": op, "args": [idx, cc.tstr(shape)] + ([cc.tstr(stride)] if rng.random() < 0.3 else [])}
    raise ValueError(op)


def gen_cases(seed: int, n: int, ops: list[str] | None = None) -> list[dict]:
    rng = random.Random(seed)
    pool = [o for o in OPS if not ops or o in ops]
    return cc.distinct(n, lambda: gen_case(rng, rng.choice(pool)))
