"""Divides and products (CuTe's ``logical_divide`` ... ``raked_product``, ``tile_to_shape``), and the partitions of a
layout by a tile built on them: ``local_tile`` (one CTA's tile, CuTe's inner_partition) and ``local_partition`` (one
thread's elements, CuTe's outer_partition), which divide first (zipped_divide), then fix one mode, and return the
sub-layout and the offset of its first element.

A *tiler* is a Layout, an int ``n`` (the layout ``n:1``), None (keep the mode), or a tuple of tilers applied
mode by mode (modes of the layout beyond the tiler are kept).

>>> from algebra.core.notation import parse as P
>>> A, T = P("(8,8):(1,8)"), P("<2:1, 4:1>")
>>> print(logical_divide(A, T), zipped_divide(A, T), tiled_divide(A, T), flat_divide(A, T))
((2,4),(4,2)):((1,2),(8,32)) ((2,4),(4,2)):((1,8),(2,32)) ((2,4),4,2):((1,8),2,32) (2,4,4,2):(1,8,2,32)
>>> B, R = P("(2,2):(1,2)"), P("(3,4):(1,3)")
>>> print(logical_product(B, R), blocked_product(B, R), raked_product(B, R), tile_to_shape(B, (4, 6)))
((2,2),(3,4)):((1,2),(4,12)) ((2,3),(2,4)):((1,4),(2,12)) ((3,2),(4,2)):((4,1),(12,2)) ((2,2),(2,3)):((1,4),(2,8))
>>> local_tile(P("(16,16):(16,1)"), P("<4:1, 4:1>"), (1, 2)), local_partition(P("(16,32):(32,1)"), P("(4,8):(8,1)"), 5)
((Layout((4,4), (16,1)), 72), (Layout((4,4), (128,8)), 5))
"""

from __future__ import annotations

from functools import partial, reduce, wraps
from typing import Any

from algebra.core import inttuple as it
from algebra.core.arith import F2, ArithTuple, ScaledBasis, f2_columns, has_f2
from algebra.core.checks import capped, checking, cute_would_print, int_strides, offset_fn, unchecked
from algebra.core.coalesce import coalesce
from algebra.core.complement import complement
from algebra.core.composition import composition, shows_cute, whole_refusal
from algebra.core.coord_tensor import CoordTensor
from algebra.core.errors import LayoutError
from algebra.core.inttuple import is_int, is_tuple
from algebra.core.layout import (
    Layout,
    cosize,
    get_flat_coord,
    get_hier_coord,
    layout_arg,
    make_layout,
    make_ordered_layout,
    size,
    slice_and_offset,
    slice_layout,
)
from algebra.core.memo import memo
from algebra.core.notation import show
from algebra.core.recorder import active, nested, quiet
from algebra.core.swizzle import ComposedLayout, Swizzle, make_composed, make_swizzle

# inside an op, call the un-memoized functions: the outer op's result is what gets cached
_coalesce, _complement, _composition = coalesce.__wrapped__, complement.__wrapped__, composition.__wrapped__

R = Layout._raw


def through_swizzle(fn: Any) -> Any:
    """CuTe's ComposedLayout overloads: for ``Sw o off o L`` as the first argument, apply ``fn`` to ``L`` and
    compose the swizzle and offset back around the result (dropping an identity swizzle as CuTe does)."""

    @wraps(fn)
    def wrapper(layout: Any, *args: Any, **kwargs: Any) -> Any:
        if type(layout) is not Layout:
            layout = layout_arg(layout, fn.__name__)
        try:
            if type(layout) is not Layout:  # (layout_arg: a Layout or Sw o O o L)
                rec, inner = active(), fn if type(layout.layout_b) is Layout else wrapper  # nested: recursively
                if rec is None:
                    return layout.with_layout_b(inner(layout.layout_b, *args, **kwargs))
                rec.step(f"A = {layout}: {fn.__name__} its inner layout {layout.layout_b}; the swizzle stays outside")
                res = layout.with_layout_b(nested(rec, inner, layout.layout_b, *args))
                rec.step(f"put the swizzle back outside: {res}", res, kind="result")
                return res
            return fn(layout, *args, **kwargs)
        except LayoutError as err:  # an inner composition is not A o B: also say what CuTe prints for this call
            if (new := None if kwargs else whole_refusal(wrapper, (layout, *args), err)) is None:
                raise
            raise new from None

    return wrapper


def _tiler_layout(t: Any, name: str = "B") -> Layout:
    if isinstance(t, Layout):
        return t
    if is_int(t):
        if t <= 0:
            raise LayoutError(f"tile size must be positive, got {t}")
        if (rec := active()) is not None:
            rec.step(f"{name} = {t} stands for the layout {t}:1", Layout(t))
        return Layout(t)
    kind = "a swizzled layout" if hasattr(t, "layout_b") else type(t).__name__
    raise LayoutError(f"not a tiler: {t} is {kind}; {name} must be a plain layout or a positive int here")


def _by_mode(layout: Layout, tiler: tuple, f, name: str) -> Layout:
    n = it.rank(layout.shape)
    if len(tiler) > n:
        raise LayoutError(f"{name}: too many modes in tiler ({len(tiler)} for a rank-{n} layout {layout})")
    rec, kept = active(), [*map(layout.__getitem__, range(len(tiler), n))]
    if rec is None:
        return make_layout(*map(f, map(layout.__getitem__, range(len(tiler))), tiler), *kept)
    rec.step(f"the tiler has {len(tiler)} modes: {name} mode i of A by tiler mode i"
             + ("; the other modes of A are kept" if kept else ""))
    modes = []
    for i, t in enumerate(tiler):
        rec.step(f"mode {i}: {name}({layout[i]}, {show(t)})")
        modes.append(nested(rec, f, layout[i], t))
    res = make_layout(*modes, *kept)
    rec.step(f"side by side: {res}", res, kind="result")
    return res


def _keep(layout: Any, rec: Any) -> Any:
    if rec is not None:
        rec.step("the tiler is _ (keep this mode): A is unchanged", layout, kind="result")
    return layout


# --------------------------------------------------------------------------------------------- divide


@memo
@through_swizzle
def logical_divide(layout: Any, tiler: Any) -> Any:
    """``A / B = A o (B, complement(B, shape(coalesce(A))))``: mode 0 is the tile, mode 1 the tile's repeats.

    Post: mode 0 of the result is compatible with the tiler (for a Layout tiler: ``shape(R[0]) == shape(B)``).
    """
    rec = active()
    if tiler is None:
        return _keep(layout, rec)
    if type(tiler) is tuple:
        return _by_mode(layout, tiler, logical_divide.__wrapped__, "logical_divide")
    t = tiler if type(tiler) is Layout else _tiler_layout(tiler)
    if rec is None:
        return _composition(layout, make_layout(t, _complement(t, _coalesce(layout).shape)))
    cshape = quiet(rec, _coalesce, layout).shape
    rec.step(f"B* = complement(B, {show(cshape)}) (the shape of coalesce(A)): where the copies of the tile start")
    comp = nested(rec, _complement, t, cshape)
    rec.step(f"B* = {comp}", comp)
    cat = make_layout(t, comp)
    rec.step(f"concatenate (B, B*) = {cat}: every 1-D coordinate of A, as (inside the tile, which tile)", cat)
    res = nested(rec, _composition, layout, cat)
    rec.step(f"compose: A o (B, B*) = {res}; mode 0 is the tile, mode 1 runs over the tiles", res, kind="result")
    return res


def _zip2_by(t: Any, guide: Any, path: str = "") -> Any:
    """CuTe's zip2_by: each mode the tiler names is a (tile, rest) pair; ``LayoutError`` naming the mode and the
    tiler otherwise (CuTe's static_assert "Mismatched ranks")."""
    where = f"mode {path[:-1]} of the layout" if path else "the layout"
    if type(guide) is tuple:
        if type(t) is not tuple or len(t) < len(guide):
            raise LayoutError(f"tiler: {show(guide)} has {len(guide)} modes, but {where}, {it.to_str(t)}, has "
                              f"{it.rank(t)} (zip2_by: mismatched ranks)")
        firsts, seconds = zip(*(_zip2_by(x, g, f"{path}{i}.") for i, (x, g) in enumerate(zip(t, guide)))) \
            if guide else ((), ())  # noqa: B905 (pairs, the guide's)
        return firsts, seconds + t[len(guide):]
    if type(t) is not tuple or len(t) != 2:
        raise LayoutError(f"tiler: the tiler mode {show(guide)} needs {where} to be a (tile, rest) pair, but it is "
                          f"{it.to_str(t)} (zip2_by: expected a rank-2 mode)")
    return t


@through_swizzle
def tile_unzip(layout: Layout, tiler: Any) -> Layout:
    """Gather the tile modes and the rest modes of a by-mode divide/product: ``((t0,t1,..),(r0,r1,..,extra))``."""
    return R(_zip2_by(layout.shape, tiler), _zip2_by(layout.stride, tiler))


@memo
@through_swizzle
def zipped_divide(layout: Any, tiler: Any) -> Any:
    """``((tile modes...), (rest modes...))`` of ``logical_divide``."""
    return _regroup(logical_divide.__wrapped__(layout, tiler), tiler, "tile", "rest")


def _regroup(layout: Layout, tiler: Any, first: str, second: str) -> Layout:
    res = tile_unzip(layout, tiler)
    if (rec := active()) is not None:
        rec.step(f"gather the {first} modes, then the {second} modes: (({first}), ({second})) = {res}", res,
                 kind="result")
    return res


def _unpacked(layout: Layout, first: bool, what: str) -> Layout:
    """Slice ``((first modes), (second modes))`` with ``_`` per mode: the second group, and the first if asked,
    become top-level modes (a swizzled layout keeps its swizzle)."""
    inner = layout.layout_b if type(layout) is not Layout else layout
    s = it.wrap(inner.shape)
    c0 = (None,) * it.rank(s[0]) if first and it.rank(s[0]) != 1 else None  # CuTe's repeat<0>(_) is ()
    c1 = (None,) * it.rank(s[1]) if it.rank(s[1]) > 1 else None
    res = slice_layout((c0, c1), inner)
    if inner is not layout:
        res = layout.with_layout_b(res)
    if (rec := active()) is not None:
        rec.step(f"unpack {what} into their own modes: {res}", res, kind="result")
    return res


@memo
@through_swizzle
def tiled_divide(layout: Any, tiler: Any) -> Any:
    """``((tile modes...), r0, r1, ...)``: zipped_divide with the rest mode unpacked."""
    return _unpacked(zipped_divide.__wrapped__(layout, tiler), False, "the rest modes")


@memo
@through_swizzle
def flat_divide(layout: Any, tiler: Any) -> Any:
    """``(t0, t1, ..., r0, r1, ...)``: zipped_divide with both modes unpacked."""
    return _unpacked(zipped_divide.__wrapped__(layout, tiler), True, "both groups")


# --------------------------------------------------------------------------------------------- product


@memo
@through_swizzle
def logical_product(block: Any, tiler: Any) -> Any:
    """``(A, complement(A, size(A)*cosize(B)) o B)``: mode 0 is the block, mode 1 the block repeated by B."""
    rec = active()
    if tiler is None:
        return _keep(block, rec)
    if type(tiler) is tuple:
        return _by_mode(block, tiler, logical_product.__wrapped__, "logical_product")
    if type(tiler) is not Layout and hasattr(tiler, "layout_b"):  # (through_swizzle gives a plain block)
        return _swizzled_tiler_product(block, tiler)
    t = tiler if type(tiler) is Layout else _tiler_layout(tiler)
    size_a, cos_b = it.product(block.shape), cosize(t)
    cotarget = size_a * cos_b
    if rec is None:
        return make_layout(block, _composition(_complement(block, cotarget), t))
    rec.step(f"cotarget = size(A) * cosize(B) = {size_a}*{cos_b} = {cotarget}")
    comp = nested(rec, _complement, block, cotarget)
    rec.step(f"A* = complement(A, {cotarget}) = {comp}: where the copies of A can start", comp)
    rest = nested(rec, _composition, comp, t)
    rec.step(f"A* o B = {rest}: B picks which copies of A, in which order", rest)
    res = make_layout(block, rest)
    rec.step(f"concatenate (A, A* o B) = {res}: mode 0 is A, mode 1 runs over its copies", res, kind="result")
    return res


def _swizzled_tiler_product(block: Layout, tiler: Any) -> Any:
    """CuTe's ``logical_product(Layout, Sw o 0 o T)`` (``swizzle_layout.hpp``): ``P = logical_product(block, T)``
    with a new swizzle read off P at the bits of T that feed the swizzle. Post: ``R(a, j) == block(a)`` and
    ``R(0, j) == (A* o (Sw o T))(j)`` with ``A* = complement(block, size(block) * cosize(T))``; otherwise CuTe prints
    a layout that is not the product and this refuses (``LayoutError``: what CuTe prints, a counterexample). Checked at
    every point, or at the units where both sides are F2-linear (the least unit where they differ is the least i)."""
    sw, t = tiler.layout_a, tiler.layout_b
    if not isinstance(sw, Swizzle):
        raise LayoutError(f"logical_product: only a swizzled tiler Sw o 0 o T is supported, got {tiler}")
    if tiler.offset != 0:
        raise LayoutError(f"logical_product({block}, {tiler}): CuTe requires the swizzled tiler's offset to be 0 "
                          "(\"Require Swizzle offset == 0.\")")
    if has_f2(block.stride):
        raise LayoutError(f"logical_product({block}, {tiler}): the block has F2 (XOR) strides (CuTe has none): the "
                          f"product with a swizzled tiler moves the swizzle {sw} outside, onto the product's integer "
                          f"offsets, and these are XORs; take the product with the tiler's layout {t}, or of the "
                          "swizzled layout the block stands for")
    new = logical_product(block, t)
    m, b, sh = sw.base, sw.bits, abs(sw.shift)
    zy = Layout((1 << m, 1 << b, 1 << (sh - b), 1 << b, 1), (0, 1 << m, 0, 1 << (m + sh), 0))
    only_zy = quiet(active(), unchecked, _composition, zy, t)  # CuTe's own step (its own conditions refuse it)
    bits = only_zy(size(only_zy) - 1)
    new_z, new_y = (new((0, t(bits & mask))) for mask in (sw.zzz_mask, sw.yyy_mask))
    res = make_composed(make_swizzle(new_y, new_z), 0, new)
    n0 = it.product(block.shape)
    comp = _complement(block, n0 * cosize(t))
    fast = all(map(int_strides, (block, new, comp, t)))  # then each value is a flat dot product, not a checked call
    new_of, block_of, comp_of, t_of = (offset_fn(x.shape, x.stride) if fast else x for x in (new, block, comp, t))
    res_sw = getattr(res, "layout_a", lambda x: x)  # make_composed may drop an identity swizzle
    new_c, t_c, cat = (f2_columns(*x) if fast else None for x in ((new.shape, new.stride), (t.shape, t.stride), (
        (block.shape, comp.shape), (block.stride, comp.stride))))  # (A, A*): A(a) + A*(y) the XOR of disjoint bits
    lin = None not in (new_c, t_c, cat) and all(sw(c) * n0 >> len(cat) == 0 for c in t_c)  # Sw(T(j)) inside A*
    for i in ((1 << b for b in range(len(new_c))) if lin else range(capped(size(new), f"logical_product({block}, "
              f"{tiler}) is refused: CuTe would print {res}, not confirmed as the product ("))) if checking() else ():
        a, j = i % n0, i // n0
        got, want = res_sw(new_of(i)), block_of(a) + comp_of(sw(t_of(j)))
        if got != want:
            raise LayoutError(
                f"logical_product({block}, {tiler}) is not a layout: the swizzle cannot move to the offsets of the "
                f"product. CuTe would print {res} here; at ({a}, {j}) that gives {got}, but A({a}) + "
                f"A*({tiler}({j})) = {want} (A* = {comp})")
    if (rec := active()) is not None:
        rec.step(f"B = {tiler} is swizzled: the product with its inner layout {t} is {new}; the swizzle's bits, "
                 f"read through it, give the swizzle of the product: {res}", res, kind="result")
    return res


@memo
@through_swizzle
def zipped_product(block: Any, tiler: Any) -> Layout:
    """``((block modes...), (repeat modes...))`` of ``logical_product``."""
    return _regroup(logical_product.__wrapped__(block, tiler), tiler, "block", "repeat")


@memo
@through_swizzle
def tiled_product(block: Any, tiler: Any) -> Layout:
    """``((block modes...), r0, r1, ...)``: zipped_product with the repeat modes unpacked."""
    return _unpacked(zipped_product.__wrapped__(block, tiler), False, "the repeat modes")


@memo
@through_swizzle
def flat_product(block: Any, tiler: Any) -> Layout:
    """``(b0, b1, ..., r0, r1, ...)``: zipped_product with both modes unpacked."""
    return _unpacked(zipped_product.__wrapped__(block, tiler), True, "both groups")


def _append_to_rank(layout: Layout, r: int) -> Layout:
    """CuTe's ``append<R>(layout)``: pad with ``1:0`` modes up to rank R (a rank-R layout is unchanged)."""
    n = it.rank(layout.shape)
    if n >= r:
        return layout
    return R(it.wrap(layout.shape) + (1,) * (r - n), it.wrap(layout.stride) + (0,) * (r - n))


def _zip_modes(a: Layout, b: Layout) -> Layout:
    def z(x, y):
        # CuTe's zip(t0, t1): an integer t0 pairs with t1 whole; a tuple t0 needs a tuple t1 of equal rank
        if type(x) is not tuple:
            return ((x, y),)
        if type(y) is not tuple or len(x) != len(y):
            raise LayoutError(f"zip: mismatched ranks between {it.to_str(x)} and {it.to_str(y)} "
                              "(the block and the product modes must have the same profile at the top)")
        return tuple(zip(x, y, strict=True))

    return R(z(a.shape, b.shape), z(a.stride, b.stride))


def _rank_sensitive(block: Any, tiler: Layout, raked: bool) -> Any:
    block, tiler = _tiler_layout(block, "A"), _tiler_layout(tiler)
    r = max(it.rank(block.shape), it.rank(tiler.shape))
    pb, pt = _append_to_rank(block, r), _append_to_rank(tiler, r)
    if (rec := active()) is None:
        res = logical_product.__wrapped__(pb, pt)
        return _zip_modes(res[1], res[0]) if raked else _zip_modes(res[0], res[1])
    if pb != block or pt != tiler:
        rec.step(f"pad both to rank {r} with 1:0 modes: A = {pb}, B = {pt}")
    rec.step("logical_product(A, B) = (A, A* o B)")
    lp = nested(rec, logical_product, pb, pt)
    rec.step(f"logical_product = {lp}", lp)
    res = _zip_modes(lp[1], lp[0]) if raked else _zip_modes(lp[0], lp[1])
    how = (", repeats first: mode i = ((A* o B)_i, A_i), so the copies interleave (rake) inside each mode" if raked
           else ": mode i = (A_i, (A* o B)_i), the block inside, then which block")
    rec.step(f"zip mode by mode{how}: {res}", res, kind="result")
    return res


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
    tiler = Layout(pshape) if order is None else make_ordered_layout(pshape, order)
    if (rec := active()) is None:
        return blocked_product(padded, tiler)
    rec.step(f"the block covers {it.to_str(bshape)} of the target {it.to_str(tshape)}: repeat it "
             f"{it.to_str(pshape)} times, the repeats laid out as {tiler}", tiler)
    res = nested(rec, blocked_product, padded, tiler)
    rec.step(f"blocked_product(block, {tiler}) = {res}", res, kind="result")
    return res


def _refused(a: Any, b: Any) -> str:
    """CuTe's refusal of ``composition(a, b)``, in words."""
    try:
        return f"{unchecked(_composition, a, b)} is printed"
    except LayoutError as err:
        return str(err)


def _kept_at(c: Any, sliced_shape: Any, j: int) -> Any:
    """The coordinate ``c`` with its ``_`` (the kept modes) at the natural coordinate of j in the slice's shape."""
    kept = iter(it.wrap(it.idx2crd(j, sliced_shape)))
    go = lambda v: tuple(map(go, v)) if type(v) is tuple else next(kept) if v is None else v  # noqa: E731
    return go(c)


def _unsigned(sl: Any, c: Any, cs: str, sub: Layout, total: int, kept: Any) -> None:
    """The refusal of CuTe's slice ``A o (O + o) o sub`` of ``A o O o (Sw o 0 o B)``, o the unsigned offset of the
    inner swizzle's decayed slice: ``O + o < 0`` wraps, and A is read far past its size."""
    w, n = total + (1 << 32), size(sl.layout_a)
    j = next((j for j in range(size(sub)) if 0 <= total + sub(j) < n), 0)
    res, cj = ComposedLayout(sl.layout_a, w, sub), _kept_at(c, kept, j)
    got = f"but A(c_j) = {sl(cj)}" if 0 <= total + sub(j) < n else "and A is defined at no c_j"
    raise LayoutError(f"slice of {sl} at {cs} is not a layout: unsigned offset condition: CuTe adds the offset of the "
                      f"inner slice to {sl.offset} as an unsigned 32-bit int, so {total} wraps to {w}. CuTe would "
                      f"print {res} here; at j = {j}, c_j = {show(cj)}, R reads {sl.layout_a} at {w} + {sub(j)}, past "
                      f"its size {n}, {got}. CuTe would print evaluate({sl}, {cs}) = {res}")


def slice_composed(c: Any, sl: Any) -> tuple[Any, int]:
    """CuTe's ``slice_and_offset(c, A o O o L)`` (``swizzle_layout.hpp``, ``layout_composed.hpp``): the sliced layout
    and the offset of the fixed coordinates, as CuTe computes them. Post: ``R(j) - R(0) == A(c_j) - A(c_0)``, ``c_j``
    the coordinate with the kept modes at j; else refused (CuTe XORs the old offset with the fixed bits:
    ``Sw<3,2,3> o 8 o (8,32):(32,1)`` at ``(_,9)``)."""
    if not isinstance(sl, ComposedLayout):
        return slice_and_offset(c, sl)
    sw, off, lay = sl.layout_a, sl.offset, layout_arg(sl, "slice").layout_b  # L o O o Sw: no shape, refused
    fixed, cs = (lambda v: any(map(fixed, v)) if type(v) is tuple else v is not None), it.to_str(c).replace("None", "_")
    if isinstance(sw, Swizzle) and fixed(c) and type(lay) is ComposedLayout:
        slice_composed(c, lay)  # CuTe slices the inner part first: its refusal comes first
        raise LayoutError(f"slice of {sl} at {cs}: CuTe refuses it (the swizzle's slice dices the inner part {lay}, "
                          "itself composed, as a tuple: CuTe has no rank (tuple_size) of a ComposedLayout)")
    if not isinstance(sw, Swizzle) or not fixed(c):  # A o (O + offset) o slice, the inner part sliced as CuTe does
        sub, o = slice_composed(c, lay)
        if type(o) is F2 and o.value:  # L(c_j) = o ^ sub(j) (XOR), which A o O o L adds to O as an int
            raise LayoutError(f"slice of {sl} at {cs} is refused: F2 offset condition: the fixed coordinates give "
                              f"{lay} the F2 (XOR) offset {o}, which the kept coordinates' offsets XOR into, while the "
                              f"outer layout adds them to {off} as ints: no A o O' o slice(L) in general (CuTe has no "
                              "F2 strides); slice the F2 layout itself")
        o = int(o)  # F2(0): no fixed coordinate
        if fixed(c) and isinstance(getattr(lay, "layout_a", None), Swizzle) and type(sub) is Layout and off + o < 0:
            _unsigned(sl, c, cs, sub, off + o, slice_layout(c, lay.layout_b).shape)  # decayed: o is unsigned
        return make_composed(sw, off + o, sub), 0  # (CuTe drops Sw<0,M,S> o 0 before a Layout)
    if has_f2(lay.stride):  # no CuTe print (CuTe has no F2 strides): Sw o 0 o slice, A(c_0) XORed, where exact
        return _f2_slice(c, sl, cs)
    sliced = slice_layout(c, lay)  # a swizzle: the fixed coordinates' bits that feed it go into the new offset
    m, b, s = sw.base, sw.bits, abs(sw.shift)
    shp, dc = (1 << m, 1 << b, 1 << (s - b), 1 << b, 1), dice(c, c)
    anti, only = Layout(shp, (1, 0, 1 << (m + b), 0, 1 << (m + b + s))), Layout(shp, (0, 1 << m, 0, 1 << (m + s), 0))
    diced = Layout._raw(dice(c, lay.shape), dice(c, lay.stride))
    pairs = ((anti, diced), (only, diced), (only, sliced))
    parts = [cute_would_print(_composition, x, y) for x, y in pairs]
    leaves = [] if None in parts else zip(*map(it.flatten, (parts[1].shape, parts[1].stride,
                                                             it.idx2crd(dc, parts[1].shape))), strict=True)
    mixed, pow2 = 0, None not in parts
    for n, d, x in leaves:  # CuTe's to_mixed_bits: each shape*stride a power of 2 (or 0)
        mixed, pow2 = mixed ^ x * d & (n - 1) * d, pow2 and n * d >= 0 and not n * d & (n * d - 1)
    if not pow2:  # CuTe's first refusal: a projection's composition, or to_mixed_bits
        why = next((_refused(*q) for q, p in zip(pairs, parts, strict=True) if p is None), "shape*stride not 2^k")
        raise LayoutError(f"slice of {sl} at {show(c)}: CuTe refuses the projection of {sw} through the layout ({why})")
    d_anti, _, s_only = parts
    bits = s_only(size(s_only) - 1)
    new_off, passed = off ^ mixed, it.crd2idx(dc, d_anti.shape, d_anti.stride)  # C++'s divmod: c may be < 0
    z, y = sw.zzz_mask & -sw.zzz_mask, sw.yyy_mask & -sw.yyy_mask
    lo, hi = ([(z if new_off & (y << i) == 0 else -z) << i if f else (y + z if new_off & (z << i) == 0 else y - z) << i
               for i in range(b)] for f in (z < y, z > y))
    sw_lay = Layout((1 << m, *[2] * b, 1 << (s - b), *[2] * b, 1), (1, *lo, 1 << (m + b), *hi, 1 << (m + b + s)))
    decay = not bits & ~sw(bits)  # else the kept modes hit a y bit and its z bit: no decay
    res = cute_would_print(_composition, sw_lay, sliced) if decay else make_composed(sw, new_off, sliced)
    if res is None:
        raise LayoutError(f"slice of {sl} at {show(c)}: CuTe refuses the composition of {sw_lay} with {sliced}")

    def at(j: int) -> Any:  # A at c with the kept modes at j (c < 0 too: C++'s arithmetic), and that c
        x = _kept_at(c, sliced.shape, j)
        return (sl(x) if min(it.flatten(x)) >= 0 else sw(off + it.crd2idx(x, lay.shape, lay.stride))), show(x)

    proven = size(sliced) > 1 and checking() and _slice_proven(sw, off, lay, _kept_at(c, sliced.shape, 0), sliced, res)
    for j in range(1, capped(size(sliced), f"slice of {sl} at {cs} is refused: CuTe would print {res}, not confirmed "
                             "here (", few=True) if checking() and not proven else 0):
        if res(j) - res(0) != at(j)[0] - at(0)[0]:
            raise LayoutError(
                f"slice of {sl} at {cs} is not a layout: slice condition: R(j) - R(0) == A(c_j) - A(c_0), c_j the "
                f"coordinate with the kept modes at j; CuTe would print {res} here; at j = {j}, c_j = {at(j)[1]}, "
                f"that gives {res(j) - res(0)}, but A(c_j) - A(c_0) = {at(j)[0] - at(0)[0]}. CuTe would print "
                f"evaluate({sl}, {cs}) = {res}")
    return res, sw(new_off) + passed if decay else passed


def _slice_proven(sw: Swizzle, off: int, lay: Layout, c0: Any, sub: Layout, res: Any) -> bool:
    """``R(j) - R(0) == Sw(p + S(j)) - Sw(p)`` (p = O + L(c_0), S = sub) for every j, without the points (False: not
    proven, read them). Where the bit columns of S below h (above the swizzle's bits) are disjoint and none of p's,
    ``Sw(p + S(j)) = (Sw(p_h) ^ XOR_t Sw(low_t)) + the rest`` (F2-linear below h, an int sum above): R = Sw o q o S
    is equal when Sw(q_h), Sw(p_h) agree on the bits flipped; a Layout R when the flipped bits are disjoint and each
    column and step matches."""
    h = (1 << (sw.yyy_mask | sw.zzz_mask).bit_length()) - 1
    disjoint = lambda xs: sum(xs) == reduce(int.__or__, xs)  # noqa: E731  (non-negative bit sets)
    try:
        p = off + it.crd2idx(c0, lay.shape, lay.stride) if int_strides(sub) else None
    except LayoutError:
        return False
    if p is None:
        return False
    leaves = list(zip(it.flatten(it.wrap(sub.shape)), it.flatten(it.wrap(sub.stride)), strict=True))
    cut = -(1 << min([sw.base] + [(d & -d).bit_length() - 1 for s, d in leaves if s > 1 and d]))  # m: Sw(x + r) ==
    # Sw(x) + r for r < 2^m, x a multiple of 2^m (m at most the swizzle's base and each stride's lowest bit)
    same = type(res) is ComposedLayout and res.layout_a == sw and res.layout_b == sub  # R(j) = Sw(q + S(j))
    if same and not (res.offset & cut) - (p & cut) & h:
        return True  # q - p a multiple of 2^h: Sw(q + x) == Sw(p + x) + q - p
    bits, steps, w, p = [], [], 1, p & cut  # S's leaves: the bits (index, column) of a power-of-two shape, or the
    for s, d in leaves:  # steps (weight, shape, stride) of another whose stride has no bit below h
        if s > 1 and not s & (s - 1):
            bits += [(w << t, d << t) for t in range(s.bit_length() - 1)]
        elif s > 1 and d & h:
            return False
        elif s > 1:
            steps.append((w, s, d))
        w *= s
    low = [c & h for _, c in bits]
    if not disjoint([p & h, *low]) or sum(s for _, s, _ in steps) > 1 << 16:  # (each step read along its mode)
        return False
    flips, ph = [sw(x) for x in low], sw(p & h)
    if same:
        q = res.offset & cut & h
        return disjoint([q, *low]) and not (sw(q) ^ ph) & reduce(int.__or__, flips, 0)
    rs = [x for x in it.flatten(it.wrap(res.shape)) if x > 1] if type(res) is Layout and int_strides(res) else [0]
    for s in (s for s, _ in leaves if s > 1):  # R's leaves, grouped as S's: R sums the groups
        n = 1
        while n < s and rs:
            n *= rs.pop(0)
        rs = rs if n == s else [0]
    return not rs and disjoint([0, *flips]) and all(res(i) == (ph ^ f) - ph + c - lo for (i, c), lo, f in zip(
        bits, low, flips, strict=True)) and all(res(w * c) == c * d for w, s, d in steps for c in range(s))


def _f2_slice(c: Any, sl: ComposedLayout, cs: str) -> tuple[Any, F2]:
    """The slice of ``Sw o O o L`` (L with F2 strides) at c: ``R = Sw o 0 o slice(c, L)`` and the XOR offset
    ``F(A(c_0))``; exact where ``R(j) ^ A(c_0) == A(c_j)`` for every j (O adds to the bits of each ``L(c_j)`` without
    a carry, as a XOR), else refused with the first j where it is not. Proven without the points where L is F2-linear
    (``f2_columns``), c_0 inside its shape, and neither L(c_0) nor O + L(c_0) has a bit of the slice's columns: then
    ``O + L(c_j) = (O + L(c_0)) ^ S(j)`` and ``A(c_j) = A(c_0) ^ Sw(S(j))``."""
    sub, lay = slice_layout(c, sl.layout_b), sl.layout_b
    res, a0 = make_composed(sl.layout_a, 0, sub), int(sl(c0 := _kept_at(c, sub.shape, 0)))
    inside = lambda x, s: (type(s) is tuple and len(x) == len(s) and all(map(inside, x, s))) if type(  # noqa: E731
        x) is tuple else 0 <= x < it.product(s)
    cols = f2_columns(sub.shape, sub.stride) if f2_columns(lay.shape, lay.stride) and inside(c0, lay.shape) else None
    u = reduce(int.__or__, cols, 0) if cols else 0
    proven = bool(cols) and not (int(lay(c0)) & u or (sl.offset + int(lay(c0))) & u)
    for j in range(1, capped(size(sub), f"slice of {sl} at {cs} is refused: {res} (its F2 slice) is not confirmed "
                             "here (", few=True) if checking() and not proven else 0):
        if int(res(j)) ^ a0 != (want := int(sl(cj := _kept_at(c, sub.shape, j)))):
            raise LayoutError(
                f"slice of {sl} at {cs} is not a layout: F2 slice condition: R(j) ^ A(c_0) == A(c_j) for R = {res}, "
                f"c_j the coordinate with the kept modes at j (the offset {sl.offset} adds to the bits of L(c_j) as a "
                f"XOR only where it meets none of them); at j = {j}, c_j = {show(cj)}, R(j) ^ A(c_0) = "
                f"{int(res(j)) ^ a0}, but A(c_j) = {want}. CuTe has no F2 strides: write L with int strides for its "
                "slice")
    return res, F2(a0)


ComposedLayout.slice = staticmethod(lambda c, x: slice_composed(c, x)[0])  # x(c) with _ in c: CuTe's slice(c, x)


# --------------------------------------------------------------------------------------------- partition


def dice(proj: Any, x: Any, top: bool = True) -> Any:
    """CuTe's ``dice(proj, x)``: the entries of ``x`` where ``proj`` keeps the mode (not ``None``, CuTe's
    ``X`` = ``_``), nested ones lifted into this level (CuTe's ``lift_dice``):
    ``dice((1, (None, 1)), (a, (b, c))) == (a, c)``."""
    if is_tuple(proj) and (not is_tuple(x) or len(x) != len(proj)):
        raise LayoutError(f"projection {show(proj)} has {len(proj)} modes but {show(x)} does not (mismatched ranks)")
    if is_tuple(proj):
        return tuple(m for p, e in zip(proj, x, strict=True) for m in dice(p, e, False))
    return () if proj is None else x if top else (x,)


def _tile_if_function(fn: Any, args: tuple, at_divide: bool = False) -> Any:
    """CuTe's print ``(W, w0)`` of ``fn(*args)`` (local_tile, local_partition) of a plain A whose divide is not A o B,
    where that one tile is A's function all the same; else the point where it is not (text: ints) or None. Post:
    ``w0 + W(i) == A(x_i)`` at each point read, ``x_i`` the index ``z0 + Z(i)`` the same op takes on A's compact layout
    (a tiler by mode of Z's rank: each mode's coordinate). Ints: Z is CuTe's print, the points inside A are read (asked
    by ``shows_cute``, each call of a projection); scaled bases: Z is our checked tile (its steps join the derivation),
    every point is read, A continued past its end (asked where the divide fails: ``at_divide``); F2: None.

    >>> from algebra.core.notation import parse as P
    >>> local_tile(P("(8,(4,6)):(1,(8,100))"), (2, 3), (1, 0))  # 3 does not divide (4,6):(8,100), not one mode
    (Layout((2,3), (1,8)), 2)
    >>> print(local_tile(P("ArithTuple(0,(0,0)) o (8,(4,6)):(1@0,(1@0@1,1@1@1))"), (2, 3), (1, 0)))
    ArithTuple(2,(0,0)) o (2,3):(1@0,1@0@1)
    >>> local_tile(P("(8,(4,6)):(1,(8,100))"), (2, 3), (1, 1))  # CuTe reads (3,0),(4,0),(5,0) for (3,0),(0,1),(1,1)
    Traceback (most recent call last):
    ...
    algebra.core.errors.LayoutError: ...; the tile is not A: at i = 2 CuTe's tile gives 34, but A at the tile's \
coordinate (2, 4) is 102. CuTe would print local_tile(...) = (2,3):(1,8) at offset 26
    """
    a, rest = args[0], args[1:]
    basis = type(a) is Layout and any(isinstance(d, ScaledBasis) for d in it.flatten(a.stride))
    if not checking() or basis != at_divide or type(a) is not Layout or not (basis or int_strides(a)):
        return None
    val = lambda v: ArithTuple.of(v.as_tuple() if isinstance(v, ArithTuple | ScaledBasis) else v)  # noqa: E731
    try:
        z, z0 = fn(Layout(a.shape), *rest) if basis else cute_would_print(fn, Layout(a.shape), *rest) or (None, 0)
        if type(whole := cute_would_print(fn, *args)) is not tuple or z is None:
            return None
        n, (w, w0) = size(whole[0]), whole
        if n < 0 or capped(n, None, few=basis) != n or not (basis or 0 <= z0 < size(a)) or basis and size(z) != n:
            return None
        if size(z) != n:
            return f"the tile is not A's: CuTe's has {n} points, the tile of A {size(z)} ({z} at offset {z0})"
        by_mode = (not basis and fn.__name__ == "local_tile" and type(rest[0]) is tuple
                   and len(z.shape) == len(rest[0]) <= len(a))
        modes, parts = (list(a), list(z)) if by_mode else ([a], [z])  # the modes of A and of Z, or A and Z whole
        sizes, lens = [size(m) for m in modes], [size(zk) for zk in parts]
        base = [it.product(tuple(sizes[:k])) for k in range(len(sizes))]
        c0 = [z0 // b % s for b, s in zip(base, sizes, strict=True)] if by_mode else [z0]  # exact: 0 <= z0 < size(A)
        for i in range(n):
            crd, j = list(c0), i
            for k, zk in enumerate(parts):
                crd[k], j = crd[k] + zk(j % lens[k]) // base[k], j // lens[k]
            if not (basis or all(0 <= c < s for c, s in zip(crd, sizes, strict=True))):
                continue
            want = sum(m(c) for m, c in zip(modes, crd, strict=True))
            if (val(w0 + w(i)) != val(want)) if basis else w(i) + w0 != want:
                return None if basis else (f"the tile is not A: at i = {i} CuTe's tile gives {w(i) + w0}, but A at "
                                           f"the tile's coordinate {tuple(crd) if by_mode else crd[0]} is {want}")
    except LayoutError:  # the indices themselves are refused, or A cannot be read there
        return None
    return whole


@partial(shows_cute, tile=_tile_if_function)
def local_tile(tensor: Layout, tiler: Any, coord: Any, proj: Any = None) -> tuple[Layout, int]:
    """The tile of ``tensor`` at tile coordinate ``coord`` (CuTe's inner_partition): the tile layout and the
    offset of its first element. ``zipped_divide(L, tiler)(_, coord)``. With ``proj`` (CuTe's ``Step``: ``(1,
    None, 1)`` is ``Step<_1,X,_1>``) the tiler and the coordinate are first diced to the kept modes, so one
    (BLK_M, BLK_N, BLK_K) tiler serves A, B and C; a ``None`` in ``coord`` keeps that mode of tiles."""
    if proj is not None:
        return local_tile(tensor, dice(proj, tiler), dice(proj, coord))
    if isinstance(tensor, CoordTensor):  # make_identity_tensor's tile: a CoordTensor, its origin moved by the
        return tensor.moved(*local_tile(tensor.layout, tiler, coord))  # tile's first coordinate, as CuTe prints it
    try:
        tiled = zipped_divide(layout_arg(tensor, "local_tile"), tiler)
    except LayoutError:  # the whole divide is not A o B; the one tile CuTe prints may still be
        if type(got := _tile_if_function(local_tile, (tensor, tiler, coord), True)) is tuple:
            return got
        raise
    s = it.wrap(tiled.shape)
    r0, r1 = it.rank(s[0]), it.rank(s[1])
    if r0 == 0:  # CuTe slices it by repeat<0>(_) = (): its offset is a fold over nothing, which C++ does not compile
        raise LayoutError(f"local_tile: the tiler {show(tiler)} is empty, there is no tile to take (CuTe refuses it)")
    c0 = (None,) * r0 if r0 > 1 else None
    c1 = coord
    if is_tuple(coord):
        if len(coord) > r1 or not is_tuple(s[1]):
            raise LayoutError(f"local_tile: tile coordinate {it.to_str(coord)} does not match the rank of the tile "
                              f"grid {it.to_str(s[1])} (a tuple coordinate needs a tuple grid with at least as many "
                              "modes)")
        c1 = tuple(coord) + (None,) * (r1 - len(coord))  # CuTe's append<R1>(coord, _): a 1-tuple stays one
    try:
        sub, off = slice_composed((c0, c1), tiled)
    except LayoutError as err:
        raise LayoutError(f"local_tile: tile coordinate {it.to_str(coord)} does not match the tile grid "
                          f"{it.to_str(s[1])} ({err})") from None
    if (rec := active()) is not None:
        rec.step(f"fix the tile coordinate {show(coord)} in the rest mode: the tile is {sub}, its first element at "
                 f"offset {off}", sub, kind="result", offset=off)
    return sub, off


@partial(shows_cute, tile=_tile_if_function)
def local_partition(layout: Layout, tile: Layout, index: int, proj: Any = None) -> tuple[Layout, int]:
    """The elements that thread ``index`` of the thread layout ``tile`` owns (CuTe's outer_partition):
    ``zipped_divide(L, shape(tile))(crd, _)`` where ``tile(crd) == index``. Returns (layout, offset).
    ``crd`` is CuTe's ``tile.get_flat_coord(index)`` (each leaf ``(index / stride) % shape`` in C++); where it is
    outside the shape or ``tile(crd) != index`` (an index out of range, a negative or gapped stride), CuTe partitions
    for another thread: refused with what it prints (thread coordinate condition); a stride-0 mode is refused (CuTe
    divides by it). With ``proj`` (CuTe's ``Step``) the thread layout is first diced, ``dice(proj, tile)``, and
    ``index`` is a thread of the whole ``tile`` (the condition is checked there)."""
    if isinstance(layout, CoordTensor):  # the thread's coordinates: a CoordTensor, its origin moved
        return layout.moved(*local_partition(layout.layout, tile, index, proj))
    full = tile = _tiler_layout(tile)
    if proj is not None:
        tile = Layout._raw(dice(proj, tile.shape), dice(proj, tile.stride))
    if not isinstance(index, int):
        raise LayoutError(f"local_partition: the thread index must be an integer, got {index!r}")
    if has_f2(tile.stride):  # CuTe's tile.get_flat_coord(index) divides the index by the strides
        raise LayoutError(f"local_partition: the thread layout {tile} has F2 (XOR) strides: a thread's coordinate is "
                          "found by dividing its index by the strides (CuTe's get_flat_coord), which XOR strides do "
                          "not allow; use a thread layout with integer strides")
    tiler = it.product_each(tile.shape)
    try:
        crd, hier = get_flat_coord(tile, index), get_hier_coord(full, index)
    except LayoutError as e:
        raise LayoutError(f"local_partition: thread {index}'s coordinate in the thread layout {full}: {e}") from None
    if (rec := active()) is not None:
        rec.step(f"thread {index} sits at coordinate {show(crd)} of the thread layout {tile}; divide A by its shape "
                 f"{it.to_str(tiler)}")
    try:
        tiled = nested(rec, zipped_divide, layout_arg(layout, "local_partition"), tiler)
    except LayoutError:
        if type(got := _tile_if_function(local_partition, (layout, full, index, proj), True)) is tuple:
            return got
        raise
    r1 = it.rank(it.wrap(tiled.shape)[1])
    c1 = (None,) * r1 if r1 > 1 else None
    at, n = it.crd2idx(hier, full.shape, full.stride), size(full)
    if at != index or any(not 0 <= c < m for c, m in zip(it.flatten(hier), it.flatten(full.shape), strict=True)):
        call = f"local_partition({layout}, {full}, {index}{'' if proj is None else ', ' + show(proj)})"
        got = cute_would_print(slice_composed, (crd, c1), tiled)
        out = "" if 0 <= index < n else f"; the thread index {index} is out of range 0..{n - 1} of its {n} threads"
        why = f", not {index}" if at != index else ", but c is outside its shape"
        raise LayoutError(
            f"{call} is not a layout: thread coordinate condition: tile(c) == {index} with c inside the shape of "
            f"{full}, c = CuTe's get_flat_coord({index}) (each leaf (index / stride) % shape){out}; at c = "
            f"{show(hier)} the thread layout gives {at}{why}: CuTe partitions for another thread (or none). " +
            (f"CuTe would print {call} = {got[0]} at offset {got[1]}" if got else "CuTe's slice there is unread"))
    sub, off = slice_composed((crd, c1), tiled)
    if rec is not None:
        rec.step(f"zipped_divide(A, {it.to_str(tiler)}) = {tiled}", tiled)
        rec.step(f"fix the position inside every tile to {show(crd)}: the thread's elements are {sub}, the first at "
                 f"offset {off}", sub, kind="result", offset=off)
    return sub, off
