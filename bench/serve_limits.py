"""The front door under hostile clients: `layoutlab serve` (gunicorn's ASGI worker, app/serve.py) beside plain uvicorn.

    python bench/serve_limits.py [--server front-door|uvicorn|both] [--sigterm-wait 30]

For each server, over raw sockets: an 80 MB header (the server's CPU seconds, its answer, how much it read), 2,000
and 10,000 headers, a 100 kB request line, 8 unfinished 100 MB headers (RSS before and after), 1,000 idle connections
(half of them with a partial request head: how many are still open after 10 s), a body that stops after 10 of its
1,000 bytes (when the server answers or closes), and SIGTERM with such a body held open (seconds until the server
has exited; ``--sigterm-wait`` caps the wait). Prints a table and writes bench/results/serve_limits_<time>.json.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import socket
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import Server, machine, write_result  # noqa: E402


def _conn(port: int, timeout: float = 10) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)


def _answer(s: socket.socket) -> str:
    data = b""
    try:
        while chunk := s.recv(65536):
            data += chunk
            if b"\r\n\r\n" in data:
                break
    except (TimeoutError, ConnectionResetError):
        pass
    return data.split(b"\r\n", 1)[0].decode("latin-1") or "(closed, no answer)"


def _flood(s: socket.socket, head: bytes, total: int) -> int:
    sent, chunk = 0, b"a" * 65536
    try:
        s.sendall(head)
        while sent < total:
            s.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass
    return sent


def measure(server: Server, sigterm_wait: float) -> dict:
    port, out = server.port, {}
    cpu = server.cpu_seconds()
    with _conn(port) as s:
        sent = _flood(s, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ", 80 << 20)
        out["header_80mb"] = {"answer": _answer(s), "bytes_sent": sent,
                              "server_cpu_s": round(server.cpu_seconds() - cpu, 3)}
    for n in (2_000, 10_000):
        with _conn(port) as s:
            _flood(s, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"".join(b"a%d:b\r\n" % i for i in range(n))
                   + b"\r\n", 0)
            out[f"headers_{n}"] = _answer(s)
    with _conn(port) as s:
        s.sendall(b"GET /?q=" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        out["request_line_100kb"] = _answer(s)
    before, socks = server.rss_mb(), []
    for _ in range(8):
        s = _conn(port, 5)
        _flood(s, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ", 100 << 20)
        socks.append(s)
    out["unfinished_8x100mb_rss_mb"] = {"before": round(before), "after": round(server.rss_mb())}
    for s in socks:
        s.close()
    socks = []
    for i in range(1000):
        s = _conn(port)
        if i % 2:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Part")
        socks.append(s)
    time.sleep(10)
    still = 0
    for s in socks:
        s.setblocking(False)
        try:
            still += s.recv(1) != b""
        except BlockingIOError:
            still += 1
        except OSError:
            pass
        s.close()
    out["idle_1000_open_after_10s"] = still
    body = (b"POST /api/layout HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000\r\n\r\n{\"layout\":")
    with _conn(port, 60) as s:
        s.sendall(body)
        t = time.monotonic()
        answer = _answer(s)
        out["half_sent_body"] = {"answer": answer, "after_s": round(time.monotonic() - t, 1)}
    held = _conn(port, 60)
    held.sendall(body)
    time.sleep(0.5)
    t = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    try:
        server.proc.wait(sigterm_wait)
        out["sigterm_with_half_sent_body_exit_s"] = round(time.monotonic() - t, 1)
    except Exception:
        out["sigterm_with_half_sent_body_exit_s"] = f"> {sigterm_wait}"
        server.proc.kill()
    held.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--server", choices=("front-door", "uvicorn", "both"), default="both")
    ap.add_argument("--sigterm-wait", type=float, default=30)
    args = ap.parse_args()
    resource.setrlimit(resource.RLIMIT_NOFILE, (4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    rows = {}
    for name in (("front-door", "uvicorn") if args.server == "both" else (args.server,)):
        server = Server(server=name)
        try:
            rows[name] = {"command": " ".join(server.args[1:]), **measure(server, args.sigterm_wait)}
        finally:
            if server.proc.poll() is None:
                os.kill(server.proc.pid, signal.SIGKILL)
        print(f"{name}:")
        for k, v in rows[name].items():
            print(f"  {k:34} {v}")
    path = write_result("serve_limits", {"command": "python bench/serve_limits.py " + " ".join(sys.argv[1:]),
                                       "date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": machine(),
                                       "rows": rows})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
