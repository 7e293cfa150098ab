"""CuTe's partitions of a layout by a tile: ``local_tile`` (one CTA's tile, CuTe's inner_partition) and
``local_partition`` (one thread's elements, CuTe's outer_partition). Both divide first (zipped_divide), then fix
one mode; each returns the sub-layout and the offset of its first element.

>>> from algebra.core.notation import parse as P
>>> local_tile(P("(16,16):(16,1)"), P("<4:1, 4:1>"), (1, 2)), local_partition(P("(16,32):(32,1)"), P("(4,8):(8,1)"), 5)
((Layout((4,4), (16,1)), 72), (Layout((4,4), (128,8)), 5))
"""

from __future__ import annotations

from typing import Any

from algebra.core import inttuple as it
from algebra.core.arith import ArithTuple, has_f2
from algebra.core.composition import shows_cute
from algebra.core.coord_tensor import CoordTensor
from algebra.core.errors import LayoutError
from algebra.core.inttuple import is_tuple
from algebra.core.layout import Layout, get_flat_coord, layout_arg, slice_and_offset
from algebra.core.notation import show
from algebra.core.products import _tiler_layout, zipped_divide
from algebra.core.recorder import active, nested


def dice(proj: Any, x: Any) -> Any:
    """CuTe's ``dice(proj, x)``: the entries of ``x`` where ``proj`` keeps the mode (an int, CuTe's ``_1``), without
    those where it is ``None`` (CuTe's ``X``); nested projections dice nested tuples."""
    if not is_tuple(proj):
        return x if proj is not None else ()
    if not is_tuple(x) or len(x) != len(proj):
        raise LayoutError(f"projection {show(proj)} has {len(proj)} modes but {show(x)} does not")
    out: list[Any] = []
    for p, e in zip(proj, x, strict=True):
        if is_tuple(p):
            out.append(dice(p, e))
        elif p is not None:
            out.append(e)
    return tuple(out)


@shows_cute
def local_tile(layout: Layout, tiler: Any, coord: Any, proj: Any = None) -> tuple[Layout, int]:
    """The tile of ``layout`` at tile coordinate ``coord`` (CuTe's inner_partition): the tile layout and the
    offset of its first element. ``zipped_divide(L, tiler)(_, coord)``. With ``proj`` (CuTe's ``Step``: ``(1,
    None, 1)`` is ``Step<_1,X,_1>``) the tiler and the coordinate are first diced to the kept modes, so one
    (BLK_M, BLK_N, BLK_K) tiler serves A, B and C; a ``None`` in ``coord`` keeps that mode of tiles."""
    if proj is not None:
        return local_tile(layout, dice(proj, tiler), dice(proj, coord))
    if isinstance(layout, CoordTensor):  # a coordinate tensor: the tile's coordinates, origin moved
        return _local_tile_coords(layout, tiler, coord)
    tiled = zipped_divide(layout_arg(layout, "local_tile"), tiler)
    s = it.wrap(tiled.shape)
    r0, r1 = it.rank(s[0]), it.rank(s[1])
    c0 = tuple(None for _ in range(r0)) if r0 > 1 else None
    if is_tuple(coord):
        if len(coord) > r1 or not is_tuple(s[1]):
            raise LayoutError(f"local_tile: coordinate {it.to_str(coord)} does not match the rank of the tile grid "
                              f"{it.to_str(s[1])} (a tuple coordinate needs a tuple grid with at least as many modes)")
        c1 = tuple(coord) + tuple(None for _ in range(r1 - len(coord))) if r1 > 1 else coord[0]
    else:
        c1 = coord
    sub, off = slice_and_offset((c0, c1), tiled)
    if (rec := active()) is not None:
        rec.step(f"fix the tile coordinate {show(coord)} in the rest mode: the tile is {sub}, its first element at "
                 f"offset {off}", sub, kind="result", offset=off)
    return sub, off


def _local_tile_coords(tensor: Any, tiler: Any, coord: Any) -> Any:
    """``local_tile`` of a CoordTensor (``make_identity_tensor(shape)`` in CuTe): a CoordTensor, its origin moved by
    the tile's first coordinate, as CuTe prints ``ArithTuple(32,32) o (32,16):(1@0,1@1)``."""
    sub, off = local_tile(tensor.layout, tiler, coord)
    moved = ArithTuple.of(tensor.origin) + (off.as_tuple() if hasattr(off, "as_tuple") else off)
    return CoordTensor(moved.as_tuple(), sub)


@shows_cute
def local_partition(layout: Layout, tile: Layout, index: int) -> tuple[Layout, int]:
    """The elements that thread ``index`` of the thread layout ``tile`` owns (CuTe's outer_partition):
    ``zipped_divide(L, shape(tile))(crd, _)`` where ``tile(crd) == index``. Returns (layout, offset).
    Refuses (LayoutError) an index outside ``0 <= index < size(tile)``."""
    tile = _tiler_layout(tile)
    nthr = it.product(tile.shape)
    if not isinstance(index, int) or not 0 <= index < nthr:
        raise LayoutError(f"local_partition: thread index {index} is out of range: the thread layout {tile} has "
                          f"{nthr} threads, so the index must be in 0..{nthr - 1}")
    if has_f2(tile.stride):  # CuTe's tile.get_flat_coord(index) divides the index by the strides
        raise LayoutError(f"local_partition: the thread layout {tile} has F2 (XOR) strides: a thread's coordinate is "
                          "found by dividing its index by the strides (CuTe's get_flat_coord), which XOR strides do "
                          "not allow; use a thread layout with integer strides")
    tiler = it.product_each(tile.shape)
    crd = get_flat_coord(tile, index)
    if is_tuple(crd) and len(crd) < len(tiler):
        crd = crd + (None,) * (len(tiler) - len(crd))
    rec = active()
    if rec is not None:
        rec.step(f"thread {index} sits at coordinate {show(crd)} of the thread layout {tile}; divide A by its shape "
                 f"{it.to_str(tiler)}")
    tiled = nested(rec, zipped_divide, layout_arg(layout, "local_partition"), tiler)
    s = it.wrap(tiled.shape)
    r1 = it.rank(s[1])
    c1 = tuple(None for _ in range(r1)) if r1 > 1 else None
    sub, off = slice_and_offset((crd, c1), tiled)
    if rec is not None:
        rec.step(f"zipped_divide(A, {it.to_str(tiler)}) = {tiled}", tiled)
        rec.step(f"fix the position inside every tile to {show(crd)}: the thread's elements are {sub}, the first at "
                 f"offset {off}", sub, kind="result", offset=off)
    return sub, off
