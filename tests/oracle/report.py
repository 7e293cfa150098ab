"""Score ``algebra`` against the CuTe corpus (``tests/oracle/data/corpus_*.json``, or the files given).

    python tests/oracle/report.py [--op OP] [--all] [FILE ...]

Prints, per op, how many cases give CuTe's exact string, the same shape and function, only the same function, a
refusal of a layout CuTe prints that is not the op's function ("notfn", each confirmed by its counterexample; an
unconfirmed one counts as wrong), or something else (a wrong layout, or a refusal on one side; "known" when the record
names an open cause of MISMATCHES.md), then lists the wrong ones (``--all``: also the "function" ones).
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
import cute_notation as cn  # noqa: E402


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
        if v == "not-a-function" and cn.confirm_not_a_function(rec):
            v = "mismatch"
        if v == "mismatch" and rec.get("known"):
            v = "known"
        table.setdefault(rec["op"], Counter())[v] += 1
        table[rec["op"]]["refused" if rec["cute"] == "refused" else "answered"] += 1
        if v == "mismatch" or (a.all and v == "function"):
            wrong.append((rec["op"], v, rec["args"], rec["cute"], ours))
    total = Counter()
    print(f"{'op':18s} {'cases':>6s} {'refused':>7s} {'exact':>6s} {'notfn':>6s} {'shape':>6s} {'func':>6s} "
          f"{'known':>6s} {'wrong':>6s}  exact%")

    def row(name: str, t: Counter) -> None:
        n = t["refused"] + t["answered"]
        print(f"{name:18s} {n:6d} {t['refused']:7d} {t['exact']:6d} {t['not-a-function']:6d} {t['shape']:6d} "
              f"{t['function']:6d} {t['known']:6d} {t['mismatch']:6d}  {100 * t['exact'] / n:5.1f}")

    for op in sorted(table):
        total.update(table[op])
        row(op, table[op])
    if total["refused"] + total["answered"]:
        row("all", total)
    for op, v, args, cute, ours in wrong:
        print(f"\n[{v}] {op} {json.dumps(args)}\n  cute: {cute}\n  ours: {ours}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
