"""Headers the server must not trust (issue 20, item 7): redirects are never built from Host, and X-Forwarded-For
counts only from the peers LAYOUTLAB_TRUSTED_PROXIES names (none by default), through a real ``layoutlab serve``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from app.proxies import ProxySettingError, trusted_proxies, uvicorn_options

ROOT = Path(__file__).resolve().parent.parent
EVIL = {"Host": "evil.example"}


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "x1", path)


def _routed(app) -> list[tuple[str, str]]:
    """(method, concrete path) of every route of the app, through included routers, and the /static mount."""
    out, todo = [], list(app.router.routes)
    while todo:
        r = todo.pop()
        inner = getattr(r, "original_router", None)
        if inner is not None:
            todo += inner.routes
        elif getattr(r, "methods", None):
            out += [(m, _concrete(r.path)) for m in sorted(r.methods - {"HEAD"})]
    return sorted(set(out))


def _assert_relative(r, host: str = "evil.example") -> str:
    loc = r.headers["location"]
    assert loc.startswith("/") and not loc.startswith("//") and not loc.startswith("/\\"), loc
    assert host not in loc and "://" not in loc, loc
    return loc


@pytest.fixture(scope="module")
def app(layoutlab_data):
    """The app as served behind a proxy that passes any Host through (``LAYOUTLAB_ALLOWED_HOSTS=*``): its redirects
    must still never be built from Host. (With the default setting a foreign Host is refused first: see
    tests/test_front_door.py.)"""
    from app.main import create_app

    old = os.environ.get("LAYOUTLAB_ALLOWED_HOSTS")
    os.environ["LAYOUTLAB_ALLOWED_HOSTS"] = "*"
    try:
        return create_app()
    finally:
        if old is None:
            os.environ.pop("LAYOUTLAB_ALLOWED_HOSTS", None)
        else:
            os.environ["LAYOUTLAB_ALLOWED_HOSTS"] = old


@pytest.fixture(scope="module")
def client(app):
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def test_every_slash_redirect_is_relative_whatever_the_host(client, app):
    """Each route, asked for with a trailing slash added and a hostile Host: 307 to the route's own path, relative
    (Starlette built ``http://evil.example/lab`` from Host)."""
    routes = _routed(app)
    assert len(routes) >= 50
    for method, path in routes:
        if path == "/":
            continue
        r = client.request(method, path + "/?q=1", headers=EVIL, follow_redirects=False)
        assert r.status_code == 307, (method, path, r.status_code)
        assert _assert_relative(r) == path + "?q=1", (method, path)
        assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
    r = client.get("/static", headers=EVIL, follow_redirects=False)  # the mount: /static -> /static/
    assert r.status_code == 307 and _assert_relative(r) == "/static/"


def test_slash_redirects_are_no_open_redirect(client):
    """A path that starts like a network path (``//evil.example``) is never echoed as one, and a request some route
    matches passes through (a wrong method stays 405, an unknown path 404)."""
    for path in ["//evil.example/", "//evil.example", "/\\evil.example/", "/lab//", "///lab/"]:
        r = client.get("http://testserver" + path, headers=EVIL, follow_redirects=False)  # the path as sent
        assert r.request.url.raw_path == path.encode(), r.request.url
        assert r.status_code in (307, 404), (path, r.status_code)
        if r.status_code == 307:
            _assert_relative(r)
    assert client.get("/lab/", follow_redirects=False).headers["location"] == "/lab"
    assert client.get("/lab/?a=%0d%0aSet-Cookie:x", follow_redirects=False).headers["location"] == \
        "/lab?a=%0d%0aSet-Cookie:x"
    assert client.delete("/lab", follow_redirects=False).status_code == 405
    assert client.get("/no-such-page/", follow_redirects=False).status_code == 404


def test_route_redirects_are_relative_whatever_the_host(app):
    """Every RedirectResponse of the app (the drills' 303s) under a hostile Host: a relative Location."""
    with TestClient(app) as c:
        r = c.get("/drills", headers=EVIL, follow_redirects=False)
        assert r.status_code == 303 and _assert_relative(r).startswith("/drills?kind=")
        drill = c.get("/api/drills/next", params={"kind": "offsets", "seed": 7}).json()
        r = c.post("/drills/hint", data={"id": drill["id"], "level": 1}, headers=EVIL, follow_redirects=False)
        assert r.status_code == 303 and _assert_relative(r) == "/drills?kind=offsets&seed=7"
        r = c.post("/drills/profile", data={"name": f"host-test-{os.getpid()}"}, headers=EVIL, follow_redirects=False)
        assert r.status_code == 303 and _assert_relative(r) == "/drills/progress"
        r = c.post("/drills/whiteboard", headers=EVIL, follow_redirects=False)
        assert r.status_code == 303, r.text[-800:]
        board = _assert_relative(r)
        assert board.startswith("/drills/whiteboard/")
        r = c.post(board + "/answer", data={"id": "offsets-1", "answer": "1"}, headers=EVIL, follow_redirects=False)
        assert r.status_code == 303 and _assert_relative(r) == board  # not the current part: back to the session


# --------------------------------------------------------------------------- LAYOUTLAB_TRUSTED_PROXIES


def test_trusted_proxies_setting_parses_and_refuses_junk():
    assert trusted_proxies("") == [] and trusted_proxies(" , ") == []
    assert trusted_proxies("127.0.0.1, 10.1.2.3/8,::1,*") == ["127.0.0.1", "10.0.0.0/8", "::1", "*"]
    assert uvicorn_options("") == {"proxy_headers": False}
    assert uvicorn_options("127.0.0.1,192.168.0.0/16") == {"proxy_headers": True,
                                                          "forwarded_allow_ips": "127.0.0.1,192.168.0.0/16"}
    for bad in ["localhost", "10.0.0.0/33", "1.2.3.4.5", "x" * 500]:
        with pytest.raises(ProxySettingError, match="LAYOUTLAB_TRUSTED_PROXIES"):
            trusted_proxies(bad)


def test_serve_refuses_a_bad_trusted_proxies_setting(tmp_path):
    env = {**os.environ, "LAYOUTLAB_DATA": str(tmp_path), "LAYOUTLAB_TRUSTED_PROXIES": "127.0.0.1,not-an-address"}
    p = subprocess.run([sys.executable, "-m", "app.cli", "serve", "--port", "1"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "'not-an-address' is not an IP address" in p.stderr


def _serve(tmp_path: Path, trusted: str | None):
    from tests.conftest import free_port

    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("LAYOUTLAB_REDIS_URL", "LAYOUTLAB_DATABASE_URL",
                                                            "LAYOUTLAB_TRUSTED_PROXIES", "FORWARDED_ALLOW_IPS")}
    env.update(LAYOUTLAB_DATA=str(tmp_path), LAYOUTLAB_EMBEDDED_WORKER="0", LAYOUTLAB_LAB_ADDRESS_RATE="4/60")
    if trusted is not None:
        env["LAYOUTLAB_TRUSTED_PROXIES"] = trusted
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--no-worker", "--host", "127.0.0.1",
                             "--port", str(port)], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                return proc, url
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"layoutlab serve did not start: {proc.stderr.read()[-2000:]}")
        time.sleep(0.1)


def _burst(url: str, n: int) -> list[int]:
    """``n`` well-formed submissions from loopback, each as a fresh client (no cookie) with its own
    X-Forwarded-For: only the address limit (4 per minute here) can stop them."""
    codes = []
    for i in range(n):
        body = {"kind": "compile_only", "params": {"nvcc": "skip", "tag": str(i)}}
        r = httpx.post(url + "/api/bench/jobs", json=body, headers={"X-Forwarded-For": f"203.0.113.{i + 1}"},
                       timeout=30)
        codes.append(r.status_code)
    return codes


@pytest.mark.parametrize("trusted", [None, "", "10.0.0.0/8"])
def test_rotating_forwarded_for_from_an_untrusted_peer_meets_the_address_limit(tmp_path, trusted):
    """A real ``layoutlab serve`` on loopback, proxy headers trusted from nobody (the default) or from another
    network: rotating X-Forwarded-For changes nothing, the fifth submission meets 429 as without the header (no
    worker runs, so the first four are 409)."""
    proc, url = _serve(tmp_path, trusted)
    try:
        assert _burst(url, 6) == [409] * 4 + [429] * 2
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_forwarded_for_from_a_trusted_proxy_is_the_client_address(tmp_path):
    """LAYOUTLAB_TRUSTED_PROXIES=127.0.0.1: the peer is the proxy, so each forwarded address is its own client
    address (never 429 here), while one forwarded address is still limited."""
    proc, url = _serve(tmp_path, "127.0.0.1")
    try:
        assert _burst(url, 6) == [409] * 6
        same = [httpx.post(url + "/api/bench/jobs", json={"kind": "compile_only", "params": {"nvcc": "skip"}},
                           headers={"X-Forwarded-For": "198.51.100.9"}, timeout=30).status_code for _ in range(5)]
        assert same == [409] * 4 + [429]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
