#!/usr/bin/env python3
"""The two slow refusals found by the corpus's cold pass, before and after in one sitting: each tree (an ``algebra/``
of git revision BEFORE, and this tree) in a fresh process, caches cleared before each call, CPU time per call (the
best of --rounds). A table on stdout and JSON under bench/results/.

Usage:  python3 bench/slow_refusals.py BEFORE_REV [--rounds 3] [--out bench/results/slow_refusals.json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = [("complement", ["(16,64):(768,16384)"]), ("zipped_divide", ["((256,64,1),1024):((6,0,1),32)", 3])]
RUN = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
import algebra as A
from algebra.core.memo import clear_caches
out = []
for op, args in json.loads(sys.argv[2]):
    args = [A.parse(a) if type(a) is str else a for a in args]
    best = float("inf")
    for _ in range(int(sys.argv[3])):
        clear_caches()
        t = time.thread_time()
        try:
            getattr(A, op)(*args)
        except A.LayoutError:
            pass
        best = min(best, time.thread_time() - t)
    out.append(best)
print(json.dumps(out))
'''


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "slow_refusals.json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before, "algebra"], capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        times = {name: json.loads(subprocess.run([sys.executable, "-c", RUN, tree, json.dumps(CASES),
                                                  str(args.rounds)], capture_output=True, text=True,
                                                 check=True).stdout) for name, tree in (("before", tmp),
                                                                                        ("after", str(ROOT)))}
    rows = [{"call": f"{op}({', '.join(map(str, a))})", "before_ms": round(1e3 * times["before"][k], 2),
             "after_ms": round(1e3 * times["after"][k], 2)} for k, (op, a) in enumerate(CASES)]
    for r in rows:
        print(f"{r['call']:<60}{r['before_ms']:>12} ms{r['after_ms']:>10} ms")
    args.out.write_text(json.dumps({"machine": platform.platform(), "date": dt.datetime.now(dt.UTC).isoformat(
        timespec="seconds"), "command": f"python3 bench/slow_refusals.py {args.before} --rounds {args.rounds}",
        "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
