#!/usr/bin/env python3
"""Layout doctor speed: ``algebra.doctor.solver.solve`` on tiles up to 256 x 256 (the issue's target: < 200 ms),
each case timed several times; a table on stdout and bench/results/solve_speed.json.

Usage:  python3 bench/solve_speed.py [--repeat N] [--out DIR]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from algebra.doctor.solver import solve  # noqa: E402

RNG = random.Random(15)
CASES = {
    "fp16_64x64_cpasync_ldmatrix": (2, "(64,64):(64,1)", [
        {"kind": "offsets", "offsets": [[t // 8, (t % 8) * 8] for t in range(32)], "vector": 8},
        {"kind": "ldmatrix", "index": [0, 0], "num": 4}]),
    "fp16_256x256_cpasync_ldmatrix": (2, "(256,256):(256,1)", [
        {"kind": "offsets", "offsets": [[t // 32, (t % 32) * 8] for t in range(32)], "vector": 8},
        {"kind": "ldmatrix", "index": [16, 64], "num": 4}]),
    "fp32_256x256_row_column": (4, "(256,256):(256,1)", [{"kind": "row", "index": 3}, {"kind": "column", "index": 7}]),
    "fp16_256x256_four_accesses": (2, "(256,256):(256,1)", [
        {"kind": "row", "index": 3, "vector": 8}, {"kind": "column", "index": 5},
        {"kind": "ldmatrix", "index": [16, 8], "num": 4}, {"kind": "thread_layout", "layout": "(32):(256)"}]),
    "fp32_256x256_random_xor_search": (4, "(256,256):(256,1)", [
        {"kind": "offsets", "offsets": [[RNG.randrange(256), RNG.randrange(256)] for _ in range(32)]},
        {"kind": "column", "index": 0}, {"kind": "thread_layout", "layout": "(4,8):(64,1)"}]),
    "u8_256x256_column_offsets": (1, "(256,256):(256,1)", [
        {"kind": "column", "index": 9}, {"kind": "offsets", "offsets": [[2 * t, 3 * t] for t in range(32)]}]),
    "fp64_128x128_column_vector_row": (8, "(128,128):(128,1)", [
        {"kind": "column", "index": 1}, {"kind": "row", "index": 2, "vector": 2}]),
    # an MN-major wgmma operand: one SW128 atom along MN (64 fp16), tiled along K; 256 x 256 in that order is no
    # GMMA atom's tiling, which the doctor refuses
    "fp16_64x256_colmajor_wgmma_mn": (2, "(64,256):(1,64)", [
        {"kind": "row", "index": 0}, {"kind": "wgmma", "operand": "B", "major": "MN"}]),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()
    rows = {}
    for name, (eb, tile, accs) in CASES.items():
        times, cpu, out = [], [], None
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            out = solve(eb, tile, accs)
            times.append(1000 * (time.perf_counter() - t0))
            cpu.append(1000 * (time.process_time() - c0))
        best = out["candidates"][0]
        rows[name] = {"element_bytes": eb, "tile": tile, "accesses": len(accs), "median_ms": statistics.median(times),
                      "max_ms": max(times), "min_ms": min(times), "times_ms": times,
                      "cpu_median_ms": statistics.median(cpu), "cpu_ms": cpu, "best": best["layout"],
                      "total": best["total"], "ideal": out["ideal"], "naive_total": out["naive"]["total"],
                      "searched": out["searched"]}
    doc = {"benchmark": "solve_speed", "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
           "host": platform.node(), "python": platform.python_version(), "cpus": os.cpu_count(),
           "load_average": os.getloadavg(), "target_ms": 200, "cases": rows,
           "note": "wall and CPU (process) time per solve; on a shared host the wall time includes waiting for a core",
           "all_under_target": all(r["cpu_median_ms"] < 200 for r in rows.values())}
    print(f"{'case':34} {'wall ms':>8} {'cpu ms':>7} {'max ms':>7} {'best':38} {'total':>5} {'ideal':>5} {'naive':>5}")
    for name, r in rows.items():
        print(f"{name:34} {r['median_ms']:8.1f} {r['cpu_median_ms']:7.1f} {r['max_ms']:7.1f} {r['best'][:38]:38} "
              f"{r['total']:5} {r['ideal']:5} {r['naive_total']:5}")
    os.makedirs(args.out, exist_ok=True)
    path = Path(args.out) / "solve_speed.json"
    path.write_text(json.dumps(doc, indent=1))
    print(f"load average {doc['load_average']}; all under 200 ms (median CPU time): {doc['all_under_target']}; "
          f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
