"""Coalesce, composition, complement and inverses, with CuTe's semantics (``cute/layout.hpp``, static case).

Every function returns a new Layout; refusals raise ``LayoutError`` naming the failed condition.
Divides and products live in ``algebra.products``.
"""

from __future__ import annotations

from typing import Any

from algebra import inttuple as it
from algebra.checks import check_composition
from algebra.errors import LayoutError
from algebra.fastpath import (  # noqa: F401
    _cmod,
    _compose_int,
    _compose_int_cpp,
    coalesce_x_flat,
    complement_flat,
    compose_flat,
)
from algebra.inttuple import is_int, is_tuple, tdiv
from algebra.layout import Layout, make_layout
from algebra.memo import memo
from algebra.swizzle import ComposedLayout, Swizzle, compose_swizzled

R = Layout._raw


def _as_layout(x: Any) -> Layout:
    if isinstance(x, Layout):
        return x
    if is_int(x):
        return Layout(x)
    raise LayoutError(f"expected a layout, got {x!r}")


# --------------------------------------------------------------------------------------------- coalesce


def _bw_coalesce(fs: tuple, fd: tuple, new_s: Any, new_d: Any) -> Layout:
    """CuTe's ``bw_coalesce`` over flat shape ``fs`` / stride ``fd`` (modes before the seed, back to front)."""
    ns = [new_s]
    nd = [new_d]
    front_s, front_d = new_s, new_d
    for i in range(len(fs) - 1, -1, -1):
        s = fs[i]
        if s == 1:
            continue
        d = fd[i]
        if front_s == 1 and len(ns) == 1:
            front_s, front_d = s, d
        elif s * d == front_d:
            front_s, front_d = s * front_s, d
        else:
            ns[0], nd[0] = front_s, front_d
            ns.insert(0, s)
            nd.insert(0, d)
            front_s, front_d = s, d
            continue
        ns[0], nd[0] = front_s, front_d
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
    if type(layout) is ComposedLayout:
        return layout.with_layout_b(coalesce(layout.layout_b, profile))
    layout = _as_layout(layout)
    if profile is not None and is_tuple(profile):
        if len(profile) > it.rank(layout.shape):
            raise LayoutError(f"coalesce: profile {it.to_str(profile)} has more modes than {layout}")
        modes = [coalesce(layout[i], profile[i]) for i in range(len(profile))]
        modes += [layout[i] for i in range(len(profile), it.rank(layout.shape))]
        return make_layout(*modes)
    fs, fd = it.flatten(layout.shape), it.flatten(layout.stride)
    return _bw_coalesce(fs[:-1], fd[:-1], fs[-1], fd[-1])


def coalesce_x(layout: Layout) -> Layout:
    """Coalesce that also preserves the function outside the domain (a trailing shape-1 mode keeps its stride)."""
    fs, fd = it.flatten(layout.shape), it.flatten(layout.stride)
    if fs[-1] == 1:
        return _bw_coalesce(fs[:-1], fd[:-1], 2, fd[-1])
    return _bw_coalesce(fs[:-1], fd[:-1], fs[-1], fd[-1])


def filter_zeros(layout: Layout) -> Layout:
    """Replace the shape of every stride-0 mode by 1."""

    def go(s, d):
        if is_tuple(s):
            return tuple(go(a, b) for a, b in zip(s, d, strict=True))
        return 1 if (is_int(d) and d == 0) else s

    return R(go(layout.shape, layout.stride), layout.stride)


def filter(layout: Layout, profile: Any = None) -> Layout:  # noqa: A001 (CuTe's name)
    """Remove stride-0 and size-1 modes: ``coalesce(filter_zeros(L))``; ``1:0`` when nothing is left.

    A ComposedLayout is filtered inside (CuTe has that overload only with a profile)."""
    if type(layout) is ComposedLayout:
        if profile is None:
            raise LayoutError("filter of a composed (swizzled) layout needs a profile, as in CuTe")
        return layout.with_layout_b(filter(layout.layout_b, profile))
    layout = _as_layout(layout)
    if profile is not None and is_tuple(profile):
        modes = [filter(layout[i], profile[i]) for i in range(len(profile))]
        modes += [layout[i] for i in range(len(profile), it.rank(layout.shape))]
        return make_layout(*modes)
    return coalesce(filter_zeros(layout))


# --------------------------------------------------------------------------------------------- composition


def _compose_impl(ls: Any, ld: Any, rs: Any, rd: Any) -> tuple:
    if type(rs) is tuple:
        pairs = [_compose_impl(ls, ld, s, d) for s, d in zip(rs, rd, strict=True)]
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    if type(rd) is not int:
        return _compose_basis(ls, ld, rs, rd)
    return _compose_int(ls, ld, rs, rd)


def _compose_basis(ls: Any, ld: Any, rs: int, rd: Any) -> tuple:
    """RHS stride is a scaled basis ``v@k``: compose with mode k of the LHS."""
    path = rd.mode_path
    for k in path:
        if not is_tuple(ls) or k >= len(ls):
            raise LayoutError(f"basis stride {rd} selects a mode the left layout does not have")
        ls, ld = ls[k], ld[k]
    if is_tuple(ls):
        c = coalesce_x(R(ls, ld))
        ls, ld = c.shape, c.stride
    return _compose_int(ls, ld, rs, rd.value)


@memo
def composition(a: Any, b: Any) -> Any:
    """``R = A o B``: ``R(c) == A(B(c))`` for every coordinate ``c`` of B; ``compatible(B, R)``.

    ``b`` may be a Layout, an int ``n`` (the layout ``n:1``), None (keep A), or a tiler tuple applied mode by
    mode (modes of A beyond the tiler are dropped, as in CuTe). ``a`` may be a Swizzle or ComposedLayout.
    """
    if type(a) is Layout and type(b) is Layout:
        bs, bd = b.shape, b.stride
        if (r := compose_flat(a.shape, a.stride, bs, bd)) is not None:
            return _checked(a, b, R(*r))
        c = coalesce_x(a) if not _has_basis(bd) else a
        return _checked(a, b, R(*_compose_impl(c.shape, c.stride, bs, bd)))
    if isinstance(a, Swizzle | ComposedLayout) or isinstance(b, Swizzle | ComposedLayout):
        return compose_swizzled(a, b)
    a = _as_layout(a)
    if b is None:
        return a
    if is_tuple(b):
        if len(b) > it.rank(a.shape):
            raise LayoutError(f"composition: tiler has {len(b)} modes but {a} has rank {it.rank(a.shape)}")
        return make_layout(*(composition(a[i], b[i]) for i in range(len(b))))
    if is_int(b):
        if b <= 0:
            raise LayoutError(f"composition: tile size must be positive, got {b}")
        c = coalesce_x(a)
        return _checked(a, R(b, 1), R(*_compose_impl(c.shape, c.stride, b, 1)))
    if not isinstance(b, Layout):
        raise LayoutError(f"composition: cannot compose with {b!r}")
    c = coalesce_x(a) if not _has_basis(b.stride) else a
    return _checked(a, b, R(*_compose_impl(c.shape, c.stride, b.shape, b.stride)))


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
    if type(layout) is ComposedLayout:  # CuTe: the complement of the inner layout, up to its cosize by default
        return complement(layout.layout_b, cotarget)
    if type(layout) is not Layout:
        layout = _as_layout(layout)
    elif (r := complement_flat(layout.shape, layout.stride, cotarget)) is not None:
        return r
    shapes, strides = _filtered_modes(layout)
    if cotarget is None:
        cotarget = sum((s - 1) * abs(d) for s, d in zip(shapes, strides, strict=True)) + 1
    elif isinstance(cotarget, Layout):
        cotarget = cotarget.shape
    elif type(cotarget) is not int or cotarget <= 0:
        cotarget = it.check_shape(cotarget, "cotarget")
    if not shapes:
        return Layout(_coalesce_shape(cotarget))
    if any(type(d) is not int for d in strides):
        raise LayoutError("complement: basis (E) strides are not supported")
    positive = min(strides) > 0
    res_s: list = []
    res_d: list = [1]
    last = 1
    for _ in range(len(shapes) - 1):
        min_d = min(strides)
        k = strides.index(min_d)
        new_s = min_d // last if positive else tdiv(min_d, last)
        if new_s == 0:
            raise LayoutError(f"Non-injective Layout detected in complement: {layout} has overlapping modes")
        res_s.append(new_s)
        last = min_d * shapes.pop(k)
        res_d.append(last)
        del strides[k]
    new_s = strides[0] // last if positive else tdiv(strides[0], last)
    if new_s == 0:
        raise LayoutError(f"Non-injective Layout detected in complement: {layout} has overlapping modes")
    res_s.append(new_s)
    new_d = strides[0] * shapes[0]
    if type(cotarget) is int and new_d > 0:
        rest_s = (cotarget + new_d - 1) // new_d
    else:
        rest_s = _coalesce_shape(it.ceil_div(cotarget, new_d))
    return _bw_coalesce(tuple(res_s), tuple(res_d), rest_s, 0 if rest_s == 1 else new_d)


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
