"""Step-by-step derivations: ``explain(op_name, *args)`` re-walks the algorithm of ``algebra.ops`` /
``algebra.products`` and records its decisions.

Each step is a dict with at least ``"text"`` (one sentence) and ``"layout"`` (CuTe notation of the intermediate
result, or None), plus ``"kind"`` ("step", "result", "error" or "fallback") and ``"depth"`` (0 for the op itself,
1 and more for the steps of a nested op, e.g. the complement inside a divide).

Post-conditions:

- for an op whose result is a layout, the last step's ``"layout"`` is ``str(op(*args))``;
- ``local_tile`` / ``local_partition`` return (layout, offset): the last step has the layout and ``"offset"``;
- ``max_common_vector``, ``evaluate``, ``idx2crd`` and ``crd2idx`` return a number or a coordinate: the last step has
  ``"layout": None`` and ``"value"`` (its CuTe text, e.g. ``"19"`` or ``"(1,(0,1))"``);
- where the op refuses, ``explain`` re-raises the op's own ``LayoutError`` (the web API answers 422 with its text);
  the exception carries the steps taken before the refusal in ``err.steps``, ending with a step of kind "error".
"""

from __future__ import annotations

from typing import Any

from algebra import inttuple as it
from algebra import ops
from algebra import products as P
from algebra.errors import LayoutError
from algebra.explain_core import (
    Recorder,
    show,
    trace_coalesce,
    trace_complement,
    trace_composition,
    trace_filter,
)
from algebra.explain_tiling import (
    trace_blocked_product,
    trace_flat_divide,
    trace_flat_product,
    trace_left_inverse,
    trace_local_partition,
    trace_local_tile,
    trace_logical_divide,
    trace_logical_product,
    trace_max_common_layout,
    trace_max_common_vector,
    trace_raked_product,
    trace_right_inverse,
    trace_tile_to_shape,
    trace_tiled_divide,
    trace_tiled_product,
    trace_zipped_divide,
    trace_zipped_product,
)
from algebra.inttuple import is_int, is_tuple
from algebra.layout import Layout

__all__ = ["explain", "explain_ops", "format_steps"]


# --------------------------------------------------------------------------------------------- coordinates


def _call_coord(crd: tuple) -> Any:
    if not crd:
        raise LayoutError("a coordinate is required")
    return crd[0] if len(crd) == 1 else tuple(crd)


def _split(rec: Recorder, crd: Any, shape: Any) -> Any:
    """The natural coordinate that ``crd2idx`` reads from ``crd`` (an int over a tuple shape splits column-major;
    the last mode is not wrapped, so a coordinate past the end extends along it)."""
    if is_tuple(crd):
        if not is_tuple(shape) or len(crd) != len(shape):
            raise LayoutError(f"coordinate {show(crd)} does not match shape {show(shape)}")
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
            sz = it.product(s)
            parts.append(rem % sz)
            notes.append(f"{rem} % {sz} = {rem % sz}")
            rem //= sz
    rec.add(f"{crd} splits column-major over {show(shape)}: " + ", ".join(notes) + f" -> {show(tuple(parts))}")
    return tuple(_split(rec, c, s) for c, s in zip(parts, shape, strict=True))


def _inner(rec: Recorder, nat: Any, stride: Any) -> Any:
    cs, ds = it.flatten(nat), it.flatten(stride)
    terms = [f"{c}*{d}" for c, d in zip(cs, ds, strict=True)]
    total: Any = 0
    for c, d in zip(cs, ds, strict=True):
        total = total + c * d
    rec.add(f"inner product with the stride {show(stride)}: {' + '.join(terms)} = {total}")
    return total


def trace_evaluate(rec: Recorder, layout: Any, *crd: Any) -> Any:
    c = _call_coord(crd)
    if hasattr(layout, "layout_b"):
        rec.add(f"{layout}: evaluate the inner layout {layout.layout_b}, add the offset, then apply the swizzle")
        with rec.sub():
            x = trace_evaluate(rec, layout.layout_b, c) + layout.offset
        sw = layout.layout_a
        if layout.offset:
            rec.add(f"add the offset {layout.offset}: {x}")
        res = sw(x)
        if hasattr(sw, "yyy_mask"):
            rec.add(f"{sw}({x}) = {x} ^ (({x} & {sw.yyy_mask:#b}) >> {sw.shift}) = {res}", None, kind="result",
                    value=str(res))
        else:
            rec.add(f"{sw}({x}) = {res}", None, kind="result", value=str(res))
        return res
    if not isinstance(layout, Layout):
        raise LayoutError(f"evaluate needs a layout, got {layout!r}")
    rec.add(f"evaluate {layout} at {show(c)}")
    nat = _split(rec, c, layout.shape)
    if nat != c:
        rec.add(f"the natural coordinate is {show(nat)}")
    total = _inner(rec, nat, layout.stride)
    rec.add(f"{layout} at {show(c)} is {total}", None, kind="result", value=str(total))
    return total


def trace_idx2crd(rec: Recorder, idx: Any, shape: Any, stride: Any = None) -> Any:
    res = it.idx2crd(idx, shape, stride)
    if is_tuple(idx) or not is_tuple(shape):
        rec.add(f"{show(idx)} is already a coordinate of {show(shape)}: {show(res)}", None, kind="result",
                value=show(res))
        return res
    strides = it.compact_col_major(shape) if stride is None else stride
    fs, fd, fc = it.flatten(shape), it.flatten(strides), it.flatten(res)
    notes = [f"({idx} // {d}) % {s} = {c}" for s, d, c in zip(fs, fd, fc, strict=True)]
    rec.add(f"each leaf of {show(shape)} reads (index // its stride) % its size, strides {show(strides)}: "
            + ", ".join(notes))
    rec.add(f"idx2crd({idx}, {show(shape)}) = {show(res)}", None, kind="result", value=show(res))
    return res


def trace_crd2idx(rec: Recorder, crd: Any, shape: Any, stride: Any = None) -> Any:
    if stride is None:
        stride = it.prefix_product(shape)
        rec.add(f"the default stride of {show(shape)} is column-major: {show(stride)}")
    nat = _split(rec, crd, shape)
    total = _inner(rec, nat, stride)
    rec.add(f"crd2idx({show(crd)}, {show(shape)}) = {total}", None, kind="result", value=str(total))
    return total


# --------------------------------------------------------------------------------------------- registry


def _evaluate(layout: Any, *crd: Any) -> Any:
    return layout(*crd)


_OPS: dict[str, tuple[Any, Any]] = {
    "coalesce": (trace_coalesce, ops.coalesce),
    "filter": (trace_filter, ops.filter),
    "composition": (trace_composition, ops.composition),
    "complement": (trace_complement, ops.complement),
    "right_inverse": (trace_right_inverse, ops.right_inverse),
    "left_inverse": (trace_left_inverse, ops.left_inverse),
    "max_common_vector": (trace_max_common_vector, ops.max_common_vector),
    "max_common_layout": (trace_max_common_layout, ops.max_common_layout),
    "logical_divide": (trace_logical_divide, P.logical_divide),
    "zipped_divide": (trace_zipped_divide, P.zipped_divide),
    "tiled_divide": (trace_tiled_divide, P.tiled_divide),
    "flat_divide": (trace_flat_divide, P.flat_divide),
    "logical_product": (trace_logical_product, P.logical_product),
    "zipped_product": (trace_zipped_product, P.zipped_product),
    "tiled_product": (trace_tiled_product, P.tiled_product),
    "flat_product": (trace_flat_product, P.flat_product),
    "blocked_product": (trace_blocked_product, P.blocked_product),
    "raked_product": (trace_raked_product, P.raked_product),
    "tile_to_shape": (trace_tile_to_shape, P.tile_to_shape),
    "local_tile": (trace_local_tile, P.local_tile),
    "local_partition": (trace_local_partition, P.local_partition),
    "evaluate": (trace_evaluate, _evaluate),
    "idx2crd": (trace_idx2crd, it.idx2crd),
    "crd2idx": (trace_crd2idx, it.crd2idx),
}


def explain_ops() -> list[str]:
    """The op names ``explain`` knows."""
    return list(_OPS)


def _same(traced: Any, real: Any) -> bool:
    if isinstance(real, tuple) and len(real) == 2 and isinstance(real[0], Layout):
        return isinstance(traced, tuple) and str(traced[0]) == str(real[0]) and traced[1] == real[1]
    return type(traced) is type(real) and show(traced) == show(real)


def _final(rec: Recorder, real: Any) -> None:
    """Make sure the last step states the real result (a disagreeing trace gets a "fallback" step)."""
    last = rec.steps[-1] if rec.steps else None
    if isinstance(real, tuple) and len(real) == 2 and isinstance(real[0], Layout):
        ok = last is not None and last["layout"] == str(real[0]) and last.get("offset") == real[1]
        if not ok:
            rec.add(f"result: {real[0]}, first element at offset {real[1]}", real[0], kind="fallback",
                    offset=real[1])
        return
    if isinstance(real, Layout) or hasattr(real, "layout_b"):
        if last is None or last["layout"] != str(real):
            rec.add(f"result: {real}", real, kind="fallback")
        return
    if last is None or last.get("value") != show(real) or last["layout"] is not None:
        rec.add(f"result: {show(real)}", None, kind="fallback", value=show(real))


def explain(op_name: str, *args: Any) -> list[dict[str, Any]]:
    """The derivation of ``op_name(*args)`` as a list of steps (see the module doc for the post-conditions).

    ``op_name``: any name of ``explain_ops()``; ``args`` as for the op itself, text arguments in CuTe notation are
    parsed (``"evaluate"`` takes a layout and a coordinate, ``"idx2crd"`` / ``"crd2idx"`` an index or coordinate
    and a shape). Raises ``LayoutError`` for an
    unknown op and re-raises the op's ``LayoutError`` when it refuses.
    """
    entry = _OPS.get(op_name)
    if entry is None:
        raise LayoutError(f"explain: unknown op {op_name!r}; one of: {', '.join(_OPS)}")
    tracer, real_fn = entry
    if op_name not in ("idx2crd", "crd2idx"):
        from algebra.notation import parse_arg

        args = tuple(parse_arg(a) if isinstance(a, str) else a for a in args)
    try:
        real = real_fn(*args)
    except LayoutError as err:
        rec = Recorder()
        try:
            tracer(rec, *args)
        except Exception:  # noqa: BLE001 - the trace stops where the op stopped
            pass
        rec.depth = 0
        rec.add(f"refused: {err}", None, kind="error")
        err.steps = rec.steps
        raise
    rec = Recorder()
    try:
        traced = tracer(rec, *args)
    except Exception:  # noqa: BLE001 - a trace that cannot follow still ends with the real result
        traced = None
    rec.depth = 0
    if traced is None or not _same(traced, real):
        rec.add("(the trace above does not reach the result; the real result follows)", None, kind="fallback")
    _final(rec, real)
    return rec.steps


def format_steps(steps: list[dict[str, Any]]) -> str:
    """Plain text of a step list: one line per step, nested steps indented, the layout after an arrow."""
    lines = []
    for s in steps:
        pad = "  " * int(s.get("depth", 0))
        tail = f"  ->  {s['layout']}" if s.get("layout") and s["layout"] not in s["text"] else ""
        lines.append(f"{pad}{s['text']}{tail}")
    return "\n".join(lines)
