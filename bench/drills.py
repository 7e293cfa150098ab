"""Drill cost per kind: generating a drill, grading its key, and grading adversarial answers (the ReDoS repro of the
answer readers, deep parentheses, 4,000-character inputs). Prints a table and writes bench/results/drills.json.

    python bench/drills.py [--seeds 200]

Times are wall-clock per call on this machine (one process, no server): the worst adversarial grade bounds what one
answer request can cost the server beyond the HTTP overhead.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.drills.core import generate, kinds  # noqa: E402

EVIL = ["1" + " " * 3998 + "!", "(" * 1999 + "!", "1-" * 1999 + "!", "Sw<" + " " * 3990 + "3,4,3!",
        "index" + " " * 3990 + "(=", "9" * 4000, "(4,8):(" + "1," * 1995 + ")",
        "(0..63,0..63) " * 280,  # coordinate ranges: capped at 4096 pairs in all
        "i + j" + " + 0*i" * 80,  # a long formula: capped at 64 operations
        "(" + ",".join(["2"] * 40) + "):(" + ",".join(["1"] * 40) + ")"]  # a designed B of size 2^40


def ms(f, *args) -> float:
    t = time.perf_counter()
    f(*args)
    return 1000 * (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200)
    args = ap.parse_args()
    rows = []
    for k in kinds():
        gen, key, evil = [], [], []
        for seed in range(args.seeds):
            gen.append(ms(generate, k.kind, seed))
            d = generate(k.kind, seed)
            key.append(ms(d.grade, d.expected))
            if seed < 5:
                evil += [ms(d.grade, text) for text in EVIL]
        rows.append({"kind": k.kind, "generate_p50_ms": statistics.median(gen), "generate_max_ms": max(gen),
                     "grade_key_p50_ms": statistics.median(key), "grade_key_max_ms": max(key),
                     "grade_adversarial_max_ms": max(evil)})
    print(f"{'kind':<16}{'gen p50':>9}{'gen max':>9}{'key p50':>9}{'key max':>9}{'evil max':>10}   (ms)")
    for r in rows:
        print(f"{r['kind']:<16}{r['generate_p50_ms']:>9.2f}{r['generate_max_ms']:>9.1f}{r['grade_key_p50_ms']:>9.2f}"
              f"{r['grade_key_max_ms']:>9.1f}{r['grade_adversarial_max_ms']:>10.1f}")
    out = Path(__file__).parent / "results" / "drills.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"seeds": args.seeds, "python": platform.python_version(),
                               "machine": platform.machine(), "kinds": rows}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
