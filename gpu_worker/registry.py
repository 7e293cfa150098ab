"""Job kinds: the one table that maps a kind name to its parameter model and its runner.

Plugging in a new kind (the GEMM ladder does this from ``gpu_worker/gemm.py``)::

    from pydantic import BaseModel
    from gpu_worker.registry import JobContext, register

    class GemmParams(BaseModel):          # every field bounded: the model is the only gate before nvcc
        m: int = Field(4096, ge=128, le=16384)
        ...

    def run_gemm(params: GemmParams, ctx: JobContext) -> dict:
        ctx.progress("building")          # free-text stage, shown on the page
        ...                               # build with gpu_worker.build.build_kernel, run with gpu_worker.run.run_binary
        ctx.check_cancel()                # raises JobCancelled when the user cancelled the job
        ctx.progress("timing", 3, 20)     # stage with "n of N"
        return {...}                      # JSON-serialisable result, stored as the job's result

    register("gemm", GemmParams, run_gemm, title="GEMM ladder", needs_gpu=True)

and add the module's import to ``BUILTIN_MODULES`` below (or import it before the worker starts). The API validates
``params`` with the registered model (a 422 names the field and the cap), the worker calls the runner with the
validated model and a :class:`JobContext`; an exception fails the job with its message, a returned dict completes it.
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

#: GPU seconds a job's estimate may reach (LAYOUTLAB_JOB_MAX_S): a longer one is refused before it is queued.
MAX_JOB_SECONDS = float(os.environ.get("LAYOUTLAB_JOB_MAX_S", "60"))
#: The most values (objects, arrays, keys' values and items, at every level) a job's params may hold; the largest
#: real one (a solver job's 8 accesses of 32 [row, col] offsets) holds about 1,000. Counted before the kind's model
#: runs, so its errors (one per bad value) stay few: 90,000 bad values in a 1 MB body cost 0.6-1.7 s of CPU in
#: pydantic's own code, which the work budget cannot interrupt.
MAX_PARAM_VALUES = 4096
#: Modules imported on first use of the registry; each registers its kinds at import time. A missing module is skipped.
BUILTIN_MODULES = ("gpu_worker.kinds", "gpu_worker.gemm", "gpu_worker.solve_kind")


class JobCancelled(Exception):
    """Raised inside a runner (by :meth:`JobContext.check_cancel`) when the job was cancelled."""


class ParamsError(ValueError):
    """Parameters refused by a kind's model; the message names each bad field and its limit."""


@dataclass
class JobContext:
    """What a runner gets besides its parameters: progress reporting, cancellation and the worker's identity."""

    job_id: str
    worker_id: str = "local"
    report: Callable[[dict], None] = lambda progress: None
    cancelled: Callable[[], bool] = lambda: False
    device: dict = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def progress(self, stage: str, done: int | None = None, total: int | None = None, **extra: Any) -> None:
        """Record the current stage (e.g. "building", "checking", "timing" 3 of 20, "profiling").
        Post-condition: the job's stored progress is ``{"stage", "done", "total", **extra}``."""
        with self._lock:
            self.report({"stage": stage, "done": done, "total": total, **extra})

    def check_cancel(self) -> None:
        """Raise :class:`JobCancelled` if the job has been cancelled; otherwise return None."""
        if self.cancelled():
            raise JobCancelled("cancelled by user")


Runner = Callable[[BaseModel, JobContext], dict]


@dataclass(frozen=True)
class Kind:
    """A registered job kind."""

    name: str
    params_model: type[BaseModel]
    runner: Runner
    title: str
    needs_gpu: bool


_KINDS: dict[str, Kind] = {}
_loaded = False


def register(kind: str, params_model: type[BaseModel], runner: Runner, *, title: str = "",
             needs_gpu: bool = True) -> Kind:
    """Register (or replace) ``kind``. Post-condition: ``get(kind).runner is runner``."""
    if not kind.isidentifier():
        raise ValueError(f"kind name must be an identifier, got {kind!r}")
    entry = Kind(kind, params_model, runner, title or kind, needs_gpu)
    _KINDS[kind] = entry
    return entry


def _load_builtins() -> None:
    global _loaded
    if _loaded:
        return
    for name in BUILTIN_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
    _loaded = True  # only once every module is in: an import cut short is tried again


def get(kind: str) -> Kind:
    """The registered kind; raises ParamsError naming the known kinds when ``kind`` is unknown."""
    _load_builtins()
    try:
        return _KINDS[kind]
    except KeyError:
        raise ParamsError(f"unknown kind {kind!r}; known kinds: {', '.join(sorted(_KINDS))}") from None


def kinds() -> list[Kind]:
    """Every registered kind, sorted by name."""
    _load_builtins()
    return [_KINDS[k] for k in sorted(_KINDS)]


def format_validation_error(exc: ValidationError) -> str:
    """One line per failed field: ``field.path: message``."""
    parts = []
    for err in exc.errors():
        # a union's branch labels (``literal['best']``, ``tagged-union[...]``) are no field: the path keeps the fields
        loc = ".".join(str(x) for x in err.get("loc", ()) if "[" not in str(x))
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts)


def _values_over(value: object, cap: int) -> bool:
    """Whether ``value`` (parsed JSON) holds more than ``cap`` values; stops counting past ``cap``."""
    stack, seen = [value], 0
    while stack:
        v = stack.pop()
        seen += 1
        if seen > cap:
            return True
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
    return False


def validate(kind: str, params: dict | None) -> BaseModel:
    """Validate ``params`` for ``kind``. Post-condition: returns the model instance, or raises ParamsError whose
    message names each bad field and the cap it broke, or, for a model with ``estimate() -> (seconds, how)``, the
    estimated GPU time when it is over :data:`MAX_JOB_SECONDS` (checked here, before the job is queued)."""
    entry = get(kind)
    if _values_over(params, MAX_PARAM_VALUES):
        raise ParamsError(f"params: more than {MAX_PARAM_VALUES:,} values (objects, arrays and their items, at every "
                          "level), over the cap; a job's parameters hold at most about 1,000")
    try:
        model = entry.params_model.model_validate(params or {}, strict=True)  # JSON types: no true for 1, no "4"
    except ValidationError as exc:
        raise ParamsError(format_validation_error(exc)) from None
    if hasattr(model, "estimate"):
        seconds, how = model.estimate()
        if seconds > MAX_JOB_SECONDS:
            raise ParamsError(f"estimated {seconds:,.0f} s of GPU time, over the lab's cap of {MAX_JOB_SECONDS:g} s "
                              f"per job ({how})")
    return model


def stored(model: BaseModel) -> dict:
    """The parameters the queue keeps for a validated job: the model's own ``stored()`` where it has one (a model
    that refuses fields its choices do not read leaves them out), else every field. Post-condition:
    ``validate(kind, stored(m))`` accepts the same job as ``m``: the worker validates them again before it runs."""
    keep = getattr(model, "stored", None)
    return keep() if callable(keep) else model.model_dump()
