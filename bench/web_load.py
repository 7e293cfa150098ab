"""Page throughput: the explorer and workbench pages for ordinary layouts (<= 64x64) under load.

    python bench/web_load.py [--rate 400] [--seconds 10] [--workers 1] [--no-wrk] [--server front-door|uvicorn]

Starts ``layoutlab serve`` (gunicorn's ASGI worker, app.serve) or plain uvicorn in a subprocess (bench/_server.py).
For each scenario, two measurements:

- open loop at ``--rate`` requests per second (an asyncio client on raw keep-alive connections): latency counts from
  each request's scheduled start, so a slow server cannot hide its queue; the target is p99 < 50 ms at 400 req/s;
- closed loop with ``wrk`` (Debian package ``wrk``; skipped when absent): the most requests per second 8 connections
  get, and their p99.

Scenarios: one URL repeated (what a page cache serves) and distinct layouts per request (every one rendered). The
server's CPU time per request (from /proc) is recorded too: unlike latency, it does not depend on what else the
shared cores are running.
Prints a table and writes bench/results/web_load_<time>.json with the machine's load average (the cores are shared).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import Server, http_send, machine, write_result  # noqa: E402


def distinct_explorer(n: int) -> list[str]:
    out = []
    for k in range(n):
        a, b = 2 + k % 63, 2 + (k // 63) % 63
        s = 1 + k // 3969
        out.append("/?layout=" + quote(f"({a},{b}):({s},{a * s})" if k % 2 else f"({a},{b}):({b * s},{s})"))
    return out


def distinct_workbench(n: int) -> list[str]:
    ops = ["composition", "logical_divide", "blocked_product", "coalesce"]
    out = []
    for k in range(n):
        a, b = 2 * (1 + k % 32), 2 * (1 + (k // 32) % 32)
        op = ops[k % len(ops)]
        lhs = quote(f"({a},{b}):({b},1)")
        rhs = {"composition": quote(f"({a // 2},2):(2,1)"), "logical_divide": quote("<2:1,2:1>"),
               "blocked_product": quote(f"({1 + k % 2},{1 + k % 3}):(1,{1 + k % 2})"), "coalesce": ""}[op]
        out.append(f"/algebra?op={op}&a={lhs}" + (f"&b={rhs}" if rhs else ""))
    return out


SCENARIOS = {
    "explorer 16x16 (same URL)": lambda n: ["/?layout=(16,16):(16,1)"],
    "explorer 64x64 (same URL)": lambda n: ["/?layout=(64,64):(64,1)"],
    "workbench composition (same URL)": lambda n: ["/algebra?op=composition&a=(6,2):(8,2)&b=(4,3):(3,1)"],
    "workbench logical_divide 64x64 (same URL)": lambda n: ["/algebra?op=logical_divide&a=(64,64):(64,1)&b=<8:1,8:1>"],
    "explorer, distinct layouts <= 64x64": distinct_explorer,
    "workbench, distinct ops on <= 64x64": distinct_workbench,
}


async def open_loop(port: int, paths: list[str], rate: float, seconds: float, connections: int = 32) -> dict:
    """Requests scheduled every 1/rate s, each sent on the next free connection; latency from its schedule."""
    n = int(rate * seconds)
    queue: asyncio.Queue = asyncio.Queue()
    lat: list[float] = []
    errors = 0
    start = time.perf_counter() + 0.2

    async def producer() -> None:
        for k in range(n):
            delay = start + k / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            queue.put_nowait((start + k / rate, paths[k % len(paths)]))
        for _ in range(connections):
            queue.put_nowait(None)

    async def worker() -> None:
        nonlocal errors
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while (item := await queue.get()) is not None:
            scheduled, path = item
            status = await http_send(reader, writer, "GET", path)
            lat.append(time.perf_counter() - scheduled)
            errors += status != 200
        writer.close()

    await asyncio.gather(producer(), *(worker() for _ in range(connections)))
    wall = time.perf_counter() - start  # from the first scheduled request to the last answer
    lat.sort()

    def pct(p: float) -> float:
        return round(1000 * lat[min(len(lat) - 1, int(p / 100 * len(lat)))], 1)

    return {"rate_target": rate, "requests": len(lat), "achieved_rps": round(len(lat) / wall, 1), "errors": errors,
            "p50_ms": pct(50), "p90_ms": pct(90), "p99_ms": pct(99), "max_ms": round(1000 * lat[-1], 1)}


LUA = """
paths = {}
for line in io.lines("%s") do paths[#paths + 1] = line end
counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", paths[(counter %% #paths) + 1])
end
"""


def closed_loop(url: str, paths: list[str], seconds: int, connections: int = 8) -> dict | None:
    wrk = shutil.which("wrk")
    if wrk is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        plist = Path(tmp) / "paths.txt"
        plist.write_text("\n".join(paths) + "\n")
        script = Path(tmp) / "rotate.lua"
        script.write_text(LUA % plist)
        out = subprocess.run([wrk, "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(script), url],
                             capture_output=True, text=True, timeout=seconds + 60).stdout

    def ms(label: str) -> float | None:
        m = re.search(rf"^\s*{label}\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not m:
            return None
        return round(float(m.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[m.group(2)], 2)

    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return {"connections": connections, "rps": float(rps.group(1)) if rps else None, "p50_ms": ms("50%"),
            "p99_ms": ms("99%"), "non_2xx": int(non2xx.group(1)) if non2xx else 0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=float, default=400)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--no-wrk", action="store_true")
    ap.add_argument("--server", choices=("front-door", "uvicorn"), default="front-door")
    args = ap.parse_args()
    n = int(args.rate * args.seconds) + 10
    server = Server(workers=args.workers, server=args.server)
    rows = []
    try:
        for name, make in SCENARIOS.items():
            paths = make(n)
            asyncio.run(open_loop(server.port, paths[:50], 50, 1))  # warm: imports, caches for the same-URL cases
            cpu0 = server.cpu_seconds()
            ol = asyncio.run(open_loop(server.port, paths[50:] if len(paths) > 50 else paths, args.rate,
                                       args.seconds))
            ol["server_cpu_ms_per_request"] = round(1000 * (server.cpu_seconds() - cpu0) / max(1, ol["requests"]), 2)
            cl = None if args.no_wrk else closed_loop(server.url, make(50_000), int(args.seconds))
            rows.append({"scenario": name, "distinct_urls": len(paths), "open_loop": ol, "wrk": cl})
            print(f"{name:44} open loop {ol['achieved_rps']:>6.0f}/{args.rate:.0f} req/s p50 {ol['p50_ms']:>6} ms "
                  f"p99 {ol['p99_ms']:>7} ms err {ol['errors']} server CPU {ol['server_cpu_ms_per_request']} ms/req" +
                  (f" | wrk {cl['rps']:>7.0f} req/s p99 {cl['p99_ms']} ms" if cl else ""), flush=True)
    finally:
        server.stop()
    path = write_result("web_load", {
        "command": "python bench/web_load.py " + " ".join(sys.argv[1:]), "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": machine(), "server": " ".join(server.args[1:]), "target": {"rps": 400, "p99_ms": 50},
        "rows": rows})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
