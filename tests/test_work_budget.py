"""The one work budget (app.budget): every route runs under it, estimates refuse before the work, and the watchdog
stops a handler that runs past its CPU budget, whatever the handler does."""

from __future__ import annotations

import sys
import threading
import time
import types

import pytest
from fastapi import APIRouter, FastAPI
from fastapi.testclient import TestClient

from app import budget
from app.budget import BudgetedRoute, WorkCapError, api_routes, charge, unbudgeted_routes, within_budget
from app.main import create_app


def test_every_route_of_the_app_is_budgeted():
    app = create_app()
    assert unbudgeted_routes(app) == []
    assert sum(isinstance(r, BudgetedRoute) for r in api_routes(app.routes)) >= 40


def test_a_router_without_the_budget_stops_the_app_from_starting(monkeypatch):
    mod = types.ModuleType("app.routes._forgot_budget")
    mod.router = APIRouter()

    @mod.router.get("/forgot")
    def forgot() -> dict:
        return {}

    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    import app.main as main

    monkeypatch.setattr(main, "ROUTERS", [*main.ROUTERS, mod.__name__])
    with pytest.raises(RuntimeError, match="GET /forgot"):
        main.create_app()


def test_an_async_endpoint_must_be_marked_light():
    router = APIRouter(route_class=BudgetedRoute)
    with pytest.raises(TypeError, match="event loop"):
        @router.get("/heavy")
        async def heavy() -> dict:
            return {}


def _app_with(endpoint) -> TestClient:
    app = FastAPI()
    app.router.route_class = BudgetedRoute

    @app.exception_handler(WorkCapError)
    async def _cap(request, exc):
        from fastapi.responses import JSONResponse
        return JSONResponse({"detail": str(exc)}, status_code=422)

    router = APIRouter(route_class=BudgetedRoute)  # through an included router, as every route of the app is
    router.get("/work")(endpoint)
    app.include_router(router)
    return TestClient(app)


def _spin_forever() -> dict:
    x = 0
    while True:
        x += 1


def _spin_and_swallow() -> dict:
    while True:  # a service that catches Exception cannot swallow the interruption (a BaseException)
        try:
            sum(range(1000))
        except Exception:  # noqa: BLE001
            pass


@pytest.mark.parametrize("endpoint", [_spin_forever, _spin_and_swallow])
def test_a_handler_past_its_cpu_budget_is_stopped_with_a_4xx(endpoint, monkeypatch):
    monkeypatch.setattr(budget, "CPU_SECONDS", 0.3)
    client = _app_with(endpoint)
    t0 = time.process_time()
    r = client.get("/work")
    spent = time.process_time() - t0
    assert r.status_code == 422
    assert "work budget of 0.3 s of server CPU" in r.json()["detail"]
    assert spent < 1.0
    assert budget.running() == []


def test_no_interruption_leaks_into_the_next_request(monkeypatch):
    """Handlers that end right at their budget, many times: the next request on the same threads never sees a
    stray interruption."""
    monkeypatch.setattr(budget, "CPU_SECONDS", 0.04)

    def near_budget() -> dict:
        t = time.thread_time()
        while time.thread_time() - t < 0.035:
            pass
        return {"ok": True}

    client = _app_with(near_budget)
    codes = {client.get("/work").status_code for _ in range(30)}
    assert codes <= {200, 422}
    for _ in range(20):
        assert client.get("/work").status_code in (200, 422)
    t = time.thread_time()
    while time.thread_time() - t < 0.3:  # this thread never ran a budget: nothing may land here
        pass


def test_charge_refuses_before_the_work_and_names_the_cap():
    with within_budget():
        charge("integer cell", 1 << 20, "layout table")
        with pytest.raises(WorkCapError, match=r"over the work cap of 262,144 swizzled cells per request"):
            charge("swizzled cell", 1 << 18, "swizzled table")
    with pytest.raises(WorkCapError, match="coordinate cells"):
        charge("coordinate cell", 1 << 20, "coordinate table")
    charge("coordinate cell", 1 << 10, "outside a request a charge under the cap passes")


def test_interrupt_all_stops_every_running_request(monkeypatch):
    monkeypatch.setattr(budget, "CPU_SECONDS", 60.0)
    results: list[int] = []

    def run():
        results.append(_app_with(_spin_forever).get("/work").status_code)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 10
    while len(budget.running()) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert budget.interrupt_all("the server is shutting down") == 3
    for t in threads:
        t.join(timeout=10)
    assert results == [422, 422, 422]


def test_sigterm_ends_the_server_within_seconds_with_heavy_work_in_flight(tmp_path):
    """A real server with a generous budget (30 s) busy on a heavy explorer page exits within a few seconds of
    SIGTERM: the request in flight is interrupted, not run to its end."""
    import os
    import signal
    import socket
    import subprocess

    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, LAYOUTLAB_DATA=str(tmp_path), LAYOUTLAB_CPU_BUDGET_S="30", LAYOUTLAB_EMBEDDED_WORKER="0",
               LAYOUTLAB_WORK_UNITS=str(1 << 30))  # estimates off: the page below then takes seconds
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port", str(port), "--no-worker"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        answers: list[int] = []

        def hit():  # 2^20 coordinate cells with a negative basis value (no integer shortcut for its table): over
            # ten seconds of work with the estimates off
            try:
                page = httpx.get(f"{url}/", params={"layout": "(1024,1024):(1@0,-1@1)"}, timeout=60)
                answers.append(page.status_code)
            except httpx.HTTPError:
                answers.append(-1)

        t = threading.Thread(target=hit)
        t.start()
        time.sleep(1.0)  # the request is in flight, seconds from its end
        assert not answers
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
        took = time.monotonic() - t0
        t.join(timeout=5)
        assert took < 5, f"the server took {took:.1f} s to exit"
        assert answers and answers[0] in (503, -1)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_the_app_enumerates_layouts_only_through_the_budget():
    """``app.budget.offsets`` charges before it enumerates; a service calling ``A.offsets`` directly would skip the
    estimate. (The watchdog still stops it; this keeps the 4xx that names the cap.)"""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "app"
    direct = []
    for path in root.rglob("*.py"):
        if path.name == "budget.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "offsets"
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in ("A", "algebra")):
                direct.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    assert direct == []


def test_many_modes_on_the_explorer_are_refused_by_estimate_not_by_the_watchdog(monkeypatch):
    """64 column modes over 2^15 columns: the hover data would be ~16 MB; the estimate names the cap at once, and
    the view keeps its facts and table (the grid alone is not drawn)."""
    monkeypatch.setattr(budget, "CPU_SECONDS", 30.0)
    from app.services.layouts import describe_layout, layout_grid

    shape = ",".join(["2"] * 16 + ["1"] * 48)
    text = f"({shape}):({','.join(['1'] * 64)})"
    t0 = time.process_time()
    with within_budget():
        big = describe_layout(text)
    assert time.process_time() - t0 < 0.5
    assert big.size == 1 << 16 and big.offsets is not None and layout_grid(big, "g") is None
    assert "over the work cap of 2,097,152 rendered bytes: the grid is not drawn" in big.note
    view = describe_layout("(4,2,3,2):(1,4,8,24)")  # mixed radix over three column modes, mode 0 fastest
    assert view.col_crd[:3] == [["0", "0", "0"], ["1", "0", "0"], ["0", "1", "0"]]
    assert all(view.row_off[1] + sum(view.col_off[j]) == view.offsets[1][j] for j in range(view.cols))


def test_interruptions_anywhere_leave_the_app_whole(monkeypatch):
    """Handlers cut at arbitrary points (budgets of a few ms, over pages, drills, the whiteboard and the doctor):
    afterwards, with the usual budget, every route answers as in a fresh process (no half-loaded registry, no lost
    connection, no stuck lock)."""
    app = create_app()
    client = TestClient(app)
    urls = ["/api/drills/whiteboard", "/drills?kind=banks&seed={i}", "/api/drills/offsets-{i}/answer",
            "/banks?layout=(64,64):(64,1)&element_bytes=2&swizzle=Sw<3,3,{k}>", "/?layout=(64,{j}):({j},1)",
            "/algebra?op=logical_divide&a=(64,{j}):({j},1)&b=(8,8):(1,8)", "/doctor", "/api/drills/kinds"]

    def sweep(n: int) -> list[int]:
        codes = []
        for i in range(n):
            for u in urls:
                path = u.format(i=i, k=i % 5, j=32 + i)
                post = "whiteboard" in path or "answer" in path
                r = client.post(path, json={"answer": "3"} if "answer" in path else {}) if post else client.get(path)
                codes.append(r.status_code)
        return codes

    for cpu in (0.002, 0.01):
        monkeypatch.setattr(budget, "CPU_SECONDS", cpu)
        assert set(sweep(4)) <= {200, 422}
    monkeypatch.setattr(budget, "CPU_SECONDS", 5.0)
    assert set(sweep(2)) == {200}
    kinds = client.get("/api/drills/kinds").json()
    assert len(kinds) >= 19


def test_an_interruption_waits_while_a_cache_updates_but_not_in_a_memoized_op(monkeypatch):
    """A thread inside BoundedCache.put (its entry and byte count change together) or inside the ast module is
    shielded; a thread running an op under the memo's wrapper is not (the memo module as a whole is not shielded)."""
    import ast

    from algebra.core import memo

    inside, release = threading.Event(), []

    def stall(*_args, **_kwargs):  # waits in this module's frame, not in threading's (itself shielded)
        inside.set()
        deadline = time.monotonic() + 10
        while not release and time.monotonic() < deadline:
            time.sleep(0.001)
        return 1

    def run(fn):
        def endpoint():  # stands for the budgeted endpoint: the frames below it (threading's) are not looked at
            fn()

        monkeypatch.setattr(budget, "_RUN_CODE", endpoint.__code__)
        inside.clear()
        release.clear()
        t = threading.Thread(target=endpoint)
        t.start()
        assert inside.wait(10)
        try:
            return budget._shielded(t.ident)
        finally:
            release.append(True)
            t.join(10)

    monkeypatch.setattr(memo, "approx_bytes", stall)
    assert run(lambda: memo.BoundedCache(1 << 20).put("k", "v")) is True
    assert run(lambda: memo.memo(lambda x: stall())(7)) is False
    assert run(lambda: stall()) is False
    monkeypatch.setattr(ast, "parse", lambda *a, **k: (stall(), ast.Expression(body=ast.Constant(1)))[1])
    assert run(lambda: ast.literal_eval("1")) is True  # inside the ast module (here its literal_eval)


def test_an_interrupted_request_leaves_profilers_and_tracers_working():
    """After the watchdog cut a request, a function called under ``sys.setprofile`` or ``sys.settrace`` returns. The
    release used to drop a pending interruption with ``PyThreadState_SetAsyncExc(ident, NULL)``, which on CPython 3.11
    leaves the eval loop's breaker set for the whole process: the next call under a profiler spun forever on its first
    instruction (this file, then tests/test_algebra_post.py's module count, hung). In a child process, so that a
    regression fails here within its timeout instead of hanging the suite."""
    import subprocess
    import textwrap
    from pathlib import Path

    code = textwrap.dedent("""
        import sys, threading
        from app import budget
        budget.CPU_SECONDS = 0.05
        cut = []

        def work():
            while True:
                pass

        handler = budget._budgeted(work)  # as a route runs it: the watchdog looks at the frames below its wrapper

        def spin():
            try:
                handler()
            except budget.WorkCapError:
                cut.append(True)

        for _ in range(3):
            t = threading.Thread(target=spin)
            t.start()
            t.join(30)

        def f():
            return 1

        sys.setprofile(lambda *a: None)
        f()
        sys.setprofile(None)
        sys.settrace(lambda *a: None)
        f()
        sys.settrace(None)
        print("cut", len(cut))
    """)
    root = Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["cut", "3"]
