"""Browser benchmark: big views opened from their permalinks, and an explorer keystroke to a painted new grid.

    python bench/web.py [--repeats 5] [--tag before] [--only explorer] [--tree DIR]

A baseline in the same sitting: serve another revision's app from a worktree (``--tree``), then this tree's::

    git worktree add /tmp/webbefore <rev> && cp -r static/vendor /tmp/webbefore/static/
    python bench/web.py --tree /tmp/webbefore --tag before_<rev>; python bench/web.py --tag after

Starts uvicorn (one worker, bench/_server.py) on a free loopback port and drives Debian's chromium through
Playwright (``--no-sandbox --disable-gpu``, 1280 x 900):

- permalink: each view opened in a fresh browser context (nothing cached), ``goto(wait_until="load")`` and then two
  ``requestAnimationFrame``s; ``painted`` is ``performance.now()`` then, in ms from the navigation's start. One
  warm-up open (it also fills the server's cache), then ``--repeats`` opens: their median, min and max, and the
  page's server time, HTML bytes and element count;
- keystroke: the explorer showing a 64x64 layout ``(64,64):(S,1)``; one key typed into its stride makes a new
  64x64 layout the server has not drawn yet; the time from the key's ``keydown`` to two animation frames after the
  new layout's cells are in the DOM (cell (1, 0) holds the new stride and the facts name the new layout). One
  warm-up, then ``--repeats`` keys, each after 1.5 s of quiet;
- fast typing: five digits typed 40 ms apart (faster than the server's answer and the swap): the time from the last
  key to its grid painted, how many requests went out and how many swaps landed, and the console errors logged.

- lazy sections (where the page has them): a TV atlas section sent closed (``details.section``) opened by a click
  on its summary: the time from the click to two animation frames after its fetched result is in the DOM.

Prints a table and writes bench/results/web_[<tag>_]<time>.json with the command, the date, the chromium version,
the served tree and its revision, the machine and its load average beside every row (the 2 cores are shared: repeat
a run made under load).
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

ROOT = Path(__file__).resolve().parent.parent
VIEWS = {
    "explorer (128,128):(128,1)": "/?layout=(128,128):(128,1)",
    "explorer Sw<3,4,3> o (128,64)": "/?layout=Sw<3,4,3> o 0 o (128,64):(64,1)",
    "workbench composition 128x128 (A, B, R)": "/algebra?op=composition&a=(128,128):(128,1)&b=(128,128):(1,128)",
    "banks fp16 128x128 + comparison": "/banks?layout=(128,128):(128,1)&element_bytes=2&access=ldmatrix:0,8&compare=1",
    "TV atlas SM90 64x256x16 C": "/tv?atom=SM90_64x256x16_F32F16F16_SS&operand=C",
}
VIEW_TARGET_MS = 400
KEY_TARGET_MS = 150
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1280, "height": 900}

PAINTED_JS = """() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => {
    const n = performance.getEntriesByType('navigation')[0];
    resolve({painted: performance.now(), server: n.responseStart - n.requestStart, html_bytes: n.transferSize,
             elements: document.getElementsByTagName('*').length}); })))"""

# armed before a key is pressed: resolves with the ms from that key's keydown to two frames after the grid shows
# `want` (the cell want.sel of #grid-explorer holds want.text and #fact-layout reads want.layout)
ARM_JS = """(want) => { window.__painted = new Promise((resolve) => {
    let t0 = null;
    document.addEventListener('keydown', (e) => { t0 = e.timeStamp; }, {capture: true});
    const shown = () => {
        const c = document.querySelector(want.sel);
        const f = document.querySelector('#fact-layout');
        return t0 !== null && c && c.textContent === want.text && f && f.textContent === want.layout; };
    const mo = new MutationObserver(() => {
        if (!shown()) return;
        mo.disconnect();
        requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now() - t0))); });
    mo.observe(document.getElementById('result'), {childList: true, subtree: true, characterData: true});
}); window.__counts = {requests: 0, swaps: 0}; }"""
COUNT_JS = """() => { if (window.__counting) return; window.__counting = true;
    document.body.addEventListener('htmx:beforeRequest', () => { window.__counts.requests += 1; });
    document.body.addEventListener('htmx:afterSwap', () => { window.__counts.swaps += 1; }); }"""
CELL = '#grid-explorer .gt[data-j="0"] > .gr[data-i="{i}"] > span:nth-child({k})'  # cell (i, k - 1)
CARET_JS = """(pos) => { const i = document.querySelector('#layout-input'); i.focus();
    i.setSelectionRange(pos, pos); }"""
# a section sent closed: click its summary, resolve two frames after the fetched result (s.sel) is in s.box
SECTIONS = {"tiled copy / MMA": ("tiled-sec", "tiled", "#grid-tiled"),
            "copy walkthrough": ("copywalk-sec", "copywalk", "#copy-walk-thread"),
            "MMA walkthrough": ("mmawalk-sec", "mmawalk", "#mma-walk-thread"),
            "kernel path": ("kernel-sec", "kernel", "#kp-summary"), "TMA cluster": ("tmac-sec", "tmac", "#tmac-facts"),
            "Blackwell": ("blackwell-sec", "blackwell", "#umma-name")}
SECTION_JS = """(s) => new Promise((resolve) => {
    const sec = document.getElementById(s.sec), box = document.getElementById(s.box);
    if (!sec || sec.tagName !== 'DETAILS' || sec.open || !box || box.querySelector(s.sel)) { resolve(null); return; }
    const t0 = performance.now();
    const mo = new MutationObserver(() => {
        if (!box.querySelector(s.sel)) return;
        mo.disconnect();
        requestAnimationFrame(() => requestAnimationFrame(() => resolve({ms: performance.now() - t0,
            elements: document.getElementsByTagName('*').length}))); });
    mo.observe(box, {childList: true, subtree: true});
    sec.querySelector('summary').click(); })"""
SETTLED_JS = """(layout) => new Promise((resolve) => { const t = Date.now(); (function poll() {
    const f = document.querySelector('#fact-layout');
    if ((f && f.textContent === layout) || Date.now() - t > 10000) resolve(!!f); else setTimeout(poll, 20); })(); })"""


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def summary(xs: list[float]) -> dict[str, Any]:
    return {"median_ms": statistics.median(xs), "min_ms": min(xs), "max_ms": max(xs), "runs_ms": xs}


def permalinks(browser: Any, base: str, repeats: int, only: str | None) -> dict[str, Any]:
    """Each view: one warm-up open, then ``repeats`` opens in fresh contexts (see the module docstring)."""
    out: dict[str, Any] = {}
    for name, path in VIEWS.items():
        if only and only.lower() not in name.lower():
            continue
        before = loadavg()
        runs = []
        for _ in range(repeats + 1):
            ctx = browser.new_context(viewport=VIEWPORT)
            page = ctx.new_page()
            t0 = time.perf_counter()
            page.goto(base + path, wait_until="load")
            r = page.evaluate(PAINTED_JS)
            r["wall"] = (time.perf_counter() - t0) * 1000
            runs.append(r)
            ctx.close()
        runs = runs[1:]
        out[name] = {"path": path, **summary([r["painted"] for r in runs]),
                     "wall_median_ms": statistics.median(r["wall"] for r in runs),
                     "server_median_ms": statistics.median(r["server"] for r in runs),
                     "html_bytes": runs[-1]["html_bytes"], "elements": runs[-1]["elements"],
                     "loadavg_before": before, "loadavg_after": loadavg()}
    return out


def sections(browser: Any, base: str, repeats: int) -> dict[str, Any]:
    """Each lazy section of the TV atlas (its 128x128 permalink): summary clicked to its result painted, in a fresh
    context per open after the page's own paint (and once the section is in the page); one warm-up. Empty where the
    tree sends every section open."""
    path = VIEWS["TV atlas SM90 64x256x16 C"]
    out: dict[str, Any] = {}
    for name, (sec, box, sel) in SECTIONS.items():
        before = loadavg()
        runs = []
        for _ in range(repeats + 1):
            ctx = browser.new_context(viewport=VIEWPORT)
            page = ctx.new_page()
            page.goto(base + path, wait_until="load")
            page.evaluate(PAINTED_JS)
            # a page that sends what is under its first screen after that screen's paint: the section once it is in
            page.wait_for_function("(id) => !!document.getElementById(id)", arg=sec, timeout=5000)
            runs.append(page.evaluate(SECTION_JS, {"sec": sec, "box": box, "sel": sel}))
            ctx.close()
        if runs[0] is None:
            continue
        runs = runs[1:]
        out[name] = {**summary([r["ms"] for r in runs]), "elements": runs[-1]["elements"],
                     "loadavg_before": before, "loadavg_after": loadavg()}
    return out


def set_layout(page: Any, text: str) -> None:
    """Type ``text`` into the explorer as a paste would (one input event) and wait until its grid is shown."""
    page.fill("#layout-input", text)
    page.evaluate(SETTLED_JS, text)


def keystroke(browser: Any, base: str, repeats: int) -> dict[str, Any]:
    """One key typed into the explorer's stride: keydown to the new 64x64 grid painted (see the module docstring)."""
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{base}/?layout=(64,64):(64,1)", wait_until="load")
    before = loadavg()
    runs = []
    for k in range(repeats + 1):
        s = 2 + k  # (64,64):(S,1) -> (64,64):(S7,1): a layout new to the server every time
        set_layout(page, f"(64,64):({s},1)")
        page.wait_for_timeout(1500)
        page.evaluate(CARET_JS, len(f"(64,64):({s}"))
        page.evaluate(ARM_JS, {"sel": CELL.format(i=1, k=1), "text": f"{s}7", "layout": f"(64,64):({s}7,1)"})
        page.keyboard.press("7")
        runs.append(page.evaluate("window.__painted"))
    ctx.close()
    return {**summary(runs[1:]), "console_errors": errors, "loadavg_before": before, "loadavg_after": loadavg()}


def fast_typing(browser: Any, base: str, repeats: int) -> dict[str, Any]:
    """Five digits typed 40 ms apart into the stride: the last key to its grid painted, requests, swaps, errors."""
    ctx = browser.new_context(viewport=VIEWPORT)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{base}/?layout=(64,64):(1,64)", wait_until="load")
    before = loadavg()
    runs, counts = [], []
    for k in range(repeats + 1):
        start = f"(64,64):(1,{64 + k})"
        set_layout(page, start)
        page.wait_for_timeout(1500)
        page.evaluate(CARET_JS, len(start) - 1)
        digits = "13579"
        stride = f"{64 + k}{digits}"
        page.evaluate(ARM_JS, {"sel": CELL.format(i=0, k=2), "text": stride, "layout": f"(64,64):(1,{stride})"})
        page.evaluate(COUNT_JS)
        page.keyboard.type(digits, delay=40)
        runs.append(page.evaluate("window.__painted"))
        counts.append(page.evaluate("window.__counts"))
    ctx.close()
    return {"last_key_to_painted": summary(runs[1:]), "requests": [c["requests"] for c in counts[1:]],
            "swaps": [c["swaps"] for c in counts[1:]], "console_errors": errors,
            "loadavg_before": before, "loadavg_after": loadavg()}


def table(res: dict[str, Any]) -> None:
    print(f"{'view (permalink, load + 2 frames)':<42}{'median':>8}{'min':>6}{'max':>6}{'wall':>6}{'server':>7}"
          f"{'HTML kB':>9}{'elements':>9}  load avg")
    for name, r in res["views"].items():
        ok = "ok" if r["median_ms"] < VIEW_TARGET_MS else "OVER"
        print(f"{name:<42}{r['median_ms']:>8.0f}{r['min_ms']:>6.0f}{r['max_ms']:>6.0f}{r['wall_median_ms']:>6.0f}"
              f"{r['server_median_ms']:>7.1f}{r['html_bytes'] / 1000:>9.0f}{r['elements']:>9}  "
              f"{r['loadavg_before'][0]:.2f} ({ok}, target < {VIEW_TARGET_MS} ms)")
    for name, r in res.get("sections", {}).items():
        print(f"{'TV: open ' + name + ' -> painted':<42}{r['median_ms']:>8.0f}{r['min_ms']:>6.0f}{r['max_ms']:>6.0f}"
              f"{'':>22}{r['elements']:>9}  {r['loadavg_before'][0]:.2f}")
    if "keystroke" in res:
        r = res["keystroke"]
        ok = "ok" if r["median_ms"] < KEY_TARGET_MS else "OVER"
        print(f"{'keystroke -> new 64x64 grid painted':<42}{r['median_ms']:>8.0f}{r['min_ms']:>6.0f}{r['max_ms']:>6.0f}"
              f"{'':>31}  {r['loadavg_before'][0]:.2f} ({ok}, target < {KEY_TARGET_MS} ms)")
        print(f"    console errors: {len(r['console_errors'])} {r['console_errors'][:2]}")
    if "typing" in res:
        r = res["typing"]
        t = r["last_key_to_painted"]
        print(f"{'fast typing: last of 5 keys -> painted':<42}{t['median_ms']:>8.0f}{t['min_ms']:>6.0f}"
              f"{t['max_ms']:>6.0f}{'':>31}  {r['loadavg_before'][0]:.2f}")
        print(f"    requests per 5 keys {r['requests']}, swaps {r['swaps']}, console errors: "
              f"{len(r['console_errors'])} {sorted(set(r['console_errors']))[:3]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--tag", default="", help="a word for the result file's name (e.g. before, after)")
    ap.add_argument("--only", help="only the views whose name contains this (no keystroke runs)")
    ap.add_argument("--tree", help="serve the app of this checkout (a baseline's git worktree) instead of this one")
    a = ap.parse_args()
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        raise SystemExit("chromium is not installed (Debian package chromium)")
    from playwright.sync_api import sync_playwright

    server = Server(tree=a.tree)
    res: dict[str, Any] = {"command": " ".join(["python", "bench/web.py", *sys.argv[1:]]),
                           "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": machine(), "tag": a.tag,
                           "tree": str(server.tree), "revision": revision(server.tree),
                           "viewport": VIEWPORT, "targets_ms": {"view": VIEW_TARGET_MS, "keystroke": KEY_TARGET_MS}}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=exe, args=ARGS)
            res["chromium"] = browser.version
            res["views"] = permalinks(browser, server.url, a.repeats, a.only)
            if not a.only or a.only.lower() in "tv atlas":
                res["sections"] = sections(browser, server.url, a.repeats)
            if not a.only:
                res["keystroke"] = keystroke(browser, server.url, a.repeats)
                res["typing"] = fast_typing(browser, server.url, a.repeats)
            browser.close()
    finally:
        server.stop()
    res["machine_after"] = machine()
    print(f"chromium {res['chromium']}, {os.cpu_count()} cores, {res['date']}")
    table(res)
    out = write_result("web" + (f"_{a.tag}" if a.tag else ""), res)
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
