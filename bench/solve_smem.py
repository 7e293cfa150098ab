#!/usr/bin/env python3
"""Layout doctor on the GPU: for each case, the solver's best fix and the tile as given, every access run as one
warp instruction and counted by Nsight Compute; predicted vs measured wavefronts; a table and one JSON file.

Usage:  python3 bench/solve_smem.py [--out DIR] [--only NAME,...] [--no-ncu]
Needs: nvcc, an NVIDIA GPU, Nsight Compute (ncu), Python 3.11+ standard library.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpu_worker import benches, solve_bench, telemetry  # noqa: E402
from gpu_worker.build import find_toolkit  # noqa: E402

CP_ASYNC_64 = [[t // 8, (t % 8) * 8] for t in range(32)]
#: name -> solver request (element_bytes, tile, accesses) and the layouts measured beside the best fix
CASES: dict[str, dict] = {
    "fp16_64x64_cpasync_ldmatrix_x4": {
        "element_bytes": 2, "tile": "(64,64):(64,1)",
        "accesses": [{"name": "cp.async 16 B (st.shared.v4)", "kind": "offsets", "offsets": CP_ASYNC_64, "vector": 8,
                      "op": "store"},
                     {"name": "ldmatrix.x4", "kind": "ldmatrix", "index": [0, 0], "num": 4}],
        "layouts": [{"kind": "naive"}, "best", {"kind": "padding", "pad": 8}]},
    "fp32_32x32_row_write_column_read": {
        "element_bytes": 4, "tile": "(32,32):(32,1)",
        "accesses": [{"name": "row write", "kind": "row", "index": 0, "op": "store"},
                     {"name": "column read", "kind": "column", "index": 0}],
        "layouts": [{"kind": "naive"}, "best", {"kind": "padding", "pad": 1}]},
    "fp16_64x32_ldmatrix_x4_trans": {
        "element_bytes": 2, "tile": "(64,32):(32,1)",
        "accesses": [{"name": "ldmatrix.x4.trans", "kind": "ldmatrix", "index": [0, 0], "num": 4, "trans": True},
                     {"name": "ld.shared.v4 rows 0-7", "kind": "offsets", "vector": 8,
                      "offsets": [[t // 4, (t % 4) * 8] for t in range(32)]}],
        "layouts": [{"kind": "naive"}, "best"]},
    "fp16_32x64_column_and_vector_row": {
        "element_bytes": 2, "tile": "(32,64):(64,1)",
        "accesses": [{"name": "column read b16", "kind": "column", "index": 3},
                     {"name": "st.shared.v2 rows 0-1", "kind": "offsets", "vector": 4, "op": "store",
                      "offsets": [[t // 16, (t % 16) * 4] for t in range(32)]}],
        "layouts": [{"kind": "naive"}, "best"]},
    "u8_32x128_column": {
        "element_bytes": 1, "tile": "(32,128):(128,1)",
        "accesses": [{"name": "column read u8", "kind": "column", "index": 5}],
        "layouts": [{"kind": "naive"}, "best"]},
    "fp32_64x64_gather_xor_map": {  # no Sw<B,M,S> reaches 4 wavefronts here; an F2-linear map does
        "element_bytes": 4, "tile": "(64,64):(64,1)",
        "accesses": [{"name": "gather (32 scattered words)", "kind": "offsets", "offsets": [
            [26, 1], [4, 20], [30, 2], [7, 18], [47, 30], [14, 43], [59, 45], [35, 50], [33, 44], [29, 26], [45, 40],
            [28, 39], [53, 29], [58, 53], [62, 10], [59, 46], [56, 40], [57, 51], [8, 62], [2, 25], [17, 22], [2, 36],
            [63, 19], [12, 14], [50, 6], [9, 59], [37, 51], [29, 22], [45, 10], [30, 39], [39, 21], [40, 49]]},
            {"name": "column read", "kind": "column", "index": 0},
            {"name": "thread layout (4,8):(64,1)", "kind": "thread_layout", "layout": "(4,8):(64,1)"}],
        "layouts": [{"kind": "naive"}, "best", {"kind": "swizzle", "swizzle": [5, 0, 6]}]},
    # Where the bank model (CONTRACT §3) and the hardware differ: a partial warp of 8- or 16-byte accesses. The model
    # splits the active lanes into phases; the H200 still takes one pass per half / quarter warp (2 / 4 wavefronts).
    "model_limit_partial_warp_16B": {
        "element_bytes": 2, "tile": "(64,32):(32,1)", "model_limit": True,
        "accesses": [{"name": "4 lanes ld.shared.v4", "kind": "row", "index": 0, "vector": 8}],
        "layouts": [{"kind": "naive"}]},
    "model_limit_partial_warp_8B": {
        "element_bytes": 2, "tile": "(32,64):(64,1)", "model_limit": True,
        "accesses": [{"name": "16 lanes st.shared.v2", "kind": "row", "index": 1, "vector": 4, "op": "store"}],
        "layouts": [{"kind": "naive"}]},
}


def clocks() -> dict:
    """SM and memory clocks from nvidia-smi (read only; nothing is changed)."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,clocks.max.sm,driver_version",
                              "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=20).stdout
        sm, mem, smax, drv = (x.strip() for x in out.strip().splitlines()[0].split(","))
        return {"sm_mhz": float(sm), "mem_mhz": float(mem), "max_sm_mhz": float(smax), "driver": drv}
    except Exception as exc:  # noqa: BLE001 - telemetry is optional
        return {"error": str(exc)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT") or str(ROOT / "bench" / "results"))
    ap.add_argument("--only", default="")
    ap.add_argument("--no-ncu", action="store_true")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    results: dict[str, dict] = {}
    t0 = time.monotonic()
    built = solve_bench.prebuild([s for n, s in CASES.items() if not only or n in only])
    print(f"built {len(built)} kernel variants in {time.monotonic() - t0:.1f} s", flush=True)
    for name, spec in CASES.items():
        if only and name not in only:
            continue
        try:
            results[name] = solve_bench.run_solve({k: v for k, v in spec.items() if k != "model_limit"},
                                                  profile=not args.no_ncu)
            results[name]["model_limit"] = bool(spec.get("model_limit"))
        except Exception as exc:  # record and continue: one bad case must not hide the others
            results[name] = {"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()[-2000:]}
        results[name]["wall_s"] = round(time.monotonic() - t0, 1)
    doc = {"benchmark": "solve_smem", "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
           "host": platform.node(), "device": telemetry.device_info(), "clocks": clocks(),
           "toolkit": find_toolkit().to_dict(), "ncu": benches.find_ncu(), "cases": results,
           "all_match": all(r.get("all_match") for r in results.values() if not r.get("model_limit")),
           "note": "model_limit cases document where the bank model of CONTRACT 3 and the hardware differ (partial "
                   "warps of 8/16-byte accesses); they are excluded from all_match"}
    os.makedirs(args.out, exist_ok=True)
    gpu = (doc["device"].get("name") or "nogpu").replace("NVIDIA ", "").replace(" ", "")
    path = Path(args.out) / f"solve_smem_{gpu}_{dt.date.today().isoformat()}.json"
    path.write_text(json.dumps(doc, indent=1, default=str))
    report(results)
    print(f"all_match={doc['all_match']} wrote {path}")
    return 0 if doc["all_match"] else 1


def report(results: dict) -> None:
    """One line per (case, layout, access): predicted and measured wavefronts per instruction."""
    print(f"{'case':34} {'layout':34} {'access':28} {'model':>5} {'ncu':>6} ok")
    for name, r in results.items():
        if "error" in r:
            print(f"{name:34} ERROR {r['error'][:160]}")
            continue
        for lay in r["layouts"]:
            for a in lay["accesses"]:
                m = a.get("measured")
                print(f"{name[:34]:34} {lay['layout'][:34]:34} {a['name'][:28]:28} {a['predicted']:5d} "
                      f"{'-' if m is None else round(m, 2)!s:>6} {'yes' if a.get('match') else 'NO'}")


if __name__ == "__main__":
    sys.exit(main())
