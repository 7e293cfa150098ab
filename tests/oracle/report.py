"""Score ``algebra`` against the CuTe corpus (``tests/oracle/data/corpus_*.json``, or the files given).

    python tests/oracle/report.py [--op OP] [--all] [FILE ...]

Prints, per op, how many cases give CuTe's exact string, the same shape and function, only the same function, or
something else (a wrong layout, or a refusal on one side), then lists the wrong ones (``--all``: also the
"function" ones, whose shape differs).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))
import cute_cases as cc  # noqa: E402


def load(paths: list[Path]) -> list[dict]:
    seen: dict[str, dict] = {}
    for path in paths:
        for rec in json.loads(path.read_text()):
            seen.setdefault(cc.key(rec), rec)
    return list(seen.values())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--op", default="")
    ap.add_argument("--all", action="store_true")
    a = ap.parse_args(argv)
    recs = load(a.files or sorted((HERE / "data").glob("corpus_*.json")))
    if a.op:
        recs = [r for r in recs if r["op"] == a.op]
    table: dict[str, Counter] = {}
    wrong = []
    for rec in recs:
        ours = cc.run_ours(rec)
        v = cc.judge(rec["cute"], ours)
        table.setdefault(rec["op"], Counter())[v] += 1
        table[rec["op"]]["refused" if rec["cute"] == "refused" else "answered"] += 1
        if v == "mismatch" or (a.all and v == "function"):
            wrong.append((rec["op"], v, rec["args"], rec["cute"], ours))
    total = Counter()
    print(f"{'op':18s} {'cases':>6s} {'refused':>7s} {'exact':>6s} {'shape':>6s} {'func':>6s} {'wrong':>6s}  exact%")
    for op in sorted(table):
        t = table[op]
        total.update(t)
        n = t["refused"] + t["answered"]
        print(f"{op:18s} {n:6d} {t['refused']:7d} {t['exact']:6d} {t['shape']:6d} {t['function']:6d} "
              f"{t['mismatch']:6d}  {100 * t['exact'] / n:5.1f}")
    n = total["refused"] + total["answered"]
    if n:
        print(f"{'all':18s} {n:6d} {total['refused']:7d} {total['exact']:6d} {total['shape']:6d} "
              f"{total['function']:6d} {total['mismatch']:6d}  {100 * total['exact'] / n:5.1f}")
    for op, v, args, cute, ours in wrong:
        print(f"\n[{v}] {op} {json.dumps(args)}\n  cute: {cute}\n  ours: {ours}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
