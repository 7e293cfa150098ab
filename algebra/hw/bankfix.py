"""Fix finders for shared-memory bank conflicts: the smallest padding, and the Sw<B,M,S> swizzles that remove a
warp access's conflict, searched over a bounded candidate set.

Why the candidate set is small. A bank is picked by the byte-address bits 2..6, i.e. the element-offset bits
``[lo, hi) = [max(0, 2 - log2 e), 7 - log2 e)`` for ``e``-byte elements. Sw<B,M,S> flips the bits ``[M, M+B)``
(zzz) by the bits ``[M+S, M+S+B)`` (yyy). It can change a phase's cost only when

- zzz meets ``[lo, hi)`` (flipping other bits keeps every word's bank, and keeps distinct words distinct), and
- yyy meets the bits in which the lanes' offsets differ (a yyy value shared by every lane flips every lane the
  same way: the banks are permuted, the cost is the same).

So M ranges over at most ``hi - lo + B`` values, and S over the offset bits where the lanes differ: tens to a few
hundred candidates, each costing one 32-lane bank map over precomputed offsets
(:func:`algebra.hw.bank_access.lane_bank_map`) and, only for a conflict-free one, a check that the swizzle maps the
tile onto itself (free on a compact tile whose size is a multiple of the swizzle's 2^(M+B) block, else one pass over
the tile's offsets). B runs up to what the tile's offset bits allow (S >= B and M + S + B <= bits, so B <= bits / 2).
Both counts are capped (MAX_SWIZZLE_CANDIDATES, MAX_CLOSURE_CHECKS) and the tile size too (MAX_TILE); a caller that
meters work passes ``on_work(lanes, elements)``, called before each piece of work with the bank-map lanes and tile
elements it is about to spend (it may raise to stop the search).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import reduce
from operator import or_
from typing import Any

from algebra.core.errors import LayoutError
from algebra.core.layout import Layout, size
from algebra.core.layout import offsets as all_offsets
from algebra.hw import bank_access as _b
from algebra.hw.banks import BANK_BYTES, NUM_BANKS, BankAnalysis

#: The most Sw<B,M,S> one search evaluates (each: one bank map of a warp over precomputed offsets).
MAX_SWIZZLE_CANDIDATES = 512
#: The most "does this swizzle map the tile onto itself" passes one search makes (each: one pass over the tile).
MAX_CLOSURE_CHECKS = 24
#: The largest tile (elements) whose offsets a swizzle search enumerates.
MAX_TILE = 1 << 16


@dataclass(frozen=True)
class Fix:
    """A change that makes an access conflict-free: ``layout`` (padded) or ``swizzle`` (B, M, S), and its analysis."""

    kind: str
    padding: int
    swizzle: tuple[int, int, int] | None
    layout: Any
    analysis: BankAnalysis

    def __str__(self) -> str:
        if self.swizzle is not None:
            return "Sw<{},{},{}>".format(*self.swizzle)
        return f"{self.layout} (padding {self.padding})"


def bank_bits(element_bytes: int) -> tuple[int, int]:
    """``[lo, hi)``: the element-offset bits that select a bank for ``element_bytes``-byte elements."""
    k = element_bytes.bit_length() - 1
    return max(0, 2 - k), 7 - k


def hardware_swizzles(element_bytes: int, max_bits: int = 3) -> list[tuple[int, int, int]]:
    """The 128B / 64B / 32B swizzle modes (TMA, GMMA atoms: Sw<B,4,3> on byte addresses), widest first, on element
    offsets: ``(B, 4 - log2 e, 3)`` for B = 3, 2, 1 (up to ``max_bits``)."""
    m = 4 - (element_bytes.bit_length() - 1)
    return [(b, m, 3) for b in range(min(3, max_bits), 0, -1) if m >= 0]


def varying_bits(*groups: list[int]) -> int:
    """The bits in which some offset of a group differs from the group's first offset."""
    return reduce(or_, (o ^ g[0] for g in groups for o in g), 0)


def swizzle_candidates(lanes: _b.LaneOffsets, element_bytes: int, offset_bits: int,
                       max_bits: int = 3) -> list[tuple[int, int, int]]:
    """The Sw<B,M,S> (1 <= B <= max_bits, S >= B, M + S + B <= offset_bits) that can change the cost of the warp
    access ``lanes`` (see the module docstring), ordered by (B, M, S), at most MAX_SWIZZLE_CANDIDATES of them."""
    lo, hi = bank_bits(element_bytes)
    varying = varying_bits([o for raw in lanes.raw for o in raw])
    out = []
    for b in range(1, max_bits + 1):
        for m in range(max(0, lo - b + 1), hi):
            for s in range(b, offset_bits - m - b + 1):
                if varying >> (m + s) & ((1 << b) - 1):
                    out.append((b, m, s))
                    if len(out) >= MAX_SWIZZLE_CANDIDATES:
                        return out
    return out


Work = Callable[[int, int], None]


def swizzle_fn(b: int, m: int, s: int) -> Callable[[int], int]:
    """Sw<B,M,S> on offsets written out, ``o ^ ((o & yyy) >> S)`` (S >= 0; the core's Swizzle without its checks, for
    the searches' inner loops)."""
    ymask = ((1 << b) - 1) << (m + s)
    return lambda o: o ^ ((o & ymask) >> s)


def compact_tail(n: int, b: int, m: int) -> range:
    """The offsets of a compact tile (exactly 0 .. n-1) that Sw<B,M,S> may move out of it: Sw only flips bits
    [M, M+B), so it keeps each aligned block of 2^(M+B) offsets, and only those past the last whole block can leave."""
    return range(n - n % (1 << (m + b)), n)


def compact_plain(layout: Any) -> bool:
    """True when a plain layout's offsets are exactly 0 .. size-1 (its modes, sorted by stride, each start where
    the ones before end), read from its strides alone: no enumeration, any size."""
    if not isinstance(layout, Layout):
        return False
    modes = sorted((d, n) for n, d in zip(_flat(layout.shape), _flat(layout.stride), strict=True) if n != 1)
    reach = 1
    for d, n in modes:
        if type(d) is not int or d != reach:
            return False
        reach *= n
    return True


def _flat(t: Any) -> list[Any]:
    return [y for x in t for y in _flat(x)] if isinstance(t, tuple) else [t]


def keeps_tile(layout: Any, bms: tuple[int, int, int], offsets: list[int] | None = None) -> bool | None:
    """Whether Sw<B,M,S> maps the tile's offsets onto themselves (a fix that sends an element outside the tile's
    storage is no fix): a compact tile checks only its :func:`compact_tail`; another one, up to MAX_TILE
    elements, every offset (``offsets``, when a caller has them); None past that (not checked)."""
    sw, n = swizzle_fn(*bms), size(layout)
    if compact_plain(layout):
        return all(sw(o) < n for o in compact_tail(n, bms[0], bms[1]))
    if offsets is None and n > MAX_TILE:
        return None
    offs = all_offsets(layout) if offsets is None else offsets
    tile = frozenset(offs)
    return all(sw(o) in tile for o in offs)


class _Search:
    """The state one search shares across candidates: the lanes' offsets and the tile's offset set (built once).

    ``offsets`` (the tile's offsets in 1-D order) may be given by a caller that enumerated them already."""

    def __init__(self, layout: Any, element_bytes: int, access: dict[str, Any], offsets: list[int] | None = None,
                 on_work: Work | None = None) -> None:
        self.layout = _b._as_layout(layout)
        self.element_bytes = element_bytes
        self.on_work = on_work
        n = size(self.layout)
        if n > MAX_TILE:
            raise LayoutError(f"swizzle search: the tile has {n:,} elements, over the cap of {MAX_TILE:,}")
        self.lanes = _b.lane_offsets(self.layout, element_bytes, access)
        self.offsets = all_offsets(self.layout) if offsets is None else offsets
        low = min(self.offsets, default=0)
        if low < 0:
            raise LayoutError(f"swizzle search: the tile reaches offset {low}, below its pointer (a negative "
                              "stride); the search reads tiles whose offsets run up from 0")
        self.tile = frozenset(self.offsets)
        self.bits = max(max(self.offsets, default=1), 1).bit_length()
        self.compact = len(self.tile) == len(self.offsets) and min(self.offsets, default=0) == 0 \
            and max(self.offsets, default=0) == len(self.offsets) - 1
        self.closure_checks = 0

    def spend(self, lanes: int, elements: int) -> None:
        if self.on_work is not None:
            self.on_work(lanes, elements)

    def fixes(self, order: list[tuple[int, int, int]]) -> Iterator[Fix | None]:
        """The Sw<B,M,S> of ``order`` whose bank map (under :func:`swizzle_fn`) is conflict-free and that map the tile
        onto itself (:meth:`closed`), as Fixes, in order; a conflict-free one met after MAX_CLOSURE_CHECKS closure
        checks yields None and ends the search (bounded work)."""
        for bms in order:
            analysis = _b.conflict_free_map(self.lanes, self.element_bytes, swizzle_fn(*bms))
            if analysis is not None and self.closure_checks >= MAX_CLOSURE_CHECKS:
                yield None
                return
            if analysis is not None and self.closed(bms):
                yield Fix("swizzle", 0, bms, self.layout, analysis)

    def closed(self, bms: tuple[int, int, int]) -> bool:
        """True when the swizzle maps the tile's offsets onto themselves (it is a bijection, so into suffices): on a
        compact tile only its :func:`compact_tail` is checked, free when its size is a multiple of the block."""
        self.closure_checks += 1
        sw = swizzle_fn(*bms)
        if self.compact:
            n = len(self.offsets)
            tail = compact_tail(n, bms[0], bms[1])
            if tail:
                self.spend(0, len(tail))
            return all(sw(o) < n for o in tail)
        self.spend(0, len(self.offsets))
        b, m, s = bms
        ymask, tile = ((1 << b) - 1) << (m + s), self.tile
        return all((o ^ ((o & ymask) >> s)) in tile for o in self.offsets if o & ymask)  # swizzle_fn written out


def swizzle_fixes(layout: Any, element_bytes: int, access: dict[str, Any], max_bits: int = 5) -> list[Fix]:
    """Every Sw<B,M,S> among :func:`swizzle_candidates` that makes ``access`` conflict-free while mapping the tile's
    set of offsets onto itself.

    Post-condition: each returned fix has ``analysis.ways == 1``; the list is ordered by (B, M, S); it is empty when
    the access is already conflict-free (no swizzle changes anything to fix). At most MAX_CLOSURE_CHECKS swizzles
    are checked against the tile; past that the search stops (bounded work)."""
    search = _Search(layout, element_bytes, access)
    if _b.lane_ways(search.lanes, element_bytes) == 1:
        return []
    return [fix for fix in search.fixes(swizzle_candidates(search.lanes, element_bytes, search.bits, max_bits)) if fix]


def widest_swizzle_bits(offset_bits: int) -> int:
    """The largest B of a Sw<B,M,S> inside ``offset_bits`` bits: S >= B and M + S + B <= offset_bits give 2B <= bits."""
    return max(1, offset_bits // 2)


def best_swizzle_fix(layout: Any, element_bytes: int, access: dict[str, Any], max_bits: int | None = None,
                     offsets: list[int] | None = None, on_work: Work | None = None) -> Fix | None:
    """The preferred swizzle fix: the widest hardware swizzle mode (128B, 64B, 32B: :func:`hardware_swizzles`) that
    makes ``access`` conflict-free and maps the tile onto itself, else the first such Sw<B,M,S> in (B, M, S) order
    among :func:`swizzle_candidates`, B up to ``max_bits`` (default: every B the tile's offset bits allow,
    :func:`widest_swizzle_bits`); None when there is none (or the access has no conflict to remove).

    Post-condition: ``result.analysis.ways == 1``; the work is bounded by MAX_SWIZZLE_CANDIDATES bank maps and
    MAX_CLOSURE_CHECKS passes over a tile of at most MAX_TILE elements, each announced to ``on_work`` first. When a
    cap ends the search before a fix is found, LayoutError names the cap (a fix may exist past it: "none" would be a
    claim the search did not check)."""
    search = _Search(layout, element_bytes, access, offsets, on_work)
    search.spend(len(search.lanes.raw), 0)
    ways = _b.lane_ways(search.lanes, element_bytes)
    if ways == 1:
        return None
    bmax = widest_swizzle_bits(search.bits) if max_bits is None else max_bits
    # Sw<B,..> moves the words of one bank by an XOR that takes at most 2^B values: `ways` words need 2^B >= ways
    bmin = (ways - 1).bit_length()
    order = [c for c in hardware_swizzles(element_bytes, bmax) if sum(c) <= search.bits and c[0] >= bmin]
    candidates = swizzle_candidates(search.lanes, element_bytes, search.bits, bmax)
    order += [c for c in candidates if c not in order and c[0] >= bmin]
    search.spend(len(search.lanes.raw) * len(order), 0)
    fix = next(search.fixes(order), False)  # no repeats: the candidates are distinct and skip the hardware modes
    if fix is None:
        raise LayoutError(f"swizzle search: {MAX_CLOSURE_CHECKS} conflict-free swizzles checked against the "
                          "tile, none maps it onto itself; the search stops at that cap")
    if fix:
        return fix
    if len(candidates) >= MAX_SWIZZLE_CANDIDATES:
        raise LayoutError(f"swizzle search: no fix among the first {MAX_SWIZZLE_CANDIDATES} candidates (the "
                          "search's cap)")
    return None


def padding_fix(layout: Any, element_bytes: int, access: dict[str, Any], max_padding: int | None = None,
                on_work: Work | None = None) -> Fix | None:
    """The smallest padding p >= 0 (elements added to the leading stride of a rank-2 layout whose other mode has
    stride 1) that makes ``access`` conflict-free, or None when no p <= ``max_padding`` does.

    ``max_padding`` defaults to one bank line (128 bytes) of elements (at most 128 tries, each one bank map of the
    warp computed from its coordinates, not by evaluating the layout). Paddings that break a vector access's
    alignment or contiguity are skipped. Post-condition: ``result.analysis.ways == 1`` and no smaller p works.
    ``on_work(lanes, 0)`` hears the bank-map lanes of every try before the first one."""
    lay = _b._as_layout(layout)
    if not isinstance(lay, Layout) or len(lay) != 2 or any(isinstance(d, tuple) for d in lay.stride) \
            or any(isinstance(d, tuple) for d in lay.shape):
        raise LayoutError(f"padding needs a flat rank-2 layout, not {lay}")
    if 1 not in lay.stride:
        raise LayoutError(f"padding needs one stride-1 mode; {lay} has strides {lay.stride}")
    lead = 1 - lay.stride.index(1) if lay.stride.count(1) == 1 else 0
    limit = max_padding if max_padding is not None else max(1, NUM_BANKS * BANK_BYTES // element_bytes)
    kind, per_thread, labels, items = _b._pattern(lay, access, element_bytes)
    rows = lay.shape[0]
    cells = [[(tag, (v % rows, v // rows) if tag == "c" and isinstance(v, int) else tuple(v) if tag == "c" else v)
              for tag, v in its] for its in items]
    if on_work is not None:
        on_work(len(items) * (limit + 1), 0)
    for p in range(limit + 1):
        stride = list(lay.stride)
        stride[lead] += p if stride[lead] >= 0 else -p  # padding widens the pitch, whichever way it runs
        padded = Layout(lay.shape, tuple(stride))
        raw = [[_offset(padded, stride, tag, c) for tag, c in its] for its in cells]
        analysis = _b.conflict_free_map(_b.LaneOffsets(kind, per_thread, labels, raw), element_bytes)
        if analysis is not None:
            return Fix("padding", p, None, padded, analysis)
    return None


def _offset(layout: Any, stride: list[int], tag: str, c: Any) -> int:
    """Offset of one item of a flat rank-2 layout: a (row, column) pair by its strides, an offset as is."""
    if tag != "c":
        return c
    if len(c) == 2 and isinstance(c[0], int) and isinstance(c[1], int):
        return c[0] * stride[0] + c[1] * stride[1]
    return layout(c)
