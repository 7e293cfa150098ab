"""One work budget for every request: estimated before the work, enforced behind it.

Two halves, both here so that no route can forget either:

- **Estimate** (``charge``). Before a service enumerates cells, searches a space or renders a picture, it charges the
  estimate of that work, computed from the parsed input, against the request's budget of ``WORK_UNITS`` (units of
  ``COST``: one integer cell enumerated is 1). Over the budget, ``charge`` raises ``WorkCapError`` (a LayoutError, so a
  422) naming the cap, before any of the work starts.
- **Hard limit** (``BudgetedRoute``). Every route of the app runs its handler under ``within_budget``: a watchdog
  thread reads the handler thread's CPU clock and, past ``CPU_SECONDS``, raises ``WorkBudgetExceeded`` inside that
  thread (``PyThreadState_SetAsyncExc``), which the route turns into a 422 that names the budget. So no request costs
  much more than ``CPU_SECONDS`` of server CPU, whatever route it comes through, including routes added later:
  ``app.main.create_app`` refuses to start with a route that is not a ``BudgetedRoute``. The watchdog also interrupts
  the largest request when the process's resident memory passes ``RSS_BYTES``, and every request at shutdown.

An interruption lands between two bytecodes of the handler, as any exception could; the watchdog holds it back while
the thread runs inside the storage floor (``storage``, ``sqlite3``, ``psycopg``, ``redis``, the drills' and the
queue's stores), an import, a lock or queue, logging, or a context manager's enter or exit, so a transaction, a
module's registration or a lock is never cut in half by it.
"""

from __future__ import annotations

import asyncio
import contextvars
import ctypes
import functools
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread
from fastapi import params
from fastapi.datastructures import DefaultPlaceholder
from fastapi.dependencies.utils import request_body_to_args
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute

from algebra import LayoutError
from algebra.core.memo import BoundedCache
from app.json_body import StrictJSONRequest, decodes_json

#: Server CPU seconds one request's handler may use (LAYOUTLAB_CPU_BUDGET_S).
CPU_SECONDS = float(os.environ.get("LAYOUTLAB_CPU_BUDGET_S", "0.6"))
#: Resident memory of the whole process past which the heaviest request is interrupted (LAYOUTLAB_RSS_BUDGET_MB).
RSS_BYTES = int(float(os.environ.get("LAYOUTLAB_RSS_BUDGET_MB", "1024")) * (1 << 20))
#: Estimated work one request may charge, in units of COST (LAYOUTLAB_WORK_UNITS).
WORK_UNITS = int(os.environ.get("LAYOUTLAB_WORK_UNITS", 1 << 21))
#: Estimated cost of one piece of work, in units (one integer cell enumerated and listed is 1; measured ratios of
#: ``bench/worst_routes.py``'s figures, rounded up).
COST = {
    "integer cell": 1,          # L(i) of an integer layout, listed in a table
    "swizzled cell": 8,         # Sw o L(i): the swizzle's bit arithmetic on each offset
    "coordinate cell": 64,      # L(i) of a layout with E() strides: a tuple per cell
    "drawn cell": 24,           # one grid cell rendered into a page (~44 bytes of HTML and JSON, hover data)
    "linear point": 2,          # one point of an F2-linearity check (the layout's offset against the XOR image)
    "F2 point": 32,             # one point of the never-wrong check of a composition with an F2-strided side
    "bank lane": 64,            # one lane of a warp's bank map in a fix search (algebra.hw.bankfix: ~2 us)
    "rendered byte": 1,         # one byte of rendered hover data
}
#: The watchdog's tick (seconds).
TICK = 0.02


class WorkBudgetExceeded(BaseException):
    """Raised inside a handler thread by the watchdog. A BaseException, so that ``except Exception`` in a service
    cannot swallow it; ``within_budget`` turns it into ``WorkCapError``."""


class WorkCapError(LayoutError):
    """A request over its work budget (422): the message names the cap."""


class ServerClosing(Exception):  # noqa: N818 - the state it reports, as CuTe's names do
    """The server is shutting down (503): a running request was interrupted, or a new one was not started."""


#: Set once by ``close``: from then on every budget starts interrupted, and running ones are interrupted.
_closing: str | None = None


@dataclass
class Budget:
    """One request's budget. ``units`` is what it has charged; ``reason`` is set once the watchdog interrupted it."""
    ident: int
    clock: int
    cpu_start: float
    cpu_limit: float
    units: int = 0
    reason: str | None = None
    fired_at: float = 0.0
    charges: list[tuple[str, int]] = field(default_factory=list)

    def cpu(self) -> float:
        """CPU seconds the handler thread has used since the budget started (0.0 if its clock is gone)."""
        try:
            return time.clock_gettime(self.clock) - self.cpu_start
        except OSError:
            return 0.0


_current: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("layoutlab_budget", default=None)
_lock = threading.RLock()  # re-entrant: close() may run in a signal handler
_running: dict[int, Budget] = {}
_watchdog: threading.Thread | None = None
_SHIELDED = ("storage", "sqlite3", "psycopg", "redis", "gpu_worker.store", "gpu_worker.redis_store", "app.drills.store",
             "importlib", "threading", "queue", "logging", "contextlib", "concurrent", "weakref", "anyio",
             "ast")  # CPython's AST builder, cut mid-tree, answers SystemError ("recursion depth mismatch")

#: Functions of modules that are otherwise interruptible (a memoized op runs inside algebra.core.memo's wrapper): a
#: cache's entry and its byte count change together.
_SHIELDED_CODE = frozenset(f.__code__ for f in (BoundedCache.get, BoundedCache.put, BoundedCache.clear))


def charge(kind: str, count: int, what: str) -> None:
    """Charge ``count`` pieces of ``kind`` (a key of COST) for ``what`` to the current request's budget.

    Post-condition: the request's charged units are at most WORK_UNITS, or WorkCapError was raised before the work
    started, naming what was asked, how much and the cap. Outside a request (tests, the worker, the CLI) a charge
    over WORK_UNITS on its own still raises: the caps mean the same everywhere."""
    units = COST[kind] * max(0, int(count))
    budget = _current.get()
    used = budget.units if budget is not None else 0
    if used + units > WORK_UNITS:
        cap = WORK_UNITS // COST[kind]
        raise WorkCapError(f"{what}: {count:,} {kind}s is over the work cap of {cap:,} {kind}s per request"
                           + (f" ({used // COST[kind]:,} already used by this request)" if used else ""))
    if budget is not None:
        budget.units += units
        budget.charges.append((what, units))


def cell_kind(layout: Any) -> str:
    """The COST key of enumerating ``layout``: "swizzled cell" for a ComposedLayout, "coordinate cell" for a layout
    with E() (basis) strides, "integer cell" otherwise."""
    if hasattr(layout, "layout_b"):
        return "swizzled cell"
    stride = layout.stride
    stack = [stride]
    while stack:
        s = stack.pop()
        if isinstance(s, tuple):
            stack.extend(s)
        elif type(s) is not int:
            return "coordinate cell"
    return "integer cell"


def offsets(layout: Any, what: str) -> list:
    """``A.offsets(layout)`` (L(i) for every i < size(L)), charged first: the one way the app enumerates a layout's
    cells, so every enumeration is estimated before it starts (tests/test_work_budget.py keeps it the only way)."""
    import algebra as A

    charge(cell_kind(layout), A.size(layout), what)
    return A.offsets(layout)


def cap_of(kind: str) -> int:
    """How many pieces of ``kind`` one request may charge at most (a fixed figure: safe to cache decisions on)."""
    return WORK_UNITS // COST[kind]


def remaining(kind: str) -> int:
    """How many pieces of ``kind`` the current request may still charge (the whole cap outside a request)."""
    budget = _current.get()
    return max(0, WORK_UNITS - (budget.units if budget is not None else 0)) // COST[kind]


@contextmanager
def within_budget(cpu_limit: float | None = None) -> Iterator[Budget]:
    """Run the body under a fresh budget on this thread. Post-condition: the body ran to its end, or it used more
    than ``cpu_limit`` (CPU_SECONDS) seconds of this thread's CPU and WorkCapError was raised; in either case no
    interruption of this budget is pending on the thread afterwards."""
    if _closing is not None:
        raise ServerClosing(_closing)
    ident = threading.get_ident()
    clock = time.pthread_getcpuclockid(ident)
    budget = Budget(ident, clock, time.clock_gettime(clock), CPU_SECONDS if cpu_limit is None else cpu_limit)
    token = _current.set(budget)
    _start_watchdog()
    try:
        try:
            with _lock:
                _running[ident] = budget
            yield budget
        finally:
            _release(budget)
    except WorkBudgetExceeded:
        if _closing is not None and budget.reason == _closing:
            raise ServerClosing(_closing) from None
        raise WorkCapError(budget.reason or f"over the work budget of {budget.cpu_limit:g} s of server CPU "
                           "per request") from None
    finally:
        _current.reset(token)


def _release(budget: Budget) -> None:
    """Deregister ``budget`` (in its own thread) and drop an interruption the watchdog sent but the thread has not
    raised yet. An interruption that lands while this runs is caught and the release retried, so it never escapes the
    budget."""
    while True:
        try:
            with _lock:
                if _running.get(budget.ident) is budget:
                    del _running[budget.ident]
            if budget.reason is not None:  # deregistered: the watchdog sends no more
                _drain()
            return
        except WorkBudgetExceeded:
            continue


class _Drained(BaseException):
    """Sent by a thread to itself to take the place of a pending interruption (``_drain``); never leaves it."""


def _nop() -> None:
    pass


def _drain() -> None:
    """Post-condition: no interruption is pending on this thread, and the interpreter's "asynchronous exception
    pending" flag was cleared by a delivery.

    An interruption still pending is replaced by ``_Drained``, which is then raised here and caught. Not
    ``PyThreadState_SetAsyncExc(ident, NULL)``: on CPython 3.11 that signals the interpreter-wide flag with nothing
    behind it, and only a delivered exception clears the flag, so the eval loop's breaker stays set for the whole
    process; a thread that then calls a function under ``sys.setprofile`` or ``sys.settrace`` (a profiler, coverage,
    a debugger) spins forever on that function's first instruction (``tests/test_work_budget.py`` runs it). Each send
    signals the flag and replaces what was pending; the send is repeated until it lands (another thread's delivery
    may clear the flag first), and the outer handler catches one that lands between two turns of the loop."""
    me = ctypes.c_ulong(threading.get_ident())
    try:
        while True:
            try:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(me, ctypes.py_object(_Drained))
                _nop()  # a call: its first instruction checks the breaker
            except _Drained:
                return
    except _Drained:
        return


def close(reason: str = "the server is shutting down") -> int:
    """Begin shutdown: interrupt every running request and refuse new ones (ServerClosing, 503). Returns how many
    were interrupted."""
    global _closing
    _closing = reason
    return interrupt_all(reason)


def reopen() -> None:
    """Undo ``close`` (an app built again in the same process, as the tests do)."""
    global _closing
    _closing = None


def interrupt_all(reason: str) -> int:
    """Interrupt every running request. Returns how many were interrupted."""
    with _lock:
        budgets = list(_running.values())
        for b in budgets:
            _fire(b, reason)
    return len(budgets)


def running() -> list[Budget]:
    """The budgets of the requests running now (a copy)."""
    with _lock:
        return list(_running.values())


def _fire(budget: Budget, reason: str) -> None:
    """Raise WorkBudgetExceeded in the budget's thread (caller holds _lock). Re-sent every 0.2 s until it lands."""
    now = time.monotonic()
    if budget.reason is not None and now - budget.fired_at < 0.2:
        return
    budget.reason = budget.reason or reason
    budget.fired_at = now
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(budget.ident), ctypes.py_object(WorkBudgetExceeded))


def _shielded(ident: int) -> bool:
    """Whether the handler thread is somewhere an interruption must not land now: inside the storage floor, an
    import, a lock or queue of ``threading`` / ``queue``, logging, ``ast.parse``, a bounded cache's get or put, a
    finalizer, or a context manager's enter or exit (frames from the innermost one out to the budgeted endpoint). The
    interruption then waits for the next tick."""
    frame = sys._current_frames().get(ident)
    while frame is not None and frame.f_code is not _RUN_CODE:
        name = frame.f_globals.get("__name__", "")
        code = frame.f_code
        if name.startswith(_SHIELDED) or code in _SHIELDED_CODE or code.co_name == "__del__":  # or a finalizer
            return True
        frame = frame.f_back
    return False


def _rss() -> int:
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _watch() -> None:
    while True:
        time.sleep(TICK)
        with _lock:
            budgets = list(_running.values())
        if not budgets:
            continue
        over_memory = RSS_BYTES > 0 and _rss() > RSS_BYTES
        heaviest = max(budgets, key=lambda b: b.cpu()) if over_memory else None
        for b in budgets:
            cpu = b.cpu()
            if cpu > b.cpu_limit:
                reason = (f"over the work budget of {b.cpu_limit:g} s of server CPU per request "
                          f"(LAYOUTLAB_CPU_BUDGET_S); ask for fewer cells, modes or candidates")
            elif b is heaviest:
                reason = (f"the server's memory passed its budget of {RSS_BYTES >> 20:,} MB "
                          "(LAYOUTLAB_RSS_BUDGET_MB) while this request ran; ask for a smaller input")
            else:
                continue
            if _shielded(b.ident):
                continue
            with _lock:
                if _running.get(b.ident) is b:
                    _fire(b, reason)


def _start_watchdog() -> None:
    global _watchdog
    if _watchdog is not None:
        return
    with _lock:
        if _watchdog is None:
            _watchdog = threading.Thread(target=_watch, name="layoutlab-budget", daemon=True)
            _watchdog.start()


#: Packages whose code computes (parses, validates, enumerates, renders results): never called on the event loop.
WORK_PACKAGES = ("algebra", "app.services", "app.drills")


def work_references(fn: Callable) -> list[str]:
    """The names ``fn``'s code (nested functions and comprehensions included) reads that resolve, through its
    globals and closure, to a module, class or function of WORK_PACKAGES: ``["S (app.services.bench)", ...]``.
    A direct reference only (what the referenced code calls in turn is tests/test_async_routes.py's to follow)."""
    import types

    scope = dict(getattr(fn, "__globals__", {}))
    for cell_name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=False):
        try:
            scope[cell_name] = cell.cell_contents
        except ValueError:
            continue
    found: list[str] = []
    codes = [fn.__code__]
    while codes:
        code = codes.pop()
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        for name in (*code.co_names, *code.co_freevars):
            obj = scope.get(name)
            home = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", None)
            if isinstance(home, str) and any(home == p or home.startswith(p + ".") for p in WORK_PACKAGES):
                found.append(f"{name} ({home})")
        for name in code.co_names:  # `import algebra` / `from app.services import x` inside the body
            if name in WORK_PACKAGES or name.startswith(tuple(p + "." for p in WORK_PACKAGES)):
                found.append(f"import {name}")
    return sorted(set(found))


def light(endpoint: Callable) -> Callable:
    """Mark an ``async def`` endpoint as light: it runs on the event loop, where no interruption is safe, so it must
    do O(1) work (a health check, a redirect) or only await I/O. Every other endpoint is a plain function.

    Checked here, when the endpoint is defined: an endpoint that is not ``async``, or whose code refers to the
    algebra, the services or the drills (WORK_PACKAGES), raises TypeError naming what it refers to."""
    if not asyncio.iscoroutinefunction(endpoint):
        raise TypeError(f"{endpoint.__module__}.{endpoint.__qualname__}: @light is for async endpoints; a plain "
                        "function already runs under the work budget")
    refs = work_references(endpoint)
    if refs:
        raise TypeError(f"{endpoint.__module__}.{endpoint.__qualname__}: a @light endpoint runs on the event loop, "
                        f"outside the work budget, and may only await I/O; it refers to {', '.join(refs)}: make it a "
                        "plain function")
    endpoint.__layoutlab_light__ = True
    return endpoint


def cpu_scale(scale: float) -> Callable[[Callable], Callable]:
    """Give an endpoint ``scale`` times the per-request CPU budget (CPU_SECONDS, read when each request starts). For
    work whose amount no input changes (a whiteboard start's fixed search), never for work an input sizes."""
    def mark(endpoint: Callable) -> Callable:
        endpoint.__layoutlab_cpu_scale__ = float(scale)
        return endpoint

    return mark


def _budgeted(endpoint: Callable) -> Callable:
    if asyncio.iscoroutinefunction(endpoint):
        if not getattr(endpoint, "__layoutlab_light__", False):
            raise TypeError(f"{endpoint.__module__}.{endpoint.__qualname__}: an async endpoint runs on the event "
                            "loop, outside the work budget; make it a plain function, or mark it @light")
        return endpoint

    scale = getattr(endpoint, "__layoutlab_cpu_scale__", None)

    @functools.wraps(endpoint)
    def run(*args: Any, **kwargs: Any) -> Any:
        with within_budget(None if scale is None else CPU_SECONDS * scale):
            return endpoint(*args, **kwargs)

    run.__layoutlab_budgeted__ = True
    return run


_RUN_CODE = _budgeted(lambda: None).__code__  # the frame of every budgeted endpoint's wrapper (where the walk stops)


class BudgetedRoute(APIRoute):
    """An APIRoute whose handler runs under ``within_budget`` (async endpoints: only ``@light`` ones). Its requests
    are ``app.json_body.StrictJSONRequest``: a JSON body with a lone surrogate is refused before the handler.

    A JSON body is decoded and validated under the budget too, in a worker thread: FastAPI does both on the event
    loop before the handler runs, where a 1 MB object of 90,000 keys the model does not take (one pydantic error
    each) held the loop for 0.5-0.7 s of CPU. The request reads its body on the loop (I/O), then :meth:`_check_body`
    runs in the handlers' thread pool; a body the model refuses is answered from there (RequestValidationError,
    422), and a valid one is handed to FastAPI decoded, so the loop only validates what is known to be valid."""

    def __init__(self, path: str, endpoint: Callable, **kwargs: Any) -> None:
        super().__init__(path, _budgeted(endpoint), **kwargs)

    def get_route_handler(self) -> Callable:
        handle = super().get_route_handler()
        form = self.body_field is not None and isinstance(self.body_field.field_info, params.Form)
        fields = list(self.dependant.body_params) if self.body_field is not None and not form else []
        strict_type = self.strict_content_type
        strict_type = strict_type.value if isinstance(strict_type, DefaultPlaceholder) else strict_type

        async def strict(request: Any) -> Any:
            request = StrictJSONRequest(request.scope, request.receive)
            if fields and decodes_json(request.headers.get("content-type"), strict_type):
                await request.prepare(_in_budgeted_thread, functools.partial(self._check_body, fields))
            return await handle(request)

        return strict

    def _check_body(self, fields: list, value: Any) -> None:
        """Validate a decoded body as FastAPI does (``request_body_to_args``, which awaits nothing for a JSON value).
        Raises RequestValidationError with FastAPI's errors."""
        run = request_body_to_args(fields, value, self._embed_body_fields)
        try:
            run.send(None)
        except StopIteration as done:
            errors = done.value[1]
        else:  # pragma: no cover - only a form body awaits (read as a form, never here)
            run.close()
            raise RuntimeError("validating a JSON body awaited")
        if errors:
            raise RequestValidationError(errors, body=value)


async def _in_budgeted_thread(work: Callable[[], Any]) -> Any:
    """``work()`` in the handlers' thread pool, under the work budget (a request's body, before its handler)."""

    def run() -> Any:
        with within_budget():
            return work()

    return await anyio.to_thread.run_sync(run)


def api_routes(routes: list[Any]) -> Iterator[APIRoute]:
    """Every APIRoute in ``routes``, including those of included routers (FastAPI keeps them in their router)."""
    for r in routes:
        inner = getattr(r, "original_router", None)
        if inner is not None:
            yield from api_routes(inner.routes)
        elif isinstance(r, APIRoute):
            yield r


def unbudgeted_routes(app: Any) -> list[str]:
    """``"METHOD path"`` of every API route of ``app`` that is not a BudgetedRoute (empty for a sound app)."""
    return [f"{','.join(sorted(r.methods or ()))} {r.path}" for r in api_routes(app.routes)
            if not isinstance(r, BudgetedRoute)]
