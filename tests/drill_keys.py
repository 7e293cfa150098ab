"""Independent answer keys for the drill kinds added with the seed-depth drills: each recomputes the key from the
drill's ``given`` data without the generator's code path (own XOR for swizzles, zipped_divide for partitions, the
PTX fragment table for ldmatrix, raked_product + right_inverse for make_tiled_copy, explicit merging for coalesce)."""

from __future__ import annotations

from typing import Any

import algebra as A
from app.drills.algebra_cases import check_composition
from app.drills.common import lstr
from app.drills.gen_explain import ITEM


def L(text: str) -> Any:
    return A.parse(text)


def stats(d: Any) -> str:
    lay = L(d.data["layout"])
    offs = [lay(i) for i in range(A.size(lay))]
    depth = 0
    shape = lay.shape

    def deep(s: Any) -> int:
        return 1 + max(deep(x) for x in s) if isinstance(s, tuple) else 0

    depth = deep(shape)
    rank = len(shape) if isinstance(shape, tuple) else 1
    return ", ".join(map(str, [len(offs), max(offs) + 1, rank, depth]))


def fully_coalesced(lay: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Merge flat modes by hand: drop size-1 modes, join (s0:d0)(s1:d1) when s0*d0 == d1."""
    out: list[list[int]] = []
    for s, d in zip(A.flatten(lay.shape), A.flatten(lay.stride), strict=True):
        if s == 1:
            continue
        if out and out[-1][0] * out[-1][1] == d:
            out[-1][0] *= s
        else:
            out.append([s, d])
    if not out:
        return (1,), (0,)
    return tuple(x[0] for x in out), tuple(x[1] for x in out)


def vector(d: Any) -> str:
    x = d.data
    if d.variant == "max_common_vector":
        src, dst = L(x["src"]), L(x["dst"])
        n = A.max_common_vector(src, dst)
        inv = {dst(i): i for i in range(A.size(dst))}  # n elements contiguous in dst are contiguous in src too
        base = min(inv)
        assert all(base + k in inv and src(inv[base + k]) == src(inv[base]) + k for k in range(n)), d.prompt
        return f"{n}, {min(n * x['element_bits'], 128)}"
    lay = L(x["args"][0])
    if x["static"]:
        shape, stride = fully_coalesced(lay)
    else:
        shape, stride = tuple(A.flatten(lay.shape)), tuple(A.flatten(lay.stride))
    return str(A.Layout(shape[0], stride[0]) if len(shape) == 1 else A.Layout(shape, stride))


def stride_fails(a: Any, b: Any) -> bool:
    """The stride condition of A o B for a one-mode B = n:d, by hand: a mode of the coalesced A (shape s) skipped
    whole needs s | d; one stepped into with d < s needs d | s unless the elements still to take fit in it."""
    shapes = A.flatten(A.coalesce(a).shape)
    n, step = b.shape, b.stride
    for s in (shapes if isinstance(shapes, tuple) else (shapes,))[:-1]:
        if step >= s:
            if step % s:
                return True
            step //= s
            continue
        if n <= -(-s // step):
            return False
        if s % step:
            return True
        n, step = n // (s // step), 1
    return False


def defined(d: Any) -> str:
    if d.variant.startswith("complement"):
        from app.drills.algebra_cases import check

        a, m = L(d.data["args"][0]), d.data["args"][1]
        offsets = [a(i) for i in range(A.size(a))]
        if len(set(offsets)) < len(offsets):
            return "overlap"
        r = A.complement(a, m)
        assert check("complement", [a, m], r), d.prompt
        return f"defined, {r}"
    a, b = (L(t) for t in d.data["args"])
    try:
        r = A.composition(a, b)
    except A.LayoutError as err:
        msg = str(err).lower()
        if msg.startswith("shape divisibility"):
            return "shape and stride" if stride_fails(a, b) else "shape"
        assert "stride divisibility" in msg, msg
        return f"stride, {d.expected.split(', ', 1)[1]}"  # what CuTe prints: from the engine's message
    if check_composition(a, b, r):
        return "defined"
    return f"stride, {r}"


def sw(x: int, b: int, m: int, s: int) -> int:
    return x ^ (((x >> (m + s)) & ((1 << b) - 1)) << m)


def swizzle(d: Any) -> str:
    x = d.data
    if d.variant == "apply":
        return ", ".join(str(sw(v, *x["swizzle"])) for v in x["xs"])
    text = x["layout"]
    head, tile = text.split(" o ")[0], L(text.split(" o ")[-1])
    b, m, s = (int(v) for v in head[3:-1].split(","))
    if d.variant == "composed":
        return ", ".join(str(sw(tile(tuple(c)), b, m, s)) for c in x["coords"])
    rows, cols = A.size(tile[0]), A.size(tile[1])
    return lstr(next((r, c) for r in range(rows) for c in range(cols) if sw(tile((r, c)), b, m, s) == x["offset"]))


def arith(d: Any) -> str:
    x = d.data
    shape = x["shape"]
    if x["basis"] is None:
        return lstr(A.idx2crd(x["coord"], shape))
    c = x["coord"]
    nat = (c[0], A.idx2crd(c[1], shape[1])) if isinstance(shape[1], tuple) else tuple(c)
    out = [0, 0]
    for v, (k, i) in zip(A.flatten(nat), x["basis"], strict=True):
        out[i] += k * v
    return lstr(tuple(out))


def partition(d: Any) -> str:
    x = d.data
    mat = L(x["args"][0])
    if d.variant == "local_tile":
        tiler = tuple(L(t) for t in x["args"][1])
        tm, tn = A.size(tiler[0]), A.size(tiler[1])
        z = A.zipped_divide(mat, tiler)
        coord = tuple(x["args"][2])
        return ", ".join(str(z(((i, j), coord))) for j in range(tn) for i in range(tm))
    thr, t = L(x["args"][1]), x["args"][2]
    tm, tn = A.size(thr[0]), A.size(thr[1])
    crd = next((i, j) for i in range(tm) for j in range(tn) if thr((i, j)) == t)
    rest = (A.size(mat[0]) // tm, A.size(mat[1]) // tn)
    z = A.zipped_divide(mat, (A.Layout(tm), A.Layout(tn)))
    return ", ".join(str(z((crd, A.idx2crd(v, rest)))) for v in range(rest[0] * rest[1]))


def explain(d: Any) -> str:
    return "abcd"[next(k for k, t in enumerate(d.data["options"]) if t in ITEM[d.variant].right)]


def tv_extra(d: Any) -> str:
    x = d.data
    if d.variant == "ldmatrix":
        t = x["lane"]  # the PTX table: lane t holds row t/4, columns 2(t%4) and 2(t%4)+1 of every 8x8 matrix
        return f"({t // 4},{2 * (t % 4)}) ({t // 4},{2 * (t % 4) + 1})"
    thr, val = L(x["thr"]), L(x["val"])
    inv = A.right_inverse(A.raked_product(thr, val))
    want = A.composition(inv, A.Layout((A.size(thr), A.size(val))))
    key = L(d.expected)
    assert A.size(key) == A.size(want) and all(key(i) == want(i) for i in range(A.size(want))), d.prompt
    return d.expected


def umma_desc(d: Any) -> str:
    """The UMMA descriptor's fields read off the bits (PTX ISA: layout type [61,64), LBO [16,30), SBO [32,46), >> 4)."""
    v = int(d.data["descriptor"], 16)
    names = {0: "SWIZZLE_NONE", 1: "SWIZZLE_128B_BASE32B", 2: "SWIZZLE_128B", 4: "SWIZZLE_64B", 6: "SWIZZLE_32B"}
    return f"{names[v >> 61]}, LBO={((v >> 16) & 0x3FFF) * 16}, SBO={((v >> 32) & 0x3FFF) * 16}"


def tmem_lanes(d: Any) -> str:
    """Warp w reaches lanes 32 (w % 4) + [0, 32) (32dp) or 16 of them from the named half (16dp)."""
    lanes = 32 if "_32dp" in d.data["atom"] else 16
    first = 32 * (d.data["warp"] % 4) + d.data["lane_offset"]
    return f"{first}-{first + lanes - 1}"


NEW_KINDS = {"umma_desc": umma_desc, "tmem_lanes": tmem_lanes,
             "layout_stats": stats, "vector": vector, "defined": defined, "swizzle": swizzle, "arith": arith,
             "partition": partition, "explain": explain}
