#!/usr/bin/env python3
"""Start-up cost, before and after in one sitting: ``import algebra`` and a terminal's ``layoutlab show`` in fresh
processes, each tree in turn (alternating, so other work on the machine hits both alike), with the bytecode cache
warm as in an installed package (a copy of each tree in a temporary folder, written once before the clock). Wall
time per process start, median and best of the rounds; a table on stdout and JSON under bench/results/.

Usage:  python3 bench/import_time.py BEFORE_REV [--rounds 15] [--out bench/results/import_time.json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("algebra", "layoutlab")
COMMANDS = {
    "import algebra": "import algebra",
    "import algebra; parse + composition": "import algebra as A; A.composition(A.parse('(4,8):(8,1)'), A.parse('8:4'))",
    "layoutlab show (4,8):(8,1)": "import sys; sys.argv = ['layoutlab', 'show', '(4,8):(8,1)']; "
                                  "import layoutlab.cli as c; c.main()",
}


def _tree(rev: str | None, into: Path) -> Path:
    into.mkdir(parents=True)
    if rev is None:
        for p in PACKAGES:
            shutil.copytree(ROOT / p, into / p, ignore=shutil.ignore_patterns("__pycache__"), symlinks=True)
    else:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, *PACKAGES], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def _once(tree: Path, code: str) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "import_time.json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"before": _tree(args.before, Path(tmp) / "before"), "after": _tree(None, Path(tmp) / "after")}
        base = {"python": [sys.executable, "-c", "pass"]}
        rows = []
        for label, code in COMMANDS.items():
            times: dict[str, list[float]] = {"before": [], "after": [], "python": []}
            for tree in trees.values():
                _once(tree, code)  # writes the bytecode cache
            for _ in range(args.rounds):
                for name, tree in trees.items():
                    times[name].append(_once(tree, code))
                t0 = time.perf_counter()
                subprocess.run(base["python"], check=True)
                times["python"].append(time.perf_counter() - t0)
            row = {"command": label} | {f"{k}_median_ms": round(1e3 * statistics.median(v), 1)
                                        for k, v in times.items()}
            row |= {f"{k}_best_ms": round(1e3 * min(v), 1) for k, v in times.items()}
            rows.append(row)
    print(f"{'fresh process':<40}{'before ms':>11}{'after ms':>10}{'python alone':>14}   (median; best)")
    for r in rows:
        print(f"{r['command']:<40}{r['before_median_ms']:>11}{r['after_median_ms']:>10}{r['python_median_ms']:>14}"
              f"   ({r['before_best_ms']}; {r['after_best_ms']}; {r['python_best_ms']})")
    out = {"machine": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
           "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "before": args.before,
           "after": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                   text=True).stdout.strip(), "rounds": args.rounds,
           "command": f"python3 bench/import_time.py {args.before} --rounds {args.rounds}", "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
