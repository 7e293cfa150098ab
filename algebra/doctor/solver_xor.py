"""General F2-linear fixes: ``f(x) = x ^ A(x_hi)``, the bits of an offset above one 128-byte line XORed into the
bank bits above the widest vector, for when no ``Sw<B,M,S>`` reaches the ideal.

The target bits (bank bits that keep every vector whole) and the source bits (those above the 128-byte line) do not
overlap, so f is its own inverse and a bijection on the tile's 2^n offsets; a Swizzle is the special case where A is
a shifted identity block. A is built greedily: for each source bit that varies among the accessed offsets, the
column (a mask of target bits) with the fewest total wavefronts given the columns chosen so far; two sweeps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from algebra.core.arith import f2_apply
from algebra.doctor.solver_access import Access, Candidate, Tile
from algebra.hw.bankfix import bank_bits, varying_bits


def xor_bits(tile: Tile, accesses: list[Access]) -> tuple[list[int], list[int]]:
    """(target bits, source bits) of the search; empty lists when there is no room (vectors as wide as a line)."""
    n = tile.nbits or 0
    vec = max((a.vector for a in accesses if not a.constraint), default=1)
    lo, hi = bank_bits(tile.element_bytes)
    t_lo, t_hi = max(vec.bit_length() - 1, lo), min(n, hi)
    if t_lo >= t_hi or t_hi >= n:
        return [], []
    varying = varying_bits(*([tile.offset(r, c) for r, c in a.lanes] for a in accesses))  # a constraint: no lanes
    sources = [j for j in range(t_hi, n) if (varying >> j) & 1]
    return list(range(t_lo, t_hi)), sources


def f2_columns_of(n: int, cols: dict[int, int], skip: int = -1) -> list[int]:
    """The map ``x ^ A(x_hi)`` on n offset bits as F2 columns (``arith.f2_apply``): bit j goes to itself XOR
    ``cols[j]`` (the column of ``skip`` left out)."""
    return [(1 << j) ^ (cols.get(j, 0) if j != skip else 0) for j in range(n)]


def make_place(tile: Tile, cols: dict[int, int]) -> Callable[[int, int], int]:
    """The placement ``(r, c) -> f(tile offset)`` for the F2 map with ``cols[source bit] = target mask``."""
    f = f2_columns_of(max(tile.max_offset.bit_length(), max(cols, default=-1) + 1), cols)
    off = tile.offset
    return lambda r, c: f2_apply(f, off(r, c))


def xor_search(tile: Tile, accesses: list[Access], memo: dict, evaluate: Callable[..., bool]) -> tuple[Any, int]:
    """(the best F2 candidate found or None, the number of maps evaluated).

    Trying column m for source bit j changes each lane's offset by m exactly when the lane's offset has bit j, so
    the offsets are precomputed without bit j's column and each trial is one XOR per lane (targets lie above the
    widest vector, so vectors stay whole and only the lanes' first offsets matter)."""
    targets, sources = xor_bits(tile, accesses)
    if not targets or not sources:
        return None, 0
    eb, n = tile.element_bytes, max(tile.max_offset.bit_length(), sources[-1] + 1)
    lo = targets[0]
    masks = [m << lo for m in range(1 << len(targets))]
    ideal = sum(a.ideal(eb) for a in accesses)
    lsu = [(k, a) for k, a in enumerate(accesses) if not a.constraint]
    naive = [[tile.offset(r, c) for r, c in a.lanes] for _, a in lsu]
    cols = {j: 0 for j in sources}
    tried = 0

    def mapped(offs: list[int], skip: int) -> list[int]:
        f = f2_columns_of(n, cols, skip)
        return [f2_apply(f, o) for o in offs]

    def cost(k: int, offs: list[int]) -> int:
        key = (lsu[k][0], tuple(offs))
        p = memo.get(key)
        if p is None:
            p = memo[key] = lsu[k][1].cost(offs, eb)
        return sum(p)

    best: Any = None
    for _sweep in range(2):
        for j in sources:
            rest = [mapped(offs, j) for offs in naive]
            has = [[(o >> j) & 1 for o in offs] for offs in naive]
            keep, keep_key = cols[j], None
            for m in masks:
                tried += 1
                total = sum(cost(k, [x ^ m if h else x for x, h in zip(rest[k], has[k], strict=True)])
                            for k in range(len(lsu)))
                key = (total, bin(m).count("1"))
                if keep_key is None or key < keep_key:
                    keep, keep_key = m, key
            cols[j] = keep
        best = Candidate("xor", make_place(tile, cols), xor={j: m for j, m in cols.items() if m})
        evaluate(tile, accesses, best, memo)
        best.footprint_bytes = tile.footprint_bytes
        if best.total <= ideal:
            break
    return (best if best.xor else None), tried
