#!/usr/bin/env python3
"""Transpose through shared memory: naive, tiled (conflicted), padded and swizzled, each checked on the GPU and timed
beside a device-to-device copy of the same bytes; a table on stdout and one JSON file.

Usage:  python3 bench/transpose.py [--out DIR] [--runs N] [--sizes 8192,16384] [--configs fp32,fp16,...] [--tag T]

The fp16 configurations move 4-byte words (two halves) through the shared-memory tile (kernels/transpose.cu).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gpu_worker import benches, telemetry  # noqa: E402
from gpu_worker.build import find_toolkit  # noqa: E402

#: Per dtype: tile, pad (one 4-byte word) and the swizzle that spreads a tile column over 32 banks; block_rows warps
#: (fp16) or rows of threads (fp32) per block, 8 unless given (fp16t128: 512 threads and 32 KB per block).
CONFIGS = {
    "fp32": {"dtype": "fp32", "tile": 32, "pad": 1, "swizzle": "Sw<5,0,5>"},
    "fp32t64": {"dtype": "fp32", "tile": 64, "pad": 1, "swizzle": "Sw<5,0,6>"},
    "fp16": {"dtype": "fp16", "tile": 64, "pad": 2, "swizzle": "Sw<5,1,5>"},
    "fp16t32": {"dtype": "fp16", "tile": 32, "pad": 2, "swizzle": "Sw<4,1,5>"},
    "fp16t128": {"dtype": "fp16", "tile": 128, "block_rows": 16, "pad": 2, "swizzle": "Sw<5,1,6>"},
    "fp16t128r8": {"dtype": "fp16", "tile": 128, "block_rows": 8, "pad": 2, "swizzle": "Sw<5,1,6>"},
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT") or str(ROOT / "bench" / "results"))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--sizes", default="8192,16384")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--tag", default="", help="suffix of the JSON file name (several runs on one day)")
    args = ap.parse_args()
    results = {}
    for config in args.configs.split(","):
        for n in (int(x) for x in args.sizes.split(",")):
            name = f"{config}_{n}"
            spec = {**CONFIGS[config], "n": n, "runs": args.runs}
            try:
                results[name] = benches.run_transpose(spec)
            except Exception as exc:
                results[name] = {"error": f"{type(exc).__name__}: {exc}", "spec": spec,
                                 "trace": traceback.format_exc()[-2000:]}
    info = telemetry.device_info()
    tg = {}
    for name, r in results.items():
        if "error" in r:
            continue
        for v in ("padded", "swizzled"):
            pct = r["variants"][v]["pct_of_copy"]
            tg[f"{name}_{v}_pct_of_copy"] = {"value": pct, "target": ">= 85", "met": pct >= 85}
    clocks = {k: v for k, v in info.items() if "clock" in k}
    doc = {"benchmark": "transpose", "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
           "host": platform.node(), "device": info, "driver": info.get("driver"), "clocks": clocks,
           "toolkit": find_toolkit().to_dict(), "command": " ".join(sys.argv), "cases": results, "targets": tg}
    print(f"{'case':16} {'variant':12} {'GB/s':>8} {'%copy':>7} {'ms':>9} {'spread':>7} chk  model(read ways)")
    for name, r in results.items():
        if "error" in r:
            print(f"{name:12} ERROR {r['error'][:200]}")
            continue
        for v, x in r["variants"].items():
            ways = (r["prediction"].get(v) or {}).get("read", {}).get("ways", "")
            print(f"{name:16} {v:12} {x['gbps']:8.1f} {x['pct_of_copy']:7.1f} {x['median_ms']:9.4f} "
                  f"{x['timing']['rel_spread']:7.3f} {'ok' if x['check']['passed'] else 'FAIL'}  {ways}")
    for k, v in tg.items():
        print(f"target {k}: {v['value']:.1f} ({v['target']}) met={v['met']}")
    os.makedirs(args.out, exist_ok=True)
    gpu = (info.get("name") or "nogpu").replace("NVIDIA ", "").replace(" ", "")
    tag = f"_{args.tag}" if args.tag else ""
    path = Path(args.out) / f"transpose_{gpu}_{dt.date.today().isoformat()}{tag}.json"
    path.write_text(json.dumps(doc, indent=1, default=str))
    print(f"wrote {path}")
    return 0 if all("error" not in r for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
