"""The mode arithmetic on raw ``(shape, stride)`` pairs, under ``Layout``, the ops and the never-wrong checks: every
offset of a layout, coalesce, and composition's walk of B's modes through the coalesced A. Nothing here builds a
``Layout``. A recorder passed as ``rec`` gets one step per decision (layouts as CuTe notation text).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from algebra.core import inttuple as it
from algebra.core.arith import F2, has_f2
from algebra.core.errors import LayoutError, no_modes
from algebra.core.inttuple import ceil_div_int
from algebra.core.recorder import nested


def _lstr(shape: Any, stride: Any) -> str:
    """CuTe notation of the layout ``shape:stride`` (as ``str(Layout(shape, stride))``)."""
    return f"{it.to_str(shape)}:{it.to_str(stride)}"


def _modes_str(ss: list, ds: list) -> str:
    """CuTe notation of the modes ``ss:ds`` (one mode unwrapped)."""
    return _lstr(ss[0], ds[0]) if len(ss) == 1 else _lstr(tuple(ss), tuple(ds))


def flat_pair(shape: Any, stride: Any) -> tuple[tuple, tuple]:
    """The flat modes of ``shape:stride`` as two tuples (flat ones as they are, the last nested one kept by id)."""
    if type(shape) is tuple:
        for x in shape:
            if type(x) is tuple:
                last = _last_flat[0]
                if last[0] is shape and last[1] is stride:
                    return last[2]
                fs: list = []
                fd: list = []
                _flatten_into(shape, stride, fs, fd)
                res = tuple(fs), tuple(fd)
                _last_flat[0] = (shape, stride, res)
                return res
        return shape, stride
    return (shape,), (stride,)


_last_flat: list = [(None, None, None)]  # (shape, stride, result): an op and its check flatten the same layout


def _flatten_into(s: tuple, d: tuple, fs: list, fd: list) -> None:
    """The leaves of the congruent tuples ``s`` and ``d``, appended in order (``flat_pair``'s walk)."""
    for i in range(len(s)):
        x = s[i]
        if type(x) is tuple:
            _flatten_into(x, d[i], fs, fd)
        else:
            fs.append(x)
            fd.append(d[i])


def offsets(layout: Any) -> list[int]:
    """``[L(i) for i in range(size(L))]``, computed mode by mode (the caller bounds the size).

    Works for Layout and ComposedLayout (the swizzle is applied to each offset).

    >>> from algebra.core.layout import Layout
    >>> offsets(Layout((2, 3), (3, 1)))
    [0, 3, 1, 4, 2, 5]
    """
    if hasattr(layout, "layout_b"):
        a, off = layout.layout_a, layout.offset
        return [a(off + o) for o in offsets(layout.layout_b)]
    out = [0]
    fs, fd = flat_pair(layout.shape, layout.stride)
    if has_f2(fd) and any(type(d) is int and d for d in fd):  # ints beside F2: their sums nest, as in Layout.__call__
        out = _sums(layout.shape, layout.stride)
    elif all(type(d) is int for d in fd):
        return _int_offsets([(s, d) for s, d in zip(fs, fd, strict=True) if s != 1])
    for s, d in zip(fs, fd, strict=True) if len(out) == 1 else ():
        out = [o + k * d for k in range(s) for o in out] if s != 1 else out
    if len(out) > 1 and getattr(out[1], "is_f2", False) or getattr(out[-1], "is_f2", False):
        out = [getattr(o, "value", o) for o in out]  # F2 offsets are their bits
    return out


def _int_offsets(modes: list[tuple[int, int]]) -> list[int]:
    """The offsets of integer modes ``(size, stride)``, the first fastest: one run along the first mode (a range,
    built in C) from each offset of the other modes."""
    if not modes:
        return [0]
    (s0, d0), starts = modes[0], [0]
    for s, d in modes[1:]:
        starts = [o + x for x in range(0, s * d, d) for o in starts] if d else starts * s
    runs = (range(x, x + s0 * d0, d0) for x in starts) if d0 else (itertools.repeat(x, s0) for x in starts)
    return list(itertools.chain.from_iterable(runs))


def _sums(s: Any, d: Any) -> list:
    """``crd2idx`` at each 1-D coordinate, mode by mode: each mode's own sum (carries included) before the next."""
    if type(s) is not tuple:
        return [k * d for k in range(s)]
    out = [0]
    for a, b in zip(s, d, strict=True):
        out = [o + x for x in _sums(a, b) for o in out]
    return out


# --------------------------------------------------------------------------------------------- coalesce


def bw_coalesce(fs: Sequence, fd: Sequence, new_s: Any, new_d: Any, rec: Any = None) -> tuple:
    """CuTe's ``bw_coalesce``: the flat modes ``fs:fd`` folded back to front onto the seed ``new_s:new_d``.

    Pre: ``fs``, ``fd`` flat (tuples or lists, not changed) and of equal length. Post: the pair is the coalesced
    layout (a mode ``s:d`` merges into the one after it, ``s':d'``, when ``s*d == d'``; size-1 modes are dropped;
    one mode left of size 1 is ``1:0``); it has the same value at every 1-D coordinate of the domain.

    >>> bw_coalesce((2, 1, 4), (1, 7, 2), 3, 8)
    (24, 1)
    >>> bw_coalesce((4,), (2,), 2, 1)
    ((4, 2), (2, 1))
    """
    ns: list = []  # the finished modes, back to front (``front`` is the mode being built, in front of them)
    nd: list = []
    front_s, front_d = new_s, new_d
    if rec is not None:
        rec.step(f"start from the last mode {new_s}:{new_d} and walk towards the front")
    for i in range(len(fs) - 1, -1, -1):
        s = fs[i]
        if s == 1:
            if rec is not None:
                rec.step(f"mode {i} ({s}:{fd[i]}) has size 1: drop it")
            continue
        d = fd[i]
        if front_s == 1 and not ns:
            if rec is not None:
                why = f"the mode built so far has size 1: mode {i} ({s}:{d}) replaces it"
            front_s, front_d = s, d
        elif s * d == front_d and (type(d) is int or (s - 1) * d + front_d == (2 * s - 1) * d):
            # (an F2 stride merges only where the sum is also linear at (s-1, 1): carry-less products of s-1 and s)
            if rec is not None:
                why = f"mode {i} ({s}:{d}) ends where {front_s}:{front_d} begins ({s}*{d} = {s * d}): merge them"
            front_s *= s
            front_d = d
        else:
            if rec is not None:
                rec.step(f"mode {i} ({s}:{d}) does not end where {front_s}:{front_d} begins ({s}*{d} = {s * d} is "
                         f"not {front_d}): keep it as its own mode")
            ns.append(front_s)
            nd.append(front_d)
            front_s, front_d = s, d
            continue
        if rec is not None:
            rec.step(why, _modes_str([front_s, *ns[::-1]], [front_d, *nd[::-1]]))
    if not ns:
        return (1, 0) if front_s == 1 else (front_s, front_d)
    ns.append(front_s)
    nd.append(front_d)
    return tuple(ns[::-1]), tuple(nd[::-1])


def coalesce_x_pair(shape: Any, stride: Any) -> tuple:
    """``coalesce_x``: coalesce, keeping the stride of a trailing shape-1 mode so that the function goes on past
    the domain (composition reads A there). Post: ``R(i) == L(i)`` for every ``i``, also ``i >= size(L)``.

    >>> coalesce_x_pair((4, 1), (1, 4))
    (8, 1)
    >>> coalesce_x_pair((2, 1), (1, 3))
    ((2, 2), (1, 3))
    """
    last = _last_x[0]  # composition and its check coalesce the same A one after the other: kept by identity
    if last[0] is shape and last[1] is stride:
        return last[2]
    fs, fd = flat_pair(shape, stride)
    if not fs:
        raise no_modes("composition", f"A = {it.to_str(shape)}:{it.to_str(stride)}")
    res = bw_coalesce(fs[:-1], fd[:-1], 2 if fs[-1] == 1 else fs[-1], fd[-1])
    _last_x[0] = (shape, stride, res) if type(shape) is not list else last  # (tuples and ints never change)
    return res


_last_x: list = [(None, None, None)]  # the last call of ``coalesce_x_pair``: (shape, stride, result)


# --------------------------------------------------------------------------------------------- composition


def compose_int(ls: Any, ld: Any, rs: int, rd: Any, rec: Any = None) -> tuple:
    """CuTe's ``composition_impl`` for one mode ``rs:rd`` of B (int stride) against the coalesced A ``ls:ld``.

    Pre (CuTe's, refused as CuTe refuses): at each mode of A but the last, the remaining stride is a multiple of
    its shape or less than it (stride divisibility), and the remaining shape is divisible by what the mode gives
    (shape divisibility). Post: the raw ``(shape, stride)`` pair CuTe prints; it is ``A o (rs:rd)`` wherever the
    walk stays inside the modes it steps through (``algebra.core.checks`` decides the rest).

    >>> compose_int((4, 8), (1, 16), 8, 2)
    ((2, 4), (2, 16))
    >>> compose_int((6, 2), (8, 2), 4, 4)
    ((2, 2), (32, 2))
    """
    if rd == 0 and type(rd) is int:
        if rec is not None:
            rec.step(f"{rs}:0 has stride 0: all {rs} coordinates read A(0), giving {rs}:0", _lstr(rs, 0))
        return rs, rd
    if type(ls) is not tuple:
        if rec is not None:
            rec.step(f"A is the single mode {ls}:{ld}: {rs} of its elements, {rd} apart, are {rs}:{rd * ld}",
                     _lstr(rs, rd * ld))
        return rs, rd * ld
    if rec is not None:
        rec.step(f"{rs}:{rd} means: skip {rd}, then take {rs}, walking the modes of A = {_lstr(ls, ld)}")
    res_s: list = []
    res_d: list = []
    rest_s, rest_d = rs, rd
    for i in range(len(ls) - 1):
        cs = ls[i]
        ad = rest_d if rest_d >= 0 else -rest_d
        if cs == 0 or ad == 0:
            raise LayoutError(f"composition: zero shape or stride at mode {i} of the left layout (CuTe divides by it)")
        if not (rest_d % cs == 0 or rest_d < cs):
            raise LayoutError(
                f"stride divisibility condition: composition stride {rest_d} is neither a multiple of nor less "
                f"than shape {cs} of mode {i} of the left layout")
        if cs > 0:
            next_s = (cs + ad - 1) // ad
            next_d = (ad + cs - 1) // cs
        else:  # a negative shape (complements of negative strides make them): CuTe's C++ arithmetic, not narrated
            next_s, next_d = ceil_div_int(cs, ad), ceil_div_int(ad, cs)
            rec = None
        if rest_d < 0:
            next_d = -next_d
        if next_s == 1 or rest_s == 1:
            if rec is not None:
                rec.step(f"mode {i} of A ({cs}:{ld[i]}): nothing is left to take; the step becomes {next_d}"
                         if rest_s == 1 else f"mode {i} of A ({cs}:{ld[i]}): a step of {rest_d} jumps over all {cs} "
                         f"of its elements; {_carry_text(rest_d, cs, next_d)} carries to the next mode")
            rest_d = next_d
            continue
        new_s = next_s if next_s < rest_s else rest_s
        if new_s <= 0:
            rec = None
        if new_s == 0 or rest_s % new_s != 0:
            raise LayoutError(
                f"shape divisibility condition: shape {rest_s} is not divisible by {new_s} "
                f"(mode {i} of the left layout)")
        res_s.append(new_s)
        res_d.append(rest_d * ld[i])
        if rec is not None:
            left = rest_s // new_s
            rec.step(f"mode {i} of A ({cs}:{ld[i]}): stepping by {rest_d} leaves {next_s} elements {rest_d}*{ld[i]} = "
                     f"{rest_d * ld[i]} apart; take {new_s} of them" + (f", {left} still to take" if left > 1 else ""),
                     _modes_str(res_s, res_d))
        rest_s //= new_s
        rest_d = next_d
    if not res_s:
        if rec is not None:
            rec.step(f"the last mode of A (stride {ld[-1]}) gives all {rest_s}, {rest_d}*{ld[-1]} = {rest_d * ld[-1]} "
                     f"apart (past size(A) if it must): {rest_s}:{rest_d * ld[-1]}", _lstr(rest_s, rest_d * ld[-1]))
        return rest_s, rest_d * ld[-1]
    if rest_s == 1:
        if rec is not None:
            rec.step(f"all {rs} are taken", _modes_str(res_s, res_d))
        return (res_s[0], res_d[0]) if len(res_s) == 1 else (tuple(res_s), tuple(res_d))
    res_s.append(rest_s)
    res_d.append(rest_d * ld[-1])
    if rec is not None:
        rec.step(f"the last mode of A (stride {ld[-1]}) gives the remaining {rest_s}, {rest_d}*{ld[-1]} = "
                 f"{rest_d * ld[-1]} apart: {_lstr(tuple(res_s), tuple(res_d))}", _lstr(tuple(res_s), tuple(res_d)))
    return tuple(res_s), tuple(res_d)


def _carry_text(d: int, cs: int, carry: int) -> str:
    """``d / cs = carry`` as CuTe computes it: exact, or (a negative stride, which CuTe's divisibility check lets
    through) ``-ceil(|d| / cs)``."""
    if d % cs == 0:
        return f"{d}/{cs} = {carry}"
    return f"-ceil({-d}/{cs}) = {carry} (CuTe rounds the negative step {d}/{cs} away from zero)"


def compose(ls: Any, ld: Any, bs: Any, bd: Any, rec: Any = None, path: str = "") -> tuple:
    """Every mode of B = ``bs:bd`` composed with the coalesced A = ``ls:ld``; B's profile kept (CuTe's
    ``composition_impl`` over B's modes). A stride ``v@k`` of B reads mode k of A (CuTe's basis strides).

    Pre: ``ls:ld`` is ``coalesce_x(A)`` (or A itself where B's strides are bases). Post: the raw pair CuTe prints,
    of B's profile; refused (``LayoutError``) where CuTe's own conditions fail.

    >>> compose((4, 8), (1, 16), (2, 4), (1, 8))
    ((2, 4), (1, 32))
    """
    if type(bs) is tuple:
        if rec is not None and not path:
            rec.step(f"B = {_lstr(bs, bd)} has {len(bs)} modes: each is composed with A on its own and the results "
                     "sit side by side, so R has the shape of B")
        out_s: list = []
        out_d: list = []
        for i in range(len(bs)):
            if rec is None:
                p = compose(ls, ld, bs[i], bd[i])
            else:
                rec.step(f"mode {path}{i} of B: {_lstr(bs[i], bd[i])}")
                p = nested(rec, compose, ls, ld, bs[i], bd[i], rec, f"{path}{i}.")
            out_s.append(p[0])
            out_d.append(p[1])
        out = tuple(out_s), tuple(out_d)
        if rec is not None:
            rec.step(f"side by side: {_lstr(*out)}", _lstr(*out))
        return out
    if type(bd) is int:
        return compose_int(ls, ld, bs, bd, rec)
    if getattr(bd, "is_f2", False):  # B's offsets are bit vectors: each bit t of the mode reads A at d << t
        if bs & (bs - 1):
            raise LayoutError(f"composition: a mode {bs}:{bd} of B with an F2 stride needs a power-of-two shape")
        k = bs.bit_length() - 1
        cols = [it.crd2idx(bd.value << t, ls, ld) for t in range(k)]
        for c in cols:  # an int offset of A read by an F2 mode of B is an F2 element, unless negative or not an int
            if not hasattr(c, "is_f2") and (type(c) is not int or c < 0):
                raise LayoutError(f"composition: F2 sign condition: the mode {bs}:{bd} of B has an F2 (XOR) stride, "
                                  f"so R XORs A's offsets at its bit columns, which must be non-negative bit vectors; "
                                  f"A({bd.value << cols.index(c)}) = {c}. CuTe has no F2 strides")
        cols = [c if hasattr(c, "is_f2") else F2(c) for c in cols]
        if rec is not None:
            rec.step(f"{bs}:{bd} has an F2 stride: bit t of its coordinate reads A at {bd.value} << t, giving "
                     f"{', '.join(map(str, cols))}")
        return bw_coalesce((2,) * k, cols, 1, 0)
    if not getattr(bd, "is_basis", False):
        raise LayoutError(f"composition: the mode {bs}:{bd} of B has the coordinate {bd} as its stride; B's strides "
                          "must be integers, basis strides v@k or F2 elements")
    for k in bd.mode_path:  # a basis stride v@k: compose with mode k of A, coalesced
        if type(ls) is not tuple or k >= len(ls):
            raise LayoutError(f"basis stride {bd} selects a mode the left layout does not have")
        ls, ld = ls[k], ld[k]
    if rec is not None:
        rec.step(f"stride {bd} reads mode {'.'.join(map(str, bd.mode_path))} of A, {_lstr(ls, ld)}, with step "
                 f"{bd.value}")
    if type(ls) is tuple:
        ls, ld = coalesce_x_pair(ls, ld)
    return compose_int(ls, ld, bs, bd.value, rec)
