"""Random cases at real GEMM sizes for the C++ oracle: matrices up to 8192 x 8192 (column- or row-major, sometimes
batched), CTA tilers, thread / value layouts and smem atoms, through the ops a kernel uses on them (the divides,
composition with a tiler, the products and tile_to_shape of an atom, complement inside a tile).
"""

from __future__ import annotations

import random

import cute_cases as cc

DIMS = [64, 128, 256, 512, 1024, 2048, 4096, 8192]
TILES = [8, 16, 32, 64, 128, 256]
OPS = ["logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "composition", "logical_product",
       "blocked_product", "raked_product", "tile_to_shape", "complement", "coalesce", "right_inverse",
       "max_common_vector"]


def matrix(rng: random.Random) -> tuple[str, tuple[int, ...]]:
    m, n = rng.choice(DIMS), rng.choice(DIMS)
    if rng.random() < 0.15:
        b = rng.choice([2, 3, 4])
        return (cc.lay((m, n, b), (1, m, m * n)) if rng.random() < 0.5 else cc.lay((m, n, b), (n, 1, m * n))), (m, n, b)
    return (cc.lay((m, n), (1, m)) if rng.random() < 0.5 else cc.lay((m, n), (n, 1))), (m, n)


def tile_entry(rng: random.Random, extent: int):
    t = rng.choice([x for x in TILES if x <= extent] or [extent])
    k = rng.random()
    if k < 0.5:
        return t
    if k < 0.7:
        return cc.lay(t, 1)
    if k < 0.85 and t >= 4:  # a strided / interleaved tile
        return cc.lay((t // 2, 2), (1, extent // 2)) if extent // 2 >= t // 2 else t
    return None if k < 0.93 else cc.lay((2, t // 2 or 1), (t // 2 or 1, 1))


def thread_value(rng: random.Random) -> str:
    tm, tn = rng.choice([(32, 4), (16, 8), (8, 16), (4, 32), (32, 8)])
    vm, vn = rng.choice([(1, 1), (1, 4), (4, 1), (2, 2), (1, 8)])
    thr = cc.lay((tm, tn), (tn, 1) if rng.random() < 0.5 else (1, tm))
    return thr if rng.random() < 0.5 else cc.lay(((tm, vm), (tn, vn)), ((vm * vn * tn, 1), (vm * vn, vm)))


def gen_case(rng: random.Random, op: str) -> dict:
    mat, dims = matrix(rng)
    if op.endswith("_divide") or op == "composition":
        tiler = [tile_entry(rng, d) for d in dims[: rng.choice([1, 2, 2, len(dims)])]]
        if op == "composition" and rng.random() < 0.3:
            return {"op": op, "args": [mat, thread_value(rng)]}
        return {"op": op, "args": [mat, tiler if rng.random() < 0.8 else cc.lay(rng.choice(TILES), 1)]}
    atom_r, atom_c = rng.choice([(8, 64), (8, 32), (16, 64), (8, 128), (4, 64)])
    atom = cc.lay((atom_r, atom_c), (atom_c, 1)) if rng.random() < 0.6 else cc.lay((atom_r, atom_c), (1, atom_r))
    if op in ("logical_product", "blocked_product", "raked_product"):
        block = rng.choice([atom, thread_value(rng)])
        return {"op": op, "args": [block, cc.rand_layout(rng, 32, kind=rng.choice(["compact", "perm"]), max_rank=2)]}
    if op == "tile_to_shape":
        tgt = (atom_r * rng.choice([1, 2, 4, 8, 16]), atom_c * rng.choice([1, 2, 4]))
        if rng.random() < 0.2:
            tgt = tgt + (rng.choice([2, 3, 4]),)
        args = [atom, cc.tstr(tgt)]
        if rng.random() < 0.4:
            args.append(cc.tstr((2, 1) if len(tgt) == 2 else (2, 1, 3)))
        return {"op": op, "args": args}
    if op == "complement":
        tv = thread_value(rng)
        return {"op": op, "args": [tv, rng.choice([1024, 4096, 8192, 16384])]}
    if op == "max_common_vector":
        row = [1] * len(dims)
        for i in range(len(dims) - 2, -1, -1):
            row[i] = row[i + 1] * dims[i + 1]
        return {"op": op, "args": [mat, cc.lay(dims, tuple(row))]}
    return {"op": op, "args": [thread_value(rng) if rng.random() < 0.5 else mat]}


def gen_cases(seed: int, n: int) -> list[dict]:
    rng = random.Random(seed)
    return cc.distinct(n, lambda: gen_case(rng, rng.choice(OPS)))
