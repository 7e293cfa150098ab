"""No escape hatch from the work budget: an ``async`` route, an async dependency of a route, or an app-level
exception handler runs on the event loop, where the watchdog cannot stop it, so it may only await I/O.

``async_handlers`` lists every coroutine function the app runs on its event loop for a request; ``work_calls`` reads
each one's source with ``ast`` and follows the calls it makes into the project's own code (app/, storage/), function
by function, and reports any call into ``algebra/``, ``app/services/`` or ``app/drills/`` that it reaches (a name
imported from those packages, an attribute of one of their modules, or an import of them inside a body). The checker
is itself tested on functions that break the rule, so the test cannot pass by seeing nothing.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import inspect
import textwrap
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from app.budget import WORK_PACKAGES, light

#: Project packages whose functions the walk follows (their calls are part of the route's call graph).
FOLLOW = ("app", "storage")


def _in(module: str | None, packages: tuple[str, ...]) -> bool:
    return isinstance(module, str) and any(module == p or module.startswith(p + ".") for p in packages)


def _home(obj: Any) -> str | None:
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return getattr(obj, "__module__", None)


def _scope(fn: Callable) -> dict[str, Any]:
    scope = dict(getattr(fn, "__globals__", {}))
    code = getattr(fn, "__code__", None)
    for name, cell in zip(code.co_freevars if code else (), getattr(fn, "__closure__", None) or (), strict=False):
        try:
            scope[name] = cell.cell_contents
        except ValueError:
            continue
    return scope


def _resolve(node: ast.expr, scope: dict[str, Any], local_imports: dict[str, str]) -> tuple[str | None, Any]:
    """(the module the callee lives in, the callee object when it can be found) for a call's ``func``."""
    chain: list[str] = []
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None, None
    chain.append(node.id)
    chain.reverse()
    if chain[0] in local_imports:
        target = local_imports[chain[0]]
        try:
            obj: Any = importlib.import_module(target)
        except ImportError:
            module, _, attr = target.rpartition(".")
            try:
                obj = getattr(importlib.import_module(module), attr)
            except (ImportError, AttributeError):
                return target, None
    elif chain[0] in scope:
        obj = scope[chain[0]]
    else:
        return None, None
    home = _home(obj)
    for attr in chain[1:]:
        try:
            obj = inspect.getattr_static(obj, attr)
        except AttributeError:
            return home, None
        home = _home(obj) or home
        if isinstance(obj, staticmethod | classmethod):
            obj = obj.__func__
    return home, obj


def work_calls(fn: Callable, depth: int = 6) -> list[str]:
    """The calls into WORK_PACKAGES reachable from ``fn`` through the project's own functions (FOLLOW), each as
    ``"caller -> callee (module)"``."""
    found: list[str] = []
    seen: set[Any] = set()

    def visit(f: Callable, level: int) -> None:
        f = inspect.unwrap(f)
        code = getattr(f, "__code__", None)
        if code is None or code in seen or level > depth:
            return
        seen.add(code)
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(f)))
        except (OSError, TypeError, SyntaxError):
            return
        scope = _scope(f)
        local_imports: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    local_imports[(a.asname or a.name).split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                    if _in(a.name, WORK_PACKAGES):
                        found.append(f"{f.__qualname__} -> import {a.name}")
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    local_imports[a.asname or a.name] = f"{node.module}.{a.name}"
                    if _in(node.module, WORK_PACKAGES) or _in(f"{node.module}.{a.name}", WORK_PACKAGES):
                        found.append(f"{f.__qualname__} -> from {node.module} import {a.name}")
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            home, obj = _resolve(node.func, scope, local_imports)
            if _in(home, WORK_PACKAGES):
                found.append(f"{f.__qualname__} -> {ast.unparse(node.func)} ({home})")
            elif _in(home, FOLLOW) and obj is not None:
                target = obj.__init__ if isinstance(obj, type) else obj
                if inspect.isfunction(target) or inspect.ismethod(target):
                    visit(target, level + 1)

    visit(fn, 0)
    return sorted(set(found))


def _dependency_calls(dependant: Any) -> Iterator[Callable]:
    for dep in dependant.dependencies:
        if dep.call is not None:
            yield dep.call
        yield from _dependency_calls(dep)


def async_handlers(app: Any) -> Iterator[tuple[str, Callable]]:
    """Every coroutine function the app awaits on its event loop for a request: route endpoints (FastAPI's and
    Starlette's), their async dependencies, and the exception handlers."""
    from fastapi.routing import APIRoute
    from starlette.routing import Route

    from app.budget import api_routes

    for route in list(api_routes(app.routes)) + [r for r in app.routes if type(r) is Route]:
        endpoint = inspect.unwrap(route.endpoint)
        name = f"{','.join(sorted(route.methods or ()))} {route.path}"
        if asyncio.iscoroutinefunction(endpoint):
            yield name, endpoint
        if isinstance(route, APIRoute):
            for call in _dependency_calls(route.dependant):
                if asyncio.iscoroutinefunction(inspect.unwrap(call)):
                    yield f"{name} (dependency {call.__qualname__})", call
    for exc, handler in app.exception_handlers.items():
        if asyncio.iscoroutinefunction(handler):
            yield f"exception handler for {getattr(exc, '__name__', exc)}", handler


@pytest.fixture(scope="module")
def the_app():
    from app.main import create_app

    return create_app()


def test_no_async_route_or_handler_calls_into_the_algebra_services_or_drills(the_app):
    handlers = list(async_handlers(the_app))
    names = " | ".join(n for n, _ in handlers)
    assert "GET /healthz" in names and "exception handler" in names  # the walk sees what it must
    assert "POST /lab/jobs (dependency" in names  # the lab form: only its body is awaited on the loop
    bad = {name: calls for name, fn in handlers if (calls := work_calls(fn))}
    assert not bad, f"async code on the event loop calls into {WORK_PACKAGES}: {bad}"


def test_every_async_endpoint_is_marked_light_and_no_sync_one_is(the_app):
    from app.budget import api_routes

    for route in api_routes(the_app.routes):
        endpoint = inspect.unwrap(route.endpoint)
        is_async = asyncio.iscoroutinefunction(endpoint)
        assert is_async == bool(getattr(endpoint, "__layoutlab_light__", False)), route.path



def test_only_healthz_and_the_favicon_are_async_endpoints(the_app):
    """Every route of the app, FastAPI's own ``/openapi.json`` and the docs pages included, is a plain function (run
    in a worker thread) except the two O(1) answers: ``/openapi.json`` built its 0.5 s schema on the event loop
    when the start-up warm-up had not (LAYOUTLAB_WARM=0, or a warm-up that failed)."""
    from starlette.routing import Route

    endpoints = {r.path: inspect.unwrap(r.endpoint) for r in the_app.routes if isinstance(r, Route)}
    assert {"/openapi.json", "/docs", "/redoc", "/healthz"} <= set(endpoints)
    on_the_loop = sorted(path for path, fn in endpoints.items() if asyncio.iscoroutinefunction(fn))
    assert on_the_loop == ["/favicon.ico", "/healthz"]


def test_the_docs_routes_answer_from_a_worker_thread(tmp_path, monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    monkeypatch.setenv("LAYOUTLAB_WARM", "0")
    from fastapi.testclient import TestClient

    from app.main import create_app

    app = create_app()
    with TestClient(app, base_url="http://localhost") as c:
        schema = c.get("/openapi.json")
        assert schema.status_code == 200 and schema.json()["info"]["title"] == "LayoutLab"
        assert schema.json() == app.openapi()
        for path in ("/docs", "/redoc"):
            r = c.get(path)
            assert r.status_code == 200 and "/openapi.json" in r.text, path
        assert c.head("/openapi.json").status_code == 200

# ---------------------------------------------------------------------------------------------- the checker itself
def _calls_the_algebra_directly():
    import algebra as A

    return A.parse("(4,8):(8,1)")


def _helper_in_the_app(text: str):
    from app.services import layouts

    return layouts


async def _bad_route_direct(text: str):
    return _calls_the_algebra_directly()


async def _bad_route_nested(text: str):
    return _helper_in_the_app(text)


async def _good_route(request: Any):
    body = await request.body()
    return {"bytes": len(body)}


_bad_route_direct.__module__ = _bad_route_nested.__module__ = "app.fake_routes"  # as if the app defined them
_calls_the_algebra_directly.__module__ = _helper_in_the_app.__module__ = "app.fake_routes"


def test_the_checker_finds_direct_and_reachable_calls():
    assert any("import algebra" in c for c in work_calls(_calls_the_algebra_directly))
    assert work_calls(_bad_route_direct), "a call through an app function into the algebra is reached"
    assert any("app.services" in c for c in work_calls(_bad_route_nested))
    assert work_calls(_good_route) == []
    from app.routes import pages_lab

    assert any("app.services" in c for c in work_calls(pages_lab.lab_submit))  # the sync handler does work ...
    assert work_calls(pages_lab.form_fields) == []  # ... its async dependency only awaits the body


def test_light_is_checked_where_it_is_put():
    from app.services import bench as S

    async def submits(kind: str):
        return S.submit(kind, {})

    async def imports():
        from algebra import parse

        return parse("4:1")

    def plain():
        return {"ok": True}

    for fn, why in ((submits, "S (app.services.bench)"), (imports, "algebra"), (plain, "async endpoints")):
        with pytest.raises(TypeError, match=why.replace("(", r"\(").replace(")", r"\)")):
            light(fn)

    async def health():
        return {"ok": True}

    assert light(health) is health and health.__layoutlab_light__
