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
from algebra.core.checks import check_composition
from algebra.core.complement_modes import complement_pair, complement_plain
from algebra.core.compose_proof import compose_proved, scaled
from algebra.core.errors import LayoutError
from algebra.core.fastpath import coalesce_x_flat
from algebra.core.layout import Layout
from algebra.core.plainmodes import ANY, compose, flat_modes, flat_plain, unpack, zip2

R = Layout._raw
_flatten = it.flatten


# --------------------------------------------------------------------------------------------- composition


def _compose_raw(s: Any, d: Any, b: Any) -> tuple | None:
    """``composition(s:d, b)`` for int strides of any sign (composition's arithmetic takes them as the general
    code does; only the check's proof needs non-negative ones, and enumerates otherwise)."""
    if b is None:
        return s, d
    if type(b) is tuple:
        n = len(b)
        if type(s) is not tuple:  # a rank-1 layout is its own mode 0
            if n != 1:
                return None
            r = _compose_raw(s, d, b[0])
            return None if r is None else ((r[0],), (r[1],))
        if not n or n > len(s):
            return None
        shapes, strides = [], []
        for i in range(n):
            r = _compose_raw(s[i], d[i], b[i])
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
    if c is None:  # nested (or not int strides): A's flat modes, int strides of any sign (flat_plain(s, d, ANY))
        if type(s) is not tuple:
            return None
        s, d = flat_modes(s, d)
        c = coalesce_x_flat(s, d)
        if c is None or min(d) < ANY:
            return None
    r = compose_proved(c[0], c[1], b.shape, b.stride)
    if r is None:
        return None
    res = R(r[0], r[1])
    if not r[2]:
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
    k = len(profile)
    if type(s) is not tuple:  # a rank-1 layout is its own mode 0
        if k > 1:
            return None
        m = _coalesce_raw(s, d, profile[0]) if k else (s, d)
        return None if m is None else ((m[0],), (m[1],))
    if k > len(s) or not s:
        return None
    shapes = list(s)
    strides = list(d)
    for i in range(k):
        m = _coalesce_raw(s[i], d[i], profile[i])
        if m is None:
            return None
        shapes[i] = m[0]
        strides[i] = m[1]
    return tuple(shapes), tuple(strides)


def q_coalesce(layout: Any, profile: Any = None) -> Layout | None:
    """``coalesce``; ``coalesce_x_flat`` checks that the strides it merges are ints (None otherwise)."""
    if type(layout) is not Layout:
        return None
    s, d = layout.shape, layout.stride
    if type(profile) is tuple:
        r = _coalesce_raw(s, d, profile)
        return None if r is None else R(r[0], r[1])
    if type(s) is tuple:
        for x in s:
            if type(x) is tuple:  # nested: its flat modes
                s, d = flat_modes(s, d)
                break
    r = coalesce_x_flat(s, d, False)
    return None if r is None else R(r[0], r[1])


def q_complement(layout: Any, cotarget: Any = None) -> Layout | None:
    """``complement``: ``complement_pair`` of the flat modes (the general code filters the flat modes too)."""
    if type(layout) is not Layout:
        return None
    s, d = layout.shape, layout.stride  # complement_pair takes flat int strides >= 0 only, else None
    if type(s) is tuple:
        for x in s:
            if type(x) is tuple:  # nested: its flat modes (complement_pair would stop at the first tuple)
                fs, fd = flat_modes(s, d)
                r = complement_pair(fs, fd, cotarget, (s, d))
                return None if r is None else R(r[0], r[1])
    r = complement_pair(s, d, cotarget, (s, d))
    return None if r is None else R(r[0], r[1])


# --------------------------------------------------------------------------------------------- divides


def _divide(s: Any, d: Any, tiler: Any) -> tuple | None:
    """``logical_divide(s:d, tiler)``: ``A o (B, complement(B, shape(coalesce(A))))``, mode by mode for a tuple."""
    if tiler is None:
        return s, d
    tp = type(tiler)
    if tp is tuple:
        return _by_mode(s, d, tiler, _divide)
    if tp is Layout:  # complemented: plain (an int mode as it is: complement_pair takes it)
        ts, td = fs, fd = tiler.shape, tiler.stride
        if type(ts) is int:
            if type(td) is not int or td < 0:
                return None
        else:
            f = flat_plain(ts, td)
            if f is None:
                return None
            fs, fd = f
    elif tp is int and tiler > 0:
        ts = fs = tiler
        td = fd = 1 if tiler > 1 else 0
    else:
        return None
    if type(s) is int:  # A only composes (and gives its coalesced shape): any sign
        if type(d) is not int or d < ANY:
            return None
        cx = (2, d) if s == 1 else (s, d)
        cshape = s
    else:
        cx = coalesce_x_flat(s, d)  # coalesce keeping the stride of a last shape-1 mode; else plain coalesce
        if cx is not None and min(d) >= ANY:  # flat int modes
            cshape = cx[0] if s[-1] != 1 else coalesce_x_flat(s, d, False)[0]
        else:  # nested (or not int strides): A's flat modes, int strides of any sign (flat_plain(s, d, ANY))
            a_s, a_d = flat_modes(s, d)
            cx = coalesce_x_flat(a_s, a_d)
            if cx is None or min(a_d) < ANY:
                return None
            cshape = cx[0] if a_s[-1] != 1 else coalesce_x_flat(a_s, a_d, False)[0]
    if type(fs) is tuple and type(cshape) is int and cshape > 0:  # flat_plain's modes: checked already
        comp = complement_plain(fs, fd, cshape, (ts, td))
    else:
        comp = complement_pair(fs, fd, cshape, (ts, td))
    if comp is None:
        return None
    if type(cx[0]) is not tuple:  # A is one mode: B's strides times A's, nothing to prove (``compose_proved``)
        ld = cx[1]
        cs, cd = comp
        if ld == 1:  # int strides, times 1
            return (ts, cs), (td, cd)
        return (ts, cs), (td * ld if type(ts) is int else scaled(ts, td, ld), cd * ld if type(cs) is int else
                          scaled(cs, cd, ld))
    return compose(s, d, None, (ts, comp[0]), (td, comp[1]), cx)


def _by_mode(s: Any, d: Any, tiler: tuple, f: Any) -> tuple | None:
    """``f`` on each of the first ``len(tiler)`` modes with its tiler mode (a None mode is kept, as ``f`` keeps
    it); the other modes kept. A rank-1 ``s:d`` is its own mode 0, and comes back as a rank-1 tuple."""
    n = len(tiler)
    if type(s) is not tuple:
        if n > 1:
            return None
        if n and tiler[0] is not None:
            m = f(s, d, tiler[0])
            return None if m is None else ((m[0],), (m[1],))
        return (s,), (d,)
    if n > len(s) or not s:
        return None
    shapes = list(s)
    strides = list(d)
    for i in range(n):
        t = tiler[i]
        if t is not None:
            m = f(s[i], d[i], t)
            if m is None:
                return None
            shapes[i] = m[0]
            strides[i] = m[1]
    return tuple(shapes), tuple(strides)


def _by_mode_zip(s: Any, d: Any, tiler: tuple, f: Any) -> tuple | None:
    """``zip2(*_by_mode(s, d, tiler, f), tiler)`` in one walk. The refusals come in the same order: every mode's
    ``f`` first (a zip refusal found on the way waits for them, kept as its message: an exception held in a local
    of a frame its traceback holds would be a cycle for the garbage collector), then the zip's."""
    n = len(tiler)
    if type(s) is not tuple or n > len(s) or not s:
        r = _by_mode(s, d, tiler, f)
        return None if r is None else zip2(r[0], r[1], tiler)
    s0, s1, d0, d1 = [], [], [], []
    err = None
    for i in range(n):
        t = tiler[i]
        if t is None:
            p = s[i]
            q = d[i]
        else:
            m = f(s[i], d[i], t)
            if m is None:
                return None
            p = m[0]
            q = m[1]
        if err is not None:
            continue
        if type(t) is tuple:
            try:
                p, q = zip2(p, q, t)
            except LayoutError as e:
                err = e.args
                continue
        elif type(p) is not tuple or len(p) != 2:
            err = ("zip2_by: expected a rank-2 mode",)
            continue
        s0.append(p[0])
        s1.append(p[1])
        d0.append(q[0])
        d1.append(q[1])
    if err is not None:
        raise LayoutError(*err)
    return (tuple(s0), tuple(s1) + s[n:]), (tuple(d0), tuple(d1) + d[n:])


def _zipped(layout: Any, tiler: Any, op: Any) -> tuple | None:
    """``op`` (``_divide`` or ``_product``) of a Layout zipped by the tiler, as a raw pair (``zip2``), or None."""
    if type(layout) is not Layout:
        return None
    if type(tiler) is tuple:
        return _by_mode_zip(layout.shape, layout.stride, tiler, op)
    r = op(layout.shape, layout.stride, tiler)
    return None if r is None else zip2(r[0], r[1], tiler)


def _divided(layout: Any, tiler: Any) -> tuple | None:
    """``logical_divide`` of a Layout zipped by the tiler, as a raw pair, or None."""
    return _zipped(layout, tiler, _divide)


def q_logical_divide(layout: Any, tiler: Any) -> Layout | None:
    if type(layout) is not Layout:
        return None
    r = _divide(layout.shape, layout.stride, tiler)
    return None if r is None else R(r[0], r[1])


def q_zipped_divide(layout: Any, tiler: Any) -> Layout | None:
    r = _divided(layout, tiler)
    return None if r is None else R(r[0], r[1])


def q_tiled_divide(layout: Any, tiler: Any) -> Layout | None:
    return unpack(_divided(layout, tiler), False)


def q_flat_divide(layout: Any, tiler: Any) -> Layout | None:
    return unpack(_divided(layout, tiler), True)


# --------------------------------------------------------------------------------------------- products


def _product(s: Any, d: Any, tiler: Any) -> tuple | None:
    """``logical_product(s:d, tiler)``: ``(A, complement(A, size(A) * cosize(B)) o B)``, by mode for a tuple."""
    if tiler is None:
        return s, d
    tp = type(tiler)
    if tp is tuple:
        return _by_mode(s, d, tiler, _product)
    if tp is Layout:  # B only composes: any sign
        ts, td = tiler.shape, tiler.stride
        if type(ts) is int:
            if type(td) is not int or td < ANY:
                return None
            cos_b = 1 + (ts - 1) * (td if td >= 0 else -td)  # CuTe's cosize: sum((s - 1) * |d|) + 1
        else:
            f = flat_plain(ts, td, ANY)
            if f is None:
                return None
            cos_b = 1
            fs, fd = f
            for i in range(len(fs)):
                y = fd[i]
                cos_b += (fs[i] - 1) * (y if y >= 0 else -y)
    elif tp is int and tiler > 0:
        ts = cos_b = tiler
        td = 1 if tiler > 1 else 0
    else:
        return None
    if type(s) is int:  # A is complemented: plain (an int mode as it is: complement_pair takes it)
        if type(d) is not int or d < 0:
            return None
        comp = complement_pair(s, d, s * cos_b, (s, d))
    else:
        fa = flat_plain(s, d)
        if fa is None:
            return None
        cotarget = 1
        for x in fa[0]:
            cotarget *= x
        cotarget *= cos_b
        comp = complement_plain(fa[0], fa[1], cotarget, (s, d)) if cotarget > 0 else \
            complement_pair(fa[0], fa[1], cotarget, (s, d))
    if comp is None:
        return None
    cs, cd = comp  # a complement has no mode of shape 1 and none that merge: it is its own coalesce_x but for 1:0
    if type(cs) is not tuple:  # one mode: B's strides times its stride, nothing to prove (``compose_proved``)
        return (s, ts), (d, td * cd if type(ts) is int else td if cd == 1 else scaled(ts, td, cd))
    rest = compose(cs, cd, None, ts, td, comp)
    return None if rest is None else ((s, rest[0]), (d, rest[1]))


def _multiplied(block: Any, tiler: Any) -> tuple | None:
    """``logical_product`` of a Layout zipped by the tiler, as a raw pair, or None."""
    return _zipped(block, tiler, _product)


def q_logical_product(block: Any, tiler: Any) -> Layout | None:
    if type(block) is not Layout:
        return None
    r = _product(block.shape, block.stride, tiler)
    return None if r is None else R(r[0], r[1])


def q_zipped_product(block: Any, tiler: Any) -> Layout | None:
    r = _multiplied(block, tiler)
    return None if r is None else R(r[0], r[1])


def q_tiled_product(block: Any, tiler: Any) -> Layout | None:
    return unpack(_multiplied(block, tiler), False)


def q_flat_product(block: Any, tiler: Any) -> Layout | None:
    return unpack(_multiplied(block, tiler), True)
