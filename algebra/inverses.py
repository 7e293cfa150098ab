"""Right and left inverses, the max common layout/vector and the nullspace (CuTe's ``layout.hpp``, static case)."""

from __future__ import annotations

from typing import Any

from algebra import inttuple as it
from algebra.errors import LayoutError
from algebra.inttuple import is_int, tdiv
from algebra.layout import Layout
from algebra.memo import memo
from algebra.ops import _as_layout, coalesce, composition

R = Layout._raw


def _sorted_modes(strides: tuple) -> list[int]:
    """Mode indices ordered by stride with CuTe's exchange sort (``detail::SortByKey``), whose order of equal
    strides is part of the result."""
    a = list(range(len(strides)))
    n = len(a)
    for i in range(n):
        for j in range(i + 1, n):
            if strides[a[j]] < strides[a[i]]:
                a[i], a[j] = a[j], a[i]
    return a


def _inverse_modes(layout: Any, name: str) -> tuple[tuple, tuple, list]:
    """The flat modes of ``coalesce(layout)`` and the prefix products of their shapes (1, s0, s0*s1, ...)."""
    c = coalesce(_as_layout(layout))
    ls, ld = it.wrap(c.shape), it.wrap(c.stride)
    if any(not is_int(d) for d in ld):
        raise LayoutError(f"{name}: basis (E) strides are not supported")
    pre = [1]
    for s in ls:
        pre.append(pre[-1] * s)
    return ls, ld, pre


@memo
def right_inverse(layout: Layout) -> Layout:
    """``R`` with ``L(R(i)) == i`` for ``i < size(R)``; R covers the largest contiguous prefix of offsets."""
    if layout is None:
        return None
    ls, ld, pre = _inverse_modes(layout, "right_inverse")
    res_s, res_d, cur = [1], [0], 1
    for i in _sorted_modes(ld):
        if ld[i] == cur:
            res_s.append(ls[i])
            res_d.append(pre[i])
            cur = ls[i] * ld[i]
    return coalesce(R(tuple(res_s), tuple(res_d)))


@memo
def left_inverse(layout: Layout) -> Layout:
    """``R`` with ``R(L(i)) == i`` for ``i < size(L)`` when L is injective (a quasi-inverse otherwise:
    ``L(R(L(i))) == L(i)``). Refuses when a stride is not a multiple of the size covered before it."""
    if layout is None:
        return None
    ls, ld, pre = _inverse_modes(layout, "left_inverse")
    order = _sorted_modes(ld)
    res_s: list = []
    res_d: list = [0]
    for i in order:
        d = ld[i]
        if d == 0:
            continue
        covered = it.product(tuple(res_s))
        if d % covered != 0:
            raise LayoutError(
                f"left inverse divisibility condition: stride {d} of mode {i} is not a multiple of {covered}")
        res_s.append(tdiv(d, covered))
        res_d.append(pre[i])
    res_s.append(ls[order[-1]])
    return coalesce(R(tuple(res_s), tuple(res_d)))


def max_common_layout(a: Layout, b: Layout) -> Layout:
    """The layout ``R`` of the longest run with ``a(R(i)) == i`` and ``b(R(i)) == i``."""
    inv_b = right_inverse(b)
    common = coalesce(composition(a, inv_b))
    s0, d0 = it.wrap(common.shape)[0], it.wrap(common.stride)[0]
    if d0 == 1:
        return composition(inv_b, R(s0, d0))
    return R(1, 0)


def max_common_vector(a: Layout, b: Layout) -> int:
    """The largest ``N`` such that the first N elements are contiguous in both ``a`` and ``b``."""
    common = coalesce(composition(a, right_inverse(b)))
    s0, d0 = it.wrap(common.shape)[0], it.wrap(common.stride)[0]
    return s0 if d0 == 1 else 1


def nullspace(layout: Layout) -> Layout:
    """The coordinates that ``layout`` maps to 0: ``L(R(i)) == 0``."""
    fs, fd = it.flatten(layout.shape), it.flatten(layout.stride)
    rd = it.flatten(it.compact_col_major(tuple(fs)))
    idx = [i for i, d in enumerate(fd) if is_int(d) and d == 0]
    if not idx:
        return R(1, 0)
    return R(it.unwrap(tuple(fs[i] for i in idx)), it.unwrap(tuple(rd[i] for i in idx)))
