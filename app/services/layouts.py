"""Layout facts and the rank-2 offset table: one service used by ``POST /api/layout`` and the explorer page."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

from markupsafe import Markup

import algebra as A
from algebra import LayoutError
from algebra import inttuple as it
from algebra.core.memo import BoundedCache
from app.budget import cap_of, cell_kind, charge, offsets
from app.config import MAX_CELLS, MAX_SIZE
from app.services import code
from app.services.grid import GridView
from app.services.guard import guard
from layoutlab import model
from layoutlab.model import (  # noqa: F401 - the names the pages and tests know them by
    HOVER_BYTES,
    LayoutView,
    coord_texts,
    is_composed,
    pow2_text,
    table_shape,
)


def parse_layout(text: str, what: str = "layout", plain: bool = False, offsets: bool = False) -> Any:
    """Parse CuTe notation (a Layout or a swizzled ComposedLayout) and apply the depth cap.

    Raises LayoutError (-> 422) on malformed text or a shape nested deeper than MAX_DEPTH; with ``plain``, on a
    swizzled layout; with ``offsets``, on basis strides (1@0: the layout maps to coordinates, not offsets)."""
    with guard(what):
        layout = model.parse_layout(text, what)
    if plain and is_composed(layout):
        raise LayoutError(f"{what}: {layout} is swizzled; this takes a plain shape:stride layout")
    inner = layout.layout_b if is_composed(layout) else layout
    if offsets and not all(isinstance(d, int) for d in it.flatten(inner.stride)):
        raise LayoutError(f"{what}: {layout} has basis (E) strides such as 1@0 (it maps to coordinates); this "
                          "needs integer offsets")
    return layout


def _fill_table(view: LayoutView, layout: Any) -> None:
    """``layoutlab.model.fill_table`` with the request's budgeted enumeration."""
    model.fill_table(view, layout, offsets)


def _fill_hover(view: LayoutView, layout: Any) -> None:
    """``layoutlab.model.fill_hover`` under the request's work cap on rendered bytes."""
    model.fill_hover(view, layout, offsets, cap_of("rendered byte"), charge)


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


def _describe(text: str, table_cap: int = MAX_SIZE) -> LayoutView:
    """Facts and (under the caps) the offset table of the layout written ``text``.

    Post-conditions: ``offsets[i][j] == L(i + rows * j)``; ``offsets`` is None (with a note naming the cap) when
    size(L) > table_cap (MAX_SIZE, or MAX_CELLS for a grid); injective/compact are None when not enumerated."""
    layout = parse_layout(text)
    n = A.size(layout)
    view = model.facts(layout)
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
    model.finish(view)
    if view.coords is not None:
        return view
    if n > MAX_CELLS:
        view.note = f"size {pow2_text(n)} exceeds the render cap of {MAX_CELLS:,} cells: the grid is not drawn"
    return view


def layout_grid(view: LayoutView, grid_id: str, hover: str | None = None, colour: str = "offset") -> GridView | None:
    """The explorer grid of ``view`` (None when there is no table or it is over the render cap):
    ``layoutlab.model.layout_grid`` drawn as a page's GridView."""
    return model.layout_grid(view, grid_id, hover, colour, cls=GridView)


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
