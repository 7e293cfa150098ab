"""The layout doctor's search: which swizzle, padding or XOR map makes a tile's shared-memory accesses cheapest.

``solve(element_bytes, tile, accesses)`` tries, on the tile's element offsets:

* every ``Sw<B,M,S>`` that fits the tile (maps its offsets onto themselves) -- on a power-of-two footprint of
  2^n elements every B >= 1, M, S >= B with M + S + B <= n, which is every distinct swizzle function there --
  that can change a bank (``swizzle_space``; the others cost what the tile as given costs);
* every padding of the leading stride of a flat rank-2 tile by p = 1 .. 128 / element_bytes elements (bank
  behaviour repeats with period 128 bytes, so larger paddings only cost more bytes);
* when no swizzle reaches the ideal, a general F2-linear map ``x ^ A(x_hi)`` that XORs the bits above a 128-byte
  line into the bank bits above the widest vector, built greedily bit by bit (``xor_search``), kept only when it
  beats every swizzle.

A candidate that breaks a vector access (its elements are no longer contiguous and aligned) is rejected; the rest
are ranked by ``rank_key``. Post-condition: each candidate's ``wavefronts`` are ``algebra.hw.banks.analyze`` of its
addresses (the reference model); ``candidates[0]`` costs no more than any swizzle or padding tried.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from algebra.core.arith import f2_apply
from algebra.core.swizzle import MAX_B, MAX_S
from algebra.doctor.linear_layout import swizzles
from algebra.doctor.solver_access import (
    Access,
    Candidate,
    SolveError,
    Tile,
    lane_offsets,
    make_tile,
    parse_accesses,
    priced,
)
from algebra.doctor.solver_explain import describe, hardware, wgmma_refusal
from algebra.hw.bankfix import bank_bits, compact_tail, swizzle_fn, varying_bits

__all__ = ["Candidate", "SolveError", "solve", "swizzle_space", "padding_space", "evaluate"]
MAX_CANDIDATES = 12


def swizzle_space(tile: Tile) -> list[tuple[int, int, int]]:
    """Every distinct Sw<B,M,S> (B >= 1, S >= B) whose source bits lie inside the tile's offset bits (one whose source
    bits reach past the largest offset acts as a smaller B) and that can change what an access costs: some source bit
    is set in some offset of the tile (else it is the identity there) and some target bit is a bank bit
    (``bankfix.bank_bits``), within the cap of ``core.swizzle.Swizzle``. Any other swizzle keeps every word's bank
    and which lanes share a word, so it costs exactly what the tile as given costs (the naive candidate), and it is no
    TMA / GMMA mode (their target bits are bank bits). The work is then bounded by the bank bits, not by the size of
    the largest offset."""
    lo, hi = bank_bits(tile.element_bytes)
    live = tile.live_bits
    return [(b, m, s) for b, m, s in swizzles(tile.max_offset.bit_length())
            if m < hi and m + b > lo and (live >> (m + s)) & ((1 << b) - 1) and b <= MAX_B and s <= MAX_S]


def swizzle_footprint(tile: Tile, b: int, m: int, s: int) -> int:
    """Bytes the swizzled tile spans: the tile's own footprint when the swizzle fits, more when it moves offsets past
    the end (a larger buffer, counted like padding). Only the offsets it may move past the largest are moved: on a
    compact tile its ``compact_tail``; otherwise the offsets from the largest down, until one plus the target mask
    (the most a swizzle can add to it) cannot beat the largest moved so far."""
    ymask = ((1 << b) - 1) << (m + s)
    if tile.compact:
        moved = [x ^ ((x & ymask) >> s) for x in compact_tail(len(tile.table), b, m)]  # swizzle_fn written out
        return (max(moved + [tile.max_offset]) + 1) * tile.element_bytes
    tmask, top = ((1 << b) - 1) << m, -1
    for x in tile.descending:
        if x + tmask <= top:
            break
        top = max(top, x ^ ((x & ymask) >> s))
    return (top + 1) * tile.element_bytes


def swizzle_fits(tile: Tile, b: int, m: int, s: int) -> bool:
    """True when ``Sw<b,m,s>`` maps every offset of the tile to an offset of the tile (onto itself for S >= B, where
    it is one-to-one); on a compact tile, when it moves none past the end."""
    if not tile.compact:
        return set(map(swizzle_fn(b, m, s), tile.table)) <= set(tile.table)
    return swizzle_footprint(tile, b, m, s) == tile.footprint_bytes


def padding_space(tile: Tile) -> list[int]:
    """Paddings of the leading stride worth trying (the module docstring); none unless the tile is flat rank-2."""
    return [] if tile.lead is None else list(range(1, 128 // tile.element_bytes + 1))


def candidate(tile: Tile, kind: str, arg: Any = None) -> Candidate:
    """The candidate of one fix, its ``fn`` on the tile's offsets and its footprint: ``naive`` (no arg), ``swizzle``
    (arg (B, M, S)), ``padding`` (arg p elements: a flat rank-2 tile's
    ``r * ld + c`` or ``r + c * ld`` is ``o + (o // ld) * p`` of its offset o) or ``xor`` (arg {source bit: target
    mask}, a bijection on the tile's 2^n offsets, ``f2_columns_of``)."""
    fn, foot, eb = None, tile.footprint_bytes, tile.element_bytes
    if kind == "swizzle":
        fn, foot = swizzle_fn(*arg), swizzle_footprint(tile, *arg)
    elif kind == "padding":
        ld = tile.layout.stride[tile.lead]
        fn = lambda o: o + o // ld * arg  # noqa: E731
        foot = (fn(tile.max_offset) + 1) * eb
    elif kind == "xor":
        fn = partial(f2_apply, f2_columns_of(max(tile.max_offset.bit_length(), max(arg, default=-1) + 1), arg))
    return Candidate(kind, fn, swizzle=arg if kind == "swizzle" else None, pad=arg if kind == "padding" else 0,
                     xor=arg if kind == "xor" else None, footprint_bytes=foot)


def evaluate(tile: Tile, accesses: list[Access], cand: Candidate, memo: dict | None = None) -> bool:
    """Fill ``cand.offsets`` and ``cand.phases``; False when the placement breaks a vector access. ``memo`` (one per
    search, shared with ``xor_search``) holds each access's phases by its lanes' offsets."""
    memo = {} if memo is None else memo
    offsets: list[list[int] | None] = []
    f, safe = cand.fn, cand.safe_vector
    for k, acc in enumerate(accesses):
        offs = None
        if not acc.constraint:
            offs = lane_offsets(acc, tile.offset) if f is None else _fast_offsets(tile, k, acc, f, safe, memo)
            if offs is None:
                return False
        offsets.append(offs)
    cand.offsets = offsets
    cand.phases = [None if o is None else priced(memo, k, a, o, tile.element_bytes)
                   for k, (a, o) in enumerate(zip(accesses, offsets, strict=True))]
    return True


def _fast_offsets(tile: Tile, k: int, acc: Access, f: Any, safe: int, memo: dict) -> list[int] | None:
    """``lane_offsets`` for a placement ``f(tile offset)``: the lanes' offsets in the tile as given are computed once
    (they are contiguous and aligned: the naive candidate is checked first), then only ``f`` runs."""
    base = memo.get(("lanes", k))
    if base is None:
        base = memo[("lanes", k)] = [tile.offset(r, c) for r, c in acc.lanes]
    v = acc.vector
    if v <= safe:
        return [f(o) for o in base]
    out = []
    for o in base:
        x = f(o)
        if x % v or any(f(o + j) != x + j for j in range(1, v)):
            return None
        out.append(x)
    return out


def broken_vector(tile: Tile, accesses: list[Access]) -> str:
    """Why the tile as given cannot serve an access: the first lane whose ``vector`` elements are not consecutive
    offsets from a multiple of ``vector`` (one vector instruction needs both), with its coordinates and offsets."""
    for k, acc in enumerate(accesses):
        v = acc.vector
        for t, (r, c) in enumerate(acc.lanes):
            offs = [tile.offset(r, c + j) for j in range(v)]
            if offs[0] % v or offs != list(range(offs[0], offs[0] + v)):
                what = f"{acc.kind}.x{acc.num} row" if acc.matrix else f"{v * tile.element_bytes}-byte vector"
                shown = ", ".join(map(str, offs[:4])) + (", ..." if v > 4 else "")
                return (f"accesses[{k}]: lane {t}'s {what} ({v} elements from (row {r}, col {c})) lies at offsets "
                        f"{shown} of {tile.text}: one access needs {v} consecutive offsets starting at a multiple of "
                        f"{v}; check vector, the access's position and the tile's contiguous mode")
    return "accesses: a vector access is not contiguous in the tile as given"


def f2_columns_of(n: int, cols: dict[int, int], skip: int = -1) -> list[int]:
    """The map ``x ^ A(x_hi)`` on n offset bits as F2 columns (``arith.f2_apply``): bit j goes to itself XOR
    ``cols[j]`` (the column of ``skip`` left out)."""
    return [(1 << j) ^ (cols.get(j, 0) if j != skip else 0) for j in range(n)]


def xor_search(tile: Tile, accesses: list[Access], naive: Candidate, ideal: int, memo: dict) -> tuple[Any, int]:
    """(the best F2 candidate found or None, the number of maps evaluated). The target bits (bank bits that keep
    every vector whole) and the source bits (those above the 128-byte line) do not overlap, so ``x ^ A(x_hi)`` is
    its own inverse and a bijection on the tile's 2^n offsets; a Swizzle is the case where A is a shifted identity
    block. A is built greedily: for each source bit that varies among the accessed offsets, the column (a mask of
    target bits) with the fewest total wavefronts given the columns chosen so far; two sweeps.

    Trying column m for source bit j changes each lane's offset by m exactly when the lane's offset has bit j, so
    the offsets are precomputed without bit j's column and each trial is one XOR per lane (targets lie above the
    widest vector, so vectors stay whole and only the lanes' first offsets matter: the naive candidate's)."""
    eb, n = tile.element_bytes, tile.nbits or 0
    vec = max((a.vector for a in accesses if not a.constraint), default=1)
    lo, hi = bank_bits(eb)
    lo, hi = max(vec.bit_length() - 1, lo), min(n, hi)  # the target bits: bank bits above the widest vector
    lsu = [(k, a, offs) for k, (a, offs) in enumerate(zip(accesses, naive.offsets, strict=True)) if offs is not None]
    varying = varying_bits(*(offs for _, _, offs in lsu))
    sources = [j for j in range(hi, n) if (varying >> j) & 1]
    if lo >= hi or hi >= n or not sources:
        return None, 0
    masks = [m << lo for m in range(1 << (hi - lo))]
    cols = {j: 0 for j in sources}
    tried = 0
    best: Any = None
    for _sweep in range(2):
        for j in sources:
            f = f2_columns_of(n, cols, j)
            rest = [[f2_apply(f, o) for o in offs] for _, _, offs in lsu]
            has = [[(o >> j) & 1 for o in offs] for _, _, offs in lsu]
            keep, keep_key = cols[j], None
            for m in masks:
                tried += 1
                total = sum(sum(priced(memo, k, a, [x ^ m if h else x for x, h in zip(r, hs, strict=True)], eb))
                            for (k, a, _), r, hs in zip(lsu, rest, has, strict=True))
                key = (total, bin(m).count("1"))
                if keep_key is None or key < keep_key:
                    keep, keep_key = m, key
            cols[j] = keep
        best = candidate(tile, "xor", {j: m for j, m in cols.items() if m})
        evaluate(tile, accesses, best, memo)
        if best.total <= ideal:
            break
    return (best if best.xor else None), tried


def search(tile: Tile, accesses: list[Access]) -> tuple[Candidate, list[Candidate], dict[int, dict], dict[str, int]]:
    """(naive, every surviving candidate ranked by ``rank_key`` -- the tile as given among them, so the best is never
    worse than leaving it alone --, each one's ``hardware`` verdict by ``id``, counts of what was tried and
    rejected)."""
    for k, a in enumerate(accesses):
        refusal = wgmma_refusal(tile, a.major) if a.kind == "wgmma" and a.major else None
        if refusal:
            raise SolveError(f"accesses[{k}]: {refusal}")
    memo: dict = {}
    naive = candidate(tile, "naive")
    if not evaluate(tile, accesses, naive, memo):
        raise SolveError(broken_vector(tile, accesses))
    swizzles = [candidate(tile, "swizzle", bms) for bms in swizzle_space(tile)]
    paddings = [candidate(tile, "padding", p) for p in padding_space(tile)]
    counts = {"swizzles": len(swizzles), "paddings": len(paddings), "xor": 0, "rejected_vector": 0}
    out = [naive]
    for c in swizzles + paddings:
        if evaluate(tile, accesses, c, memo):
            out.append(c)
        else:
            counts["rejected_vector"] += 1
    ideal = sum(a.ideal(tile.element_bytes) for a in accesses)
    best_swizzle = min((c.total for c in out if c.kind == "swizzle"), default=naive.total)
    if tile.nbits is not None and best_swizzle > ideal:
        found = xor_search(tile, accesses, naive, ideal, memo)
        counts["xor"] = found[1]
        if found[0] is not None and found[0].total < best_swizzle:
            out.append(found[0])
    hws = {id(c): hardware(tile, accesses, c) for c in out}
    out.sort(key=lambda c: rank_key(c, hws[id(c)]))
    return naive, out, hws, counts


def rank_key(c: Candidate, hw: dict) -> tuple:
    """Constraints met, total wavefronts, vectors kept tile-wide, a CuTe layout before a general XOR map (which no
    CuTe type, TMA mode or GMMA atom expresses), extra bytes, hardware mode, fewer XOR bits, then (B, S, M) /
    padding."""
    return (not hw["constraints_met"], c.total, not hw["vector_kept"], c.kind == "xor", c.footprint_bytes,
            hw["tma"] is None and hw["wgmma"] is None,
            {"naive": 0, "swizzle": 1, "xor": 2, "padding": 3}[c.kind], c.xor_bits, c.swizzle or (0, 0, 0), c.pad)


def fold_paddings(cands: list[Candidate], hws: dict, limit: int) -> list[tuple[Candidate, dict[str, Any] | None]]:
    """Distinct outcomes: of the paddings with one result (wavefronts per access, vectors kept, constraints met),
    only the first in ``cands`` (ranked: the fewest extra bytes, so the smallest padding) stays; the others are
    folded under it. Post-condition: the first ``limit`` kept candidates, ``cands`` in order minus the folded
    paddings, each with ``{"count", "pads", "text"}`` on the paddings folded under it (same wavefronts, more bytes),
    or None."""
    kept, same = [], {}
    for c in cands:
        hw = hws[id(c)]
        key = (tuple(c.wavefronts), hw["vector_kept"], hw["constraints_met"]) if c.kind == "padding" else id(c)
        if key in same:
            same[key].append(c.pad)
            continue
        kept.append((c, same.setdefault(key, [])))
    out = []
    for c, folded in kept[:limit]:
        pads = sorted(folded)
        shown = ", ".join(map(str, pads[:6])) + (", ..." if len(pads) > 6 else "")
        out.append((c, {"count": len(pads), "pads": pads, "text": f"{len(pads)} larger padding"
                        f"{'s' if len(pads) > 1 else ''} ({shown} elements) give the same wavefronts with more bytes; "
                        f"+{c.pad} is the smallest"} if pads else None))
    return out


def solve(element_bytes: Any, tile: Any, accesses: Any, limit: int = MAX_CANDIDATES) -> dict[str, Any]:
    """The doctor's answer (CONTRACT §5): ``{"candidates": [...best first], "naive": {...}, "ideal", "searched"}``.

    Raises SolveError (a LayoutError, 422) naming the field on bad input."""
    t = make_tile(tile, element_bytes)
    accs = parse_accesses(accesses, t)
    naive, cands, hws, counts = search(t, accs)
    wide = [(a, a.access_bytes(t.element_bytes)) for a in accs if a.kind == "lds" and len(a.lanes) < 32]
    notes = [f"{a.name}: {len(a.lanes)} lanes of {ab}-byte accesses. The bank model (CONTRACT 3) splits the active "
             "lanes into phases; measured on an H200 (bench/results/solve_smem_*), the hardware still takes one pass "
             f"per {'quarter' if ab == 16 else 'half'} warp, so Nsight Compute counts at least {32 * ab // 128} "
             "wavefronts" for a, ab in wide if ab >= 8]
    return {"tile": t.text, "element_bytes": t.element_bytes, "accesses": [a.name for a in accs], "notes": notes,
            "ideal": sum(a.ideal(t.element_bytes) for a in accs),
            "ideal_per_access": [a.ideal(t.element_bytes) for a in accs],
            "naive": describe(t, accs, naive, hws[id(naive)], naive),
            "candidates": [dict(describe(t, accs, c, hws[id(c)], naive), folded=note)
                           for c, note in fold_paddings(cands, hws, limit)],
            "searched": counts}
