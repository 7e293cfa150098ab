"""The front door, on a real `layoutlab serve` (gunicorn's master and ASGI worker, app/serve.py) over raw sockets:
oversized and too many headers, a long request line, a request head or body that never finishes, SIGTERM while a
client holds a half-sent body, and a worker process that dies. Short timeouts come from the environment
(LAYOUTLAB_KEEPALIVE_S, LAYOUTLAB_READ_TIMEOUT_S, LAYOUTLAB_GRACEFUL_S), the limits are the production ones."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parent.parent
KEEPALIVE_S, READ_TIMEOUT_S, GRACEFUL_S = 1, 2, 2


def children(pid: int) -> list[int]:
    try:
        return [int(k) for k in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


class Served:
    """`layoutlab serve --no-worker` on a free port, in its own process group."""

    def __init__(self, tmp: Path, *args: str, **env: str) -> None:
        self.port = free_port()
        self.log = tmp / f"serve-{self.port}.log"
        env = {**os.environ, "LAYOUTLAB_DATA": str(tmp), "PYTHONPATH": str(ROOT), "LAYOUTLAB_EMBEDDED_WORKER": "0",
               "LAYOUTLAB_KEEPALIVE_S": str(KEEPALIVE_S), "LAYOUTLAB_READ_TIMEOUT_S": str(READ_TIMEOUT_S),
               "LAYOUTLAB_GRACEFUL_S": str(GRACEFUL_S), **env}
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port", str(self.port),
                                          *(args or ["--no-worker"])],
                                         cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        deadline = time.monotonic() + 60
        while self.get("/healthz")[0] != 200:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                raise RuntimeError(f"layoutlab serve did not start: {self.log.read_text()[-2000:]}")
            time.sleep(0.1)

    def connect(self, timeout: float = 10) -> socket.socket:
        s = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        return s

    def get(self, path: str) -> tuple[int, bytes]:
        try:
            with self.connect(5) as s:
                s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
                return status_of(read_all(s))
        except OSError:
            return 0, b""

    def pids(self) -> list[int]:
        return [self.proc.pid, *children(self.proc.pid)]

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)


def read_all(s: socket.socket) -> bytes:
    data = b""
    try:
        while chunk := s.recv(65536):
            data += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return data


def status_of(data: bytes) -> tuple[int, bytes]:
    if not data.startswith(b"HTTP/1.1 "):
        return 0, data
    return int(data.split(b" ", 2)[1]), data


def send_until_refused(s: socket.socket, head: bytes, chunk: bytes, total: int) -> int:
    """Send ``head`` then ``chunk`` until ``total`` bytes or until the server stops reading; the bytes sent."""
    sent = 0
    try:
        s.sendall(head)
        while sent < total:
            s.sendall(chunk)
            sent += len(chunk)
    except (BrokenPipeError, ConnectionResetError, TimeoutError):
        pass
    return sent


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    server = Served(tmp_path_factory.mktemp("front-door"))
    yield server
    server.stop()


def test_a_header_of_tens_of_mb_is_refused_at_once(served):
    with served.connect() as s:
        s.settimeout(5)
        sent = send_until_refused(s, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ", b"a" * 65536, 80 << 20)
        status, data = status_of(read_all(s))
    assert status == 431, data[:200]
    assert sent < 80 << 20  # the server stopped reading long before the header's end
    assert served.get("/healthz")[0] == 200


@pytest.mark.parametrize("count", [2_000, 10_000])
def test_thousands_of_headers_are_refused(served, count):
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"".join(b"a%d:b\r\n" % i for i in range(count))
    with served.connect() as s:
        send_until_refused(s, head + b"\r\n", b"", 0)
        status, data = status_of(read_all(s))
    assert status == 431, data[:200]


def test_a_hundred_headers_pass(served):
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    with served.connect() as s:
        s.sendall(head + b"".join(b"x-h%d: v\r\n" % i for i in range(90)) + b"\r\n")
        assert status_of(read_all(s))[0] == 200


def test_a_long_request_line_is_refused_but_a_permalink_at_the_cap_is_not(served):
    with served.connect() as s:
        s.sendall(b"GET /?layout=" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert status_of(read_all(s))[0] == 414
    layout = "(4,8):(8,1)" + " " * 3989  # 4,000 characters, each space 3 bytes percent-encoded
    status, data = served.get("/?layout=" + quote(layout, safe=""))
    assert status in (200, 422), data[:300]  # the app's own answer (a cap named), not the front door's


def test_unfinished_headers_do_not_grow_the_server(served):
    before = rss_mb(served.pids())
    socks = []
    try:
        for _ in range(8):
            s = served.connect(5)
            send_until_refused(s, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ", b"a" * 65536, 100 << 20)
            socks.append(s)
        grown = rss_mb(served.pids()) - before
    finally:
        for s in socks:
            s.close()
    assert grown < 64, f"RSS grew {grown:.0f} MB for 8 unfinished 100 MB headers"


def test_idle_and_partial_requests_are_closed_after_the_keepalive(served):
    socks = []
    for i in range(200):
        s = served.connect(10)
        if i % 2:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Part")
        socks.append(s)
    assert served.get("/healthz")[0] == 200  # answered meanwhile
    deadline = time.monotonic() + KEEPALIVE_S + 8
    for s in socks:
        s.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            assert s.recv(100) == b""  # closed by the server, nothing answered
        finally:
            s.close()


@pytest.mark.parametrize("path, kind, body", [
    ("/api/layout", "application/json", b'{"layout":'),
    ("/lab/jobs", "application/x-www-form-urlencoded", b"kind=smem&rows="),
    ("/api/bench/jobs", "application/json", b'{"kind": "smem", '),
])
def test_a_half_sent_body_ends_after_the_read_timeout(served, path, kind, body):
    with served.connect(READ_TIMEOUT_S + 10) as s:
        s.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nContent-Type: {kind}\r\nOrigin: "
                  f"http://127.0.0.1:{served.port}\r\nContent-Length: 1000\r\n\r\n".encode() + body)
        start = time.monotonic()
        status, data = status_of(read_all(s))
    assert time.monotonic() - start < READ_TIMEOUT_S + 8
    assert status == 408 and b"stopped arriving" in data, data[:300]  # named, on JSON routes and forms alike


def test_a_stalled_body_ends_after_the_body_timeout_not_the_read_timeout_and_a_slow_one_is_read(tmp_path):
    """A Content-Length that promises more than is sent: 408 after LAYOUTLAB_BODY_TIMEOUT_S of silence, long before
    gunicorn's ``timeout`` (30 s here, as served); a body trickled in pieces over more than that bound in all, never
    silent for as long, is read and answered."""
    server = Served(tmp_path, LAYOUTLAB_READ_TIMEOUT_S="30", LAYOUTLAB_BODY_TIMEOUT_S="2")
    try:
        head = (f"POST /api/layout HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\n"
                "Connection: close\r\nContent-Length: {}\r\n\r\n")
        with server.connect(40) as s:
            s.sendall(head.format(1000).encode() + b'{"layout":')
            start = time.monotonic()
            status, data = status_of(read_all(s))
        assert status == 408 and b"stopped arriving" in data, data[:300]
        assert time.monotonic() - start < 12  # the body's bound (2 s) and a loaded host's slack, not the 30 s
        body = b'{"layout": "(4,8):(8,1)"}'
        with server.connect(40) as s:
            s.sendall(head.format(len(body)).encode())
            start = time.monotonic()
            for i in range(0, len(body), 4):
                time.sleep(0.6)
                s.sendall(body[i:i + 4])
            assert time.monotonic() - start > 3  # longer in all than the body timeout
            status, data = status_of(read_all(s))
        assert status == 200 and b'"size":32' in data.replace(b" ", b""), data[:300]
    finally:
        server.stop()


@pytest.mark.parametrize("path, kind", [("/api/layout", "application/json"),
                                        ("/drills/answer", "application/x-www-form-urlencoded")])
def test_a_body_that_trickles_in_past_the_body_deadline_is_cut_with_408_naming_it(tmp_path, path, kind):
    """A byte every 0.4 s is never silent for the body timeout (2 s here), but the whole body may take only
    LAYOUTLAB_BODY_DEADLINE_S (3 s here) from the end of its head: 408 naming the deadline, then the connection
    closes, on JSON routes and forms alike; a bad value of the variable stops the server before it starts."""
    server = Served(tmp_path, LAYOUTLAB_BODY_TIMEOUT_S="2", LAYOUTLAB_BODY_DEADLINE_S="3")
    try:
        with server.connect(40) as s:
            s.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: {kind}\r\nOrigin: "
                      f"http://127.0.0.1:{server.port}\r\nContent-Length: 1000\r\n\r\n".encode())
            start, sent = time.monotonic(), 0
            s.settimeout(0.4)
            got = b""
            while time.monotonic() - start < 30 and sent < 1000:
                try:
                    s.sendall(b"a")
                    sent += 1
                    got += s.recv(4096)
                except TimeoutError:
                    continue
                except OSError:  # the server closed the connection after its answer
                    break
                if got:
                    break
            s.settimeout(10)
            status, data = status_of(got + read_all(s))
            took = time.monotonic() - start
        assert status == 408 and b"LAYOUTLAB_BODY_DEADLINE_S" in data and b"3 s in all" in data, data[:300]
        assert 2.5 < took < 12 and sent < 100, (took, sent)  # the deadline, not the body's end or the silence bound
    finally:
        server.stop()
    from app.serve import options

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LAYOUTLAB_BODY_DEADLINE_S", "soon")
        with pytest.raises(ValueError, match="LAYOUTLAB_BODY_DEADLINE_S must be a number"):
            options("127.0.0.1", 8000, 1, [])


@pytest.mark.parametrize("path, kind, chunks, cap", [
    ("/api/layout", "application/json", [b"200000\r\n{"], b"1,048,576"),  # one chunk that declares 2 MB, 1 byte sent
    ("/api/layout", "application/json", [b"80000\r\n" + b" " * 0x80000 + b"\r\n", b"80001\r\n"], b"1,048,576"),
    ("/lab/jobs", "application/x-www-form-urlencoded", [b"8000\r\n" + b"k" * 0x8000 + b"\r\n", b"8001\r\n"],
     b"65,536"),
    ("/drills/answer", "application/x-www-form-urlencoded", [b"100000\r\nanswer="], b"65,536"),
])
def test_a_chunked_body_that_declares_more_than_the_cap_is_refused_at_once(served, path, kind, chunks, cap):
    """The chunk sizes add up past the cap (1 MB; 64 kB for a form): 413 as soon as the size line arrives (the body
    can only be over the cap), not 408 after the read timeout while the server waits for the declared bytes."""
    with served.connect(READ_TIMEOUT_S + 10) as s:
        s.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nContent-Type: {kind}\r\nOrigin: "
                  f"http://127.0.0.1:{served.port}\r\nTransfer-Encoding: chunked\r\n\r\n".encode() + b"".join(chunks))
        status, data = status_of(read_all(s))
    assert status == 413 and b"exceeds the cap of " + cap + b" bytes" in data, data[:300]


@pytest.mark.parametrize("head, body, status, named", [
    (b"Transfer-Encoding: x\r\n", b'{"layout": "(4,8):(8,1)"}', 400, b"Transfer-Encoding 'x' is not supported"),
    (b"Transfer-Encoding: chunked\r\n", b'{"layout": "(4,8):(8,1)"}', 400, b"a chunk must start with its size in hex"),
    (b"X Y: 1\r\n", b"", 400, b"invalid header name 'X Y'"),
    (b": 1\r\n", b"", 400, b"invalid header name ''"),
    (b"".join(b"x%d: y\r\n" % i for i in range(120)), b"", 431, b"at most 100 header fields"),
])
def test_a_malformed_request_is_refused_at_once_with_a_4xx_that_names_it(served, head, body, status, named):
    """gunicorn's parser refusals name the problem (its own messages were at times only the offending text, or
    empty); an unknown transfer coding is a 400, not a 501; a plain body sent as chunked is refused at its first
    byte, not after the read timeout."""
    with served.connect(READ_TIMEOUT_S + 10) as s:
        s.sendall(b"POST /api/layout HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + head
                  + (b"" if b"Transfer-Encoding" in head else b"Content-Length: %d\r\n" % len(body)) + b"\r\n" + body)
        got, data = status_of(read_all(s))
    assert got == status and named in data, data[:300]  # (after the read timeout a half-framed body gets 408)


WEBSOCKET = (b"Connection: Upgrade, close\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
             b"Sec-WebSocket-Version: 13\r\n")


@pytest.mark.parametrize("path, status, says", [
    ("/healthz", 200, b'"ok":true'),
    ("/api/drills/kinds", 200, b'"kind":'),
    ("/nope", 404, b"no page or API route at '/nope'"),
    ("/api/layout", 405, b"method GET is not allowed on '/api/layout'"),
])
def test_a_websocket_upgrade_is_answered_as_the_plain_request_it_is(served, path, status, says):
    """The app serves no WebSocket. gunicorn handed a GET with ``Upgrade: websocket`` to the app as a WebSocket, and
    the router's refusal went out as a bare ``403 Forbidden`` with an empty body, whatever the path (``/healthz``
    too). The upgrade is now ignored (RFC 9110 7.8 lets a server do so): the request is answered as plain HTTP."""
    with served.connect() as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode() + WEBSOCKET + b"\r\n")
        got, data = status_of(read_all(s))
    assert got == status and says in data, data[:300]


def test_options_asterisk_asks_about_the_server_and_gets_allow(served):
    """``OPTIONS *`` (RFC 9110 9.3.7: the server as a whole, not a resource) answered 404 "no page or API route at
    '/*'"; now 204 with the methods the app takes anywhere, as ``OPTIONS`` on a path answers for that path."""
    with served.connect() as s:
        s.sendall(b"OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        got, data = status_of(read_all(s))
    assert got == 204, data[:300]
    allow = next(line for line in data.split(b"\r\n") if line.lower().startswith(b"allow:"))
    assert {m.strip() for m in allow.split(b":", 1)[1].split(b",")} >= {b"GET", b"HEAD", b"POST", b"OPTIONS"}, allow


@pytest.mark.parametrize("target, status, says, absent", [
    ("/healthz#x", 200, b'"ok":true', None),
    ("/healthz#", 200, b'"ok":true', None),
    ("/healthz?a=1#x", 200, b'"ok":true', None),
    ("/healthz#x?a=1", 200, b'"ok":true', None),
    ("/?layout=(4,2):(2,1)#frag", 200, b'value="(4,2):(2,1)"', b"#frag"),
    ("/?layout=(4,2):(2,1)#frag?layout=9:1", 200, b'value="(4,2):(2,1)"', b"9:1"),
    ("http://127.0.0.1/?layout=(4,2):(2,1)#frag", 200, b'value="(4,2):(2,1)"', b"#frag"),
    ("/healthz%23x", 404, b"no page or API route at '/healthz%23x'", None),
    ("/?layout=(4,2):(2,1)%23frag", 200, b'value="(4,2):(2,1)#frag"', None),
])
def test_a_fragment_in_the_request_target_is_not_part_of_the_resource(served, target, status, says, absent):
    """A fragment names a part of what the client already holds, never a resource (RFC 3986 3.5; RFC 9112 3.2's
    request-target has none, and a browser never sends one). gunicorn's ASGI parser kept it in the path
    (``/healthz#x`` answered 404 "no page or API route at '/healthz%23x'") or in the query (``?layout=L#frag`` gave
    the page the layout ``L#frag``); its WSGI parser and uvicorn drop it. Now it is dropped here too, while an
    encoded ``%23`` stays the path's or the query's own character."""
    with served.connect() as s:
        s.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        got, data = status_of(read_all(s))
    assert got == status and says in data, (target, data[:300])
    assert absent is None or absent not in data, (target, absent)


@pytest.mark.parametrize("target", ["127.0.0.1:{port}", "evil.example:443", "[::1]:80"])
def test_connect_to_an_authority_is_refused_with_405_and_allow(served, target):
    """``CONNECT host:port`` asks for a tunnel, which only a proxy opens (RFC 9110 9.3.6); the app answered 404 "no
    page or API route at '/127.0.0.1:8000'", while ``CONNECT /healthz`` answered 405. The authority form names the
    server as a whole, as ``OPTIONS *`` does: 405, with the methods the server takes in ``Allow``, and a detail that
    says the server is no proxy."""
    target = target.format(port=served.port)
    with served.connect() as s:
        s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        got, data = status_of(read_all(s))
    assert got == 405 and b"not a proxy" in data, data[:400]
    allow = next(line for line in data.split(b"\r\n") if line.lower().startswith(b"allow:"))
    assert {m.strip() for m in allow.split(b":", 1)[1].split(b",")} >= {b"GET", b"HEAD", b"POST", b"OPTIONS"}, allow


@pytest.mark.parametrize("head, line", [
    (b"GET /healthz HTTP/1.1\r\n" + b"Cookie: " + b"; ".join(b"c%d=v" % i for i in range(1500))[:8_000] + b"\r\n"
     + b"Cookie: " + b"c=v; " * 1_000 + b"\r\n", b"HTTP/1.1 431 Request Header Fields Too Large\r\n"),
    (b"GET /static/app.css HTTP/1.1\r\nRange: bytes=99999999-\r\n",
     b"HTTP/1.1 416 Requested Range Not Satisfiable\r\n"),
])
def test_the_status_line_names_every_status_the_app_answers(served, head, line):
    """gunicorn's ASGI worker looks the reason phrase up in its own table, which lacks 416, 421, 431, 507 and more:
    the app's 431 for a flood of Cookie headers went out as ``HTTP/1.1 431 Unknown``. Every status has its
    phrase now (http.HTTPStatus's)."""
    with served.connect() as s:
        s.sendall(head + b"Host: 127.0.0.1\r\nConnection: close\r\n\r\n")
        data = read_all(s)
    assert data.startswith(line), data[:300]
    assert b'"detail"' in data or b"Range " in data, data[:400]


def test_a_client_that_reads_nothing_of_its_answer_is_cut_after_the_read_timeout(served):
    """A client that sends a request and never reads the answer held its connection, and the answer's bytes in the
    server's buffer, for ever: gunicorn's ASGI worker waits for the transport to drain with no bound (30 clients each
    asking for a 2^20-cell table took an app process from 133 to 660-730 MB, still held 40 s later). Now a response
    the client accepts nothing of for ``timeout`` seconds (LAYOUTLAB_READ_TIMEOUT_S) is dropped with its connection,
    while a client that reads, however slowly, is served to the end."""
    body = b'{"layout": "(1024,1024):(1,1024)"}'
    request = (b"POST /api/layout HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", served.port))
        s.settimeout(30)
        s.sendall(request)
        time.sleep(2 * READ_TIMEOUT_S + 4)  # reads nothing
        data = read_all(s)
    head, _, rest = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), data[:200]
    length = int(next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")).split(b":")[1])
    assert len(rest) < length, f"the whole answer ({length:,} bytes) waited for a client that read none of it"
    with served.connect(30) as s:  # a client that reads is served whole
        s.sendall(request)
        head, _, rest = read_all(s).partition(b"\r\n\r\n")
    length = int(next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")).split(b":")[1])
    assert len(rest) == length > 1 << 20


def test_a_dead_worker_process_is_restarted_and_sigterm_with_a_half_sent_body_ends_the_server(tmp_path):
    server = Served(tmp_path)
    try:
        (worker,) = children(server.proc.pid)
        os.kill(worker, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while not (children(server.proc.pid) and children(server.proc.pid) != [worker]
                   and server.get("/healthz")[0] == 200):
            assert time.monotonic() < deadline, server.log.read_text()[-2000:]
            time.sleep(0.1)

        s = server.connect()
        s.sendall(b"POST /api/layout HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 1000\r\n\r\n{\"layout\":")
        idle = [server.connect() for _ in range(20)]
        for c in idle[::2]:
            c.sendall(b"GET / HTTP/1.1\r\n")
        time.sleep(0.3)
        start = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(GRACEFUL_S + 10)
        assert time.monotonic() - start < GRACEFUL_S + 5
        assert children(server.proc.pid) == []
        for c in [s, *idle]:
            c.close()
    finally:
        server.stop()
