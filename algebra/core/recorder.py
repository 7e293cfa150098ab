"""The derivation recorder: the ops write their own steps while ``explain`` asks for them.

``explain`` (``algebra.teach.explain``) makes a ``Recorder`` active (a context variable: concurrent requests never mix)
and runs the op itself, which skips its fast paths (``memo`` its cache) and calls ``rec.step(text, layout)`` at each
decision: the derivation is a trace of the code that computed the answer. A step is a dict ``{"text", "layout",
"kind", "depth"}`` (plus extras such as ``"value"``): ``layout`` as the op passed it (``explain`` writes it in CuTe
notation once the run is over), ``kind`` "step", "result" or "error", ``depth`` one more inside each nested op.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_ACTIVE: ContextVar[Recorder | None] = ContextVar("algebra_recorder", default=None)


class Recorder:
    """Collects the steps of one derivation; ``nested`` indents the steps of a nested op."""

    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []
        self.depth = 0
        self.args: tuple = ()  # the arguments of the op being explained
        self.muted = 0  # > 0 inside ``quiet``: a helper result, not a step of the derivation

    def step(self, text: str, layout: Any = None, kind: str = "step", **extra: Any) -> None:
        """Record one sentence and (optionally) the layout it arrives at (kept as given; see the module doc)."""
        if self.muted:
            return
        self.steps.append({"text": text, "layout": layout, "kind": kind, "depth": self.depth, **extra})


#: The recorder of the derivation being recorded, or None (the context variable's own ``get``: no Python frame).
active: Callable[[], Recorder | None] = _ACTIVE.get


@contextmanager
def recording() -> Iterator[Recorder]:
    """Make a fresh recorder active for the duration of the block."""
    rec = Recorder()
    token = _ACTIVE.set(rec)
    try:
        yield rec
    finally:
        _ACTIVE.reset(token)


def nested(rec: Recorder | None, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, its recorded steps one level deeper (a plain call when nothing records)."""
    if rec is None:
        return fn(*args)
    rec.depth += 1
    try:
        return fn(*args)
    finally:
        rec.depth -= 1


def quiet(rec: Recorder | None, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` as a helper whose own steps are not part of the derivation (it still runs the general code,
    not the fast paths, since a recorder is active)."""
    if rec is None:
        return fn(*args)
    rec.muted += 1
    try:
        return fn(*args)
    finally:
        rec.muted -= 1
