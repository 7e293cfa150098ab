"""The layout doctor for a Triton store or load: the shared encoding that makes it cheapest, written back as a
Triton attribute and as CuTe.

Candidates, all of the tensor's shape: every ``swizzled_shared<{vec, perPhase, maxPhase, order}>`` with vec up to
32 bytes, perPhase up to 8 rows, maxPhase up to 16 (both orders of a rank-2 tensor; candidates whose bases
coincide are priced once); ``nvmma_shared`` at each swizzle width, plain and transposed, where the shape admits it
(these are the layouts TMA writes and wgmma reads); ``padded_shared<[row:+p]>`` for p up to 16 bytes (a wider
pad costs more bytes and moves a row by more banks than any vector needs). Each is priced
by ``triton_conflicts.plan`` -- the instructions the compiler would issue for it (the vector width changes with the
layout) under the bank model -- for the same warp.

Ranking: total wavefronts, then bytes of padding, then the layout as given, then the original's order, then
nvmma_shared (TMA / wgmma ready; the widest swizzle first) before swizzled_shared before padded_shared, then fewer
phases, wider vectors. Post: the answer costs no more than
the layout as given (it is among the candidates when it is one of these encodings).
"""

from __future__ import annotations

from math import prod
from typing import Any

from algebra.core.errors import LayoutError
from algebra.doctor.triton_conflicts import plan
from algebra.doctor.triton_layouts import TritonLayout, convert, cute_of
from algebra.doctor.triton_shared import padded
from algebra.doctor.ttgir import Attr, format_attr

_KIND_RANK = {"nvmma_shared": 0, "swizzled_shared": 1, "padded_shared": 2}


def _pow2s(top: int) -> list[int]:
    return [1 << i for i in range(max(top, 0).bit_length())]


def candidates(shape: list[int], element_bits: int) -> list[Attr]:
    """Every shared encoding the doctor tries for a tensor of ``shape`` (see the module docstring)."""
    rank = len(shape)
    eb = max(1, element_bits // 8)
    orders = [[1, 0], [0, 1]] if rank == 2 else [list(range(rank - 1, -1, -1))]
    # nvmma_shared first, so that a swizzled_shared with the same bases is priced under its nvmma name
    out = [Attr("nvmma_shared", {"swizzlingByteWidth": width, "transposed": transposed,
                                 "elementBitWidth": element_bits})
           for width in (128, 64, 32, 0) for transposed in (False, True)] if rank == 2 else []
    for order in orders:
        ncols = shape[order[0]]
        nrows = shape[order[1]] if rank > 1 else 1
        out.append(Attr("swizzled_shared", {"vec": 1, "perPhase": 1, "maxPhase": 1, "order": order}))
        for vec in _pow2s(min(ncols, max(1, 32 // eb))):
            for max_phase in _pow2s(min(16, ncols // vec))[1:]:
                for per_phase in _pow2s(min(8, nrows)):
                    out.append(Attr("swizzled_shared", {"vec": vec, "perPhase": per_phase, "maxPhase": max_phase,
                                                        "order": order}))
        for pad in _pow2s(max(1, 16 // eb)):
            out.append(Attr("padded_shared", {"paddings": [[ncols, pad]], "order": order, "shape": list(shape)}))
    return out


def _key(t: TritonLayout) -> tuple:
    b = t.ll.bases
    return tuple(map(tuple, b["offset"])), tuple(map(tuple, t.paddings))


def _pad_bytes(t: TritonLayout, element_bits: int) -> int:
    n = prod(t.shape)
    return (padded(n - 1, t.paddings) + 1 - n) * max(1, element_bits // 8)


def fix(dist: TritonLayout, shared: TritonLayout, element_bits: int, op: str = "store", warp: int = 0,
        limit: int = 5) -> dict[str, Any]:
    """``{"ttgir", "cute", "kind", "wavefronts", "ideal", "instruction", "pad_bytes", "tma", "wgmma",
    "alternatives": [...]}``: the best candidate and the next ``limit - 1`` distinct ones."""
    order = shared.attr.fields.get("order")
    seen: dict[tuple, TritonLayout] = {_key(shared): shared}  # the first layout of each key, in order
    for a in candidates(dist.shape, element_bits):
        try:
            t = convert(a, dist.shape, element_bits)
        except LayoutError:
            continue  # this shape does not admit it (an nvmma swizzle wider than a row, ...)
        seen.setdefault(_key(t), t)
    pool = list(seen.values())
    priced = []
    for t in pool:
        p = plan(dist, t, element_bits, op, warp, fast=True)
        rank = (p["wavefronts"], _pad_bytes(t, element_bits), t is not shared,
                t.attr.fields.get("order", order) != order, _KIND_RANK.get(t.kind, 3),
                -t.attr.fields.get("swizzlingByteWidth", 0), p["ideal"], -(p["vector"] or 8))
        priced.append((rank, t, p))
    priced.sort(key=lambda x: x[0])
    out = [_describe(t, p, element_bits) for _, t, p in priced[:limit]]
    best = dict(out[0])
    best["alternatives"] = out[1:]
    best["searched"] = len(pool)
    return best


def _describe(t: TritonLayout, p: dict[str, Any], element_bits: int) -> dict[str, Any]:
    c = cute_of(t)
    return {"ttgir": format_attr(t.attr), "cute": c["cute"], "cute_why": c["why"], "kind": t.kind,
            "wavefronts": p["wavefronts"], "ideal": p["ideal"], "instruction": p["kind"],
            "pad_bytes": _pad_bytes(t, element_bits), "tma": t.kind == "nvmma_shared",
            "wgmma": t.kind == "nvmma_shared" and t.attr.fields.get("swizzlingByteWidth", 0) > 0}
