"""The Triton panels of the explorer and the TV atlas: a pasted TTGIR layout drawn with the grids the pages already
have (``app.services.grid.GridView``), beside its CuTe layout and F2 bases, through the same service functions as
``/api/triton/*`` (``app.services.triton``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from algebra import LayoutError
from app.budget import charge
from app.config import MAX_CELLS
from app.page_query import pick
from app.services import triton as S
from app.services.grid import GridView, offset_colours
from app.services.tv import tv_grid
from layoutlab.model import triton_tv_tile


@dataclass
class TritonTV:
    """What ``app.services.tv.tv_grid`` draws: cell (r, c) holds thread ``threads[r][c]`` (lane + 32 * warp)'s
    register ``values[r][c]`` (the first holder, when several threads hold one element)."""

    name: str
    operand: str
    tv_layout: str
    rows: int
    cols: int
    threads: list[list[int]]
    values: list[list[int]]
    num_threads: int
    sharers: int


def _rows_cols(shape: list[int]) -> tuple[int, int]:
    return (1, shape[0]) if len(shape) == 1 else (shape[0], shape[1])


def explorer_link(text: str, shape: str, bits: int) -> str:
    return "/?" + urlencode({"ttgir": text, "shape": shape, "bits": bits})


def tv_link(text: str, shape: str, bits: int, shared: str = "") -> str:
    q = {"tt_layout": text, "tt_shape": shape, "tt_bits": bits}
    if shared:
        q["tt_shared"] = shared
    return "/tv?" + urlencode(q) + "#triton-h"


#: the element widths the Triton panels' menus offer (those of /api/triton/*)
BITS = (8, 16, 32, 64)


def bits_of(text: str, field: str = "bits") -> int:
    """The panels' element-width field (blank: 16); LayoutError naming ``field`` for a width the menu does not offer
    (it was read as 16, pricing a store of other elements than the ones asked for)."""
    return pick(text, BITS, 16, field)


def explorer_panel(text: str, shape_text: str, bits_text: str) -> dict[str, Any]:
    """``{"v": layout_view, "cute": text to draw in the explorer or None, "grid": an offset grid when no CuTe text
    exists, "error", "permalink", "tv"}`` for ``/?ttgir=...``."""
    bits = bits_of(bits_text)
    out: dict[str, Any] = {"text": text, "shape": shape_text, "bits": bits, "v": None, "cute": None, "grid": None,
                           "error": None, "permalink": explorer_link(text, shape_text, bits),
                           "tv": tv_link(text, shape_text, bits)}
    try:
        shape = S.parse_shape(shape_text)
        v = S.layout_view(text, shape, bits)
    except LayoutError as exc:
        out["error"] = str(exc)
        return out
    out["v"] = v
    if v["shared"]:
        rows, cols = _rows_cols(v["shape"])
        if v["cute"] and len(v["shape"]) <= 2:
            out["cute"] = v["cute"]
        elif v.get("offsets") is not None and len(v["shape"]) <= 2 and rows * cols <= MAX_CELLS:
            offs = v["offsets"] if len(v["shape"]) == 2 else [v["offsets"]]  # rank 1: one row
            out["grid"] = GridView(id="grid-triton", rows=rows, cols=cols, text=offs, colour=offset_colours(offs),
                                   colour_mod=True, caption=f"{v['kind']} · element offsets")
    return out


def tv_panel(text: str, shape_text: str, bits_text: str, shared: str = "") -> dict[str, Any]:
    """``{"tt": {...}, "tv": TritonTV, "g": its grid, "c": conflicts_view or None, "c_error"}`` for the TV atlas."""
    bits = bits_of(bits_text, "tt_bits")
    tt: dict[str, Any] = {"text": text, "shape": shape_text, "bits": bits, "shared_text": shared, "v": None,
                          "error": None, "c": None, "c_error": None, "g": None, "view": None,
                          "permalink": tv_link(text, shape_text, bits, shared),
                          "explorer": explorer_link(text, shape_text, bits), "examples": S.EXAMPLES}
    if not text.strip():
        return {"tt": tt}
    try:
        shape = S.parse_shape(shape_text)
        v = S.layout_view(text, shape, bits)
        tt["v"] = v
        if not v["shared"]:
            tt["view"] = _tv_view(text, shape, bits, v)
            tt["g"] = tv_grid(tt["view"], "grid-triton-tv", by_warp=tt["view"].num_threads > 32)
    except LayoutError as exc:
        tt["error"] = str(exc)
        return {"tt": tt}
    if shared.strip() and not v["shared"]:
        try:
            tt["c"] = S.conflicts_view(text, shared, shape, bits)
        except LayoutError as exc:
            tt["c_error"] = str(exc)
    return {"tt": tt}


def _tv_view(text: str, shape: list[int], bits: int, v: dict[str, Any]) -> TritonTV:
    if len(shape) > 2:
        raise LayoutError("shape: the TV grid draws rank-1 and rank-2 tensors")
    rows, cols = _rows_cols(shape)
    if rows * cols > MAX_CELLS:
        raise LayoutError(f"shape: {rows * cols:,} cells is over the grid cap of {MAX_CELLS:,}")
    t = S.read(text, shape, bits, "layout")
    b = t.ll.bases
    nreg, nlane, nwarp = (len(b[k]) for k in ("register", "lane", "warp"))
    n = 1 << (nreg + nlane + nwarp)
    charge("linear point", n, "TV grid of a Triton layout")
    threads, values, holders = triton_tv_tile(t, rows, cols)
    return TritonTV(name=v["kind"], operand="registers", tv_layout=v["cute"] or "(no CuTe TV layout)", rows=rows,
                    cols=cols, threads=threads, values=values, num_threads=32 << nwarp, sharers=holders)
