"""The worst routes: server CPU time and wall time of the requests that used to pin a core (issue 12's repros and
the biggest ordinary inputs), one at a time against an otherwise idle server.

    python bench/worst_routes.py [--repeat 2] [--before REV]

Starts uvicorn in a subprocess (bench/_server.py), sends each request ``--repeat`` times (the first is cold; later
ones may be served from the caches), and reads the server's CPU seconds from /proc before and after each request.
Prints a table and writes bench/results/worst_routes_<time>.json. The target: no request over 1 s of server CPU.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import ROOT, Server, machine, write_result  # noqa: E402

#: A first (uncached) answer slower than this is flagged in the table's summary.
FLAG_MS = 300
DEEP = "(" * 1900 + "1" + ")" * 1900
BIG_BODY = b'{"layout": "' + b"(8,8):(8,1)" * 760_000 + b'"}'  # 8.4 MB


def routes(drill_id: str | None) -> list[tuple[str, str, str, Any]]:
    """(label, method, path, body or None)."""
    out: list[tuple[str, str, str, Any]] = [
        ("banks page (256,256):(1,2^25) fp32, compare", "GET",
         "/banks?layout=(256,256):(1,33554432)&access=column:0&element_bytes=4", None),
        ("banks page 256x256 fp32, compare", "GET", "/banks?layout=(256,256):(256,1)&access=column:0&element_bytes=4",
         None),
        ("banks page 128x128 fp16, compare", "GET", "/banks?layout=(128,128):(128,1)&access=column:0&element_bytes=2",
         None),
        ("banks page 128x128 fp16 ldmatrix, compare", "GET",
         "/banks?layout=(128,128):(128,1)&access=ldmatrix:0,0&element_bytes=2", None),
        ("banks page 1024x1024 fp32 (2^20, not drawn)", "GET",
         "/banks?layout=(1024,1024):(1024,1)&access=column:0&element_bytes=4", None),
        ("api/sectors 2^20 (1024,1024):(1,1024)", "POST", "/api/sectors",
         {"tv": "(1024,1024):(1,1024)", "element_bytes": 4}),
        ("api/sectors 2^20 (32,32768):(1,32)", "POST", "/api/sectors", {"tv": "(32,32768):(1,32)", "element_bytes": 4}),
        ("api/sectors 2^20 swizzled", "POST", "/api/sectors",
         {"tv": "Sw<3,3,3> o (1024,1024):(1024,1)", "element_bytes": 4}),
        ("api/banks 8 MB body", "POST", "/api/banks", BIG_BODY),
        ("api/banks offsets [2^70, 1]", "POST", "/api/banks",
         {"layout": "(32,32):(32,1)", "element_bytes": 4, "access": {"kind": "offsets", "index": [1 << 70, 1]}}),
        ("api/algebra local_tile 1,900-deep coordinate", "POST", "/api/algebra",
         {"op": "local_tile", "args": ["(8,8):(8,1)", "<2:1, 4:1>", DEEP]}),
        ("api/algebra 1,900-deep JSON tiler", "POST", "/api/algebra",
         {"op": "logical_divide", "args": ["(8,8):(8,1)", "[" * 1900 + "]" * 1900]}),
        ("api/algebra 40 args", "POST", "/api/algebra", {"op": "composition", "args": ["4:1"] * 40}),
        ("api/layout 2^20 table", "POST", "/api/layout", {"layout": "(1024,1024):(1024,1)"}),
        ("api/layout 2^40 (not enumerated)", "POST", "/api/layout", {"layout": "(1048576,1048576):(1048576,1)"}),
        ("api/algebra composition 1024x1024 o 512x512", "POST", "/api/algebra",
         {"op": "composition", "args": ["(1024,1024):(1024,1)", "(512,512):(1,512)"]}),
        ("api/algebra blocked_product 256x256", "POST", "/api/algebra",
         {"op": "blocked_product", "args": ["(16,16):(1,16)", "(16,16):(16,1)"]}),
        # the inverses at and past the 2^20-point cap, by layout kind (checks.capped)
        ("api/algebra left_inverse 2^20 not injective", "POST", "/api/algebra",
         {"op": "left_inverse", "args": ["(6,3,58254):(2,1,16)"]}),
        ("api/algebra right_inverse swizzled 3*2^21 (proven)", "POST", "/api/algebra",
         {"op": "right_inverse", "args": ["Sw<3,3,3> o 0 o (3,1024,2048):(1,3,3072)"]}),
        ("api/algebra right_inverse swizzled past the cap (sampled)", "POST", "/api/algebra",
         {"op": "right_inverse", "args": ["Sw<16,0,16> o 0 o (3,65536,7):(1,3,196608)"]}),
        ("api/algebra left_inverse swizzled past the cap (refused)", "POST", "/api/algebra",
         {"op": "left_inverse", "args": ["Sw<3,3,3> o 0 o (3,341,2049):(1,3,1023)"]}),
        ("api/algebra right_inverse basis strides 2^21", "POST", "/api/algebra",
         {"op": "right_inverse", "args": ["(1024,2048):(1@0,1@1)"]}),
        ("explorer 256x256", "GET", "/?layout=(256,256):(256,1)", None),
        ("workbench composition 128x128 o 128x128", "GET",
         "/algebra?op=composition&a=(128,128):(128,1)&b=(128,128):(1,128)", None),
        ("workbench logical_divide 256x256", "GET", "/algebra?op=logical_divide&a=(256,256):(256,1)&b=<16:1,16:1>",
         None),
        ("workbench blocked_product 64x64 x 16x16 (2^20 cells)", "GET",
         "/algebra?op=blocked_product&a=(64,64):(64,1)&b=(16,16):(1,16)", None),
        ("tv sectors form 2^20", "GET", "/tv?part=(1024,1024):(1,1024)&eb=4", None),
        ("api/solve/smem 256x256 fp32 column + row", "POST", "/api/solve/smem",
         {"element_bytes": 4, "tile": "(256,256):(256,1)",
          "accesses": [{"kind": "column", "index": 0}, {"kind": "row", "index": 0}]}),
        ("api/solve/smem (256,256):(1,2^25) fp32", "POST", "/api/solve/smem",
         {"element_bytes": 4, "tile": "(256,256):(1,33554432)", "accesses": [{"kind": "column", "index": 0}]}),
        # a 128x128 tile is an ordinary input on every page and API
        ("explorer 128x128", "GET", "/?layout=(128,128):(128,1)", None),
        ("explorer 128x128 swizzled", "GET", "/?layout=Sw<3,4,3> o (128,128):(128,1)", None),
        ("api/layout 128x128", "POST", "/api/layout", {"layout": "(128,128):(1,128)"}),
        ("workbench logical_divide 128x128 by 8x8", "GET",
         "/algebra?op=logical_divide&a=(128,128):(128,1)&b=<8:1,8:1>", None),
        ("workbench zipped_product 2x2 x 128x128", "GET",
         "/algebra?op=zipped_product&a=(2,2):(1,2)&b=(128,128):(1,128)", None),
        ("workbench local_tile 128x128", "GET", "/algebra?op=local_tile&a=(128,128):(128,1)&b=<32:1,32:1>&c=(1,2)",
         None),
        ("api/algebra right_inverse 128x128 swizzled", "POST", "/api/algebra",
         {"op": "right_inverse", "args": ["Sw<3,4,3> o (128,128):(128,1)"]}),
        ("api/sectors 128x128 swizzled", "POST", "/api/sectors",
         {"tv": "Sw<3,4,3> o (128,128):(128,1)", "element_bytes": 4}),
        ("api/banks 128x128 fp16 thread_layout", "POST", "/api/banks",
         {"layout": "(128,128):(128,1)", "element_bytes": 2,
          "access": {"kind": "thread_layout", "layout": "(32,1):(1,0)", "vector": 8}}),
        ("api/solve/smem 128x128 fp16 ldmatrix", "POST", "/api/solve/smem",
         {"element_bytes": 2, "tile": "(128,128):(128,1)", "accesses": [{"kind": "ldmatrix", "index": [0, 0]}]}),
        ("api/solve/linear 128x128", "POST", "/api/solve/linear", {"layout": "(128,128):(128,1)"}),
        ("api/partition copy 128x128 swizzled dst", "POST", "/api/partition",
         {"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "src": "(128,128):(128,1)",
          "dst": "Sw<3,4,3> o (128,128):(128,1)"}),
        # the adversarial inputs of the robustness sweep (each once a 500, an OOM or seconds of CPU)
        ("workbench flat_divide 8x8 by a 2^32 tiler", "GET",
         "/algebra?op=flat_divide&a=(8,8):(1,8)&b=(65536,65536):(65536,1)", None),
        ("workbench local_tile of a 2^40 A, 2^40 tile", "GET",
         "/algebra?op=local_tile&a=(1048576,1048576):(1048576,1)&b=<1048576:1,1048576:1>&c=(0,0)", None),
        ("workbench local_partition of a 2^40 A", "GET",
         "/algebra?op=local_partition&a=(1048576,1048576):(1048576,1)&b=(2,2):(2,1)&c=1", None),
        ("api/partition tiled MMA, 1024 threads", "POST", "/api/partition",
         {"atom": "SM80_16x8x16_F32F16F16F32_TN", "thread": 1023, "atom_layout": "(4,8,1)"}),
        ("tv copy walk, 1024 threads", "GET", "/tv?cw_thr=(128,8):(8,1)&cw_src=(128,64):(64,1)&cw_dst=(128,64):(64,1)"
         "&cw_t=1023", None),
        ("api/algebra local_tile of a coordinate layout", "POST", "/api/algebra",
         {"op": "local_tile", "args": ["(4,8):(1@1,1@0)", "<2:1, 4:1>", "(1,1)"]}),
        ("api/algebra 300-mode tiler", "POST", "/api/algebra",
         {"op": "logical_divide", "args": ["(8,8):(8,1)", "<" + ", ".join(["2:1"] * 300) + ">"]}),
        ("api/layout 300 modes", "POST", "/api/layout", {"layout": "(" + ",".join(["2"] * 300) + ")"}),
    ]
    if drill_id:
        out.append(("drill answer: '1' + 3,998 spaces + '!'", "POST", f"/api/drills/{drill_id}/answer",
                    {"answer": "1" + " " * 3998 + "!"}))
    return out


def healthz_under_load(server: Server, heavy: int = 8, salt: int = 0) -> dict[str, Any]:
    """``heavy`` distinct worst-case requests at once (banks pages with the comparison, big sector reports) while
    /healthz is polled every 20 ms: its slowest answer shows whether the heavy ones starve everything else."""
    import threading

    paths = [f"/banks?layout=(256,256):(1,{(1 << 25) + 64 * salt + k})&access=column:{k}&element_bytes=4"
             for k in range(heavy // 2)]
    bodies = [{"tv": f"(1024,1024):({1024 + 64 * salt + k},1)", "element_bytes": 4} for k in range(heavy - len(paths))]
    done = threading.Event()
    lat: list[float] = []

    def poll() -> None:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            while not done.is_set():
                t0 = time.perf_counter()
                c.get("/healthz")
                lat.append(time.perf_counter() - t0)
                time.sleep(0.02)

    def hit(k: int) -> None:
        with httpx.Client(base_url=server.url, timeout=120) as c:
            if k < len(paths):
                c.get(paths[k])
            else:
                c.post("/api/sectors", json=bodies[k - len(paths)])

    poller = threading.Thread(target=poll)
    poller.start()
    t0 = time.perf_counter()
    workers = [threading.Thread(target=hit, args=(k,)) for k in range(heavy)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    wall = time.perf_counter() - t0
    done.set()
    poller.join()
    lat.sort()
    return {"heavy_requests": heavy, "all_done_s": round(wall, 2), "healthz_polls": len(lat),
            "healthz_p50_ms": round(1000 * lat[len(lat) // 2], 1), "healthz_max_ms": round(1000 * lat[-1], 1)}


def measure(repeat: int, tree: str | None = None) -> dict[str, Any]:
    """Every route ``repeat`` times against a fresh server of ``tree`` (default: this checkout)."""
    server = Server(tree=tree)
    rows = []
    try:
        with httpx.Client(base_url=server.url, timeout=120) as c:
            drill = c.get("/api/drills/next", params={"kind": "banks", "seed": 3})
            drill_id = drill.json().get("id") if drill.status_code == 200 else None
            for label, method, path, body in routes(drill_id):
                for k in range(repeat):
                    time.sleep(0.05)
                    cpu0, t0 = server.cpu_seconds(), time.perf_counter()
                    if isinstance(body, bytes):
                        r = c.request(method, path, content=body, headers={"content-type": "application/json"})
                    else:
                        r = c.request(method, path, json=body)
                    wall = time.perf_counter() - t0
                    time.sleep(0.05)  # let /proc catch up with the last tick
                    cpu = server.cpu_seconds() - cpu0
                    is_json = r.headers.get("content-type", "").startswith("application/json")
                    detail = str(r.json().get("detail", ""))[:160] if is_json and r.status_code >= 400 else ""
                    rows.append({"route": label, "method": method, "path": path[:120], "run": k,
                                 "status": r.status_code, "wall_ms": round(wall * 1000, 1),
                                 "server_cpu_ms": round(cpu * 1000, 1), "bytes": len(r.content), "detail": detail})
            rss = server.rss_mb()
        starve = healthz_under_load(server)
    finally:
        server.stop()
    worst = max(rows, key=lambda r: r["server_cpu_ms"])
    return {"server": " ".join(server.args[1:]), "target_cpu_ms": 1000, "worst_cpu_ms": worst["server_cpu_ms"],
            "worst_route": worst["route"], "rss_mb_end": round(rss, 1), "flag_ms": FLAG_MS,
            "slow_first_answers": sorted({r["route"] for r in rows if r["wall_ms"] > FLAG_MS and r["run"] == 0}),
            "healthz_under_load": starve, "rows": rows}


def baseline_tree(rev: str) -> str:
    """A temporary copy of revision ``rev`` (git archive) with this checkout's static/vendor, to serve beside it."""
    tmp = tempfile.mkdtemp(prefix="worst-routes-")
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
    shutil.copytree(ROOT / "static" / "vendor", Path(tmp) / "static" / "vendor", dirs_exist_ok=True)
    return tmp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--before", help="a git revision to measure first, in the same run (its rows: before_*)")
    args = ap.parse_args()
    before = measure(args.repeat, baseline_tree(args.before)) if args.before else None
    after = measure(args.repeat)
    old = {(r["route"], r["run"]): r for r in before["rows"]} if before else {}
    print(f"{'route':52} {'run':>3} {'status':>6} {'wall ms':>9} {'cpu ms':>8} {'bytes':>10}"
          + (f" {'before cpu ms':>14}" if before else ""))
    for r in after["rows"]:
        was = old.get((r["route"], r["run"]))
        print(f"{r['route'][:52]:52} {r['run']:>3} {r['status']:>6} {r['wall_ms']:>9} {r['server_cpu_ms']:>8} "
              f"{r['bytes']:>10}" + (f" {was['server_cpu_ms'] if was else '-':>14}" if before else ""))
    print(f"first answers over {FLAG_MS} ms wall: {', '.join(after['slow_first_answers']) or 'none'}")
    print(f"worst: {after['worst_route']} ({after['worst_cpu_ms']} ms server CPU); server RSS at the end "
          f"{after['rss_mb_end']:.0f} MB" + (f"; before: {before['worst_route']} ({before['worst_cpu_ms']} ms)"
                                            if before else ""))
    starve = after["healthz_under_load"]
    print(f"{starve['heavy_requests']} heavy requests at once: all done in {starve['all_done_s']} s; /healthz p50 "
          f"{starve['healthz_p50_ms']} ms, slowest {starve['healthz_max_ms']} ms")
    path = write_result("worst_routes", {
        "command": "python bench/worst_routes.py " + " ".join(sys.argv[1:]), "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": machine(), **after, **({"before": {"rev": args.before, **before}} if before else {})})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
