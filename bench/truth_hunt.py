"""Brute-force truth hunt on inputs the oracle generators do not draw: wide swizzles (B 1-5, M 0-6, shifts of either
sign) over carry-free tiles with gaps, broadcast and size-1 modes and nesting, their F2 forms, and plain layouts with
zero, negative and size-1 strides; every answer checked against its post-condition by enumeration
(``tests/f2_brute.py``'s evaluator, independent of the algebra), every print read back, and the op table's
``layout_add`` / ``greatest_common_domain`` / ``nullspace`` checked from their definitions.

    .venv/bin/python bench/truth_hunt.py --seeds 17020-17029 --n 200

Prints the counts per check and every failure; exits 1 when there is one.
"""

from __future__ import annotations

import argparse
import math
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
import f2_brute as fb  # noqa: E402

import algebra as A  # noqa: E402
from algebra.core import inttuple as it  # noqa: E402

# --------------------------------------------------------------------------------------------- inputs


def _nest(rng: random.Random, shape: list, stride: list) -> tuple:
    """Group neighbouring modes at random (depth up to 3)."""
    shape, stride = list(shape), list(stride)
    for _ in range(rng.randint(0, 3)):
        if len(shape) < 2:
            break
        i = rng.randrange(len(shape) - 1)
        j = rng.randint(i + 2, min(len(shape), i + 3))
        shape[i:j] = [tuple(shape[i:j])]
        stride[i:j] = [tuple(stride[i:j])]
    if len(shape) == 1:
        return shape[0], stride[0]
    return tuple(shape), tuple(stride)


def carry_free(rng: random.Random) -> A.Layout:
    """A layout whose offsets combine without carries: power-of-two modes on disjoint bit runs (gaps allowed), in any
    mode order, with broadcast (stride-0) and size-1 modes mixed in, nested now and then."""
    nbits = rng.randint(1, 9)
    runs, t = [], 0
    while t < nbits:
        k = rng.randint(1, 3)
        if rng.random() < 0.2:
            t += 1  # a gap: an offset bit no mode reaches
            continue
        runs.append((1 << k, 1 << t))
        t += k
    if not runs:
        runs.append((2, 1))
    rng.shuffle(runs)
    for _ in range(rng.randint(0, 2)):
        runs.insert(rng.randint(0, len(runs)), rng.choice(((1 << rng.randint(1, 2), 0), (1, rng.choice((0, 3, -5))))))
    return A.Layout(*_nest(rng, [s for s, _ in runs], [d for _, d in runs]))


def wide_swizzle(rng: random.Random) -> A.Swizzle:
    b = rng.randint(1, 5)
    m = rng.randint(0, 6)
    s = rng.choice((1, -1)) * rng.randint(b, b + 4)
    return A.Swizzle(b, m, s)


def plain(rng: random.Random) -> A.Layout:
    """Small plain layouts: zero, negative and size-1 strides, nesting."""
    n = rng.randint(1, 4)
    shape = [rng.choice((1, 2, 2, 3, 4, 4, 5, 6, 8)) for _ in range(n)]
    stride = [rng.choice((0, 1, 1, 2, 3, 4, 6, 8, 12, 16, -1, -2, -4)) for _ in range(n)]
    return A.Layout(*_nest(rng, shape, stride))


def compact_perm(rng: random.Random) -> A.Layout:
    """A compact layout (a permutation of its offsets), its modes shuffled, sometimes with a size-1 mode."""
    shape = [rng.choice((2, 3, 4)) for _ in range(rng.randint(1, 4))]
    order = list(range(len(shape)))
    rng.shuffle(order)  # mode order[0] gets stride 1, the next the size before it, ...
    rank = tuple(order.index(k) for k in range(len(shape)))
    stride = list(A.flatten(A.make_ordered_layout(tuple(shape), rank).stride))
    return A.Layout(*_nest(rng, shape, stride))


# --------------------------------------------------------------------------------------------- checks


_HERE = re.compile(r"CuTe would print (.+?) here")
_WHOLE = re.compile(r"CuTe would print [a-z_]+\(.*\) = (.+)$", re.S)


def _over_refused(label: str, msg: str, check: Any) -> str | None:
    """A refusal that names CuTe's print for the whole call (``CuTe would print op(...) = X``, or ``X here`` when the
    message is about this very call): that print must break the post-condition, else the refusal is an
    over-refusal."""
    m = _WHOLE.search(msg)
    if m is None and not (msg.startswith(label.split("(")[0] + "(") or msg.startswith(label.replace(
            "composition(", "composition ").replace(", ", " o ", 1).rstrip(")"))):
        return None
    m = m or _HERE.search(msg)
    if not m:
        return None
    try:
        cute = A.parse(m.group(1).strip().rstrip("."))
    except A.LayoutError:
        return None
    if check(cute) is None:
        return f"{label} refused although CuTe's print {cute} satisfies the post-condition: {msg[:240]}"
    return None


def run(stats: Counter, fails: list, op: str, args: tuple, check: Any, exact: bool = False) -> Any:
    """Run ``A.<op>(*args)``: an answer must pass ``check`` and read back; a refusal must not be an over-refusal (and
    none is allowed where ``exact``)."""
    label = f"{op}({', '.join(map(str, args))})"
    try:
        res = getattr(A, op)(*args)
    except A.LayoutError as err:
        stats[f"{op} refused"] += 1
        msg = str(err)
        if exact:
            fails.append(f"{label}: refused where the exact answer exists: {msg[:200]}")
        elif (why := _over_refused(label, msg, check)) is not None:
            fails.append(why)
        return None
    except Exception as err:  # noqa: BLE001 - a crash is a finding
        stats[f"{op} crashed"] += 1
        fails.append(f"{label}: crashed {type(err).__name__}: {err}")
        return None
    stats[f"{op} answered"] += 1
    why = check(res) or fb.reads_back(res)
    if why is not None:
        fails.append(f"{label} = {res}: {why}")
    return res


def check_nullspace(x: A.Layout, r: Any) -> str | None:
    """``L(R(i)) == 0`` for every i, R injective; and R holds every coordinate of a broadcast (zero-stride) leaf."""
    if not isinstance(r, A.Layout):
        return f"not a layout: {r}"
    n = fb.size_of(x)
    pts = [fb.value(r, i) for i in range(fb.size_of(r))]
    if len(set(pts)) != len(pts) or any(p is None or not 0 <= p < n for p in pts):
        return f"R is not injective into L's domain: {pts[:16]}"
    if (bad := next((p for p in pts if fb.value(x, p) != 0), None)) is not None:
        return f"L(R) = L({bad}) = {fb.value(x, bad)} != 0"
    zeros = 1
    for s, d in fb._leaves(x.shape, x.stride):
        if int(d) == 0:
            zeros *= s
    if len(pts) < zeros:
        return f"size(R) = {len(pts)}, but the broadcast leaves hold {zeros} coordinates"
    return None


def check_int_complement(x: A.Layout, cot: int | None, r: Any) -> str | None:
    """CuTe's header above ``complement``, in its integer arithmetic: ``size(R) >= cosize_hi / size(filter(L))``
    (floor division; the default cotarget is ``cosize(filter(L))``), R ordered, ``R(i) != L(j)`` for i >= 1, and the
    combined layout ``(L, R)`` injective."""
    if not isinstance(r, A.Layout):
        return f"a complement that is not a layout: {r}"
    fl = A.filter(x)
    want = A.cosize(fl) if cot is None else cot
    rv = [fb.value(r, i) for i in range(fb.size_of(r))]
    if len(rv) < want // fb.size_of(fl):
        return f"size(R) = {len(rv)} < {want} // size(filter(L)) = {want} // {fb.size_of(fl)}"
    if any(rv[i - 1] >= rv[i] for i in range(1, len(rv))):
        return f"R is not ordered: {rv[:16]}"
    ims = set(fb.table(x))
    if any(v in ims for v in rv[1:]):
        return f"R meets L's image at {next(v for v in rv[1:] if v in ims)}"
    if len({a + b for a in ims for b in rv}) != len(ims) * len(rv):
        return "the combined layout (L, R) is not injective"
    return None


def check_add(a: Any, b: Any, r: Any) -> str | None:
    n = fb.size_of(a)
    if fb.size_of(r) != n:
        return f"size(R) = {fb.size_of(r)} != {n}"
    xor = fb._has_f2(getattr(a, "stride", 0)) or fb._has_f2(getattr(b, "stride", 0)) or isinstance(
        a, A.ComposedLayout) or isinstance(b, A.ComposedLayout)
    for i in range(n):
        u, v = fb.value(a, i), fb.value(b, i)
        want = (u ^ v) if xor and fb._has_f2(getattr(r, "stride", 0)) else u + v
        if fb.value(r, i) != want:
            return f"R({i}) = {fb.value(r, i)}, A({i}) + B({i}) = {u} + {v}"
    return None


def check_gcd(a: Any, b: Any, r: Any) -> str | None:
    """depth 1, size divides gcd(size(A), size(B)), each mode s:d inside one leaf of each shape, symmetric."""
    if it.depth(r.shape) > 1:
        return "depth > 1"
    na, nb = it.product(a.shape), it.product(b.shape)
    if math.gcd(na, nb) % it.product(r.shape):
        return f"size(R) = {it.product(r.shape)} does not divide gcd({na}, {nb})"
    other = A.greatest_common_domain(b, a)
    if other != r:
        return f"not symmetric: gcd(B, A) = {other}"

    def spans(x: Any) -> list:
        out, start = [], 1
        for s in it.flatten(x.shape):
            if s > 1:
                out.append((start, start * s))
                start *= s
        return out

    sa, sb = spans(a), spans(b)

    def inside(s: int, d: int, sp: list) -> bool:
        return any(d % lo == 0 and hi % (d * s) == 0 for lo, hi in sp)

    modes = [(s, d) for s, d in zip(it.wrap(r.shape), it.wrap(r.stride), strict=True) if s > 1]
    for s, d in modes:
        if not (inside(s, d, sa) and inside(s, d, sb)):
            return f"mode {s}:{d} is not inside one leaf of each shape"
    return None


def hunt(seed: int, n: int, stats: Counter, fails: list) -> None:
    rng = random.Random(seed)
    for _ in range(n):
        _one(rng, stats, fails)


def _one(rng: random.Random, stats: Counter, fails: list) -> None:
    sw = wide_swizzle(rng)
    lay = carry_free(rng)
    x = A.ComposedLayout(sw, 0, lay)
    try:
        f = A.as_f2_layout(x)
    except A.LayoutError as err:
        fails.append(f"as_f2_layout({x}) refused: {err}")
        return
    stats["as_f2_layout"] += 1
    if (why := fb.reads_back(f)) or any(fb.value(f, i) != fb.value(x, i) for i in range(fb.size_of(x))):
        fails.append(f"as_f2_layout({x}) = {f}: {why or 'not the same offsets'}")
    for subj, exact in ((x, False), (f, True)):
        run(stats, fails, "right_inverse", (subj,), lambda r, s=subj: fb.check_right_inverse(s, r), exact)
        run(stats, fails, "left_inverse", (subj,), lambda r, s=subj: fb.check_left_inverse(s, r), exact)
        b = fb.random_b(rng, subj) if rng.random() < 0.5 else plain(rng)
        run(stats, fails, "composition", (subj, b), lambda r, s=subj, b=b: fb.check_composition(s, b, r))
    top = max(fb.value(f, j) for j in range(fb.size_of(f))) + 1
    p2 = 1 << (top - 1).bit_length()
    cot = rng.choice((None, p2, 2 * p2, rng.randint(1, 2 * top)))
    args = (f,) if cot is None else (f, cot)
    inj = fb._refusal_is_wrong("complement", f, "")
    run(stats, fails, "complement", args, lambda r, c=cot: fb.check_complement(f, c, r), inj)
    outer = compact_perm(rng) if rng.random() < 0.5 else A.Layout(p2, rng.choice((1, 2, 3)))
    run(stats, fails, "composition", (outer, f), lambda r, o=outer: fb.check_composition(o, f, r))
    run(stats, fails, "composition", (outer, x), lambda r, o=outer: fb.check_composition(o, x, r))
    run(stats, fails, "nullspace", (f,), lambda r: check_nullspace(f, r))
    # layout_add of two swizzled tiles (their F2 forms) of the same size, and of the tile with itself
    g = A.as_f2_layout(A.ComposedLayout(wide_swizzle(rng), 0, lay))
    run(stats, fails, "layout_add", (f, g), lambda r, g=g: check_add(f, g, r))
    # plain layouts
    p, q = plain(rng), plain(rng)
    run(stats, fails, "left_inverse", (p,), lambda r: fb.check_left_inverse(p, r))
    run(stats, fails, "right_inverse", (p,), lambda r: fb.check_right_inverse(p, r))
    pc = rng.choice((None, rng.randint(1, 4 * (max(fb.table(p)) + 1))))
    run(stats, fails, "complement", (p,) if pc is None else (p, pc), lambda r: check_int_complement(p, pc, r))
    run(stats, fails, "composition", (p, q), lambda r: fb.check_composition(p, q, r))
    run(stats, fails, "nullspace", (p,), lambda r: check_nullspace(p, r))
    r2 = compact_perm(rng)
    p3 = A.Layout(r2.shape, tuple(rng.choice((0, 1, 2, 5, -3)) for _ in it.wrap(r2.shape))) if type(
        r2.shape) is tuple and all(type(s) is int for s in r2.shape) else r2
    run(stats, fails, "greatest_common_domain", (r2, p3), lambda r: check_gcd(r2, p3, r))
    run(stats, fails, "layout_add", (r2, p3), lambda r: check_add(r2, p3, r))
    other = compact_perm(rng)
    run(stats, fails, "greatest_common_domain", (r2, other), lambda r: check_gcd(r2, other, r))
    if fb.size_of(other) == fb.size_of(r2):
        run(stats, fails, "layout_add", (r2, other), lambda r: check_add(r2, other, r))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="17020-17029")
    ap.add_argument("--n", type=int, default=200)
    a = ap.parse_args(argv)
    lo, hi = map(int, a.seeds.split("-"))
    stats: Counter = Counter()
    fails: list[str] = []
    for seed in range(lo, hi + 1):
        hunt(seed, a.n, stats, fails)
    for k in sorted(stats):
        print(f"{k:36s} {stats[k]:6d}")
    print(f"failures: {len(fails)}")
    for f in fails[:60]:
        print(" ", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
