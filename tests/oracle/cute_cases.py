"""Random layout-algebra cases for the differential oracles, and how to judge our answer against CuTe's.

A case is ``{"op": name, "args": [...]}`` with JSON arguments:

- a string with ``:`` is a layout in CuTe notation (``"(4,(2,4)):(2,(1,8))"``);
- any other string is an IntTuple (a shape, a profile, a mode order: ``"(4,(2,2))"``);
- an int is an int (a tile size, a cotarget);
- a list is a tiler: its entries are layouts, ints, ``null`` (CuTe's ``_``) or nested lists;
- a string starting ``Sw<`` is a swizzle, or with `` o `` a swizzled layout ``Sw<B,M,S> o O o L``.

CuTe's answer is the string ``cute::print`` writes with the underscores removed, or ``"refused"`` (the case does
not compile: a ``static_assert`` in CuTe fired). The notation, the evaluator and the verdicts live in
``cute_notation`` (re-exported here), which does not lean on ``algebra`` to judge ``algebra``.
"""

from __future__ import annotations

import random
from typing import Any

from cute_notation import (  # noqa: F401 - re-exported: the oracles use cute_cases as the one entry point
    fits_int32,
    flat,
    function,
    judge,
    key,
    offset_at,
    parse_tuple,
    prod,
    run_ours,
    sample,
    split_composed,
    split_layout,
    swizzle,
    to_py,
    tstr,
    unflat,
)

# ------------------------------------------------------------------------------------------- generators

LEAVES = [1, 2, 2, 2, 3, 4, 4, 4, 6, 8, 8, 16]
ARB = [0, 1, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64]
BIG_LEAVES = [1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 8192]
# the current scale: "leaves" to draw shapes from and "mul", a factor on every size limit (big cases: real sizes)
SCALE: dict[str, Any] = {"leaves": LEAVES, "mul": 1, "neg": 0.0, "start": 2}


def lay(shape: Any, stride: Any) -> str:
    return f"{tstr(shape)}:{tstr(stride)}"


def rand_shape(rng: random.Random, max_size: int = 256, max_rank: int = 3, max_depth: int = 3) -> Any:
    max_size *= SCALE["mul"]
    start = SCALE["start"]
    while True:
        def mode(d: int) -> Any:
            if d < max_depth and rng.random() < (0.3 if start else 0.5):
                return tuple(mode(d + 1) for _ in range(rng.choice([1, 2, 2, 2, 3])))
            return rng.choice(SCALE["leaves"])

        r = rng.choice(range(1, max_rank + 1))
        shape = mode(max_depth) if r == 1 and rng.random() < 0.75 else tuple(mode(start) for _ in range(r))
        if prod(shape) <= max_size:
            return shape


def rand_stride(rng: random.Random, shape: Any, kind: str | None = None) -> Any:
    fs = flat(shape)
    kind = kind or rng.choice(["compact", "perm", "perm", "gap", "zero", "arb", "arb"])
    if kind == "arb":
        sign = [-1 if rng.random() < SCALE["neg"] else 1 for _ in fs]
        big = [1, 1, 64, 1024] if SCALE["mul"] > 1 else [1]
        return unflat([g * rng.choice(ARB) * rng.choice(big) for g in sign], shape)
    order = list(range(len(fs)))
    if kind != "compact":
        rng.shuffle(order)
    out, cur = [0] * len(fs), 1
    for i in order:
        if kind == "gap" and rng.random() < 0.3:
            cur *= rng.choice([2, 3])
        out[i] = cur
        cur *= fs[i]
    if kind == "zero":
        out = [0 if rng.random() < 0.35 else d for d in out]
    return unflat(out, shape)


def rand_layout(rng: random.Random, max_size: int = 256, kind: str | None = None, **kw: Any) -> str:
    shape = rand_shape(rng, max_size, **kw)
    return lay(shape, rand_stride(rng, shape, kind))


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def factorize(rng: random.Random, n: int) -> list[int]:
    """A random ordered factorization of n (factors > 1; [1] for n == 1)."""
    out = []
    while n > 1:
        d = rng.choice([d for d in divisors(n) if d > 1])
        out.append(d)
        n //= d
    return out or [1]


def group(rng: random.Random, vals: list) -> Any:
    """Randomly nest a flat list into a hierarchical tuple (or a bare int when it has one entry)."""
    if len(vals) == 1 and rng.random() < 0.8:
        return vals[0]
    out, i = [], 0
    while i < len(vals):
        k = rng.choice([1, 1, 2, 3])
        chunk = vals[i:i + k]
        out.append(chunk[0] if len(chunk) == 1 else tuple(chunk))
        i += k
    return tuple(out)


def fitted_layout(rng: random.Random, n: int) -> str:
    """A layout that reads inside ``[0, n)`` (usually): a permuted compact layout of a factorization of a divisor
    of n, sometimes strided by a divisor."""
    m = rng.choice(divisors(n)) if rng.random() < 0.6 else n
    fs = factorize(rng, m)
    shape = group(rng, fs)
    stride = rand_stride(rng, shape, rng.choice(["compact", "perm", "perm", "zero"]))
    if rng.random() < 0.3 and m < n:
        k = rng.choice([d for d in divisors(n // m)])
        stride = unflat([d * k for d in flat(stride)], shape)
    return lay(shape, stride)


def rand_tiler_entry(rng: random.Random, shape: Any, depth: int = 0) -> Any:
    n = prod(shape)
    r = rng.random()
    if r < 0.15:
        return None
    if r < 0.4:
        return rng.choice(divisors(n)) if rng.random() < 0.85 else rng.choice([2, 3, 4, 8])
    if r < 0.5 and isinstance(shape, tuple) and depth < 2:
        return [rand_tiler_entry(rng, s, depth + 1) for s in shape[: rng.choice(range(1, len(shape) + 1))]]
    return fitted_layout(rng, n) if rng.random() < 0.85 else rand_layout(rng, 32)


def rand_tiler(rng: random.Random, layout: str) -> Any:
    """A Layout, an int or a tuple tiler for ``layout``."""
    shape, _ = split_layout(layout)
    r = rng.random()
    if r < 0.3:
        return fitted_layout(rng, prod(shape)) if rng.random() < 0.85 else rand_layout(rng, 64)
    if r < 0.45:
        return rng.choice(divisors(prod(shape))) if rng.random() < 0.85 else rng.choice([3, 4, 8])
    modes = shape if isinstance(shape, tuple) else (shape,)
    k = rng.choice(range(1, len(modes) + 1))
    extra = [rng.choice([None, 2])] if rng.random() < 0.04 else []  # more modes than the layout: refused
    return [rand_tiler_entry(rng, s) for s in modes[:k]] + extra


def rand_profile(rng: random.Random, shape: Any) -> str:
    modes = shape if isinstance(shape, tuple) else (shape,)
    k = rng.choice(range(1, len(modes) + 1))

    def p(s: Any) -> Any:
        if isinstance(s, tuple) and rng.random() < 0.4:
            return tuple(p(x) for x in s[: rng.choice(range(1, len(s) + 1))])
        return 1

    extra = (1,) if rng.random() < 0.04 else ()  # a profile longer than the layout: refused
    return tstr(tuple(p(s) for s in modes[:k]) + extra)


def gen_case(rng: random.Random, op: str) -> dict:
    """One random case of ``op`` (see ``OPS``)."""
    L = rand_layout(rng)
    shape, _ = split_layout(L)
    if op == "composition":
        r = rng.random()
        b = rand_tiler(rng, L) if r < 0.45 else fitted_layout(rng, prod(shape)) if r < 0.9 else rand_layout(rng, 64)
        return {"op": op, "args": [L, b]}
    if op == "complement":
        L = rand_layout(rng, 64, kind=rng.choice(["perm", "gap", "gap", "zero", "arb", "compact"]))
        fs, fd = split_layout(L)
        cos = 1 + sum((s - 1) * abs(d) for s, d in zip(flat(fs), flat(fd), strict=True))
        r = rng.random()
        if r < 0.35:
            return {"op": op, "args": [L]}
        if r < 0.75:
            return {"op": op, "args": [L, rng.choice([cos, cos * 2, cos * 4, rng.choice(ARB[1:]), 2 * prod(fs)])]}
        if r < 0.8:  # a Layout cotarget: CuTe uses its shape
            return {"op": op, "args": [L, rand_layout(rng, 128)]}
        tgt = group(rng, factorize(rng, rng.choice([cos, 2 * cos, prod(fs) * 4, 64])))
        return {"op": op, "args": [L, tstr(tgt if isinstance(tgt, tuple) else (tgt,))]}
    if op in ("coalesce", "filter"):
        r = rng.random()
        return {"op": op, "args": [L] if r < 0.45 else [L, "1"] if r < 0.5 else [L, rand_profile(rng, shape)]}
    if op in ("right_inverse", "left_inverse"):
        return {"op": op, "args": [rand_layout(rng, kind=rng.choice(["perm", "perm", "gap", "zero", "arb"]))]}
    if op in ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide"):
        return {"op": op, "args": [L, rand_tiler(rng, L)]}
    if op in ("logical_product", "zipped_product", "tiled_product", "blocked_product", "raked_product"):
        blk = rand_layout(rng, 64, kind=rng.choice(["compact", "perm", "gap", "zero", "arb"]))
        if op in ("blocked_product", "raked_product") or rng.random() < 0.5:
            return {"op": op, "args": [blk, rand_layout(rng, 16, kind=rng.choice(["compact", "perm", "zero", "arb"]))]}
        bshape, _ = split_layout(blk)
        modes = bshape if isinstance(bshape, tuple) else (bshape,)
        if rng.random() < 0.3:
            return {"op": op, "args": [blk, rng.choice([1, 2, 3, 4])]}
        k = rng.choice(range(1, len(modes) + 1))
        ents = [rng.choice([None, 2, 3, 4, rand_layout(rng, 8, max_rank=2, max_depth=1)]) for _ in range(k)]
        for i in range(k):
            if isinstance(modes[i], tuple) and rng.random() < 0.25:
                ents[i] = [rng.choice([None, 2, 3, rand_layout(rng, 4, max_rank=1)]) for _ in modes[i]]
        return {"op": op, "args": [blk, ents]}
    if op == "tile_to_shape":
        blk = rand_layout(rng, 32, kind=rng.choice(["compact", "perm", "gap", "zero", "arb"]))
        bshape, _ = split_layout(blk)
        bmodes = list(bshape) if isinstance(bshape, tuple) else [bshape]
        r = max(len(bmodes), rng.choice([1, 2, 3]))
        if rng.random() < 0.1:
            r = max(1, len(bmodes) - 1)
        bm = [prod(m) for m in bmodes] + [1] * (r - len(bmodes))
        tgt = []
        for m in bm[:r]:
            t = m * rng.choice([1, 2, 3, 4]) if rng.random() < 0.9 else rng.choice([4, 6, 8])
            tgt.append(group(rng, factorize(rng, t)) if rng.random() < 0.2 else t)
        args = [blk, tstr(tuple(tgt)) if r > 1 or rng.random() < 0.7 else tstr(prod(tgt[0]))]
        if rng.random() < 0.5:
            order = list(range(1, r + 1))
            rng.shuffle(order)
            args.append(tstr(tuple(order)))
        return {"op": op, "args": args}
    if op == "max_common_vector":
        if rng.random() < 0.7:
            return {"op": op, "args": [L, lay(shape, rand_stride(rng, shape))]}
        other = group(rng, factorize(rng, prod(shape) * rng.choice([1, 1, 1, 2]) // rng.choice([1, 1, 1, 2, 4]) or 1))
        return {"op": op, "args": [L, lay(other, rand_stride(rng, other))]}
    raise ValueError(f"unknown op {op}")


OPS = ["composition", "complement", "coalesce", "filter", "right_inverse", "left_inverse", "logical_divide",
       "zipped_divide", "tiled_divide", "flat_divide", "logical_product", "zipped_product", "tiled_product",
       "blocked_product", "raked_product", "tile_to_shape", "max_common_vector"]
WEIGHTS = {"composition": 4, "complement": 3, "logical_divide": 2, "logical_product": 2}


def gen_cases(seed: int, n: int, ops: list[str] | None = None, big: float = 0.12, neg: float = 0.05,
              deep: float = 0.0) -> list[dict]:
    """``n`` distinct random cases, reproducible from ``seed``; a fraction ``big`` uses real sizes (up to 8192 per
    mode), a fraction ``neg`` allows negative strides in arbitrary strides, a fraction ``deep`` nests modes up to
    depth 4."""
    rng = random.Random(seed)
    ops = ops or OPS
    pool = [op for op in ops for _ in range(WEIGHTS.get(op, 1))]

    def draw() -> dict:
        r = rng.random()
        SCALE.update(leaves=BIG_LEAVES if r < big else LEAVES, mul=1 << 16 if r < big else 1,
                     neg=0.3 if big <= r < big + neg else 0.0, start=0 if rng.random() < deep else 2)
        try:
            return gen_case(rng, rng.choice(pool))
        finally:
            SCALE.update(leaves=LEAVES, mul=1, neg=0.0, start=2)

    return distinct(n, draw)


def distinct(n: int, draw: Any) -> list[dict]:
    """``n`` cases from ``draw()``, each one not drawn before (``key``) and inside CuTe's 32-bit static ints
    (``fits_int32``): every generator's collecting loop."""
    out, seen = [], set()
    while len(out) < n:
        case = draw()
        k = key(case)
        if k not in seen and fits_int32(case):
            seen.add(k)
            out.append(case)
    return out
