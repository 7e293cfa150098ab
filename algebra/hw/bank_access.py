"""Access patterns from layouts: which element offsets each lane of a warp access reads through a tile's layout
(``lane_offsets``), and the bank map that follows (``bank_access``, ``lane_bank_map``: the wavefront model of
``algebra.hw.banks`` on those offsets).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from algebra.core import inttuple as it
from algebra.core.errors import LayoutError
from algebra.core.layout import Layout, cosize
from algebra.core.memo import bounded
from algebra.core.notation import parse
from algebra.core.swizzle import ComposedLayout, Swizzle
from algebra.hw import banks as _model
from algebra.hw.banks import LDMATRIX_ROW_BYTES, WARP_SIZE, BankAnalysis

Offsets = Callable[[Any], int]


def _as_layout(layout: Any) -> Any:
    if isinstance(layout, str):
        return parse(layout)
    if not callable(layout) or not hasattr(layout, "shape"):
        raise LayoutError(f"expected a Layout, ComposedLayout or CuTe notation string, not {layout!r}")
    return layout


def _as_swizzle(swizzle: Any) -> Callable[[int], int]:
    """None (identity), a callable on offsets (Swizzle), ``"Sw<B,M,S>"`` or a (B, M, S) triple."""
    if swizzle is None or swizzle == "":
        return lambda x: x
    if isinstance(swizzle, str):
        swizzle = parse(swizzle)
    elif isinstance(swizzle, tuple | list):
        swizzle = Swizzle(*swizzle)
    if not callable(swizzle):
        raise LayoutError(f"swizzle must be Sw<B,M,S>, a (B, M, S) triple or a Swizzle, not {swizzle!r}")
    return swizzle


def modes_2d(layout: Any) -> tuple[int, int]:
    """The rank-2 view (rows, cols) of a layout: mode 0 x the rest (rank 1: one row; rank 0, ():(), one cell)."""
    shp = layout.shape
    if not it.is_tuple(shp) or len(shp) <= 1:
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
    rows, cols = modes_2d(layout)
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
        if n < 1:
            raise LayoutError(f"row {i} from column {start}: its {cols - start} columns hold no whole vector of "
                              f"{vec} elements; pick a vector of at most {cols - start} (a power of two)")
        labels = [(i, start + t * vec) for t in range(n)]
        return kind, vec, labels, [[("c", i + rows * (j + k)) for k in range(vec)] for _, j in labels]
    if kind in ("offsets", "coords", "coordinates"):
        entries = list(access.get("offsets", access.get("coords", access.get("coordinates", []))))
        if len(entries) > WARP_SIZE:
            raise LayoutError(f"{len(entries)} entries given: at most one per lane of a warp ({WARP_SIZE})")
        _check_in_tile(layout, entries, rows, cols, vec, offsets=kind == "offsets")
        # a [row, col] lane reads its vector along the row, (r, c) .. (r, c + vec - 1), as the row kind and the
        # doctor (CONTRACT 5) read it; the contiguity check below refuses a tile where that is no single access
        items = [[("c", _view_coordinate([e[0], e[1] + k] if k else e, rows)) for k in range(vec)]
                 if isinstance(e, list | tuple) else
                 [("o", int(e) + k) for k in range(vec)] if kind == "offsets" else [("c", int(e))] for e in entries]
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
        arrange = ldmatrix_arrangement(num, rows, access.get("arrange"))
        labels = ldmatrix_rows(num, r0, c0, per_row, arrange)
        for i, j in labels:
            if i >= rows or j + per_row > cols:
                other = "row" if arrange == "grid" else "grid"
                raise LayoutError(f"{kind}.x{num} at ({r0},{c0}) ({arrange} arrangement) needs row {i}, columns "
                                  f"{j}..{j + per_row - 1}: outside the {rows}x{cols} tile; start it elsewhere, pick "
                                  f"fewer matrices or the {other} arrangement")
        return kind, per_row, labels, [[("c", i + rows * (j + k)) for k in range(per_row)] for i, j in labels]
    if kind in ("thread_layout", "tv"):
        tv = _as_layout(access["layout"])
        values = [int(v) for v in access.get("values", [0])] if kind == "tv" else []
        # thread_layout: every element of the layout is a thread; tv: its mode 0 is
        nthr = it.product(tv.shape[0] if kind == "tv" and it.is_tuple(tv.shape) else tv.shape)
        lanes = range(WARP_SIZE * warp, min(WARP_SIZE * (warp + 1), nthr))
        if kind == "thread_layout":
            items, per_thread = [_vector_items(layout, rows, cols, tv(t), vec) for t in lanes], vec
        else:
            items, per_thread = [[("c", tv((t, v))) for v in values] for t in lanes], len(values)
        return "lds", per_thread, list(lanes), _in_tile_items(items, rows * cols)
    raise LayoutError(f"unknown access kind {kind!r}: use column, row, offsets, coords, ldmatrix, stmatrix, "
                      "thread_layout or tv")


LDMATRIX_ARRANGEMENTS = ("grid", "row")


def ldmatrix_arrangement(num: int, rows: int, arrange: Any = None) -> str:
    """Where ldmatrix's matrices sit: ``"grid"`` (matrix m at rows +8 (m % 2), columns +(m // 2) of a 16-byte row:
    the 16 x 16 fragment of an MMA operand) or ``"row"`` (the matrices side by side along 8 rows). Default: ``grid``
    when the tile has 16 rows or more (or for .x1, where both are one matrix), else ``row``, so .x2 / .x4 fit a tile
    of 8 rows. LayoutError for another name."""
    if arrange is None or arrange == "":
        return "grid" if num == 1 or rows >= 16 else "row"
    if arrange not in LDMATRIX_ARRANGEMENTS:
        raise LayoutError(f"ldmatrix arrangement: {str(arrange)[:20]!r} is not one of "
                          f"{', '.join(LDMATRIX_ARRANGEMENTS)}")
    return str(arrange)


def ldmatrix_rows(num: int, r0: int, c0: int, per_row: int, arrange: str) -> list[tuple[int, int]]:
    """(row, first column) of the 16-byte row that lane t addresses, t = 8 m + i: row i of matrix m.
    Post-condition: ``num * 8`` entries; matrix 0 starts at (r0, c0)."""
    if arrange == "row":
        return [(r0 + r, c0 + m * per_row) for m in range(num) for r in range(8)]
    return [(r0 + 8 * (m % 2) + r, c0 + (m // 2) * per_row) for m in range(num) for r in range(8)]


def offset_span(layout: Any) -> tuple[int, int]:
    """[low, high): the element offsets a plain layout's (integer) strides reach, ``low <= 0``; a negative stride
    reaches below 0. Post-condition: ``high - low == cosize(layout)`` (CuTe's cosize, with |strides|)."""
    fs, fd = it.flatten(layout.shape), it.flatten(layout.stride)
    low = sum((n - 1) * d for n, d in zip(fs, fd, strict=True) if isinstance(d, int) and d < 0)
    return low, low + cosize(layout)


def _check_in_tile(layout: Any, entries: list[Any], rows: int, cols: int, vec: int, offsets: bool) -> None:
    """Every entry must name an element of the tile: a ``[row, column]`` inside rows x cols, a 1-D coordinate below
    size, or (``offsets``) an element offset with its ``vec`` elements inside the offsets the layout reaches
    (:func:`offset_span`: [0, cosize) for non-negative strides)."""
    plain = layout.layout_b if hasattr(layout, "layout_b") else layout
    for lane, e in enumerate(entries):
        if isinstance(e, list | tuple):
            if len(e) == 2 and all(isinstance(x, int) for x in e) and not (
                    0 <= e[0] < rows and 0 <= e[1] and e[1] + vec <= cols):
                what = f" (+{vec} elements along the row)" if vec > 1 else ""
                raise LayoutError(f"lane {lane}: coordinate ({_short(e[0])},{_short(e[1])}){what} is outside the "
                                  f"{rows}x{cols} tile")
            if vec > 1 and len(e) != 2:
                raise LayoutError(f"lane {lane}: a vector of {vec} elements starts at a [row, col] pair, not "
                                  f"{_short(list(e))}")
            continue
        low, limit = offset_span(plain) if offsets else (0, rows * cols)
        if not low <= int(e) or int(e) + (vec if offsets else 1) > limit:
            what = f"offset {_short(e)}" + (f" (+{vec} elements)" if offsets and vec > 1 else "")
            raise LayoutError(f"lane {lane}: {what} is outside the tile: "
                              f"{'offsets' if offsets else 'coordinates'} must lie in [{low}, {limit})")


def _view_coordinate(e: list | tuple, rows: int) -> Any:
    """A lane's coordinate: ``[row, col]`` (two integers) in the tile's rank-2 view (mode 0 x the rest, as the
    column and row kinds read it) as the 1-D coordinate ``row + rows * col``, so it names the same element at any
    rank; anything else (a natural coordinate) as given."""
    if len(e) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in e):
        return e[0] + rows * e[1]
    return tuple(e)


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
    "row": r0, "col": c0, "arrange": "grid"|"row"}`` (grid: matrix m covers rows r0+8(m%2).., columns
    c0+(m//2)*16/element_bytes..; row: columns c0+m*16/element_bytes.. of rows r0..r0+7; see ldmatrix_arrangement;
    ``trans`` changes which registers receive the elements, not the rows read, so not the bank map);
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

    @cached_property
    def single(self) -> bool:
        """True when every lane reads one element (no vector to keep contiguous)."""
        return all(len(r) == 1 for r in self.raw)


def lane_offsets(layout: Any, element_bytes: int, access: dict[str, Any]) -> LaneOffsets:
    """The element offsets each lane of ``access`` reads through ``layout`` (its own swizzle included); a layout
    given as text or as a Layout / ComposedLayout, with a JSON access, is read from a cache keyed on both."""
    if type(layout) in (str, Layout, ComposedLayout):
        try:
            return _cached_lanes(layout, element_bytes, json.dumps(access, sort_keys=True))
        except TypeError:  # an access holding objects: read afresh
            pass
    return _read_lanes(layout, element_bytes, access)


def _read_lanes(layout: Any, element_bytes: int, access: dict[str, Any] | str) -> LaneOffsets:
    access = json.loads(access) if isinstance(access, str) else access
    lay = _as_layout(layout)
    if element_bytes not in (1, 2, 4, 8, 16):
        raise LayoutError(f"element_bytes must be 1, 2, 4, 8 or 16, not {element_bytes}")
    kind, per_thread, labels, items = _pattern(lay, access, element_bytes)
    outer = (lambda o: lay.layout_a(lay.offset + o)) if hasattr(lay, "layout_a") else (lambda o: o)
    raw = [[lay(v) if tag == "c" else outer(v) for tag, v in its] for its in items]
    return LaneOffsets(kind, per_thread, labels, raw)


_cached_lanes = bounded(1 << 20, "bank lane offsets")(_read_lanes)


def lane_bank_map(lanes: LaneOffsets, element_bytes: int, swizzle: Callable[[int], int] | None = None,
                  base: int = 0) -> BankAnalysis:
    """The bank map of ``lanes`` with ``swizzle`` (a callable on element offsets, or None) applied to every offset.

    Post-condition: as :func:`bank_access`; LayoutError when a lane's elements are not contiguous after the swizzle."""
    offsets, req = _request(lanes, element_bytes, swizzle, base)
    return replace(_model._phases(*req), coordinates=list(lanes.labels), element_offsets=offsets)


def lane_ways(lanes: LaneOffsets, element_bytes: int, swizzle: Callable[[int], int] | None = None) -> int:
    """``lane_bank_map(lanes, element_bytes, swizzle).ways`` (the same LayoutError), without the map's other parts:
    the swizzle searches test each candidate with it."""
    _, (addrs, access_bytes, _, per_phase) = _request(lanes, element_bytes, swizzle, 0)
    return max(_model.phase_costs(addrs, access_bytes, per_phase))


def conflict_free_map(lanes: LaneOffsets, element_bytes: int,
                      swizzle: Callable[[int], int] | None = None) -> BankAnalysis | None:
    """``lane_bank_map(lanes, element_bytes, swizzle)`` when it is conflict-free, else None (None too when the
    swizzle or a padding splits a vector access): the fix searches' test of each candidate."""
    try:
        return lane_bank_map(lanes, element_bytes, swizzle) if lane_ways(lanes, element_bytes, swizzle) == 1 else None
    except LayoutError:
        return None


def _request(lanes: LaneOffsets, element_bytes: int, swizzle: Any, base: int) -> tuple[list[int], tuple]:
    """Each lane's first element offset after ``swizzle``, and the checked request of their byte addresses
    (``algebra.hw.banks.request``); LayoutError when a lane's elements are not contiguous after the swizzle."""
    raw = lanes.raw
    if lanes.single:  # one element per lane: no vector to keep contiguous
        offsets = [o for (o,) in raw] if swizzle is None else [swizzle(o) for (o,) in raw]
    else:
        offsets = []
        for lane, r in enumerate(raw):
            offs = r if swizzle is None else [swizzle(o) for o in r]
            if any(b - a != 1 for a, b in zip(offs, offs[1:], strict=False)):
                raise LayoutError(f"lane {lane}: its {len(offs)} elements are at offsets {offs}, not contiguous, so "
                                  "they are not one vector access")
            offsets.append(offs[0])
    addrs = [base + element_bytes * o for o in offsets]  # from the tensor's pointer: below it where a stride is < 0
    if lanes.kind in ("ldmatrix", "stmatrix"):
        return offsets, _model.ldmatrix_request(addrs, len(addrs) // 8 if len(addrs) % 8 == 0 else 0, lanes.kind,
                                                relative=True)
    return offsets, _model.request(addrs, lanes.per_thread * element_bytes, relative=True)
