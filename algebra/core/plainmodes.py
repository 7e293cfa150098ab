"""The plain layouts' raw ``(shape, stride)`` pairs, for the fast paths (``algebra.core.quick``): their flat modes
(``flat_plain``, ``flat_modes``), and composition of raw pairs with CuTe's conditions and the never-wrong check
(``compose``).

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
