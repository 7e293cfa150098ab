"""Divides and products (CuTe's ``logical_divide`` ... ``raked_product``, ``tile_to_shape``, ``local_tile``).

A *tiler* is a Layout, an int ``n`` (the layout ``n:1``), None (keep the mode), or a tuple of tilers applied
mode by mode (modes of the layout beyond the tiler are kept).
"""

from __future__ import annotations

from functools import wraps
from typing import Any

from algebra import inttuple as it
from algebra.errors import LayoutError
from algebra.fastpath import logical_divide_flat
from algebra.inttuple import is_int, is_tuple
from algebra.layout import Layout, cosize, make_layout, make_ordered_layout, slice_and_offset, slice_layout
from algebra.memo import memo
from algebra.ops import coalesce, complement, composition

# inside an op, call the un-memoized functions: the outer op's result is what gets cached
_coalesce, _complement, _composition = coalesce.__wrapped__, complement.__wrapped__, composition.__wrapped__

R = Layout._raw


def through_swizzle(fn: Any) -> Any:
    """CuTe's ComposedLayout overloads: for ``Sw o off o L`` as the first argument, apply ``fn`` to ``L`` and
    compose the swizzle and offset back around the result (dropping an identity swizzle as CuTe does)."""

    @wraps(fn)
    def wrapper(layout: Any, *args: Any, **kwargs: Any) -> Any:
        if hasattr(layout, "layout_b"):
            return layout.with_layout_b(fn(layout.layout_b, *args, **kwargs))
        return fn(layout, *args, **kwargs)

    return wrapper


def _tiler_layout(t: Any) -> Layout:
    if isinstance(t, Layout):
        return t
    if is_int(t):
        if t <= 0:
            raise LayoutError(f"tile size must be positive, got {t}")
        return Layout(t)
    raise LayoutError(f"not a tiler: {t!r}")


def _by_mode(layout: Layout, tiler: tuple, f, name: str) -> Layout:
    n = it.rank(layout.shape)
    if len(tiler) > n:
        raise LayoutError(f"{name}: too many modes in tiler ({len(tiler)} for a rank-{n} layout {layout})")
    modes = [f(layout[i], tiler[i]) for i in range(len(tiler))] + [layout[i] for i in range(len(tiler), n)]
    return make_layout(*modes)


# --------------------------------------------------------------------------------------------- divide


@memo
@through_swizzle
def logical_divide(layout: Any, tiler: Any) -> Any:
    """``A / B = A o (B, complement(B, shape(coalesce(A))))``: mode 0 is the tile, mode 1 the tile's repeats.

    Post: mode 0 of the result is compatible with the tiler (for a Layout tiler: ``shape(R[0]) == shape(B)``).
    """
    if type(tiler) is Layout and type(layout) is Layout and (r := logical_divide_flat(layout, tiler)) is not None:
        return r
    if tiler is None:
        return layout
    if is_tuple(tiler):
        return _by_mode(layout, tiler, logical_divide, "logical_divide")
    t = _tiler_layout(tiler)
    return _composition(layout, make_layout(t, _complement(t, _coalesce(layout).shape)))


def _zip2_by(t: Any, guide: Any) -> Any:
    if is_tuple(guide):
        if not is_tuple(t) or len(t) < len(guide):
            raise LayoutError("zip2_by: mismatched ranks")
        split = [_zip2_by(t[i], guide[i]) for i in range(len(guide))]
        return (tuple(s[0] for s in split), tuple(s[1] for s in split) + tuple(t[len(guide):]))
    if not is_tuple(t) or len(t) != 2:
        raise LayoutError("zip2_by: expected a rank-2 mode")
    return t


def tile_unzip(layout: Layout, tiler: Any) -> Layout:
    """Gather the tile modes and the rest modes of a by-mode divide/product: ``((t0,t1,..),(r0,r1,..,extra))``."""
    return R(_zip2_by(layout.shape, tiler), _zip2_by(layout.stride, tiler))


@memo
@through_swizzle
def zipped_divide(layout: Any, tiler: Any) -> Any:
    """``((tile modes...), (rest modes...))`` of ``logical_divide``."""
    return tile_unzip(logical_divide(layout, tiler), tiler)


def _unpack(layout: Layout, first: bool, second: bool) -> Layout:
    s = it.wrap(layout.shape)
    c0 = tuple(None for _ in range(it.rank(s[0]))) if first and it.rank(s[0]) > 1 else None
    c1 = tuple(None for _ in range(it.rank(s[1]))) if second and it.rank(s[1]) > 1 else None
    return slice_layout((c0, c1), layout)


@memo
@through_swizzle
def tiled_divide(layout: Any, tiler: Any) -> Any:
    """``((tile modes...), r0, r1, ...)``: zipped_divide with the rest mode unpacked."""
    return _unpack(zipped_divide(layout, tiler), False, True)


@memo
@through_swizzle
def flat_divide(layout: Any, tiler: Any) -> Any:
    """``(t0, t1, ..., r0, r1, ...)``: zipped_divide with both modes unpacked."""
    return _unpack(zipped_divide(layout, tiler), True, True)


# --------------------------------------------------------------------------------------------- product


@memo
@through_swizzle
def logical_product(block: Any, tiler: Any) -> Any:
    """``(A, complement(A, size(A)*cosize(B)) o B)``: mode 0 is the block, mode 1 the block repeated by B."""
    if tiler is None:
        return block
    if is_tuple(tiler):
        return _by_mode(block, tiler, logical_product, "logical_product")
    t = _tiler_layout(tiler)
    cotarget = it.product(block.shape) * cosize(t)
    return make_layout(block, _composition(_complement(block, cotarget), t))


@memo
@through_swizzle
def zipped_product(block: Any, tiler: Any) -> Layout:
    return tile_unzip(logical_product(block, tiler), tiler)


@memo
@through_swizzle
def tiled_product(block: Any, tiler: Any) -> Layout:
    return _unpack(zipped_product(block, tiler), False, True)


@memo
@through_swizzle
def flat_product(block: Any, tiler: Any) -> Layout:
    return _unpack(zipped_product(block, tiler), True, True)


def _append_to_rank(layout: Layout, r: int) -> Layout:
    """CuTe's ``append<R>(layout)``: pad with ``1:0`` modes up to rank R (a rank-R layout is unchanged)."""
    s, d = layout.shape, layout.stride
    if is_tuple(s):
        if len(s) >= r:
            return layout
        return R(s + (1,) * (r - len(s)), d + (0,) * (r - len(d)))
    if r == 1:
        return layout
    return R((s,) + (1,) * (r - 1), (d,) + (0,) * (r - 1))


def _zip_modes(a: Layout, b: Layout) -> Layout:
    def z(x, y):
        # CuTe's zip(t0, t1): an integer t0 pairs with t1 whole; a tuple t0 needs a tuple t1 of equal rank
        if is_tuple(x):
            if not is_tuple(y) or len(x) != len(y):
                raise LayoutError(f"zip: mismatched ranks between {it.to_str(x)} and {it.to_str(y)} "
                                  "(the block and the product modes must have the same profile at the top)")
            return tuple((x[i], y[i]) for i in range(len(x)))
        return ((x, y),)

    return R(z(a.shape, b.shape), z(a.stride, b.stride))


def _rank_sensitive(block: Any, tiler: Layout, raked: bool) -> Any:
    block, tiler = _tiler_layout(block), _tiler_layout(tiler)
    r = max(it.rank(block.shape), it.rank(tiler.shape))
    res = logical_product(_append_to_rank(block, r), _append_to_rank(tiler, r))
    return _zip_modes(res[1], res[0]) if raked else _zip_modes(res[0], res[1])


@memo
@through_swizzle
def blocked_product(block: Layout, tiler: Layout) -> Layout:
    """Repeat ``block`` over ``tiler``, mode by mode: element (i, j) of block b is at ((i, b_i), (j, b_j)).

    Post: ``rank(R) == max(rank(block), rank(tiler))``.
    """
    return _rank_sensitive(block, tiler, raked=False)


@memo
@through_swizzle
def raked_product(block: Layout, tiler: Layout) -> Layout:
    """Like blocked_product but the repeats interleave: each mode is ``(tiler mode, block mode)``."""
    return _rank_sensitive(block, tiler, raked=True)


@through_swizzle
def tile_to_shape(block: Layout, target_shape: Any, order: Any = None) -> Layout:
    """Repeat ``block`` (blocked_product) until it covers ``target_shape``; repeats run in ``order``
    (default column-major). Post: ``compatible(target_shape, shape(R))``. A composed block keeps its swizzle."""
    block = _tiler_layout(block)
    target = it.check_shape(target_shape, "target shape")
    r = it.rank(target)
    if it.rank(block.shape) > r:
        raise LayoutError("tile_to_shape: rank of layout must be <= rank of target shape")
    padded = _append_to_rank(block, r)
    bshape = it.product_each(padded.shape)
    tshape = it.product_each(target)
    if not it.evenly_divides(tshape, bshape):
        raise LayoutError(
            f"tile_to_shape: block shape {it.to_str(bshape)} does not divide the target shape {it.to_str(tshape)}")
    pshape = it.ceil_div(tshape, bshape)
    if order is None:
        tiler = Layout(pshape if len(pshape) > 1 else pshape)
    else:
        tiler = make_ordered_layout(pshape, order)
    return blocked_product(padded, tiler)


# --------------------------------------------------------------------------------------------- partitions


def local_tile(layout: Layout, tiler: Any, coord: Any) -> tuple[Layout, int]:
    """The tile of ``layout`` at tile coordinate ``coord`` (CuTe's inner_partition): the tile layout and the
    offset of its first element. ``zipped_divide(L, tiler)(_, coord)``."""
    tiled = zipped_divide(layout, tiler)
    s = it.wrap(tiled.shape)
    r0, r1 = it.rank(s[0]), it.rank(s[1])
    c0 = tuple(None for _ in range(r0)) if r0 > 1 else None
    if is_tuple(coord):
        if len(coord) > r1:
            raise LayoutError(f"local_tile: coordinate {it.to_str(coord)} has more modes than the tile grid")
        c1 = tuple(coord) + tuple(None for _ in range(r1 - len(coord))) if r1 > 1 else coord[0]
    else:
        c1 = coord
    return slice_and_offset((c0, c1), tiled)


def local_partition(layout: Layout, tile: Layout, index: int) -> tuple[Layout, int]:
    """The elements that thread ``index`` of the thread layout ``tile`` owns (CuTe's outer_partition):
    ``zipped_divide(L, shape(tile))(crd, _)`` where ``tile(crd) == index``. Returns (layout, offset).
    Refuses (LayoutError) an index outside ``0 <= index < size(tile)``."""
    from algebra.layout import get_flat_coord

    tile = _tiler_layout(tile)
    nthr = it.product(tile.shape)
    if not isinstance(index, int) or not 0 <= index < nthr:
        raise LayoutError(f"local_partition: thread index {index} is out of range: the thread layout {tile} has "
                          f"{nthr} threads, so the index must be in 0..{nthr - 1}")
    tiler = it.product_each(tile.shape)
    crd = get_flat_coord(tile, index)
    if is_tuple(crd) and len(crd) < len(tiler):
        crd = crd + (None,) * (len(tiler) - len(crd))
    tiled = zipped_divide(layout, tiler)
    s = it.wrap(tiled.shape)
    r1 = it.rank(s[1])
    c1 = tuple(None for _ in range(r1)) if r1 > 1 else None
    return slice_and_offset((crd, c1), tiled)


# --------------------------------------------------------------------------------------------- recast


def upcast(layout: Layout, n: int) -> Layout:
    """View ``n`` consecutive elements as one: stride-1 modes shrink by n, other strides are divided by n."""

    def go(s, d):
        if is_tuple(s):
            pairs = [go(a, b) for a, b in zip(s, d, strict=True)]
            return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        if d == 0:
            return s, d
        if not (d % n == 0 or n % abs(d) == 0):
            raise LayoutError(f"upcast<{n}>: stride {d} and {n} do not divide each other")
        return it.ceil_div_int(s, it.ceil_div_int(n, abs(d))), it.signum(d) * it.ceil_div_int(abs(d), n)

    s, d = go(layout.shape, layout.stride)
    return R(s, d)


def downcast(layout: Layout, n: int) -> Layout:
    """View each element as ``n`` smaller ones: stride-1 modes grow by n, other strides are multiplied by n."""
    if 1 not in it.flatten(layout.stride) and -1 not in it.flatten(layout.stride):
        raise LayoutError("downcast requires a stride-1 mode (adjacent elements)")

    def go(s, d):
        if is_tuple(s):
            pairs = [go(a, b) for a, b in zip(s, d, strict=True)]
            return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        if d in (1, -1):
            return s * n, d
        return s, d * n

    s, d = go(layout.shape, layout.stride)
    return R(s, d)


def recast_layout(layout: Layout, old_bits: int, new_bits: int) -> Layout:
    """Re-express a layout of ``old_bits`` elements in units of ``new_bits`` elements (CuTe's recast_layout)."""
    from math import gcd

    g = gcd(old_bits, new_bits)
    num, den = new_bits // g, old_bits // g
    if num == 1 and den == 1:
        return layout
    if num == 1:
        return downcast(layout, den)
    if den == 1:
        return upcast(layout, num)
    return downcast(upcast(layout, num), den)
