"""The brute-force hunt of ``tests/f2_brute.py`` over many seeds: composition, complement, right_inverse and
left_inverse on random swizzled shared-memory tiles, their F2 forms and random F2 layouts, each answer checked by
enumeration against its post-condition, each print read back.

    .venv/bin/python scripts/f2_hunt.py --seeds 9200-9299 --n 200 [--out bench/results/f2_hunt.json]

Prints the counts per op and every failure; exits 1 when there is one.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
import f2_brute  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="9200-9299", help="a range lo-hi (inclusive) or a comma-separated list")
    ap.add_argument("--n", type=int, default=200, help="inputs per seed")
    ap.add_argument("--out", type=Path, help="write the counts and failures here (JSON)")
    a = ap.parse_args(argv)
    if "-" in a.seeds:
        lo, hi = map(int, a.seeds.split("-"))
        seeds = list(range(lo, hi + 1))
    else:
        seeds = [int(s) for s in a.seeds.split(",")]
    total: Counter = Counter()
    fails: list[str] = []
    for seed in seeds:
        f, stats = f2_brute.hunt(seed, a.n)
        total.update(stats)
        fails += [f"seed {seed}: {x}" for x in f]
        print(f"seed {seed}: {sum(stats.values())} ops, {len(f)} failures", flush=True)
    for key in sorted(total):
        print(f"  {key:24s} {total[key]}")
    for x in fails:
        print("FAIL", x)
    print(f"{len(seeds)} seeds x {a.n} inputs: {sum(total.values())} ops, {len(fails)} failures")
    if a.out:
        meta = {"command": "python scripts/f2_hunt.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                "python": platform.python_version(), "machine": platform.machine()}
        a.out.write_text(json.dumps(meta | {"seeds": [seeds[0], seeds[-1]], "n": a.n, "counts": dict(total),
                                            "failures": fails}, indent=1) + "\n")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
