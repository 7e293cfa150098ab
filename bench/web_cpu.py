"""The browser's work per permalink: renderer CPU time and paint time, this tree against a baseline, alternating.

    python bench/web_cpu.py --tree /tmp/webbefore [--repeats 6] [--tag x] [PATH ...]

bench/web.py times a page's paint; on a shared 2-core machine that wall time moves with everyone else's load. This
also reads the CPU time chromium's renderer processes spent from the navigation to two animation frames after
``load`` (CDP ``SystemInfo.getProcessInfo``, 10 ms ticks): work done, which the load stretches but does not add to.
Each path is opened from both trees in turn (order swapped each round), each open in a fresh browser context, after
one warm-up round. Prints a table and writes bench/results/web_cpu_[<tag>_]<time>.json.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import Server, machine, revision, write_result  # noqa: E402

PATHS = ["/tv?atom=SM90_64x256x16_F32F16F16_SS&operand=C", "/tv", "/?layout=(128,128):(128,1)"]
PAINTED_JS = """() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => {
    const n = performance.getEntriesByType('navigation')[0];
    resolve({painted: performance.now(), dcl_end: n.domContentLoadedEventEnd, load: n.loadEventStart,
             html_bytes: n.transferSize, elements: document.getElementsByTagName('*').length}); })))"""


def renderer_cpu(cdp: Any) -> dict[int, float]:
    return {p["id"]: p["cpuTime"] for p in cdp.send("SystemInfo.getProcessInfo")["processInfo"]
            if p["type"] == "renderer"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", required=True, help="the baseline checkout (a git worktree with static/vendor)")
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument("--tag", default="")
    ap.add_argument("paths", nargs="*", default=PATHS)
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    servers = {"before": Server(tree=a.tree), "after": Server()}
    runs: dict[str, dict[str, list[dict[str, float]]]] = {p: {"before": [], "after": []} for p in a.paths}
    res: dict[str, Any] = {"command": " ".join(["python", "bench/web_cpu.py", *sys.argv[1:]]),
                           "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": machine(),
                           "trees": {k: {"tree": str(s.tree), "revision": revision(s.tree)}
                                     for k, s in servers.items()}}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium"),
                                        args=["--no-sandbox", "--disable-gpu"])
            res["chromium"] = browser.version
            cdp = browser.new_browser_cdp_session()
            for rnd in range(a.repeats + 1):
                for path in a.paths:
                    order = list(servers.items()) if rnd % 2 else list(reversed(servers.items()))
                    for name, server in order:
                        ctx = browser.new_context(viewport={"width": 1280, "height": 900})
                        page = ctx.new_page()
                        c0 = renderer_cpu(cdp)
                        page.goto(server.url + path, wait_until="load")
                        r = page.evaluate(PAINTED_JS)
                        c1 = renderer_cpu(cdp)
                        r["cpu_ms"] = sum(v - c0.get(k, 0.0) for k, v in c1.items()) * 1000
                        r["dcl_to_load_ms"] = r["load"] - r["dcl_end"]
                        r["loadavg"] = os.getloadavg()[0]
                        ctx.close()
                        if rnd:
                            runs[path][name].append(r)
            browser.close()
    finally:
        for s in servers.values():
            s.stop()
    res["machine_after"] = machine()
    res["paths"] = {}
    print(f"chromium {res['chromium']}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print(f"{'path':<48}{'tree':<8}{'cpu ms':>8}{'painted':>9}{'DCL->load':>10}{'HTML kB':>9}{'elements':>9}")
    for path, by in runs.items():
        res["paths"][path] = {}
        for name, rs in by.items():
            med = {k: statistics.median(r[k] for r in rs) for k in ("cpu_ms", "painted", "dcl_to_load_ms")}
            res["paths"][path][name] = {**{f"median_{k}": v for k, v in med.items()},
                                        "html_bytes": rs[-1]["html_bytes"], "elements": rs[-1]["elements"], "runs": rs}
            print(f"{path[-48:]:<48}{name:<8}{med['cpu_ms']:>8.0f}{med['painted']:>9.0f}{med['dcl_to_load_ms']:>10.0f}"
                  f"{rs[-1]['html_bytes'] / 1000:>9.0f}{rs[-1]['elements']:>9}")
    out = write_result("web_cpu" + (f"_{a.tag}" if a.tag else ""), res)
    print(f"wrote {out.relative_to(Path(__file__).resolve().parent.parent)}")


if __name__ == "__main__":
    main()
