"""Step-by-step derivations, recorded from the code that computes the answer.

``explain(op_name, *args)`` (also ``algebra.explain(op_name, *args)``: this module is callable) runs the op of
``algebra.registry`` with a recorder active (``algebra.core.recorder``): the op skips its fast paths and its cache and
writes a step at each decision it takes. The steps therefore describe the run that produced the answer.

Each step is a dict with at least ``"text"`` (one sentence) and ``"layout"`` (CuTe notation of the intermediate
result, or None), plus ``"kind"`` ("step", "result" or "error") and ``"depth"`` (0 for the op itself, 1 and more for
the steps of a nested op, e.g. the complement inside a divide).

Post-conditions:

- for an op whose result is a layout, the last step has depth 0, kind "result" and ``"layout" == str(op(*args))``;
- ``local_tile`` / ``local_partition`` return (layout, offset): the last step has the layout and ``"offset"``;
- ``max_common_vector``, ``evaluate``, ``idx2crd`` and ``crd2idx`` return a number or a coordinate: the last step has
  ``"layout": None`` and ``"value"`` (its CuTe text, e.g. ``"19"`` or ``"(1,(0,1))"``);
- where the op refuses, ``explain`` raises the op's own ``LayoutError`` (the web API answers 422 with its text); the
  exception carries the steps taken before the refusal in ``err.steps``, ending with a step of kind "error".
"""

from __future__ import annotations

import sys
import types
from typing import Any

from algebra.core.checks import not_a_layout
from algebra.core.errors import LayoutError
from algebra.core.layout import Layout
from algebra.core.notation import show
from algebra.core.recorder import Recorder, recording
from algebra.teach import registry

__all__ = ["derive", "explain", "explain_ops", "format_steps"]


explain_ops = registry.names  # the op names explain knows: every op of the table


def _close(rec: Recorder, op: registry.Op, result: Any) -> None:
    """End with a depth-0 "result" step that states ``result`` (unless the op's own last step already does)."""
    last = rec.steps[-1] if rec.steps else None
    own = last is not None and last["depth"] == 0  # the op's own last step may state the result already
    rec.depth = 0
    if op.result == "tile":
        layout, offset = result
        if not (own and last["layout"] == str(layout) and last.get("offset") == offset):
            rec.step(f"result: {layout}, first element at offset {offset}", layout, kind="result", offset=offset)
    elif isinstance(result, Layout) or hasattr(result, "layout_b"):  # a layout or a swizzled one
        if not (own and last["kind"] == "result" and last["layout"] == str(result)):
            rec.step(f"result: {op.name}({', '.join(show(a) for a in rec.args)}) = {result}", result,
                     kind="result")
    elif not (own and last["layout"] is None and last.get("value") == show(result)):
        rec.step(f"result: {show(result)}", None, kind="result", value=show(result))


def derive(op_name: str, *args: Any) -> tuple[Any, list[dict[str, Any]]]:
    """``(op(*args), steps)`` from one recorded run (see the module doc). Text arguments are read by the op's
    argument kinds (``algebra.registry.parse_value``). Raises ``LayoutError`` for an unknown op and the op's own
    ``LayoutError`` (with ``err.steps``) when it refuses."""
    op = registry.get(op_name)
    args = tuple(registry.parse_args(op, list(args)))
    with recording() as rec:
        rec.args = args
        try:
            result = op.fn(*args)
            refusal = not_a_layout(f"{op.name}({', '.join(show(a) for a in args)})", result)
            if refusal is not None:  # a shape <= 0: refused as the op refuses it outside a derivation
                raise refusal
        except LayoutError as err:
            rec.depth = 0
            rec.step(f"refused: {err}", None, kind="error")
            err.steps = _notated(rec.steps)
            raise
    _notated(rec.steps)
    _close(rec, op, result)
    return result, _notated(rec.steps)


def _notated(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``steps`` with every step's layout in CuTe notation (the recorder keeps the objects the ops passed it)."""
    for s in steps:
        x = s["layout"]
        if x is not None and type(x) is not str:
            s["layout"] = show(x)
    return steps


def explain(op_name: str, *args: Any) -> list[dict[str, Any]]:
    """The derivation of ``op_name(*args)`` as a list of steps (see the module doc for the post-conditions)."""
    return derive(op_name, *args)[1]


def format_steps(steps: list[dict[str, Any]]) -> str:
    """Plain text of a step list: one line per step, nested steps indented, the layout after an arrow."""
    lines = []
    for s in steps:
        pad = "  " * int(s.get("depth", 0))
        tail = f"  ->  {s['layout']}" if s.get("layout") and s["layout"] not in s["text"] else ""
        lines.append(f"{pad}{s['text']}{tail}")
    return "\n".join(lines)


class _CallableModule(types.ModuleType):
    """``algebra.explain`` is this module, and calling it calls ``explain``."""

    __call__ = staticmethod(explain)


sys.modules[__name__].__class__ = _CallableModule
