"""The ops' fast paths on plain layouts: CuTe's answers computed on raw ``(shape, stride)`` pairs.

*Plain* means a ``Layout`` whose strides are non-negative ints (any nesting), and tilers made of plain layouts,
positive ints, None and tuples of those. What is complemented must be plain (the tiler of a divide, the block of a
product: negative strides take the general code's C++ arithmetic); what only composes may have int strides of either
sign (composition's arithmetic is the general code's). ``memo``
(``algebra.core.memo``) tries ``q_<op>(*args)`` on every cache miss before the op's general code. Post-condition of
each ``q_<op>``: it returns exactly the Layout that ``<op>`` returns for the same arguments, raises the same
``LayoutError`` (CuTe's own conditions: divisibility, overlapping modes, mismatched ranks, at the same point of the
same computation), or returns None. None where the arguments are not plain (swizzles, basis or negative strides,
ints for layouts) and where the never-wrong check refuses, so that those refusals, with the whole call that CuTe
would print, come from the general code. The never-wrong check runs here as there: composition's structural proof
(``checks``), then, where it does not decide, the enumeration of ``check_composition``.

Nothing here records a derivation: with a recorder active, ``memo`` runs the general code, which records each step.
"""

from __future__ import annotations

from typing import Any

from algebra.core import inttuple as it
from algebra.core.checks import check_composition, structural_failure
from algebra.core.errors import LayoutError
from algebra.core.fastpath import _compose_int, _compose_modes, coalesce_x_flat, complement_pair
from algebra.core.layout import Layout

R = Layout._raw
_flatten = it.flatten
ANY = -it.MAX_MAGNITUDE  # the least stride a Layout holds


def plain(d: Any) -> bool:
    """Every leaf of the stride ``d`` is an int >= 0."""
    if type(d) is int:
        return d >= 0
    if type(d) is not tuple:
        return False
    for x in d:
        if type(x) is int:
            if x < 0:
                return False
        elif type(x) is not tuple or not plain(x):
            return False
    return True


def flat_plain(s: Any, d: Any, low: int = 0) -> tuple | None:
    """The flat modes ``(shapes, strides)`` of ``s:d`` (two tuples) when every stride is an int >= ``low`` (0:
    plain; ``ANY``: every int), else None."""
    if type(s) is int:
        return ((s,), (d,)) if type(d) is int and d >= low else None
    if type(d) is not tuple:
        return None
    for x in d:
        if type(x) is not int or x < low:
            break
    else:
        return s, d
    fs: list = []
    fd: list = []
    for i in range(len(s)):  # congruent (a Layout): indexed, cheaper than a zip; depth 2 inline, deeper recursively
        x = s[i]
        y = d[i]
        if type(x) is int:
            if type(y) is not int or y < low:
                return None
            fs.append(x)
            fd.append(y)
        elif type(y) is not tuple:
            return None
        else:
            for j in range(len(x)):
                u = x[j]
                v = y[j]
                if type(u) is int:
                    if type(v) is not int or v < low:
                        return None
                    fs.append(u)
                    fd.append(v)
                elif not _flat_into(u, v, fs, fd, low):
                    return None
    return tuple(fs), tuple(fd)


def _flat_into(s: tuple, d: Any, fs: list, fd: list, low: int) -> bool:
    if type(d) is not tuple:
        return False
    for i in range(len(s)):
        x = s[i]
        y = d[i]
        if type(x) is tuple:
            if not _flat_into(x, y, fs, fd, low):
                return False
        elif type(y) is int and y >= low:
            fs.append(x)
            fd.append(y)
        else:
            return False
    return True


def _rank(s: Any) -> int:
    return len(s) if type(s) is tuple else 1


def _mode(s: Any, d: Any, i: int) -> tuple:
    """Mode ``i`` of ``s:d`` (a rank-1 layout is its own mode 0)."""
    return (s[i], d[i]) if type(s) is tuple else (s, d)


def _tiler(t: Any, one: int = 0, low: int = 0) -> tuple | None:
    """A plain Layout tiler or an int ``n`` as ``(shape, stride, flat shapes, flat strides)``; None for anything
    else. The int is ``Layout(n)`` (``1:0`` for n = 1, as the divides and products take it), or ``n:1`` with
    ``one = 1`` (as composition takes it)."""
    tp = type(t)
    if tp is Layout:
        f = flat_plain(t.shape, t.stride, low)
        return None if f is None else (t.shape, t.stride, f[0], f[1])
    if tp is int and t > 0:
        d = 1 if t > 1 else one
        return t, d, (t,), (d,)
    return None


# --------------------------------------------------------------------------------------------- composition


def compose(a_s: Any, a_d: Any, fa: tuple | None, b_s: Any, b_d: Any, c: tuple | None = None) -> tuple | None:
    """``composition(a_s:a_d, b_s:b_d)`` as a raw pair for plain A (flat modes ``fa``; None: A is one int mode)
    and B: coalesce A keeping its function past size(A) (``c`` where the caller has it), compose each mode of B
    (CuTe's conditions), then the check that the answer is ``A o B``: the structural proof, and where it does not
    decide, ``check_composition``."""
    if c is None:
        c = (2 if a_s == 1 else a_s, a_d) if fa is None else coalesce_x_flat(fa[0], fa[1])
    # CuTe's own conditions refuse here, as in the general code
    r = _compose_int(c[0], c[1], b_s, b_d) if type(b_s) is int else _compose_modes(c[0], c[1], b_s, b_d)
    if r is None:
        return None
    if type(c[0]) is tuple and structural_failure(c[0], b_s, b_d) is not None:
        try:
            check_composition(R(a_s, a_d), c[0], R(b_s, b_d), R(*r))
        except LayoutError:
            return None
    return r


def _compose_raw(s: Any, d: Any, b: Any) -> tuple | None:
    """``composition(s:d, b)`` for int strides of any sign (composition's arithmetic takes them as the general
    code does; only the check's proof needs non-negative ones, and enumerates otherwise)."""
    if b is None:
        return s, d
    if type(b) is tuple:
        n = _rank(s)
        if not b or len(b) > n:
            return None
        shapes, strides = [], []
        for i in range(len(b)):
            r = _compose_raw(*_mode(s, d, i), b[i])
            if r is None:
                return None
            shapes.append(r[0])
            strides.append(r[1])
        return tuple(shapes), tuple(strides)
    tb = type(b)
    if tb is Layout:
        bs, bd = b.shape, b.stride
        if type(bs) is int and type(bd) is not int:
            return None  # a basis stride (_compose_modes returns None for those inside tuples)
    elif tb is int and b > 0:
        bs, bd = b, 1
    else:
        return None
    if type(s) is int:
        return compose(s, d, None, bs, bd) if type(d) is int else None
    fa = flat_plain(s, d, ANY)
    return None if fa is None else compose(s, d, fa, bs, bd)


def q_composition(a: Any, b: Any) -> Layout | None:
    if type(a) is not Layout:
        return None
    if type(b) is not Layout:
        r = _compose_raw(a.shape, a.stride, b)
        return None if r is None else R(r[0], r[1])
    s, d = a.shape, a.stride  # two layouts: ``compose`` inline, the most frequent call of all
    c = coalesce_x_flat(s, d)
    if c is None:
        fa = flat_plain(s, d, ANY)
        if fa is None:
            return None
        c = coalesce_x_flat(fa[0], fa[1])
    bs, bd = b.shape, b.stride
    if type(bs) is int:
        if type(bd) is not int:
            return None
        r = _compose_int(c[0], c[1], bs, bd)
    else:
        r = _compose_modes(c[0], c[1], bs, bd)
        if r is None:
            return None
    res = R(r[0], r[1])
    if type(c[0]) is tuple and structural_failure(c[0], bs, bd) is not None:
        try:
            check_composition(a, c[0], b, res)
        except LayoutError:
            return None
    return res


# --------------------------------------------------------------------------------------------- coalesce, complement


def _coalesce_raw(s: Any, d: Any, profile: Any) -> tuple | None:
    if type(profile) is not tuple:
        c = coalesce_x_flat(s, d, False)
        return c if c is not None else coalesce_x_flat(_flatten(s), _flatten(d), False)
    n = _rank(s)
    if len(profile) > n:
        return None
    shapes, strides = [], []
    for i in range(n):
        m = _mode(s, d, i)
        if i < len(profile):
            m = _coalesce_raw(*m, profile[i])
            if m is None:
                return None
        shapes.append(m[0])
        strides.append(m[1])
    return (tuple(shapes), tuple(strides)) if shapes else None


def q_coalesce(layout: Any, profile: Any = None) -> Layout | None:
    """``coalesce``; ``coalesce_x_flat`` checks that the strides it merges are ints (None otherwise)."""
    if type(layout) is not Layout:
        return None
    r = _coalesce_raw(layout.shape, layout.stride, profile)
    return None if r is None else R(r[0], r[1])


def q_complement(layout: Any, cotarget: Any = None) -> Layout | None:
    """``complement``: ``complement_pair`` of the flat modes (the general code filters the flat modes too)."""
    if type(layout) is not Layout:
        return None
    s, d = layout.shape, layout.stride  # complement_pair takes flat int strides >= 0 only, else None
    r = complement_pair(s, d, cotarget, (s, d))
    if r is None and type(s) is tuple:
        r = complement_pair(_flatten(s), _flatten(d), cotarget, (s, d))
    return None if r is None else R(r[0], r[1])


# --------------------------------------------------------------------------------------------- divides


def _divide(s: Any, d: Any, tiler: Any) -> tuple | None:
    """``logical_divide(s:d, tiler)``: ``A o (B, complement(B, shape(coalesce(A))))``, mode by mode for a tuple."""
    if tiler is None:
        return s, d
    if type(tiler) is tuple:
        return _by_mode(s, d, tiler, _divide)
    t = _tiler(tiler)  # complemented: plain; A only composes (and gives its coalesced shape): any sign
    fa = flat_plain(s, d, ANY)
    if t is None or fa is None:
        return None
    cx = coalesce_x_flat(fa[0], fa[1])  # coalesce keeping the stride of a last shape-1 mode; else plain coalesce
    cshape = cx[0] if fa[0][-1] != 1 else coalesce_x_flat(fa[0], fa[1], False)[0]
    comp = complement_pair(t[2], t[3], cshape, (t[0], t[1]))
    if comp is None:
        return None
    return compose(s, d, fa, (t[0], comp[0]), (t[1], comp[1]), cx)


def _by_mode(s: Any, d: Any, tiler: tuple, f: Any) -> tuple | None:
    """``f`` on each of the first ``len(tiler)`` modes with its tiler mode; the other modes kept."""
    n = _rank(s)
    if len(tiler) > n:
        return None
    shapes, strides = [], []
    nested = type(s) is tuple
    for i in range(n):
        ms, md = (s[i], d[i]) if nested else (s, d)
        if i < len(tiler):
            m = f(ms, md, tiler[i])
            if m is None:
                return None
            ms, md = m
        shapes.append(ms)
        strides.append(md)
    return (tuple(shapes), tuple(strides)) if shapes else None


def _zip2_by(t: Any, guide: Any) -> Any:
    """``products._zip2_by`` (the tile modes, then the rest modes), refusing as it does."""
    if type(guide) is tuple:
        if type(t) is not tuple or len(t) < len(guide):
            raise LayoutError("zip2_by: mismatched ranks")
        firsts, seconds = [], []
        for i in range(len(guide)):
            p = _zip2_by(t[i], guide[i])
            firsts.append(p[0])
            seconds.append(p[1])
        return tuple(firsts), tuple(seconds) + t[len(guide):]
    if type(t) is not tuple or len(t) != 2:
        raise LayoutError("zip2_by: expected a rank-2 mode")
    return t


def _zipped(r: tuple | None, tiler: Any) -> tuple | None:
    return None if r is None else (_zip2_by(r[0], tiler), _zip2_by(r[1], tiler))


def _unpack(r: tuple | None, first: bool) -> Layout | None:
    """``products._unpack(r, first, True)``: the second mode's modes (and the first's, with ``first``) become modes
    of the result."""
    if r is None:
        return None
    (s0, s1), (d0, d1) = r
    head_s, head_d = (s0, d0) if first and _rank(s0) > 1 else ((s0,), (d0,))
    tail_s, tail_d = (s1, d1) if _rank(s1) > 1 else ((s1,), (d1,))
    return R(head_s + tail_s, head_d + tail_d)


def _divided(layout: Any, tiler: Any) -> tuple | None:
    return _divide(layout.shape, layout.stride, tiler) if type(layout) is Layout else None


def q_logical_divide(layout: Any, tiler: Any) -> Layout | None:
    r = _divided(layout, tiler)
    return None if r is None else R(r[0], r[1])


def q_zipped_divide(layout: Any, tiler: Any) -> Layout | None:
    r = _zipped(_divided(layout, tiler), tiler)
    return None if r is None else R(r[0], r[1])


def q_tiled_divide(layout: Any, tiler: Any) -> Layout | None:
    return _unpack(_zipped(_divided(layout, tiler), tiler), False)


def q_flat_divide(layout: Any, tiler: Any) -> Layout | None:
    return _unpack(_zipped(_divided(layout, tiler), tiler), True)


# --------------------------------------------------------------------------------------------- products


def _product(s: Any, d: Any, tiler: Any) -> tuple | None:
    """``logical_product(s:d, tiler)``: ``(A, complement(A, size(A) * cosize(B)) o B)``, by mode for a tuple."""
    if tiler is None:
        return s, d
    if type(tiler) is tuple:
        return _by_mode(s, d, tiler, _product)
    t = _tiler(tiler, 0, ANY)  # B only composes: any sign; A is complemented: plain
    fa = flat_plain(s, d)
    if t is None or fa is None:
        return None
    cotarget = 1
    for x in fa[0]:
        cotarget *= x
    cos_b = 1  # CuTe's cosize: sum((s - 1) * |d|) + 1
    ts, td = t[2], t[3]
    for i in range(len(ts)):
        y = td[i]
        cos_b += (ts[i] - 1) * (y if y >= 0 else -y)
    comp = complement_pair(fa[0], fa[1], cotarget * cos_b, (s, d))
    if comp is None:
        return None
    cs, cd = comp
    rest = compose(cs, cd, (cs, cd) if type(cs) is tuple else None, t[0], t[1])
    return None if rest is None else ((s, rest[0]), (d, rest[1]))


def _multiplied(block: Any, tiler: Any) -> tuple | None:
    return _product(block.shape, block.stride, tiler) if type(block) is Layout else None


def q_logical_product(block: Any, tiler: Any) -> Layout | None:
    r = _multiplied(block, tiler)
    return None if r is None else R(r[0], r[1])


def q_zipped_product(block: Any, tiler: Any) -> Layout | None:
    r = _zipped(_multiplied(block, tiler), tiler)
    return None if r is None else R(r[0], r[1])


def q_tiled_product(block: Any, tiler: Any) -> Layout | None:
    return _unpack(_zipped(_multiplied(block, tiler), tiler), False)


def q_flat_product(block: Any, tiler: Any) -> Layout | None:
    return _unpack(_zipped(_multiplied(block, tiler), tiler), True)
