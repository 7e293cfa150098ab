"""Every answer, refusal text and derivation of ``algebra``, dumped one per line, to compare two trees byte for byte.

For every case of CuTe's corpus (``tests/oracle/data/corpus_*.json``, every op): the printed result or the refusal
message, in one cold pass (caches cleared once), a warm pass (the same order: every call a cache hit), a shuffled
pass and a pass that clears the caches before each case; then generated cases (``tests/oracle/cute_cases.py``)
the same ways; the derivation (``explain``: every step's text, depth, kind and layout) of every ``--explain-every``-th
case of both; and CuTe's print (``checks.cute_would_print``) of every refused case. ``--tiles N`` adds N generated
cases of ``local_tile``, ``local_partition`` and ``max_common_*`` (``tile_cases``): integer, identity-tensor and
scaled-basis layouts, negative-stride and non-dividing tilers, projections, thread indices out of range.

    python bench/algebra_same.py --out /tmp/after.txt
    python bench/algebra_same.py --root /tmp/old_tree --out /tmp/before.txt   # a folder holding an algebra/ package
    cmp /tmp/before.txt /tmp/after.txt
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def tile_cases(cc, seed: int, n: int) -> list[dict]:
    """``n`` distinct cases of the ops a tile is read by, reproducible from ``seed``."""
    rng = random.Random(seed)
    text = lambda x: x if isinstance(x, str) else f"({','.join(map(text, x))})"  # noqa: E731

    def basis(s, path: tuple, scaled: bool) -> str | tuple:  # CuTe's identity strides 1@k@m, sometimes scaled
        if isinstance(s, tuple):
            return tuple(basis(e, (*path, i), scaled) for i, e in enumerate(s))
        return f"{rng.choice([1, 1, 2, 3]) if scaled else 1}@" + "@".join(map(str, reversed(path or (0,))))

    def with_neg(neg: float, fn, *args):
        cc.SCALE["neg"] = neg
        try:
            return fn(*args)
        finally:
            cc.SCALE["neg"] = 0.0

    def layout() -> tuple[str, tuple | int]:
        r, shape = rng.random(), cc.rand_shape(rng, rng.choice([64, 256, 1024]), max_rank=3)
        if r < 0.55:
            return cc.lay(shape, with_neg(0.4, cc.rand_stride, rng, shape)), shape
        shape = shape if isinstance(shape, tuple) else (shape, rng.choice([2, 3, 4, 5, 6]))
        lay = f"{cc.tstr(shape)}:{text(basis(shape, (), r > 0.9))}"
        zero = lambda s: 0 if isinstance(s, int) else tuple(map(zero, s))  # noqa: E731
        return (f"ArithTuple{cc.tstr(zero(shape))} o {lay}", shape) if r < 0.8 else (lay, shape)

    def entry(s) -> object:  # one mode of a tiler: an int that need not divide, a (negative-stride) layout, a tuple
        r = rng.random()
        if r < 0.1:
            return None
        if r < 0.55:
            return rng.choice(cc.divisors(cc.prod(s)) + [2, 3, 4, 5, 6, 7])
        if r < 0.65 and isinstance(s, tuple):
            return [entry(e) for e in s[: rng.randrange(len(s)) + 1]]
        if rng.random() < 0.5:
            return f"{rng.choice([2, 3, 4, 6, 8])}:{rng.choice([1, 2, -1, -2, 3])}"
        shape = (rng.choice([2, 3, 4]), rng.choice([2, 3]))
        return cc.lay(shape, (rng.choice([1, -1, 2]), rng.choice([2, 4, -4, 6, 3])))

    def case() -> dict:
        a, shape = layout()
        modes = shape if isinstance(shape, tuple) else (shape,)
        op = rng.choice(["local_tile"] * 4 + ["local_partition"] * 3 + ["max_common_vector", "max_common_layout"])
        if op == "local_tile" and rng.random() < 0.15:  # one tiler for the whole layout, a 1-D tile index
            return {"op": op, "args": [a, rng.choice([2, 3, 4, 8]), rng.randrange(cc.prod(shape) // 2 + 2)]}
        if op == "local_tile":
            t = [entry(m) for m in modes[: rng.randrange(len(modes)) + 1]]
            last = [0 if e is None else -(-cc.prod(m) // e) - 1 if isinstance(e, int) else 2
                    for e, m in zip(t, modes, strict=False)]  # the last tile along each mode
            crd = [None if e is None and rng.random() < 0.5 else [0] * len(e) if isinstance(e, list) else
                   rng.randrange(k + 1 + (rng.random() < 0.1)) for e, k in zip(t, last, strict=True)]
            if rng.random() < 0.8:
                return {"op": op, "args": [a, t, crd]}
            k = rng.randrange(len(t) + 1)  # a projection dicing out one extra mode
            return {"op": op, "args": [a, t[:k] + [rng.choice([2, 5, 7])] + t[k:], crd[:k] + [rng.choice([0, 1])]
                                       + crd[k:], [1] * k + [None] + [1] * (len(t) - k)]}
        if op == "local_partition":
            ts = cc.rand_shape(rng, 32, max_rank=min(3, len(modes)), max_depth=1)
            kind = rng.choice(["compact", "perm", "perm", "arb", "gap"])
            thr = cc.lay(ts, with_neg(0.3, cc.rand_stride, rng, ts, kind))
            n = cc.prod(ts)
            return {"op": op, "args": [a, thr, rng.randrange(n) if rng.random() < 0.9 else rng.choice([n, n + 3, -1])]}
        a = cc.rand_layout(rng) if "@" in a else a
        other = shape if rng.random() < 0.6 else cc.group(rng, cc.factorize(rng, cc.prod(shape)))
        return {"op": op, "args": [a, cc.lay(other, with_neg(0.3, cc.rand_stride, rng, other))]}

    return cc.distinct(n, case)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=str(ROOT), help="the folder whose algebra/ package is dumped")
    ap.add_argument("--random", type=int, default=6000, help="generated cases")
    ap.add_argument("--explain-every", type=int, default=7)
    ap.add_argument("--tiles", type=int, default=0, help="generated local_tile / local_partition / max_common cases")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "tests" / "oracle"))
    sys.path.insert(0, str(Path(args.root).resolve()))
    import cute_cases as cc
    import cute_notation as cn

    import algebra as A
    from algebra.core.checks import cute_would_print
    from algebra.core.memo import clear_caches

    assert Path(A.__file__).resolve().is_relative_to(Path(args.root).resolve()), A.__file__
    seen: dict[str, dict] = {}
    for path in sorted((ROOT / "tests" / "oracle" / "data").glob("corpus_*.json")):
        for rec in json.loads(path.read_text()):
            seen.setdefault(cc.key(rec), rec)
    corpus = list(seen.values())
    gen = (cc.gen_cases(1, args.random // 2) + cc.gen_cases(2, args.random // 4, big=0.3, neg=0.3, deep=0.3)
           + cc.gen_cases(3, args.random // 4, neg=0.5, deep=0.5) + tile_cases(cc, 4, args.tiles))
    lines: list[str] = []

    def fn_of(op: str):
        return getattr(A, op, None) or A.registry.get(op).fn

    def answer(rec: dict) -> str:
        try:
            res = fn_of(rec["op"])(*[cn.to_py(a) for a in rec["args"]])
        except A.LayoutError as e:
            return f"refused {type(e).__name__}: {e}"
        except Exception as e:  # noqa: BLE001 - a crash is dumped like an answer
            return f"error {type(e).__name__}: {e}"
        return f"{type(res).__name__} {res if type(res) not in (int, tuple) else cn.tstr(res)}"

    refused: set[str] = set()

    def one_pass(label: str, cases: list[dict], clear_each: bool = False) -> None:
        for rec in cases:
            if clear_each:
                clear_caches()
            out = answer(rec)
            if out.startswith("refused"):
                refused.add(cc.key(rec))
            lines.append(f"{label} {cc.key(rec)} => {out}")

    for name, cases in (("corpus", corpus), ("gen", gen)):
        clear_caches()
        one_pass(f"{name}-cold", cases)
        one_pass(f"{name}-warm", cases)
        shuffled = cases[:]
        random.Random(5).shuffle(shuffled)
        clear_caches()
        one_pass(f"{name}-shuffled", shuffled)
        one_pass(f"{name}-each", cases, clear_each=True)
        for i, rec in enumerate(cases):
            a = [cn.to_py(x) for x in rec["args"]]
            if i % args.explain_every == 0:
                try:
                    steps = A.explain(rec["op"], *a)
                    head = "ok"
                except A.LayoutError as e:
                    steps, head = getattr(e, "steps", []), f"refused: {e}"
                except Exception as e:  # noqa: BLE001
                    steps, head = [], f"error {type(e).__name__}: {e}"
                lines.append(f"{name}-explain {cc.key(rec)} {head}")
                lines.extend("  " + json.dumps(s, sort_keys=True, default=str) for s in steps)
            if cc.key(rec) in refused or i % args.explain_every == 3:
                try:
                    r = cute_would_print(fn_of(rec["op"]), *a)
                    lines.append(f"{name}-cute {cc.key(rec)} => {r}")
                except Exception as e:  # noqa: BLE001
                    lines.append(f"{name}-cute {cc.key(rec)} => error {type(e).__name__}: {e}")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} lines ({len(corpus)} corpus cases, {len(gen)} generated) -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
