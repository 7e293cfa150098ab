"""Index formulas (``algebra.teach.formula.formula``) on fresh random layouts (int, negative, basis and F2 strides,
swizzled with offsets and negative shifts), evaluated by Python itself (not by the formula module's own reader) at
every natural coordinate against L(c).

    python bench/explain_formula_audit.py --seeds 17770-17779
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import algebra as A  # noqa: E402
from algebra.core.arith import F2  # noqa: E402
from algebra.teach.formula import formula, natural_names  # noqa: E402
from tests.test_explain import rand_layout  # noqa: E402


def _map(s, f):
    return tuple(_map(x, f) for x in s) if isinstance(s, tuple) else f(s)


def _plain(v):
    """An F2 offset as its integer, a basis or arithmetic tuple as a tuple of ints."""
    if getattr(v, "is_f2", False):
        return v.value
    if hasattr(v, "as_tuple"):
        return tuple(_plain(x) for x in v.as_tuple())
    if type(v).__name__ == "ArithTuple":
        return tuple(_plain(x) for x in v)
    return v


def fresh(rng: random.Random):
    base = rand_layout(rng)
    r = rng.random()
    if r < 0.25:
        return A.Layout(base.shape, _map(base.shape, lambda _: F2(rng.choice((0, 1, 2, 3, 5, 8, 9, 17)))))
    if r < 0.4:
        return A.Layout(base.shape, _map(base.shape, lambda _: rng.choice((0, 1, 2)) * A.E(rng.choice((0, 1)))))
    if r < 0.7:
        return A.parse(f"Sw<{rng.randint(1, 3)},{rng.randint(0, 3)},{rng.choice((-5, -3, 3, 4))}> o "
                       f"{rng.randint(0, 9)} o {base}")
    return base


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="17770-17771")
    ap.add_argument("--n", type=int, default=30)
    ns = ap.parse_args()
    lo, hi = map(int, ns.seeds.split("-"))
    n = bad = skipped = 0
    for seed in range(lo, hi + 1):
        rng = random.Random(seed)
        for _ in range(ns.n):
            try:
                L = fresh(rng)
            except A.LayoutError:
                skipped += 1
                continue
            if A.size(L) > 2048:
                skipped += 1
                continue
            f = formula(L)
            shape = L.layout_b.shape if hasattr(L, "layout_b") else L.shape
            names = natural_names(shape)
            flat_names = list(A.flatten(names)) if isinstance(names, tuple) else [names]
            flat_shape = list(A.flatten(shape)) if isinstance(shape, tuple) else [shape]
            code = compile(f, "<formula>", "eval")
            n += 1
            for flat in itertools.product(*[range(s) for s in flat_shape]):
                env = dict(zip(flat_names, flat, strict=True))
                nat = _map(names, env.__getitem__) if isinstance(names, tuple) else env[names]
                want = _plain(L(nat))
                got = eval(code, {}, env)  # noqa: S307 (a formula of + - * ^ & << >> over ints)
                if isinstance(want, tuple) and not isinstance(got, tuple):
                    got = (got,)
                while isinstance(want, tuple) and isinstance(got, tuple) and len(got) > len(want) and got[-1] == 0:
                    got = got[:-1]
                while isinstance(want, tuple) and isinstance(got, tuple) and len(want) > len(got) and want[-1] == 0:
                    want = want[:-1]
                if got != want:
                    bad += 1
                    print(f"{L}: formula {f} gives {got} at {nat}, L gives {want}")
                    break
    print(f"{n} layouts, every natural coordinate evaluated: {bad} formulas wrong ({skipped} skipped)")


if __name__ == "__main__":
    main()
