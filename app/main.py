"""Application factory: ``create_app()`` builds the FastAPI app, mounts static files and includes routers."""

from __future__ import annotations

import gc
import importlib
import importlib.util
import logging
import os
import re
import signal
import sys
import threading
from contextlib import asynccontextmanager
from pathlib import Path

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from algebra import LayoutError
from app import budget, cookies, http_errors, openapi, outage, page_query
from app.budget import BudgetedRoute, ServerClosing, WorkCapError, light, unbudgeted_routes
from app.config import MAX_ECHO, MAX_NESTING, MAX_REFUSAL, clip
from app.hosts import AllowedHostsMiddleware, allowed_hosts
from app.middleware import (
    MAX_BODY_BYTES,
    BodyLimitMiddleware,
    CookieLimitMiddleware,
    HeadMiddleware,
    OptionsMiddleware,
    PageCacheMiddleware,
    SecureCookieMiddleware,
    SecurityHeadersMiddleware,
    SlashRedirect,
)
from app.origin import SameOriginMiddleware
from storage import volume
from storage.config import data_dir
from storage.version import code_version

ROOT = Path(__file__).resolve().parent.parent
log = logging.getLogger("layoutlab")

#: Router modules, in include order. Each exposes ``router`` (an APIRouter).
ROUTERS = [
    "app.routes.api_layout",
    "app.routes.api_svg",
    "app.routes.api_algebra",
    "app.routes.api_banks",
    "app.routes.api_atoms",
    "app.routes.api_drills",
    "app.routes.api_bench",
    "app.routes.api_class",
    "app.routes.pages_class",
    "app.routes.api_solve",
    "app.routes.api_triton",
    "app.routes.pages_explorer",
    "app.routes.pages_algebra",
    "app.routes.pages_banks",
    "app.routes.pages_tv",
    "app.routes.pages_drills",
    "app.routes.pages_lab",
    "app.routes.pages_rungs",
    "app.routes.pages_solve",
]


def _validation_detail(exc: RequestValidationError) -> str:
    """The failed fields and pydantic's messages, one per field; never the rejected input itself (pydantic's
    ``input``). A union's alternatives are named by pydantic in ``loc`` (``function-after[...]``, ``int``): they are
    dropped, and of a field's several messages the first that is not a type mismatch is kept. A body that is not a
    JSON object (no body, a form, JSON without its Content-Type, invalid JSON, an array) is named as such."""
    by_field: dict[str, str] = {}
    for err in exc.errors():
        body = _body_problem(err)
        if body:
            return body
        loc = ".".join(clip(str(x), 40) for x in err.get("loc", ())
                       if isinstance(x, int) or (x not in _NOT_FIELDS and _FIELD.fullmatch(str(x))))
        msg = clip(str(err.get("msg")).removeprefix("Value error, "), 200)  # a validator's own ValueError
        if loc not in by_field or (by_field[loc].startswith("Input should be") and not msg.startswith("Input should")):
            by_field[loc] = msg
        if len(by_field) >= 8:
            break
    parts = [f"{loc}: {msg}" if loc else msg for loc, msg in by_field.items()]
    return clip("; ".join(parts) or "invalid request")


def _page_error(request: Request, detail: str):
    """A page route's refused query or form (422): the whole page with the reason (base.html), or for htmx only the
    message, so a browser shows text, not JSON (templates/error.html)."""
    from fastapi.responses import HTMLResponse
    from markupsafe import escape

    from app.templating import is_htmx, templates

    if is_htmx(request):
        return HTMLResponse(f'<p class="msg error" role="alert">{escape(detail)}</p>', status_code=422)
    back = "/" + request.url.path.strip("/").split("/")[0]
    html = templates.env.get_template("error.html").render(request=request, detail=detail, back=back)
    return HTMLResponse(html, status_code=422)


def _body_problem(err: dict) -> str | None:
    """What is wrong with the body as a whole, or None when the error is about a field."""
    if err.get("type") == "json_invalid":  # loc is ("body", character position)
        at = err.get("loc", ())[-1]
        return f"body: not valid JSON (at character {at}: {clip(err.get('ctx', {}).get('error', ''), 80)})"
    if tuple(err.get("loc", ())) != ("body",) or err.get("type") not in ("model_attributes_type", "dict_type",
                                                                          "missing"):
        return None
    raw = err.get("input") if err.get("type") != "missing" else b""
    if isinstance(raw, bytes):
        kind = "JSON without that Content-Type" if _looks_json(raw) else "a form or text body" if raw else "no body"
    else:
        kind = f"got a JSON {_JSON_KINDS.get(type(raw), 'value')}"
    return f"body: expected a JSON object sent with Content-Type: application/json ({kind})"


def _looks_json(raw: bytes) -> bool:
    return raw.lstrip()[:1] in (b"{", b"[")


_JSON_KINDS = {list: "array", str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_FIELDS = {"body", "query", "int", "str", "float", "bool", "none", "list", "dict"}


def create_app(embedded_worker: bool = False) -> FastAPI:
    """Build the app. Post-condition: every router of ROUTERS that exists is included, /healthz answers 200,
    LayoutError / validation errors become 422 with a string ``detail`` of at most about MAX_ECHO characters, a body
    over MAX_BODY_BYTES answers 413, every response carries the security headers (app.middleware), and a request whose
    Host is not allowed (LAYOUTLAB_ALLOWED_HOSTS, app.hosts) is answered 400 before anything else runs."""
    app = FastAPI(title="LayoutLab", version="0.1.0", docs_url=None, redoc_url=None, redirect_slashes=False,
                  description="CuTe layout algebra: explorer, workbench, banks lab, TV atlas, drills and GPU lab.")
    budget.reopen()  # a new app serves (an earlier one in this process may have shut down)
    cookies.install()  # Cookie headers are parsed on the event loop: in linear time (app.cookies)
    app.router.route_class = BudgetedRoute  # every route the app defines runs under the work budget (app.budget)
    app.router.default = SlashRedirect(app.router, app.router.default)  # relative Location, never built from Host
    app.add_middleware(OptionsMiddleware, router=app.router)  # OPTIONS: 204 with Allow
    app.add_middleware(PageCacheMiddleware, paths=CACHED_PAGES)
    app.add_middleware(BodyLimitMiddleware, limit=MAX_BODY_BYTES)
    app.add_middleware(SameOriginMiddleware)  # a browser's write from another site: 403 (app.origin)
    app.add_middleware(SecurityHeadersMiddleware, docs=(openapi.DOCS_URL, openapi.REDOC_URL))
    openapi.install(app)  # /openapi.json with HTTPError for every refusal; /docs and /redoc from static/vendor
    app.state.embedded_worker = embedded_worker
    # CPU-bound handlers run in worker threads under one GIL: hand it over every 1 ms instead of 5 ms, so the event
    # loop (and a cheap request such as /healthz) waits for it at most a few ms while heavy requests run; and run at
    # most WORKER_THREADS of them at once (more only add GIL handovers: bench/web_load.py, ~10 % CPU per request)
    sys.setswitchinterval(0.001)
    # the caches hold ~10^6 objects: with the default thresholds the collector walked them every few hundred
    # requests (a 40-300 ms pause, the p99 of a page); collect young objects less often (garbage without cycles is
    # freed by reference counting anyway)
    gc.set_threshold(*GC_THRESHOLDS)
    _limit_worker_threads(app, int(os.environ.get("LAYOUTLAB_THREADS", WORKER_THREADS)))
    static = ROOT / "static"
    static.mkdir(exist_ok=True)
    app.mount("/static", http_errors.StaticFiles(directory=static), name="static")  # a 416 that names the file's size

    http_errors.install(app)  # unknown paths and other HTTP errors: a page for a browser, JSON for the API
    outage.install(app)  # Redis or PostgreSQL unreachable: 503 with Retry-After, never 500

    @app.exception_handler(LayoutError)
    async def _layout_error(request: Request, exc: LayoutError):
        if isinstance(exc, page_query.QueryProblem) and page_query.is_page(request):
            return await page_query.answer(request, [(exc.field, exc.value, clip(str(exc)))])
        if isinstance(exc, WorkCapError) and not request.url.path.startswith("/api/"):
            return _page_error(request, clip(str(exc)))
        # an op's refusal (the workbench's lesson) is kept whole; any other error echoes at most MAX_ECHO characters
        limit = MAX_REFUSAL if getattr(exc, "refused", False) else MAX_ECHO
        return JSONResponse({"detail": clip(str(exc), limit)}, status_code=422)

    @app.exception_handler(ServerClosing)
    async def _closing(request: Request, exc: ServerClosing):
        return JSONResponse({"detail": str(exc)}, status_code=503, headers={"Retry-After": "5"})

    @app.exception_handler(RecursionError)
    async def _too_deep(request: Request, exc: RecursionError):
        return JSONResponse({"detail": f"input nested too deeply to evaluate (nesting cap {MAX_NESTING})"},
                            status_code=422)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError):
        if page_query.is_page(request) and (refused := page_query.validation_problems(request, exc)):
            return await page_query.answer(request, refused)  # a page's query: the page, the value kept
        if not request.url.path.startswith("/api/"):  # a page, fragment or form: a readable page, not JSON
            return _page_error(request, _validation_detail(exc))
        return JSONResponse({"detail": _validation_detail(exc)}, status_code=422)

    async def _storage_error(request: Request, exc: Exception):
        """A write the data volume had no room for (storage.volume: SQLite's SQLITE_FULL, ENOSPC / EDQUOT,
        PostgreSQL's disk_full): 503 with Retry-After naming the cause; the transaction was rolled back. Any other
        storage error is the server's own (500)."""
        if not volume.disk_full(exc):
            raise exc
        volume.note_full()
        refused = StarletteHTTPException(503, volume.refusal_detail(request.method not in ("GET", "HEAD")),
                                         headers={"Retry-After": str(volume.RETRY_AFTER_S)})
        return await http_errors.http_error(request, refused)

    for storage_error in _storage_errors():
        app.add_exception_handler(storage_error, _storage_error)

    data_folder, version = str(data_dir()), code_version()  # read once here: healthz runs on the event loop

    @app.get("/healthz", tags=["meta"])
    @light
    async def healthz() -> dict:  # on the event loop: no worker thread to wait for while heavy requests run
        """``{"ok": true, "data_volume": {"full", "free_bytes", "detail"}, "data_dir", "code_version"}``: the app
        answers; ``full`` says writes are refused (503) because the data volume has no space left, while reads go on;
        the data folder (two checkouts on one host must not share one by accident) and this code's version."""
        return {"ok": True, "data_volume": volume.state(), "data_dir": data_folder, "code_version": version}

    @app.get("/favicon.ico", include_in_schema=False)
    @light
    async def favicon() -> Response:  # pages carry an empty inline icon; a fragment opened on its own asks for this
        return Response(status_code=204, headers={"Cache-Control": "public, max-age=86400"})

    for name in ROUTERS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        app.include_router(module.router)

    unbudgeted = unbudgeted_routes(app)
    if unbudgeted:
        raise RuntimeError(f"routes outside the work budget (use APIRouter(route_class=BudgetedRoute)): {unbudgeted}")
    startup = getattr(importlib.import_module("app.lifecycle"), "install", None) if _has("app.lifecycle") else None
    if startup:
        startup(app)
    app.add_middleware(SecureCookieMiddleware)  # around every cookie the app sets: Secure over HTTPS
    app.add_middleware(HeadMiddleware)  # HEAD wherever GET is answered, with no body (OPTIONS's Allow lists it)
    app.add_middleware(CookieLimitMiddleware)  # Cookie headers past one field's size: 431, before any parse
    app.add_middleware(AllowedHostsMiddleware, hosts=allowed_hosts())  # outermost: a foreign Host (DNS rebinding)
    return app


#: Pages whose HTML is a pure function of the path, the query string and the htmx fragment headers: their rendered
#: responses are cached (app.middleware.PageCacheMiddleware). Drills and the lab depend on the client: never cached.
CACHED_PAGES = ("/", "/algebra", "/banks", "/tv")


#: Route handlers that are plain functions run in a pool of at most this many threads (LAYOUTLAB_THREADS).
WORKER_THREADS = 8
#: gc.set_threshold for the app process (Python's default: 700, 10, 10).
GC_THRESHOLDS = (20_000, 50, 1000)


def _limit_worker_threads(app: FastAPI, tokens: int) -> None:
    """Set the event loop's thread limiter (anyio's, used for sync handlers) to ``tokens`` when the app starts."""
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(a):
        anyio.to_thread.current_default_thread_limiter().total_tokens = max(1, tokens)
        budget.reopen()
        _open_stores()
        _stop_work_on_signals()
        await anyio.to_thread.run_sync(_warm, a)
        async with inner(a) as state:
            yield state

    app.router.lifespan_context = lifespan


def _open_stores() -> None:
    """Create the data folder's SQLite files, their tables and the site's secret at start-up, while there is room:
    on a volume that fills up later, reads still find them and only writes are refused (storage.volume). A database
    server (LAYOUTLAB_DATABASE_URL) or Redis is reached on first use, as before. A failure here never stops the app:
    the first request that needs the store tries again."""
    if os.environ.get("LAYOUTLAB_DATABASE_URL"):
        return
    try:
        from app.drills import identity, store_db

        identity.secret()
        store_db.read("SELECT 1")
        if not os.environ.get("LAYOUTLAB_REDIS_URL"):
            from gpu_worker.store import history_store

            history_store()
    except Exception as exc:  # noqa: BLE001 - reported; the stores open on first use instead
        log.warning("could not open the data folder's stores at start-up: %s", exc)


_warmed = threading.Event()


def _warm(app: FastAPI) -> None:
    """Once per process, at start-up and before the first request is served: build the OpenAPI document (served
    from the event loop), compile every template (about 1.1 s for the 42 of them: the first page render of a fresh
    worker paid its templates' share inside its CPU budget, and the TV atlas with every section open went over it),
    import the drill generators and warm the whiteboard's caches. Done in a thread beside the first requests, this
    second or two of CPU held the GIL against them, just after the server had answered its health check, where a
    load test begins (bench/web_api.py). Then what start-up built,
    which lives as long as the process, is moved out of the garbage collector's reach (``gc.freeze``), so that a
    full collection walks only what requests made since. ``LAYOUTLAB_WARM=0`` skips it (the tests' in-process
    apps)."""
    if _warmed.is_set() or os.environ.get("LAYOUTLAB_WARM") == "0":
        return
    _warmed.set()
    try:
        app.openapi()
        from app.drills import whiteboard
        from app.templating import templates

        for name in templates.env.list_templates():
            templates.env.get_template(name)

        whiteboard.warm()
    except Exception:  # a warm-up never stops the app: the first request then does the work itself
        log.exception("warm-up failed")
    gc.collect()
    gc.freeze()


def _stop_work_on_signals() -> None:
    """On SIGTERM / SIGINT, interrupt the requests in flight (app.budget.close) before the server's own handler
    runs: it waits for open requests, and they then end within a tick instead of running to their budgets."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(sig)
        if getattr(previous, "__layoutlab_close__", False) or not callable(previous):
            continue

        def handler(signum, frame, previous=previous):
            budget.close()
            previous(signum, frame)

        handler.__layoutlab_close__ = True
        signal.signal(sig, handler)


def _storage_errors() -> tuple[type[Exception], ...]:
    """The exception types a full data volume raises through (storage.volume.disk_full decides). PostgreSQL's
    ``DiskFull`` is named itself: it is an OperationalError, which app.outage answers as an unreachable backend."""
    import sqlite3

    errs: list[type[Exception]] = [sqlite3.Error, OSError]
    try:
        from psycopg.errors import DiskFull

        errs.append(DiskFull)
    except ImportError:
        pass
    return tuple(errs)


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None
