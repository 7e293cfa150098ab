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

from algebra.solver_access import Access, Tile


def xor_bits(tile: Tile, accesses: list[Access]) -> tuple[list[int], list[int]]:
    """(target bits, source bits) of the search; empty lists when there is no room (vectors as wide as a line)."""
    eb, n = tile.element_bytes, tile.nbits or 0
    vec = max((a.vector for a in accesses if not a.constraint), default=1)
    t_lo = vec.bit_length() - 1
    t_hi = min(n, (128 // eb).bit_length() - 1)
    if t_lo >= t_hi or t_hi >= n:
        return [], []
    varying = 0
    for a in accesses:
        if a.constraint:
            continue
        offs = [tile.offset(r, c) for r, c in a.lanes]
        for o in offs:
            varying |= o ^ offs[0]
    sources = [j for j in range(t_hi, n) if (varying >> j) & 1]
    return list(range(t_lo, t_hi)), sources


def make_place(tile: Tile, cols: dict[int, int]) -> Callable[[int, int], int]:
    """The placement ``(r, c) -> f(tile offset)`` for the F2 map with ``cols[source bit] = target mask``."""
    items = [(1 << j, m) for j, m in sorted(cols.items()) if m]
    off = tile.offset

    def place(r: int, c: int) -> int:
        o = off(r, c)
        x = o
        for bit, m in items:
            if o & bit:
                x ^= m
        return x
    return place


def xor_search(tile: Tile, accesses: list[Access], memo: dict, evaluate: Callable[..., bool]) -> tuple[Any, int]:
    """(the best F2 candidate found or None, the number of maps evaluated)."""
    from algebra.solver import Candidate

    targets, sources = xor_bits(tile, accesses)
    if not targets or not sources:
        return None, 0
    lo = targets[0]
    masks = [m << lo for m in range(1 << len(targets))]
    ideal = sum(a.ideal(tile.element_bytes) for a in accesses)
    cols = {j: 0 for j in sources}
    tried = 0
    best: Any = None
    for _sweep in range(2):
        for j in sources:
            keep, keep_key = cols[j], None
            for m in masks:
                cols[j] = m
                cand = Candidate("xor", make_place(tile, cols), xor=dict(cols))
                tried += 1
                if not evaluate(tile, accesses, cand, memo):
                    continue
                key = (cand.total, bin(m).count("1"))
                if keep_key is None or key < keep_key:
                    keep, keep_key = m, key
            cols[j] = keep
        best = Candidate("xor", make_place(tile, cols), xor={j: m for j, m in cols.items() if m})
        evaluate(tile, accesses, best, memo)
        best.footprint_bytes = tile.footprint_bytes
        if best.total <= ideal:
            break
    return (best if best.xor else None), tried
