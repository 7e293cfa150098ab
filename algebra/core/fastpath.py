"""The mode arithmetic under the ops, on raw ``(shape, stride)`` pairs: coalesce, composition's per-mode step, and
every offset of a layout.

Nothing here builds a ``Layout``, so both ``Layout`` itself (``Layout.with_shape`` is a composition) and the ops
(``algebra.core.coalesce``, ``composition``, ``complement``) stand on this module. ``coalesce_x_flat`` and
``compose_flat`` are the fast paths for flat layouts with integer strides (``complement_pair``, for int layouts with
non-negative strides, is ``algebra.core.complement_modes``'): each returns the same pair as the generic code or
``None`` when the input is outside its case, and the caller then runs the generic code. ``_compose_int``
raises the composition refusals itself. A recorder passed as ``rec`` gets one step per decision, the layouts in them
as CuTe notation text.
"""

from __future__ import annotations

from typing import Any

from algebra.core import inttuple as it
from algebra.core.complement_modes import complement_pair as complement_pair  # its home before (importers kept)
from algebra.core.errors import LayoutError
from algebra.core.inttuple import signum, tdiv


def _lstr(shape: Any, stride: Any) -> str:
    """CuTe notation of the layout ``shape:stride`` (as ``str(Layout(shape, stride))``)."""
    return f"{it.to_str(shape)}:{it.to_str(stride)}"


def offsets(layout: Any) -> list[int]:
    """``[L(i) for i in range(size(L))]``, computed mode by mode (fast; the caller bounds the size).

    Works for Layout and ComposedLayout (the swizzle is applied to each offset).
    """
    if hasattr(layout, "layout_b"):
        a, off = layout.layout_a, layout.offset
        return [a(off + o) for o in offsets(layout.layout_b)]
    out = [0]
    for s, d in zip(it.flatten(layout.shape), it.flatten(layout.stride), strict=True):
        if s == 1:
            continue
        out = [o + k * d for k in range(s) for o in out] if d else out * s
    return out


# --------------------------------------------------------------------------------------------- coalesce


def bw_coalesce(fs: tuple, fd: tuple, new_s: Any, new_d: Any, rec: Any = None) -> tuple:
    """CuTe's ``bw_coalesce`` over flat shape ``fs`` / stride ``fd`` (modes before the seed, back to front)."""
    ns = [new_s]
    nd = [new_d]
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
        if front_s == 1 and len(ns) == 1:
            why = f"the mode built so far has size 1: mode {i} ({s}:{d}) replaces it"
            front_s, front_d = s, d
        elif s * d == front_d:
            why = f"mode {i} ({s}:{d}) ends where {front_s}:{front_d} begins ({s}*{d} = {s * d}): merge them"
            front_s, front_d = s * front_s, d
        else:
            ns[0], nd[0] = front_s, front_d
            if rec is not None:
                rec.step(f"mode {i} ({s}:{d}) does not end where {front_s}:{front_d} begins ({s}*{d} = {s * d} is "
                         f"not {front_d}): keep it as its own mode")
            ns.insert(0, s)
            nd.insert(0, d)
            front_s, front_d = s, d
            continue
        ns[0], nd[0] = front_s, front_d
        if rec is not None:
            rec.step(why, _lstr(it.unwrap(tuple(ns)), it.unwrap(tuple(nd))) if len(ns) > 1 else _lstr(ns[0], nd[0]))
    if len(ns) == 1:
        if ns[0] == 1:
            return 1, 0
        return ns[0], nd[0]
    return tuple(ns), tuple(nd)


def coalesce_x_pair(shape: Any, stride: Any) -> tuple:
    """``coalesce_x`` of any layout as a raw pair: coalesce, keeping the stride of a trailing shape-1 mode so that
    the function goes on past the domain (composition reads A there)."""
    fs, fd = it.flatten(shape), it.flatten(stride)
    return bw_coalesce(fs[:-1], fd[:-1], 2 if fs[-1] == 1 else fs[-1], fd[-1])


def coalesce_x_flat(shape: Any, stride: Any, x: bool = True) -> tuple | None:
    """``coalesce_x`` (``x``) or ``coalesce`` of a flat layout with int strides as a raw ``(shape, stride)`` pair
    (``None`` otherwise): ``_bw_coalesce`` with the last mode as the seed (for ``coalesce_x`` a shape-1 last mode
    seeds shape 2, keeping its stride)."""
    if type(shape) is int:
        if type(stride) is not int:
            return None
        if shape == 1:
            return (2, stride) if x else (1, 0)
        return shape, stride
    if type(shape) is not tuple:
        return None
    n = len(shape) - 1
    front_s = shape[n]
    front_d = stride[n]
    if type(front_s) is not int or type(front_d) is not int:
        return None
    top = n - 1
    if front_s == 1:
        if x:
            front_s = 2
        else:  # plain coalesce: the last mode of shape > 1 is the seed
            while top >= 0:
                s = shape[top]
                d = stride[top]
                if type(s) is not int or type(d) is not int:
                    return None
                top -= 1
                if s != 1:
                    front_s, front_d = s, d
                    break
    if top == 0:  # one mode before the seed (a rank-2 layout), without the lists (front_s is not 1 here)
        s = shape[0]
        d = stride[0]
        if type(s) is not int or type(d) is not int:
            return None
        if s == 1:
            return front_s, front_d
        if s * d == front_d:
            return s * front_s, d
        return (s, front_s), (d, front_d)
    ns: list = []
    nd: list = []
    for i in range(top, -1, -1):
        s = shape[i]
        d = stride[i]
        if type(s) is not int or type(d) is not int:
            return None
        if s == 1:
            continue
        if s * d == front_d:
            front_s, front_d = s * front_s, d
        else:
            ns.append(front_s)
            nd.append(front_d)
            front_s, front_d = s, d
    if not ns:
        return (1, 0) if front_s == 1 else (front_s, front_d)
    ns.append(front_s)
    nd.append(front_d)
    ns.reverse()
    nd.reverse()
    return tuple(ns), tuple(nd)


# --------------------------------------------------------------------------------------------- composition


def _compose_int(ls: Any, ld: Any, rs: int, rd: Any, rec: Any = None) -> tuple:
    """composition_impl for an integral RHS mode ``rs:rd`` against the coalesced LHS ``ls:ld``.

    Returns the result as a raw ``(shape, stride)`` pair. ``rec``: the derivation recorder (``algebra.core.recorder``),
    which gets one step per decision; None on the ordinary path.
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
        if cs <= 0 or ad == 0:  # only reachable through layouts built from negative strides
            return _compose_int_cpp(ls, ld, rs, rd)
        if not (rest_d % cs == 0 or rest_d < cs):
            raise LayoutError(
                f"stride divisibility condition: composition stride {rest_d} is neither a multiple of nor less "
                f"than shape {cs} of mode {i} of the left layout")
        next_s = (cs + ad - 1) // ad
        next_d = (ad + cs - 1) // cs
        if rest_d < 0:
            next_d = -next_d
        if next_s == 1 or rest_s == 1:
            if rec is not None:
                rec.step(f"mode {i} of A ({cs}:{ld[i]}): nothing is left to take; the step becomes {next_d}"
                         if rest_s == 1 else f"mode {i} of A ({cs}:{ld[i]}): a step of {rest_d} jumps over all {cs} "
                         f"of its elements; {rest_d}/{cs} = {next_d} carries to the next mode")
            rest_d = next_d
            continue
        new_s = next_s if next_s < rest_s else rest_s
        if new_s <= 0:
            return _compose_int_cpp(ls, ld, rs, rd)
        if rest_s % new_s != 0:
            raise LayoutError(
                f"shape divisibility condition: shape {rest_s} is not divisible by {new_s} "
                f"(mode {i} of the left layout)")
        res_s.append(new_s)
        res_d.append(rest_d * ld[i])
        if rec is not None:
            left = rest_s // new_s
            rec.step(f"mode {i} of A ({cs}:{ld[i]}): stepping by {rest_d} leaves {next_s} elements {rest_d}*{ld[i]} = "
                     f"{rest_d * ld[i]} apart; take {new_s} of them" + (f", {left} still to take" if left > 1 else ""),
                     _lstr(res_s[0], res_d[0]) if len(res_s) == 1 else _lstr(tuple(res_s), tuple(res_d)))
        rest_s //= new_s
        rest_d = next_d
    if not res_s:
        if rec is not None:
            rec.step(f"the last mode of A (stride {ld[-1]}) gives all {rest_s}, {rest_d}*{ld[-1]} = {rest_d * ld[-1]} "
                     f"apart (past size(A) if it must): {rest_s}:{rest_d * ld[-1]}", _lstr(rest_s, rest_d * ld[-1]))
        return rest_s, rest_d * ld[-1]
    if rest_s == 1:
        if rec is not None:
            rec.step(f"all {rs} are taken",
                     _lstr(res_s[0], res_d[0]) if len(res_s) == 1 else _lstr(tuple(res_s), tuple(res_d)))
        if len(res_s) == 1:
            return res_s[0], res_d[0]
        return tuple(res_s), tuple(res_d)
    res_s.append(rest_s)
    res_d.append(rest_d * ld[-1])
    if rec is not None:
        rec.step(f"the last mode of A (stride {ld[-1]}) gives the remaining {rest_s}, {rest_d}*{ld[-1]} = "
                 f"{rest_d * ld[-1]} apart: {_lstr(tuple(res_s), tuple(res_d))}", _lstr(tuple(res_s), tuple(res_d)))
    return tuple(res_s), tuple(res_d)


def _cmod(a: int, b: int) -> int:
    """C++ ``a % b`` (the sign follows a)."""
    return a - b * tdiv(a, b)


def _compose_int_cpp(ls: tuple, ld: tuple, rs: int, rd: int) -> tuple:
    """``_compose_int`` in C++ integer arithmetic, for the non-positive shapes that complements of negative
    strides produce: CuTe computes on with them, so the result matches CuTe's print; a zero divisor is refused."""
    res_s: list = []
    res_d: list = []
    rest_s, rest_d = rs, rd
    for i in range(len(ls) - 1):
        cs = ls[i]
        ad = abs(rest_d)
        if cs == 0 or ad == 0:
            raise LayoutError(f"composition: zero shape or stride at mode {i} of the left layout (CuTe divides by it)")
        if not (_cmod(rest_d, cs) == 0 or rest_d < cs):
            raise LayoutError(
                f"stride divisibility condition: composition stride {rest_d} is neither a multiple of nor less "
                f"than shape {cs} of mode {i} of the left layout")
        next_s = tdiv(cs + ad - 1, ad)
        next_d = tdiv(ad + cs - 1, cs) * signum(rest_d)
        if next_s == 1 or rest_s == 1:
            rest_d = next_d
            continue
        new_s = min(next_s, rest_s)
        if new_s == 0 or _cmod(rest_s, new_s) != 0:
            raise LayoutError(
                f"shape divisibility condition: shape {rest_s} is not divisible by {new_s} "
                f"(mode {i} of the left layout)")
        res_s.append(new_s)
        res_d.append(rest_d * ld[i])
        rest_s = tdiv(rest_s, new_s)
        rest_d = next_d
    if not res_s:
        return rest_s, rest_d * ld[-1]
    if rest_s == 1:
        return (res_s[0], res_d[0]) if len(res_s) == 1 else (tuple(res_s), tuple(res_d))
    return tuple(res_s) + (rest_s,), tuple(res_d) + (rest_d * ld[-1],)


def _compose_modes(ls: Any, ld: Any, bs: Any, bd: Any) -> tuple | None:
    """Every mode of B (int strides, any nesting) composed with the coalesced A ``ls:ld``, B's profile kept. (B's
    shape and stride are congruent; indexing them is cheaper than a zip, ~0.1 us less a loop, more with strict.)"""
    if type(bs) is not tuple:
        return _compose_int(ls, ld, bs, bd) if type(bd) is int else None
    out_s: list = []
    out_d: list = []
    for i in range(len(bs)):
        s = bs[i]
        d = bd[i]
        p = _compose_modes(ls, ld, s, d) if type(s) is tuple else (
            _compose_int(ls, ld, s, d) if type(d) is int else None)
        if p is None:
            return None
        out_s.append(p[0])
        out_d.append(p[1])
    return tuple(out_s), tuple(out_d)


def compose_flat(a_shape: Any, a_stride: Any, b_shape: Any, b_stride: Any) -> tuple | None:
    """``composition(A, B)`` as a raw pair for a flat A with int strides and a B with int strides (any nesting):
    ``coalesce_x(A)`` composed with every mode of B, each mode as ``_compose_int`` (which also refuses)."""
    c = coalesce_x_flat(a_shape, a_stride)
    if c is None:
        return None
    return _compose_modes(c[0], c[1], b_shape, b_stride)
