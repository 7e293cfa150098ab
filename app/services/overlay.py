"""The workbench's static reading aids for divides and products: "A highlighted by B" (every cell of A coloured by
the tile of B it falls in; for products every cell of the result coloured by the copy of A it belongs to), and notes
that say why a result's size differs from A's.

Tiles come from CuTe's own zipped forms: ``zipped_divide(A, B)(k, r)`` is element k of tile r, and
``zipped_product(A, B)(k, r)`` element k of copy r; the other divides / products hold the same offsets in another
arrangement, so the offset -> r map colours any of them.
"""

from __future__ import annotations

from math import prod
from typing import Any

import algebra as A
from app.budget import offsets
from app.config import MAX_CELLS
from app.services.grid import PALETTE, GridView
from app.services.guard import guard
from app.services.layouts import describe_layout, layout_grid

DIVIDES = ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide")
PRODUCTS = ("logical_product", "zipped_product", "tiled_product", "blocked_product", "raked_product")


def _tile_of_offset(zipped: Any) -> dict[int, int] | None:
    """offset -> r for a zipped layout ((k), (r)): the first r whose tile holds the offset; None (not walked) when it
    has more than MAX_CELLS cells (a tiler bigger than A makes the divide as big as the tiler: up to 2^40)."""
    if A.size(zipped) > MAX_CELLS:
        return None
    inner = A.size(zipped[0])
    out: dict[int, int] = {}
    for idx, o in enumerate(offsets(zipped, "tile overlay")):
        out.setdefault(o, idx // inner)
    return out


def _recoloured(text: str, grid_id: str, tile: dict[int, int], caption: str) -> GridView | None:
    view = describe_layout(text, for_grid=True)
    g = layout_grid(view, grid_id)
    if g is None or view.offsets is None:
        return None
    rows = [[tile.get(o, -1) for o in row] for row in view.offsets]
    g.text = [[r if r >= 0 else "·" for r in row] for row in rows]
    g.colour = [[r % PALETTE if r >= 0 else -1 for r in row] for row in rows]
    g.colour_mod = False
    g.meta = {k: v for k, v in g.meta.items() if k != "hover"}
    g.meta["colour_name"] = "by tile"
    g.caption = caption
    return g


def highlight_panel(res: Any) -> tuple[str, GridView | None, str] | None:
    """(title, grid, message) of the "A highlighted by B" panel for a divide or product, else None."""
    if res.op not in DIVIDES + PRODUCTS or len(res.parsed) < 2:
        return None
    a, b = res.parsed[0], res.parsed[1]
    if not hasattr(a, "shape") or A.size(a) > MAX_CELLS:
        return None
    try:
        with guard("tiles"):
            if res.op in DIVIDES:
                tile = _tile_of_offset(A.zipped_divide(a, b))
                if tile is None:
                    return ("A highlighted by B", None, f"the divide has more than the render cap of {MAX_CELLS:,} "
                                                        "cells (the tiler is bigger than A): no tiles drawn")
                g = _recoloured(str(a), "grid-tiles", tile, f"{a} · each cell: which tile of B holds it")
                return ("A highlighted by B: the tile of each element (zipped_divide's mode 1)", g,
                        "A is over the render cap")
            if A.size(A.parse(res.result)) > MAX_CELLS:  # no grid: do not walk its cells
                return ("the result by copy of A", None, "the result is over the render cap")
            tile = _tile_of_offset(A.zipped_product(a, b))
            if tile is None:
                return ("the result by copy of A", None, "the result is over the render cap")
            g = _recoloured(res.result, "grid-tiles", tile, f"{res.result} · each cell: which copy of A")
            return ("the result by copy of A: B's coordinate of each element (zipped_product's mode 1)", g,
                    "the result is over the render cap")
    except (A.LayoutError, ValueError, TypeError):
        return None


def _tile_size(m: Any) -> int:
    """The size of one mode of a tiler: a layout's size, an int, or the product over a nested tiler ``(3, 4:1)``."""
    if isinstance(m, tuple):
        return prod(_tile_size(x) for x in m if x is not None)
    return A.size(m) if hasattr(m, "shape") else int(m)


def op_notes(res: Any) -> list[str]:
    """Why a divide's result has a different number of cells than A (the tiler does not divide A, so the last tile
    reaches past A's end), and similar size surprises; empty when there is nothing to say."""
    if res.op not in DIVIDES or len(res.parsed) < 2 or not hasattr(res.parsed[0], "shape"):
        return []
    a = res.parsed[0]
    try:
        r = A.parse(res.result)
    except A.LayoutError:
        return []
    na, nr = A.size(a), A.size(r)
    if nr == na:
        return []
    b = res.parsed[1]
    sizes = [_tile_size(m) for m in (b if isinstance(b, tuple) else (b,)) if m is not None]
    try:  # a ``_`` tiler mode over a mode the divide leaves rank 1: no (tile, rest) pair to count, and no note
        tile_size = A.size(A.zipped_divide(a, b)[0])
    except A.LayoutError:
        return []
    tiles = -(-nr // max(1, tile_size))
    reason = (f"the tile size {sizes[0]} does not divide size(A) = {na}" if len(sizes) == 1 else
              f"the tiler ({', '.join(map(str, sizes))}) does not divide A's modes")
    return [f"{res.op} of a {na}-cell A draws {nr} cells: {reason}, so the complement rounds the number of tiles up "
            f"({tiles} tiles) and the last tile reaches past A's end. "
            + (f"Those {nr - na} extra cells are" if nr - na != 1 else "That extra cell is") + " A evaluated "
            "beyond its domain (its last mode's stride continued), as CuTe does; size(A) must be a multiple of the "
            "tile for every cell to be one of A's."]
