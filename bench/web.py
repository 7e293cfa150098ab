"""Web benchmark: API latency under a fixed request rate, and browser paint time of large explorer grids.

    python bench/web.py [--seconds 30] [--rate 200] [--no-browser] [--no-api] [--pages-only]

API: starts uvicorn (one worker) on a free loopback port, then an open-loop client fires requests at ``--rate``
per second (POST /api/layout, /api/algebra, /api/banks in turn, layouts up to 4,096 cells) for ``--seconds``;
latency is measured from each request's scheduled start, so a slow server cannot hide queueing. Browser: chromium via
Playwright; the time from the explorer's input changing to the new grid painted (two animation frames after the
htmx swap), for 64x64 and 128x128 layouts, back to back and after a pause; the workbench composition of two
128x128 layouts, input to paint; the banks lab's server time for an fp16 128x128 tile with the comparison; every
page opened fresh with a large input (128x128 layouts, the largest wgmma atom), navigation start to painted. Prints
a table and writes bench/results/web_<timestamp>.json (with the command, the date and the machine's load).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"

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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    env = dict(os.environ, LAYOUTLAB_DATA=os.environ.get("LAYOUTLAB_DATA", str(ROOT / ".data" / "bench")))
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory", "--port", str(port),
                             "--log-level", "warning", "--no-access-log"], cwd=ROOT, env=env)
    import httpx

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.terminate()
    raise SystemExit("server did not start")


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))] if s else float("nan")


async def _conn(host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection(host, port)


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
    conns = [await _conn(host, int(port)) for _ in range(connections)]
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


PAINT_JS = """([text, pause]) => new Promise((resolve) => setTimeout(() => {
    const input = document.querySelector('#layout-input');
    const t0 = performance.now();
    document.body.addEventListener('htmx:afterSettle', function done() {
        document.body.removeEventListener('htmx:afterSettle', done);
        requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now() - t0)));
    });
    input.value = text;
    input.dispatchEvent(new Event('input', {bubbles: true}));
}, pause))"""


def browser_paint(base: str, repeats: int = 7, idle_pause_ms: int = 1500) -> dict[str, Any]:
    """Median time from the explorer's input changing to two animation frames after the htmx swap (the grid is
    painted), alternating two layouts of each size. ``burst``: updates back to back, as while typing; ``idle``: each
    update after ``idle_pause_ms`` of quiet (the previous grid fully laid out by then, see static/app.js)."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        return {"skipped": "chromium not installed"}
    from playwright.sync_api import sync_playwright

    cases = {"64x64": "(64,64):(64,1)", "128x128": "(128,128):(128,1)"}
    alt = {"64x64": "(64,64):(1,64)", "128x128": "(128,128):(1,128)"}
    out: dict[str, Any] = {}
    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"]
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=args)
        out["chromium"] = b.version
        page = b.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{base}/?layout=8:1")
        page.wait_for_selector("#grid-explorer")
        for name, text in cases.items():
            for mode, pause in (("burst", 0), ("idle", idle_pause_ms)):
                times = []
                for k in range(repeats + 1):
                    ms = page.evaluate(PAINT_JS, [text if k % 2 == 0 else alt[name], pause])
                    if k:  # the first run warms the server cache and the page
                        times.append(ms)
                out[f"{name} {mode}"] = {"median_ms": statistics.median(times), "max_ms": max(times), "runs": times}
        b.close()
    return out


WORKBENCH_JS = """([b, pause]) => new Promise((resolve) => setTimeout(() => {
    const input = document.querySelector('#b-input');
    const t0 = performance.now();
    const at = {};
    for (const ev of ['htmx:beforeRequest', 'htmx:beforeSwap', 'htmx:afterSwap']) {
        document.body.addEventListener(ev, function f() {
            document.body.removeEventListener(ev, f); at[ev.slice(5)] = performance.now() - t0; });
    }
    document.body.addEventListener('htmx:afterSettle', function done() {
        document.body.removeEventListener('htmx:afterSettle', done);
        at.afterSettle = performance.now() - t0;
        requestAnimationFrame(() => requestAnimationFrame(() => resolve({total: performance.now() - t0,
            trigger: at.beforeRequest, request: at.beforeSwap - at.beforeRequest, swap: at.afterSwap - at.beforeSwap,
            paint: performance.now() - t0 - at.afterSwap})));
    });
    input.value = b;
    input.dispatchEvent(new Event('input', {bubbles: true}));
}, pause))"""


def workbench_paint(base: str, repeats: int = 7, pause_ms: int = 1500) -> dict[str, Any]:
    """The workbench composition of two 128x128 layouts (A, B and the result: 3 x 16,384 cells): median time from
    B's input changing to two animation frames after the htmx swap (the input's own trigger delay included), the
    size of the HTML fragment, and where the time goes (medians): the input's trigger delay, the request (server and
    transfer), the DOM swap, and layout + paint."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        return {"skipped": "chromium not installed"}
    import httpx
    from playwright.sync_api import sync_playwright

    a, bs = "(128,128):(128,1)", ["(128,128):(1,128)", "(128,128):(128,1)"]
    url = f"{base}/algebra?op=composition&a={a}&b={bs[0]}"
    size = len(httpx.get(url, headers={"HX-Request": "true"}, timeout=30).content)
    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"]
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=args)
        page = b.new_page(viewport={"width": 1400, "height": 900})
        page.goto(url)
        page.wait_for_selector("#grid-r")
        runs = [page.evaluate(WORKBENCH_JS, [bs[(k + 1) % 2], pause_ms]) for k in range(repeats + 1)][1:]
        b.close()
    times = [r["total"] for r in runs]
    phases = {k: statistics.median(r[k] for r in runs) for k in ("trigger", "request", "swap", "paint")}
    return {"composition 128x128": {"median_ms": statistics.median(times), "max_ms": max(times), "runs": times,
                                    "fragment_bytes": size, "phases_median_ms": phases}}


def banks_server(base: str, repeats: int = 9) -> dict[str, Any]:
    """Server time of the banks lab page for an fp16 128x128 tile with the naive / padded / swizzled comparison:
    each request a different column (as while typing: no cached analysis), the htmx fragment, timed to the last
    byte."""
    import httpx

    times, size = [], 0
    with httpx.Client(timeout=60) as c:
        for k in range(repeats + 1):
            url = (f"{base}/banks?layout=(128,128):(128,1)&element_bytes=2&access=column:{(7 * k + 3) % 128}"
                   "&compare=1")
            t0 = time.perf_counter()
            r = c.get(url, headers={"HX-Request": "true"})
            ms = (time.perf_counter() - t0) * 1000
            size = len(r.content)
            if k:
                times.append(ms)
    return {"banks fp16 128x128 + comparison": {"median_ms": statistics.median(times), "max_ms": max(times),
                                                "runs": times, "fragment_bytes": size}}


PAGES = {"explorer (128,128):(128,1)": "/?layout=(128,128):(128,1)",
         "explorer Sw<3,4,3> o (128,64)": "/?layout=Sw<3,4,3> o 0 o (128,64):(64,1)",
         "workbench 128x128 composition": "/algebra?op=composition&a=(128,128):(128,1)&b=(128,128):(1,128)",
         "banks fp16 (128,128) ldmatrix": "/banks?layout=(128,128):(128,1)&element_bytes=2&access=ldmatrix:0,8",
         "tv SM90 64x256x16 C": "/tv?atom=SM90_64x256x16_F32F16F16_SS&operand=C",
         "doctor": "/doctor", "drills": "/drills?kind=offsets&seed=3", "lab": "/lab"}
LOAD_JS = """() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => {
    const n = performance.getEntriesByType('navigation')[0];
    resolve({server: n.responseStart - n.requestStart, html_bytes: n.transferSize, dom: n.domContentLoadedEventEnd,
             painted: performance.now()}); })))"""


def page_loads(base: str, repeats: int = 5, width: int = 1400) -> dict[str, Any]:
    """Each page with a large input opened ``repeats`` times in a fresh tab after a first, cold one: the medians of
    the server's time to first byte, DOMContentLoaded, and two animation frames after the load event (painted), in
    ms from the navigation's start; the cold open's server time and paint beside them."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        return {"skipped": "chromium not installed"}
    from playwright.sync_api import sync_playwright

    out: dict[str, Any] = {}
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
        for name, path in PAGES.items():
            runs = []
            for _ in range(repeats + 1):
                page = b.new_page(viewport={"width": width, "height": 900})
                page.goto(base + path, wait_until="load")
                runs.append(page.evaluate(LOAD_JS))
                page.close()
            first, runs = runs[0], runs[1:]  # the first: nothing cached in the server yet
            out[name] = {key: statistics.median(r[key] for r in runs) for key in runs[0]} | {
                "first_server": first["server"], "first_painted": first["painted"], "runs": runs}
        b.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--rate", type=float, default=200)
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--no-api", action="store_true")
    ap.add_argument("--pages-only", action="store_true", help="only the page loads with large inputs")
    a = ap.parse_args()
    port = free_port()
    proc = start_server(port)
    base = f"http://127.0.0.1:{port}"
    load_before = os.getloadavg()
    api, paint, big = {}, {}, {}
    try:
        pages = {} if a.no_browser else page_loads(base)
        if not a.pages_only:
            api = {} if a.no_api else asyncio.run(load(base, a.rate, a.seconds))
            paint = {} if a.no_browser else browser_paint(base)
            big = banks_server(base)
            if not a.no_browser:
                big.update(workbench_paint(base))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    if api:
        print(f"API  {api['requests']} requests in {a.seconds:.0f} s at target {a.rate:.0f}/s "
              f"(achieved {api['achieved_rate']:.1f}/s)")
        print(f"{'route':<16}{'n':>7}{'p50 ms':>10}{'p99 ms':>10}{'max ms':>10}")
        for route, r in api["by_route"].items():
            print(f"{route:<16}{r['n']:>7}{r['p50_ms']:>10.2f}{r['p99_ms']:>10.2f}{r['max_ms']:>10.2f}")
        print(f"{'all':<16}{api['requests']:>7}{api['p50_ms']:>10.2f}{api['p99_ms']:>10.2f}")
        print(f"errors: {api['errors'] or 'none'}   target: p99 < 50 ms")
    for name, r in paint.items():
        if isinstance(r, dict):
            target = 150 if name.startswith("64x64") else 400
            print(f"paint {name:<14} median {r['median_ms']:.0f} ms, max {r['max_ms']:.0f} ms (target < {target} ms)")
        else:
            print(f"paint: {name} {r}")
    for name, r in big.items():
        if "median_ms" in r:
            target = 150 if name.startswith("banks") else 400
            print(f"{name:<34} median {r['median_ms']:.0f} ms, max {r['max_ms']:.0f} ms, "
                  f"{r['fragment_bytes']:,} bytes (target < {target} ms)")
            if "phases_median_ms" in r:  # where the time goes: input delay, server + transfer, DOM swap, layout+paint
                print("    " + ", ".join(f"{k} {v:.0f} ms" for k, v in r["phases_median_ms"].items()))
    for name, r in pages.items():
        if isinstance(r, dict):
            print(f"page {name:<32} server {r['server']:>4.0f} ms, DOM ready {r['dom']:>4.0f} ms, painted "
                  f"{r['painted']:>4.0f} ms; cold: server {r['first_server']:>4.0f}, "
                  f"painted {r['first_painted']:>4.0f} ms (target < 1000 ms)")
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d_%H%M%S")
    out = RESULTS / f"web_{stamp}.json"
    machine = {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
               "loadavg_before": load_before, "loadavg_after": os.getloadavg()}
    out.write_text(json.dumps({"command": " ".join(["python", "bench/web.py", *sys.argv[1:]]),
                               "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": machine,
                               "api": api, "paint": paint, "big_grids": big, "pages": pages}, indent=2))
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
