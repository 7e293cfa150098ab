"""Recasting a layout to another element width: ``upcast``, ``downcast``, ``recast_layout`` (CuTe's names).

Post-condition: the recast layout addresses the same bytes in units of the new element; refusals raise
``LayoutError`` naming the stride that does not fit the new width.

>>> from algebra.core.notation import parse as P
>>> print(upcast(P("(8,8):(1,8)"), 2), downcast(P("(4,8):(1,4)"), 2), recast_layout(P("(8,8):(8,1)"), 16, 32))
(4,8):(1,4) (8,8):(1,8) (8,4):(4,1)
>>> print(upcast(P("Sw<3,4,3> o 0 o (8,64):(64,1)"), 2), upcast(P("Sw<3,4,3>"), 2), downcast(P("Sw<3,4,3>"), 2))
Sw<3,3,3> o 0 o (8,32):(32,1) Sw<3,3,3> Sw<3,5,3>
"""

from __future__ import annotations

from math import gcd
from typing import Any

from algebra.core import inttuple as it
from algebra.core.errors import LayoutError, no_modes
from algebra.core.inttuple import is_int
from algebra.core.layout import Layout, layout_arg
from algebra.core.modes import flat_pair
from algebra.core.recorder import active
from algebra.core.swizzle import ComposedLayout, Swizzle

R = Layout._raw


def _swizzle(sw: Swizzle, n: int, up: bool) -> Swizzle:
    """CuTe's ``upcast<N>`` / ``downcast<N>`` of ``Sw<B,M,S>`` (cute/swizzle_layout.hpp): ``Sw<B,M-log2 N,S>`` (when
    M < log2 N: ``Sw<max(B+M-log2 N,0),0,S>``, the bits below the new element dropped) or ``Sw<B,M+log2 N,S>``; N must
    be a power of two.

    >>> print(_swizzle(Swizzle(3, 4, 3), 4, True), _swizzle(Swizzle(3, 2, 3), 8, True))
    Sw<3,2,3> Sw<2,0,3>
    >>> print(_swizzle(Swizzle(2, 0, 3), 2, False))
    Sw<2,1,3>
    """
    name = "upcast" if up else "downcast"
    if n & (n - 1):
        raise LayoutError(f"{name}<{n}> of the swizzle {sw}: N must be a power of two")
    k = n.bit_length() - 1
    new_m = sw.base - k if up else sw.base + k  # (only an upcast can take M below 0)
    return Swizzle(sw.bits, new_m, sw.shift) if new_m >= 0 else Swizzle(max(sw.bits + new_m, 0), 0, sw.shift)


def _swizzled(layout: object, n: int, up: bool) -> object:
    """CuTe's ``upcast<N>`` / ``downcast<N>`` of a bare swizzle (:func:`_swizzle`) or of ``Sw<B,M,S> o O o L``:
    ``Sw' o O' o L'`` with Sw' the recast swizzle, L' the recast inner layout and ``O' = O / N`` (must divide) or
    ``O * N``. The composed form is kept even for an identity swizzle (CuTe's recast offset is an unsigned constant,
    not ``Int<0>``)."""
    name = "upcast" if up else "downcast"
    rec = active()
    if isinstance(layout, Swizzle):
        res = _swizzle(layout, n, up)
        if rec is not None:
            rec.step(f"{name}<{n}>({layout}) = {res}: M moves by log2 {n} = {n.bit_length() - 1}", res, kind="result")
        return res
    sw, off, inner = layout.layout_a, layout.offset, layout.layout_b
    if not isinstance(sw, Swizzle) or off < 0:
        raise _refusal(layout, n, up)
    new_sw = _swizzle(sw, n, up)
    if up and off % n:
        raise LayoutError(f"upcast<{n}>: the offset {off} of {layout} is not a multiple of {n}")
    new_off, new_inner = off // n if up else off * n, (upcast if up else downcast)(inner, n)
    res = ComposedLayout(new_sw, new_off, new_inner)
    if rec is not None:
        rec.step(f"{name}<{n}> each part of {layout}: the swizzle {sw} -> {new_sw} (M moves by log2 {n} = "
                 f"{n.bit_length() - 1}), the offset {off} -> {new_off}, the inner layout {inner} -> {new_inner}", res,
                 kind="result")
    return res


def _refusal(x: ComposedLayout, n: int, up: bool) -> LayoutError:
    """The refusal of ``upcast<N>`` / ``downcast<N>`` of ``L o O o Sw`` (its values are coordinates of L, not offsets
    to recast) or of a negative offset, with CuTe's answer: each part recast, the offset as an unsigned 32-bit int
    (``O / N`` or ``O * N`` modulo 2^32; CuTe refuses an O that N does not divide)."""
    name, u = "upcast" if up else "downcast", x.offset % (1 << 32)
    why = (f"{x} maps offsets to 1-D coordinates of {x.layout_a} (a layout after a swizzle): they are not offsets to "
           "recast in units of the new element" if not isinstance(x.layout_a, Swizzle) else
           f"CuTe recasts the offset {x.offset} as the unsigned 32-bit int {u}, not as {x.offset}")
    try:
        a, b = ((upcast if up else downcast)(p, n) for p in (x.layout_a, x.layout_b))
        if up and u % n:
            raise LayoutError(f"{name}<{n}>: the offset {x.offset} is not a multiple of {n}")
    except LayoutError as err:
        return LayoutError(f"{name}<{n}>({x}) is refused: {why}; CuTe refuses it too ({err})")
    res = ComposedLayout(a, u // n if up else u * n % (1 << 32), b)
    return LayoutError(f"{name}<{n}>({x}) is not a layout: recast condition: {why}. CuTe would print "
                       f"{name}<{n}>({x}) = {res}")


def upcast(layout: Layout, n: int) -> Layout:
    """View ``n`` consecutive elements as one: stride-1 modes shrink by n, other strides are divided by n."""
    if not is_int(n) or n < 1:
        raise LayoutError(f"upcast: the factor must be a positive integer, got {n}")
    if isinstance(layout, Swizzle | ComposedLayout):
        return _swizzled(layout, n, True)
    layout = layout_arg(layout, "upcast")
    if not it.flatten(layout.shape):
        raise no_modes("upcast", layout)
    _int_or_f2_strides(layout, "upcast")

    def leaf(s, d):
        if d == 0:
            return s, d
        if type(d) is not int and getattr(d, "is_f2", False):
            raise LayoutError(f"upcast<{n}>: {layout} has the F2 (XOR) stride {d}: its offsets are XORs, not sums, "
                              "and CuTe's upcast divides integer strides; upcast the swizzled layout Sw o 0 o L it "
                              "stands for instead")
        if not (d % n == 0 or n % abs(d) == 0):
            raise LayoutError(f"upcast<{n}>: stride {d} and {n} do not divide each other")
        return it.ceil_div_int(s, it.ceil_div_int(n, abs(d))), it.signum(d) * it.ceil_div_int(abs(d), n)

    res, leaves = _leafwise(layout, leaf)
    if (rec := active()) is not None:
        notes = []
        for (s0, d0), (s1, d1) in leaves:
            why = ("stride 0, unchanged" if d0 == 0 else f"stride {d0}/{n}" if d0 % n == 0 else
                   f"{it.ceil_div_int(n, abs(d0))} of its elements make one: shape divided by that, rounded up, "
                   f"stride {d1}")
            notes.append(f"{s0}:{d0} -> {s1}:{d1} ({why})")
        rec.step(f"{n} consecutive elements become one, leaf by leaf: " + ", ".join(notes))
        rec.step(f"upcast<{n}>({layout}) = {res}", res, kind="result")
    return res


def downcast(layout: Layout, n: int) -> Layout:
    """View each element as ``n`` smaller ones: stride-1 modes grow by n, other strides are multiplied by n."""
    if not is_int(n) or n < 1:
        raise LayoutError(f"downcast: the factor must be a positive integer, got {n}")
    if isinstance(layout, Swizzle | ComposedLayout):
        return _swizzled(layout, n, False)
    layout = layout_arg(layout, "downcast")
    if 1 not in it.flatten(layout.stride):  # CuTe's has_int1: a stride of +1 (a -1 stride alone does not do)
        raise LayoutError("downcast requires a stride-1 mode (adjacent elements)")

    res, leaves = _leafwise(layout, lambda s, d: (s * n, d) if d in (1, -1) else (s, d * n))
    if (rec := active()) is not None:
        notes = [f"{s0}:{d0} -> {s1}:{d1} (" + (f"stride 1: shape times {n}" if d0 in (1, -1) else f"stride times {n}")
                 + ")" for (s0, d0), (s1, d1) in leaves]
        rec.step(f"each element becomes {n}, leaf by leaf: " + ", ".join(notes))
        rec.step(f"downcast<{n}>({layout}) = {res}", res, kind="result")
    return res


def _leafwise(layout: Layout, f: Any) -> tuple[Layout, list]:
    """The layout whose leaf is ``f(s, d)`` at each leaf ``s:d`` of ``layout``; its leaves ``[((s, d), f(s, d))]``."""
    fs, fd = flat_pair(layout.shape, layout.stride)
    leaves = [((s, d), f(s, d)) for s, d in zip(fs, fd, strict=True)]
    shape = it.unflatten([new[0] for _, new in leaves], layout.shape)
    return R(shape, it.unflatten([new[1] for _, new in leaves], layout.shape)), leaves


def _int_or_f2_strides(layout: Layout, name: str) -> None:
    """Refuse a layout with a basis stride (``1@0``, a coordinate): a recast divides integer strides."""
    d = next((d for d in it.flatten(layout.stride) if type(d) is not int and not getattr(d, "is_f2", False)), None)
    if d is not None:
        raise LayoutError(f"{name} needs integer strides; {layout} has basis (E) strides such as {d}")


def recast_layout(layout: Layout, old_bits: int, new_bits: int) -> Layout:
    """Re-express a layout of ``old_bits`` elements in units of ``new_bits`` elements (CuTe's recast_layout)."""
    for what, bits in (("old bits", old_bits), ("new bits", new_bits)):
        if not is_int(bits) or bits <= 0:
            raise LayoutError(f"recast_layout: {what} must be a positive integer (a width in bits), got {bits!r}")
    if isinstance(layout, Layout):
        _int_or_f2_strides(layout, "recast_layout")
    g = gcd(old_bits, new_bits)
    num, den = new_bits // g, old_bits // g
    if (rec := active()) is not None:
        rec.step(f"{new_bits}/{old_bits} = {num}/{den}: " + ("the same width, A is unchanged" if num == den == 1 else
                 f"upcast by {num}, then downcast by {den}" if num > 1 and den > 1 else
                 f"upcast by {num}" if num > 1 else f"downcast by {den}"))
    layout = upcast(layout, num) if num > 1 else layout
    return downcast(layout, den) if den > 1 else layout
