"""The front door (issue 29, the app's half): the lab form validates under the work budget through the JSON route's
function and caps; a full data volume answers writes 503 with Retry-After while reads go on; only allowed Host names
are answered (DNS rebinding).

The full-volume tests mount a real tmpfs (root only; skipped otherwise, with the reason); the live-server tests run
``layoutlab serve`` in a subprocess and measure its CPU from /proc (the acceptance bounds of the issue, far above what
the refusals cost: they are refused before any cell is evaluated)."""

from __future__ import annotations

import errno
import os
import re
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from app import hosts
from gpu_worker import patterns
from storage import volume

ROOT = Path(__file__).resolve().parent.parent


def _unit_modes(n: int, rows: int = 64, cols: int = 64, swizzle: str = "Sw<3,4,3> o ") -> str:
    """A swizzled rows x cols tile written with ``n`` size-1 modes in each of its two modes."""
    ones, zeros = "1," * n, "0," * n
    return f"{swizzle}(({ones}{rows}),({ones}{cols})):(({zeros}{cols}),({zeros}1))"


# ------------------------------------------------------------------------------------------ the lab form's caps
@pytest.fixture()
def lab_app(tmp_path, monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    monkeypatch.setenv("LAYOUTLAB_EMBEDDED_WORKER", "0")
    monkeypatch.setenv("LAYOUTLAB_LAB_RATE", "1000/60")
    monkeypatch.setenv("LAYOUTLAB_LAB_ADDRESS_RATE", "1000/60")
    monkeypatch.delenv("LAYOUTLAB_REDIS_URL", raising=False)
    monkeypatch.delenv("LAYOUTLAB_DATABASE_URL", raising=False)
    from app.main import create_app

    return create_app()


CAPPED = [  # (form fields, JSON params, what the refusal names)
    ({"variant": "custom", "layout": _unit_modes(300)}, {"variant": "custom", "layout": _unit_modes(300)},
     f"over the cap of {patterns.MAX_MODES} modes"),
    ({"variant": "naive", "access": "thread_layout", "thread_layout": _unit_modes(200, 4, 8, "")},
     {"variant": "naive", "access": {"kind": "thread_layout", "layout": _unit_modes(200, 4, 8, "")}},
     f"over the cap of {patterns.MAX_MODES} modes"),
    ({"variant": "custom", "layout": _unit_modes(900)}, {"variant": "custom", "layout": _unit_modes(900)},
     f"at most {patterns.MAX_LAYOUT_CHARS} characters"),
    ({"variant": "custom", "layout": "(512,512):(512,1)"}, {"variant": "custom", "layout": "(512,512):(512,1)"},
     f"over the cap of {patterns.MAX_ELEMENTS} elements"),
]


@pytest.mark.parametrize("form,params,cap", CAPPED)
def test_the_lab_form_and_the_json_route_refuse_alike_before_enumerating(lab_app, monkeypatch, form, params, cap):
    """One validation for both doors: the same 422 naming the same cap, and no cell of the layout evaluated."""
    import algebra

    def no_enumeration(*_a, **_k):
        raise AssertionError("a refused layout was enumerated")

    monkeypatch.setattr(algebra, "offsets", no_enumeration)
    with TestClient(lab_app) as c:
        api = c.post("/api/bench/jobs", json={"kind": "smem", "params": params})
        page = c.post("/lab/jobs", data={"kind": "smem", **form}, headers={"HX-Request": "true"})
    assert api.status_code == 422 and cap in api.json()["detail"], api.text[:300]
    assert page.status_code == 422 and cap in page.text, page.text[:300]


def test_a_layout_within_the_caps_is_checked_whole(lab_app):
    """Under the caps the whole check runs (a 64-mode, 64K-cell swizzled tile): the table matches the layout, and the
    job is refused only for want of a GPU worker (409), through either door."""
    import algebra as A

    text = _unit_modes(patterns.MAX_MODES // 2 - 1, 256, 256)
    canon, rows, cols, table = patterns.tile_offsets(text)
    layout = A.parse(text)
    assert (rows, cols) == (256, 256) and all(table[r][c] == layout((r, c)) for r in (0, 7, 255) for c in (0, 9, 255))
    params = {"variant": "custom", "layout": text, "element_bytes": 2}
    with TestClient(lab_app) as c:
        assert c.post("/api/bench/jobs", json={"kind": "smem", "params": params}).status_code == 409
        page = c.post("/lab/jobs", data={"kind": "smem", "variant": "custom", "layout": text, "element_bytes": "2"})
        assert page.status_code == 409 and "no live worker" in page.text


def test_bad_lab_forms_are_4xx(lab_app):
    with TestClient(lab_app) as c:
        for form in ({"kind": "smem", "access": "ldmatrix", "num": "x"}, {"kind": "nope"},
                     {"kind": "transpose", "n": "9" * 5000}, {f"f{i}": "1" for i in range(200)}):
            r = c.post("/lab/jobs", data=form)
            assert 400 <= r.status_code < 500, (form, r.status_code, r.text[:200])
        r = c.post("/lab/jobs", content=b"kind=smem&layout=\xff\xfe", headers={"content-type":
                                                                              "application/x-www-form-urlencoded"})
        assert 400 <= r.status_code < 500



def test_a_refused_job_echoes_at_most_max_echo_characters(lab_app):
    """A refusal's message is clipped as every error message is: the lab form echoed a 60,000-character kind whole,
    and 2,000 bad offsets gave a 367 kB detail."""
    from app.config import MAX_ECHO

    offsets = {"kind": "smem", "params": {"access": {"kind": "offsets", "offsets": [[{}]] * 32}}}  # 32 bad items
    with TestClient(lab_app) as c:
        page = c.post("/lab/jobs", data={"kind": "k" * 60_000}, headers={"HX-Request": "true"})
        api = c.post("/api/bench/jobs", json=offsets)
    assert page.status_code == 422 and "unknown kind" in page.text and len(page.text) < 2 * MAX_ECHO, len(page.text)
    assert api.status_code == 422 and "access.offsets.0" in api.json()["detail"], api.text[:200]
    assert len(api.json()["detail"]) < MAX_ECHO + 100, len(api.json()["detail"])


# ------------------------------------------------------------------------------------------------- live server
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def _serve(data: Path, **env_extra: str):
    """``layoutlab serve`` on a free port, its data folder ``data``; LAYOUTLAB_ALLOWED_HOSTS unset (the default as
    served) unless given. Yields (process, base URL)."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("LAYOUTLAB_ALLOWED_HOSTS", "LAYOUTLAB_REDIS_URL",
                                                            "LAYOUTLAB_DATABASE_URL")}
    env.update(LAYOUTLAB_DATA=str(data), LAYOUTLAB_EMBEDDED_WORKER="0", **env_extra)
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port", str(port), "--no-worker"], env=env,
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        yield proc, url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def _tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of ``pid`` and every process under it, from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        cpu[int(entry)] = (int(fields[11]) + int(fields[12])) / ticks
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        total += cpu.get(p, 0.0)
        todo += [child for child, parent in parents.items() if parent == p]
    return total


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to read the server's CPU time")
def test_a_lab_form_of_hundreds_of_unit_modes_is_cheap_and_healthz_answers_meanwhile(tmp_path):
    """The issue's repro (a swizzled layout of ~950 unit modes cost 26 s of CPU on the event loop and blocked
    /healthz for 49 s): now each submission costs well under 1 s of server CPU, and /healthz answers while they
    run."""
    forms = [{"kind": "smem", "variant": "custom", "layout": _unit_modes(n), "element_bytes": "4"}
             for n in (100, 300, 475)]
    forms.append({"kind": "smem", "variant": "naive", "access": "thread_layout",
                  "thread_layout": _unit_modes(450, 4, 8, "")})
    with _serve(tmp_path, LAYOUTLAB_LAB_RATE="1000/60", LAYOUTLAB_LAB_ADDRESS_RATE="1000/60") as (proc, url):
        answers: list[httpx.Response] = []
        health: list[float] = []
        done = threading.Event()

        def submit():
            with httpx.Client(base_url=url, timeout=60) as c:
                for form in forms * 3:
                    answers.append(c.post("/lab/jobs", data=form))
            done.set()

        before = _tree_cpu(proc.pid)
        t = threading.Thread(target=submit)
        t.start()
        with httpx.Client(base_url=url, timeout=10) as h:
            while not done.is_set() or not health:
                t0 = time.monotonic()
                assert h.get("/healthz").status_code == 200
                health.append(time.monotonic() - t0)
                time.sleep(0.02)
        t.join()
        spent = _tree_cpu(proc.pid) - before
    assert [r.status_code for r in answers] == [422] * len(answers)
    assert all("modes" in r.text or "characters" in r.text for r in answers)
    assert spent / len(answers) < 1.0, f"{spent:.2f} s of server CPU for {len(answers)} submissions"
    assert max(health) < 5.0, f"/healthz took {max(health):.2f} s while the submissions ran"



@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to read the server's CPU time")
def test_a_form_body_is_capped_before_it_is_decoded_on_the_event_loop(tmp_path):
    """A form is decoded on the event loop, outside the work budget: a body of just under 1 MB of percent escapes
    (``answer=%41%41...``) cost 0.2-0.3 s of server CPU each there, and 8 at once held /healthz for 1.6 s. Every
    form route now refuses a form body over MAX_FORM_BYTES with 413 naming the cap and closing the connection,
    whether it declares its length or comes chunked; the largest real form (a 4,000-character answer of 4-byte
    characters) still passes."""
    from app.middleware import MAX_FORM_BYTES

    escapes = b"answer=" + b"%41" * ((1 << 20) // 3 - 100)
    form = {"content-type": "application/x-www-form-urlencoded"}
    with _serve(tmp_path) as (proc, url), httpx.Client(base_url=url, timeout=30) as c:
        drill = c.get("/api/drills/next", params={"kind": "layout_stats", "seed": 2}).json()["id"]
        before = _tree_cpu(proc.pid)
        for path in ("/drills/answer", "/lab/jobs", "/drills/profile", f"/drills/whiteboard/{drill}/answer"):
            for body in (escapes, [escapes], [escapes[:MAX_FORM_BYTES], escapes[MAX_FORM_BYTES:]],
                         [escapes[i:i + 8192] for i in range(0, len(escapes), 8192)]):  # its length, or chunked
                r = c.post(path, content=body if isinstance(body, bytes) else iter(body), headers=form)
                assert r.status_code == 413 and f"{MAX_FORM_BYTES:,} bytes" in r.text, (path, r.status_code,
                                                                                      r.text[:200])
                assert r.headers["connection"] == "close"  # the body was left unread: not reused (one client)
        spent = _tree_cpu(proc.pid) - before
        largest = c.post("/drills/answer", data={"id": drill, "answer": "\U0001d7d8" * 4000},
                         headers={"Accept": "text/html"})
        assert largest.status_code == 200, (largest.status_code, largest.text[:300])
    assert spent < 1.0, f"{spent:.2f} s of server CPU for 16 refused form bodies"



@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to read the server's CPU time")
def test_a_json_body_of_bad_values_is_refused_within_the_budget(tmp_path):
    """pydantic makes one error per bad value, in its own code: the work budget cannot interrupt it, and for a
    request body it runs on the event loop. An SVG body whose lists were bad throughout (300,000 errors in 670 kB)
    cost 1.4 s of server CPU; a job whose params held 90,000 bad values cost 0.6-1.7 s in the budgeted handler. Now
    the SVG's lists stop at their first bad item, and a job's params over MAX_PARAM_VALUES values are refused,
    naming the cap, before the kind's model runs."""
    from gpu_worker.registry import MAX_PARAM_VALUES

    n = 65536
    svg = {"rows": 1, "cols": 1, "text": [1] * n, "palette": [], "colour": [99] * n, "row_levels": [9] * n,
           "col_levels": [9] * n, "marks": [1] * 40000}
    jobs = [{"kind": "compile_only", "params": {"defines": {f"k{i}": "x" for i in range(80000)}}},
            {"kind": "smem", "params": {f"k{i}": 1 for i in range(90000)}},
            {"kind": "smem", "params": {"access": {"kind": "offsets", "offsets": [[{}]] * 150000}}}]
    with _serve(tmp_path, LAYOUTLAB_LAB_RATE="1000/60", LAYOUTLAB_LAB_ADDRESS_RATE="1000/60") as (proc, url):
        with httpx.Client(base_url=url, timeout=60) as c:
            before = _tree_cpu(proc.pid)
            r = c.post("/api/svg", json=svg)
            spent = _tree_cpu(proc.pid) - before
            assert r.status_code == 422 and "text.0" in r.json()["detail"], r.text[:300]
            assert spent < 0.6, f"{spent:.2f} s of server CPU for the SVG body"
            for body in jobs:
                before = _tree_cpu(proc.pid)
                r = c.post("/api/bench/jobs", json=body)
                spent = _tree_cpu(proc.pid) - before
                assert r.status_code == 422 and f"more than {MAX_PARAM_VALUES:,} values" in r.json()["detail"], \
                    r.text[:300]
                assert spent < 0.6, f"{spent:.2f} s of server CPU for {str(body)[:60]}"


def _loop_cpu(server_pid: int) -> tuple[int, float]:
    """(pid, CPU seconds) of the main thread of the server's one app process: gunicorn's ASGI worker runs its event
    loop there, while budgeted handlers run in other threads."""
    children = Path(f"/proc/{server_pid}/task/{server_pid}/children").read_text().split()
    assert len(children) == 1, children
    pid = int(children[0])
    fields = Path(f"/proc/{pid}/task/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return pid, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to read the event loop's CPU time")
def test_a_json_body_is_parsed_and_validated_off_the_event_loop(tmp_path):
    """A JSON body was decoded, scanned for lone surrogates and validated by pydantic on the event loop (FastAPI does
    all three before the budgeted handler runs): a 1 MB object of 90,000 keys the model does not take (one error
    each) cost 0.5-0.7 s of the loop's CPU per request, so a few at once held /healthz for seconds, outside the work
    budget. Now every JSON route parses and validates its body in a budgeted worker thread: the loop's share of such
    a request is its I/O. Checked on sibling routes of every area; the refusal is unchanged (422 naming a field)."""
    extra = b"{" + b",".join(b'"k%d":0' % i for i in range(90_000)) + b"}"
    assert len(extra) < 1 << 20
    routes = ["/api/layout", "/api/algebra", "/api/banks", "/api/svg", "/api/sectors", "/api/solve/smem",
              "/api/triton/layout", "/api/drills/offsets-1/answer", "/api/drills/profile", "/api/bench/jobs",
              "/api/class/join"]
    with _serve(tmp_path) as (proc, url), httpx.Client(base_url=url, timeout=60) as c:
        assert c.post("/api/layout", json={"layout": "(4,8):(8,1)"}).status_code == 200  # imports done
        pid, before = _loop_cpu(proc.pid)
        for path in routes:
            r = c.post(path, content=extra, headers={"Content-Type": "application/json"})
            assert r.status_code == 422 and "k0: Extra inputs are not permitted" in r.json()["detail"], \
                (path, r.status_code, r.text[:200])
        after = _loop_cpu(proc.pid)
        assert after[0] == pid  # the same app process throughout
        valid = c.post("/api/layout", content=b'{"layout": "(4,8):(8,1)"}',
                       headers={"Content-Type": "application/json"})
        assert valid.status_code == 200 and valid.json()["size"] == 32
    spent = after[1] - before
    assert spent / len(routes) < 0.1, f"{spent:.2f} s of the event loop's CPU for {len(routes)} bodies"


# ------------------------------------------------------------------------------------------------ trusted hosts
def test_host_names_parse_and_match():
    assert hosts.host_name("[::1]:8000") == "::1" and hosts.host_name("Example.ORG.:80") == "example.org"
    assert hosts.host_name("::1") == "::1" and hosts.host_name("") == ""
    assert hosts.allowed_hosts("") == hosts.DEFAULT == ("localhost", "127.0.0.1", "::1")
    assert hosts.allowed_hosts(" lab.example.org:8443, *.Example.com ,,") == ("lab.example.org", "*.example.com")
    allowed = hosts.allowed_hosts("lab.example.org,*.example.com")
    for host, ok in [("lab.example.org:8000", True), ("a.example.com", True), ("example.com", False),
                     ("evil.example", False), ("lab.example.org.evil.example", False), ("", False),
                     ("10.0.0.5:8000", True), ("10.0.0.6", False), ("[::1]:80", False)]:
        assert hosts.host_allowed(host, allowed, server="10.0.0.5") is ok, host
    assert hosts.host_allowed("anything", ("*",)) and not hosts.host_allowed("x", allowed, server="testserver")


def test_a_foreign_host_is_refused_before_any_route(tmp_path, monkeypatch):
    """With the default setting, TestClient's own ``testserver`` is a foreign name: 400 before any route or
    middleware runs (no cookie set, no row stored); localhost and the configured names pass."""
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    monkeypatch.delenv("LAYOUTLAB_ALLOWED_HOSTS", raising=False)
    from app.main import create_app

    with TestClient(create_app()) as c:
        for method, path in [("GET", "/healthz"), ("GET", "/lab"), ("POST", "/api/bench/jobs"),
                             ("POST", "/api/drills/profile"), ("OPTIONS", "/api/layout")]:
            r = c.request(method, path, headers={"Host": "evil.example:8000", "Origin": "http://evil.example:8000"})
            assert r.status_code == 400 and "LAYOUTLAB_ALLOWED_HOSTS" in r.json()["detail"], (method, path)
            assert "set-cookie" not in r.headers and r.headers["x-frame-options"] == "DENY"
        assert c.get("/healthz").status_code == 400  # Host: testserver is not a default name
        assert c.get("/healthz", headers={"Host": "localhost:8000"}).status_code == 200
        assert c.get("/healthz", headers={"Host": "[::1]:8000"}).status_code == 200
    monkeypatch.setenv("LAYOUTLAB_ALLOWED_HOSTS", "lab.example.org")
    with TestClient(create_app(), base_url="http://lab.example.org") as c:
        assert c.get("/healthz").status_code == 200
        assert c.get("/healthz", headers={"Host": "localhost"}).status_code == 400  # the setting replaces the default


def test_dns_rebinding_is_refused_by_a_served_app(tmp_path):
    """A real server with the default setting: Host and Origin both ``evil.example:PORT`` (a rebinding page's own
    requests) are refused; the address it was started on and localhost are answered."""
    with _serve(tmp_path) as (_, url):
        port = url.rsplit(":", 1)[1]
        evil = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
        with httpx.Client(base_url=url, timeout=10) as c:
            r = c.post("/api/bench/jobs", json={"kind": "compile_only", "params": {}}, headers=evil)
            assert r.status_code == 400 and "LAYOUTLAB_ALLOWED_HOSTS" in r.json()["detail"]
            assert c.get("/api/drills/kinds", headers=evil).status_code == 400
            assert c.get("/healthz").status_code == 200  # Host: 127.0.0.1:PORT, the address it serves on
            assert c.get("/healthz", headers={"Host": f"localhost:{port}"}).status_code == 200


def test_a_host_that_is_not_host_port_is_refused():
    """A Host header is ``host[:port]``: the name part of anything else is never matched against the allowed names
    (``[::1]evil.example`` once passed as ``::1``, ``localhost:evil`` as ``localhost``); IP addresses compare in their
    canonical form."""
    for bad in ("[::1]evil.example", "localhost:evil", "localhost..", "evil.example@localhost", "[::1]:x",
                'localhost:1"><script>', "[127.0.0.1]", "local host", "[::1", "*.example.com"):
        assert hosts.request_host(bad) is None, bad
        assert not hosts.host_allowed(bad, hosts.DEFAULT) and not hosts.host_allowed(bad, ("*.example.com",)), bad
    for good, name in [("LOCALHOST.:8000", "localhost"), ("[0:0::1]:80", "::1"), ("localhost:", "localhost"),
                       ("0:0:0:0:0:0:0:1", "::1"), ("under_score.local", "under_score.local")]:
        assert hosts.request_host(good) == name and hosts.host_allowed(good, hosts.DEFAULT + ("under_score.local",))


def _raw(port: int, head: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data


def test_an_absolute_form_target_is_judged_by_its_authority_on_a_served_app(tmp_path):
    """``GET http://evil.example/healthz`` with ``Host: localhost``: RFC 9112 says the target's authority is the
    host, so a foreign one is refused (it was routed as the path ``/http://evil.example/healthz``, a 404); an allowed
    one is served as ``/healthz``. Malformed Host headers are refused too; a duplicate Host is gunicorn's 400."""
    with _serve(tmp_path) as (_, url):
        port = int(url.rsplit(":", 1)[1])
        for target, host in [(b"http://evil.example/healthz", b"localhost"), (b"HTTP://EVIL.example:80/healthz",
                                                                                b"localhost"),
                             (b"http://evil.example@localhost/healthz", b"localhost"),
                             (b"http://evil.example/api/bench/jobs", b"127.0.0.1")]:
            r = _raw(port, b"GET " + target + b" HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n")
            assert r.startswith(b"HTTP/1.1 400 ") and b"LAYOUTLAB_ALLOWED_HOSTS" in r, (target, r[:300])
        for target in (b"http://localhost/healthz", b"http://127.0.0.1:%d/healthz?x=1" % port):
            r = _raw(port, b"GET " + target + b" HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
            assert r.startswith(b"HTTP/1.1 200 ") and b'"ok":true' in r, (target, r[:300])
        for host in (b"[::1]evil.example", b"localhost:evil", b"localhost..", b"localhost, evil.example"):
            r = _raw(port, b"GET /healthz HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n")
            assert r.startswith(b"HTTP/1.1 400 "), (host, r[:300])
        for hosts_sent in ([b"localhost", b"evil.example"], [b"evil.example", b"localhost"]):
            head = b"".join(b"Host: " + h + b"\r\n" for h in hosts_sent)
            r = _raw(port, b"GET /healthz HTTP/1.1\r\n" + head + b"Connection: close\r\n\r\n")
            assert r.startswith(b"HTTP/1.1 400 "), (hosts_sent, r[:300])
        for host in (b"LOCALHOST.", b"[::1]:%d" % port, b"[0:0::1]"):
            r = _raw(port, b"GET /healthz HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n")
            assert r.startswith(b"HTTP/1.1 200 "), (host, r[:300])


def test_a_cookie_of_backslashes_costs_no_event_loop_time(tmp_path, monkeypatch):
    """FastAPI parses the Cookie header on the event loop for every route, and http.cookies' unquoting is quadratic
    on this Python (CVE-2024-7592): an 8 kB quoted cookie of backslashes (within the header limits) cost 0.35 s of
    loop time a request. Read in linear time, it costs what a request without it does, and unquotes as before."""
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    monkeypatch.setenv("LAYOUTLAB_EMBEDDED_WORKER", "0")
    from starlette.requests import cookie_parser

    from app.main import create_app

    hostile = 'a="' + "\\\\" * 4085 + '"'
    with TestClient(create_app(), base_url="http://localhost") as c:
        def cpu(headers: dict) -> float:
            best = float("inf")
            for _ in range(3):
                start = time.process_time()
                assert c.get("/api/bench/kinds", headers=headers).status_code == 200
                best = min(best, time.process_time() - start)
            return best

        extra = cpu({"Cookie": hostile}) - cpu({})
        assert extra < 0.15, f"{extra:.3f} s of CPU for one cookie of backslashes"
    assert cookie_parser('a="x\\\\y\\"z\\101"; b=c') == {"a": 'x\\y"zA', "b": "c"}


def test_cookie_headers_past_one_field_s_size_are_refused_on_every_route_before_they_are_parsed(tmp_path,
                                                                                                 monkeypatch):
    """FastAPI parses every Cookie header on the event loop for every route. The front door takes 100 header fields
    of 8,190 bytes each, so 98 Cookie headers of about 1,900 cookies each (800 kB, 186,000 cookies) cost 0.1 s of
    event-loop CPU a request, and a few such clients held ``/healthz`` for seconds. A browser sends one Cookie
    header (RFC 6265 5.4), never longer than a field: more Cookie bytes than that are refused with 431 naming the
    cap, on every route (app.routes, so a route added later too), before any cookie is parsed; one full-size
    Cookie header still passes."""
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    monkeypatch.setenv("LAYOUTLAB_EMBEDDED_WORKER", "0")
    from app.budget import api_routes
    from app.main import create_app
    from app.middleware import MAX_COOKIE_BYTES

    flood = "; ".join(f"c{i}=v" for i in range(1900))[:8_100]
    app = create_app()
    with TestClient(app, base_url="http://localhost") as c:
        for route in api_routes(app.routes):
            path = re.sub(r"\{[^}]+\}", "x1", route.path)
            for method in sorted(route.methods):
                r = c.request(method, path, headers=[("cookie", flood)] * 98)
                assert r.status_code == 431, (method, path, r.status_code, r.text[:200])
                if method != "HEAD":
                    assert f"{MAX_COOKIE_BYTES:,} bytes" in r.json()["detail"], (method, path, r.text[:200])
        start = time.process_time()
        for _ in range(20):
            assert c.get("/healthz", headers=[("cookie", flood)] * 98).status_code == 431
        assert time.process_time() - start < 0.5, "a refused flood of cookies still costs event-loop time"
        one = "; ".join(f"k{i}=" + "v" * 30 for i in range(300))[:MAX_COOKIE_BYTES]
        assert c.get("/healthz", headers={"cookie": one}).status_code == 200
        two = [("cookie", one[: MAX_COOKIE_BYTES // 2]), ("cookie", one[: MAX_COOKIE_BYTES // 2 - 10])]
        assert c.get("/api/drills/progress", headers=two).status_code == 200


# ------------------------------------------------------------------------------------------ a full data volume
def test_disk_full_errors_are_recognised_in_one_place(tmp_path):
    """The mapping, on real errors: a SQLite database at its page cap raises SQLITE_FULL; ENOSPC and EDQUOT from the
    operating system; a chained cause; and errors that are not about space."""
    db = sqlite3.connect(tmp_path / "small.sqlite3")
    db.execute("CREATE TABLE t (x BLOB)")
    db.execute("PRAGMA max_page_count = 3")
    with pytest.raises(sqlite3.OperationalError) as full:
        with db:
            db.execute("INSERT INTO t VALUES (?)", (b"x" * 100_000,))
    assert volume.disk_full(full.value)
    assert db.execute("SELECT count(*) FROM t").fetchone()[0] == 0  # rolled back whole
    assert volume.disk_full(OSError(errno.ENOSPC, "No space left on device"))
    assert volume.disk_full(OSError(errno.EDQUOT, "Disk quota exceeded"))
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as exc:
            raise RuntimeError("could not write the build cache") from exc
    except RuntimeError as chained:
        assert volume.disk_full(chained)

    class PgDiskFull(Exception):
        sqlstate = "53100"

    assert volume.disk_full(PgDiskFull("could not extend file"))
    for other in (sqlite3.OperationalError("database is locked"), OSError(errno.EACCES, "Permission denied"),
                  ValueError("database or disk is full"), None):
        assert not volume.disk_full(other)


def test_the_app_answers_a_full_database_with_503(tmp_path, monkeypatch):
    """A write that hits SQLITE_FULL (a real one: the database at its page cap) answers 503 with Retry-After and the
    cause, as JSON for the API and as a page for a form; another storage error stays the server's own 500; /healthz
    reports the state."""
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    from app.drills import store
    from app.main import create_app

    def capped_write(*_a, **_k):
        db = sqlite3.connect(tmp_path / "capped.sqlite3")
        db.execute("CREATE TABLE IF NOT EXISTS t (x BLOB)")
        db.execute("PRAGMA max_page_count = 3")
        with db:
            db.execute("INSERT INTO t VALUES (?)", (b"x" * 100_000,))

    monkeypatch.setattr(store, "claim_name", capped_write)
    with TestClient(create_app(), raise_server_exceptions=False) as c:
        r = c.post("/api/drills/profile", json={"name": "ada"})
        assert r.status_code == 503 and int(r.headers["Retry-After"]) > 0
        assert volume.MESSAGE in r.json()["detail"]
        page = c.post("/drills/profile", data={"name": "ada"}, headers={"Accept": "text/html"})
        assert page.status_code == 503 and volume.MESSAGE in page.text and "<html" in page.text
        assert page.headers["Retry-After"]
        health = c.get("/healthz").json()
        assert health["ok"] and health["data_volume"]["full"] and volume.MESSAGE in health["data_volume"]["detail"]

        psycopg = pytest.importorskip("psycopg")

        def pg_full(*_a, **_k):  # PostgreSQL's disk_full is an OperationalError: not "unreachable", full
            raise psycopg.errors.DiskFull("could not extend file \"base/16384/16385\": No space left on device")

        monkeypatch.setattr(store, "claim_name", pg_full)
        r = c.post("/api/drills/profile", json={"name": "ada"})
        assert r.status_code == 503 and volume.MESSAGE in r.json()["detail"] and r.headers["Retry-After"]

        def locked(*_a, **_k):
            raise sqlite3.OperationalError("database is locked")

        monkeypatch.setattr(store, "claim_name", locked)
        assert c.post("/api/drills/profile", json={"name": "ada"}).status_code == 500


def _root_reason() -> str | None:
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root"
    if not Path("/proc/filesystems").exists() or "tmpfs" not in Path("/proc/filesystems").read_text():
        return "no tmpfs in this kernel"
    return None


@contextmanager
def _tmpfs(path: Path, size: str):
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True,
                          text=True)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()[:200]}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _fill(path: Path) -> Path:
    """Fill the volume of ``path`` to its last byte; returns the filler file."""
    filler = path / "filler"
    with open(filler, "wb", buffering=0) as f:  # unbuffered: nothing left to flush (and fail) at close
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    for size in (4096, 512, 1):  # the last partial blocks
        try:
            with open(path / f"filler-{size}", "wb", buffering=0) as f:
                while True:
                    f.write(b"\0" * size)
                    f.flush()
        except OSError:
            pass
    return filler


@pytest.mark.skipif(_root_reason() is not None, reason=str(_root_reason()))
def test_every_write_on_a_full_volume_is_503_and_reads_go_on(tmp_path):
    """``layoutlab serve`` with its data folder on a real tmpfs, filled to the last byte before its first request:
    answers, hints, reveals,
    profile names, whiteboard sessions and lab jobs (JSON routes and page forms) answer 503 with Retry-After and the
    cause, never a bare 500 or a dropped connection; reads answer 200; /healthz reports it. Once space is freed,
    writes work again and the learning record holds exactly the answers that were acknowledged."""
    with _tmpfs(tmp_path / "data", "8m") as data, _serve(data, LAYOUTLAB_CLASS_CODES="cute-101",
                                                         LAYOUTLAB_INSTRUCTOR_TOKEN="teach") as (_, url):
        with httpx.Client(base_url=url, timeout=30) as c:
            filler = _fill(data)  # before any request: the stores were opened at start-up
            other = c.get("/api/drills/next", params={"kind": "layout_stats", "seed": 2}).json()["id"]
            writes = {
                "answer": lambda: c.post(f"/api/drills/{other}/answer", json={"answer": "1, 1, 1, 1"}),
                "hint": lambda: c.post(f"/api/drills/{other}/hint", json={"level": 1}),
                "reveal": lambda: c.post(f"/api/drills/{other}/reveal", json={}),
                "profile": lambda: c.post("/api/drills/profile", json={"name": "full-volume"}),
                "whiteboard": lambda: c.post("/api/drills/whiteboard"),
                "job": lambda: c.post("/api/bench/jobs", json={"kind": "compile_only", "params": {}}),
                "lab form": lambda: c.post("/lab/jobs", data={"kind": "compile_only"}, headers={"HX-Request": "true"}),
                "answer form": lambda: c.post("/drills/answer", data={"id": other, "answer": "1, 1, 1, 1"},
                                              headers={"Accept": "text/html"}),
                "hint form": lambda: c.post("/drills/hint", data={"id": other, "level": "1"}),
                "reveal form": lambda: c.post("/drills/reveal", data={"id": other}),
                "profile form": lambda: c.post("/drills/profile", data={"name": "full-form"}),
                "whiteboard form": lambda: c.post("/drills/whiteboard"),
                "fresh client": lambda: httpx.post(f"{url}/api/drills/{other}/answer", json={"answer": "1, 1, 1, 1"}),
                "class join": lambda: c.post("/api/class/join", json={"code": "cute-101"}),
                "class join form": lambda: c.post("/lab/class/join", data={"code": "cute-101"}),
                "wrong class code": lambda: c.post("/api/class/join", json={"code": "guess"}),
                "wrong instructor token": lambda: c.post("/lab/class/instructor", data={"token": "guess"}),
                "profile and class": lambda: c.post("/api/drills/profile", json={"name": "full-class",
                                                                                  "class_code": "cute-101"}),
            }
            for name, write in writes.items():
                r = write()  # a dropped connection raises here
                assert r.status_code == 503, (name, r.status_code, r.text[:300])
                assert int(r.headers["Retry-After"]) > 0 and volume.MESSAGE in r.text, name
            for path in ("/api/drills/progress", "/api/drills/kinds", "/api/bench/jobs", "/?layout=(4,8):(8,1)",
                         "/drills/progress", "/lab", "/drills?kind=offsets&seed=3", "/api/drills/next",
                         "/api/bench/device", "/api/class", "/lab/class"):
                r = c.get(path)
                assert r.status_code == 200, (path, r.status_code, r.text[-300:])
            teacher = {"Authorization": "Bearer teach"}
            assert c.get("/api/class/cute-101/jobs", headers=teacher).status_code == 200
            assert c.get("/api/class/cute-101/leaderboard", headers=teacher).status_code == 200
            health = c.get("/healthz").json()
            assert health["data_volume"]["full"] and volume.MESSAGE in health["data_volume"]["detail"]

            for f in data.glob("filler*"):
                f.unlink()
            assert not filler.exists()
            r = c.post(f"/api/drills/{other}/answer", json={"answer": "1, 1, 1, 1"})
            assert r.status_code == 200 and r.json()["readable"]
            assert c.post("/api/drills/profile", json={"name": "full-volume"}).status_code == 200
            assert c.get("/api/drills/progress").json()["attempts"] == 1  # exactly the acknowledged answer
    # (unmounted) nothing half-written: checked on the live volume above through the record


@pytest.mark.skipif(_root_reason() is not None, reason=str(_root_reason()))
def test_the_site_secret_is_never_half_written(tmp_path, monkeypatch):
    """On a full volume the signing key cannot be stored: it is kept in memory (cookies signed meanwhile verify),
    no partial file is left, and it is written whole once there is room."""
    from app.drills import identity

    with _tmpfs(tmp_path / "data", "1m") as data:
        monkeypatch.setenv("LAYOUTLAB_DATA", str(data))
        monkeypatch.delenv("LAYOUTLAB_SECRET", raising=False)
        monkeypatch.setattr(identity, "_cache", {})
        monkeypatch.setattr(identity, "_pending", {})
        _fill(data)
        key = identity.secret()
        assert len(key) == 32 and not (data / "drills_secret").exists()
        assert not [p for p in data.iterdir() if "drills_secret" in p.name]
        cookie = identity.sign("learner-1")
        for f in data.glob("filler*"):
            f.unlink()
        assert identity.secret() == key and (data / "drills_secret").read_bytes() == key
        assert identity.unsign(cookie) == "learner-1"
        assert [p.name for p in data.iterdir() if "drills_secret" in p.name] == ["drills_secret"]


# ---------------------------------------------------------------------------------------------- the small ones
def test_a_coordinate_layout_just_under_the_cap_is_answered_whole(client):
    """The table and its hover data are charged once: 32,761 coordinate cells (the documented cap is 32,768) answer
    200 with every cell, whatever the shape; one over the cap answers the facts with a note naming it."""
    for text, rows in [("(181,181):(1@0,1@1)", 181), ("(32761,1):(1@0,1@1)", 32761), ("(32768,1):(1@0,1@1)", 32768),
                       ("(4,1):(1@0,1@1)", 4), ("(4,(2,3)):(1@1,(1@0,2@0))", 4)]:
        r = client.post("/api/layout", json={"layout": text})
        assert r.status_code == 200, (text, r.text[:200])
        table = r.json()["table"]
        assert table["rows"] == rows and len(table["offsets"]) == rows and r.json()["injective"] is not None
    assert client.post("/api/layout", json={"layout": "(4,1):(1@0,1@1)"}).json()["table"]["offsets"] == \
        [["(0,0)"], ["(1,0)"], ["(2,0)"], ["(3,0)"]]
    over = client.post("/api/layout", json={"layout": "(32769,1):(1@0,1@1)"}).json()
    assert over["table"] is None and "2^15 coordinate cells" in over["note"]


def test_a_descriptor_is_capped_in_length(client):
    r = client.post("/api/solve/descriptor", json={"descriptor": "0x" + "4" * 300_000})
    assert r.status_code == 422 and "at most 64 characters" in r.json()["detail"]
    assert client.post("/api/solve/descriptor", json={"descriptor": "0x4000004000010000"}).status_code == 200


def test_options_answers_allow_and_a_body_that_is_not_utf8_is_a_documented_400(client):
    for path, allow in [("/api/layout", "OPTIONS, POST"), ("/", "GET, HEAD, OPTIONS"),
                        ("/api/drills/x-1/answer", "OPTIONS, POST"), ("/static/app.css", "GET, HEAD, OPTIONS")]:
        r = client.options(path)
        assert r.status_code == 204 and r.headers["allow"] == allow, (path, r.status_code, r.headers)
    assert client.options("/no-such-page").status_code == 404
    wrong = client.delete("/api/layout")
    assert wrong.status_code == 405 and wrong.headers["allow"] == "OPTIONS, POST"
    r = client.post("/api/layout", content=b'{"layout": "\xff"}', headers={"content-type": "application/json"})
    assert r.status_code == 400 and "UTF-8" in r.json()["detail"]
    documented = client.get("/openapi.json").json()["paths"]["/api/layout"]["post"]["responses"]
    assert "400" in documented and "UTF-8" in documented["400"]["description"]


def test_cookies_are_secure_over_https_only(client):
    """Over HTTPS (a TLS server, or a trusted proxy's X-Forwarded-Proto: see the live test below) every cookie the app
    sets is Secure; a client's own X-Forwarded-Proto over plain HTTP changes nothing."""
    with TestClient(client.app, base_url="https://testserver") as tls:
        for path in ("/api/drills/next", "/api/bench/device"):
            cookies = tls.get(path).headers.get_list("set-cookie")
            assert cookies and all(c.endswith("; Secure") for c in cookies), cookies
    with TestClient(client.app) as plain:
        cookies = plain.get("/api/drills/next", headers={"X-Forwarded-Proto": "https"}).headers.get_list("set-cookie")
        assert cookies and not any("Secure" in c for c in cookies)


def test_a_trusted_proxy_s_https_makes_cookies_secure(tmp_path):
    with _serve(tmp_path, LAYOUTLAB_TRUSTED_PROXIES="127.0.0.1") as (_, url):
        secure = httpx.get(url + "/api/drills/next", headers={"X-Forwarded-Proto": "https"}).headers
        plain = httpx.get(url + "/api/drills/next").headers
    assert secure.get_list("set-cookie")[0].endswith("; Secure")
    assert "Secure" not in plain.get_list("set-cookie")[0]


def test_whiteboard_sessions_per_learner_are_capped(tmp_path, monkeypatch):
    """Past the cap the oldest unanswered sessions make room (a learner is never stuck); when every open session has
    an answer, a new one is refused 429 naming the cap. The rows per learner stay bounded."""
    monkeypatch.setenv("LAYOUTLAB_DATA", str(tmp_path))
    from app.drills import store
    from app.main import create_app

    monkeypatch.setattr(store, "MAX_OPEN_SESSIONS", 2)
    with TestClient(create_app()) as c:
        sids = [c.post("/api/drills/whiteboard").json()["session"] for _ in range(3)]
        assert c.get(f"/api/drills/whiteboard/{sids[0]}").status_code == 404  # made room
        for sid in sids[1:]:
            board = c.get(f"/api/drills/whiteboard/{sid}").json()
            r = c.post(f"/api/drills/{board['parts'][0]['id']}/answer", json={"answer": "1", "session": sid})
            assert r.status_code == 200
        refused = c.post("/api/drills/whiteboard")
        assert refused.status_code == 429 and "cap is 2" in refused.json()["detail"]
        page = c.post("/drills/whiteboard", follow_redirects=False)
        assert page.status_code == 429 and "cap is 2" in page.text


@pytest.mark.parametrize("asked, status, says", [
    ("bytes=99999999999999999999999-", 416, "starts at or past the end of the file"),
    ("bytes", 400, "is not of the form bytes=START-END"),
    ("bytes=5-1", 400, "start must be less than end"),
    ("items=0-1", 400, "Only support bytes range"),
])
def test_a_static_file_s_refused_range_names_the_condition(client, asked, status, says):
    r = client.get("/static/vendor/htmx.min.js", headers={"Range": asked})
    assert r.status_code == status and says in r.text, (r.status_code, r.text[:200])
    if status == 416:
        size = int(client.get("/static/vendor/htmx.min.js").headers["content-length"])
        assert r.headers["content-range"] == f"bytes */{size}" and f"{size:,} bytes" in r.text
    assert client.get("/static/vendor/htmx.min.js", headers={"Range": "bytes=0-9"}).content == \
        client.get("/static/vendor/htmx.min.js").content[:10]
