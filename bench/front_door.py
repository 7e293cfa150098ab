"""The front door's costs on a fresh server: lab-form submissions of layouts with hundreds of unit modes (server CPU
per submission, /healthz latency while they run), the whiteboard's first N starts (status and server CPU per start),
and the lab's tile check at its caps (in process).

    python bench/front_door.py [--whiteboard 60]

Starts uvicorn in a subprocess (bench/_server.py) with a fresh data folder. Prints a table and writes
bench/results/front_door_<time>.json with the machine's load average (the cores are shared: CPU seconds, read from
/proc, do not depend on what else runs; latencies do).
"""

from __future__ import annotations

import argparse
import html
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _server import Server, machine, write_result  # noqa: E402


def unit_modes(n: int, rows: int = 64, cols: int = 64, swizzle: str = "Sw<3,4,3> o ") -> str:
    ones, zeros = "1," * n, "0," * n
    return f"{swizzle}(({ones}{rows}),({ones}{cols})):(({zeros}{cols}),({zeros}1))"


def lab_forms(server: Server) -> list[dict]:
    import httpx

    forms = [("custom tile, 100 unit modes", {"kind": "smem", "variant": "custom", "layout": unit_modes(100)}),
             ("custom tile, 300 unit modes", {"kind": "smem", "variant": "custom", "layout": unit_modes(300)}),
             ("custom tile, 475 unit modes", {"kind": "smem", "variant": "custom", "layout": unit_modes(475)}),
             ("thread layout, 450 unit modes", {"kind": "smem", "access": "thread_layout",
                                                "thread_layout": unit_modes(450, 4, 8, "")}),
             ("custom tile, 64 modes, 65,536 cells", {"kind": "smem", "variant": "custom", "element_bytes": "2",
                                                      "layout": unit_modes(31, 256, 256)})]
    rows = []
    for name, form in forms:
        health: list[float] = []
        done = threading.Event()
        answer: list = []

        def submit(form=form, done=done, answer=answer):
            with httpx.Client(base_url=server.url, timeout=120) as c:
                answer.append(c.post("/lab/jobs", data=form))
            done.set()

        cpu0 = server.cpu_seconds()
        t = threading.Thread(target=submit)
        t.start()
        with httpx.Client(base_url=server.url, timeout=30) as h:
            while not done.is_set() or not health:
                t0 = time.monotonic()
                h.get("/healthz")
                health.append(time.monotonic() - t0)
                time.sleep(0.01)
        t.join()
        cpu = server.cpu_seconds() - cpu0
        r = answer[0]
        detail = html.unescape(r.text.split('role="alert">')[-1].split("<")[0])[:90] if r.status_code != 202 else ""
        rows.append({"form": name, "status": r.status_code, "server_cpu_s": round(cpu, 3),
                     "healthz_max_s": round(max(health), 3), "detail": detail})
    return rows


def whiteboard(server: Server, n: int) -> dict:
    import httpx

    codes, cpus = [], []
    with httpx.Client(base_url=server.url, timeout=60) as c:
        for _ in range(n):
            cpu0 = server.cpu_seconds()
            codes.append(c.post("/api/drills/whiteboard").status_code)
            cpus.append(server.cpu_seconds() - cpu0)
    return {"calls": n, "ok": codes.count(200), "codes": sorted(set(codes)), "first_cpu_s": round(cpus[0], 3),
            "median_cpu_s": round(statistics.median(cpus), 3), "max_cpu_s": round(max(cpus), 3)}


def tile_check() -> dict:
    from gpu_worker import patterns

    text = unit_modes(31, 256, 256)
    t0 = time.process_time()
    patterns.tile_offsets(text)
    return {"layout": "Sw<3,4,3> o 64 modes, 256x256", "cpu_s": round(time.process_time() - t0, 3)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--whiteboard", type=int, default=60, help="whiteboard starts on the fresh server")
    args = ap.parse_args()
    os.environ["LAYOUTLAB_DATA"] = tempfile.mkdtemp(prefix="front-door-")
    os.environ.setdefault("LAYOUTLAB_EMBEDDED_WORKER", "0")
    os.environ.setdefault("LAYOUTLAB_LAB_RATE", "1000/60")
    os.environ.setdefault("LAYOUTLAB_LAB_ADDRESS_RATE", "1000/60")
    server = Server()
    try:
        board = whiteboard(server, args.whiteboard)  # first: the server is fresh
        forms = lab_forms(server)
    finally:
        server.stop()
    tile = tile_check()
    print(f"{'lab form':40} {'status':>6} {'CPU s':>7} {'/healthz max s':>15}  detail")
    for row in forms:
        print(f"{row['form']:40} {row['status']:>6} {row['server_cpu_s']:>7.3f} {row['healthz_max_s']:>15.3f}  "
              f"{row['detail']}")
    print(f"whiteboard: {board['ok']}/{board['calls']} answered 200 on a fresh server; CPU per start: first "
          f"{board['first_cpu_s']} s, median {board['median_cpu_s']} s, max {board['max_cpu_s']} s")
    print(f"lab tile check at its caps ({tile['layout']}): {tile['cpu_s']} s CPU")
    path = write_result("front_door", {"machine": machine(), "lab_forms": forms, "whiteboard": board,
                                       "tile_check": tile})
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
