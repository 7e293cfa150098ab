"""Tiled copies and tiled MMAs for the TV atlas: ``make_tiled_copy(atom, thr, val)`` and ``make_tiled_mma(atom,
atom_layout)`` (``algebra.atoms``) drawn as thread/value grids over their whole tile."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import algebra as A
from algebra import LayoutError, atoms
from algebra import inttuple as it
from algebra.core.memo import bounded
from app.budget import offsets
from app.config import MAX_CELLS
from app.services import code
from app.services.guard import guard
from app.services.layouts import parse_layout
from app.services.tv import _tile_of
from layoutlab.model import tiled_mma_tile

MAX_THREADS = 1024

#: (label, atom, thread layout, value layout, element bits) for make_tiled_copy
COPY_PRESETS: list[tuple[str, str, str, str, int]] = [
    ("cp.async 16B: 128 threads, 8 fp16 each", "SM80_CP_ASYNC_CACHEALWAYS_16B", "(16,8):(8,1)", "(1,8):(8,1)", 16),
    ("cp.async 16B, column-major threads", "SM80_CP_ASYNC_CACHEALWAYS_16B", "(32,4):(1,32)", "(8,1):(1,8)", 16),
    ("128-bit universal copy, fp32", "UniversalCopy_128b", "(8,16):(16,1)", "(1,4):(4,1)", 32),
]
#: (label, atom, atom layout) for make_tiled_mma
MMA_PRESETS: list[tuple[str, str, str]] = [
    ("m16n8k16, 2x2 warps", "SM80_16x8x16_F32F16F16F32_TN", "(2,2,1)"),
    ("m16n8k16, 4x1 warps", "SM80_16x8x16_F32F16F16F32_TN", "(4,1,1)"),
    ("m16n8k8, 1x2 warps", "SM80_16x8x8_F32F16F16F32_TN", "(1,2,1)"),
]


@dataclass
class TiledView:
    """Owner of each element of a tiled copy's / MMA's tile: ``threads[m][n]`` holds value ``values[m][n]``."""

    kind: str
    name: str
    operand: str
    tv_layout: str
    rows: int
    cols: int
    threads: list[list[int]]
    values: list[list[int]]
    num_threads: int
    num_values: int
    tile: str
    cpp: str = ""
    dsl: str = ""
    note: str = ""


def _threads(n: int, what: str) -> None:
    if n > MAX_THREADS:
        raise LayoutError(f"{what}: {n:,} threads exceeds the cap of {MAX_THREADS:,}")


def _cells(rows: int, cols: int, what: str) -> None:
    if rows * cols > MAX_CELLS:
        raise LayoutError(f"{what}: a {rows}x{cols} tile exceeds the render cap of {MAX_CELLS:,} cells")


@bounded(8 << 20, "tiled copy views")
def tiled_copy_view(atom: str, thr_text: str, val_text: str, element_bits: int) -> TiledView:
    """``make_tiled_copy(Copy_Atom<atom, T>{}, thr, val)``: its TV layout over the tiler, drawn column-major.

    Post-condition: cell (m, n) of the ``tiler`` tile is held by thread ``threads[m][n]`` as its value
    ``values[m][n]``, i.e. ``tv_layout(t, v) == m + rows * n``."""
    thr = parse_layout(thr_text, "thread layout", plain=True, offsets=True)
    val = parse_layout(val_text, "value layout", plain=True, offsets=True)
    _threads(A.size(thr), "thread layout")
    _cells(A.size(thr) * A.size(val), 1, "tiled copy")
    with guard("make_tiled_copy"):
        tc = atoms.make_tiled_copy(atom, thr_layout=thr, val_layout=val, element_bits=element_bits)
    tiler = tuple(tc.tiler)
    rows, cols = (1, tiler[0]) if len(tiler) == 1 else (tiler[0], it.product(tiler[1:]))
    _cells(rows, cols, "tiled copy")
    with guard("make_tiled_copy"):
        threads, values, _ = _tile_of(tc.tv_layout, rows, cols, row_major=False)
    cpp, dsl = code.tiled_copy_code(tc.atom.name, element_bits, thr, val)
    return TiledView(kind="copy", name=tc.atom.name, operand="tile", tv_layout=str(tc.tv_layout), rows=rows,
                     cols=cols, threads=threads, values=values, num_threads=tc.num_threads,
                     num_values=A.size(tc.tv_layout[1]), tile=" x ".join(map(str, tiler)), cpp=cpp, dsl=dsl)


@bounded(8 << 20, "tiled mma views")
def tiled_mma_view(atom: str, layout_text: str, operand: str) -> TiledView:
    """``make_tiled_mma(atom{}, atom_layout)``: each thread's ``partition_<operand>`` of the whole M x K / N x K /
    M x N tile (column-major), so cell (m, n) names the thread holding it and its index in that thread's fragment."""
    lay = parse_layout(layout_text, "atom layout", plain=True, offsets=True)
    op = operand.upper()
    if op not in ("A", "B", "C"):
        raise LayoutError(f"operand of a tiled MMA is A, B or C, not {operand!r}")
    if A.size(lay) > 64:
        raise LayoutError(f"atom layout: {A.size(lay)} atoms exceeds the cap of 64")
    with guard("make_tiled_mma"):
        tm = atoms.make_tiled_mma(atom, lay)
        m, n, k = (tm.tile_size_mnk(i) for i in range(3))
    _threads(tm.num_threads, "tiled MMA")
    rows, cols = {"A": (m, k), "B": (n, k), "C": (m, n)}[op]
    _cells(rows, cols, "tiled MMA")
    with guard("make_tiled_mma"):
        threads, values, holders = tiled_mma_tile(tm, op, offsets)
    shared = max(max(row) for row in holders)
    note = (f"each element of {op} is held by {shared} threads (the atoms along "
            f"{'N' if op == 'A' else 'M'} read the same {op}); the lowest thread is shown") if shared > 1 else ""
    nvals = max((v for row in values for v in row), default=-1) + 1
    cpp, _ = code.tiled_mma_code(tm.atom.name, lay)
    return TiledView(kind="mma", name=tm.atom.name, operand=op, tv_layout=str(tm.thr_layout_vmnk), rows=rows,
                     cols=cols, threads=threads, values=values, num_threads=tm.num_threads, num_values=nvals,
                     tile=f"{m} x {n} x {k}", cpp=cpp, note=note)


def tiled_view(kind: str, atom: str, thr: str, val: str, bits: int, layout: str, operand: str) -> TiledView:
    """The tiled copy (kind "copy") or tiled MMA (kind "mma") of the TV atlas form."""
    if kind == "mma":
        return tiled_mma_view(atom.strip(), layout.strip(), operand.strip() or "C")
    return tiled_copy_view(atom.strip(), thr.strip(), val.strip(), bits)


def tiled_json(v: TiledView) -> dict[str, Any]:
    return {"kind": v.kind, "atom": v.name, "operand": v.operand, "tile": v.tile, "tv_layout": v.tv_layout,
            "rows": v.rows, "cols": v.cols, "num_threads": v.num_threads, "threads": v.threads, "values": v.values}
