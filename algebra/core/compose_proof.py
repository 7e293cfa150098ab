"""Composition of raw modes and its structural proof in one walk: ``fastpath._compose_modes`` and
``checks.structural_failure`` walk the same modes of the coalesced A with the same ``rest_shape`` / ``rest_stride``,
so the fast paths walk them once.

``compose_proved(ls, ld, bs, bd)`` returns ``(shape, stride, proved)``: ``(shape, stride)`` is exactly
``_compose_modes(ls, ld, bs, bd)`` (and it raises exactly what that raises: CuTe's divisibility conditions, from
``_compose_int`` itself), and ``proved`` is True only where ``structural_failure(ls, bs, bd)`` is None (the result is
provably ``A o B``, no check to run). ``proved`` False means: run ``checks.check_composition`` (which finds the reason
itself, or, where the walk here handed a mode back to ``_compose_int`` untouched, finds that there is none). None
where ``_compose_modes`` returns None (a basis stride in B).
"""

from __future__ import annotations

from typing import Any

from algebra.core.fastpath import _compose_int, _compose_modes


def compose_proved(ls: Any, ld: Any, bs: Any, bd: Any) -> tuple | None:
    """``_compose_modes(ls, ld, bs, bd)`` and whether ``structural_failure(ls, bs, bd)`` is None (module doc)."""
    if type(ls) is not tuple:  # one mode of A: every stride of B scaled by it (a stride 0 stays 0), nothing to prove
        if type(bs) is not tuple:
            return (bs, bd * ld, True) if type(bd) is int else None
        d = scaled(bs, bd, ld)
        return None if d is None else (bs, d, True)
    n = len(ls) - 1
    if n == 0:
        r = _compose_modes(ls, ld, bs, bd)
        return None if r is None else (r[0], r[1], True)
    used = [0] * (n + 1)  # the extent B's modes take in each mode of A but the last; used[n]: 1 once unproved
    if type(bs) is not tuple:
        if type(bd) is not int:
            return None
        s, d = _leaf(ls, ld, bs, bd, n, used)
    else:
        r = _modes(ls, ld, bs, bd, n, used)
        if r is None:
            return None
        s, d = r
    if used[n]:
        return s, d, False
    for i in range(n):
        if used[i] >= ls[i]:  # disjointness: the modes of B together carry into the next mode of A
            return s, d, False
    return s, d, True


def scaled(bs: tuple, bd: Any, ld: int) -> tuple | None:
    """The strides ``bd`` (of the shape ``bs``, a tuple) times ``ld``: B's strides composed with the one mode
    ``_:ld`` of A (``_compose_int`` on each mode); None where one is not an int (a basis stride)."""
    for x in bd:
        if type(x) is not int:
            break
    else:  # flat int strides (and so, congruent, a flat shape)
        if len(bd) == 2:
            return bd[0] * ld, bd[1] * ld
        return tuple([x * ld for x in bd])
    out: list = []
    for i in range(len(bs)):
        s = bs[i]
        d = bd[i]
        if type(s) is tuple:
            d = scaled(s, d, ld)
            if d is None:
                return None
            out.append(d)
        elif type(d) is int:
            out.append(d * ld)
        else:
            return None
    return tuple(out)


def _modes(ls: tuple, ld: tuple, bs: tuple, bd: Any, n: int, used: list) -> tuple | None:
    out_s: list = []
    out_d: list = []
    for i in range(len(bs)):
        s = bs[i]
        d = bd[i]
        if type(s) is tuple:
            p = _modes(ls, ld, s, d, n, used)
            if p is None:
                return None
        elif type(d) is int:
            p = (s, d) if d == 0 else _leaf(ls, ld, s, d, n, used)  # stride 0: s:0, nothing to prove
        else:
            return None
        out_s.append(p[0])
        out_d.append(p[1])
    return tuple(out_s), tuple(out_d)


def _leaf(ls: tuple, ld: tuple, s: int, d: int, n: int, used: list) -> tuple:
    """``_compose_int(ls, ld, s, d)``, adding to ``used`` what the proof adds for the mode ``s:d`` of B. Where the
    walk is not the plain one (a stride <= 0, a shape of A <= 0, one of CuTe's conditions fails) the mode goes to
    ``_compose_int`` itself: it answers, or raises CuTe's condition; a mode of B with a negative stride, or an A
    with a shape <= 0, is unproved (``structural_failure``'s ``"?"``)."""
    if d <= 0 or s < 1:
        if d < 0 or (d != 0 and s != 1):
            used[n] = 1
        return _compose_int(ls, ld, s, d)  # a stride-0 or size-1 mode has nothing to prove
    rest_s = s
    rest_d = d
    walking = s > 1  # the proof follows this mode of B (until it has placed all of its points)
    res_s = None
    for i in range(n):
        cs = ls[i]
        if cs <= 0:
            used[n] = 1
            return _compose_int(ls, ld, s, d)
        if rest_d % cs == 0:  # the step jumps over the whole mode (next shape 1): the stride carries on
            rest_d //= cs
            continue
        if rest_d > cs:
            return _compose_int(ls, ld, s, d)  # raises: CuTe's stride divisibility condition
        if rest_s == 1:
            rest_d = 1  # all taken: ceil(rest_d / cs) for rest_d < cs
            continue
        next_s = (cs + rest_d - 1) // rest_d
        new_s = next_s if next_s < rest_s else rest_s
        if rest_s % new_s:
            return _compose_int(ls, ld, s, d)  # raises: CuTe's shape divisibility condition
        if walking:
            if cs % rest_d == 0:
                if rest_s > next_s:
                    used[i] += cs - rest_d
                else:
                    used[i] += rest_d * (rest_s - 1)
                    walking = False
            else:
                walking = False
                if (rest_s - 1) * rest_d < cs:
                    used[i] += rest_d * (rest_s - 1)
                else:
                    used[n] = 1  # the steps cross the mode's end at a point the result cannot express
        if res_s is None:
            res_s = [new_s]
            res_d = [rest_d * ld[i]]
        else:
            res_s.append(new_s)
            res_d.append(rest_d * ld[i])
        rest_s //= new_s
        rest_d = 1  # ceil(rest_d / cs) for rest_d < cs
    if res_s is None:
        return rest_s, rest_d * ld[-1]
    if rest_s == 1:
        if len(res_s) == 1:
            return res_s[0], res_d[0]
        return tuple(res_s), tuple(res_d)
    res_s.append(rest_s)
    res_d.append(rest_d * ld[-1])
    return tuple(res_s), tuple(res_d)
