"""Layout facts and the rank-2 offset table: one service used by ``POST /api/layout`` and the explorer page."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

import algebra as A
from algebra import LayoutError
from algebra import inttuple as it
from algebra.core.memo import BoundedCache
from app.budget import cap_of, cell_kind, charge, offsets
from app.config import MAX_CELLS, MAX_DEPTH, MAX_NESTING, MAX_SIZE, MAX_TEXT, nesting_depth
from app.services import code
from app.services.grid import GridView, boundary_levels, offset_colours
from app.services.guard import guard


def pow2_text(n: int) -> str:
    """``2^k`` for exact powers of two, otherwise the number with thousands separators."""
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else f"{n:,}"


def parse_layout(text: str, what: str = "layout", plain: bool = False, offsets: bool = False) -> Any:
    """Parse CuTe notation (a Layout or a swizzled ComposedLayout) and apply the depth cap.

    Raises LayoutError (-> 422) on malformed text or a shape nested deeper than MAX_DEPTH; with ``plain``, on a
    swizzled layout; with ``offsets``, on basis strides (1@0: the layout maps to coordinates, not offsets)."""
    text = (text or "").strip()
    if not text:
        raise LayoutError(f"{what}: empty input; type a layout such as (4,8):(8,1)")
    if len(text) > MAX_TEXT:
        raise LayoutError(f"{what}: {len(text):,} characters exceeds the cap of {MAX_TEXT:,}")
    if nesting_depth(text) > MAX_NESTING:
        raise LayoutError(f"{what}: nested {nesting_depth(text)} deep, over the nesting cap of {MAX_NESTING}")
    try:
        with guard(what):
            layout = A.parse(text)
    except LayoutError as exc:
        msg = str(exc)
        raise LayoutError(msg if msg.startswith(what) else f"{what}: {msg}") from None
    if not hasattr(layout, "shape") or not callable(layout):
        raise LayoutError(f"{what}: {text!r} is not a layout (a swizzle or tiler alone has no grid)")
    if A.depth(layout) > MAX_DEPTH:
        raise LayoutError(f"{what}: depth {A.depth(layout)} exceeds the cap of {MAX_DEPTH}")
    if plain and is_composed(layout):
        raise LayoutError(f"{what}: {layout} is swizzled; this takes a plain shape:stride layout")
    inner = layout.layout_b if is_composed(layout) else layout
    if offsets and not all(isinstance(d, int) for d in it.flatten(inner.stride)):
        raise LayoutError(f"{what}: {layout} has basis (E) strides such as 1@0 (it maps to coordinates); this "
                          "needs integer offsets")
    return layout


def is_composed(layout: Any) -> bool:
    return hasattr(layout, "layout_b")


@dataclass
class LayoutView:
    """Everything the explorer and ``/api/layout`` show for one layout."""

    layout: str
    size: int
    cosize: int
    rank: int
    depth: int
    injective: bool | None = None
    compact: bool | None = None
    rows: int = 0
    cols: int = 0
    offsets: list[list[int]] | None = None
    coords: list[list[str]] | None = None  # a coordinate layout (basis strides): L(i, j) as "(x,y)" text
    note: str | None = None
    drawn: bool = True  # False when the grid's hover data is over the work cap (note says so)
    row_crd: list[str] = field(default_factory=list)
    col_crd: list[list[str]] = field(default_factory=list)
    row_off: list[int] = field(default_factory=list)
    col_off: list[list[int]] = field(default_factory=list)
    row_leaves: tuple[int, ...] = ()
    col_leaves: tuple[int, ...] = ()
    swizzle: str | None = None
    cpp: str = ""
    dsl: str = ""
    formula: str = ""
    #: (lowest, highest) offset, from the strides alone; None for coordinate layouts
    offset_range: tuple[int, int] | None = None
    #: L(size - 1) + 1, pycute's cosize: it differs from CuTe's (the width of offset_range) when a stride is negative
    last_plus_one: int | None = None

    def to_json(self) -> dict[str, Any]:
        cells = self.coords if self.coords is not None else self.offsets
        table = None if cells is None else {"rows": self.rows, "cols": self.cols, "offsets": cells}
        return {"layout": self.layout, "size": self.size, "cosize": self.cosize, "rank": self.rank,
                "depth": self.depth, "injective": self.injective, "compact": self.compact, "table": table,
                "note": self.note, "offset_range": list(self.offset_range) if self.offset_range else None,
                "last_plus_one": self.last_plus_one}


def _modes(layout: Any) -> list[Any]:
    """Top-level modes of a plain layout (a rank-1 layout is its own single mode)."""
    return [layout[k] for k in range(A.rank(layout))] if it.is_tuple(layout.shape) else [layout]


def table_shape(layout: Any) -> tuple[int, int]:
    """(rows, cols) of the rank-2 view: rank <= 1 is one row; otherwise mode 0 by the product of modes 1.."""
    shape = layout.shape
    if not it.is_tuple(shape) or len(shape) <= 1:
        return 1, it.product(shape)
    return it.product(shape[0]), it.product(shape[1:])


def _fill_table(view: LayoutView, layout: Any) -> None:
    """offsets[i][j] = L(i + rows * j), and the mode leaves along rows and columns (for boundaries)."""
    plain = layout.layout_b if is_composed(layout) else layout
    rows, cols = table_shape(plain)
    components = None if is_composed(layout) else _coordinate_components(plain)
    if components is not None:  # coordinates (basis strides), one integer layout per entry of the coordinate
        coshape, leaves = components
        charge("coordinate cell", A.size(plain), "layout table")
        columns = [offsets(leaf, "layout table", prepaid=True) for leaf in leaves]  # within the charge above
        template = _template(coshape)
        texts = [template.format(*c) for c in zip(*columns, strict=True)]
        # the index of each coordinate in coshape (colex): one more integer layout, its strides the entries' weights
        weights = it.flatten(it.prefix_product(coshape))
        index = [sum(w * d for w, d in zip(weights, ds, strict=True))
                 for ds in zip(*(it.flatten(leaf.stride) for leaf in leaves), strict=True)]
        shape = plain.shape
        flat = offsets(A.Layout(shape, it.unflatten(tuple(index), shape) if isinstance(shape, tuple) else index[0]),
                       "layout table", prepaid=True)
        view.coords = _rows(texts, rows)
        view.offsets = _rows(flat, rows)
        view.rows, view.cols = rows, cols
        row_mode, col_modes = _split_modes(view, plain)
        view.row_leaves = it.flatten(row_mode.shape) if row_mode is not None else ()
        view.col_leaves = it.flatten(tuple(m.shape for m in col_modes))
        return
    flat = offsets(layout, "layout table")  # L(k) in 1-D (column-major) order, swizzle included
    if any(type(c) is not int for c in flat):  # coordinates (basis strides): text, coloured by their index in coshape
        coshape = A.coshape(plain)
        crds = [_in_coshape(c, coshape) for c in flat]  # 0@0, 3@0 (one basis), (1,2) (several): one form
        view.coords = [[it.to_str(c) for c in crds[i::rows]] for i in range(rows)]
        flat = [it.crd2idx(c, coshape) for c in crds]
    view.offsets = [flat[i::rows] for i in range(rows)]
    view.rows, view.cols = rows, cols
    row_mode, col_modes = _split_modes(view, plain)
    view.row_leaves = it.flatten(row_mode.shape) if row_mode is not None else ()
    view.col_leaves = it.flatten(tuple(m.shape for m in col_modes))


def _coordinate_components(layout: Any, coshape: Any = None) -> tuple[Any, list[Any]] | None:
    """For a layout whose stride leaves are scaled bases ``v@m...`` (or 0) that each name one entry of its coshape:
    (coshape, one integer layout per entry of the flattened coshape, ``layout``'s shape with stride ``v`` where the
    basis names that entry, else 0). Then entry k of the coordinate L(i) is ``leaves[k](i)``: the table is enumerated
    with integer arithmetic, not one arithmetic tuple per cell. None for any other layout (integer strides, mixed or
    negative strides, a basis naming a whole nested mode): the general path handles those. ``coshape``: the
    coordinates' shape (default: the layout's own; a mode of a layout takes its layout's)."""
    strides = it.flatten(layout.stride)
    if all(type(d) is int for d in strides):
        return None
    coshape = A.coshape(layout) if coshape is None else coshape
    if not isinstance(coshape, tuple):
        return None
    positions: dict[tuple, int] = {}

    def walk(shape: Any, path: tuple) -> None:
        for k, sub in enumerate(shape):
            if isinstance(sub, tuple):
                walk(sub, (*path, k))
            else:
                positions[(*path, k)] = len(positions)

    walk(coshape, ())
    per_leaf = [[0] * len(strides) for _ in positions]
    for j, d in enumerate(strides):
        if type(d) is int:
            if d != 0:
                return None
            continue
        path, value = getattr(d, "mode_path", None), getattr(d, "value", None)
        if path is None or type(value) is not int or value < 0 or tuple(path) not in positions:
            return None
        per_leaf[positions[tuple(path)]][j] = value
    shape = layout.shape
    return coshape, [A.Layout(shape, it.unflatten(tuple(row), shape)) if isinstance(shape, tuple)
                     else A.Layout(shape, row[0]) for row in per_leaf]


def _rows(cells: list, rows: int) -> list[list]:
    """The column-major list ``cells`` as ``rows`` lists: ``out[i][j] == cells[i + rows * j]``."""
    cols = len(cells) // rows if rows else 0
    if cols < rows:  # few columns: one zip over the columns
        return [list(r) for r in zip(*(cells[j * rows:(j + 1) * rows] for j in range(cols)), strict=True)]
    return [cells[i::rows] for i in range(rows)]


def _template(coshape: Any) -> str:
    """``str.format`` template printing a flat list of entries as a coordinate of ``coshape``: ``"({},({},{}))"``."""
    if not isinstance(coshape, tuple):
        return "{}"
    return "(" + ",".join(_template(s) for s in coshape) + ")"


def _in_coshape(value: Any, coshape: Any) -> Any:
    """The coordinate of the codomain a basis-strided layout maps to, shaped as ``coshape`` (zeros where the value
    has no component): ``3@0`` in coshape ``(4,1)`` is ``(3,0)``, and a plain int (a layout whose strides all fell
    on size-1 modes) is ``0`` in every mode."""
    crd = value.as_tuple() if hasattr(value, "as_tuple") else value

    def shaped(c: Any, shape: Any) -> Any:
        if not isinstance(shape, tuple):
            return c
        if not isinstance(c, tuple):
            c = (c,) if c else ()
        return tuple(shaped(c[k], shape[k]) if k < len(c) else shaped(0, shape[k]) for k in range(len(shape)))

    return shaped(crd, coshape)


def _split_modes(view: LayoutView, plain: Any) -> tuple[Any, list[Any]]:
    """(the row mode or None for rank <= 1, the column modes) of the rank-2 view."""
    shape = plain.shape
    if view.rank <= 1:
        return None, [plain[0]] if it.is_tuple(shape) and len(shape) == 1 else [plain]
    return plain[0], _modes(plain)[1:]


def coord_texts(shape: Any) -> list[str]:
    """The natural coordinate of each 1-D index of ``shape`` as text: ``coord_texts(s)[k] ==
    it.to_str(it.idx2crd(k, s))``, built as products of the modes' lists (mode 0 fastest) instead of one idx2crd per
    index (a 128x128 column mode took a quarter of a second)."""
    if not it.is_tuple(shape):
        return [str(k) for k in range(shape)]
    parts = [coord_texts(s) for s in reversed(shape)]
    return ["(" + ",".join(reversed(p)) + ")" for p in itertools.product(*parts)]


def _mode_table(mode: Any, coshape: Any = None) -> tuple[list[str], list[int]]:
    """(natural coordinate as text, offset) of each 1-D coordinate of one mode. A mode of a coordinate layout whose
    coshape is ``coshape``: its contributions as coordinates of that coshape, computed with integer arithmetic."""
    crd = coord_texts(mode.shape)
    components = _coordinate_components(mode, coshape) if coshape is not None else None
    if components is not None:
        columns = [offsets(leaf, "hover coordinates", prepaid=True) for leaf in components[1]]
        template = _template(coshape)
        return crd, [template.format(*c) for c in zip(*columns, strict=True)]
    off = offsets(mode, "hover coordinates", prepaid=True)  # within the table's charge: rows + cols <= cells + 1
    return crd, off if not off or type(off[0]) is int else [str(o) for o in off]  # coordinates as text


#: Bytes of page each column-mode entry of the hover data costs (its coordinate and offset, as JSON).
HOVER_BYTES = 8


def _fill_hover(view: LayoutView, layout: Any) -> None:
    """Per-row / per-column coordinates and each mode's contribution, for the hover cards of a drawn grid.

    Post-condition: ``row_off[i] + sum(col_off[j]) == L(i, j)`` before any swizzle; ``col_crd[j][k]`` is the
    natural coordinate of column j in column mode k (column-major over the column modes)."""
    plain = layout.layout_b if is_composed(layout) else layout
    row_mode, col_modes = _split_modes(view, plain)
    coshape = A.coshape(plain) if view.coords is not None else None
    if row_mode is not None:
        view.row_crd, view.row_off = _mode_table(row_mode, coshape)
    else:
        view.row_off, view.row_crd = [0], ["0"]
    tables = [_mode_table(m, coshape) for m in col_modes]
    sizes = [len(t[0]) for t in tables]
    if len(tables) == 1 and sizes[0] == view.cols:  # one column mode (every rank <= 2 layout): no mixed radix
        view.col_crd = [[c] for c in tables[0][0]]
        view.col_off = [[o] for o in tables[0][1]]
        return
    entries, cap = view.cols * len(tables), cap_of("rendered byte")
    if HOVER_BYTES * entries > cap:  # a fixed bound, so the view stays cacheable
        view.drawn = False
        view.note = (f"the hover data of {entries:,} column-mode entries ({view.cols:,} columns x {len(tables)} "
                     f"column modes) is over the work cap of {cap:,} rendered bytes: the grid is not drawn")
        return
    charge("rendered byte", HOVER_BYTES * entries, "hover cards of the column modes")
    # column j is mixed radix over the column modes, mode 0 fastest: itertools.product varies its last list fastest
    view.col_crd = [list(reversed(p)) for p in itertools.product(*[c for c, _ in reversed(tables)])]
    view.col_off = [list(reversed(p)) for p in itertools.product(*[o for _, o in reversed(tables)])]


#: Views cached by their text, least recently used out first, at most LAYOUT_CACHE_BYTES in all (estimated by
#: ``algebra.core.memo.approx_bytes``: a view of size 2^16 holds a ~3 MB table, an unenumerated one a few KB of code and
#: text, so neither a count of entries nor of cells bounds the memory).
LAYOUT_CACHE_BYTES = 32 << 20
_cache = BoundedCache(LAYOUT_CACHE_BYTES, "layout views")


def describe_layout(text: str, for_grid: bool = False) -> LayoutView:
    """``_describe(text)``, cached (see LAYOUT_CACHE_BYTES); a refusal raises LayoutError and is not cached.

    ``for_grid``: the caller only draws the grid, so a layout over the render cap (MAX_CELLS) is not enumerated at
    all (its view has the facts and the note, no table): the workbench does not walk 2^20 cells to say "not drawn"."""
    key = (text, "grid") if for_grid else text
    hit = _cache.get(key)
    if hit is not None:
        return hit
    with guard("layout"):
        view = _describe(text, MAX_CELLS if for_grid else MAX_SIZE)
    _cache.put(key, view)
    return view


def _fill_range(view: LayoutView, layout: Any) -> None:
    """``offset_range`` and ``last_plus_one`` of a layout with integer strides (O(rank), nothing enumerated)."""
    fs, fd = it.flatten(layout.shape), it.flatten(layout.stride)
    if not all(type(d) is int and type(s) is int for s, d in zip(fs, fd, strict=True)):
        return
    lo = sum((s - 1) * d for s, d in zip(fs, fd, strict=True) if d < 0)
    hi = sum((s - 1) * d for s, d in zip(fs, fd, strict=True) if d > 0)
    view.offset_range = (lo, hi)
    view.last_plus_one = sum((s - 1) * d for s, d in zip(fs, fd, strict=True)) + 1


def _describe(text: str, table_cap: int = MAX_SIZE) -> LayoutView:
    """Facts and (under the caps) the offset table of the layout written ``text``.

    Post-conditions: ``offsets[i][j] == L(i + rows * j)``; ``offsets`` is None (with a note naming the cap) when
    size(L) > table_cap (MAX_SIZE, or MAX_CELLS for a grid); injective/compact are None when not enumerated."""
    layout = parse_layout(text)
    n = A.size(layout)
    view = LayoutView(layout=str(layout), size=n, cosize=A.cosize(layout), rank=A.rank(layout),
                      depth=A.depth(layout))
    if is_composed(layout):
        view.swizzle = str(layout.layout_a)
    else:
        _fill_range(view, layout)
    view.cpp, view.dsl = code.layout_code(layout)
    view.formula = code.index_formula(layout)
    kind = cell_kind(layout)
    cap = min(MAX_SIZE, cap_of(kind))  # fixed, so the view can be cached
    if n > cap:
        view.note = (f"size {pow2_text(n)} exceeds the enumeration cap of {pow2_text(cap)} {kind}s: "
                     "the table is not enumerated (scalar facts only)")
        return view
    if n > table_cap:
        view.note = f"size {pow2_text(n)} exceeds the render cap of {MAX_CELLS:,} cells: the grid is not drawn"
        return view
    _fill_table(view, layout)
    if n <= MAX_CELLS:
        _fill_hover(view, layout)
    flat = {v for row in view.offsets or [] for v in row}
    view.injective = len(flat) == n
    if view.coords is not None:  # compact: every coordinate of the codomain (its coshape) is reached once
        view.compact = view.injective and n == view.cosize
        return view
    view.compact = view.injective and min(flat, default=0) == 0 and max(flat, default=-1) == n - 1
    if n > MAX_CELLS:
        view.note = f"size {pow2_text(n)} exceeds the render cap of {MAX_CELLS:,} cells: the grid is not drawn"
    return view


def layout_grid(view: LayoutView, grid_id: str, hover: str | None = None, colour: str = "offset") -> GridView | None:
    """The explorer grid of ``view`` (None when there is no table or it is over the render cap)."""
    if view.offsets is None or not view.drawn or view.rows * view.cols > MAX_CELLS:
        return None
    wide = any(v >= 10_000 or v <= -1000 for row in view.offsets for v in (row[0], row[-1]))
    meta: dict[str, Any] = {"rank": view.rank, "rows": view.rows, "rowCrd": view.row_crd, "rowOff": view.row_off,
                            "colCrd": view.col_crd, "colOff": view.col_off}
    if hover:
        meta["hover"] = hover
    if view.swizzle:
        meta["swizzle"] = view.swizzle
    return GridView(
        id=grid_id, rows=view.rows, cols=view.cols, text=view.coords or view.offsets,
        colour=offset_colours(view.offsets) if colour == "offset" else None,
        row_levels=boundary_levels(view.row_leaves, view.rows), col_levels=boundary_levels(view.col_leaves, view.cols),
        meta=meta, caption=view.layout, css="wide" if wide or view.coords else "",
        colour_mod=colour == "offset" and view.coords is None)


def cells_by_offset(view: LayoutView, limit: int = 2048) -> list[tuple[int, str, int]] | None:
    """For each offset 0..cosize-1 (up to ``limit``): (offset, "(i,j)" of the first cell holding it or "", count).
    Where a negative stride reaches below 0 the strip runs from the lowest offset to the highest (a range as wide as
    CuTe's cosize), so every cell is listed and no box past the highest offset is shown as a hole."""
    if view.offsets is None or view.coords is not None or view.cosize > limit or view.size > MAX_CELLS:
        return None  # (a coordinate layout has no 1-D offsets to list)
    cols = view.cols
    flat = list(itertools.chain.from_iterable(view.offsets))  # row by row
    count = Counter(flat)
    first = dict(zip(reversed(flat), range(len(flat) - 1, -1, -1), strict=True))  # the first cell of each offset
    lo = min(flat, default=0)
    span = range(lo, max(flat) + 1) if lo < 0 else range(max(view.cosize, 0))
    where = ["" if (k := first.get(v)) is None else f"{k // cols},{k % cols}" for v in span]
    return list(zip(span, where, map(count.__getitem__, span), strict=True))  # a Counter answers 0 when missing


def strip_html(strip: list[tuple[int, str, int]] | None) -> Markup:
    """The "cells by offset" strip of :func:`cells_by_offset` as one HTML string (a Jinja loop over 2,048 boxes was
    most of an explorer page's render time): per offset ``<span class="p{v % 32} | multi p.. | gap" title="offset v:
    n cell(s)">v<br>i,j</span>``."""
    return Markup("".join([
        f'<span class="p{v % 32}" title="offset {v}: 1 cell">{v}<br>{where}</span>' if count == 1 else
        f'<span class="gap" title="offset {v}">{v}<br>·</span>' if not count else
        f'<span class="multi p{v % 32}" title="offset {v}: {count} cells">{v}<br>{where}</span>'
        for v, where, count in strip or ()]))
