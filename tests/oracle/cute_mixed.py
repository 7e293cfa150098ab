"""Plain layouts as CUTLASS kernels build them, for the C++ oracle (``cute_cpp.py --mixed``): the distributions the
other generators do not draw.

- MMA and copy atoms' thread/value layouts (SM70-SM90, the LDSM / cp.async bit layouts), thread and value layouts,
  smem atoms and matrices, and their products, divides and compositions (``make_tiled_copy``'s ``raked_product``,
  right inverse and ``with_shape``, a tile composed with a TV layout, a matrix divided by a CTA tile);
- the same layouts with size-1 modes inserted at every depth (any stride on them), 1-tuples around modes, and zero
  strides on nested modes;
- ``make_layout`` (col-major, row-major through ``LayoutRight``, concatenation), ``make_ordered_layout`` with nested
  and tied orders;
- by-mode composition with tuple tilers mixing ``_``, ints, layouts and nested tuples; complements with tuple and
  nested cotargets; coalesce with profiles (deeper than the shape now and then);
- ``upcast`` / ``downcast`` by every factor up to 16 and the powers of two past it, ``recast_layout`` of the atoms'
  bit layouts; ``local_tile`` with a projection (CuTe's ``Step<_1,X,_1>``), ``local_partition`` of nested threads;
  ``max_common_vector`` / ``max_common_layout`` of such pairs;
- chains through CuTe itself (two rounds of the oracle): the inverses, complements, coalesces, recasts, divides and
  compositions of what CuTe printed for a product, a divide or a composition, and composition chains of three,
  ``(A o B) o C`` and ``A o (B o C)``, each of whose inner compositions is CuTe's own answer.

    python tests/oracle/cute_cpp.py --mixed --seed 9010 --n 300 --out /tmp/mixed_9010.json
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import cute_cases as cc
import cute_edge

MMA_TV = ["((4,2),4):((8,4),1)", "(8,4):(1,8)", "(8,8):(1,8)", "((2,2,2),(2,2,2)):((1,16,4),(8,2,32))",
          "((4,8),(2,2,2)):((32,1),(16,8,128))", "((4,8),(2,2)):((16,1),(8,64))", "((4,8),(2,2)):((32,1),(16,8))",
          "((4,8),(4,2,2)):((64,1),(16,8,256))", "((4,8),(4,2)):((32,1),(8,128))", "((4,8),2):((16,1),8)",
          "((4,8),1):((8,1),0)", "((4,8),2):((8,1),32)", "((4,8,4),(2,2,2)):((128,1,16),(64,8,512))",
          "(128,(64,16)):(0,(1,64))", "((4,8,4),(2,2,4)):((128,1,16),(64,8,512))",
          "((4,8,4),(2,2,1)):((128,1,16),(64,8,512))", "(128,(16,16)):(0,(1,16))", "(4,2):(1,16)", "32:1"]
COPY_TV = ["((8,4),128):((128,0),1)", "((4,8),(16,2)):((256,16),(1,128))", "((16,2),128):((128,0),1)",
           "((4,8),(16,2,2)):((256,16),(1,128,1024))", "(32,128):(128,1)", "((4,8),(16,2,4)):((256,16),(1,128,1024))",
           "(32,32):(32,1)", "(32,(32,2)):(32,(1,1024))", "(32,(32,4)):(32,(1,1024))", "(1,128):(0,1)",
           "(1,32):(0,1)", "(1,64):(0,1)", "(1,16):(0,1)"]
SMEM = ["(8,64):(64,1)", "(8,32):(32,1)", "(64,8):(1,64)", "(16,64):(64,1)", "(8,(8,8)):(8,(1,64))",
        "((8,8),(8,8)):((8,64),(1,512))", "(4,64):(64,1)", "(8,128):(128,1)", "((8,2),(8,4)):((8,64),(1,128))"]
THREADS = ["(32,4):(4,1)", "(16,8):(8,1)", "(8,16):(1,8)", "(32,8):(8,1)", "(4,32):(1,4)", "(8,4):(4,1)",
           "((4,8),(2,2)):((1,4),(32,64))", "(16,16):(16,1)", "(2,16):(16,1)", "(128,1):(1,0)", "(1,32):(0,1)"]
VALUES = ["(1,8):(0,1)", "(8,1):(1,0)", "(4,1):(1,0)", "(1,4):(0,1)", "(2,2):(1,2)", "(1,1):(0,0)", "(2,4):(4,1)",
          "(4,2):(1,4)", "(1,2):(0,1)"]
DIMS = [8, 16, 32, 48, 64, 96, 128, 256]
FACTORS = list(range(1, 17)) + [24, 32, 48, 64, 128, 256]
BITS = [1, 2, 4, 8, 16, 32, 64, 128]


def matrix(rng: random.Random) -> str:
    m, n = rng.choice(DIMS), rng.choice(DIMS)
    k = rng.random()
    if k < 0.4:
        return cc.lay((m, n), (1, m))
    if k < 0.8:
        return cc.lay((m, n), (n, 1))
    b = rng.choice([2, 3, 4])
    return cc.lay((m, n, b), (1, m, m * n) if rng.random() < 0.5 else (n, 1, m * n))


def real(rng: random.Random) -> str:
    """A layout a kernel meets: an atom's TV layout, a thread or value layout, an smem atom, a matrix."""
    pool = rng.choice([MMA_TV, MMA_TV, COPY_TV, SMEM, THREADS, VALUES, None])
    return matrix(rng) if pool is None else rng.choice(pool)


def onesy(rng: random.Random, text: str, p: float = 0.35) -> str:
    """``text`` with size-1 modes inserted at random depths (stride 0, 1, a big or negative one), 1-tuples around
    modes, and now and then the stride of a nested mode set to 0."""
    shape, stride = cc.split_layout(text)

    def one() -> tuple[Any, Any]:
        s: Any = 1
        d: Any = rng.choice([0, 0, 1, 7, -3, 64, 1024])
        for _ in range(rng.choice([0, 0, 1, 2])):
            s, d = (s,), (d,)
        return s, d

    def go(s: Any, d: Any, depth: int) -> tuple[Any, Any]:
        if isinstance(s, tuple):
            pairs = [go(x, y, depth + 1) for x, y in zip(s, d, strict=True)]
            if rng.random() < p:
                pairs.insert(rng.randrange(len(pairs) + 1), one())
            if rng.random() < 0.15:  # a nested mode broadcast: every stride under it 0
                k = rng.randrange(len(pairs))
                pairs[k] = (pairs[k][0], cc.unflat([0] * len(cc.flat(pairs[k][0])), pairs[k][0]))
            s, d = tuple(x for x, _ in pairs), tuple(y for _, y in pairs)
        elif rng.random() < p / 2:
            o = one()
            s, d = ((s, o[0]), (d, o[1])) if rng.random() < 0.5 else ((o[0], s), (o[1], d))
        if rng.random() < p / 3 and depth > 0:
            s, d = (s,), (d,)
        return s, d

    s, d = go(shape, stride, 0)
    return cc.lay(s, d)


def layout(rng: random.Random) -> str:
    L = real(rng)
    k = rng.random()
    return L if k < 0.55 else onesy(rng, L) if k < 0.85 else onesy(rng, onesy(rng, L, 0.6), 0.6)


def modes_of(text: str) -> tuple:
    shape, _ = cc.split_layout(text)
    return shape if isinstance(shape, tuple) else (shape,)


def entry(rng: random.Random, mode: Any, depth: int = 0) -> Any:
    """A tiler entry for ``mode``: ``_``, a divisor, a fitted / TV / strided layout, a nested tuple."""
    n = cc.prod(mode)
    r = rng.random()
    if r < 0.15:
        return None
    if r < 0.35:
        return rng.choice(cc.divisors(n))
    if r < 0.55 and isinstance(mode, tuple) and depth < 3:
        return [entry(rng, m, depth + 1) for m in mode[: rng.choice(range(1, len(mode) + 1))]]
    if r < 0.7:
        d = rng.choice(cc.divisors(n))
        k = rng.choice([x for x in cc.divisors(n // d)])
        return cc.lay((d,), (k,)) if rng.random() < 0.3 else cc.lay(d, k)
    if r < 0.8:
        fit = [t for t in MMA_TV + THREADS + VALUES if cc.prod(cc.split_layout(t)[0]) <= n and _cos(t) <= n]
        if fit:
            return rng.choice(fit)
    return cc.fitted_layout(rng, n) if rng.random() < 0.8 else onesy(rng, cc.fitted_layout(rng, n))


def tuple_tiler(rng: random.Random, text: str) -> list:
    modes = modes_of(text)
    out = [entry(rng, m) for m in modes[: rng.choice(range(1, len(modes) + 1))]]
    return out if any(x is not None for x in out) or rng.random() < 0.3 else out + [1]


def _cos(text: str) -> int:
    s, d = cc.split_layout(text)
    return 1 + sum((x - 1) * abs(y) for x, y in zip(cc.flat(s), cc.flat(d), strict=True))


def cotarget(rng: random.Random, text: str) -> Any:
    cos = _cos(text)
    r = rng.random()
    if r < 0.25:
        return rng.choice([cos, 2 * cos, cc.prod(cc.split_layout(text)[0]) * 4, 1024, 4096, cos + 1])
    if r < 0.8:
        t = rng.choice([cos, 2 * cos, 4 * cos, 8 * cos])
        tgt = cc.group(rng, cc.factorize(rng, t))
        tgt = tgt if isinstance(tgt, tuple) else (tgt,)
        if rng.random() < 0.2:
            tgt = (tgt[0], tgt[1:]) if len(tgt) > 2 else (tgt,)
        if rng.random() < 0.1:
            tgt = tgt + (1,)
        return cc.tstr(tgt)
    return rng.choice([matrix(rng), real(rng)])


def profile(rng: random.Random, text: str) -> str:
    shape, _ = cc.split_layout(text)
    if rng.random() < 0.15:  # deeper than the shape, or a 1-tuple around one
        return rng.choice(["((1))", "(1,(1,1))", "((1,1),1)", "(1,1,1,1)", "(1)"])
    return cute_edge.nested_profile(rng, shape)


def order(rng: random.Random, shape: Any, depth: int = 0) -> Any:
    if isinstance(shape, tuple) and (depth == 0 or rng.random() < 0.6):
        return tuple(order(rng, m, depth + 1) for m in shape)
    return rng.choice([0, 1, 2, 3, 4, 5, 7])


def rand_shape(rng: random.Random) -> Any:
    s = cc.split_layout(layout(rng))[0]
    return s if rng.random() < 0.7 else cc.group(rng, cc.factorize(rng, rng.choice([12, 16, 24, 32, 64, 96, 128])))


# ------------------------------------------------------------------------------------------- one case


def single(rng: random.Random, op: str, pool: list[str]) -> dict:
    """A case of ``op`` on a real / size-1-heavy layout, or on one CuTe printed in an earlier round (``pool``)."""
    L = rng.choice(pool) if pool and rng.random() < 0.6 else layout(rng)
    if op == "composition":
        k = rng.random()
        if k < 0.45:
            return {"op": op, "args": [L, tuple_tiler(rng, L)]}
        if k < 0.7:  # a tile composed with a TV layout, or a TV layout with a thread tile
            tv = rng.choice(MMA_TV + COPY_TV + THREADS)
            n = _cos(tv)
            m = rng.choice(cc.divisors(n))
            tile = cc.lay((m, n // m), (n // m, 1) if rng.random() < 0.5 else (1, m))
            return {"op": op, "args": [tile if rng.random() < 0.8 else onesy(rng, tile), tv]}
        return {"op": op, "args": [L, entry(rng, cc.split_layout(L)[0]) or cc.fitted_layout(rng, _size(L))]}
    if op == "complement":
        return {"op": op, "args": [L, cotarget(rng, L)] if rng.random() < 0.85 else [L]}
    if op in ("coalesce", "filter"):
        return {"op": op, "args": [L, profile(rng, L)] if rng.random() < 0.7 else [L]}
    if op in ("right_inverse", "left_inverse", "nullspace", "filter_zeros"):
        return {"op": op, "args": [L]}
    if op.endswith("_divide"):
        A = matrix(rng) if rng.random() < 0.3 else L
        return {"op": op, "args": [A, tuple_tiler(rng, A) if rng.random() < 0.7 else entry(rng, _size(A)) or 1]}
    if op.endswith("_product"):
        blk = rng.choice([real(rng), layout(rng), L])
        if op in ("blocked_product", "raked_product", "flat_product") or rng.random() < 0.6:
            other = rng.choice(THREADS + VALUES + [layout(rng)]) if rng.random() < 0.7 else rng.choice(pool or [L])
            return {"op": op, "args": [blk, other]}
        modes = modes_of(blk)
        return {"op": op, "args": [blk, [rng.choice([None, 2, 3, 4, rng.choice(VALUES + THREADS)])
                                         for _ in modes[: rng.choice(range(1, len(modes) + 1))]]]}
    if op == "tile_to_shape":
        blk = rng.choice(SMEM + VALUES + [L])
        bm = [cc.prod(m) for m in modes_of(blk)]
        tgt = [m * rng.choice([1, 2, 4, 8]) for m in bm] + [rng.choice([2, 3, 4]) for _ in range(rng.choice([0, 0, 1]))]
        tgt = [cc.group(rng, cc.factorize(rng, t)) if rng.random() < 0.2 else t for t in tgt]
        args = [blk, cc.tstr(tuple(tgt))]
        if rng.random() < 0.6:
            args.append(cc.tstr(tuple(order(rng, tuple(tgt), 1) if rng.random() < 0.3 else rng.choice([0, 1, 2, 3])
                                      for _ in tgt)))
        return {"op": op, "args": args}
    if op == "make_layout":
        k = rng.random()
        if k < 0.5:
            return {"op": op, "args": [cc.tstr(rand_shape(rng))]}
        return {"op": op, "args": [layout(rng) for _ in range(rng.choice([1, 2, 2, 3]))]}
    if op == "make_layout_row_major":
        return {"op": op, "args": [cc.tstr(rand_shape(rng))]}
    if op == "make_ordered_layout":
        s = rand_shape(rng)
        return {"op": op, "args": [cc.tstr(s), cc.tstr(order(rng, s if isinstance(s, tuple) else (s,)) if
                                                       isinstance(s, tuple) else rng.choice([0, 1]))]}
    if op in ("upcast", "downcast"):
        base = rng.choice(COPY_TV + [L, L]) if op == "upcast" else L
        f = rng.choice(FACTORS)
        if op == "downcast" and _cos(base) * f >= 1 << 28:
            f = 2
        return {"op": op, "args": [base, f]}
    if op == "recast_layout":
        return {"op": op, "args": [rng.choice(COPY_TV + [L]), rng.choice(BITS), rng.choice(BITS)]}
    if op in ("max_common_vector", "max_common_layout"):
        k = rng.random()
        shape, _ = cc.split_layout(L)
        if k < 0.4:
            other = cc.lay(shape, cc.rand_stride(rng, shape, rng.choice(["compact", "perm", "zero"])))
        elif k < 0.7:
            other = rng.choice(pool or [L]) if rng.random() < 0.5 else onesy(rng, L)
        else:
            other = layout(rng)
        return {"op": op, "args": [L, other] if rng.random() < 0.7 else [other, L]}
    if op == "local_tile":
        return proj_tile(rng, L)
    if op == "local_partition":
        return thread_case(rng, L)
    if op in ("evaluate", "idx2crd", "crd2idx"):
        return coord_case(rng, op, L)
    if op == "tile_unzip":
        return cute_edge.unzip_case(rng)
    raise ValueError(op)


def thread_case(rng: random.Random, L: str) -> dict:
    """``local_partition(L, T, i)``: T compact, permuted, gapped, with a negative or a zero stride; i a thread of T,
    or an index that is no thread's (past the end, negative)."""
    modes = modes_of(L)
    thr = tuple(cc.group(rng, cc.factorize(rng, rng.choice(cc.divisors(cc.prod(m))))) for m in modes)
    kind = rng.choice(["compact", "perm", "perm", "gap", "gap", "neg", "zero"])
    fd = cc.flat(cc.rand_stride(rng, thr, {"neg": "perm", "zero": "zero"}.get(kind, kind)))
    if kind == "neg":
        fd = [-d if rng.random() < 0.4 else d for d in fd]
    tl = cc.lay(thr, cc.unflat(fd, thr))
    n = cc.prod(thr)
    offs = sorted({cc.offset_at(thr, cc.unflat(fd, thr), i) for i in range(n)})
    k = rng.random()
    idx = rng.choice(offs) if k < 0.6 else rng.randrange(n) if k < 0.8 else rng.choice([n, n + 3, 2 * n - 1, -1, -n])
    return {"op": "local_partition", "args": [L, onesy(rng, tl, 0.2) if rng.random() < 0.25 else tl, idx]}


def coord_case(rng: random.Random, op: str, L: str) -> dict:
    """A coordinate op with negative entries, entries past their mode, 1-D indices past the end or below 0, and
    coordinates coarser than the shape (an int for a nested mode)."""
    shape, _ = cc.split_layout(L)

    def crd(s: Any, top: bool = True) -> Any:
        if isinstance(s, tuple) and (top or rng.random() < 0.6):
            return tuple(crd(x, False) for x in s)
        n = cc.prod(s)
        return rng.choice([rng.randrange(n), rng.randrange(n), -rng.randrange(1, n + 2), n + rng.randrange(3)])

    n = cc.prod(shape)
    c: Any = rng.choice([-1, -n + 1, rng.randrange(-2 * n, 0), rng.randrange(n, 3 * n)]) if rng.random() < 0.35 else \
        cc.tstr(crd(shape))
    if op == "evaluate":
        return {"op": op, "args": [L, c]}
    return {"op": op, "args": [c, cc.tstr(shape)]}


def _size(text: str) -> int:
    return cc.prod(cc.split_layout(text)[0])


def proj_tile(rng: random.Random, L: str) -> dict:
    """``local_tile(L, tiler, coord, proj)``: a tiler and a coordinate with one mode more than ``L`` uses (or as
    many), the projection dicing them (CuTe's ``Step<_1,X,_1>``)."""
    modes = list(modes_of(L))
    tiles = [rng.choice(cc.divisors(cc.prod(m))) if rng.random() < 0.85 else None for m in modes]
    reps = [cc.prod(m) // (t or cc.prod(m)) for m, t in zip(modes, tiles, strict=True)]
    crd = [(rng.randrange(r) if rng.random() < 0.9 else rng.choice([-1, r, r + 2])) if rng.random() < 0.7 else None
           for r in reps]
    if rng.random() < 0.2 or not any(isinstance(t, int) for t in tiles):
        return {"op": "local_tile", "args": [L, tiles, cc.tstr(tuple(crd))]}
    k = rng.randrange(len(modes) + 1)  # the extra mode the projection drops
    extra_t, extra_c = rng.choice([2, 4, 8, 16]), rng.choice([0, 1, 3, None])
    tiler = tiles[:k] + [extra_t] + tiles[k:]
    coord = crd[:k] + [extra_c] + crd[k:]
    proj = [1] * len(tiles[:k]) + [None] + [1] * len(tiles[k:])
    if rng.random() < 0.1:  # a projection that keeps every mode, or a 1-D coordinate
        proj = [1] * len(tiler)
    c: Any = cc.tstr(tuple(coord))
    if rng.random() < 0.08:
        c = rng.randrange(4)
    return {"op": "local_tile", "args": [L, tiler, c, proj]}


OPS = ["composition", "composition", "composition", "complement", "complement", "coalesce", "filter",
       "right_inverse", "right_inverse", "left_inverse", "left_inverse", "nullspace", "filter_zeros",
       "logical_divide", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "logical_product",
       "zipped_product", "tiled_product", "flat_product", "blocked_product", "raked_product", "tile_to_shape",
       "make_layout", "make_layout_row_major", "make_ordered_layout", "upcast", "upcast", "downcast", "downcast",
       "recast_layout", "max_common_vector", "max_common_layout", "local_tile", "local_tile", "local_partition",
       "local_partition", "evaluate", "idx2crd", "crd2idx"]
SOURCE_OPS = ["logical_product", "blocked_product", "raked_product", "zipped_product", "logical_divide",
              "zipped_divide", "tiled_divide", "composition", "tile_to_shape", "make_ordered_layout", "right_inverse",
              "complement"]
AFTER_OPS = ["right_inverse", "right_inverse", "left_inverse", "left_inverse", "complement", "coalesce", "filter",
             "upcast", "downcast", "composition", "logical_divide", "zipped_divide", "max_common_vector",
             "max_common_layout", "logical_product", "local_tile", "local_partition", "filter_zeros", "nullspace"]


def source_case(rng: random.Random) -> dict:
    """A case whose printed layout feeds a later round: a product / divide / composition of real layouts."""
    k = rng.random()
    if k < 0.25:  # make_tiled_copy: raked_product(thr, val), then its right inverse and with_shape
        return {"op": "raked_product", "args": [rng.choice(THREADS), rng.choice(VALUES)]}
    if k < 0.35:  # make_tiled_mma / a CTA tile
        return {"op": "tile_to_shape", "args": [rng.choice(SMEM), cc.tstr((rng.choice([64, 128]), 64))]}
    return single(rng, rng.choice(SOURCE_OPS), [])


def triple(rng: random.Random) -> tuple[str, str, str]:
    """A, B, C with B reading inside size(A) and C inside size(B) (mostly): a composition chain."""
    A = layout(rng) if rng.random() < 0.5 else real(rng)
    B = cc.fitted_layout(rng, _size(A)) if rng.random() < 0.6 else rng.choice(
        [t for t in MMA_TV + THREADS + VALUES if _cos(t) <= _size(A)] or [cc.lay(_size(A), 1)])
    C = cc.fitted_layout(rng, _size(B))
    if rng.random() < 0.3:
        B = onesy(rng, B)
    if rng.random() < 0.3:
        C = onesy(rng, C)
    return A, B, C


def printed(rec: dict) -> str | None:
    """CuTe's answer as an input for the next round: a plain layout with a positive shape, else None."""
    t = rec["cute"]
    if ":" not in t or " o " in t or "@" in t:
        return None
    s, d = cc.split_layout(t)
    fs = cc.flat(s)
    if min(fs) <= 0 or not all(isinstance(x, int) for x in cc.flat(d)) or cc.prod(s) > 1 << 16:
        return None
    return t


def gen_cases(seed: int, n: int) -> list[dict]:
    """``n`` single-round cases (no chains through CuTe)."""
    rng = random.Random(seed)
    return cc.distinct(n, lambda: single(rng, rng.choice(OPS), []))


def gen_records(seed: int, n: int, oracle: Callable[[list[dict]], list[dict]]) -> list[dict]:
    """``n`` records with CuTe's answers, in three rounds of ``oracle``: sources and single cases, then what CuTe
    printed through the inverses / complements / compositions / recasts and the chains' second compositions, then
    ``with_shape`` of the right inverses (``make_tiled_copy``) and single cases on everything printed."""
    rng = random.Random(seed)
    n1 = n2 = max(1, n * 3 // 10)
    triples: list[tuple[str, str, str]] = []

    def first() -> dict:
        if rng.random() < 0.3:
            A, B, C = triple(rng)
            triples.append((A, B, C))
            return {"op": "composition", "args": [B, C], "chain": (A, B, C)}
        return source_case(rng)

    r1_cases = cc.distinct(n1, first)
    chains = [c.pop("chain") for c in r1_cases if "chain" in c]
    out = oracle(r1_cases)
    pool = [p for p in (printed(r) for r in out) if p]
    bc = {json.dumps(r["args"]): printed(r) for r in out if r["op"] == "composition"}
    tiled = [(p, r["args"]) for r in out if r["op"] == "raked_product" and (p := printed(r))]

    chain_cases = []
    for A, B, C in chains:
        got = bc.get(json.dumps([B, C]))
        chain_cases += [{"op": "composition", "args": [A, B]}] + ([{"op": "composition", "args": [A, got]}] if got
                                                                   else [])
    chain_cases += [{"op": "right_inverse", "args": [p]} for p, _ in tiled]
    keys = {cc.key(r) for r in out}
    r2 = [c for c in chain_cases if cc.key(c) not in keys and cc.fits_int32(c)]
    r2 = list({cc.key(c): c for c in r2}.values())
    r2 += [c for c in cc.distinct(n2, lambda: single(rng, rng.choice(AFTER_OPS), pool))
           if cc.key(c) not in keys and cc.key(c) not in {cc.key(x) for x in r2}]
    out2 = oracle(r2)
    pool += [p for p in (printed(r) for r in out2) if p]
    keys |= {cc.key(r) for r in out2}

    ab = {json.dumps(r["args"]): printed(r) for r in out2 if r["op"] == "composition"}
    r3 = [{"op": "composition", "args": [got, C]} for A, B, C in chains if (got := ab.get(json.dumps([A, B])))]
    thr_val = {p: args for p, args in tiled}
    for r in out2:  # with_shape(size(thr), size(val)) of the right inverse of raked_product(thr, val)
        if r["op"] == "right_inverse" and r["args"][0] in thr_val and (p := printed(r)):
            t, v = (_size(x) for x in thr_val[r["args"][0]])
            r3.append({"op": "composition", "args": [p, cc.lay((t, v), (1, t))]})
    r3 = list({cc.key(c): c for c in r3 if cc.key(c) not in keys and cc.fits_int32(c)}.values())
    keys |= {cc.key(c) for c in r3}
    fill = cc.distinct(max(0, n - len(out) - len(out2) - len(r3)), lambda: single(rng, rng.choice(OPS), pool))
    return out + out2 + oracle(r3 + [c for c in fill if cc.key(c) not in keys])
