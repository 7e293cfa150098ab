"""Fast paths of the layout operations for the common case: flat layouts with integer strides.

Each function returns the same result as the generic code in ``algebra.ops`` or ``None`` when the input is outside
its case (nested or basis strides; for complement also negative or overlapping modes); the caller then runs the
generic code, which also produces its refusals. Composition's per-mode step ``_compose_int`` lives here (``ops``
re-exports it) and raises the composition refusals itself, with the same messages.
"""

from __future__ import annotations

from typing import Any

from algebra.checks import check_composition
from algebra.errors import LayoutError
from algebra.inttuple import signum, tdiv
from algebra.layout import Layout

R = Layout._raw


def complement_flat(shape: Any, stride: Any, cotarget: Any) -> Layout | None:
    """``complement(shape:stride, cotarget)`` for flat int modes with non-negative strides and an int, None or
    flat positive-int tuple cotarget. Filter keeps modes of shape > 1 and stride > 0 (merging ``s*d == next d``
    back to front); the modes are taken by increasing stride (a tie is an overlap, left to the generic refusal).
    No two result modes can merge (``q*last <= d < d*s``), so coalescing the result only drops shape-1 modes."""
    if type(shape) is int:
        shape, stride = (shape,), (stride,)
    elif type(shape) is not tuple or type(stride) is not tuple:
        return None
    ns: list = []
    nd: list = []
    for i in range(len(shape) - 1, -1, -1):
        s = shape[i]
        d = stride[i]
        if type(s) is not int or type(d) is not int:
            return None
        if s == 1 or d == 0:
            continue
        if d < 0:
            return None
        if nd and s * d == nd[-1]:
            ns[-1] *= s
            nd[-1] = d
        else:
            ns.append(s)
            nd.append(d)
    if not nd:
        return None
    if cotarget is None:
        cotarget = 1
        for s, d in zip(ns, nd, strict=True):
            cotarget += (s - 1) * d
    elif type(cotarget) is not int or cotarget <= 0:
        if type(cotarget) is not tuple or not cotarget or not all(type(x) is int and x > 0 for x in cotarget):
            return None
    rs: list = []
    rd: list = []
    last = 1
    while len(nd) > 1:
        d = min(nd)
        k = nd.index(d)
        q = d // last
        if q == 0:  # overlapping modes: the generic code refuses
            return None
        if q != 1:
            rs.append(q)
            rd.append(last)
        last = d * ns.pop(k)
        del nd[k]
    d = nd[0]
    q = d // last
    if q == 0:
        return None
    if q != 1:
        rs.append(q)
        rd.append(last)
    new_d = d * ns[0]
    if type(cotarget) is int:
        rest = (cotarget + new_d - 1) // new_d
    else:  # CuTe's ceil_div(tuple, int) folds the divisor across the modes; coalesce(Shape) is the product
        rest = 1
        div = new_d
        for x in cotarget:
            rest *= (x + div - 1) // div
            div = (div + x - 1) // x
    if rest != 1:
        rs.append(rest)
        rd.append(new_d)
    if not rs:
        return R(1, 0)
    if len(rs) == 1:
        return R(rs[0], rd[0])
    return R(tuple(rs), tuple(rd))


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
    if front_s == 1 and x:
        front_s = 2
    ns: list = []
    nd: list = []
    for i in range(n - 1, -1, -1):
        s = shape[i]
        d = stride[i]
        if type(s) is not int or type(d) is not int:
            return None
        if s == 1:
            continue
        if front_s == 1 and not ns:
            front_s, front_d = s, d
        elif s * d == front_d:
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

    Returns the result as a raw ``(shape, stride)`` pair. ``rec``: the derivation recorder (``algebra.recorder``),
    which gets one step per decision; None on the ordinary path.
    """
    if rd == 0 and type(rd) is int:
        if rec is not None:
            rec.step(f"{rs}:0 has stride 0: all {rs} coordinates read A(0), giving {rs}:0", R(rs, 0))
        return rs, rd
    if type(ls) is not tuple:
        if rec is not None:
            rec.step(f"A is the single mode {ls}:{ld}: {rs} of its elements, {rd} apart, are {rs}:{rd * ld}",
                     R(rs, rd * ld))
        return rs, rd * ld
    if rec is not None:
        rec.step(f"{rs}:{rd} means: skip {rd}, then take {rs}, walking the modes of A = {R(ls, ld)}")
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
                     R(res_s[0], res_d[0]) if len(res_s) == 1 else R(tuple(res_s), tuple(res_d)))
        rest_s //= new_s
        rest_d = next_d
    if not res_s:
        if rec is not None:
            rec.step(f"the last mode of A (stride {ld[-1]}) gives all {rest_s}, {rest_d}*{ld[-1]} = {rest_d * ld[-1]} "
                     f"apart (past size(A) if it must): {rest_s}:{rest_d * ld[-1]}", R(rest_s, rest_d * ld[-1]))
        return rest_s, rest_d * ld[-1]
    if rest_s == 1:
        if rec is not None:
            rec.step(f"all {rs} are taken", R(res_s[0], res_d[0]) if len(res_s) == 1 else R(tuple(res_s), tuple(res_d)))
        if len(res_s) == 1:
            return res_s[0], res_d[0]
        return tuple(res_s), tuple(res_d)
    res_s.append(rest_s)
    res_d.append(rest_d * ld[-1])
    if rec is not None:
        rec.step(f"the last mode of A (stride {ld[-1]}) gives the remaining {rest_s}, {rest_d}*{ld[-1]} = "
                 f"{rest_d * ld[-1]} apart: {R(tuple(res_s), tuple(res_d))}", R(tuple(res_s), tuple(res_d)))
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
    if type(bs) is tuple:
        out_s: list = []
        out_d: list = []
        for s, d in zip(bs, bd, strict=True):
            p = _compose_modes(ls, ld, s, d) if type(s) is tuple else (
                _compose_int(ls, ld, s, d) if type(d) is int else None)
            if p is None:
                return None
            out_s.append(p[0])
            out_d.append(p[1])
        return tuple(out_s), tuple(out_d)
    return _compose_int(ls, ld, bs, bd) if type(bd) is int else None


def compose_flat(a_shape: Any, a_stride: Any, b_shape: Any, b_stride: Any) -> tuple | None:
    """``composition(A, B)`` as a raw pair for a flat A with int strides and a B with int strides (any nesting):
    ``coalesce_x(A)`` composed with every mode of B, each mode as ``_compose_int`` (which also refuses)."""
    c = coalesce_x_flat(a_shape, a_stride)
    if c is None:
        return None
    return _compose_modes(c[0], c[1], b_shape, b_stride)


def logical_divide_flat(layout: Layout, tiler: Layout) -> Layout | None:
    """``composition(A, make_layout(B, complement(B, shape(coalesce(A)))))`` through the fast paths above."""
    c = coalesce_x_flat(layout.shape, layout.stride, False)
    if c is None:
        return None
    comp = complement_flat(tiler.shape, tiler.stride, c[0])
    if comp is None:
        return None
    b_shape, b_stride = (tiler.shape, comp.shape), (tiler.stride, comp.stride)
    r = compose_flat(layout.shape, layout.stride, b_shape, b_stride)
    if r is None:
        return None
    out = R(*r)
    check_composition(layout, coalesce_x_flat(layout.shape, layout.stride)[0], R(b_shape, b_stride), out)
    return out
