"""Benchmark: the same operations through ``algebra`` and through pycute, in one process, on the same inputs.

Two sets of inputs: random compact layouts (composition, complement, logical_divide; end to end, op only, cold and
memoized), and CuTe's recorded corpus (``bench/algebra_corpus.py``: every corpus op, cold and three passes). Also
times enumerating every cell of a 256x256 hierarchical layout. Prints a table and writes JSON.

``--before REV`` runs the same measurement on the ``algebra/`` package of git revision REV (extracted to a
temporary folder, in a child process on the same core) and prints both, before and after, in one run.

    python bench/algebra.py [--cases 400] [--repeat 5] [--corpus 0] [--before REV] [--out bench/results/algebra.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, os.environ.get("BENCH_ALGEBRA_ROOT", str(ROOT)))  # --before: the child's algebra/ comes first

import algebra_corpus  # noqa: E402

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
    """ops/s: the best of ``repeat`` passes in CPU time of this thread (other work on a shared machine does not
    count); ``cold`` clears the algebra's result caches before every pass."""
    from algebra.core.memo import clear_caches

    times = []
    for _ in range(repeat):
        if cold:
            clear_caches()
        t0 = time.thread_time()
        for c in cases:
            fn(*c)
        times.append(time.thread_time() - t0)
    return len(cases) / min(times)


def measure(args: argparse.Namespace, P: object) -> dict:
    """Every figure of this benchmark for the ``algebra`` imported here (see the module doc)."""
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
    corpus = algebra_corpus.measure(A, P, algebra_corpus.load_cases(args.corpus, args.seed), args.repeat)
    return {"ops": rows, "corpus": corpus, "cells_256x256_ms": round(statistics.median(cell_times) * 1e3, 3)}


def _before(rev: str, argv: list[str]) -> dict:
    """``measure`` on the algebra/ of git revision ``rev`` (or of the folder ``rev`` that holds an ``algebra/``
    package, where there is no git history), in a child process (same arguments, same CPU set)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = rev if (Path(rev) / "algebra" / "__init__.py").is_file() else tmp
        if root == tmp:
            tar = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "algebra"], check=True, capture_output=True)
            subprocess.run(["tar", "-x", "-C", tmp], input=tar.stdout, check=True)
        out = Path(tmp) / "before.json"
        env = dict(os.environ, BENCH_ALGEBRA_ROOT=str(Path(root).resolve()))
        subprocess.run([sys.executable, __file__, *argv, "--measure-only", str(out)], check=True, env=env)
        return json.loads(out.read_text())


def _print(label: str, m: dict) -> None:
    print(f"== {label}")
    print("random inputs, end to end (inputs built and validated in the loop): cold = caches cleared before every "
          "pass, warm = repeated inputs (memoized); op only: inputs built before the clock, cold")
    print(f"{'op':<16}{'cases':>7}{'cold/s':>10}{'warm/s':>10}{'pycute/s':>10}{'cold x':>8}{'warm x':>8}"
          f"{'op-only cold x':>16}")
    for r in m["ops"]:
        print(f"{r['op']:<16}{r['cases']:>7}{r['algebra_cold_ops_per_s']:>10}{r['algebra_warm_ops_per_s']:>10}"
              f"{r['pycute_ops_per_s']:>10}{r['ratio_cold']:>8}{r['ratio_warm']:>8}{r['op_only_cold_ratio']:>16}")
    print("corpus (CuTe's recorded cases pycute takes; inputs built before the clock): cold = one pass on cleared "
          "caches, x3 = three passes after clearing them once; x = pycute's time / ours")
    print(f"{'group':<16}{'cases':>7}{'refused':>9}{'cold ms':>9}{'x3 ms':>9}{'pycute ms':>11}{'cold x':>8}{'x3 x':>8}")
    for g, r in m["corpus"].items():
        print(f"{g:<16}{r['cases']:>7}{r['refused']:>9}{r['cold_s'] * 1e3:>9.1f}{r['x3_s'] * 1e3:>9.1f}"
              f"{r['pycute_s'] * 1e3:>11.1f}{r['ratio_cold']:>8}{r['ratio_x3']:>8}")
    print(f"every cell of ((16,16),(16,16)):((1,256),(16,4096)) (65536 offsets): {m['cells_256x256_ms']:.2f} ms")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--corpus", type=int, default=0, help="corpus cases to time (0: every case pycute takes)")
    ap.add_argument("--before", metavar="REV", help="also measure the algebra/ of this git revision (or folder)")
    ap.add_argument("--measure-only", metavar="PATH", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "algebra.json"))
    args = ap.parse_args()
    try:
        import pycute as P
    except ImportError:
        print("pycute not installed: pip install nvidia-cutlass", file=sys.stderr)
        return 2
    if args.measure_only:
        Path(args.measure_only).write_text(json.dumps(measure(args, P)))
        return 0
    argv = ["--cases", str(args.cases), "--repeat", str(args.repeat), "--seed", str(args.seed),
            "--corpus", str(args.corpus)]
    before = _before(args.before, argv) if args.before else None
    after = measure(args, P)
    if before is not None:
        _print(f"before: algebra/ at {args.before}", before)
    _print("after: algebra/ of this tree" if before is not None else "algebra/ of this tree", after)
    out = {
        "command": "python bench/algebra.py " + " ".join(sys.argv[1:]),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(), "machine": platform.machine(), "cpu": platform.processor(),
        "cpus_allowed": len(os.sched_getaffinity(0)), "load_average": [round(x, 2) for x in os.getloadavg()],
        **after,
    }
    if before is not None:
        out["before"] = {"rev": args.before, **before}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
