"""Recasting a layout to another element width: ``upcast``, ``downcast``, ``recast_layout`` (CuTe's names).

Post-condition: the recast layout addresses the same bytes in units of the new element; refusals raise
``LayoutError`` naming the stride that does not fit the new width.
"""

from __future__ import annotations

from algebra import inttuple as it
from algebra.errors import LayoutError
from algebra.inttuple import is_int, is_tuple
from algebra.layout import Layout
from algebra.recorder import active

R = Layout._raw


def upcast(layout: Layout, n: int) -> Layout:
    """View ``n`` consecutive elements as one: stride-1 modes shrink by n, other strides are divided by n."""
    if not is_int(n) or n < 1:
        raise LayoutError(f"upcast: the factor must be a positive integer, got {n}")

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
    res = R(s, d)
    if (rec := active()) is not None:
        notes = []
        for (s0, d0), (s1, d1) in zip(_leaves(layout), _leaves(res), strict=True):
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
    res = R(s, d)
    if (rec := active()) is not None:
        notes = [f"{s0}:{d0} -> {s1}:{d1} (" + (f"stride 1: shape times {n}" if d0 in (1, -1) else f"stride times {n}")
                 + ")" for (s0, d0), (s1, d1) in zip(_leaves(layout), _leaves(res), strict=True)]
        rec.step(f"each element becomes {n}, leaf by leaf: " + ", ".join(notes))
        rec.step(f"downcast<{n}>({layout}) = {res}", res, kind="result")
    return res


def _leaves(layout: Layout) -> list[tuple]:
    return list(zip(it.flatten(layout.shape), it.flatten(layout.stride), strict=True))


def recast_layout(layout: Layout, old_bits: int, new_bits: int) -> Layout:
    """Re-express a layout of ``old_bits`` elements in units of ``new_bits`` elements (CuTe's recast_layout)."""
    from math import gcd

    if old_bits <= 0 or new_bits <= 0:
        raise LayoutError(f"recast_layout: bit widths must be positive, got {old_bits} and {new_bits}")
    g = gcd(old_bits, new_bits)
    num, den = new_bits // g, old_bits // g
    if (rec := active()) is not None:
        rec.step(f"{new_bits}/{old_bits} = {num}/{den}: " + ("the same width, A is unchanged" if num == den == 1 else
                 f"upcast by {num}, then downcast by {den}" if num > 1 and den > 1 else
                 f"upcast by {num}" if num > 1 else f"downcast by {den}"))
    if num == 1 and den == 1:
        return layout
    if num == 1:
        return downcast(layout, den)
    if den == 1:
        return upcast(layout, num)
    return downcast(upcast(layout, num), den)
