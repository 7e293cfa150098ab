"""The TV atlas's Hopper panel: GMMA shared-memory layout atoms drawn as grids, the TMA descriptor builder
(``cuTensorMapEncodeTiled`` arguments and the rule that fails) and the wgmma descriptor fields
(``algebra.hw.hopper``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from algebra import LayoutError, hopper
from algebra import inttuple as it
from app.services.grid import GridView, boundary_levels
from app.services.guard import guard
from app.services.layouts import describe_layout, parse_layout

MAJORS = ("K", "MN")
SPANS = (16, 32, 64, 128)
BITS = (8, 16, 32)
DTYPE_OF_BITS = {8: "UINT8", 16: "FLOAT16", 32: "FLOAT32"}
TMA_SWIZZLES = ("atom", "NONE", "32B", "64B", "128B")


@dataclass
class AtomView:
    atom: Any
    grid: GridView
    cpp_name: str


def atom_view(major: str, span: int, bits: int, grid_id: str = "grid-smem") -> AtomView:
    """The atom ``GMMA::Layout_<major>_<SW..>_Atom<T>`` as its grid of element offsets, coloured by the 4-byte bank
    each element falls in (so a column read shows its spread over banks)."""
    with guard("smem atom"):
        atom = hopper.smem_atom(major, span, bits)
    view = describe_layout(str(atom))
    offsets = view.offsets or []
    banks = [[(o * bits // 8 // 4) % 32 for o in row] for row in offsets]
    g = GridView(id=grid_id, rows=view.rows, cols=view.cols, text=offsets, colour=banks,
                 row_levels=boundary_levels(view.row_leaves, view.rows),
                 col_levels=boundary_levels(view.col_leaves, view.cols), css="narrow" if view.cols > 32 else "",
                 caption=f"{atom} · {bits}-bit elements · colour: bank")
    t = {4: "uint4_t", 8: "uint8_t", 16: "half_t", 32: "float", 64: "double"}.get(bits, f"uint{bits}_t")
    return AtomView(atom=atom, grid=g, cpp_name=f"GMMA::{atom.name}<{t}>")


def _ints(text: str, what: str) -> tuple[int, ...]:
    """``64,64`` or ``(64,64)`` -> (64, 64)."""
    parts = [p for p in re.split(r"[\s,()]+", text.strip()) if p]
    if not parts or not all(re.fullmatch(r"[0-9]{1,12}", p) for p in parts):
        raise LayoutError(f"{what}: expected integers such as 64,64, got {text!r}")
    return tuple(int(p) for p in parts)


def tma_view(dtype: str, tensor: str, box: str, swizzle: str, atom: Any) -> Any:
    """``tma_from_tensor`` for the global tensor ``tensor`` (a flat layout shape:stride in elements) copied in boxes
    of ``box``; swizzle "atom" takes the smem atom's swizzle (and checks the atom fits). Every rule is reported; the
    result's ``valid`` is False when one fails."""
    lay = parse_layout(tensor, "global tensor")
    if not it.is_tuple(lay.shape):
        shape, stride = (lay.shape,), (lay.stride,)
    elif any(it.is_tuple(s) for s in lay.shape):
        raise LayoutError("global tensor: give a flat layout, one mode per dimension, e.g. (4096,4096):(4096,1)")
    else:
        shape, stride = tuple(lay.shape), tuple(lay.stride)
    boxes = _ints(box, "box")
    with guard("TMA"):
        if swizzle == "atom":
            return hopper.tma_from_tensor(shape, stride, dtype, boxes, atom=atom, strict=False)
        return hopper.tma_from_tensor(shape, stride, dtype, boxes, swizzle=swizzle, strict=False)


def desc_view(atom: Any, tile_mn: str, tile_k: str, start: str) -> Any:
    """``make_gmma_desc(atom, tile_mn, tile_k, start)``: the wgmma descriptor of the first K-block of the tile."""
    mn, k, s = (_ints(x, w)[0] for x, w in ((tile_mn, "tile MN"), (tile_k, "tile K"), (start, "start address")))
    if max(mn, k) > 4096:
        raise LayoutError("tile: MN and K are capped at 4096")
    with guard("wgmma descriptor"):
        return hopper.make_gmma_desc(atom, mn, k, s)
