"""The plain layouts' raw ``(shape, stride)`` pairs, for the fast paths (``algebra.core.quick``): their flat modes
(``flat_plain``, ``flat_modes``), composition of raw pairs with CuTe's conditions and the never-wrong check
(``compose``), and the zipped and unpacked forms of a divide's or a product's raw pair (``zip2``, ``unpack``).

*Plain*: every stride an int >= 0 (what the fast paths complement); ``low = ANY`` admits every int stride (what
only composes). Nothing here builds a Layout but to hand one to ``checks.check_composition``.
"""

from __future__ import annotations

from typing import Any

from algebra.core import inttuple as it
from algebra.core.checks import check_composition
from algebra.core.compose_proof import compose_proved
from algebra.core.errors import LayoutError
from algebra.core.fastpath import coalesce_x_flat
from algebra.core.layout import Layout

R = Layout._raw
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
            for v in y:  # a flat mode (congruent: its shapes are ints where its strides are): both at once
                if type(v) is not int or v < low:
                    break
            else:
                fs.extend(x)
                fd.extend(y)
                continue
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


def flat_modes(s: tuple, d: tuple) -> tuple:
    """``(flatten(s), flatten(d))`` for the congruent shape and stride of a Layout, in one walk (a flat mode's
    leaves at once)."""
    fs: list = []
    fd: list = []
    for i in range(len(s)):
        x = s[i]
        if type(x) is not tuple:
            fs.append(x)
            fd.append(d[i])
            continue
        for u in x:
            if type(u) is tuple:  # deeper
                fs.extend(it.flatten(x))
                fd.extend(it.flatten(d[i]))
                break
        else:
            fs.extend(x)
            fd.extend(d[i])
    return tuple(fs), tuple(fd)


def nested(s: Any) -> bool:
    """``s`` is a tuple with a tuple in it."""
    if type(s) is tuple:
        for x in s:
            if type(x) is tuple:
                return True
    return False


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


def compose(a_s: Any, a_d: Any, fa: tuple | None, b_s: Any, b_d: Any, c: tuple | None = None) -> tuple | None:
    """``composition(a_s:a_d, b_s:b_d)`` as a raw pair for plain A (flat modes ``fa``; None: A is one int mode)
    and B: coalesce A keeping its function past size(A) (``c`` where the caller has it), compose each mode of B
    (CuTe's conditions), then the check that the answer is ``A o B``: the structural proof (in the same walk,
    ``compose_proved``), and where it does not decide, ``check_composition``. Returns ``(shape, stride, proved)``."""
    if c is None:
        c = (2 if a_s == 1 else a_s, a_d) if fa is None else coalesce_x_flat(fa[0], fa[1])
    # CuTe's own conditions refuse here, as in the general code
    r = compose_proved(c[0], c[1], b_s, b_d)
    if r is None:
        return None
    if not r[2]:
        try:
            check_composition(R(a_s, a_d), c[0], R(b_s, b_d), R(r[0], r[1]))
        except LayoutError:
            return None
    return r


def zip2(s: Any, d: Any, guide: Any) -> tuple:
    """``products._zip2_by`` of the shape ``s`` and of the stride ``d`` (the tile modes, then the rest modes),
    refusing as it does, in one walk (``d`` is congruent to ``s``: it fails where ``s`` does, and ``s`` is walked
    first, so the refusal is the same)."""
    if type(guide) is not tuple:
        if type(s) is not tuple or len(s) != 2:
            raise LayoutError("zip2_by: expected a rank-2 mode")
        return s, d
    n = len(guide)
    if type(s) is not tuple or len(s) < n:
        raise LayoutError("zip2_by: mismatched ranks")
    if n == 2:  # the usual rank-2 tiler: no lists
        p = s[0]
        q = d[0]
        g = guide[0]
        if type(g) is tuple:
            p, q = zip2(p, q, g)
        elif type(p) is not tuple or len(p) != 2:
            raise LayoutError("zip2_by: expected a rank-2 mode")
        u = s[1]
        v = d[1]
        g = guide[1]
        if type(g) is tuple:
            u, v = zip2(u, v, g)
        elif type(u) is not tuple or len(u) != 2:
            raise LayoutError("zip2_by: expected a rank-2 mode")
        return ((p[0], u[0]), (p[1], u[1]) + s[2:]), ((q[0], v[0]), (q[1], v[1]) + d[2:])
    s0, s1, d0, d1 = [], [], [], []
    for i in range(n):
        g = guide[i]
        p = s[i]
        q = d[i]
        if type(g) is tuple:
            p, q = zip2(p, q, g)
        elif type(p) is not tuple or len(p) != 2:
            raise LayoutError("zip2_by: expected a rank-2 mode")
        s0.append(p[0])
        s1.append(p[1])
        d0.append(q[0])
        d1.append(q[1])
    return (tuple(s0), tuple(s1) + s[n:]), (tuple(d0), tuple(d1) + d[n:])


def unpack(r: tuple | None, first: bool) -> Layout | None:
    """``products._unpack`` of the zipped raw pair ``r`` (``zip2``'s), ``(first, True)``: the second mode's modes
    (and the first's, with ``first``) become modes of the result; None for None."""
    if r is None:
        return None
    (s0, s1), (d0, d1) = r
    if not first or type(s0) is not tuple or len(s0) < 2:
        s0 = (s0,)
        d0 = (d0,)
    if type(s1) is tuple and len(s1) > 1:
        return R(s0 + s1, d0 + d1)
    return R(s0 + (s1,), d0 + (d1,))
