#!/usr/bin/env python3
"""The ops whose never-wrong check read every point of a 2^20-point input, before and after the per-mode / per-bit
proofs, in one sitting: each tree (an ``algebra/`` of git revision BEFORE, and this tree) in a fresh process, caches
cleared before each call, CPU time per call (the best of --rounds), and the answer or refusal text of each, which
must be the same in both. A table on stdout and JSON under bench/results/.

Usage:  python3 bench/fast_checks.py BEFORE_REV [--rounds 3] [--out bench/results/fast_checks.json]
        python3 bench/fast_checks.py BEFORE_REV --capped --rounds 1   # no proof, over the point cap: refused now
        python3 bench/fast_checks.py BEFORE_REV --slices --rounds 1 --out bench/results/fast_checks_slices.json
(``--slices``: slices of swizzled layouts with ``_``, 2^16 points each, the most a slice's check reads one by one)
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
SW = "Sw<3,4,3> o 0 o "
CASES = [("logical_product", ["2:1", SW + "(1024,1024):(1,1024)"]),
         ("zipped_product", ["2:1", SW + "(1024,1024):(1024,1)"]),
         ("tiled_product", ["1:0", "Sw<3,3,3> o 0 o (32,32,1024):(1,32,1024)"]),
         ("flat_product", ["2:1", SW + "(1024,1024):(1,1024)"]),
         ("logical_product", ["4:2", "Sw<1,9,-3> o 0 o (32,32,1024):(1,32768,32)"]),  # refused at j = 16384
         ("right_inverse", ["(1024,1024):(1024,1)"]),
         ("right_inverse", ["(32,32,1024):(1,32768,32)"]),
         ("left_inverse", ["(1024,1024):(1024,1)"]),
         ("max_common_vector", ["(1024,1024):(1,1024)", "(1024,1024):(1,1024)"]),
         ("max_common_layout", ["(1024,1024):(1024,1)", "(1024,1024):(1024,1)"]),
         ("composition", ["Sw<2,10,8>", "Sw<2,12,8>"]),  # two swizzles merged: 20 bits checked
         ("complement", ["(16,64):(768,16384)"])]  # refused: the hole search, the corpus's slowest call
SLICES = [("slice", [[None, 3], SW + "(65536,4):(1,65536)"]),  # the kept mode on every swizzled bit
          ("slice", [[None, None, 1], SW + "(256,256,2):(1,256,65536)"]),
          ("slice", [[None, 1], SW + "(65536,4):(4,1)"]),
          ("slice", [[None, 1], "Sw<3,4,3> o 8 o (65536,4):(1,65536)"]),  # the offset carries above the swizzle
          ("slice", [[None, 1], "Sw<2,3,2> o 8 o (16384,4):(4,1)"]),  # a fixed bit below every stride
          ("slice", [[None, 3], "Sw<2,1,-3> o 0 o (65536,4):(1,65536)"]),  # a negative shift
          ("slice", [[None, None, 3, None], "Sw<3,4,3> o 0 o (16,8,8,512):(1,16,128,1024)"]),  # decays to a Layout
          ("slice", [[None, 1], "Sw<3,4,3> o 0 o (65536,4):(F1,F65536)"]),  # F2 strides
          ("slice", [[None, 1], "Sw<3,4,3> o 16 o (65536,4):(1,65536)"]),  # the offset carries into swizzled bits
          ("slice", [[None, None, 3, None], "Sw<3,4,3> o 0 o (16,8,8,96):(1,16,128,1024)"]),  # 96: steps
          ("slice", [[None, 9], "Sw<3,2,3> o 8 o (4096,16):(16,1)"])]  # CuTe XORs the offset: refused at j = 1
CAPPED = [("tiled_product", ["(2,4):(1,2)", SW + "(32,32,1024):(1,1024,32)"])]  # 2^23 points, not F2-linear
RUN = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
import algebra as A
from algebra.core.memo import clear_caches
out = []
tup = lambda v: tuple(map(tup, v)) if isinstance(v, list) else v
for op, args in json.loads(sys.argv[2]):
    args = [A.parse(a) if isinstance(a, str) else tup(a) for a in args]
    best = float("inf")
    for _ in range(int(sys.argv[3])):
        clear_caches()
        t = time.thread_time()
        try:
            got = str(args[1](args[0]) if op == "slice" else getattr(A, op)(*args))  # x(c), c with _: a slice
        except A.LayoutError as err:
            got = "refused: " + str(err)
        best = min(best, time.thread_time() - t)
    out.append([best, got])
print(json.dumps(out))
'''


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "fast_checks.json")
    ap.add_argument("--capped", action="store_true", help="the CAPPED cases (answers differ: refused over the cap)")
    ap.add_argument("--slices", action="store_true", help="the SLICES cases (2^16 points each)")
    args = ap.parse_args()
    cases = CAPPED if args.capped else SLICES if args.slices else CASES
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before, "algebra"], capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        res = {name: json.loads(subprocess.run([sys.executable, "-c", RUN, tree, json.dumps(cases), str(args.rounds)],
                                               capture_output=True, text=True, check=True).stdout)
               for name, tree in (("before", tmp), ("after", str(ROOT)))}
    rows = [{"call": f"{op}({', '.join(map(str, a))})", "before_ms": round(1e3 * res["before"][k][0], 2),
             "after_ms": round(1e3 * res["after"][k][0], 2), "same_answer": res["before"][k][1] == res["after"][k][1],
             "answer": res["after"][k][1][:160]} for k, (op, a) in enumerate(cases)]
    print(f"{'call':<84}{'before':>12}{'after':>10}  same")
    for r in rows:
        print(f"{r['call'][:84]:<84}{r['before_ms']:>9} ms{r['after_ms']:>7} ms  {r['same_answer']}")
    args.out.write_text(json.dumps({"machine": platform.platform(), "date": dt.datetime.now(dt.UTC).isoformat(
        timespec="seconds"), "command": "python3 bench/fast_checks.py " + " ".join(sys.argv[1:]),
        "rows": rows}, indent=1) + "\n")
    return 0 if args.capped or all(r["same_answer"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
