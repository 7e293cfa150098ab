"""Complement's mode arithmetic on raw ``(shape, stride)`` pairs: the fast path of ``complement`` (and of the
divides and products, which complement a tiler or a block), for flat int modes with non-negative strides.

``complement_pair`` returns the same pair as the general code (``algebra.core.complement``), or None where the
input is outside its case (then the general code runs), or raises the general code's refusal of overlapping modes
when it is told the layout (``whole``). Nothing here builds a ``Layout``.
"""

from __future__ import annotations

from typing import Any

from algebra.core import inttuple as it
from algebra.core.errors import LayoutError


def complement_pair(shape: Any, stride: Any, cotarget: Any, whole: tuple | None = None) -> tuple | None:
    """``complement(shape:stride, cotarget)`` as a raw pair, for flat int modes with non-negative strides and an
    int, None or flat positive-int tuple cotarget. Filter keeps modes of shape > 1 and stride > 0 (merging
    ``s*d == next d`` back to front); the modes are taken by increasing stride (a tie is an overlap, left to the
    generic refusal). No two result modes can merge (``q*last <= d < d*s``), so coalescing the result only drops
    shape-1 modes. ``whole``: the ``(shape, stride)`` being complemented, as the caller wrote it; with it, overlapping
    modes raise the general code's refusal instead of returning None."""
    if type(shape) is int:
        if type(stride) is not int:
            return None
        if type(cotarget) is int and cotarget > 0:  # one mode s:d and an int cotarget: the usual tile
            if shape == 1 or stride == 0:
                return (cotarget, 1) if cotarget != 1 else (1, 0)
            if stride < 0:
                return None
            new_d = stride * shape
            rest = (cotarget + new_d - 1) // new_d
            if stride == 1:
                return (rest, new_d) if rest != 1 else (1, 0)
            return ((stride, rest), (1, new_d)) if rest != 1 else (stride, 1)
        if type(cotarget) is tuple and cotarget and shape != 1 and stride > 0:  # or a shape: a divide's coalesced A
            for x in cotarget:
                if type(x) is not int or x <= 0:
                    return None
            new_d = stride * shape
            rest = _copies(cotarget, new_d)
            if stride == 1:
                return (rest, new_d) if rest != 1 else (1, 0)
            return ((stride, rest), (1, new_d)) if rest != 1 else (stride, 1)
        shape, stride = (shape,), (stride,)
    elif type(shape) is not tuple or type(stride) is not tuple:
        return None
    modes: list = []  # filter's modes, (stride, shape), back to front
    for i in range(len(shape) - 1, -1, -1):
        s = shape[i]
        d = stride[i]
        if type(s) is not int or type(d) is not int:
            return None
        if s == 1 or d == 0:
            continue
        if d < 0:
            return None
        if modes and s * d == modes[-1][0]:
            modes[-1] = (d, s * modes[-1][1])
        else:
            modes.append((d, s))
    if cotarget is None:
        cotarget = 1
        for d, s in modes:
            cotarget += (s - 1) * d
    elif type(cotarget) is not int or cotarget <= 0:
        if type(cotarget) is not tuple or not cotarget:
            return None
        for x in cotarget:  # a flat shape of positive ints (a loop: cheaper than all() over a generator)
            if type(x) is not int or x <= 0:
                return None
    return _fold(modes, cotarget, whole)


def complement_plain(shape: tuple, stride: tuple, cotarget: Any, whole: tuple) -> tuple | None:
    """``complement_pair`` of flat modes known plain (``plainmodes.flat_plain``'s: tuples of ints, strides >= 0)
    and a known cotarget (an int > 0 or a tuple of them), without checking them again."""
    modes: list = []  # filter's modes, (stride, shape), back to front
    for i in range(len(shape) - 1, -1, -1):
        s = shape[i]
        d = stride[i]
        if s == 1 or d == 0:
            continue
        if modes and s * d == modes[-1][0]:
            modes[-1] = (d, s * modes[-1][1])
        else:
            modes.append((d, s))
    return _fold(modes, cotarget, whole)


def _fold(modes: list, cotarget: Any, whole: tuple | None) -> tuple | None:
    """The complement of the filtered modes ``(stride, shape)`` up to the (checked) cotarget."""
    m = len(modes)
    if m == 0:  # only offset 0 is reached: the complement is all of [0, cotarget), Layout(size(cotarget))
        n = cotarget if type(cotarget) is int else it.product(cotarget)
        return (n, 1) if n != 1 else (1, 0)
    if m == 1:  # one mode s:d: the gap below d (d:1), then the copies of [0, d*s) that reach the cotarget
        d, s = modes[0]
        new_d = d * s
        rest = (cotarget + new_d - 1) // new_d if type(cotarget) is int else _copies(cotarget, new_d)
        if d == 1:
            return (rest, new_d) if rest != 1 else (1, 0)
        return ((d, rest), (1, new_d)) if rest != 1 else (d, 1)
    rs: list = []
    rd: list = []
    last = 1
    modes.sort()  # by increasing stride (a tie overlaps, whichever comes first)
    for d, s in modes:
        q = d // last
        if q == 0:  # overlapping modes
            return _overlap(whole)
        if q != 1:
            rs.append(q)
            rd.append(last)
        last = d * s
    rest = (cotarget + last - 1) // last if type(cotarget) is int else _copies(cotarget, last)
    if rest != 1:
        rs.append(rest)
        rd.append(last)
    if not rs:
        return 1, 0
    if len(rs) == 1:
        return rs[0], rd[0]
    return tuple(rs), tuple(rd)


def _copies(cotarget: tuple, new_d: int) -> int:
    """CuTe's ``ceil_div(tuple, int)`` folds the divisor across the modes; coalesce(Shape) is the product."""
    rest = 1
    div = new_d
    for x in cotarget:
        rest *= (x + div - 1) // div
        div = (div + x - 1) // x
    return rest


def _overlap(whole: tuple | None) -> None:
    """None (the generic code refuses), or that refusal when the layout is known."""
    if whole is None:
        return None
    raise LayoutError(f"Non-injective Layout detected in complement: {it.to_str(whole[0])}:{it.to_str(whole[1])} "
                      "has overlapping modes")
