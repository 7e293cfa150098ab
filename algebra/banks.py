"""Shared-memory banks and wavefronts (CONTRACT §3), access patterns from layouts, and fix finders.

The model: 32 banks of 4 bytes, ``bank = (byte_address // 4) % 32``. A warp's request is split into phases by its
access width (<= 4 bytes: one phase of 32 lanes; 8 bytes: two of 16; 16 bytes: four of 8; ldmatrix / stmatrix: one
phase per 8x8 matrix of eight 16-byte rows). Inside a phase, lanes touching the same 4-byte word share it
(broadcast); the phase costs as many wavefronts as the largest number of distinct words in any one bank (at least 1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from algebra.core.errors import LayoutError

NUM_BANKS = 32
BANK_BYTES = 4
WARP_SIZE = 32
LDMATRIX_ROW_BYTES = 16
_LANES_PER_PHASE = {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}


@dataclass(frozen=True)
class BankAnalysis:
    """The bank map of one warp-wide shared-memory instruction.

    Post-conditions: ``len(banks) == len(byte_addresses)``; ``phases[p] >= 1`` for every phase;
    ``ways == max(phases)``; ``wavefronts == sum(phases) >= len(phases)``.
    """

    byte_addresses: list[int]
    access_bytes: int
    kind: str
    banks: list[int]
    phases: list[int]
    phase_lanes: list[list[int]]
    bank_words: list[dict[int, list[int]]] = field(repr=False)
    coordinates: list[Any] | None = None
    element_offsets: list[int] | None = None

    @property
    def ways(self) -> int:
        """The largest per-phase wavefront count (1 means conflict-free)."""
        return max(self.phases)

    @property
    def wavefronts(self) -> int:
        """The total wavefront count: the sum over phases."""
        return sum(self.phases)

    @property
    def conflict_free(self) -> bool:
        """True when every phase is served in one wavefront."""
        return self.ways == 1

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: banks, ways, wavefronts, byte_addresses, phases, phase_lanes, bank_words."""
        out: dict[str, Any] = {
            "banks": list(self.banks),
            "ways": self.ways,
            "wavefronts": self.wavefronts,
            "byte_addresses": list(self.byte_addresses),
            "phases": list(self.phases),
            "phase_lanes": [list(p) for p in self.phase_lanes],
            "bank_words": [{str(b): list(w) for b, w in sorted(d.items())} for d in self.bank_words],
            "access_bytes": self.access_bytes,
            "kind": self.kind,
        }
        if self.coordinates is not None:
            out["coordinates"] = [_jsonable(c) for c in self.coordinates]
        if self.element_offsets is not None:
            out["element_offsets"] = list(self.element_offsets)
        return out


def _jsonable(c: Any) -> Any:
    return [_jsonable(x) for x in c] if isinstance(c, tuple | list) else c


def bank_of(byte_address: int) -> int:
    """The bank a byte address falls in: ``(byte_address // 4) % 32``."""
    return (byte_address // BANK_BYTES) % NUM_BANKS


def _phase_cost(words: list[int]) -> tuple[int, dict[int, list[int]]]:
    """Distinct 4-byte words grouped by bank; cost = the largest group (>= 1)."""
    by_bank: dict[int, list[int]] = {}
    for w in sorted(set(words)):
        by_bank.setdefault(w % NUM_BANKS, []).append(w)
    cost = max((len(v) for v in by_bank.values()), default=1)
    return max(cost, 1), by_bank


def _check_addresses(addresses: Sequence[int], align: int, limit: int, what: str) -> list[int]:
    addrs = [int(a) for a in addresses]
    if not addrs:
        raise LayoutError(f"{what}: at least one address is required")
    if len(addrs) > limit:
        raise LayoutError(f"{what}: {len(addrs)} addresses given, at most {limit} lanes")
    for lane, a in enumerate(addrs):
        if a < 0:
            raise LayoutError(f"{what}: lane {lane} has negative byte address {a}")
        if a % align:
            raise LayoutError(f"{what}: lane {lane} byte address {a} is not a multiple of the {align}-byte access")
    return addrs


def analyze(byte_addresses: Sequence[int], access_bytes: int = 4, kind: str = "lds") -> BankAnalysis:
    """Bank map of one warp instruction; ``byte_addresses[i]`` is lane i's address (lane order).

    ``kind`` is ``"lds"``/``"sts"`` (ordinary loads and stores, phases by ``access_bytes`` in {1, 2, 4, 8, 16}) or
    ``"ldmatrix"``/``"stmatrix"`` (the addresses are row addresses, 8 per matrix; see :func:`analyze_ldmatrix`).
    Post-condition: ``banks[i] == (byte_addresses[i] // 4) % 32``; phase p covers lanes
    ``[p * n, (p + 1) * n)`` with n = 32, 16, 8 lanes for accesses of <= 4, 8, 16 bytes.
    """
    if kind in ("ldmatrix", "stmatrix"):
        if len(byte_addresses) % 8:
            raise LayoutError(f"{kind}: the number of row addresses ({len(byte_addresses)}) must be 8, 16 or 32")
        return analyze_ldmatrix(byte_addresses, num=len(byte_addresses) // 8, kind=kind)
    if kind not in ("lds", "sts"):
        raise LayoutError(f"kind must be lds, sts, ldmatrix or stmatrix, not {kind!r}")
    if access_bytes not in _LANES_PER_PHASE:
        raise LayoutError(f"access_bytes must be one of 1, 2, 4, 8, 16, not {access_bytes}")
    addrs = _check_addresses(byte_addresses, access_bytes, WARP_SIZE, f"{access_bytes}-byte access")
    per_phase = _LANES_PER_PHASE[access_bytes]
    words_per_lane = max(1, access_bytes // BANK_BYTES)
    phases: list[int] = []
    phase_lanes: list[list[int]] = []
    bank_words: list[dict[int, list[int]]] = []
    for start in range(0, len(addrs), per_phase):
        lanes = list(range(start, min(start + per_phase, len(addrs))))
        words = [addrs[i] // BANK_BYTES + k for i in lanes for k in range(words_per_lane)]
        cost, by_bank = _phase_cost(words)
        phases.append(cost)
        phase_lanes.append(lanes)
        bank_words.append(by_bank)
    return BankAnalysis(addrs, access_bytes, kind, [bank_of(a) for a in addrs], phases, phase_lanes, bank_words)


def analyze_ldmatrix(row_addresses: Sequence[int], num: int = 1, trans: bool = False,
                     kind: str = "ldmatrix") -> BankAnalysis:
    """Bank map of ``ldmatrix``/``stmatrix`` ``.x{num}`` (``.trans`` moves registers, not shared-memory rows).

    ``row_addresses`` holds the 8 * num row addresses (lanes 0..8*num-1), each a 16-byte-aligned row of 16 bytes.
    Post-condition: one phase per 8x8 matrix, phase m covering rows ``8m .. 8m+7``; so wavefronts >= num.
    """
    del trans  # the transpose happens in the register distribution; the rows read are the same
    if num not in (1, 2, 4):
        raise LayoutError(f"{kind}: num must be 1, 2 or 4 (x1, x2, x4), not {num}")
    if len(row_addresses) != 8 * num:
        raise LayoutError(f"{kind}.x{num} takes {8 * num} row addresses, {len(row_addresses)} given")
    addrs = _check_addresses(row_addresses, LDMATRIX_ROW_BYTES, WARP_SIZE, f"{kind}.x{num}")
    phases, phase_lanes, bank_words = [], [], []
    for m in range(num):
        lanes = list(range(8 * m, 8 * m + 8))
        words = [addrs[i] // BANK_BYTES + k for i in lanes for k in range(LDMATRIX_ROW_BYTES // BANK_BYTES)]
        cost, by_bank = _phase_cost(words)
        phases.append(cost)
        phase_lanes.append(lanes)
        bank_words.append(by_bank)
    return BankAnalysis(addrs, LDMATRIX_ROW_BYTES, kind, [bank_of(a) for a in addrs], phases, phase_lanes,
                        bank_words)


# --------------------------------------------------------------------------- access patterns from layouts

Offsets = Callable[[Any], int]


def _as_layout(layout: Any) -> Any:
    if isinstance(layout, str):
        from algebra.core.notation import parse

        return parse(layout)
    if not callable(layout) or not hasattr(layout, "shape"):
        raise LayoutError(f"expected a Layout, ComposedLayout or CuTe notation string, not {layout!r}")
    return layout


def _as_swizzle(swizzle: Any) -> Callable[[int], int]:
    """None (identity), a callable on offsets (Swizzle), ``"Sw<B,M,S>"`` or a (B, M, S) triple."""
    if swizzle is None or swizzle == "":
        return lambda x: x
    from algebra.core.swizzle import Swizzle

    if isinstance(swizzle, str):
        from algebra.core.notation import parse

        swizzle = parse(swizzle)
    elif isinstance(swizzle, tuple | list):
        swizzle = Swizzle(*swizzle)
    if not callable(swizzle):
        raise LayoutError(f"swizzle must be Sw<B,M,S>, a (B, M, S) triple or a Swizzle, not {swizzle!r}")
    return swizzle


def _modes_2d(layout: Any) -> tuple[int, int]:
    """The rank-2 view (rows, cols) of a layout: mode 0 x the rest (rank 1: one row)."""
    from algebra.core import inttuple as it

    shp = layout.shape
    if not it.is_tuple(shp) or len(shp) == 1:
        return 1, it.product(shp)
    return it.product(shp[0]), it.product(shp[1:])


def _vector_items(layout: Any, rows: int, cols: int, crd: int, vec: int) -> list[tuple[str, int]]:
    """The ``vec`` elements a thread at 1-D coordinate ``crd`` of the tile's grid of vectors reads: vectors run along
    the tile's contiguous mode (mode 1 when ``layout(rows) - layout(0) == 1`` or the tile is one row, else mode 0),
    so the tile is viewed as ``rows x cols/vec`` (or ``rows/vec x cols``) vectors, indexed column-major.
    Post-condition: ``vec == 1`` gives ``[("c", crd)]`` (the thread reads 1-D coordinate ``crd``)."""
    if vec == 1:
        return [("c", crd)]
    along_cols = rows == 1 or (cols > 1 and layout(rows) - layout(0) == 1)
    if along_cols:
        if cols % vec:
            raise LayoutError(f"vector {vec} does not divide the tile's {cols} columns")
        i, j = crd % rows, (crd // rows) * vec
        return [("c", i + rows * (j + k)) for k in range(vec)]
    if rows % vec:
        raise LayoutError(f"vector {vec} does not divide the tile's {rows} rows")
    vrows = rows // vec
    i, j = (crd % vrows) * vec, crd // vrows
    return [("c", i + k + rows * j) for k in range(vec)]


def _pattern(layout: Any, access: dict[str, Any], element_bytes: int) -> tuple[str, int, list[Any], list[list[Any]]]:
    """(kind, elements per access, a label per thread, per thread the items it touches).

    An item is ``("c", coordinate)`` (through the layout) or ``("o", offset)`` (an element offset in the layout's
    codomain, only the swizzle applies).
    """
    kind = str(access.get("kind", "")).lower()
    vec = int(access.get("vector", 1))
    if vec < 1:
        raise LayoutError(f"vector must be >= 1, not {vec}")
    rows, cols = _modes_2d(layout)
    warp = int(access.get("warp", 0))
    if kind == "column":
        j, start = int(access.get("index", 0)), int(access.get("start", 0))
        if not 0 <= j < cols:
            raise LayoutError(f"column {j} out of range: the tile has {cols} columns")
        n = int(access.get("count", min(rows - start, WARP_SIZE)))
        labels = [(start + t, j) for t in range(n)]
        return kind, 1, labels, [[("c", i + rows * jj)] for i, jj in labels]
    if kind == "row":
        i, start = int(access.get("index", 0)), int(access.get("start", 0))
        if not 0 <= i < rows:
            raise LayoutError(f"row {i} out of range: the tile has {rows} rows")
        n = int(access.get("count", min((cols - start) // vec, WARP_SIZE)))
        labels = [(i, start + t * vec) for t in range(n)]
        return kind, vec, labels, [[("c", i + rows * (j + k)) for k in range(vec)] for _, j in labels]
    if kind in ("offsets", "coords", "coordinates"):
        entries = list(access.get("offsets", access.get("coords", access.get("coordinates", []))))
        if len(entries) > WARP_SIZE:
            raise LayoutError(f"{len(entries)} entries given: at most one per lane of a warp ({WARP_SIZE})")
        _check_in_tile(layout, entries, rows, cols, vec, offsets=kind == "offsets")
        items = []
        for e in entries:
            if isinstance(e, list | tuple):
                c = tuple(e)
                if vec != 1:
                    raise LayoutError("vector accesses from coordinates: give the first element as an offset")
                items.append([("c", c)])
            else:
                tag = "c" if kind != "offsets" else "o"
                items.append([(tag, int(e) + k) for k in range(vec)] if tag == "o" else [(tag, int(e))])
        return "lds", vec, [tuple(e) if isinstance(e, list) else e for e in entries], items
    if kind in ("ldmatrix", "stmatrix"):
        per_row = LDMATRIX_ROW_BYTES // element_bytes
        if LDMATRIX_ROW_BYTES % element_bytes:
            raise LayoutError(f"{kind} rows are 16 bytes: element_bytes {element_bytes} must divide 16")
        num = int(access.get("num", 4))
        if "offsets" in access or "coords" in access:
            ent = list(access.get("offsets", access.get("coords", [])))
            tag = "o" if "offsets" in access else "c"
            if tag == "c" and any(isinstance(e, list | tuple) for e in ent):
                raise LayoutError(f"{kind} row coordinates must be 1-D; give offsets for arbitrary rows")
            return kind, per_row, ent, [[(tag, int(e) + k) if tag == "o" else ("c", int(e) + rows * k)
                                         for k in range(per_row)] for e in ent]
        r0, c0 = int(access.get("row", 0)), int(access.get("col", 0))
        labels = [(r0 + 8 * (m % 2) + r, c0 + (m // 2) * per_row) for m in range(num) for r in range(8)]
        for i, j in labels:
            if i >= rows or j + per_row > cols:
                raise LayoutError(f"{kind}.x{num} at ({r0},{c0}) needs row {i}, columns {j}..{j + per_row - 1}: "
                                  f"outside the {rows}x{cols} tile")
        return kind, per_row, labels, [[("c", i + rows * (j + k)) for k in range(per_row)] for i, j in labels]
    if kind in ("thread_layout", "tv"):
        from algebra.core import inttuple as it

        tv = _as_layout(access["layout"])
        if kind == "thread_layout":  # every element of the thread layout is a thread
            nthr = it.product(tv.shape)
            lanes = range(WARP_SIZE * warp, min(WARP_SIZE * (warp + 1), nthr))
            items = [_vector_items(layout, rows, cols, tv(t), vec) for t in lanes]
            return "lds", vec, list(lanes), _in_tile_items(items, rows * cols)
        values = [int(v) for v in access.get("values", [0])]
        nthr = it.product(tv.shape[0]) if it.is_tuple(tv.shape) else it.product(tv.shape)
        lanes = range(WARP_SIZE * warp, min(WARP_SIZE * (warp + 1), nthr))
        items = [[("c", tv((t, v))) for v in values] for t in lanes]
        return "lds", len(values), list(lanes), _in_tile_items(items, rows * cols)
    raise LayoutError(f"unknown access kind {kind!r}: use column, row, offsets, coords, ldmatrix, stmatrix, "
                      "thread_layout or tv")


def _check_in_tile(layout: Any, entries: list[Any], rows: int, cols: int, vec: int, offsets: bool) -> None:
    """Every entry must name an element of the tile: a ``[row, column]`` inside rows x cols, a 1-D coordinate below
    size, or (``offsets``) an element offset with its ``vec`` elements inside [0, cosize)."""
    from algebra.core.layout import cosize

    plain = layout.layout_b if hasattr(layout, "layout_b") else layout
    for lane, e in enumerate(entries):
        if isinstance(e, list | tuple):
            if len(e) == 2 and all(isinstance(x, int) for x in e) and not (0 <= e[0] < rows and 0 <= e[1] < cols):
                raise LayoutError(f"lane {lane}: coordinate ({_short(e[0])},{_short(e[1])}) is outside the "
                                  f"{rows}x{cols} tile")
            continue
        limit = cosize(plain) if offsets else rows * cols
        if not 0 <= int(e) or int(e) + (vec if offsets else 1) > limit:
            what = f"offset {_short(e)}" + (f" (+{vec} elements)" if offsets and vec > 1 else "")
            raise LayoutError(f"lane {lane}: {what} is outside the tile: "
                              f"{'offsets' if offsets else 'coordinates'} must lie in [0, {limit})")


def _in_tile_items(items: list[list[tuple[str, Any]]], size: int) -> list[list[tuple[str, Any]]]:
    """``items`` unchanged when every 1-D coordinate lies in [0, size) (the tile), else LayoutError naming the lane."""
    for lane, its in enumerate(items):
        for tag, v in its:
            if tag == "c" and isinstance(v, int) and not 0 <= v < size:
                raise LayoutError(f"lane {lane}: 1-D coordinate {_short(v)} is outside the tile of {size} elements")
    return items


def _short(x: Any) -> str:
    t = str(x)
    return t if len(t) <= 24 else f"{t[:10]}...({len(t)} digits)"


def bank_access(layout: Any, element_bytes: int, access: dict[str, Any], swizzle: Any = None,
                base: int = 0) -> BankAnalysis:
    """Bank map of a warp reading a tile stored by ``layout`` (plus an optional element-offset ``swizzle``).

    Byte address of an item = ``base + element_bytes * swizzle(layout(coordinate))``. ``access`` kinds:
    ``{"kind": "column", "index": j}`` (lane i reads (i, j)); ``{"kind": "row", "index": i, "vector": v}``
    (lane t reads v elements from (i, t*v)); ``{"kind": "offsets", "offsets": [...]}`` (element offsets in
    the layout's codomain, before any swizzle; or coordinates given as lists); ``{"kind": "coords", "coords":
    [...]}``; ``{"kind": "ldmatrix", "num": 1|2|4,
    "row": r0, "col": c0}`` (matrix m covers rows r0+8(m%2).., columns c0+(m//2)*16/element_bytes..);
    ``{"kind": "thread_layout", "layout": thr, "vector": v}`` (each element of thr is a thread: thread t reads the
    vector at 1-D coordinate thr(t) of the tile's grid of v-element vectors, see _vector_items);
    ``{"kind": "tv", "layout": tv, "values": [v...]}``. Rank > 2 tiles are viewed as mode 0 x (the rest).
    Post-condition: each thread's items are contiguous in memory (one access of ``vector * element_bytes`` bytes),
    else LayoutError.
    """
    lay = _as_layout(layout)
    swz = _as_swizzle(swizzle)
    return lane_bank_map(lane_offsets(lay, element_bytes, access), element_bytes, swz, base)


@dataclass(frozen=True)
class LaneOffsets:
    """What one warp access reads before any extra swizzle: per lane, the element offsets of its items in order
    (``raw[lane]``), with the access kind, elements per access and a label per lane. The bank map under any swizzle
    follows from these without evaluating the layout again (:func:`lane_bank_map`)."""

    kind: str
    per_thread: int
    labels: list[Any]
    raw: list[list[int]]


def lane_offsets(layout: Any, element_bytes: int, access: dict[str, Any]) -> LaneOffsets:
    """The element offsets each lane of ``access`` reads through ``layout`` (its own swizzle included)."""
    lay = _as_layout(layout)
    if element_bytes not in (1, 2, 4, 8, 16):
        raise LayoutError(f"element_bytes must be 1, 2, 4, 8 or 16, not {element_bytes}")
    kind, per_thread, labels, items = _pattern(lay, access, element_bytes)
    outer = (lambda o: lay.layout_a(lay.offset + o)) if hasattr(lay, "layout_a") else (lambda o: o)
    raw = [[lay(v) if tag == "c" else outer(v) for tag, v in its] for its in items]
    return LaneOffsets(kind, per_thread, labels, raw)


def lane_bank_map(lanes: LaneOffsets, element_bytes: int, swizzle: Callable[[int], int] | None = None,
                  base: int = 0) -> BankAnalysis:
    """The bank map of ``lanes`` with ``swizzle`` (a callable on element offsets, or None) applied to every offset.

    Post-condition: as :func:`bank_access`; LayoutError when a lane's elements are not contiguous after the swizzle."""
    offsets = []
    for lane, raw in enumerate(lanes.raw):
        offs = raw if swizzle is None else [swizzle(o) for o in raw]
        if any(b - a != 1 for a, b in zip(offs, offs[1:], strict=False)):
            raise LayoutError(f"lane {lane}: its {len(offs)} elements are at offsets {offs}, not contiguous, so "
                              "they are not one vector access")
        offsets.append(offs[0])
    addrs = [base + element_bytes * o for o in offsets]
    if lanes.kind in ("ldmatrix", "stmatrix"):
        r = analyze_ldmatrix(addrs, num=len(addrs) // 8 if len(addrs) % 8 == 0 else 0, kind=lanes.kind)
    else:
        r = analyze(addrs, access_bytes=lanes.per_thread * element_bytes)
    return BankAnalysis(r.byte_addresses, r.access_bytes, r.kind, r.banks, r.phases, r.phase_lanes, r.bank_words,
                        lanes.labels, offsets)


# Fix finders live in algebra.bankfix; re-exported here, where callers have always found them.
from algebra.bankfix import Fix, best_swizzle_fix, padding_fix, swizzle_candidates, swizzle_fixes  # noqa: E402,F401
