"""Coalesce and filter (CuTe's ``layout.hpp``, static case): the same function in fewer modes (a ComposedLayout keeps
its swizzle outside; the mode arithmetic is ``algebra.core.modes.bw_coalesce``).
"""

from __future__ import annotations

from typing import Any

from algebra.core import inttuple as it
from algebra.core.arith import is_zero
from algebra.core.errors import LayoutError, no_modes
from algebra.core.layout import Layout, _as_layout, _not_text, layout_arg, make_layout
from algebra.core.memo import memo
from algebra.core.modes import bw_coalesce, flat_pair
from algebra.core.recorder import Recorder, active, nested
from algebra.core.swizzle import ComposedLayout

R = Layout._raw


@memo
def coalesce(layout: Layout, profile: Any = None) -> Layout:
    """Combine modes that can be combined.

    Post: ``size(R) == size(L)``, ``depth(R) <= 1``, ``R(i) == L(i)`` for ``i < size(L)``.
    With ``profile`` (a tuple), coalesce each mode of ``L`` separately and keep modes beyond the profile.
    """
    rec = active()
    if type(layout) is not Layout:
        if type(layout) is ComposedLayout:
            if rec is not None:
                rec.step(f"A = {layout}: coalesce its inner layout {layout.layout_b}; the swizzle stays outside")
            return layout.with_layout_b(nested(rec, coalesce.__wrapped__, layout.layout_b, profile))
        layout = _as_layout(layout)
    if type(profile) is tuple or isinstance(profile, str) and _not_text(profile):  # (a text is refused)
        return _by_profile(rec, layout, profile, coalesce.__wrapped__, "coalesce")
    fs, fd = flat_pair(layout.shape, layout.stride)
    if not fs:
        raise no_modes("coalesce", layout)
    if rec is None:
        return R(*bw_coalesce(fs[:-1], fd[:-1], fs[-1], fd[-1]))
    flat = R(fs, fd) if len(fs) > 1 else R(fs[0], fd[0])
    rec.step(f"flatten {layout} to {flat}: only the 1-D coordinate matters", flat)
    res = R(*bw_coalesce(fs[:-1], fd[:-1], fs[-1], fd[-1], rec))
    rec.step(f"the coalesced layout is {res}: same size, same value at every 1-D coordinate", res, kind="result")
    return res


def _by_profile(rec: Recorder | None, layout: Layout, profile: tuple, f: Any, name: str) -> Layout:
    """``f`` applied to each of the first ``len(profile)`` modes on its own (with its part of the profile); the
    modes past the profile are kept; refused when the profile has more modes than the layout."""
    n = it.rank(layout.shape)
    if len(profile) > n:
        raise LayoutError(f"{name}: profile {it.to_str(profile)} has more modes than {layout}")
    if rec is not None:
        rec.step(f"{name} by mode: each of the first {len(profile)} modes of {layout} on its own"
                 + (", the others kept" if len(profile) < n else ""))
    modes = []
    for i in range(len(profile)):
        if rec is not None:
            rec.step(f"mode {i}: {name}({layout[i]}, {it.to_str(profile[i])})", layout[i])
        modes.append(f(layout[i], profile[i]) if rec is None else nested(rec, f, layout[i], profile[i]))
    res = make_layout(*modes, *map(layout.__getitem__, range(len(profile), n)))
    if rec is not None:
        rec.step(f"put the modes back side by side: {res}", res, kind="result")
    return res


def filter_zeros(layout: Layout) -> Layout:
    """Replace the shape of every stride-0 mode (an int 0 or the F2 zero ``F0``) by 1. (CuTe has no overload for a
    swizzled layout: its generic
    ``filter_zeros(t)`` returns the argument unchanged.)"""
    if type(layout) is ComposedLayout:
        return layout
    layout = layout_arg(layout, "filter_zeros")
    fs, fd = flat_pair(layout.shape, layout.stride)
    shape = [1 if is_zero(d) else s for s, d in zip(fs, fd, strict=True)]
    return R(it.unflatten(shape, layout.shape), layout.stride)


def filter(layout: Layout, profile: Any = None) -> Layout:  # noqa: A001 (CuTe's name)
    """Remove stride-0 and size-1 modes: ``coalesce(filter_zeros(L))``; ``1:0`` when nothing is left.

    A ComposedLayout is filtered inside (CuTe has that overload only with a profile)."""
    rec = active()
    if type(layout) is ComposedLayout:
        if profile is None:
            raise LayoutError("filter of a composed (swizzled) layout needs a profile, as in CuTe")
        return layout.with_layout_b(nested(rec, filter, layout.layout_b, profile))
    layout = _as_layout(layout)
    if type(profile) is tuple:
        return _by_profile(rec, layout, profile, filter, "filter")
    fz = filter_zeros(layout)
    if rec is None:
        return coalesce(fz)
    rec.step(f"give every stride-0 mode size 1 (a broadcast adds nothing): {fz}", fz)
    res = nested(rec, coalesce, fz)
    rec.step(f"coalesce drops the size-1 modes and merges the rest: {res}", res, kind="result")
    return res
