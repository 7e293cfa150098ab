#!/usr/bin/env python3
"""Before / after in one sitting for ``composition(Layout, Swizzle)`` (``algebra.core.swizzle.layout_swizzle``): its
check that CuTe's ``make_swizzle<A(yyy), A(zzz)> o A`` is ``A o Sw`` went from the first 2^16 points called one by
one to the unit indices (a bit-linear A) or a table of A's offsets. Each tree runs in a fresh process, alternately,
CPU time per call (median of the rounds); a table on stdout and bench/results/swizzle_check.json.

Usage:  python3 bench/swizzle_check.py BEFORE_TREE [--rounds N]   (BEFORE_TREE holds an ``algebra/`` package, e.g.
        ``mkdir /tmp/before && git archive 0bdd274 algebra | tar -x -C /tmp/before``)
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASES = [("(8,64):(64,1)", (3, 3, 3)), ("(64,8):(1,64)", (3, 3, 3)), ("(16,16):(16,1)", (2, 2, 3)),
         ("(128,64):(64,1)", (3, 4, 3)), ("(32,32):(1,32)", (3, 0, 3)), ("(6,16):(16,1)", (2, 0, 3)),
         ("(12,32):(32,1)", (2, 2, 3))]

RUN = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
import algebra as A
from algebra.core.swizzle import layout_swizzle
out = {}
for lay, sw in json.loads(sys.argv[2]):
    L, S = A.parse(lay), A.Swizzle(*sw)
    def call():
        try:
            return str(layout_swizzle(L, S))
        except A.LayoutError as e:
            return "refused: " + str(e)[:60]
    ans = call()
    k, c0 = 0, time.process_time()
    while time.process_time() - c0 < 0.3:
        call()
        k += 1
    out[f"{lay} o Sw<{sw[0]},{sw[1]},{sw[2]}>"] = [1e6 * (time.process_time() - c0) / k, ans]
print(json.dumps(out))
'''


def run(tree: Path) -> dict:
    p = subprocess.run([sys.executable, "-c", RUN, str(tree), json.dumps(CASES)], capture_output=True, text=True,
                       check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    return json.loads(p.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    trees = {"before": a.before.resolve(), "after": ROOT}
    times: dict = {k: {} for k in trees}
    answers: dict = {k: {} for k in trees}
    for _ in range(a.rounds):
        for name, tree in trees.items():
            for case, (us, ans) in run(tree).items():
                times[name].setdefault(case, []).append(us)
                answers[name][case] = ans
    rows = []
    print(f"{'case':36s} {'before us':>10s} {'after us':>10s} {'x':>7s}  same answer")
    for case in times["after"]:
        b, f = statistics.median(times["before"][case]), statistics.median(times["after"][case])
        same = answers["before"][case] == answers["after"][case]
        rows.append({"case": case, "before_us": round(b, 1), "after_us": round(f, 1), "speedup": round(b / f, 1),
                     "same_answer": same, "answer_after": answers["after"][case]})
        print(f"{case:36s} {b:10.1f} {f:10.1f} {b / f:7.1f}  {same}")
    doc = {"bench": "swizzle_check", "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
           "machine": {"platform": platform.platform(), "python": platform.python_version(),
                       "cores": os.cpu_count(), "load": os.getloadavg()},
           "command": "python3 " + " ".join(sys.argv), "before_tree": str(a.before), "rounds": a.rounds,
           "unit": "CPU microseconds per call, median of the rounds", "rows": rows}
    out = ROOT / "bench" / "results" / "swizzle_check.json"
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
