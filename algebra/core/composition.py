"""Composition, CuTe's ``R = A o B`` (``cute/layout.hpp`` and ``swizzle_layout.hpp``, static case), and what a
refused op built on it names: what CuTe would print for the whole call.

``composition`` dispatches: two Layouts go to ``compose_layouts`` (``algebra.core.layout``: coalesce A, compose each
mode of B, check the answer is ``A o B``); a tiler goes mode by mode; swizzles stay outside (``compose_swizzled``).
With a recorder active (``explain``) the general code runs and records each decision.
"""

from __future__ import annotations

import re
from functools import wraps
from typing import Any

from algebra.core import inttuple as it
from algebra.core.checks import check_composition, checking, cute_would_print, structural_failure
from algebra.core.coalesce import coalesce_x
from algebra.core.errors import LayoutError
from algebra.core.fastpath import _compose_int, _compose_modes, coalesce_x_flat
from algebra.core.inttuple import is_int, is_tuple
from algebra.core.layout import Layout, _as_layout, compose_layouts, make_layout
from algebra.core.memo import memo
from algebra.core.notation import show
from algebra.core.quick import q_composition
from algebra.core.recorder import Recorder, active, nested
from algebra.core.swizzle import ComposedLayout, Swizzle, layout_swizzle, make_composed, merge_swizzles

R = Layout._raw


_WHOLE = re.compile(r"\. CuTe would print [a-z_]+\(.*$", re.S)


def whole_refusal(fn: Any, args: tuple, err: LayoutError) -> LayoutError | None:
    """``err`` (a refusal of an inner composition that is not ``A o B``) extended with what CuTe prints for the
    whole call ``fn(*args)``: ``... CuTe would print fn(args) = R``; None when there is nothing to add (another kind
    of refusal, CuTe refuses the call too, or the message already shows the whole answer)."""
    msg = str(err)
    if not checking() or "CuTe would print" not in msg:
        return None
    whole = cute_would_print(fn, *args)
    if whole is None or f"CuTe would print {whole} here" in msg:
        return None
    text = ", ".join(show(a) for a in args)
    if type(whole) is tuple:  # local_tile / local_partition: the tile and its first element's offset
        whole = f"{whole[0]} at offset {whole[1]}"
    return LayoutError(f"{_WHOLE.sub('', msg)}. CuTe would print {fn.__name__}({text}) = {whole}")


def shows_cute(fn: Any) -> Any:
    """For an op built on composition (composition with a tiler, local_tile, local_partition; the divides and
    products get the same from ``products.through_swizzle``): a refusal because an inner composition is not
    ``A o B`` also names what CuTe prints for the whole op, ``... CuTe would print op(args) = R``."""
    plain = fn.__name__ == "composition"

    @wraps(fn)
    def wrapper(*args: Any) -> Any:
        try:
            return fn(*args)
        except LayoutError as err:
            if plain and type(args[0]) is Layout and type(args[1]) is Layout:
                raise  # composition of two layouts: its message already shows what CuTe prints
            new = whole_refusal(fn, args, err)
            if new is None:
                raise
            raise new from None

    return wrapper


def _compose_impl(ls: Any, ld: Any, rs: Any, rd: Any, rec: Recorder | None = None, path: str = "") -> tuple:
    if type(rs) is tuple:
        if rec is None:
            pairs = [_compose_impl(ls, ld, s, d) for s, d in zip(rs, rd, strict=True)]
            return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        if not path:
            rec.step(f"B = {R(rs, rd)} has {len(rs)} modes: each is composed with A on its own and the results sit "
                     "side by side, so R has the shape of B")
        pairs = []
        for i, (s, d) in enumerate(zip(rs, rd, strict=True)):
            rec.step(f"mode {path}{i} of B: {R(s, d)}")
            pairs.append(nested(rec, _compose_impl, ls, ld, s, d, rec, f"{path}{i}."))
        out = tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        rec.step(f"side by side: {R(*out)}", R(*out))
        return out
    if type(rd) is not int:
        return _compose_basis(ls, ld, rs, rd, rec)
    return _compose_int(ls, ld, rs, rd, rec)


def _compose_basis(ls: Any, ld: Any, rs: int, rd: Any, rec: Recorder | None = None) -> tuple:
    """RHS stride is a scaled basis ``v@k``: compose with mode k of the LHS."""
    path = rd.mode_path
    for k in path:
        if not is_tuple(ls) or k >= len(ls):
            raise LayoutError(f"basis stride {rd} selects a mode the left layout does not have")
        ls, ld = ls[k], ld[k]
    if rec is not None:
        rec.step(f"stride {rd} reads mode {'.'.join(map(str, path))} of A, {R(ls, ld)}, with step {rd.value}")
    if is_tuple(ls):
        c = coalesce_x(R(ls, ld))
        ls, ld = c.shape, c.stride
    return _compose_int(ls, ld, rs, rd.value, rec)


@memo(fast=q_composition)
@shows_cute
def composition(a: Any, b: Any) -> Any:
    """``R = A o B``: ``R(c) == A(B(c))`` for every coordinate ``c`` of B; ``compatible(B, R)``.

    ``b`` may be a Layout, an int ``n`` (the layout ``n:1``), None (keep A), or a tiler tuple applied mode by
    mode (modes of A beyond the tiler are dropped, as in CuTe). ``a`` may be a Swizzle or ComposedLayout.
    """
    rec = active()
    if type(a) is Layout and type(b) is Layout and rec is None:
        bs, bd = b.shape, b.stride
        c = coalesce_x_flat(a.shape, a.stride)  # compose_layouts' first case inline: the hot path, one call less
        if c is not None and (r := _compose_modes(c[0], c[1], bs, bd)) is not None:
            res = R(*r)
            if type(c[0]) is tuple and structural_failure(c[0], bs, bd) is not None:
                check_composition(a, c[0], b, res)
            return res
        if c is None and (res := compose_layouts(a, b)) is not None:  # nested or basis-stride A
            return res
        c = coalesce_x(a) if not _has_basis(bd) else a  # B has basis strides (or mixes them: refused)
        return _checked(a, b, R(*_compose_impl(c.shape, c.stride, bs, bd)))
    if isinstance(a, Swizzle | ComposedLayout) or isinstance(b, Swizzle | ComposedLayout):
        if rec is not None:
            rec.step(f"A = {a} is swizzled: the swizzle acts on the offsets the layouts produce, so it stays "
                     f"outside and the layouts compose inside" if not isinstance(b, Swizzle | ComposedLayout) else
                     f"compose {a} with the swizzled {b}")
        return compose_swizzled(a, b)
    a = _as_layout(a)
    if b is None:
        if rec is not None:
            rec.step("B is _ (keep this mode): R = A", a, kind="result")
        return a
    if is_tuple(b):
        if len(b) > it.rank(a.shape):
            raise LayoutError(f"composition: tiler has {len(b)} modes but {a} has rank {it.rank(a.shape)}")
        if rec is None:
            return make_layout(*(composition(a[i], b[i]) for i in range(len(b))))
        rec.step(f"B is a tiler of {len(b)} modes: mode i of A is composed with B_i"
                 + ("; the modes of A past the tiler are dropped" if len(b) < it.rank(a.shape) else ""))
        parts = []
        for i in range(len(b)):
            rec.step(f"mode {i}: A_{i} = {a[i]}, B_{i} = {show(b[i])}")
            parts.append(nested(rec, composition, a[i], b[i]))
        res = make_layout(*parts)
        rec.step(f"side by side: R = {res}", res, kind="result")
        return res
    if is_int(b):
        if b <= 0:
            raise LayoutError(f"composition: tile size must be positive, got {b}")
        if rec is not None:
            rec.step(f"B = {b} stands for the layout {b}:1: the first {b} elements of A")
        b = R(b, 1)
    if not isinstance(b, Layout):
        raise LayoutError(f"composition: cannot compose with {b!r}")
    basis = _has_basis(b.stride)
    c = coalesce_x(a) if not basis else a
    if rec is not None:
        rec.step("B has basis strides: each of its modes reads the mode of A that its basis selects" if basis else
                 _coalesce_x_text(a, c), None if basis else c)
    res = _checked(a, b, R(*_compose_impl(c.shape, c.stride, b.shape, b.stride, rec)))
    if rec is not None:
        rec.step(f"R = A o B = {res}: R(c) = A(B(c)) for every coordinate c of B with B(c) in A's domain", res,
                 kind="result")
    return res


def _coalesce_x_text(a: Layout, c: Layout) -> str:
    if c == a:
        return f"coalesce A: {a} is already coalesced, one function of the 1-D coordinate (also past size(A))"
    if it.product(c.shape) == it.product(a.shape):
        return f"coalesce A to {c}: the same function of the 1-D coordinate, also past size(A)"
    return (f"coalesce A, keeping the stride of its trailing size-1 mode so that the function continues past "
            f"size(A) = {it.product(a.shape)}: {c} (A itself is its first {it.product(a.shape)} elements)")


def _checked(a: Layout, b: Layout, r: Layout) -> Layout:
    """``r`` when it is the function A o B wherever ``B(i) < size(A)``; otherwise ``check_composition`` refuses."""
    c = coalesce_x_flat(a.shape, a.stride)
    shape = c[0] if c is not None else coalesce_x(a).shape
    check_composition(a, shape, b, r)
    return r


def _has_basis(d: Any) -> bool:
    """True when the strides are basis elements (E strides); mixing them with non-zero ints is refused."""
    if type(d) is int:
        return False
    flat = it.flatten(d)
    basis = [x for x in flat if type(x) is not int]
    if basis and any(type(x) is int and x != 0 for x in flat):
        raise LayoutError("composition: the right layout mixes basis (E) strides with integer strides")
    return bool(basis)


def compose_swizzled(a: Any, b: Any) -> Any:
    """composition() when either side is a Swizzle or ComposedLayout, as CuTe's overloads do it.

    ``Swizzle o Layout -> ComposedLayout(sw, 0, L)``; ``(A o off o B) o C -> A o off o (B o C)``;
    ``Layout o Swizzle -> Sw' o 0 o Layout`` with ``Sw'`` read off the layout's values at the swizzle's bit masks
    (``layout_swizzle``); ``Layout o (Sw o 0 o B) -> (Layout o Sw) o B``.
    """
    if isinstance(a, Swizzle):
        if isinstance(b, Swizzle):
            return merge_swizzles(a, b)
        if isinstance(b, Layout):
            return make_composed(a, 0, b)
        if is_int(b):
            return make_composed(a, 0, Layout(b))
        raise LayoutError(f"cannot compose {a} with {b}: CuTe composes a swizzle with a layout only")
    if isinstance(a, ComposedLayout):
        return make_composed(a.layout_a, a.offset, composition(a.layout_b, b))
    if isinstance(a, Layout) and isinstance(b, Swizzle):
        return layout_swizzle(a, b)
    if isinstance(a, Layout) and isinstance(b, ComposedLayout) and isinstance(b.layout_a, Swizzle):
        if b.offset != 0:
            raise LayoutError(f"composition {a} o {b}: CuTe requires the offset of the swizzled layout to be 0 "
                              f"(\"Require offset == 0.\"), here {b.offset}")
        return composition(layout_swizzle(a, b.layout_a), b.layout_b)
    raise LayoutError(f"cannot compose {a} with {b}")
