"""A lab safe to expose: the signed client cookie, jobs cancelled only by their submitter or the lab admin (403
otherwise), 429 on a burst (per client and per address), 503 at the queue-depth cap, compile defines bounded, device
status without hosts, pids or paths, nvcc's version computed once, and the build cache's LRU eviction."""

from __future__ import annotations

import os
import shutil
import time

import pytest
from fastapi.testclient import TestClient

from app.services import lab_clients


@pytest.fixture()
def app(tmp_path, monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    monkeypatch.delenv("LAYOUTLAB_REDIS_URL", raising=False)
    monkeypatch.delenv("LAYOUTLAB_DATABASE_URL", raising=False)
    monkeypatch.setenv("LAYOUTLAB_EMBEDDED_WORKER", "0")
    monkeypatch.setenv("LAYOUTLAB_ADMIN_TOKEN", "admin-secret-token")
    from app.main import create_app
    from gpu_worker.store import get_store

    # a live worker record (no worker runs): compile_only jobs are accepted and stay queued
    get_store().heartbeat({"id": "w-test", "host": "gpu-host-7", "pid": 4242,
                           "device": {"available": False, "reason": "no GPU", "toolkit": {"nvcc": "/opt/secret/nvcc"}},
                           "kinds": ["compile_only"], "busy": None})
    return create_app()


def _client(app) -> TestClient:
    return TestClient(app)


def _submit(c: TestClient, **params):
    return c.post("/api/bench/jobs", json={"kind": "compile_only", "params": {"nvcc": "skip", **params}})


def test_first_response_sets_a_signed_cookie_and_a_forged_one_is_replaced(app):
    with _client(app) as c:
        r = c.get("/api/bench/device")
        cookie = r.cookies.get(lab_clients.COOKIE)
        assert cookie and lab_clients.verify(cookie)
        assert "HttpOnly" in r.headers["set-cookie"] and "SameSite=Lax" in r.headers["set-cookie"]
        assert lab_clients.COOKIE not in c.get("/api/bench/device").headers.get("set-cookie", "")  # kept, not reset
        from app.drills import identity

        assert lab_clients.verify(identity.sign(lab_clients.verify(cookie))) is None  # a learner id is no lab client
        from app.drills.store import valid_learner

        assert identity.unsign(cookie) and not valid_learner(identity.unsign(cookie))  # nor the reverse
        # replaced where the server set it (a second cookie of the same name on another domain would be sent beside
        # it, and which one the server reads depends on the client's order)
        c.cookies.set(lab_clients.COOKIE, cookie[:-2] + "xx", domain=next(iter(c.cookies.jar)).domain)
        forged = c.get("/lab")
        assert lab_clients.verify(forged.cookies.get(lab_clients.COOKIE)) not in (None, lab_clients.verify(cookie))


def test_only_the_submitter_or_the_admin_cancels(app):
    with _client(app) as alice, _client(app) as bob:
        jobs = [_submit(alice).json()["id"] for _ in range(3)]
        listed = {j["id"]: j for j in bob.get("/api/bench/jobs").json()}
        assert not listed[jobs[0]]["mine"] and "client" not in listed[jobs[0]]
        r = bob.post(f"/api/bench/jobs/{jobs[0]}/cancel")
        assert r.status_code == 403 and "another client" in r.json()["detail"]
        assert alice.get(f"/api/bench/jobs/{jobs[0]}").json()["status"] == "queued"
        page = bob.post(f"/lab/jobs/{jobs[0]}/cancel")
        assert page.status_code == 403 and "another client" in page.text
        anon = TestClient(app)
        assert anon.post(f"/api/bench/jobs/{jobs[0]}/cancel", headers={"Authorization": "Bearer wrong"}).status_code \
            == 403
        assert alice.get(f"/api/bench/jobs/{jobs[0]}").json()["mine"] is True
        assert alice.post(f"/api/bench/jobs/{jobs[0]}/cancel").json()["error"] == "cancelled by user"
        admin = anon.post(f"/api/bench/jobs/{jobs[1]}/cancel", headers={"Authorization": "Bearer admin-secret-token"})
        assert admin.status_code == 200 and admin.json()["status"] == "failed"
        assert anon.post(f"/api/bench/jobs/{jobs[2]}/cancel", headers={"X-Admin-Token": "admin-secret-token"}) \
            .status_code == 200
        assert bob.post("/api/bench/jobs/nope/cancel").status_code == 404


def test_a_script_presents_its_signed_id_in_a_header(app):
    with _client(app) as c:
        job = _submit(c).json()["id"]
        token = c.cookies.get(lab_clients.COOKIE)
    script = TestClient(app)  # no cookie jar shared with the browser
    assert script.post(f"/api/bench/jobs/{job}/cancel", headers={"X-LayoutLab-Client": token + "x"}).status_code \
        == 403
    r = script.post(f"/api/bench/jobs/{job}/cancel", headers={"X-LayoutLab-Client": token})
    assert r.status_code == 200 and r.json()["mine"] and "set-cookie" not in r.headers


def test_a_burst_from_one_client_meets_429(app, monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_LAB_RATE", "5/60")
    with _client(app) as c:
        codes = [_submit(c, tag=str(i)).status_code for i in range(8)]
        assert codes == [202] * 5 + [429] * 3
        r = _submit(c)
        assert "5 per 60 s" in r.json()["detail"] and 1 <= int(r.headers["Retry-After"]) <= 60
        assert _submit(c, defines={"NACC": 1}).status_code == 429  # over the limit: refused before any validation
        with _client(app) as other:  # another client still gets in
            assert _submit(other).status_code == 202
        form = c.post("/lab/jobs", data={"kind": "compile_only"})
        assert form.status_code == 429 and "too many submissions" in form.text
        assert 1 <= int(form.headers["Retry-After"]) <= 60


def test_by_default_one_client_queues_twenty_jobs_in_a_burst(app, monkeypatch):
    """A class's demo (20 compile_only jobs over two GPUs, from one script's session) fits the default per-client
    limit; the 25th in the same minute meets 429."""
    monkeypatch.delenv("LAYOUTLAB_LAB_RATE", raising=False)
    monkeypatch.delenv("LAYOUTLAB_LAB_ADDRESS_RATE", raising=False)
    with _client(app) as c:
        codes = [_submit(c, tag=str(i)).status_code for i in range(25)]
    assert codes == [202] * 24 + [429]


def test_refused_submissions_count_against_the_limit(app, monkeypatch):
    """A submission refused for its parameters (422, through the JSON route or the lab form) costs validation work,
    so it counts like an accepted one: a client that keeps sending bad layouts meets 429 without further work. A
    body that names no known kind is refused before anything is computed and counts nothing."""
    monkeypatch.setenv("LAYOUTLAB_LAB_RATE", "4/60")
    with _client(app) as c:
        bad = [_submit(c, defines={"NACC": 1}), c.post("/lab/jobs", data={"kind": "smem", "rows": "5000"})]
        assert [r.status_code for r in bad] == [422, 422] and "NACC" in bad[0].json()["detail"]
        unknown = c.post("/api/bench/jobs", json={"kind": "no-such-kind", "params": {}})
        assert unknown.status_code == 422 and "unknown kind" in unknown.json()["detail"]
        assert [_submit(c, tag=str(i)).status_code for i in range(3)] == [202, 202, 429]  # 2 refused + 2 accepted
        assert c.post("/lab/jobs", data={"kind": "smem", "rows": "5000"}).status_code == 429


def test_clients_without_cookies_share_their_address_limit(app, monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_LAB_ADDRESS_RATE", "6/60")
    codes = []
    for i in range(9):
        with _client(app) as fresh:  # a new client (no cookie) each time, from one address
            codes.append(_submit(fresh, tag=str(i)).status_code)
    assert codes == [202] * 6 + [429] * 3


def test_rate_counters_do_not_pile_up(app):
    from gpu_worker.store import history_store

    store = history_store()
    for i in range(200):  # 200 clients, one submission each
        assert store.admit([(f"client:{i}", 10, 60)], now=1000.0) is None
    assert store.rate_rows() == 200
    assert store.admit([("client:late", 10, 60)], now=1007.0) is None  # their buckets are full again: dropped
    assert store.rate_rows() == 1


def test_a_burst_that_crosses_a_minute_is_still_one_burst(app):
    """The limit holds whenever a burst begins: 4 per 60 s admits 4 at 59.5 s and refuses the 5th at 60.5 s (a fixed
    window reset there), then admits one every 15 s; both rules of one submission count it or neither does."""
    from gpu_worker.store import history_store

    store = history_store()
    rules = [("client:c", 10, 60), ("addr:a", 4, 60)]
    assert [store.admit(rules, now=59.5) for _ in range(4)] == [None] * 4
    assert store.admit(rules, now=60.5) == ("addr:a", pytest.approx(14.0))
    assert store.admit([("client:c", 10, 60)], now=60.5) is None  # the refusal did not count for the client
    burst = [store.admit([("client:c", 10, 60)], now=60.5) for _ in range(6)]
    assert burst == [None] * 5 + [("client:c", pytest.approx(5.0))]  # 10 in all; the next at 65.5 s
    assert store.admit(rules, now=74.6) is None and store.admit(rules, now=74.7) is not None


def test_queue_depth_cap_answers_503(app, monkeypatch):
    from gpu_worker import service

    monkeypatch.setattr(service, "QUEUE_MAX", 3)
    with _client(app) as a, _client(app) as b:
        assert [_submit(a).status_code for _ in range(3)] == [202] * 3
        r = _submit(b)
        assert r.status_code == 503 and "queue is full" in r.json()["detail"] and "cap 3" in r.json()["detail"]
        assert a.get("/api/bench/device").json()["queue_depth"] == 3


@pytest.mark.parametrize("params", [{"defines": {"NACC": 2147483647}},
                                    {"template": "smem", "defines": {"NACC": 2147483647}},
                                    {"template": "smem", "defines": {"ELEM_BYTES": 3}},
                                    {"template": "transpose", "defines": {"PAD": 100}},
                                    {"template": "noop", "defines": {"VALUE": 1 << 40}}])
def test_compile_defines_are_bounded(app, params):
    with _client(app) as c:
        r = c.post("/api/bench/jobs", json={"kind": "compile_only", "params": params})
        assert r.status_code == 422 and "compile-time constant" in r.json()["detail"]
        ok = {"template": "smem", "defines": {"NACC": 32, "ELEM_BYTES": 16}}
        assert c.post("/api/bench/jobs", json={"kind": "compile_only", "params": ok}).status_code == 202


def test_device_status_hides_hosts_pids_and_paths_without_the_admin_token(app):
    with _client(app) as c:
        public = c.get("/api/bench/device")
        d = public.json()
        assert {"available", "name", "driver", "reason", "queue_depth", "workers"} <= set(d)
        assert [{k: w[k] for k in ("id", "busy", "available", "name", "gpu_index", "job")} for w in d["workers"]] == [
            {"id": "w-test", "busy": False, "available": False, "name": None, "gpu_index": None, "job": None}]
        assert set(d["toolkit"]) == {"available", "version"} and "local" not in d
        for secret in ("gpu-host-7", "4242", "/opt/secret", '"pid"', '"host"', "nvcc\":"):
            assert secret not in public.text, secret
        page = c.get("/lab").text
        assert "gpu-host-7" not in page and "/opt/secret" not in page and "queue: 0 of" in page
        admin = c.get("/api/bench/device", headers={"Authorization": "Bearer admin-secret-token"}).json()
        assert admin["workers"][0]["host"] == "gpu-host-7" and admin["workers"][0]["pid"] == 4242
        assert "nvcc" in admin["toolkit"] and "local" in admin


def test_nvcc_version_is_computed_once(app):
    from gpu_worker import build

    nvcc = build.find_toolkit().nvcc
    if nvcc is None:
        pytest.skip("no nvcc")
    with _client(app) as c:
        c.get("/lab")
        before = build._version_of.cache_info()
        for _ in range(3):
            c.get("/lab")
            c.get("/api/bench/device")
        after = build._version_of.cache_info()
    assert after.misses == before.misses and after.hits > before.hits


def _entry(root, name: str, mb: float, age_s: float) -> None:
    d = root / name
    d.mkdir()
    (d / "bin").write_bytes(b"\0" * int(mb * (1 << 20)))
    t = time.time() - age_s
    os.utime(d, (t, t))


def test_build_cache_evicts_least_recently_used_under_its_cap(tmp_path, monkeypatch):
    from gpu_worker import build

    monkeypatch.setenv("LAYOUTLAB_BUILD_DIR", str(tmp_path / "cache"))
    root = build.cache_dir()
    for i, name in enumerate(["a", "b", "c", "d"]):  # a oldest
        _entry(root, name, 1.0, 400 - 100 * i)
    build.mark_used(root / "a")  # a hit makes "a" the newest
    monkeypatch.setenv("LAYOUTLAB_BUILD_CACHE_MB", "2.5")
    assert build.evict() == ["b", "c"]
    assert sorted(p.name for p in root.iterdir()) == ["a", "d"]
    assert build.evict(cap_bytes=0, keep=root / "d") == ["a"]  # the entry just built is kept even over the cap


@pytest.mark.nvcc
def test_builds_stay_under_the_cache_cap(tmp_path, monkeypatch):
    from gpu_worker import build

    if build.find_toolkit().nvcc is None or shutil.which("nvcc") is None:
        pytest.skip("no nvcc")
    monkeypatch.setenv("LAYOUTLAB_BUILD_DIR", str(tmp_path / "cache"))
    first = build.build_kernel("noop", {"VALUE": 1})
    size = build._size(first.path.parent)
    monkeypatch.setenv("LAYOUTLAB_BUILD_CACHE_MB", str(1.5 * size / (1 << 20)))  # room for one binary, not two
    second = build.build_kernel("noop", {"VALUE": 2})
    assert not first.path.exists() and second.path.exists()
    assert build.build_kernel("noop", {"VALUE": 2}).cached
    assert sum(build._size(p) for p in build.cache_dir().iterdir()) <= 1.5 * size


def test_a_hostile_cookie_costs_the_event_loop_nothing_and_the_client_is_still_read(app):
    """The lab's client middleware runs on the event loop, outside the work budget: it read the Cookie header with
    http.cookies, whose unquoting is quadratic on this Python (CVE-2024-7592), so one 8 kB cookie of backslashes
    within the header limits cost 0.35 s of loop time a request (40 of them held /healthz for 10 s on a served app).
    It reads its one cookie in one linear pass now; the client id is found beside any other cookies."""
    import contextlib

    client = "k3y-of-the-client"
    signed = lab_clients.sign(client)
    seen: list = []

    async def inner(scope, receive, send):
        seen.append(scope["state"]["lab_client"])

    middleware = lab_clients.LabClientMiddleware(inner)
    hostile = 'a="' + "\\\\" * 4085 + '"'
    for cookie, expect in [(hostile, None), (f"{hostile}; {lab_clients.COOKIE}={signed}", client),
                           (f'{lab_clients.COOKIE}="{signed}"; x=1', client), (f" x=1 ;{lab_clients.COOKIE}={signed} ",
                                                                               client),
                           (f"{lab_clients.COOKIE}=forged; x=1", None), ("; ; =;==", None)]:
        scope = {"type": "http", "path": "/api/bench/jobs", "headers": [(b"cookie", cookie.encode())]}
        start = time.thread_time()  # this thread's CPU only (the quadratic read took 0.35 s, a linear one < 1 ms)
        with contextlib.suppress(StopIteration):  # the middleware and ``inner`` never wait: one step runs them
            middleware(scope, None, None).send(None)  # (no event loop: a test before may have left one running)
        spent = time.thread_time() - start
        assert spent < 0.15, f"{spent:.3f} s of event-loop CPU for a {len(cookie)}-byte cookie"
        assert (seen[-1] == client) if expect else (seen[-1] != client and len(seen[-1]) >= 16), cookie[:60]
