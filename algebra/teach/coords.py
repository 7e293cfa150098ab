"""Evaluating a layout and converting coordinates, step by step: the op table's ``evaluate``, ``idx2crd`` and
``crd2idx`` (the core's own are ``Layout.__call__`` and ``algebra.core.inttuple``'s; these narrate them).

These compute their answer by the walk they describe (split the coordinate column-major, then the inner product
with the stride), recording each step when a derivation is being recorded (``algebra.core.recorder``).
Post-conditions: ``evaluate(L, c) == L(c)``; ``idx2crd`` / ``crd2idx`` equal ``algebra.core.inttuple``'s.

>>> from algebra.core.layout import Layout
>>> evaluate(Layout((4, (2, 4)), (2, (1, 8))), 19), idx2crd(7, (3, (2, 3))), crd2idx((1, (0, 1)), (3, (2, 3)))
(22, (1, (0, 1)), 7)
"""

from __future__ import annotations

from typing import Any

from algebra.core import inttuple as it
from algebra.core.errors import LayoutError, no_modes
from algebra.core.inttuple import is_int, is_tuple
from algebra.core.layout import Layout, _has_none, layout_arg
from algebra.core.notation import show
from algebra.core.products import slice_composed
from algebra.core.recorder import Recorder, active, nested


def _split(rec: Recorder | None, crd: Any, shape: Any) -> Any:
    """The natural coordinate that ``crd2idx`` reads from ``crd`` (an int over a tuple shape splits column-major;
    the last mode is not wrapped, so a coordinate past the end extends along it)."""
    if shape == ():
        raise no_modes("crd2idx", "the shape ()")
    if is_tuple(crd):
        if not is_tuple(shape) or len(crd) != len(shape):
            raise LayoutError(f"coordinate {show(crd)} does not match shape {show(shape)} (mismatched ranks)")
        return tuple(_split(rec, c, s) for c, s in zip(crd, shape, strict=True))
    if not is_int(crd):
        raise LayoutError(f"coordinate {crd!r} is not an integer")
    if not is_tuple(shape):
        return crd
    parts, notes, rem = [], [], crd
    for i, s in enumerate(shape):
        if i == len(shape) - 1:
            parts.append(rem)
            notes.append(f"{rem} is left for the last mode")
        else:
            sz = it.product(s)  # C++'s % and / (truncated), as CuTe's divmod: -3 over (2,4) is (-1,-1)
            parts.append(rem - sz * it.tdiv(rem, sz))
            notes.append(f"{rem} % {sz} = {parts[-1]}" + (" (C++'s remainder, toward zero)" if rem < 0 else ""))
            rem = it.tdiv(rem, sz)
    if rec is not None:
        rec.step(f"{crd} splits column-major over {show(shape)}: " + ", ".join(notes) + f" -> {show(tuple(parts))}")
    return tuple(_split(rec, c, s) for c, s in zip(parts, shape, strict=True))


def _inner(rec: Recorder | None, nat: Any, stride: Any) -> Any:
    cs, ds = it.flatten(nat), it.flatten(stride)
    total = sum((c * d for c, d in zip(cs, ds, strict=True)), 0)
    if rec is not None:
        terms = [f"{c}*{d}" for c, d in zip(cs, ds, strict=True)]
        rec.step(f"inner product with the stride {show(stride)}: {' + '.join(terms)} = {total}")
    return total


def evaluate(layout: Any, crd: Any) -> Any:
    """``layout(crd)`` for a 1-D, flat or natural coordinate (a swizzled layout: inner layout, offset, swizzle); a
    coordinate with ``_`` (None) slices, as CuTe's ``layout(crd)`` does: the layout of the modes it keeps."""
    rec = active()
    if _has_none(crd):
        res = slice_composed(crd, layout_arg(layout, "evaluate"))[0]
        if rec is not None:
            rec.step(f"{it.to_str(crd).replace('None', '_')} has _ entries: slice {layout} there, keeping the modes "
                     f"at each _ and dropping the others (CuTe's slice; the fixed entries' offset is not part of it): "
                     f"{res}", res, kind="result")
        return res
    if hasattr(layout, "layout_b"):
        sw = layout.layout_a  # a point off a chain's domain refuses, with CuTe's value; c < 0: C++'s arithmetic
        _ = layout(crd) if min(it.flatten(crd)) >= 0 or type(layout.layout_b) is not Layout else None
        if rec is not None:
            rec.step(f"{layout}: evaluate the inner layout {layout.layout_b}, add the offset, then apply the swizzle")
        x = nested(rec, evaluate, layout.layout_b, crd) + layout.offset
        res = sw(x)
        if rec is not None:
            if layout.offset:
                rec.step(f"add the offset {layout.offset}: {x}")
            how = f"{x} ^ (({x} & {sw.yyy_mask:#b}) >> {sw.shift})" if hasattr(sw, "yyy_mask") else f"{x}"
            rec.step(f"{sw}({x}) = {how} = {res}", None, kind="result", value=str(res))
        return res
    if not isinstance(layout, Layout):
        raise LayoutError(f"evaluate needs a layout, got {layout!r}")
    if rec is not None:
        rec.step(f"evaluate {layout} at {show(crd)}")
    nat = _split(rec, crd, layout.shape)
    if rec is not None and nat != crd:
        rec.step(f"the natural coordinate is {show(nat)}")
    total = _inner(rec, nat, layout.stride)
    if rec is not None:
        rec.step(f"{layout} at {show(crd)} is {show(total)}", None, kind="result", value=show(total))
    return total


def idx2crd(idx: Any, shape: Any) -> Any:
    """The natural coordinate of the 1-D index ``idx`` in ``shape`` (column-major); a tuple ``idx`` is returned. An
    int over a tuple shape is split by ``_split``, the walk its derivation narrates (C++'s ``%`` and ``/``, as
    ``algebra.core.inttuple.idx2crd``)."""
    rec = active()
    if is_tuple(idx) or not is_tuple(shape) or not is_int(idx):  # (``it.idx2crd`` refuses a ``_`` by name)
        res = it.idx2crd(idx, shape)
        if rec is not None:
            rec.step(f"{show(idx)} is already a coordinate of {show(shape)}: {show(res)}", None, kind="result",
                     value=show(res))
        return res
    res = _split(rec, idx, shape)
    if rec is not None:
        rec.step(f"idx2crd({idx}, {show(shape)}) = {show(res)}", None, kind="result", value=show(res))
    return res


def crd2idx(crd: Any, shape: Any) -> Any:
    """The 1-D index of the coordinate ``crd`` in ``shape`` (the column-major stride)."""
    rec = active()
    if type(shape) is not int and not all(is_int(s) for s in it.flatten(shape)):
        raise LayoutError(f"crd2idx: the shape {show(shape)} has a leaf that is not an integer")
    stride = it.prefix_product(shape)
    if rec is not None:
        rec.step(f"the default stride of {show(shape)} is column-major: {show(stride)}")
    total = _inner(rec, _split(rec, crd, shape), stride)
    if rec is not None:
        rec.step(f"crd2idx({show(crd)}, {show(shape)}) = {total}", None, kind="result", value=str(total))
    return total
