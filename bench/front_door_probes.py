"""Raw-socket probes of the front door that ``bench/hostile_http.py`` does not send: request-target forms (absolute,
asterisk, authority, encoded slashes, dot segments, fragments, very long paths and queries), HTTP versions, odd
methods, Host and framing headers, WebSocket and h2c upgrades, chunk extensions and trailers, and seeded random
header and target mutations; then a client that never reads its answer.

    python bench/front_door_probes.py --seed 16200 --random 600          # a `layoutlab serve` of its own

Every answer is checked: a 5xx, a 4xx with an empty body, or no answer at all (other than a connection closed for a
request head that never completes) is a failure. Prints the status histogram and the failures; writes
bench/results/front_door_probes_<time>.json."""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import random
import socket
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("_server", ROOT / "bench" / "_server.py")
_server = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_server)

GOOD = b'{"layout":"(4,8):(8,1)"}'
J = "Content-Type: application/json\r\n"


def fixed_cases() -> list[tuple[str, bytes, bool]]:
    """(label, raw request, may_close_without_answer)."""
    host = "Host: 127.0.0.1\r\nConnection: close\r\n"

    def req(m: str, t: str, extra: str = "", body: bytes = b"", ver: str = "HTTP/1.1", h: str = host) -> bytes:
        return f"{m} {t} {ver}\r\n{h}{extra}\r\n".encode("utf-8", "surrogateescape") + body

    ws = "Connection: Upgrade, close\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n" \
         "Sec-WebSocket-Version: 13\r\n"
    chunk = hex(len(GOOD))[2:].encode()
    cases = [
        ("absolute form", req("GET", "http://127.0.0.1/healthz"), False),
        ("absolute form, foreign host", req("GET", "http://evil.example/healthz"), False),
        ("asterisk OPTIONS", req("OPTIONS", "*"), False),
        ("asterisk GET", req("GET", "*"), False),
        ("CONNECT authority", req("CONNECT", "127.0.0.1:80"), False),
        ("authority GET", req("GET", "127.0.0.1:80"), False),
        ("encoded slashes", req("GET", "/api%2Fdrills%2Fkinds"), False),
        ("dot segments", req("GET", "/api/drills/../drills/kinds"), False),
        ("dot segments, static", req("GET", "/static/%2e%2e/%2e%2e/etc/passwd"), False),
        ("double-encoded dots", req("GET", "/static/%252e%252e/app/main.py"), False),
        ("backslashes", req("GET", "/static/..\\app\\main.py"), False),
        ("fragment", req("GET", "/healthz#x"), False),
        ("path 16,000", req("GET", "/" + "a" * 16_000), False),
        ("path 17,000", req("GET", "/" + "a" * 17_000), False),
        ("query 16,000", req("GET", "/?layout=" + "(4" * 7_990), False),
        ("2,000 query keys", req("GET", "/api/drills/next?" + "&".join(f"k{i}=1" for i in range(2000))), False),
        ("HTTP/1.0, no Host", b"GET /healthz HTTP/1.0\r\n\r\n", False),
        ("HTTP/0.9", b"GET /healthz\r\n\r\n", False),
        ("HTTP/2.0 line", req("GET", "/healthz", ver="HTTP/2.0"), False),
        ("h2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", False),
        ("lower-case method", req("get", "/healthz"), False),
        ("long method", req("A" * 30, "/healthz"), False),
        ("TRACE", req("TRACE", "/"), False),
        ("PROPFIND", req("PROPFIND", "/api/layout"), False),
        ("QUERY with body", req("QUERY", "/api/layout", J + f"Content-Length: {len(GOOD)}\r\n", GOOD), False),
        ("tab in target", req("GET", "/heal\thz"), False),
        ("raw 0xff in target", b"GET /\xff HTTP/1.1\r\n" + host.encode() + b"\r\n", False),
        ("bare LF", b"GET /healthz HTTP/1.1\nHost: 127.0.0.1\n\n", False),
        ("CR only", b"GET /healthz HTTP/1.1\rHost: 127.0.0.1\r\r", True),
        ("no Host", b"GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n", False),
        ("two Hosts", req("GET", "/healthz", "Host: evil.example\r\n"), False),
        ("Host with userinfo", req("GET", "/healthz", h="Host: a@127.0.0.1\r\nConnection: close\r\n"), False),
        ("Host NUL", b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\x00x\r\nConnection: close\r\n\r\n", False),
        ("obs-fold", req("GET", "/healthz", "X-A: a\r\n folded\r\n"), False),
        ("header without colon", req("GET", "/healthz", "NoColon\r\n"), False),
        ("0xff header value", req("GET", "/healthz").replace(b"\r\n\r\n", b"\r\nX-A: \xff\xfe\r\n\r\n"), False),
        ("header 9,000 bytes", req("GET", "/healthz", "X-A: " + "a" * 9000 + "\r\n"), False),
        ("101 headers", req("GET", "/healthz", "".join(f"X-{i}: v\r\n" for i in range(101))), False),
        ("90 Cookie headers", req("GET", "/drills", "".join(f"Cookie: a{i}=b\r\n" for i in range(90))), False),
        ("CL and TE", req("POST", "/api/layout", J + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
                          b"0\r\n\r\n"), False),
        ("two CLs", req("POST", "/api/layout", J + f"Content-Length: {len(GOOD)}\r\nContent-Length: 3\r\n", GOOD),
         False),
        ("CL 10^26", req("POST", "/api/layout", J + "Content-Length: " + "9" * 26 + "\r\n", GOOD), False),
        ("TE gzip", req("POST", "/api/layout", J + "Transfer-Encoding: gzip\r\n", GOOD), False),
        ("chunk extension 20 kB", req("POST", "/api/layout", J + "Transfer-Encoding: chunked\r\n",
                                      chunk + b";" + b"a" * 20000 + b"\r\n" + GOOD + b"\r\n0\r\n\r\n"), False),
        ("500 trailers", req("POST", "/api/layout", J + "Transfer-Encoding: chunked\r\n", chunk + b"\r\n" + GOOD
                             + b"\r\n0\r\n" + b"".join(b"X-T%d: v\r\n" % i for i in range(500)) + b"\r\n"), False),
        ("Expect 100-continue", req("POST", "/api/layout", J + f"Expect: 100-continue\r\nContent-Length: "
                                    f"{len(GOOD)}\r\n", GOOD), False),
        ("multipart on a JSON route", req("POST", "/api/layout", "Content-Type: multipart/form-data; boundary=b\r\n"
                                          "Content-Length: 44\r\n", b"--b\r\nContent-Disposition: form-data; na\r\n"
                                          b"--b--"), False),
        ("JSON as text/plain", req("POST", "/api/layout", f"Content-Type: text/plain\r\nContent-Length: {len(GOOD)}"
                                   "\r\n", GOOD), False),
        ("invalid UTF-8 JSON", req("POST", "/api/layout", J + "Content-Length: 16\r\n", b'{"layout":"\xff\xfe"}'),
         False),
        ("JSON 100,000 deep", req("POST", "/api/layout", J + "Content-Length: 200000\r\n",
                                  b"[" * 100_000 + b"]" * 100_000), False),
        ("WebSocket upgrade /healthz", req("GET", "/healthz", ws, h="Host: 127.0.0.1\r\n"), False),
        ("WebSocket upgrade /nope", req("GET", "/nope", ws, h="Host: 127.0.0.1\r\n"), False),
        ("h2c upgrade", req("GET", "/healthz", "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n"), False),
    ]
    return cases


def random_cases(seed: int, n: int) -> list[tuple[str, bytes, bool]]:
    """Seeded mutations: a random target of random bytes and forms, a random method, random header names, values
    and counts (some past the limits), and a random body framing."""
    rng = random.Random(seed)
    paths = ["/", "/healthz", "/api/layout", "/api/drills/kinds", "/algebra", "/banks", "/tv", "/drills", "/lab",
             "/static/app.css", "/openapi.json", "/api/bench/jobs", "/api/drills/offsets-1/answer", "/nope"]
    pieces = ["%2F", "%2e%2e", "..", "//", "%00", "%ff", ";x=1", "?", "#", "%", "\u00e9", "*", "~", "+", "%20"]
    methods = ["GET", "POST", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH", "TRACE", "CONNECT", "FOO", "G-T"]
    out = []
    for i in range(n):
        path = rng.choice(paths)
        for _ in range(rng.randint(0, 4)):
            cut = rng.randint(0, len(path))
            path = path[:cut] + rng.choice(pieces) + path[cut:]
        if rng.random() < 0.1:
            path += "?" + "&".join(f"{rng.choice('abkl')}={rng.randint(0, 10**rng.randint(1, 30))}"
                                   for _ in range(rng.randint(1, 800)))
        if rng.random() < 0.05:
            path = rng.choice(["http://127.0.0.1", "https://localhost:1", "http://evil.example"]) + path
        if not path.startswith(("/", "http")):
            path = "/" + path
        method = rng.choice(methods)
        headers = ["Host: " + rng.choice(["127.0.0.1", "localhost", "LOCALHOST.", "[::1]", "evil.example", ""])]
        for _ in range(rng.choice([0, 1, 3, 10, 60, 99, 120])):
            name = "".join(rng.choice("abcXYZ-_1") for _ in range(rng.randint(1, 12)))
            value = "".join(chr(rng.choice([rng.randint(32, 126), rng.randint(128, 255)]))
                            for _ in range(rng.choice([1, 10, 100, 3000, 9000])))
            headers.append(f"{name}: {value}")
        body = b""
        framing = rng.random()
        if method in ("POST", "PUT", "PATCH") or framing < 0.2:
            body = rng.choice([GOOD, b"{", b"\xff" * 10, b"[" * 5000, b'{"layout":' + b'"(2,2)"' * 3 + b"}",
                               b"a=1&b=2", json.dumps({f"k{j}": j for j in range(2000)}).encode()])
            if framing < 0.5:
                headers.append(f"Content-Length: {len(body)}")
            elif framing < 0.8:
                headers.append("Transfer-Encoding: chunked")
                body = hex(len(body))[2:].encode() + b"\r\n" + body + b"\r\n0\r\n\r\n"
            else:
                headers.append(f"Content-Length: {len(body) + rng.randint(-3, 0)}")
            headers.append("Content-Type: " + rng.choice(["application/json", "text/plain", "",
                                                           "application/x-www-form-urlencoded",
                                                           "multipart/form-data; boundary=z", "application/x+json"]))
        headers.append("Connection: close")
        head = f"{method} {path} HTTP/1.1\r\n" + "".join(h + "\r\n" for h in headers) + "\r\n"
        out.append((f"random {seed}:{i} {method} {path[:40]!r}", head.encode("latin-1", "replace") + body, True))
    return out


def exchange(port: int, raw: bytes, timeout: float) -> tuple[int | None, bytes, float]:
    t0 = time.monotonic()
    data = b""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(raw)
        except OSError:
            pass
        try:
            while chunk := s.recv(65536):
                data += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    status = None
    if data.startswith(b"HTTP/1."):
        try:
            status = int(data.split(b" ", 2)[1])
        except ValueError:
            pass
    return status, data, time.monotonic() - t0


def never_reads(port: int, wait: float) -> dict:
    """A client that asks for a large answer and reads none of it: is its connection dropped within ``wait``?"""
    body = b'{"layout": "(1024,1024):(1,1024)"}'
    raw = (b"POST /api/layout HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "
           b"%d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(("127.0.0.1", port))
        s.sendall(raw)
        time.sleep(wait)
        s.settimeout(10)
        data = b""
        try:
            while chunk := s.recv(65536):
                data += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    head, _, rest = data.partition(b"\r\n\r\n")
    length = next((int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")), 0)
    return {"content_length": length, "received": len(rest), "dropped": len(rest) < length, "waited_s": wait}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=16200)
    ap.add_argument("--random", type=int, default=600, help="seeded random requests")
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--url", help="a running server (default: start `layoutlab serve` on a free port)")
    args = ap.parse_args()
    server = None
    if args.url:
        port = int(args.url.rsplit(":", 1)[1].strip("/"))
    else:
        os.environ["LAYOUTLAB_DATA"] = tempfile.mkdtemp(prefix="front-door-probes-")
        os.environ.setdefault("LAYOUTLAB_EMBEDDED_WORKER", "0")
        os.environ.setdefault("LAYOUTLAB_READ_TIMEOUT_S", "5")
        server = _server.Server()
        port = server.port
    hist: collections.Counter = collections.Counter()
    failures, rows = [], []
    try:
        for label, raw, may_close in fixed_cases() + random_cases(args.seed, args.random):
            status, data, wall = exchange(port, raw, args.timeout)
            hist[str(status)] += 1
            body = data.partition(b"\r\n\r\n")[2]
            problem = None
            if status is None and not (may_close and not data):
                problem = "no answer"
            elif status is not None and status >= 500:
                problem = "5xx"
            elif status is not None and status >= 400 and not body.strip() and not raw.startswith(b"HEAD "):
                problem = "bare 4xx"
            rows.append({"label": label, "status": status, "wall_s": round(wall, 3), "body": body[:160].decode(
                "utf-8", "replace")})
            if problem:
                failures.append({"problem": problem, **rows[-1], "request": raw[:300].decode("latin-1")})
        slow = never_reads(port, float(os.environ.get("LAYOUTLAB_READ_TIMEOUT_S", "30")) * 2 + 5)
    finally:
        if server:
            server.stop()
    five = sum(n for s, n in hist.items() if s != "None" and int(s) >= 500)
    total = sum(hist.values())
    print(f"{total} requests (seed {args.seed}); status histogram: {dict(sorted(hist.items()))}; 5xx: {five}; "
          f"failures: {len(failures)}")
    for f in failures[:30]:
        print("  ", f["problem"], f["label"], f["status"], f["body"][:100])
    print("client that never reads:", slow)
    path = _server.write_result("front_door_probes", {
        "command": "python bench/front_door_probes.py " + " ".join(sys.argv[1:]), "machine": _server.machine(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "served_revision": _server.revision(ROOT),
        "requests": total, "status": dict(hist), "five_xx": five, "failures": failures, "never_reads": slow,
        "answers": rows})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
