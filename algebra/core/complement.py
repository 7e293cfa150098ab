"""Complement (CuTe's ``layout.hpp``, static case): the layout of the offsets a layout does not reach."""

from __future__ import annotations

from typing import Any

from algebra.core import inttuple as it
from algebra.core.arith import f2_columns, f2_solve, has_f2
from algebra.core.errors import LayoutError, no_modes
from algebra.core.inttuple import tdiv
from algebra.core.layout import Layout, _as_layout
from algebra.core.memo import memo
from algebra.core.modes import bw_coalesce, flat_pair
from algebra.core.notation import show
from algebra.core.recorder import active, nested
from algebra.core.swizzle import ComposedLayout

R = Layout._raw


@memo
def complement(layout: Layout, cotarget: Any = None) -> Layout:
    """The layout of the offsets ``layout`` does not reach, up to ``cotarget`` (default: ``cosize(layout)``).

    Post: ``size(R) >= cotarget / size(filter(L))``; R is ordered (``R(i-1) < R(i)``); R and L only share 0.
    Refuses non-injective layouts ("Non-injective Layout detected in complement").
    """
    rec = active()
    if type(layout) is ComposedLayout:  # CuTe: the complement of the inner layout, up to its cosize by default
        if rec is not None:
            rec.step(f"A = {layout}: its complement is that of its inner layout {layout.layout_b}")
        return nested(rec, complement, layout.layout_b, cotarget)
    if type(layout) is not Layout:
        layout = _as_layout(layout)
    fs, fd = flat_pair(layout.shape, layout.stride)
    if not fs or cotarget == ():
        raise no_modes("complement", layout if not fs else "the cotarget ()")
    for d in fd:
        if type(d) is not int:
            ints = False
            break
    else:
        ints = True
    if not ints and has_f2(layout.stride):
        return _f2_complement(layout, cotarget, rec)
    shapes: list = []  # the modes of filter(A) (drop stride-0 and size-1 modes, coalesce), built back to front
    strides: list = []
    for i in range(len(fs) - 1, -1, -1):
        s = fs[i]
        if s == 1:
            continue
        d = fd[i]
        if type(d) is int and d == 0:
            continue
        if shapes and s * d == strides[-1]:
            shapes[-1] *= s
            strides[-1] = d
        else:
            shapes.append(s)
            strides.append(d)
    shapes.reverse()
    strides.reverse()
    if rec is not None:
        fl = R(it.unwrap(tuple(shapes)), it.unwrap(tuple(strides))) if shapes else R(1, 0)
        rec.step(f"filter A (drop stride-0 and size-1 modes, coalesce): {fl}", fl)
    if cotarget is None:
        cotarget = 1
        for i in range(len(shapes)):
            cotarget += (shapes[i] - 1) * abs(strides[i])
        if rec is not None:
            rec.step(f"no cotarget given: use cosize(A) = {cotarget}")
    elif type(cotarget) is not int or cotarget <= 0:  # a layout: CuTe's shape(cotarget)
        cotarget = cotarget.shape if isinstance(cotarget, Layout | ComposedLayout) else \
            it.check_shape(cotarget, "cotarget")
    if not shapes:
        res = Layout(it.product(cotarget))
        if rec is not None:
            rec.step(f"A only reaches offset 0: the complement is all of [0, {show(cotarget)}), {res}", res,
                     kind="result")
        return res
    if not ints and set(map(type, strides)) != {int}:
        raise LayoutError("complement: basis (E) strides are not supported")
    min_d = strides[0] if len(strides) == 1 else min(strides)  # (no builtin call for one mode)
    positive = min_d > 0
    if rec is not None and len(shapes) > 1:
        order = sorted(range(len(strides)), key=lambda k: strides[k])
        rec.step("sort the modes by stride: " + ", ".join(f"{shapes[k]}:{strides[k]}" for k in order))
    res_s: list = []
    res_d: list = [1]
    last = 1
    while True:
        k = 0 if len(strides) == 1 else strides.index(min_d)
        new_s = min_d // last if positive else tdiv(min_d, last)
        if new_s == 0:
            if positive:
                raise LayoutError(f"Non-injective Layout detected in complement: {layout} has overlapping modes")
            raise LayoutError(f"Non-injective Layout detected in complement: {layout} has a negative stride, and "
                              f"CuTe's fold (smallest stride first) reaches the mode of stride {min_d} where the "
                              f"block before it ends at {last}: {min_d} / {last} is 0, which CuTe rejects with this "
                              "message (its static_assert) even where no two modes overlap")
        res_s.append(new_s)
        if rec is not None:
            rec.step(_fill_text(shapes[k], min_d, last, new_s), R(it.unwrap(tuple(res_s)), it.unwrap(tuple(res_d))))
        if len(shapes) == 1:
            break
        last = min_d * shapes.pop(k)
        res_d.append(last)
        del strides[k]
        min_d = strides[0] if len(strides) == 1 else min(strides)
    new_d = strides[0] * shapes[0]
    rest_s = (cotarget + new_d - 1) // new_d if type(cotarget) is int and new_d > 0 else \
        it.product(_copies(layout, cotarget, new_d))
    res = R(*bw_coalesce(res_s, res_d, rest_s, 0 if rest_s == 1 else new_d))
    if rec is not None:
        rec.step(_copies_text(cotarget, new_d, rest_s))
        rec.step(f"coalesce {it.to_str(tuple(res_s) + (rest_s,))}:{it.to_str(tuple(res_d) + (new_d,))}: the "
                 f"complement is {res}", res, kind="result")
    return res


def _fill_text(s: int, d: int, last: int, new_s: int) -> str:
    """The step that adds the gap mode ``new_s:last`` before the mode ``s:d`` (``new_s`` = CuTe's ``d / last``)."""
    if d > 0 and last > 0 and d % last:
        return (f"mode {s}:{d} starts at {d}; the block covered so far has size {last}, which does not divide {d}: "
                f"CuTe's integer division {d} // {last} = {new_s} adds {new_s}:{last}, and the copies of the block "
                f"stop at {new_s * last}, short of {d}; with the mode the block reaches {d}*{s} = {d * s}")
    if d > 0 and last > 0:
        fill = (f"it starts where that block ends: no gap (the mode 1:{last}, dropped when coalescing)"
                if new_s == 1 else f"{new_s} copies of that block, {last} apart, fill [0, {d}) ({d}/{last} = {new_s}, "
                f"a gap of {new_s - 1}): add {new_s}:{last}")
        return (f"mode {s}:{d} starts at {d}; the block covered so far has size {last}, so {fill}; with the mode the "
                f"block reaches {d}*{s} = {d * s}")
    return (f"mode {s}:{d} has a negative stride (or follows one): CuTe's fold divides its stride by the extent so "
            f"far, {d} / {last} = {new_s} in C++'s integer division (toward zero), and adds {new_s}:{last}; the "
            f"extent becomes {d}*{s} = {d * s} (no longer an interval [0, n) of offsets)")


def _copies_text(cotarget: Any, new_d: int, rest_s: int) -> str:
    """The step that adds ``rest_s:new_d``, the copies of the block [0, new_d) that reach the cotarget (CuTe's
    ``ceil_div(cotarget, new_d)``, its product where the cotarget is a tuple)."""
    if type(cotarget) is int and new_d > 0:
        return (f"A's modes and the gap modes make a block of extent {new_d}; ceil({cotarget} / {new_d}) = {rest_s} "
                f"copies of that block, {new_d} apart, reach the cotarget: add {rest_s}:{new_d}")
    if type(cotarget) is int:
        return (f"A and the gaps end at {new_d} (a negative extent): CuTe's ceil_div({cotarget}, {new_d}) = "
                f"({cotarget} + {new_d} - 1) / {new_d} = {rest_s} in C++'s integer division (toward zero): add "
                f"{rest_s}:{new_d}")
    per_mode = it.ceil_div(cotarget, new_d)
    return (f"A and the gaps cover an extent of {new_d}; CuTe's ceil_div({show(cotarget)}, {new_d}) divides the "
            f"cotarget mode by mode by what is left of {new_d}: {show(per_mode)}, {rest_s} copies of that block in "
            f"all, {new_d} apart: add {rest_s}:{new_d}")


def _copies(layout: Layout, cotarget: Any, new_d: int) -> Any:
    """CuTe's ``ceil_div(cotarget, new_d)``: how many copies of the block [0, new_d) reach the cotarget, the divisor
    folded across the cotarget's modes (C++ integer arithmetic). Refused where that divides by zero, naming the mode
    of the cotarget (a negative stride makes ``new_d`` negative, and the fold can reach 0)."""
    try:
        return it.ceil_div(cotarget, new_d)
    except LayoutError:
        pass
    rest = new_d
    for k, x in enumerate(it.wrap(cotarget)):
        try:
            it.ceil_div(x, rest)
            rest = it.ceil_div(rest, x)
        except LayoutError:
            raise LayoutError(
                f"complement({layout}, {show(cotarget)}): division by zero: the modes of A cover a block of extent "
                f"{new_d} (its stride is negative), and ceil_div({show(cotarget)}, {new_d}), which divides the "
                f"cotarget mode by mode by what is left of {new_d}, is left with {rest} to divide mode {k} "
                f"({show(x)}) by. CuTe divides by zero there too (its program stops with SIGFPE)") from None
    raise LayoutError(f"complement({layout}, {show(cotarget)}): division by zero in ceil_div")


def _f2_complement(layout: Layout, cotarget: Any, rec: Any) -> Layout:
    """The complement of an F2-linear layout (``arith.f2_columns``) in ``[0, cotarget)``, an int cotarget rounded up
    to a power of two (default: the least one above every offset): the unit bits outside the span of its columns,
    lowest first, as int strides. Post: every offset below the cotarget is ``L(j) ^ R(i)`` for exactly one ``(i, j)``
    (j in filter(L)); R is ordered. Refused when L is not F2-linear, its non-zero columns are dependent (filter(L) is
    not injective), or the cotarget is not a positive int.

    >>> from algebra.core.notation import parse
    >>> str(complement(parse("(4,4):(F1,F9)"), 64)), str(complement(parse("(4,4):(F1,F9)"), 40))
    ('(2,2):(4,32)', '(2,2):(4,32)')
    """
    cols = f2_columns(layout.shape, layout.stride)
    if cols is None:
        raise LayoutError(f"complement: {layout} has F2 strides but is not F2-linear (each mode needs a power-of-two "
                          "shape, and an F2 stride or a power-of-two int stride on bits of its own)")
    cols = [c for c in cols if c]  # filter(L): a broadcast mode (F0 or 0) drops out first, as in CuTe
    if any(f2_solve(cols[:j], [cols[j]])[0] is not None for j in range(len(cols))):  # a column in the span before
        raise LayoutError(f"Non-injective Layout detected in complement: the F2 columns of {layout} are dependent")
    if cotarget is None:
        cotarget = 1 << max((c.bit_length() for c in cols), default=0)
    if type(cotarget) is not int or cotarget <= 0:
        raise LayoutError(f"complement of {layout} (F2 strides): the cotarget must be a positive int: {show(cotarget)}")
    chosen: list[int] = []
    for t in range((cotarget - 1).bit_length()):  # the bits below the cotarget rounded up to a power of two
        if f2_solve(cols + chosen, [1 << t])[0] is None:
            chosen.append(1 << t)
    res = R(*bw_coalesce((2,) * len(chosen), chosen, 1, 0))
    if rec is not None:
        rec.step(f"A has F2 strides: its offsets are the span of its bit columns {', '.join(map(str, cols))}; the "
                 f"unit bits below {cotarget} outside that span, lowest first, give the complement {res}", res,
                 kind="result")
    return res
