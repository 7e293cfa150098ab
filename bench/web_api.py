"""API latency under a fixed request rate: POST /api/layout, /api/algebra and /api/banks in turn.

    python bench/web_api.py [--seconds 30] [--rate 200] [--tag before] [--tree DIR]

Starts uvicorn (one worker, bench/_server.py) on a free loopback port, then an open-loop client fires requests at
``--rate`` per second (layouts up to 4,096 cells) for ``--seconds``; latency is measured from each request's scheduled
start, so a slow server cannot hide queueing. ``--tree``: serve another checkout's app (a baseline's git worktree, as
bench/web.py's docstring shows). Prints a table and writes bench/results/web_api_[<tag>_]<time>.json with the
command, the date, the served tree and its revision, and the machine's load. (The browser side is bench/web.py.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import Server, machine, revision, write_result  # noqa: E402

LAYOUTS = ["(4,(2,4)):(2,(1,8))", "(64,64):(64,1)", "(64,64):(1,64)", "((8,8),(8,8)):((1,64),(8,512))",
           "Sw<3,3,3> o (32,128):(128,1)", "(16,256):(256,1)", "((4,8),(2,2)):((32,1),(16,8))"]
OPS = [("composition", ["(6,2):(8,2)", "(4,3):(3,1)"]), ("logical_divide", ["(64,64):(64,1)", "<8:1, 8:1>"]),
       ("blocked_product", ["(2,2):(1,2)", "(32,32):(1,32)"]), ("complement", ["(4,4):(1,64)", "4096"]),
       ("zipped_divide", ["(32,128):(128,1)", "<(4,8):(1,4), 16:1>"])]
BANKS = [{"layout": "(8,64):(64,1)", "swizzle": None, "element_bytes": 2, "access": {"kind": "column", "index": 0}},
         {"layout": "(8,64):(64,1)", "swizzle": "Sw<3,3,3>", "element_bytes": 2,
          "access": {"kind": "column", "index": 3}},
         {"layout": "(64,64):(64,1)", "swizzle": "Sw<3,3,3>", "element_bytes": 2,
          "access": {"kind": "ldmatrix", "index": [0, 8]}},
         {"layout": "(32,32):(32,1)", "swizzle": None, "element_bytes": 4, "access": {"kind": "row", "index": 7}}]


def requests() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for k in range(max(len(LAYOUTS), len(OPS), len(BANKS))):
        out.append(("/api/layout", {"layout": LAYOUTS[k % len(LAYOUTS)]}))
        op, args = OPS[k % len(OPS)]
        out.append(("/api/algebra", {"op": op, "args": args}))
        out.append(("/api/banks", BANKS[k % len(BANKS)]))
    return out


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))] if s else float("nan")


async def _post(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes) -> int:
    """One HTTP/1.1 keep-alive request on an open connection; returns the status code."""
    writer.write(raw)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    await reader.readexactly(length)
    return status


async def load(base: str, rate: float, seconds: float, connections: int = 16) -> dict[str, Any]:
    """Open-loop load: request k is due at start + k/rate; ``connections`` keep-alive sockets take due requests in
    order. Latency counts from the due time (queueing included). A raw HTTP/1.1 client keeps the load generator's
    own cost to a few microseconds per request, so the numbers are the server's."""
    host, port = base.removeprefix("http://").split(":")
    reqs = []
    for path, body in requests():
        payload = json.dumps(body).encode()
        reqs.append((path, (f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                            f"Content-Length: {len(payload)}\r\n\r\n").encode() + payload))
    lat: dict[str, list[float]] = {}
    errors: dict[str, int] = {}
    conns = [await asyncio.open_connection(host, int(port)) for _ in range(connections)]
    for _path, raw in reqs:  # warm-up: every request once
        await _post(*conns[0], raw)
    n = int(rate * seconds)
    counter = iter(range(n))
    start = time.perf_counter()

    async def worker(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for k in counter:
            path, raw = reqs[k % len(reqs)]
            due = start + k / rate
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            status = await _post(reader, writer, raw)
            lat.setdefault(path, []).append((time.perf_counter() - due) * 1000)
            if status != 200:
                errors[path] = errors.get(path, 0) + 1

    await asyncio.gather(*(worker(r, w) for r, w in conns))
    elapsed = time.perf_counter() - start
    for _, w in conns:
        w.close()
    every = [x for v in lat.values() for x in v]
    rows = {p: {"n": len(v), "p50_ms": statistics.median(v), "p99_ms": pct(v, 99), "max_ms": max(v)}
            for p, v in sorted(lat.items())}
    return {"target_rate": rate, "seconds": seconds, "connections": connections, "requests": len(every),
            "achieved_rate": len(every) / elapsed, "p50_ms": statistics.median(every), "p99_ms": pct(every, 99),
            "errors": errors, "by_route": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--rate", type=float, default=200)
    ap.add_argument("--tag", default="", help="a word for the result file's name (e.g. before, after)")
    ap.add_argument("--tree", help="serve the app of this checkout (a baseline's git worktree) instead of this one")
    a = ap.parse_args()
    server = Server(tree=a.tree)
    before = machine()
    try:
        api = asyncio.run(load(server.url, a.rate, a.seconds))
    finally:
        server.stop()
    print(f"API  {api['requests']} requests in {a.seconds:.0f} s at target {a.rate:.0f}/s "
          f"(achieved {api['achieved_rate']:.1f}/s)")
    print(f"{'route':<16}{'n':>7}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}")
    for route, r in api["by_route"].items():
        print(f"{route:<16}{r['n']:>7}{r['p50_ms']:>10.2f}{r['p99_ms']:>10.2f}{r['max_ms']:>10.2f}")
    print(f"{'all':<16}{api['requests']:>7}{api['p50_ms']:>10.2f}{api['p99_ms']:>10.2f}")
    print(f"errors: {api['errors'] or 'none'}   target: p99 < 50 ms")
    out = write_result("web_api" + (f"_{a.tag}" if a.tag else ""),
                       {"command": " ".join(["python", "bench/web_api.py", *sys.argv[1:]]),
                        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "tree": str(server.tree),
                        "revision": revision(server.tree), "machine_before": before, "machine_after": machine(),
                        "api": api})
    print(f"wrote {out.relative_to(Path(__file__).resolve().parent.parent)}")


if __name__ == "__main__":
    main()
