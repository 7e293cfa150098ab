"""Memory ceiling: the server's RSS after many distinct requests (every one a cache miss that the caches keep).

    python bench/memory.py [--requests 100000] [--connections 16]

Starts uvicorn in a subprocess (bench/_server.py) and sends distinct inputs over keep-alive connections, in turn:
POST /api/layout with a small enumerated layout, POST /api/layout with an oversize (not enumerated) one, POST
/api/algebra composition, GET the explorer page, POST /api/banks. Records the server's RSS at checkpoints; the caches
are bounded in bytes (algebra.core.memo), so RSS must level off instead of growing with the count. Prints a table and
writes bench/results/memory_<time>.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import Server, http_send, machine, write_result  # noqa: E402


def request(k: int) -> tuple[str, str, bytes | None]:
    """The k-th distinct request: (method, path, JSON body)."""
    a, b = 2 + k % 61, 2 + (k // 61) % 63
    kind = k % 5
    if kind == 0:
        return "POST", "/api/layout", json.dumps({"layout": f"({a},{b}):({b + k // 3843},1)"}).encode()
    if kind == 1:
        return "POST", "/api/layout", json.dumps({"layout": f"({(1 << 20) + k},{a}):(1,{(1 << 21) + k})"}).encode()
    if kind == 2:
        rhs = f"({k % 7 + 1},{k % 5 + 1}):(1,{k % 11 + 1})"
        return "POST", "/api/algebra", json.dumps({"op": "composition", "args": [f"({a},{b}):({b},1)", rhs]}).encode()
    if kind == 3:
        return "GET", "/?layout=" + quote(f"({a},{b}):({k // 3843 + 1},{a * (k // 3843 + 1)})"), None
    tile = f"(32,{32 + k % 96}):({32 + k % 96 + k // 96 % 64},1)"
    return "POST", "/api/banks", json.dumps({"layout": tile, "element_bytes": 4,
                                             "access": {"kind": "column", "index": k % 32}}).encode()


async def run(server: Server, total: int, connections: int, checkpoints: list[int]) -> list[dict]:
    counter = iter(range(total))
    statuses: dict[int, int] = {}
    done = 0
    marks: list[dict] = [{"requests": 0, "rss_mb": round(server.rss_mb(), 1)}]
    t0 = time.perf_counter()

    async def worker() -> None:
        nonlocal done
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        for k in counter:
            st = await http_send(reader, writer, *request(k))
            statuses[st] = statuses.get(st, 0) + 1
            done += 1
            if checkpoints and done >= checkpoints[0]:
                checkpoints.pop(0)
                marks.append({"requests": done, "rss_mb": round(server.rss_mb(), 1),
                              "seconds": round(time.perf_counter() - t0, 1), "statuses": dict(statuses)})
                print(f"{done:>8} requests  RSS {marks[-1]['rss_mb']:>7.1f} MB  {marks[-1]['seconds']:>6.1f} s",
                      flush=True)
        writer.close()

    await asyncio.gather(*(worker() for _ in range(connections)))
    return marks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=100_000)
    ap.add_argument("--connections", type=int, default=16)
    args = ap.parse_args()
    checkpoints = sorted({min(args.requests, n) for n in (1000, 5000, 10_000, 25_000, 50_000, 75_000, 100_000,
                                                          args.requests)})
    server = Server()
    try:
        marks = asyncio.run(run(server, args.requests, args.connections, list(checkpoints)))
    finally:
        server.stop()
    peak = max(m["rss_mb"] for m in marks)
    print(f"RSS: start {marks[0]['rss_mb']} MB, after {marks[-1]['requests']:,} distinct requests "
          f"{marks[-1]['rss_mb']} MB (peak {peak} MB)")
    path = write_result("memory", {
        "command": "python bench/memory.py " + " ".join(sys.argv[1:]), "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": machine(), "server": " ".join(server.args[1:]), "requests": args.requests,
        "mix": "1/5 each: small /api/layout, oversize /api/layout, /api/algebra composition, explorer page, "
               "/api/banks; every request distinct",
        "rss_start_mb": marks[0]["rss_mb"], "rss_end_mb": marks[-1]["rss_mb"], "rss_peak_mb": peak,
        "checkpoints": marks})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
