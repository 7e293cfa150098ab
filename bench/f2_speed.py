#!/usr/bin/env python3
"""Before / after in one sitting for the F2 work: ``bench/solve_speed.py`` (the layout doctor's solve) and the Triton
routes' services (``layout_view``, ``conflicts_view`` with its fix search) of two trees, run alternately in fresh
processes (CPU time, so a shared host's waiting is left out); a table on stdout and bench/results/f2_speed.json.

Usage:  python3 bench/f2_speed.py BEFORE_TREE [--rounds N]     (e.g. a ``git worktree add /tmp/f2before b374668``)
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TRITON = r'''
import json, sys, time
sys.path.insert(0, ".")
from app.services import triton as T
B = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [%s], order = [1, 0]}>"
M = "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 2], instrShape = [16, 8]}>"
D = "#ttg.dot_op<{opIdx = 0, parent = %s, kWidth = 2}>" % M
S = "#ttg.slice<{dim = 0, parent = %s}>" % (B % "4, 1")
SW = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
NV = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>"
PAD = "#ttg.padded_shared<[64:+8] {order = [1, 0], shape = [64, 64]}>"
cases = {
    "layout_blocked_mma_dot_128x128": lambda: [T.layout_view(a, [128, 128], 16) for a in (B % "4, 1", M, D)],
    "layout_slice_shared_64x64": lambda: [T.layout_view(a, [64], 16) for a in (S,)]
        + [T.layout_view(a, [64, 64], 16) for a in (SW, NV, PAD)],
    "conflicts_fix_blocked_sw_128x128": lambda: T.conflicts_view(B % "1, 1", SW, [128, 128], 16),
    "conflicts_fix_mma_nvmma_64x64": lambda: T.conflicts_view(M, NV, [64, 64], 16),
    "conflicts_padded_64x64": lambda: T.conflicts_view(B % "4, 1", PAD, [64, 64], 16),
}
out = {}
for name, fn in cases.items():
    fn()  # warm (imports, caches of the first call are not what a served request pays for every time)
    cpu = []
    for _ in range(int(sys.argv[1])):
        c0 = time.process_time()
        fn()
        cpu.append(1000 * (time.process_time() - c0))
    out[name] = cpu
print(json.dumps(out))
'''


def solve_speed(tree: Path, repeat: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, "bench/solve_speed.py", "--repeat", str(repeat), "--out", d], cwd=tree,
                       check=True, capture_output=True)
        doc = json.loads((Path(d) / "solve_speed.json").read_text())
    return {k: v["cpu_ms"] for k, v in doc["cases"].items()}


def triton(tree: Path, repeat: int) -> dict[str, list[float]]:
    r = subprocess.run([sys.executable, "-c", TRITON, str(repeat)], cwd=tree, check=True, capture_output=True,
                       text=True, env={**os.environ, "LAYOUTLAB_DATA": tempfile.mkdtemp(prefix="f2speed")})
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", help="the tree to compare with (a git worktree of the earlier revision)")
    ap.add_argument("--rounds", type=int, default=2, help="alternating before/after rounds")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args()
    trees = {"before": Path(args.before).resolve(), "after": ROOT}
    cpu: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
    for _ in range(args.rounds):
        for side, tree in trees.items():
            for name, ms in {**solve_speed(tree, args.repeat), **triton(tree, args.repeat)}.items():
                cpu[side].setdefault(name, []).extend(ms)
    rev = {side: subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=t, capture_output=True,
                                text=True).stdout.strip() for side, t in trees.items()}
    rows = {name: {"before_cpu_median_ms": statistics.median(cpu["before"][name]),
                   "after_cpu_median_ms": statistics.median(cpu["after"][name]),
                   "before_cpu_ms": cpu["before"][name], "after_cpu_ms": cpu["after"][name]}
            for name in cpu["after"]}
    for r in rows.values():
        r["after_over_before"] = r["after_cpu_median_ms"] / r["before_cpu_median_ms"]
    doc = {"benchmark": "f2_speed", "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
           "command": "python3 bench/f2_speed.py " + " ".join(sys.argv[1:]), "host": platform.node(),
           "machine": platform.machine(), "processor": platform.processor(), "python": platform.python_version(),
           "cpus": os.cpu_count(), "load_average": os.getloadavg(), "revisions": rev, "rounds": args.rounds,
           "repeat": args.repeat, "note": "median process CPU time per call, before and after alternating",
           "cases": rows}
    print(f"{'case':36} {'before ms':>10} {'after ms':>9} {'after/before':>12}")
    for name, r in rows.items():
        print(f"{name:36} {r['before_cpu_median_ms']:10.1f} {r['after_cpu_median_ms']:9.1f} "
              f"{r['after_over_before']:12.2f}")
    os.makedirs(args.out, exist_ok=True)
    path = Path(args.out) / "f2_speed.json"
    path.write_text(json.dumps(doc, indent=1))
    print(f"revisions {rev}; load average {doc['load_average']}; wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
