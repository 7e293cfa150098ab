"""Every route of the app (``app.routes``), each with the worst-case inputs of every kind it reads (query strings,
urlencoded and multipart forms, JSON bodies, path parameters, cookies), sent to a real ``layoutlab serve`` while a
second client asks ``/healthz`` every 20 ms: the event loop must never be held.

    python bench/route_loop_probe.py --seed 17210                 # a `layoutlab serve` of its own

Per request: status, wall time and the app process's CPU (from /proc); failures are a 5xx, a 4xx with no message,
no answer, more than 1 s of server CPU, or a /healthz answer slower than 0.5 s while the request ran. Prints the
counts and the failures; writes bench/results/route_loop_probe_<time>.json."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
_spec = importlib.util.spec_from_file_location("_server", ROOT / "bench" / "_server.py")
_server = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_server)


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def send(port: int, data: bytes, timeout: float = 30.0) -> tuple[int, bytes]:
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    except OSError:  # not listening yet, or gone
        return 0, b""
    out = b""
    try:
        s.sendall(data)
        while chunk := s.recv(1 << 16):
            out += chunk
    except (TimeoutError, ConnectionResetError, BrokenPipeError):
        pass
    finally:
        s.close()
    m = re.match(rb"HTTP/1\.[01] (\d{3})", out)
    return (int(m.group(1)) if m else 0), out


class Prober(threading.Thread):
    """``GET /healthz`` every 20 ms; ``worst`` is the slowest answer since the last ``reset``."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port, self.worst, self.stop = port, 0.0, False

    def run(self) -> None:
        while not self.stop:
            t = time.monotonic()
            send(self.port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", 10)
            self.worst = max(self.worst, time.monotonic() - t)
            time.sleep(0.02)


def hostile_values(rng: random.Random) -> list[str]:
    unit = "(" + ",".join(["1"] * 900) + "):(" + ",".join(["1"] * 900) + ")"
    twos = "(" + ",".join(["2"] * 40) + "):(" + ",".join(str(2 ** i) for i in range(40)) + ")"
    return [unit, "Sw<3,3,3> o " + unit[:3000], twos, "(" * 3000 + "4" + ")" * 3000, "9" * 4200,
            "(1024,1024):(1@0,1@1)", "".join(rng.choice("(),:1@oSw<>3 ") for _ in range(3000)), "\x00\ufffd" * 500]


def requests_for(route: dict, rng: random.Random) -> list[tuple[str, bytes]]:
    path, method, params, form = route["path"], route["method"], route["query"], route["form"]
    head = f"{method} {{}} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    target = re.sub(r"\{[^}]+\}", lambda m: rng.choice(["1", "x" * 3000, "%00", "..%2f", "-1", "9" * 400]), path)
    out = []
    for v in hostile_values(rng):
        q = "&".join(f"{p}={quote(v)}" for p in params)[:15_000] or f"x={quote(v)}"[:15_000]
        out.append(("query " + v[:12], (head.format(target + "?" + q) + "\r\n").encode("utf-8", "surrogateescape")))
    many = "&".join(f"k{i}={i}" for i in range(1600))[:15_000]
    out.append(("query 1,600 keys", (head.format(target + "?" + many) + "\r\n").encode()))
    if method in ("POST", "PUT", "PATCH", "DELETE"):
        names = form or ["answer", "layout"]
        for v in hostile_values(rng)[:4]:
            body = "&".join(f"{n}={quote(v)}" for n in names).encode()[:60_000]
            out.append(("form " + v[:12], body_req(head, target, "application/x-www-form-urlencoded", body)))
        body = "&".join(f"f{i}=" for i in range(15_000)).encode()[:64_000]
        out.append(("form 15,000 fields", body_req(head, target, "application/x-www-form-urlencoded", body)))
        b = "b" * 60
        parts = b"".join(f"--{b}\r\nContent-Disposition: form-data; name=\"{n}\"\r\n\r\n{'1' * 10}\r\n".encode()
                         for n in (names * 700)[:900]) + f"--{b}--\r\n".encode()
        mp = f"multipart/form-data; boundary={b}"
        out.append(("multipart 900 parts", body_req(head, target, mp, parts[:65_000])))
        big = (f"--{b}\r\nContent-Disposition: form-data; name=\"{names[0]}\"\r\n\r\n".encode() + b"(1," * 20_000
               + f"\r\n--{b}--\r\n".encode())
        out.append(("multipart 60 kB part", body_req(head, target, mp, big)))
        keys = json.dumps({f"k{i}": i for i in range(90_000)}).encode()[:1_000_000]
        out.append(("json 90,000 keys", body_req(head, target, "application/json", keys)))
        out.append(("json deep", body_req(head, target, "application/json", b"[" * 500_000 + b"]" * 500_000)))
        out.append(("json 200 long ints", body_req(head, target, "application/json",
                                                    ("[" + ",".join(["9" * 4300] * 200) + "]").encode())))
        lay = {"layout": hostile_values(rng)[0], "a": hostile_values(rng)[0], "b": hostile_values(rng)[2]}
        out.append(("json unit modes", body_req(head, target, "application/json", json.dumps(lay).encode())))
    cookie = "Cookie: " + "; ".join(f"c{i}=v" for i in range(1900))[:8_100] + "\r\n"
    out.append(("cookies 99 x 8 kB", (head.format(target) + cookie * 98 + "\r\n").encode()))
    return out


def quote(v: str) -> str:
    from urllib.parse import quote as q

    return q(v, safe="(),:@<>", errors="surrogateescape")


def body_req(head: str, target: str, ctype: str, body: bytes) -> bytes:
    return (head.format(target) + f"Content-Type: {ctype}\r\nOrigin: http://127.0.0.1\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def routes() -> list[dict]:
    os.environ.setdefault("LAYOUTLAB_DATA", tempfile.mkdtemp())
    os.environ.setdefault("LAYOUTLAB_ALLOWED_HOSTS", "127.0.0.1")
    from fastapi.params import Form

    from app.budget import api_routes
    from app.main import create_app

    app = create_app(embedded_worker=False)
    out = []
    for r in api_routes(app.routes):
        query = [p.alias for p in r.dependant.query_params]
        form = [p.alias for p in r.dependant.body_params if isinstance(p.field_info, Form)]
        for m in sorted(r.methods - {"HEAD"}):
            out.append({"path": r.path, "method": m, "query": query, "form": form})
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=17210)
    ap.add_argument("--only", default="", help="a regex on the route path")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    todo = [r for r in routes() if re.search(args.only, r["path"])]
    os.environ["LAYOUTLAB_DATA"] = tempfile.mkdtemp(prefix="route-loop-")
    port = _server.free_port()
    server = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--no-worker", "--port", str(port)],
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 300  # a loaded host can take minutes to boot the app
    while send(port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", 10)[0] != 200:
        if time.monotonic() > deadline or server.poll() is not None:
            server.kill()
            raise SystemExit("server did not start")
        time.sleep(0.5)
    try:
        app_pid = int(Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()[0])
        prober = Prober(port)
        prober.start()
        rows, failures = [], []
        for route in todo:
            for name, raw in requests_for(route, rng):
                prober.worst = 0.0
                c0, t0 = cpu_s(app_pid), time.monotonic()
                status, answer = send(port, raw)
                wall, cpu = time.monotonic() - t0, cpu_s(app_pid) - c0
                time.sleep(0.05)
                body = answer.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in answer else b""
                row = {"route": f"{route['method']} {route['path']}", "input": name, "status": status,
                       "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "healthz_s": round(prober.worst, 3)}
                rows.append(row)
                bad = (status == 0 or status >= 500 or (400 <= status < 500 and len(body.strip()) < 5)
                       or cpu > 1.0 or prober.worst > 0.5)
                if bad:
                    failures.append({**row, "answer": answer[:300].decode("latin-1")})
        prober.stop = True
    finally:
        server.terminate()
        server.wait(30)
    worst = sorted(rows, key=lambda r: -r["cpu_s"])[:8]
    statuses: dict[int, int] = {}
    for r in rows:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    print(f"{len(rows)} requests over {len(todo)} route methods (seed {args.seed}); "
          f"statuses {dict(sorted(statuses.items()))}")
    print(f"failures: {len(failures)}; max healthz {max(r['healthz_s'] for r in rows):.3f} s; "
          f"max cpu {max(r['cpu_s'] for r in rows):.3f} s")
    for f in failures[:30]:
        print("FAIL", f)
    for w in worst:
        print("cpu", w)
    out = ROOT / "bench" / "results" / f"route_loop_probe_{time.strftime('%Y%m%d_%H%M%S')}.json"
    out.write_text(json.dumps({"seed": args.seed, "rows": rows, "failures": failures}, indent=1))
    print("wrote", out)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
