#!/usr/bin/env python3
"""Shared-memory access benchmark: every variant built, checked, timed and (with --ncu) profiled; predicted vs
measured wavefronts per instruction; a table on stdout and one JSON file.

Usage:  python3 bench/smem.py [--ncu] [--out DIR] [--runs N] [--iters N] [--only NAME,...]
Needs: nvcc, an NVIDIA GPU, Python 3.11+ standard library (NVML through nvidia-ml-py when installed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpu_worker import benches, telemetry  # noqa: E402
from gpu_worker.build import find_toolkit  # noqa: E402


def _case(name, eb, rows, cols, variant, access, **kw):
    return name, {"element_bytes": eb, "rows": rows, "cols": cols, "variant": variant, "access": access, **kw}


COL, ROW = {"kind": "column"}, {"kind": "row"}
CASES = [
    # 4-byte words, 32x32: the classic 32-way column conflict and its two fixes
    _case("f32_row", 4, 32, 32, "naive", ROW),
    _case("f32_col_naive", 4, 32, 32, "naive", COL),
    _case("f32_col_pad1", 4, 32, 32, "padded", COL, pad=1),
    _case("f32_col_sw505", 4, 32, 32, "swizzle", COL, swizzle="Sw<5,0,5>"),
    # 8- and 16-byte vectors (two and four phases)
    _case("v8_row", 8, 32, 16, "naive", ROW),
    _case("v8_col_naive", 8, 32, 16, "naive", COL),
    _case("v8_col_pad1", 8, 32, 16, "padded", COL, pad=1),
    _case("v16_row", 16, 32, 8, "naive", ROW),
    _case("v16_col_naive", 16, 32, 8, "naive", COL),
    _case("v16_col_pad1", 16, 32, 8, "padded", COL, pad=1),
    _case("v16_col_sw303", 16, 32, 8, "swizzle", COL, swizzle="Sw<3,0,3>"),
    # narrow elements: lanes sharing a word broadcast
    _case("f16_col_naive", 2, 32, 64, "naive", COL),
    _case("f16_col_sw515", 2, 32, 64, "swizzle", COL, swizzle="Sw<5,1,5>"),
    _case("u8_col_naive", 1, 32, 128, "naive", COL),
    # ldmatrix on a 64x64 fp16 tile: 128-byte rows conflict 8-way; Sw<3,3,3> (128B swizzle on b16) fixes it
    _case("ldsm_x1_naive", 2, 64, 64, "naive", {"kind": "ldmatrix", "num": 1}),
    _case("ldsm_x2_naive", 2, 64, 64, "naive", {"kind": "ldmatrix", "num": 2}),
    _case("ldsm_x4_naive", 2, 64, 64, "naive", {"kind": "ldmatrix", "num": 4}),
    _case("ldsm_x4_sw333", 2, 64, 64, "swizzle", {"kind": "ldmatrix", "num": 4}, swizzle="Sw<3,3,3>"),
    _case("ldsm_x4t_naive", 2, 64, 64, "naive", {"kind": "ldmatrix", "num": 4, "trans": True}),
    _case("ldsm_x4t_sw333", 2, 64, 64, "swizzle", {"kind": "ldmatrix", "num": 4, "trans": True}, swizzle="Sw<3,3,3>"),
    _case("ldsm_x4_pad8", 2, 64, 64, "padded", {"kind": "ldmatrix", "num": 4}, pad=8),
    # a thread layout and an explicit-offset access on arbitrary layouts
    _case("f32_tv_4x8", 4, 32, 32, "naive", {"kind": "thread_layout", "layout": "(4,8):(32,1)"}),
    _case("f32_custom_colmajor_row", 4, 32, 32, "custom", ROW, layout="(32,32):(1,32)"),
    _case("f32_offsets_stride2", 4, 32, 32, "naive", {"kind": "offsets", "offsets": [2 * t for t in range(32)]}),
]


def targets(results: dict) -> dict:
    """The issue's targets, evaluated on the measured numbers (None when a case is missing)."""
    def get(name, key):
        r = results.get(name)
        return r["derived"][key] if r and "derived" in r else None

    out = {}
    row = get("f32_row", "tbps")
    for fix in ("f32_col_pad1", "f32_col_sw505"):
        tb, pct = get(fix, "tbps"), get(fix, "pct_of_peak")
        out[f"{fix}_vs_row"] = {"value": tb / row if tb and row else None, "target": ">= 0.90"}
        out[f"{fix}_pct_of_peak"] = {"value": pct, "target": ">= 80"}
    naive, fix = get("f32_col_naive", "ns_per_warp_access"), get("f32_col_pad1", "ns_per_warp_access")
    out["naive_over_fix"] = {"value": naive / fix if naive and fix else None, "target": ">= 20"}
    for v in out.values():
        val, tgt = v["value"], v["target"]
        v["met"] = None if val is None else val >= float(tgt.split()[1])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ncu", action="store_true", help="count wavefronts with Nsight Compute")
    ap.add_argument("--out", default=os.environ.get("OUT") or str(ROOT / "bench" / "results"))
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--iters", type=int, default=1024)
    ap.add_argument("--only", default="")
    ap.add_argument("--ncu-budget", type=float, default=180.0, help="seconds of profiling at most")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    results: dict[str, dict] = {}
    cases = [(n, {**s, "runs": args.runs, "iterations": args.iters}) for n, s in CASES if not only or n in only]
    for name, spec in cases:  # timing pass first: every case gets numbers even if profiling runs out of time
        try:
            results[name] = benches.run_smem(spec)
        except Exception as exc:  # record and continue: one bad case must not hide the others
            results[name] = {"error": f"{type(exc).__name__}: {exc}", "spec": spec,
                             "trace": traceback.format_exc()[-2000:]}
    path = write(args.out, results)
    if args.ncu:
        t0 = time.monotonic()
        for name, spec in cases:
            r = results[name]
            if "error" in r:
                continue
            if time.monotonic() - t0 > args.ncu_budget:
                r["measured"] = {"available": False, "reason": "profiling budget spent"}
                continue
            try:
                r["measured"] = benches.profile_smem(spec, r["device"]["sms"])
            except Exception as exc:
                r["measured"] = {"available": False, "reason": f"{type(exc).__name__}: {exc}"}
            r["measured"]["wall_s"] = round(time.monotonic() - t0, 1)
            write(args.out, results)
    path = write(args.out, results)
    report(results)
    print(f"wrote {path}")
    return 0 if all("error" not in r for r in results.values()) else 1


def write(out_dir: str, results: dict) -> Path:
    """Write the JSON document for ``results`` (device, toolkit, date, targets) and return its path."""
    info = telemetry.device_info()
    doc = {
        "benchmark": "smem",
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "device": info,
        "toolkit": find_toolkit().to_dict(),
        "ncu": benches.find_ncu(),
        "cases": results,
        "targets": targets(results),
    }
    os.makedirs(out_dir, exist_ok=True)
    gpu = (info.get("name") or "nogpu").replace("NVIDIA ", "").replace(" ", "")
    path = Path(out_dir) / f"smem_{gpu}_{dt.date.today().isoformat()}.json"
    path.write_text(json.dumps(doc, indent=1, default=str))
    return path


def report(results: dict) -> None:
    """Print the table and the targets."""
    print(f"{'case':26} {'layout':34} {'model':>5} {'cyc':>6} {'ncu':>6} {'TB/s':>6} {'%peak':>6} {'ms':>8} chk")
    for name, r in results.items():
        if "error" in r:
            print(f"{name:26} ERROR {r['error'][:150]}")
            continue
        m = r.get("measured") or {}
        ncu = m.get("wavefronts_per_instruction")
        d = r["derived"]
        print(f"{name:26} {r['layout'][:34]:34} {r['prediction']['wavefronts_per_access']:5.1f} "
              f"{d['cycles_per_warp_access']:6.2f} {ncu if ncu is None else round(ncu, 2)!s:>6} {d['tbps']:6.2f} "
              f"{d['pct_of_peak']:6.1f} {r['timing']['median']:8.4f} {'ok' if r['check']['passed'] else 'FAIL'}")
    for k, v in targets(results).items():
        print(f"target {k}: {v['value']} ({v['target']}) met={v['met']}")


if __name__ == "__main__":
    sys.exit(main())
