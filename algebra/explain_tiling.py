"""Traced inverses, divides, products, tile_to_shape, local_tile / local_partition and max_common_vector
(``algebra.products`` / ``algebra.ops``), built on the traced composition and complement of ``explain_core``."""

from __future__ import annotations

from typing import Any

from algebra import inttuple as it
from algebra import ops
from algebra import products as P
from algebra.errors import LayoutError
from algebra.explain_core import (
    Recorder,
    as_layout,
    lay,
    show,
    trace_complement,
    trace_composition,
)
from algebra.inttuple import is_int, is_tuple, tdiv
from algebra.layout import Layout, cosize, get_flat_coord, make_layout, make_ordered_layout, slice_and_offset

R = Layout._raw


def _composed(x: Any) -> bool:
    return hasattr(x, "layout_b")


def _by_mode(rec: Recorder, layout: Layout, tiler: tuple, f: Any, name: str) -> Layout:
    n = it.rank(layout.shape)
    if len(tiler) > n:
        raise LayoutError(f"{name}: too many modes in tiler ({len(tiler)} for a rank-{n} layout {layout})")
    rec.add(f"the tiler has {len(tiler)} modes: {name} mode i of A by tiler mode i"
            + ("; the other modes of A are kept" if len(tiler) < n else ""))
    modes = []
    for i in range(len(tiler)):
        rec.add(f"mode {i}: {name}({layout[i]}, {show(tiler[i])})")
        with rec.sub():
            modes.append(f(rec, layout[i], tiler[i]))
    modes += [layout[i] for i in range(len(tiler), n)]
    res = make_layout(*modes)
    rec.add(f"side by side: {res}", res, kind="result")
    return res


def _inner(rec: Recorder, layout: Any, name: str, f: Any, *args: Any) -> Any:
    rec.add(f"A = {layout}: {name} its inner layout {layout.layout_b}; the swizzle stays outside")
    with rec.sub():
        inner = f(rec, layout.layout_b, *args)
    res = layout.with_layout_b(inner)
    rec.add(f"put the swizzle back outside: {res}", res, kind="result")
    return res


# --------------------------------------------------------------------------------------------- divides


def trace_logical_divide(rec: Recorder, layout: Any, tiler: Any) -> Any:
    if _composed(layout):
        return _inner(rec, layout, "divide", trace_logical_divide, tiler)
    if tiler is None:
        rec.add("the tiler is _ (keep this mode): A is unchanged", layout, kind="result")
        return layout
    if is_tuple(tiler):
        return _by_mode(rec, layout, tiler, trace_logical_divide, "logical_divide")
    t = as_layout(tiler, rec)
    cshape = ops.coalesce(layout).shape
    rec.add(f"B* = complement(B, {show(cshape)}) (the shape of coalesce(A)): where the copies of the tile start")
    with rec.sub():
        comp = trace_complement(rec, t, cshape)
    rec.add(f"B* = {comp}", comp)
    cat = make_layout(t, comp)
    rec.add(f"concatenate (B, B*) = {cat}: every 1-D coordinate of A, as (inside the tile, which tile)", cat)
    with rec.sub():
        res = trace_composition(rec, layout, cat)
    rec.add(f"compose: A o (B, B*) = {res}; mode 0 is the tile, mode 1 runs over the tiles", res, kind="result")
    return res


def trace_zipped_divide(rec: Recorder, layout: Any, tiler: Any) -> Any:
    if _composed(layout):
        return _inner(rec, layout, "zipped_divide", trace_zipped_divide, tiler)
    ld = trace_logical_divide(rec, layout, tiler)
    res = P.tile_unzip(ld, tiler)
    rec.add(f"gather the tile modes, then the rest modes: ((tile), (rest)) = {res}", res, kind="result")
    return res


def trace_tiled_divide(rec: Recorder, layout: Any, tiler: Any) -> Any:
    if _composed(layout):
        return _inner(rec, layout, "tiled_divide", trace_tiled_divide, tiler)
    z = trace_zipped_divide(rec, layout, tiler)
    res = P._unpack(z, False, True)
    rec.add(f"unpack the rest modes into their own modes: ((tile), r0, r1, ...) = {res}", res, kind="result")
    return res


def trace_flat_divide(rec: Recorder, layout: Any, tiler: Any) -> Any:
    if _composed(layout):
        return _inner(rec, layout, "flat_divide", trace_flat_divide, tiler)
    z = trace_zipped_divide(rec, layout, tiler)
    res = P._unpack(z, True, True)
    rec.add(f"unpack both groups: (t0, t1, ..., r0, r1, ...) = {res}", res, kind="result")
    return res


# --------------------------------------------------------------------------------------------- products


def trace_logical_product(rec: Recorder, block: Any, tiler: Any) -> Any:
    if _composed(block):
        return _inner(rec, block, "multiply", trace_logical_product, tiler)
    if tiler is None:
        rec.add("the tiler is _ (keep this mode): A is unchanged", block, kind="result")
        return block
    if is_tuple(tiler):
        return _by_mode(rec, block, tiler, trace_logical_product, "logical_product")
    t = as_layout(tiler, rec)
    size_a, cos_b = it.product(block.shape), cosize(t)
    cotarget = size_a * cos_b
    rec.add(f"cotarget = size(A) * cosize(B) = {size_a}*{cos_b} = {cotarget}")
    with rec.sub():
        comp = trace_complement(rec, block, cotarget)
    rec.add(f"A* = complement(A, {cotarget}) = {comp}: where the copies of A can start", comp)
    with rec.sub():
        rest = trace_composition(rec, comp, t)
    rec.add(f"A* o B = {rest}: B picks which copies of A, in which order", rest)
    res = make_layout(block, rest)
    rec.add(f"concatenate (A, A* o B) = {res}: mode 0 is A, mode 1 runs over its copies", res, kind="result")
    return res


def _unzipped(rec: Recorder, block: Any, tiler: Any, first: bool | None) -> Any:
    lp = trace_logical_product(rec, block, tiler)
    z = P.tile_unzip(lp, tiler)
    rec.add(f"gather the block modes, then the repeat modes: ((block), (repeats)) = {z}", z,
            kind="result" if first is None else "step")
    if first is None:
        return z
    res = P._unpack(z, first, True)
    what = "both groups" if first else "the repeat modes"
    rec.add(f"unpack {what} into their own modes: {res}", res, kind="result")
    return res


def trace_zipped_product(rec: Recorder, block: Any, tiler: Any) -> Any:
    return _unzipped(rec, block, tiler, None)


def trace_tiled_product(rec: Recorder, block: Any, tiler: Any) -> Any:
    return _unzipped(rec, block, tiler, False)


def trace_flat_product(rec: Recorder, block: Any, tiler: Any) -> Any:
    return _unzipped(rec, block, tiler, True)


def _rank_sensitive(rec: Recorder, block: Any, tiler: Any, raked: bool) -> Layout:
    block, tiler = P._tiler_layout(block), P._tiler_layout(tiler)
    r = max(it.rank(block.shape), it.rank(tiler.shape))
    pb, pt = P._append_to_rank(block, r), P._append_to_rank(tiler, r)
    if pb != block or pt != tiler:
        rec.add(f"pad both to rank {r} with 1:0 modes: A = {pb}, B = {pt}")
    rec.add("logical_product(A, B) = (A, A* o B)")
    with rec.sub():
        lp = trace_logical_product(rec, pb, pt)
    rec.add(f"logical_product = {lp}", lp)
    if raked:
        res = P._zip_modes(lp[1], lp[0])
        rec.add(f"zip mode by mode, repeats first: mode i = ((A* o B)_i, A_i), so the copies interleave (rake) "
                f"inside each mode: {res}", res, kind="result")
    else:
        res = P._zip_modes(lp[0], lp[1])
        rec.add(f"zip mode by mode: mode i = (A_i, (A* o B)_i), the block inside, then which block: {res}", res,
                kind="result")
    return res


def trace_blocked_product(rec: Recorder, block: Any, tiler: Any) -> Layout:
    return _rank_sensitive(rec, block, tiler, raked=False)


def trace_raked_product(rec: Recorder, block: Any, tiler: Any) -> Layout:
    return _rank_sensitive(rec, block, tiler, raked=True)


def trace_tile_to_shape(rec: Recorder, block: Any, target_shape: Any, order: Any = None) -> Layout:
    block = P._tiler_layout(block)
    target = it.check_shape(target_shape, "target shape")
    r = it.rank(target)
    if it.rank(block.shape) > r:
        raise LayoutError("tile_to_shape: rank of layout must be <= rank of target shape")
    padded = P._append_to_rank(block, r)
    bshape, tshape = it.product_each(padded.shape), it.product_each(target)
    if not it.evenly_divides(tshape, bshape):
        raise LayoutError(
            f"tile_to_shape: block shape {it.to_str(bshape)} does not divide the target shape {it.to_str(tshape)}")
    pshape = it.ceil_div(tshape, bshape)
    tiler = Layout(pshape) if order is None else make_ordered_layout(pshape, order)
    rec.add(f"the block covers {it.to_str(bshape)} of the target {it.to_str(tshape)}: repeat it "
            f"{it.to_str(pshape)} times, the repeats laid out as {tiler}", tiler)
    with rec.sub():
        res = _rank_sensitive(rec, padded, tiler, raked=False)
    rec.add(f"blocked_product(block, {tiler}) = {res}", res, kind="result")
    return res


# --------------------------------------------------------------------------------------------- inverses


def _prefix(ls: tuple) -> list[int]:
    pre = [1]
    for s in ls:
        pre.append(pre[-1] * s)
    return pre


def trace_right_inverse(rec: Recorder, layout: Any) -> Layout:
    """``ops.right_inverse``: follow the modes in stride order while each starts where the last one ended."""
    layout = ops._as_layout(layout)
    c = ops.coalesce(layout)
    rec.add(f"coalesce A to {c}", c)
    ls, ld = it.wrap(c.shape), it.wrap(c.stride)
    if any(not is_int(d) for d in ld):
        raise LayoutError("right_inverse: basis (E) strides are not supported")
    pre = _prefix(ls)
    rec.add("each mode's step in A's 1-D coordinate (prefix products of the shape): "
            + ", ".join(f"mode {i} ({ls[i]}:{ld[i]}) steps by {pre[i]}" for i in range(len(ls))))
    res_s, res_d, cur = [1], [0], 1
    for i in ops._sorted_modes(ld):
        if ld[i] == cur:
            res_s.append(ls[i])
            res_d.append(pre[i])
            rec.add(f"mode {i} ({ls[i]}:{ld[i]}) starts at offset {cur}, the first one not reached yet: offsets "
                    f"{cur}, {2 * cur}, ... come from 1-D coordinates {pre[i]} apart, add {ls[i]}:{pre[i]}",
                    lay(tuple(res_s), tuple(res_d)))
            cur = ls[i] * ld[i]
        else:
            rec.add(f"mode {i} ({ls[i]}:{ld[i]}) does not start at offset {cur}: it is not part of the contiguous run")
    res = ops.coalesce(R(tuple(res_s), tuple(res_d)))
    rec.add(f"coalesce: R = {res}, with A(R(i)) = i for i < {it.product(res.shape)}", res, kind="result")
    return res


def trace_left_inverse(rec: Recorder, layout: Any) -> Layout:
    """``ops.left_inverse``: in stride order, each mode's stride divided by the size covered before it."""
    layout = ops._as_layout(layout)
    c = ops.coalesce(layout)
    rec.add(f"coalesce A to {c}", c)
    ls, ld = it.wrap(c.shape), it.wrap(c.stride)
    if any(not is_int(d) for d in ld):
        raise LayoutError("left_inverse: basis (E) strides are not supported")
    pre = _prefix(ls)
    order = ops._sorted_modes(ld)
    res_s: list = []
    res_d: list = [0]
    for i in order:
        d = ld[i]
        if d == 0:
            rec.add(f"mode {i} ({ls[i]}:0) is a broadcast: it has no inverse, skip it")
            continue
        covered = it.product(tuple(res_s))
        if d % covered != 0:
            raise LayoutError(
                f"left inverse divisibility condition: stride {d} of mode {i} is not a multiple of {covered}")
        res_s.append(tdiv(d, covered))
        res_d.append(pre[i])
        k = len(res_s) - 1
        rec.add(f"mode {i} ({ls[i]}:{d}): offsets below {d} come in {res_s[-1]} block(s) of {covered}, giving R the "
                f"mode {res_s[-1]}:{res_d[k]}; one step of mode {i} is 1-D coordinate {pre[i]} of A, the next "
                "mode's stride", lay(it.unwrap(tuple(res_s)), it.unwrap(tuple(res_d[:k + 1]))))
    res_s.append(ls[order[-1]])
    raw = R(tuple(res_s), tuple(res_d))
    rec.add(f"the last mode in stride order repeats {ls[order[-1]]} times: {raw}", raw)
    res = ops.coalesce(raw)
    rec.add(f"coalesce: R = {res}, with R(A(i)) = i for every coordinate i of an injective A", res, kind="result")
    return res


# --------------------------------------------------------------------------------------------- partitions


def trace_local_tile(rec: Recorder, layout: Any, tiler: Any, coord: Any) -> tuple[Layout, int]:
    tiled = trace_zipped_divide(rec, layout, tiler)
    s = it.wrap(tiled.shape)
    r0, r1 = it.rank(s[0]), it.rank(s[1])
    c0 = tuple(None for _ in range(r0)) if r0 > 1 else None
    if is_tuple(coord):
        if len(coord) > r1:
            raise LayoutError(f"local_tile: coordinate {it.to_str(coord)} has more modes than the tile grid")
        c1 = tuple(coord) + tuple(None for _ in range(r1 - len(coord))) if r1 > 1 else coord[0]
    else:
        c1 = coord
    sub, off = slice_and_offset((c0, c1), tiled)
    rec.add(f"fix the tile coordinate {show(coord)} in the rest mode: the tile is {sub}, its first element at "
            f"offset {off}", sub, kind="result", offset=off)
    return sub, off


def trace_local_partition(rec: Recorder, layout: Any, tile: Any, index: int) -> tuple[Layout, int]:
    tile = P._tiler_layout(tile)
    tiler = it.product_each(tile.shape)
    crd = get_flat_coord(tile, index)
    rec.add(f"thread {index} sits at coordinate {show(crd)} of the thread layout {tile}; divide A by its shape "
            f"{it.to_str(tiler)}")
    if is_tuple(crd) and len(crd) < len(tiler):
        crd = crd + (None,) * (len(tiler) - len(crd))
    with rec.sub():
        tiled = trace_zipped_divide(rec, layout, tiler)
    rec.add(f"zipped_divide(A, {it.to_str(tiler)}) = {tiled}", tiled)
    s = it.wrap(tiled.shape)
    r1 = it.rank(s[1])
    c1 = tuple(None for _ in range(r1)) if r1 > 1 else None
    sub, off = slice_and_offset((crd, c1), tiled)
    rec.add(f"fix the position inside every tile to {show(crd)}: the thread's elements are {sub}, the first at "
            f"offset {off}", sub, kind="result", offset=off)
    return sub, off


def _common(rec: Recorder, a: Any, b: Any) -> tuple[Layout, Layout]:
    rec.add("invert B on its contiguous offsets: right_inverse(B)")
    with rec.sub():
        inv_b = trace_right_inverse(rec, b)
    rec.add(f"right_inverse(B) = {inv_b}", inv_b)
    with rec.sub():
        comp = trace_composition(rec, a, inv_b)
    common = ops.coalesce(comp)
    rec.add(f"A o right_inverse(B) = {comp}, coalesced {common}: A's offset at each of B's offsets 0, 1, 2, ...",
            common)
    return inv_b, common


def trace_max_common_vector(rec: Recorder, a: Any, b: Any) -> int:
    _, common = _common(rec, a, b)
    s0, d0 = it.wrap(common.shape)[0], it.wrap(common.stride)[0]
    n = s0 if d0 == 1 else 1
    why = f"its first mode {s0}:{d0} has stride 1" if d0 == 1 else f"its first mode {s0}:{d0} is not stride 1"
    rec.add(f"{why}: {n} element(s) are contiguous in both", None, kind="result", value=str(n))
    return n


def trace_max_common_layout(rec: Recorder, a: Any, b: Any) -> Layout:
    inv_b, common = _common(rec, a, b)
    s0, d0 = it.wrap(common.shape)[0], it.wrap(common.stride)[0]
    if d0 == 1:
        res = ops.composition(inv_b, Layout._raw(s0, d0))
        rec.add(f"its first mode {s0}:1 is contiguous: right_inverse(B) o {s0}:1 = {res}", res, kind="result")
    else:
        res = Layout._raw(1, 0)
        rec.add(f"its first mode {s0}:{d0} is not stride 1: nothing in common beyond one element, {res}", res,
                kind="result")
    return res
