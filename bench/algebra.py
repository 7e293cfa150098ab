"""Benchmark: the same random operations through ``algebra`` and through pycute, in one process.

Prints a table (ops/s for each, and the ratio algebra / pycute) and writes JSON to bench/results/algebra.json.
Also times enumerating every cell of a 256x256 hierarchical layout.

    python bench/algebra.py [--cases 400] [--repeat 5] [--out bench/results/algebra.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import algebra as A  # noqa: E402


def _rand_layout(rng: random.Random) -> tuple:
    """A compact layout with a random mode order: (shape, stride) as flat tuples of rank 2-3."""
    r = rng.choice([2, 3])
    shape = tuple(rng.choice([2, 4, 8, 16]) for _ in range(r))
    order = list(range(r))
    rng.shuffle(order)
    stride = [0] * r
    cur = 1
    for i in order:
        stride[i] = cur
        cur *= shape[i]
    return shape, tuple(stride)


def _cases(n: int, seed: int) -> dict[str, list]:
    rng = random.Random(seed)
    comp, compl, div = [], [], []
    while len(comp) < n or len(compl) < n or len(div) < n:
        a = _rand_layout(rng)
        size_a = 1
        for s in a[0]:
            size_a *= s
        # composition with a compact sub-tile of A's domain (always admissible)
        b_shape = tuple(rng.choice([1, 2]) * 2 for _ in range(2))
        if b_shape[0] * b_shape[1] <= size_a and len(comp) < n:
            comp.append((a, (b_shape, (1, b_shape[0]))))
        if len(compl) < n:
            compl.append((a, size_a * rng.choice([1, 2, 4])))
        t = rng.choice([2, 4])
        if size_a % (t * 2) == 0 and len(div) < n:
            div.append((a, (t, 2)))
    return {"composition": comp, "complement": compl, "logical_divide": div}


def _run(fn, cases, repeat: int, cold: bool = False) -> float:
    """ops/s: median over ``repeat`` passes; ``cold`` clears the algebra's result caches before every pass."""
    from algebra.core.memo import clear_caches

    times = []
    for _ in range(repeat):
        if cold:
            clear_caches()
        t0 = time.perf_counter()
        for c in cases:
            fn(*c)
        times.append(time.perf_counter() - t0)
    return len(cases) / statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "algebra.json"))
    args = ap.parse_args()
    try:
        import pycute as P
    except ImportError:
        print("pycute not installed: pip install nvidia-cutlass", file=sys.stderr)
        return 2

    cases = _cases(args.cases, args.seed)
    ours = {
        "composition": lambda a, b: A.composition(A.Layout(*a), A.Layout(*b)),
        "complement": lambda a, m: A.complement(A.Layout(*a), m),
        "logical_divide": lambda a, t: A.logical_divide(A.Layout(*a), A.Layout(*t)),
    }
    theirs = {
        "composition": lambda a, b: P.composition(P.Layout(*a), P.Layout(*b)),
        "complement": lambda a, m: P.complement(P.Layout(*a), m),
        "logical_divide": lambda a, t: P.logical_divide(P.Layout(*a), P.Layout(*t)),
    }
    # the same ops on inputs built before the clock starts (the op alone, without parsing/validating inputs)
    ours_op = {"composition": A.composition, "complement": A.complement, "logical_divide": A.logical_divide}
    theirs_op = {"composition": P.composition, "complement": P.complement, "logical_divide": P.logical_divide}

    def built(lib, cs):
        return [tuple(lib.Layout(*x) if isinstance(x, tuple) else x for x in c) for c in cs]

    rows = []
    for op, cs in cases.items():
        mismatches = sum(
            1 for c in cs
            if [ours[op](*c)(i) for i in range(8)] != [theirs[op](*c)(i) for i in range(8)]
        )
        cold = _run(ours[op], cs, args.repeat, cold=True)
        warm = _run(ours[op], cs, args.repeat)
        t = _run(theirs[op], cs, args.repeat)
        op_cold = _run(ours_op[op], built(A, cs), args.repeat, cold=True)
        op_theirs = _run(theirs_op[op], built(P, cs), args.repeat)
        rows.append({"op": op, "cases": len(cs), "op_only_cold_ratio": round(op_cold / op_theirs, 2),
                     "algebra_op_only_cold_per_s": round(op_cold), "pycute_op_only_per_s": round(op_theirs),
                     "algebra_cold_ops_per_s": round(cold),
                     "algebra_warm_ops_per_s": round(warm), "pycute_ops_per_s": round(t),
                     "ratio_cold": round(cold / t, 2), "ratio_warm": round(warm / t, 2),
                     "function_mismatches_first_8": mismatches})

    big = A.parse("((16,16),(16,16)):((1,256),(16,4096))")
    cell_times = []
    for _ in range(args.repeat * 4):
        t0 = time.perf_counter()
        A.offsets(big)
        cell_times.append(time.perf_counter() - t0)
    cells_ms = statistics.median(cell_times) * 1e3

    print("end to end (inputs built and validated in the loop): cold = caches cleared before every pass, warm = "
          "repeated inputs (memoized); op only: inputs built before the clock, cold")
    print(f"{'op':<16}{'cases':>7}{'cold/s':>10}{'warm/s':>10}{'pycute/s':>10}{'cold x':>8}{'warm x':>8}"
          f"{'op-only cold x':>16}")
    for r in rows:
        print(f"{r['op']:<16}{r['cases']:>7}{r['algebra_cold_ops_per_s']:>10}{r['algebra_warm_ops_per_s']:>10}"
              f"{r['pycute_ops_per_s']:>10}{r['ratio_cold']:>8}{r['ratio_warm']:>8}{r['op_only_cold_ratio']:>16}")
    print(f"every cell of {big} (65536 offsets): {cells_ms:.2f} ms (median of {len(cell_times)})")

    out = {
        "command": "python bench/algebra.py " + " ".join(sys.argv[1:]),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(), "machine": platform.machine(), "cpu": platform.processor(),
        "ops": rows, "cells_256x256_ms": round(cells_ms, 3),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
