"""Is ``composition(A, B)`` the function ``A o B``?  The check that keeps the engine from teaching a wrong layout.

CuTe's composition checks two weak conditions per mode of the coalesced A (``rest_stride % shape == 0 or
rest_stride < shape``, then ``rest_shape % new_shape == 0``) and otherwise prints whatever its loop produced. When
the stride of B does not divide the shape of the mode it steps through, the printed layout wraps at the wrong place:
``(6,2):(8,2) o 4:4`` prints ``(2,2):(32,2)``, which gives 2 at i = 2 although ``A(B(2)) = A(8) = 18``.
When the modes of B land in the same mode of A and together step past its end, each mode is right alone but their
sum carries into the next mode of A, which the printed layout cannot do.

``post_composition((A, B), R)`` accepts R (returns None) exactly when ``R(i) == A(B(i))`` for every ``i`` with
``0 <= B(i) < size(A)``, and otherwise raises ``LayoutError`` naming the failed condition, the modes involved, what
CuTe would print (R) and one counterexample coordinate. A cheap structural proof settles the usual cases
(``structural_failure``); the rest are decided by enumeration (``relevant_counterexample``, else
``find_counterexample``).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from contextvars import ContextVar
from itertools import chain, islice, pairwise
from itertools import product as cartesian
from math import prod
from typing import Any

from algebra.core import inttuple as it
from algebra.core.arith import f2_apply, f2_columns, has_f2
from algebra.core.errors import LayoutError
from algebra.core.modes import bw_coalesce, coalesce_x_pair, flat_pair, offsets
from algebra.core.recorder import _ACTIVE

_UNCHECKED: ContextVar[bool] = ContextVar("algebra_unchecked", default=False)
ENUM_CAP = 1 << 16  # coordinates of B checked one by one when the structural proof does not apply
FULL_CAP = 1 << 20  # above ENUM_CAP a sample is tried first; up to this size all of B is checked before refusing
A_TABLE_CAP = 1 << 20  # A is tabulated up to this size, evaluated point by point beyond


def capped(n: int, refusal: str | None, few: bool = False) -> int:
    """``n``, the points a check (each one that reads points) is to read, counted first; over FULL_CAP (ENUM_CAP if
    ``few``) a LayoutError: ``refusal`` (ending "("), ``n``, the cap; -1 if no refusal (the inverses: unconfirmed)."""
    if n > (cap := ENUM_CAP if few else FULL_CAP) and refusal is not None:
        raise LayoutError(f"{refusal}{n:,} points to check one by one, over the {cap:,}-point cap)")
    return -1 if n > cap else n


def structural_failure(a_shape: Any, b_shape: Any, b_stride: Any) -> str | None:
    """None when the composition of the coalesced A (shape ``a_shape``, flat) with B is provably A o B.

    Each flat mode ``s:d`` of B is walked through the modes of A as CuTe does. A mode of A it steps through must
    either be skipped whole (``d % shape == 0``), be divided by the stride (``shape % d == 0``), or hold all of the
    mode's remaining points (``(s - 1) * d < shape``). The extents the modes of B take in each mode of A (but the
    last, which is unbounded) must together stay inside it, so no sum of B's modes carries. Otherwise the reason,
    or ``"?"`` when the structure is outside this proof (negative strides, basis strides).
    """
    if type(a_shape) is int or len(a_shape) == 1:
        return None  # one mode of A: A(x) is linear in x everywhere
    n = len(a_shape) - 1
    used = [0] * n
    bs, bd = flat_pair(b_shape, b_stride)
    for k in range(len(bs)):
        s, d = bs[k], bd[k]
        if type(d) is not int or type(s) is not int or d < 0:
            return "?"
        if s == 1 or d == 0:
            continue
        rest_s, rest_d = s, d
        for i in range(n):
            cs = a_shape[i]
            if cs <= 0:
                return "?"
            if rest_d % cs == 0:
                rest_d //= cs
                continue
            if rest_d > cs:
                return None  # CuTe refuses this itself (stride divisibility); the composition raised already
            if cs % rest_d == 0:
                if rest_s > cs // rest_d:
                    used[i] += cs - rest_d
                    rest_s //= cs // rest_d
                    rest_d = 1
                    continue
            elif (rest_s - 1) * rest_d >= cs:
                return (f"stride divisibility condition: mode {k} of B ({s}:{d}) steps by {rest_d} through mode {i} "
                        f"of the coalesced A (shape {cs}); {rest_d} does not divide {cs}, so the steps cross that "
                        f"mode's end at a point the result cannot express")
            used[i] += rest_d * (rest_s - 1)
            break
    for i in range(n):
        if used[i] >= a_shape[i]:
            return (f"disjointness condition: the modes of B together reach {used[i]} in mode {i} of the coalesced A "
                    f"(shape {a_shape[i]}), so their sum carries into the next mode of A")
    return None


def find_counterexample(a: Any, b: Any, r: Any, why: str, f2: bool = False) -> tuple | None:
    """``(i, B(i), A(B(i)), R(i))`` for an ``i`` where R differs from A o B inside ``size(A)``, else None: the one
    search of ``post_composition`` (``why``: the condition to blame). Unless ``f2`` (B's strides are ints), the least
    such ``i`` when the points that can land inside A decide it (``relevant_counterexample``); else, over ENUM_CAP
    points, the first found among the first ENUM_CAP coordinates of B made of corners and steps of each mode; then,
    unless that found one or no structure is to blame (``why == "?"``), the least ``i`` over every point, counted
    first (``capped``)."""
    if not f2 and (hit := relevant_counterexample(a, b, r)) is not _UNDECIDED:
        return hit
    size_a = it.product(a.shape)
    a_of = offsets(a).__getitem__ if size_a <= A_TABLE_CAP and (int_strides(a) or has_f2(a.stride)) else a
    if has_non_positive_shape(a):  # CuTe's arithmetic on negative strides: no coordinate of A to read B's offsets at
        raise LayoutError(f"composition {a} o {b} is refused: A has a shape <= 0 (CuTe's integer arithmetic on "
                          "negative strides), so no offset of B is a coordinate of A")
    fs = it.flatten(b.shape)
    n_b = it.product(fs)
    if not f2 and n_b > ENUM_CAP:
        picks = _picks(fs)
        index_of = _dot(it.flatten(it.prefix_product(fs)))
        b_of = _dot(it.flatten(b.stride))
        r_of = offset_fn(r.shape, r.stride) if int_strides(r) else r
        for c in islice(cartesian(*picks), ENUM_CAP):
            x = b_of(c)
            if 0 <= x < size_a:
                i = index_of(c)
                y = r_of(i)
                if a_of(x) != y:
                    return i, x, a_of(x), y
        if why == "?":
            return None
    if f2 or n_b > ENUM_CAP:
        capped(n_b, f"composition {a} o {b} is refused: " + (f"CuTe would print {r}, not confirmed here to be A o B "
               "(F2 strides, " if f2 else f"{why}. CuTe would print {r} here, not confirmed to be A o B ("))
    if (int_strides(b) or has_f2(b.stride)) and (int_strides(r) or has_f2(r.stride)):  # (F2 offsets: bits)
        pairs = enumerate(zip(offsets(b), offsets(r), strict=True))
    else:
        pairs = ((i, (b(i), r(i))) for i in range(n_b))
    for i, (x, y) in pairs:
        if type(x) is int and 0 <= x < size_a and a_of(x) != y:
            return i, x, a_of(x), y
    return None


def _picks(fs: list) -> list[list[int]]:
    """The corners and steps of each mode of size ``s`` in ``fs``: 0..3, the middle, the last two and the powers of
    two below s, sorted (the sample ``find_counterexample`` and ``_sample`` read)."""
    return [sorted(c for c in {0, 1, 2, 3, s // 2, s - 2, s - 1} | {min(s - 1, 1 << k) for k in range(2, 24)}
                   if 0 <= c < s) for s in fs]


def _sample(x: Any) -> Any:
    """The indices i of the first ENUM_CAP coordinates of x's shape made of corners and steps of each mode
    (``_picks``), least first, then for ``Sw o O o L`` the last ``2^(B+M+|S|)`` (up to 4096: where Sw moves an index
    past the end); for ``L o O o Sw`` (no shape) ``i = Sw(y - O)`` for such indices ``y >= O`` of L; none for a
    longer chain without a shape."""
    inner = getattr(x, "layout_b", None)
    if type(inner).__name__ == "Swizzle":
        return (inner(y - x.offset) for y in _sample(x.layout_a) if y >= x.offset)
    if inner is not None and not hasattr(x, "shape"):
        return iter(())
    fs = it.flatten(x.shape)
    crds = islice(cartesian(*reversed(_picks(fs))), ENUM_CAP)  # the first mode fastest: increasing index
    n, sw = prod(fs), getattr(x, "layout_a", None)
    tail = min(4096, 1 << sw.bits + sw.base + abs(sw.shift)) if type(sw).__name__ == "Swizzle" else 0
    return chain(map(_dot(tuple(reversed(it.flatten(it.prefix_product(fs))))), crds), range(max(0, n - tail), n))


def _at(x: Any) -> Any:
    """Index -> ``x(i)`` of a layout whose offsets are ints or F2 bits (``offsets`` for one point), or of ``Sw o O o
    x``."""
    if hasattr(x, "layout_b"):
        inner, outer, off = _at(x.layout_b), x.layout_a, x.offset
        return lambda i: outer(off + inner(i))
    return offset_fn(x.shape, x.stride) if int_strides(x) else lambda i: int(x(i))


_UNDECIDED = object()


def _parts_like(b_shape: Any, r_shape: Any, r_stride: Any, out: list) -> bool:
    """The sub-layouts of R at the leaves of B's shape (R = A o B keeps B's profile), appended to ``out``."""
    if type(b_shape) is not tuple:
        out.append((b_shape, r_shape, r_stride))
        return True
    if type(r_shape) is not tuple or len(r_shape) != len(b_shape):
        return False
    return all(_parts_like(b_shape[i], r_shape[i], r_stride[i], out) for i in range(len(b_shape)))


def relevant_counterexample(a: Any, b: Any, r: Any) -> Any:
    """``(i, B(i), A(B(i)), R(i))`` for the smallest ``i`` with ``0 <= B(i) < size(A)`` and ``R(i) != A(B(i))``,
    or None when there is none: every such ``i`` is checked, and only those. The points are built mode by mode of
    B, dropping a partial sum that the modes still to come cannot bring back into [0, size(A)) (with non-negative
    strides: one already past size(A)). R is read mode by mode of B too (``R(c) == sum_k R_k(c_k)``).
    ``_UNDECIDED`` when that does not apply (basis strides in A, R not of B's profile) or the points pass ENUM_CAP.
    B's strides are ints (``post_composition``)."""
    parts: list = []
    if not int_strides(r) or not _parts_like(b.shape, r.shape, r.stride, parts):
        return _UNDECIDED
    fd = it.flatten(b.stride)
    size_a = it.product(a.shape)
    n = len(parts)
    ext = [(parts[k][0] - 1) * fd[k] for k in range(n)]  # each mode's reach, negative or not
    lo_rest, hi_rest = [0] * (n + 1), [0] * (n + 1)  # what the modes after k can still add
    for k in range(n - 1, -1, -1):
        lo_rest[k] = lo_rest[k + 1] + min(ext[k], 0)
        hi_rest[k] = hi_rest[k + 1] + max(ext[k], 0)
    pts = [(0, 0, 0)]  # (B(c), index of c, R(c)) over the coordinates c built so far
    w = 1  # index weight of the next mode
    mult = 1  # coordinates each point stands for: those of the stride-0 modes of B on which R is constant, whose
    # first coordinate (0) has the least index and the same B(c) and R(c) as the others
    signed = lo_rest[0] < 0  # some stride of B is negative
    for k in range(n):
        s, rs, rd = parts[k]
        if s == 1:
            continue
        if it.product(rs) != s:
            return _UNDECIDED
        d = fd[k]
        lo, hi = lo_rest[k + 1], hi_rest[k + 1]
        if d > 0:  # the coordinates of the mode that the others, at their least (lo_rest[0]), keep below size(A)
            m = min(s, (size_a - 1 - lo_rest[0]) // d + 1)
        else:
            m = s if d == 0 else min(s, hi_rest[0] // -d + 1)
        if m <= 0:
            return None  # not even B(0) = 0 is inside A
        at = (lambda c, rd=rd: c * rd) if type(rs) is int else offset_fn(rs, rd)
        if d == 0:  # each point stays or goes as a whole: counted before the mode's table is built
            if signed:
                pts = [p for p in pts if p[0] + hi >= 0 and p[0] + lo < size_a]
            if len(pts) * m * mult > ENUM_CAP:
                return _UNDECIDED
            tab = list(map(at, range(m)))
            if tab.count(tab[0]) == m:
                pts = [(x, i, v + tab[0]) for x, i, v in pts] if tab[0] else pts
                mult *= m
            else:
                pts = [(x, i + c * w, v + tab[c]) for x, i, v in pts for c in range(m)]
        else:  # built one by one, up to one point past the cap
            pts = list(islice(((y, i + c * w, v + at(c)) for x, i, v in pts
                               for c in range(m if signed else min(m, (size_a - 1 - x) // d + 1))
                               if ((y := x + c * d) + hi >= 0 and y + lo < size_a) or not signed),
                              ENUM_CAP // mult + 1))
        if len(pts) * mult > ENUM_CAP:
            return _UNDECIDED
        w *= s
    if not int_strides(a):
        a_of = a
    elif 0 < size_a <= 4 * len(pts):  # every point is inside A: its table, when not much longer than the points
        a_of = offsets(a).__getitem__
    else:
        a_of = offset_fn(a.shape, a.stride)
    best = None
    for x, i, v in pts:
        if (best is None or i < best[0]) and (ax := a_of(x)) != v:
            best = (i, x, ax, v)
    return best


def _dot(weights: tuple) -> Any:
    """A flat coordinate -> its inner product with ``weights`` (a flat layout's offset, or its index)."""
    return lambda c: sum(map(int.__mul__, c, weights))


def offset_fn(shape: Any, stride: Any) -> Any:
    """Index ``i`` (``0 <= i < size``) -> ``L(i)`` for the layout ``L = shape:stride`` with int strides, through its
    flat modes: the same value as ``L(i)`` without re-checking the coordinate at every call."""
    modes = list(zip(it.flatten(shape), it.flatten(stride), strict=True))
    last = modes.pop()[1]

    def at(i: int) -> int:
        off = 0
        for s, d in modes:
            i, c = divmod(i, s)
            off += c * d
        return off + i * last

    return at


def int_strides(layout: Any) -> bool:
    return _ints(getattr(layout, "stride", None))


def post_composition(args: tuple, r: Any) -> None:
    """Composition's post-condition on two plain layouts: raise ``LayoutError`` unless ``R(i) == A(B(i))`` wherever
    ``0 <= B(i) < size(A)`` (see the module doc). A tiler composes mode by mode, each mode a composition checked on
    its own; a swizzled side is checked where it is built (``algebra.core.swizzle``)."""
    a, b = args
    if type(a).__name__ == "Layout" and type(b).__name__ == "ComposedLayout" and type(r) is type(b):
        return _post_swizzled_b(a, b, r)
    if type(r).__name__ != "Layout" or type(a) is not type(r) or type(b) is not type(r):
        return
    f2 = not (_ints(a.stride) and _ints(b.stride)) and (has_f2(a.stride) or has_f2(b.stride))
    if f2:  # carry-less strides: no structural proof; all linear, the units decide; else each point (its offsets as
        if _f2_agree(a, b, r):  # bits: F0 is 0; an F2 B(i) indexes A)
            return
        why = "F2 linearity condition: " + ("the steps of B through A's F2 modes carry, and a carry-less product "
                                            "does not" if has_f2(a.stride) else "A's int offsets do not add B's XORs")
    else:
        why = structural_failure(coalesce_x_pair(a.shape, a.stride)[0], b.shape, b.stride)
        # proven; or basis (E) strides, which select a mode of A, each composed with that mode alone; or CuTe's C++
        # arithmetic on the non-positive shapes of negative-stride complements, printed as is
        if why is None or not _ints(b.stride) or has_non_positive_shape(r) or has_non_positive_shape(a):
            return
    hit = find_counterexample(a, b, r, why, f2)
    if hit is not None:
        i, x, ax, ri = hit
        raise LayoutError(f"composition {a} o {b} is not a layout: {'the result is not A o B' if why == '?' else why}"
                          f". CuTe would print {r} here; at i = {i} that gives {ri}, but A(B({i})) = A({x}) = {ax}")


def _post_swizzled_b(a: Any, b: Any, r: Any, part: LayoutError | None = None) -> None:
    """``A o (Sw o 0 o L)``, which CuTe writes ``(A o Sw) o L = Sw' o 0 o (A o L)``: both parts are checked where
    they are built, but ``A o Sw = Sw' o A`` holds on A's domain only, and a swizzle can bring an offset ``L(i) >=
    size(A)`` back inside A (a negative shift moves high bits down and clears them). Proven where no offset of L
    crosses ``size(A)`` that way: L's int offsets all lie in ``[0, size(A))``; or they are never negative and
    ``size(A)`` is a power of two that either lies above every bit the swizzle touches, or meets a positive shift
    (which only changes bits below the source bits it reads, and keeps those). Otherwise a sample of points, then
    each point: refused at the first ``i`` with ``0 <= B(i) < size(A)`` and ``R(i) != A(B(i))``. With ``part`` (the
    refusal of a part: the whole may still be A o B, its wrong points being outside A) no proof, every point, and a
    refusal names the part's condition."""
    sw, inner, n = b.layout_a, b.layout_b, it.product(a.shape)
    if type(sw).__name__ != "Swizzle" or type(inner).__name__ != "Layout" or b.offset:
        return
    ints = _ints(inner.stride)
    if part is None and ints and all(d >= 0 for d in it.flatten(inner.stride)):
        top = sum((s - 1) * d for s, d in zip(*flat_pair(inner.shape, inner.stride), strict=True))
        if top < n or not n & (n - 1) and (sw.shift > 0 or n >> (sw.base + sw.bits + abs(sw.shift)) > 0):
            return
    why = (f"swizzle domain condition: CuTe writes A o {sw} as a swizzle of A's offsets, which is A o {sw} only "
           f"below size(A) = {n}; {sw} brings offsets of {inner} at or past {n} back below it") if part is None else (
        f"CuTe computes it as (A o {sw}) o {inner}, and A o {sw} is not a layout ("
        + (m[1] if (m := re.search(r"is not a layout: (.*?)\. CuTe would print", str(part))) else str(part)[:200])
        + ")")
    a_of = offsets(a).__getitem__ if n <= A_TABLE_CAP and (int_strides(a) or has_f2(a.stride)) else a

    def refuse(i: int, x: int, y: int, ax: int) -> None:
        raise LayoutError(f"composition {a} o {b} is not a layout: {why}. CuTe would print {r} here; at i = {i} "
                          f"that gives {y}, but A(B({i})) = A({x}) = {ax}")

    for i in islice(_sample(b), 4096):  # corners and steps first: a counterexample is usually among them
        x = int(b(i))
        if 0 <= x < n and (ax := int(a_of(x))) != (y := int(r(i))):
            refuse(i, x, y, ax)
    m = capped(it.product(inner.shape), f"composition {a} o {b} is refused: {why}. CuTe would print {r} here, not "
               "confirmed to be A o B (")
    if not (ints or has_f2(inner.stride)) or type(r.layout_a).__name__ != "Swizzle" or r.offset \
            or type(r.layout_b).__name__ != "Layout" or not (int_strides(r.layout_b) or has_f2(r.layout_b.stride)):
        pairs = ((i, int(b(i)), int(r(i))) for i in range(m))
    else:
        pairs = ((i, sw(x), r.layout_a(y)) for i, (x, y) in enumerate(zip(offsets(inner), offsets(r.layout_b),
                                                                          strict=True)))
    for i, x, y in pairs:
        if 0 <= x < n and (ax := int(a_of(x))) != y:
            refuse(i, x, y, ax)


def _ints(stride: Any) -> bool:
    """Every leaf of the stride is an int (the usual stride: no other kind of leaf to look for)."""
    if type(stride) is not tuple:
        return type(stride) is int
    for x in stride:
        if type(x) is not int and not _ints(x):
            return False
    return True


def _f2_agree(a: Any, b: Any, r: Any) -> bool:
    """A, B, R F2-linear (``arith.f2_columns``), B inside A, and ``R == A o B`` at the units (so everywhere)."""
    ca, cb, cr = (f2_columns(x.shape, x.stride) for x in (a, b, r))
    ok = None not in (ca, cb, cr) and len(cb) == len(cr) and not any(x >> len(ca) for x in cb)
    return ok and all(f2_apply(ca, x) == y for x, y in zip(cb, cr, strict=True))


def _inverts(outer: Any, inner: Any, zeros: bool = False) -> bool:
    """``outer(inner(i)) == i`` and ``0 <= inner(i) < size(outer)`` for every ``i < size(inner)``, proven (plain
    layouts). F2 strides: both F2-linear (``arith.f2_columns``), so it holds where it holds at the unit indices. Int
    strides, mode by mode: each mode s:d of inner steps by d / P through one mode S:D of the coalesced outer (P its
    1-D step, P | d), by d / P * D == its own 1-D step, and those in one mode reach < S together (no carry).
    With ``zeros``, inner's stride-0 modes are skipped: ``outer(inner(i)) == E(i)``, i with their coordinates set to
    0 (E(i) its 1-D coordinate), so ``inner(outer(inner(i))) == inner(i)`` (a left inverse of a broadcast).
    A swizzled side ``Sw o 0 o B``: F2-linear when B is, its columns those of B swizzled (with ``zeros``, a column 0
    is skipped). Swizzles that cancel (``_unswizzled``): what is left."""
    if (xy := _unswizzled(outer, inner, zeros)) is not None:
        return _inverts(*xy, zeros)
    plain = type(inner).__name__ == "Layout" and type(outer) is type(inner)
    if not plain or not _ints((outer.stride, inner.stride)):
        if plain and not (has_f2(outer.stride) or has_f2(inner.stride)):
            return False  # (basis strides)
        co, ci = _f2_cols(outer), _f2_cols(inner)
        return None not in (co, ci) and all(x >> len(co) == 0 and f2_apply(co, x) == 1 << t or zeros and not x
                                            for t, x in enumerate(ci))
    if has_non_positive_shape(outer) or has_non_positive_shape(inner):
        return False
    os_, od = map(it.wrap, bw_coalesce(*flat_pair(outer.shape, outer.stride), 1, 0))
    pre, reach, step = [prod(os_[:j]) for j in range(len(os_))], [0] * len(os_), 1
    for s, d in zip(*flat_pair(inner.shape, inner.stride), strict=True):
        if d == 0 and zeros:
            step *= s
            continue
        j = bisect_right(pre, d) - 1
        if s > 1 and (d <= 0 or d % pre[j] or d // pre[j] * od[j] != step):
            return False
        reach[j], step = reach[j] + (s - 1) * d // pre[j], step * s
    return all(map(int.__lt__, reach, os_))


def _unswizzled(outer: Any, inner: Any, zeros: bool) -> tuple | None:
    """``(X, Y)``, two layouts, where ``outer o inner`` is ``X o Y`` up to swizzles that cancel, else None: outer
    ``X o -O o Sw`` after inner ``Sw o O o Y``, ``O >= 0`` (``X(Y(i))``; inner(i) is in outer's domain, offsets
    ``x >= 0`` with ``0 <= Sw(x) - O < size(X)``, where ``0 <= Y(i) < size(X)``); outer ``Sw o O o X`` after inner
    ``Y o -O o Sw`` (``Sw(O + X(Y(Sw(x) - O)))`` on inner's domain ``0 <= Sw(x) - O < size(Y)``, x itself where
    ``X(Y(j)) == j``: not with ``zeros``, x being an offset). A side ``Sw o 0 o Y`` with Y the identity on [0, N)
    (coalesced ``N:1``) and Sw a bijection on [0, N) (``2^(B+M+|S|)`` divides N) is also ``Y o 0 o Sw``."""
    if not (hasattr(outer, "layout_b") and hasattr(inner, "layout_b")):
        return None
    for oa, oo, ob in _sides(outer):
        for ia, io, ib in _sides(inner):
            if oo != -io:
                continue
            if type(ob).__name__ == "Swizzle" and ob == ia and io >= 0:
                xy = oa, ib
            elif type(oa).__name__ == "Swizzle" and oa == ib and not zeros:
                xy = ob, ia
            else:
                continue
            if all(type(x).__name__ == "Layout" for x in xy):
                return xy
    return None


def _sides(x: Any) -> list:
    """``x = A o O o B`` as ``(A, O, B)``, and as ``(Y, 0, Sw)`` too when it is ``Sw o 0 o Y`` that commutes so."""
    sw, y, out = x.layout_a, x.layout_b, [(x.layout_a, x.offset, x.layout_b)]
    if type(sw).__name__ == "Swizzle" and not x.offset and type(y).__name__ == "Layout" and int_strides(y):
        s, d = map(it.wrap, bw_coalesce(*flat_pair(y.shape, y.stride), 1, 0))
        if len(s) == 1 and d[0] == 1 and s[0] % (1 << (sw.bits + sw.base + abs(sw.shift))) == 0:
            out.append((y, 0, sw))
    return out


def _f2_cols(x: Any) -> list | None:
    """The F2 columns (``arith.f2_columns``) of an F2-linear layout, or of ``Sw o 0 o B`` for such a B: the swizzle
    (F2-linear) of each column of B; else None."""
    sw, b = (x.layout_a, x.layout_b) if hasattr(x, "layout_b") and not x.offset else (None, x)
    if type(b).__name__ != "Layout" or sw is not None and type(sw).__name__ != "Swizzle":
        return None
    cols = f2_columns(b.shape, b.stride)
    return cols if sw is None or cols is None else [sw(c) for c in cols]


def _inverse_refusal(op: str, layout: Any, r: Any, what: str, i: int, detail: str) -> LayoutError:
    return LayoutError(f"{op}({layout}) is not a layout: {what}. CuTe would print {r} here; {detail}")


def _tables(*layouts: Any, refusal: str | None = None) -> list | None:
    """Every offset of each layout (``offsets``), or None when one is not integral or over ``capped`` unrefused."""
    out = []
    for x in layouts:
        if not 0 < capped(it.product(getattr(x, "shape", 1)), refusal) or has_non_positive_shape(x):
            return None
        t = offsets(x)  # (F2 offsets as their bits)
        if any(type(v) is not int for v in t):
            return None  # basis offsets
        out.append(t)
    return out


def _on_domain(x: Any, tables: bool = True) -> tuple | None:
    """x on its domain: ``(points, get, domain, n)``, ``points`` its ``(i, x(i))`` (None where x is not defined),
    ``get`` x as a function (None off its domain), ``domain`` that domain in words (None for a plain layout: its
    indices ``[0, n)``), n the points read: every point, from a table (``offsets``), up to the cap (``capped``);
    over it (or without ``tables``: the other side is sampled) a sample (``_sample``) and x point by point. The
    domain of ``L o O o Sw`` or of a chain with a layout read after an offset, ``L o O o (Sw o 0 o B)``: offsets
    ``x >= 0`` in that of the last, in ``[0, size(L)]``. None where x's offsets are not ints or a shape is not
    positive."""
    part, y = False, x
    while hasattr(y, "layout_b"):
        part, y = part or hasattr(y.layout_a, "shape"), y.layout_b
    last = x
    while hasattr(getattr(last, "layout_b", None), "layout_b"):
        last = last.layout_b
    if hasattr(x, "shape"):
        n, text = it.product(x.shape), f"x < {it.product(x.shape)}, {x.domain_text()}" if part else None
        if n <= 0 or has_non_positive_shape(x) or not (part or int_strides(y) or has_f2(y.stride)):
            return None  # (basis offsets)
        at = x.at if part else _at(x)  # (F2 offsets as their bits)

        def get(v: Any) -> Any:
            return at(v) if type(v) is int and 0 <= v < n else None
    elif hasattr(x, "domain") and hasattr(last.layout_a, "shape"):
        n, text = last.layout_a.size(), x.domain_text()

        def get(v: Any) -> Any:
            return x.at(v) if type(v) is int and v >= 0 else None
    else:
        return None
    if capped(n, None) < 0 or not tables:
        return ((i, get(i)) for i in _sample(x)), get, text, n
    if hasattr(x, "shape"):
        tab = [x.at(i) for i in range(n)] if part else offsets(x)  # None: not defined at i
        return enumerate(tab), lambda v: tab[v] if type(v) is int and 0 <= v < n else None, text, n
    if last is x:
        lt = _tables(x.layout_a)
        if lt is None:
            return None
    tab = {v: x(v) if last is not x else lt[0][x.offset + x.layout_b(v)] for v in x.domain()}
    return tab.items(), tab.get, text, n


def _unconfirmed(op: str, layout: Any, r: Any, what: str, n: int) -> None:
    """Over the cap, no counterexample in the sample: refused, naming the points and the cap (``capped``)."""
    capped(n, f"{op}({layout}) is refused: {what}. CuTe would print {r} here, not confirmed (")


def post_right_inverse(args: tuple, r: Any) -> None:
    """CuTe's right inverse (``cute/layout.hpp``): ``L(R(i)) == i`` for every ``i < size(R)`` (every i of R's domain
    for ``L^-1 o -O o Sw``), each ``R(i)`` a 1-D coordinate of L. A swizzle with a negative shift moves the low bits
    up, where CuTe's ``right_inverse(L) o Sw`` reads L past its domain: refused, with a counterexample. Over the cap
    (``capped``) without a proof (``_inverts``), a sample of R's domain (``_sample``) is read: refused with its
    counterexample, else naming the cap.

    >>> from algebra.core.notation import parse
    >>> post_right_inverse((parse("Sw<2,0,-7> o 4:1"),), parse("Sw<2,0,-7> o 4:1"))
    Traceback (most recent call last):
    ...
    algebra.core.errors.LayoutError: right_inverse(Sw<2,0,-7> o 0 o 4:1) is not a layout: right inverse condition: \
L(R(i)) == i with R(i) in the domain [0, 4) of L. CuTe would print Sw<2,0,-7> o 0 o 4:1 here; at i = 1 it gives \
R(1) = 129, outside the domain of L
    """
    layout = args[0]
    fr = None if r is None or _inverts(layout, r) else _on_domain(r)
    fa = None if fr is None else _on_domain(layout, capped(fr[3], None) >= 0)
    if fa is None:
        return
    (_, get, dom, na), (pts, _, _, n) = fa, fr
    what = f"right inverse condition: L(R(i)) == i with R(i) in the domain {dom or f'[0, {na})'} of L"
    for i, x in pts:
        if x is None:  # i < size(R), where a layout of R's chain is read outside [0, its size)
            raise _inverse_refusal("right_inverse", layout, r, what, i, f"at i = {i} < size(R) = {n}, R is "
                                   f"not defined ({r.domain_text()} fails)")
        if (y := get(x)) != i:
            raise _inverse_refusal("right_inverse", layout, r, what, i, f"at i = {i} it gives R({i}) = {x}, "
                                   + ("outside the domain of L" if y is None else f"and L({x}) = {y}"))
    _unconfirmed("right_inverse", layout, r, what, n)


def post_left_inverse(args: tuple, r: Any) -> None:
    """CuTe's left inverse is a quasi-inverse (``cute/layout.hpp``, above ``left_inverse``): ``L(R(L(i))) == L(i)``
    for every ``i < size(L)``, ``R(L(i))`` a 1-D coordinate of L (the left inverse ``R(L(i)) == i`` when L is
    injective). Where CuTe prints a layout without that property (a non-injective L) it is refused. Proven for L
    with broadcast modes whose other modes R inverts (``_inverts(R, L, zeros=True)``); over the cap (``capped``)
    without a proof, a sample of L's domain (``_sample``) is read: refused with its counterexample, else naming the
    cap.

    >>> from algebra.core.notation import parse
    >>> post_left_inverse((parse("(6,3):(2,1)"),), parse("(2,6):(6,1)"))
    Traceback (most recent call last):
    ...
    algebra.core.errors.LayoutError: left_inverse((6,3):(2,1)) is not a layout: quasi-inverse condition: \
L(R(L(i))) == L(i) for every i < size(L) = 18. CuTe would print (2,6):(6,1) here; at i = 17, L(17) = 12, \
R(12) = 6, but L(6) = 1
    """
    layout = args[0]
    fa = None if r is None or _inverts(r, layout, True) else _on_domain(layout)
    fr = None if fa is None else _on_domain(r, capped(fa[3], None) >= 0)
    if fr is None:
        return
    (pts, get, dom, n), (_, get_r, dom_r, _) = fa, fr
    what = f"quasi-inverse condition: L(R(L(i))) == L(i) for every i {f'with {dom}' if dom else f'< size(L) = {n}'}"
    for i, y in pts:
        if y is None:  # L is not defined at i
            continue
        if (x := get_r(y)) is None:  # past R's size: R(y) goes on
            if dom_r:
                raise _inverse_refusal("left_inverse", layout, r, what, i, f"at i = {i}, L({i}) = {y}, outside the "
                                       "domain of R")
            if type(y) is not int or y < 0:
                break  # a negative offset: R is not evaluated there (CuTe's own arithmetic)
            x = r(y)
        if (z := get(x)) != y:
            raise _inverse_refusal("left_inverse", layout, r, what, i, f"at i = {i}, L({i}) = {y} and R({y}) = {x}, "
                                   "outside the domain of L" if z is None else f"at i = {i}, L({i}) = {y}, R({y}) = "
                                   f"{x}, but L({x}) = {z}")
    _unconfirmed("left_inverse", layout, r, what, n)


def _first_hole(modes: list, cot: int) -> int | None:
    """The least x in [0, cot) that is ``L(j) + R(i)`` for no i, j (``modes``: those of L and R), else None: bit sets of
    the sums below a bound that doubles, mode by mode, so a hole near 0 costs little however big the layouts are."""
    lo, w = sum(min(0, (s - 1) * d) for s, d in modes), 32
    while True:
        w = min(2 * w, cot)
        reach, mask = 1, (1 << (w - lo)) - 1  # bit p is the sum p + lo
        for s, d in modes:
            m = 1
            while d and m < s:  # reach + {0, |d|, .., (m-1)|d|}, m doubling
                reach, m = reach | reach << min(m, s - m) * abs(d) & mask, m + min(m, s - m)
        if holes := ~(reach >> -lo) & ((1 << w) - 1):
            return (holes & -holes).bit_length() - 1
        if w == cot:
            return None


def post_complement(args: tuple, r: Any) -> None:
    """CuTe's complement (``cute/layout.hpp``, above ``complement``), for an int cotarget (or none: the cosize),
    applied to the complement asked for (a divide or product computes on with CuTe's complement, whose last mode goes
    on past its size): ``size(R) >= cotarget / size(filter(L))`` and R is ordered (``R(i-1) < R(i)``), both read
    off the modes. Where CuTe prints a smaller layout (a layout whose strides do not nest, e.g. ``(8,24):(9,97)``)
    it is refused, naming an offset below the cotarget that no ``L(j) + R(i)`` reaches.

    >>> from algebra.core.notation import parse
    >>> post_complement((parse("(8,24):(9,97)"), 2298), parse("9:1"))
    Traceback (most recent call last):
    ...
    algebra.core.errors.LayoutError: complement((8,24):(9,97), 2298) is not a layout: complement size condition: \
size(R) >= cotarget / size(filter(A)) = 2298 / 192 = 11, but CuTe would print 9:1 here, of size 9; offset 72 < 2298 \
is L(j) + R(i) for no i, j
    """
    layout = args[0]
    cot = args[1] if len(args) > 1 else None
    if type(cot) is not int and cot is not None or r is None or type(layout).__name__ != "Layout":
        return  # a cotarget shape: CuTe folds the division across its modes (ceil_div), which the divides rely on
    fs, fd = flat_pair(layout.shape, layout.stride)
    if not fd:
        return
    fsize = reach = 1
    for i in range(len(fs)):
        d = fd[i]
        if type(d) is not int:
            return
        if d:
            s = fs[i]
            fsize *= s
            reach += (s - 1) * (d if d > 0 else -d)
    if cot is None:
        cot = reach
    rs, rd = flat_pair(r.shape, r.stride)
    n = prod(rs)
    if n < cot // fsize:
        hole = ""
        if 0 < it.product(layout.shape) * n <= FULL_CAP and not has_non_positive_shape(layout) and _ints(rd):
            miss = _first_hole(list(zip(fs + rs, fd + rd, strict=True)), cot)
            if miss is not None:
                hole = f"; offset {miss} < {cot} is L(j) + R(i) for no i, j"
        raise LayoutError(f"complement({', '.join(map(str, args))}) is not a layout: complement size condition: "
                          f"size(R) >= cotarget / size(filter(A)) = {cot} / {fsize} = {cot // fsize}, but CuTe would "
                          f"print {r} here, of size {n}{hole}")
    top = 0  # R is ordered when each mode of size > 1 steps past the largest offset of those before it (O(modes))
    for k in range(len(rs)):
        if rs[k] > 1:
            if rd[k] <= top:
                raise LayoutError(f"complement({', '.join(map(str, args))}) is not a layout: complement order "
                                  f"condition: R(i-1) < R(i), but CuTe would print {r} here, whose mode {k} "
                                  f"({rs[k]}:{rd[k]}) steps inside the modes before it")
            top += (rs[k] - 1) * rd[k]


def _leaf_starts(*layouts: Any) -> list | None:
    """The sorted 1-D starts of the leaves of shape > 1 of all ``layouts`` (and their common size), when each divides
    the next and no stride is F2: every layout is then linear on each step between two of them (a leaf is a run of
    steps), so two sums of these layouts agree everywhere iff they agree at the starts. None otherwise."""
    starts = set()
    for x in layouts:
        if not hasattr(x, "stride") or has_f2(x.stride):
            return None
        p = 1
        for n in it.flatten(x.shape):
            starts.add(p)
            p *= n
        starts.add(p)
    out = sorted(starts)
    return out if all(b % a == 0 for a, b in pairwise(out)) else None


def post_layout_add(args: tuple, r: Any) -> None:
    """``layout_add``'s post-condition: ``R(i) == A(i) + B(i)`` for every ``i < size(A)`` (an F2 stride on a mode
    whose shape is not a power of two can break it: refused, with the point). Offsets are compared as integers (an F2
    offset as its bits): the sum is XOR where both are F2 (or swizzled), else the integer sum (an F2 and an int
    offset that carry have no XOR sum)."""
    a, b = (type(r)(x) if type(x) is int else x for x in args)  # an int n is the layout n:1, as layout_add reads it
    if (starts := _leaf_starts(a, b, r)) is not None and all(a(p) + b(p) == r(p) for p in starts[:-1]):
        return  # proven: int or basis strides, linear between the leaf starts, agree at each
    tabs = _tables(a, b, r, refusal=f"layout_add({a}, {b}) is refused: CuTe would print {r}, not confirmed here (")
    if tabs is None:  # basis strides: point by point
        pts = ((i, a(i) + b(i), r(i)) for i in range(it.product(a.shape)))
    else:
        xor = all(hasattr(x, "layout_b") or has_f2(x.stride) for x in (a, b))  # (Sw o 0 o L: read as F2 strides)
        pts = ((i, x ^ y if xor else x + y, z) for i, (x, y, z) in enumerate(zip(*tabs, strict=True)))
    for i, want, got in pts:
        if got != want:
            raise LayoutError(f"layout_add({a}, {b}) is not a layout: sum condition: R(i) == A(i) + B(i). The "
                              f"common domain would give {r}; at i = {i} that is {got}, but A({i}) + B({i}) = {want}")


#: The never-wrong layer: op name -> its post-condition ``post(args, result)``, which returns when the result is
#: the function the op names and raises ``LayoutError`` otherwise (the condition, the modes, a counterexample and
#: what CuTe prints). ``verify`` applies it to every result of the op (``algebra.core.memo``, ``Layout.with_shape``).
POST: dict[str, Any] = {"composition": post_composition, "left_inverse": post_left_inverse,
                        "right_inverse": post_right_inverse, "layout_add": post_layout_add}
#: Post-conditions of the op asked for, not of its calls inside another op (``verify(..., outermost=True)``).
POST_OUTERMOST: dict[str, Any] = {"complement": post_complement}


def verify(op: str, args: tuple, result: Any, outermost: bool = False) -> Any:
    """``result`` when it passes the post-condition of ``op`` (``POST``; with ``outermost``, ``POST_OUTERMOST``), else
    the refusal (``LayoutError``). Inside ``cute_would_print`` nothing is checked: CuTe's own conditions only."""
    post = (POST_OUTERMOST if outermost else POST).get(op)
    if post is not None and not _UNCHECKED.get() and not (outermost and has_non_positive_shape(result)):
        post(args, result)
    return result


def _first_non_positive(shape: Any) -> tuple | None:
    """``(path, s)`` for the first shape entry ``s <= 0`` (path: its mode indices joined by dots, "" for an int
    shape), else None."""
    if type(shape) is not tuple:
        return ("", shape) if type(shape) is int and shape <= 0 else None
    for i, x in enumerate(shape):  # (the int leaves inline: this runs on every op's result)
        if type(x) is tuple:
            if (hit := _first_non_positive(x)) is not None:
                return f"{i}.{hit[0]}", hit[1]
        elif type(x) is int and x <= 0:
            return str(i), x
    return None


def has_non_positive_shape(value: Any) -> bool:
    """A Layout (or the inner layout of a ComposedLayout) with a shape entry <= 0."""
    return _first_non_positive(getattr(getattr(value, "layout_b", value), "shape", None)) is not None


def not_a_layout(call: str, result: Any) -> LayoutError | None:
    """The refusal of ``result``, the answer CuTe computes for ``call`` (its text, e.g. ``"complement((3):(-1), 2)"``),
    when a shape entry of it is <= 0, else None. CuTe's integer arithmetic goes on through negative strides and
    prints such layouts (``complement((3):(-1), 2)`` is ``(-1,0):(1,-3)``): no coordinate indexes a shape <= 0, and
    ``parse(str(R))`` rejects them."""
    hit = _first_non_positive(getattr(getattr(result, "layout_b", result), "shape", None))
    if hit is None:
        return None
    path, s = hit
    where = f"mode {path} of the result" if path else "the result"
    return LayoutError(
        f"{call} is not a layout: positive shape condition: a layout's shapes are positive, but CuTe's integer "
        f"arithmetic on the negative strides gives {where} the shape {s} (no coordinate indexes it, and the layout "
        f"does not parse back). CuTe would print {call} = {result}")


def checking() -> bool:
    """False inside ``cute_would_print``: the checks that CuTe does not make are off."""
    return not _UNCHECKED.get()


def unchecked(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` with the checks that CuTe does not make off (CuTe's own refusals still raise). ``fn`` must not
    be cached (an op's ``__wrapped__``): an unchecked answer is never kept."""
    token = _UNCHECKED.set(True)
    try:
        return fn(*args)
    finally:
        _UNCHECKED.reset(token)


def cute_would_print(fn: Any, *args: Any) -> Any:
    """What CuTe C++ answers for ``fn(*args)``: the same code with the ``A o B`` check off, so only CuTe's own
    (weak) conditions refuse; None when CuTe refuses too. Runs uncached (``memo``) with no recorder active."""
    no_rec = _ACTIVE.set(None)
    try:
        return unchecked(fn, *args)
    except LayoutError:
        return None
    finally:
        _ACTIVE.reset(no_rec)
