"""The layout doctor's search: which swizzle, padding or XOR map makes a tile's shared-memory accesses cheapest.

``solve(element_bytes, tile, accesses)`` tries, on the tile's element offsets:

* every ``Sw<B,M,S>`` that fits the tile (maps its offsets onto themselves) -- on a power-of-two footprint of
  2^n elements every B >= 1, M, S >= B with M + S + B <= n, which is every distinct swizzle function there;
* every padding of the leading stride of a flat rank-2 tile by p = 1 .. 128 / element_bytes elements (bank
  behaviour repeats with period 128 bytes, so larger paddings only cost more bytes);
* when no swizzle reaches the ideal, a general F2-linear map ``x ^ A(x_hi)`` that XORs the bits above a 128-byte
  line into the bank bits above the widest vector, built greedily bit by bit (``solver_xor``), kept only when it
  beats every swizzle.

A candidate that breaks a vector access (its elements are no longer contiguous and aligned) is rejected. Ranking:
constraints met (tma / wgmma accesses), total wavefronts, vectors kept tile-wide, CuTe layouts before XOR maps,
extra bytes, then hardware modes and fewer XOR bits first.
Post-condition: each candidate's ``wavefronts`` are ``algebra.hw.banks.analyze`` of its addresses (the reference
model); ``candidates[0]`` costs no more than any swizzle or padding tried.
"""

from __future__ import annotations

from typing import Any

from algebra.doctor.solver_access import (
    Access,
    Candidate,
    Place,
    SolveError,
    Tile,
    lane_offsets,
    make_tile,
    parse_accesses,
)
from algebra.hw.bankfix import compact_tail, swizzle_fn

__all__ = ["Candidate", "SolveError", "solve", "swizzle_space", "padding_space", "evaluate"]
MAX_CANDIDATES = 12


def _swizzle_place(tile: Tile, b: int, m: int, s: int) -> Place:
    f, off = swizzle_fn(b, m, s), tile.offset
    return lambda r, c: f(off(r, c))


def _swizzle_moved(tile: Tile, b: int, m: int, s: int) -> list[int] | None:
    """Where ``Sw<b,m,s>`` sends the offsets it may move out of the tile (on a compact tile its ``compact_tail``,
    otherwise every offset, at most 16384); None when they are too many to check."""
    if tile.compact:
        xs: Any = compact_tail(len(tile.table), b, m)
    elif len(tile.table) <= 16384:
        xs = tile.table
    else:
        return None
    ymask = ((1 << b) - 1) << (m + s)
    return [x ^ ((x & ymask) >> s) for x in xs]  # swizzle_fn written out: this loop runs for every candidate


def swizzle_fits(tile: Tile, b: int, m: int, s: int) -> bool:
    """True when ``Sw<b,m,s>`` maps the tile's set of offsets onto itself."""
    moved = _swizzle_moved(tile, b, m, s)
    if moved is None:
        return False
    if tile.compact:
        return all(x < len(tile.table) for x in moved)
    offs = set(tile.table)
    return all(x in offs for x in moved)


def swizzle_space(tile: Tile) -> list[tuple[int, int, int]]:
    """Every distinct Sw<B,M,S> (B >= 1, S >= B) whose source bits lie inside the tile's offset bits. Swizzles whose
    source bits reach past the largest offset act as a smaller B and are not repeated. (On a power-of-two footprint
    every one fits; elsewhere ``swizzle_footprint`` says how many bytes one that does not fit needs.)"""
    n = tile.max_offset.bit_length()
    return [(b, m, s) for m in range(n) for s in range(1, n - m) for b in range(1, min(s, n - m - s) + 1)]


def swizzle_footprint(tile: Tile, b: int, m: int, s: int) -> int | None:
    """Bytes the swizzled tile spans: the tile's own footprint when the swizzle fits, more when it moves offsets past
    the end (a larger buffer, counted like padding); None when that cannot be bounded cheaply (a large tile whose
    offsets are not a contiguous range)."""
    moved = _swizzle_moved(tile, b, m, s)
    if moved is None:
        return None
    return (max(moved + [tile.max_offset] if tile.compact else moved) + 1) * tile.element_bytes


def padding_space(tile: Tile) -> list[int]:
    """Paddings (elements added to the leading stride) worth trying: 1 .. 128 / element_bytes; none when the tile is
    not a flat rank-2 row- or column-major layout."""
    return [] if tile.lead is None else list(range(1, 128 // tile.element_bytes + 1))


def _padding_place(tile: Tile, p: int) -> Place:
    ld = tile.layout.stride[tile.lead] + p
    return (lambda r, c: r * ld + c) if tile.lead == 0 else (lambda r, c: r + c * ld)


def evaluate(tile: Tile, accesses: list[Access], cand: Candidate, memo: dict | None = None) -> bool:
    """Fill ``cand.phases``; False when the placement breaks a vector access. ``memo`` (one per search, shared
    with ``solver_xor``) holds each access's phases by its lanes' offsets."""
    memo = {} if memo is None else memo
    phases: list[list[int] | None] = []
    for k, acc in enumerate(accesses):
        if acc.constraint:
            phases.append(None)
            continue
        offs = _fast_offsets(tile, k, acc, cand, memo) if cand.fn else lane_offsets(acc, cand.place, cand.safe_vector)
        if offs is None:
            return False
        key = (k, tuple(offs))
        p = memo.get(key)
        if p is None:
            p = memo[key] = acc.cost(offs, tile.element_bytes)
        phases.append(p)
    cand.phases = phases
    return True


def _fast_offsets(tile: Tile, k: int, acc: Access, cand: Candidate, memo: dict) -> list[int] | None:
    """``lane_offsets`` for a placement ``fn(tile offset)``: the lanes' offsets in the tile as given are computed once
    (they are contiguous and aligned: the naive candidate is checked first), then only ``fn`` runs."""
    base = memo.get(("lanes", k))
    if base is None:
        base = memo[("lanes", k)] = [tile.offset(r, c) for r, c in acc.lanes]
    f, v = cand.fn, acc.vector
    if v <= cand.safe_vector:
        return [f(o) for o in base]
    out = []
    for o in base:
        x = f(o)
        if x % v or any(f(o + j) != x + j for j in range(1, v)):
            return None
        out.append(x)
    return out


def _footprint(tile: Tile, cand: Candidate) -> int:
    """Bytes a padded tile spans."""
    last = max(cand.place(r, c) for r in (0, tile.rows - 1) for c in (0, tile.cols - 1))
    return (last + 1) * tile.element_bytes


def search(tile: Tile, accesses: list[Access]) -> tuple[Candidate, list[Candidate], dict[str, int]]:
    """(naive, every surviving candidate unsorted -- the tile as given among them, so the best is never worse than
    leaving it alone --, counts of what was tried and rejected)."""
    memo: dict = {}
    naive = Candidate("naive", tile.offset, footprint_bytes=tile.footprint_bytes)
    if not evaluate(tile, accesses, naive, memo):
        raise SolveError("accesses: a vector access is not contiguous in the tile as given (its elements must be "
                         "consecutive, aligned offsets); check vector and the tile's contiguous mode")
    swizzles = [Candidate("swizzle", _swizzle_place(tile, b, m, s), swizzle=(b, m, s), footprint_bytes=foot,
                          fn=swizzle_fn(b, m, s))
                for b, m, s in swizzle_space(tile) if (foot := swizzle_footprint(tile, b, m, s)) is not None]
    paddings = [Candidate("padding", _padding_place(tile, p), pad=p) for p in padding_space(tile)]
    counts = {"swizzles": len(swizzles), "paddings": len(paddings), "xor": 0, "rejected_vector": 0}
    out = [naive]
    for c in swizzles + paddings:
        if not evaluate(tile, accesses, c, memo):
            counts["rejected_vector"] += 1
            continue
        if c.kind == "padding":
            c.footprint_bytes = _footprint(tile, c)
        out.append(c)
    ideal = sum(a.ideal(tile.element_bytes) for a in accesses)
    best_swizzle = min((c.total for c in out if c.kind == "swizzle"), default=naive.total)
    if tile.nbits is not None and best_swizzle > ideal:
        from algebra.doctor.solver_xor import xor_search

        found = xor_search(tile, accesses, memo, evaluate)
        counts["xor"] = found[1]
        if found[0] is not None and found[0].total < best_swizzle:
            out.append(found[0])
    return naive, out, counts


def vector_kept(tile: Tile, accesses: list[Access], c: Candidate) -> bool:
    """True when the candidate keeps every vector of the accesses' width whole anywhere in the tile, not only at the
    lanes given: a swizzle needs M >= log2(widest vector), a padding a leading stride that is a multiple of it."""
    vec = max((a.vector for a in accesses if not a.constraint), default=1)
    if c.kind == "swizzle":
        return (1 << c.swizzle[1]) >= vec
    if c.kind == "padding":
        return (tile.layout.stride[tile.lead] + c.pad) % vec == 0
    return c.kind != "xor" or c.safe_vector >= vec


def rank_key(c: Candidate, hw: dict) -> tuple:
    """Constraints met, total wavefronts, vectors kept tile-wide, a CuTe layout before a general XOR map (which no
    CuTe type, TMA mode or GMMA atom expresses), extra bytes, hardware mode, fewer XOR bits, then (B, S, M) /
    padding."""
    return (not hw["constraints_met"], c.total, not hw["vector_kept"], c.kind == "xor", c.footprint_bytes,
            hw["tma"] is None and hw["wgmma"] is None,
            {"naive": 0, "swizzle": 1, "xor": 2, "padding": 3}[c.kind], c.xor_bits, c.swizzle or (0, 0, 0), c.pad)


def fold_paddings(cands: list[Candidate], hws: dict) -> tuple[list[Candidate], dict[int, list[Candidate]]]:
    """Distinct outcomes: of the paddings with one result (wavefronts per access, vectors kept, constraints met),
    only the first in ``cands`` (ranked: the fewest extra bytes, so the smallest padding) stays; the others are
    folded under it. Post-condition: the kept list is ``cands`` in order minus the folded paddings; ``folded[id(c)]``
    lists what each kept candidate stands for (empty for all but paddings)."""
    kept: list[Candidate] = []
    folded: dict[int, list[Candidate]] = {}
    first: dict[tuple, Candidate] = {}
    for c in cands:
        if c.kind == "padding":
            hw = hws[id(c)]
            key = (tuple(c.wavefronts), hw["vector_kept"], hw["constraints_met"])
            if key in first:
                folded[id(first[key])].append(c)
                continue
            first[key] = c
        kept.append(c)
        folded[id(c)] = []
    return kept, folded


def folded_note(tile: Tile, c: Candidate, same: list[Candidate]) -> dict[str, Any] | None:
    """``{"count", "pads", "text"}`` for the paddings folded under ``c`` (same wavefronts, more bytes), or None."""
    if not same:
        return None
    pads = sorted(x.pad for x in same)
    shown = ", ".join(map(str, pads[:6])) + (", ..." if len(pads) > 6 else "")
    return {"count": len(pads), "pads": pads,
            "text": f"{len(pads)} larger padding{'s' if len(pads) > 1 else ''} ({shown} elements) give the same "
                    f"wavefronts with more bytes; +{c.pad} is the smallest"}


def solve(element_bytes: Any, tile: Any, accesses: Any, limit: int = MAX_CANDIDATES) -> dict[str, Any]:
    """The doctor's answer (CONTRACT §5): ``{"candidates": [...best first], "naive": {...}, "ideal", "searched"}``.

    Raises SolveError (a LayoutError, 422) naming the field on bad input."""
    from algebra.doctor.solver_explain import describe, hardware

    t = make_tile(tile, element_bytes)
    accs = parse_accesses(accesses, t)
    naive, cands, counts = search(t, accs)
    hws = {id(c): dict(hardware(t, accs, c), vector_kept=vector_kept(t, accs, c)) for c in cands}
    cands.sort(key=lambda c: rank_key(c, hws[id(c)]))
    kept, folded = fold_paddings(cands, hws)
    top = kept[:limit]
    wide = [(a, a.access_bytes(t.element_bytes)) for a in accs if a.kind == "lds" and len(a.lanes) < 32]
    notes = [f"{a.name}: {len(a.lanes)} lanes of {ab}-byte accesses. The bank model (CONTRACT 3) splits the active "
             "lanes into phases; measured on an H200 (bench/results/solve_smem_*), the hardware still takes one pass "
             f"per {'quarter' if ab == 16 else 'half'} warp, so Nsight Compute counts at least {32 * ab // 128} "
             "wavefronts" for a, ab in wide if ab >= 8]
    return {"tile": t.text, "element_bytes": t.element_bytes, "accesses": [a.name for a in accs], "notes": notes,
            "ideal": sum(a.ideal(t.element_bytes) for a in accs),
            "ideal_per_access": [a.ideal(t.element_bytes) for a in accs],
            "naive": describe(t, accs, naive, dict(hardware(t, accs, naive), vector_kept=True), naive),
            "candidates": [dict(describe(t, accs, c, hws[id(c)], naive), folded=folded_note(t, c, folded[id(c)]))
                           for c in top],
            "searched": counts}
