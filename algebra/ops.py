"""Coalesce, composition, complement and inverses, with CuTe's semantics (``cute/layout.hpp``, static case).

Every function returns a new Layout; refusals raise ``LayoutError`` naming the failed condition.
Divides and products live in ``algebra.products``.
"""

from __future__ import annotations

from typing import Any

from algebra import inttuple as it
from algebra.checks import check_composition, shows_cute, structural_failure
from algebra.errors import LayoutError
from algebra.fastpath import (  # noqa: F401
    _cmod,
    _compose_int,
    _compose_int_cpp,
    _compose_modes,
    coalesce_x_flat,
    complement_flat,
    compose_flat,
)
from algebra.inttuple import is_int, is_tuple, tdiv
from algebra.layout import Layout, make_layout
from algebra.memo import memo
from algebra.recorder import Recorder, active, nested, show
from algebra.swizzle import ComposedLayout, Swizzle, compose_swizzled

R = Layout._raw


def _as_layout(x: Any) -> Layout:
    if isinstance(x, Layout):
        return x
    if is_int(x):
        return Layout(x)
    raise LayoutError(f"expected a layout, got {x!r}")


# --------------------------------------------------------------------------------------------- coalesce


def _bw_coalesce(fs: tuple, fd: tuple, new_s: Any, new_d: Any, rec: Recorder | None = None) -> Layout:
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
            rec.step(why, R(it.unwrap(tuple(ns)), it.unwrap(tuple(nd))) if len(ns) > 1 else R(ns[0], nd[0]))
    if len(ns) == 1:
        if ns[0] == 1:
            return R(1, 0)
        return R(ns[0], nd[0])
    return R(tuple(ns), tuple(nd))


@memo
def coalesce(layout: Layout, profile: Any = None) -> Layout:
    """Combine modes that can be combined.

    Post: ``size(R) == size(L)``, ``depth(R) <= 1``, ``R(i) == L(i)`` for ``i < size(L)``.
    With ``profile`` (a tuple), coalesce each mode of ``L`` separately and keep modes beyond the profile.
    """
    rec = active()
    if type(layout) is ComposedLayout:
        if rec is not None:
            rec.step(f"A = {layout}: coalesce its inner layout {layout.layout_b}; the swizzle stays outside")
        return layout.with_layout_b(nested(rec, coalesce, layout.layout_b, profile))
    layout = _as_layout(layout)
    if profile is not None and is_tuple(profile):
        if len(profile) > it.rank(layout.shape):
            raise LayoutError(f"coalesce: profile {it.to_str(profile)} has more modes than {layout}")
        return _by_profile(rec, layout, profile, coalesce, "coalesce")
    fs, fd = it.flatten(layout.shape), it.flatten(layout.stride)
    if rec is None:
        return _bw_coalesce(fs[:-1], fd[:-1], fs[-1], fd[-1])
    flat = R(fs, fd) if len(fs) > 1 else R(fs[0], fd[0])
    rec.step(f"flatten {layout} to {flat}: only the 1-D coordinate matters", flat)
    res = _bw_coalesce(fs[:-1], fd[:-1], fs[-1], fd[-1], rec)
    rec.step(f"the coalesced layout is {res}: same size, same value at every 1-D coordinate", res, kind="result")
    return res


def _by_profile(rec: Recorder | None, layout: Layout, profile: tuple, f: Any, name: str) -> Layout:
    """``f`` applied to each of the first ``len(profile)`` modes on its own (with its part of the profile); the
    modes past the profile are kept."""
    n = it.rank(layout.shape)
    if rec is not None:
        rec.step(f"{name} by mode: each of the first {len(profile)} modes of {layout} on its own"
                 + (", the others kept" if len(profile) < n else ""))
    modes = []
    for i in range(len(profile)):
        if rec is not None:
            rec.step(f"mode {i}: {name}({layout[i]}, {it.to_str(profile[i])})", layout[i])
        modes.append(nested(rec, f, layout[i], profile[i]))
    res = make_layout(*(modes + [layout[i] for i in range(len(profile), n)]))
    if rec is not None:
        rec.step(f"put the modes back side by side: {res}", res, kind="result")
    return res


def coalesce_x(layout: Layout) -> Layout:
    """Coalesce that also preserves the function outside the domain (a trailing shape-1 mode keeps its stride)."""
    fs, fd = it.flatten(layout.shape), it.flatten(layout.stride)
    if fs[-1] == 1:
        return _bw_coalesce(fs[:-1], fd[:-1], 2, fd[-1])
    return _bw_coalesce(fs[:-1], fd[:-1], fs[-1], fd[-1])


def filter_zeros(layout: Layout) -> Layout:
    """Replace the shape of every stride-0 mode by 1. (CuTe has no overload for a swizzled layout: its generic
    ``filter_zeros(t)`` returns the argument unchanged.)"""
    if type(layout) is ComposedLayout:
        return layout

    def go(s, d):
        if is_tuple(s):
            return tuple(go(a, b) for a, b in zip(s, d, strict=True))
        return 1 if (is_int(d) and d == 0) else s

    return R(go(layout.shape, layout.stride), layout.stride)


def filter(layout: Layout, profile: Any = None) -> Layout:  # noqa: A001 (CuTe's name)
    """Remove stride-0 and size-1 modes: ``coalesce(filter_zeros(L))``; ``1:0`` when nothing is left.

    A ComposedLayout is filtered inside (CuTe has that overload only with a profile)."""
    rec = active()
    if type(layout) is ComposedLayout:
        if profile is None:
            raise LayoutError("filter of a composed (swizzled) layout needs a profile, as in CuTe")
        return layout.with_layout_b(nested(rec, filter, layout.layout_b, profile))
    layout = _as_layout(layout)
    if profile is not None and is_tuple(profile):
        if len(profile) > it.rank(layout.shape):
            raise LayoutError(f"filter: profile {it.to_str(profile)} has more modes than {layout}")
        return _by_profile(rec, layout, profile, filter, "filter")
    fz = filter_zeros(layout)
    if rec is None:
        return coalesce(fz)
    rec.step(f"give every stride-0 mode size 1 (a broadcast adds nothing): {fz}", fz)
    res = nested(rec, coalesce, fz)
    rec.step(f"coalesce drops the size-1 modes and merges the rest: {res}", res, kind="result")
    return res


# --------------------------------------------------------------------------------------------- composition


def _compose_impl(ls: Any, ld: Any, rs: Any, rd: Any, rec: Recorder | None = None, path: str = "") -> tuple:
    if type(rs) is tuple:
        if rec is None:
            pairs = [_compose_impl(ls, ld, s, d) for s, d in zip(rs, rd, strict=True)]
            return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        if not path:
            rec.step(f"B = {R(rs, rd)} has {len(rs)} modes: each is composed with A on its own and the results sit "
                     "side by side, so R has the shape of B")
        pairs = []
        for i, (s, d) in enumerate(zip(rs, rd, strict=True)):
            rec.step(f"mode {path}{i} of B: {R(s, d)}")
            pairs.append(nested(rec, _compose_impl, ls, ld, s, d, rec, f"{path}{i}."))
        out = tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        rec.step(f"side by side: {R(*out)}", R(*out))
        return out
    if type(rd) is not int:
        return _compose_basis(ls, ld, rs, rd, rec)
    return _compose_int(ls, ld, rs, rd, rec)


def _compose_basis(ls: Any, ld: Any, rs: int, rd: Any, rec: Recorder | None = None) -> tuple:
    """RHS stride is a scaled basis ``v@k``: compose with mode k of the LHS."""
    path = rd.mode_path
    for k in path:
        if not is_tuple(ls) or k >= len(ls):
            raise LayoutError(f"basis stride {rd} selects a mode the left layout does not have")
        ls, ld = ls[k], ld[k]
    if rec is not None:
        rec.step(f"stride {rd} reads mode {'.'.join(map(str, path))} of A, {R(ls, ld)}, with step {rd.value}")
    if is_tuple(ls):
        c = coalesce_x(R(ls, ld))
        ls, ld = c.shape, c.stride
    return _compose_int(ls, ld, rs, rd.value, rec)


@memo
@shows_cute
def composition(a: Any, b: Any) -> Any:
    """``R = A o B``: ``R(c) == A(B(c))`` for every coordinate ``c`` of B; ``compatible(B, R)``.

    ``b`` may be a Layout, an int ``n`` (the layout ``n:1``), None (keep A), or a tiler tuple applied mode by
    mode (modes of A beyond the tiler are dropped, as in CuTe). ``a`` may be a Swizzle or ComposedLayout.
    """
    rec = active()
    if type(a) is Layout and type(b) is Layout and rec is None:
        bs, bd = b.shape, b.stride
        c = coalesce_x_flat(a.shape, a.stride)  # compose_flat, with the coalesced A kept for the check
        if c is not None and (r := _compose_modes(c[0], c[1], bs, bd)) is not None:
            res = R(*r)
            if type(c[0]) is tuple and structural_failure(c[0], bs, bd) is not None:
                check_composition(a, c[0], b, res)
            return res
        c = coalesce_x(a) if not _has_basis(bd) else a
        return _checked(a, b, R(*_compose_impl(c.shape, c.stride, bs, bd)))
    if isinstance(a, Swizzle | ComposedLayout) or isinstance(b, Swizzle | ComposedLayout):
        if rec is not None:
            rec.step(f"A = {a} is swizzled: the swizzle acts on the offsets the layouts produce, so it stays "
                     f"outside and the layouts compose inside" if not isinstance(b, Swizzle | ComposedLayout) else
                     f"compose {a} with the swizzled {b}")
        return compose_swizzled(a, b)
    a = _as_layout(a)
    if b is None:
        if rec is not None:
            rec.step("B is _ (keep this mode): R = A", a, kind="result")
        return a
    if is_tuple(b):
        if len(b) > it.rank(a.shape):
            raise LayoutError(f"composition: tiler has {len(b)} modes but {a} has rank {it.rank(a.shape)}")
        if rec is None:
            return make_layout(*(composition(a[i], b[i]) for i in range(len(b))))
        rec.step(f"B is a tiler of {len(b)} modes: mode i of A is composed with B_i"
                 + ("; the modes of A past the tiler are dropped" if len(b) < it.rank(a.shape) else ""))
        parts = []
        for i in range(len(b)):
            rec.step(f"mode {i}: A_{i} = {a[i]}, B_{i} = {show(b[i])}")
            parts.append(nested(rec, composition, a[i], b[i]))
        res = make_layout(*parts)
        rec.step(f"side by side: R = {res}", res, kind="result")
        return res
    if is_int(b):
        if b <= 0:
            raise LayoutError(f"composition: tile size must be positive, got {b}")
        if rec is not None:
            rec.step(f"B = {b} stands for the layout {b}:1: the first {b} elements of A")
        b = R(b, 1)
    if not isinstance(b, Layout):
        raise LayoutError(f"composition: cannot compose with {b!r}")
    basis = _has_basis(b.stride)
    c = coalesce_x(a) if not basis else a
    if rec is not None:
        rec.step("B has basis strides: each of its modes reads the mode of A that its basis selects" if basis else
                 _coalesce_x_text(a, c), None if basis else c)
    res = _checked(a, b, R(*_compose_impl(c.shape, c.stride, b.shape, b.stride, rec)))
    if rec is not None:
        rec.step(f"R = A o B = {res}: R(c) = A(B(c)) for every coordinate c of B with B(c) in A's domain", res,
                 kind="result")
    return res


def _coalesce_x_text(a: Layout, c: Layout) -> str:
    if c == a:
        return f"coalesce A: {a} is already coalesced, one function of the 1-D coordinate (also past size(A))"
    if it.product(c.shape) == it.product(a.shape):
        return f"coalesce A to {c}: the same function of the 1-D coordinate, also past size(A)"
    return (f"coalesce A, keeping the stride of its trailing size-1 mode so that the function continues past "
            f"size(A) = {it.product(a.shape)}: {c} (A itself is its first {it.product(a.shape)} elements)")


def _checked(a: Layout, b: Layout, r: Layout) -> Layout:
    """``r`` when it is the function A o B wherever ``B(i) < size(A)``; otherwise ``check_composition`` refuses."""
    c = coalesce_x_flat(a.shape, a.stride)
    shape = c[0] if c is not None else coalesce_x(a).shape
    check_composition(a, shape, b, r)
    return r


def _has_basis(d: Any) -> bool:
    """True when the strides are basis elements (E strides); mixing them with non-zero ints is refused."""
    if type(d) is int:
        return False
    flat = it.flatten(d)
    basis = [x for x in flat if type(x) is not int]
    if basis and any(type(x) is int and x != 0 for x in flat):
        raise LayoutError("composition: the right layout mixes basis (E) strides with integer strides")
    return bool(basis)


# --------------------------------------------------------------------------------------------- complement


def _filtered_modes(layout: Layout) -> tuple[list, list]:
    """The modes of ``filter(layout)`` as flat lists (empty when filter gives ``1:0``)."""
    sh, st = layout.shape, layout.stride
    fs = sh if type(sh) is tuple else (sh,)
    fd = st if type(st) is tuple else (st,)
    if any(type(x) is tuple for x in fs):
        fs, fd = it.flatten(sh), it.flatten(st)
    ns: list = []
    nd: list = []
    for i in range(len(fs) - 1, -1, -1):
        s, d = fs[i], fd[i]
        if s == 1 or (type(d) is int and d == 0):
            continue
        if ns and s * d == nd[-1]:
            ns[-1] *= s
            nd[-1] = d
        else:
            ns.append(s)
            nd.append(d)
    ns.reverse()
    nd.reverse()
    return ns, nd


@memo
def complement(layout: Layout, cotarget: Any = None) -> Layout:
    """The layout of the offsets ``layout`` does not reach, up to ``cotarget`` (default: ``cosize(layout)``).

    Post: ``size(R) >= cotarget / size(filter(L))``; R is ordered (``R(i-1) < R(i)``); R and L only share 0.
    Refuses non-injective layouts ("Non-injective Layout detected in complement").
    """
    rec = active()
    if type(layout) is ComposedLayout:  # CuTe: the complement of the inner layout, up to its cosize by default
        if rec is not None:
            rec.step(f"A = {layout}: its complement is that of its inner layout {layout.layout_b}")
        return nested(rec, complement, layout.layout_b, cotarget)
    if type(layout) is not Layout:
        layout = _as_layout(layout)
    elif rec is None and (r := complement_flat(layout.shape, layout.stride, cotarget)) is not None:
        return r
    shapes, strides = _filtered_modes(layout)
    if rec is not None:
        fl = R(it.unwrap(tuple(shapes)), it.unwrap(tuple(strides))) if shapes else R(1, 0)
        rec.step(f"filter A (drop stride-0 and size-1 modes, coalesce): {fl}", fl)
    if cotarget is None:
        cotarget = sum((s - 1) * abs(d) for s, d in zip(shapes, strides, strict=True)) + 1
        if rec is not None:
            rec.step(f"no cotarget given: use cosize(A) = {cotarget}")
    elif isinstance(cotarget, Layout | ComposedLayout):
        cotarget = cotarget.shape  # CuTe: shape(cotarget)
    elif type(cotarget) is not int or cotarget <= 0:
        cotarget = it.check_shape(cotarget, "cotarget")
    if not shapes:
        res = Layout(_coalesce_shape(cotarget))
        if rec is not None:
            rec.step(f"A only reaches offset 0: the complement is all of [0, {show(cotarget)}), {res}", res,
                     kind="result")
        return res
    if any(type(d) is not int for d in strides):
        raise LayoutError("complement: basis (E) strides are not supported")
    positive = min(strides) > 0
    if rec is not None and len(shapes) > 1:
        order = sorted(range(len(strides)), key=lambda k: strides[k])
        rec.step("sort the modes by stride: " + ", ".join(f"{shapes[k]}:{strides[k]}" for k in order))
    res_s: list = []
    res_d: list = [1]
    last = 1
    while True:
        min_d = min(strides)
        k = strides.index(min_d)
        new_s = min_d // last if positive else tdiv(min_d, last)
        if new_s == 0:
            raise LayoutError(f"Non-injective Layout detected in complement: {layout} has overlapping modes")
        res_s.append(new_s)
        if rec is not None:
            fill = (f"it starts where that block ends: no gap (the mode 1:{last}, dropped when coalescing)"
                    if new_s == 1 else f"{new_s} copies of that block, {last} apart, fill [0, {min_d}) (a gap of "
                    f"{new_s - 1}): add {new_s}:{last}")
            rec.step(f"mode {shapes[k]}:{min_d} starts at {min_d}; the block covered so far has size {last}, so "
                     f"{fill}; with the mode the block reaches {min_d * shapes[k]}",
                     R(it.unwrap(tuple(res_s)), it.unwrap(tuple(res_d))))
        if len(shapes) == 1:
            break
        last = min_d * shapes.pop(k)
        res_d.append(last)
        del strides[k]
    new_d = strides[0] * shapes[0]
    if type(cotarget) is int and new_d > 0:
        rest_s = (cotarget + new_d - 1) // new_d
    else:
        rest_s = _coalesce_shape(it.ceil_div(cotarget, new_d))
    res = _bw_coalesce(tuple(res_s), tuple(res_d), rest_s, 0 if rest_s == 1 else new_d)
    if rec is not None:
        rec.step(f"A and the gaps cover [0, {new_d}); ceil({show(cotarget)} / {new_d}) = {rest_s} copies of that "
                 f"block, {new_d} apart, reach the cotarget: add {rest_s}:{new_d}")
        rec.step(f"coalesce {it.to_str(tuple(res_s) + (rest_s,))}:{it.to_str(tuple(res_d) + (new_d,))}: the "
                 f"complement is {res}", res, kind="result")
    return res


def _coalesce_shape(s: Any) -> int:
    """CuTe's ``coalesce(Shape)`` for static shapes: the product."""
    return it.product(s)


# the inverses live in algebra.inverses; re-exported here for callers that use ops.<name>
from algebra.inverses import (  # noqa: E402
    _sorted_modes,
    left_inverse,
    max_common_layout,
    max_common_vector,
    nullspace,
    right_inverse,
)

__all__ = ["coalesce", "coalesce_x", "complement", "composition", "filter", "filter_zeros", "left_inverse",
           "max_common_layout", "max_common_vector", "nullspace", "right_inverse", "_sorted_modes"]
