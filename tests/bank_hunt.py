"""Fresh-input checks of the shared-memory bank model, the banks lab and the layout doctor against a brute-force
model written here from the definition (32 banks of 4 bytes; a warp's request split into phases of 32, 16 or 8
lanes for accesses of <= 4, 8 or 16 bytes, one phase per 8x8 matrix of ldmatrix; a phase costs the largest number
of distinct 4-byte words in one bank, at least 1). Each ``check_*(rng)`` draws one case and returns its problems
(an empty list when ours agrees). ``python tests/bank_hunt.py 9400 9600 10`` runs them all on those seeds."""

from __future__ import annotations

import random
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

from algebra import LayoutError
from algebra.doctor.solver import solve
from algebra.hw import banks as B
from algebra.hw.bank_access import bank_access
from algebra.hw.bankfix import best_swizzle_fix, padding_fix

PER = {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}


def cost(addrs: list[int], ab: int, per: int) -> list[int]:
    """Wavefronts per phase of ``per`` lanes, each lane touching ``ab`` bytes from its address."""
    out = []
    for p in range(0, len(addrs), per):
        words = {a // 4 + k for a in addrs[p:p + per] for k in range(max(1, ab // 4))}
        out.append(max(Counter(w % 32 for w in words).values(), default=1))
    return out


def _flat(t: Any) -> list[int]:
    return [y for x in t for y in _flat(x)] if isinstance(t, tuple) else [t]


def _ev(shape: Any, stride: Any, i: int) -> int:
    o = 0
    for n, d in zip(_flat(shape), _flat(stride), strict=True):
        o, i = o + (i % n) * d, i // n
    return o


def _text(t: Any) -> str:
    return "(" + ",".join(_text(x) for x in t) + ")" if isinstance(t, tuple) else str(t)


def swizzle(b: int, m: int, s: int) -> Callable[[int], int]:
    ym = ((1 << b) - 1) << (m + max(0, s))
    return lambda x: x ^ ((x & ym) >> s if s >= 0 else (x & ym) << -s)


def check_analyze(rng: random.Random) -> list[tuple]:
    """banks.analyze and analyze_ldmatrix on random addresses (broadcasts too, part warps); misaligned refused."""
    ab, n = rng.choice((1, 2, 4, 8, 16)), rng.choice((1, 2, 7, 8, 16, 31, 32, 32, 32))
    span = rng.choice((128, 512, 4096, 1 << 16))
    addrs = [ab * rng.randrange(span // ab) for _ in range(n)]
    if rng.random() < 0.3:
        addrs = [rng.choice(addrs[:3]) if rng.random() < 0.5 else a for a in addrs]
    bad: list[tuple] = []
    r, want = B.analyze(addrs, ab), cost(addrs, ab, PER[ab])
    if r.phases != want or r.wavefronts != sum(want) or r.banks != [(a // 4) % 32 for a in addrs]:
        bad.append(("analyze", addrs, ab, r.phases, want))
    if ab > 1:
        mis = list(addrs)
        mis[rng.randrange(n)] += rng.randrange(1, ab)
        try:
            B.analyze(mis, ab)
            bad.append(("misaligned accepted", mis, ab))
        except LayoutError:
            pass
    num = rng.choice((1, 2, 4))
    rows = [16 * rng.randrange(span // 16) for _ in range(8 * num)]
    if B.analyze_ldmatrix(rows, num).phases != cost(rows, 16, 8):
        bad.append(("ldmatrix", rows, num))
    return bad


def tile(rng: random.Random) -> tuple[int, Any, Any, int, int, int | None]:
    """(element bytes, shape, stride, rows, cols, padded mode): row- or column-major (padded or not), rank 3, a
    nested row mode; at most 4096 elements."""
    eb = rng.choice((1, 2, 2, 4, 4, 8, 16))
    while True:
        R, C = 1 << rng.randint(2, 7), 1 << rng.randint(1, 7)
        if R * C <= 4096:
            break
    k, p = rng.randrange(4), rng.choice((0, 0, 0, 1, 2, 4, 8))
    if k == 0:
        return eb, (R, C), (C + p, 1), R, C, 0
    if k == 1:
        return eb, (R, C), (1, R + p), R, C, 1
    if k == 2 and C >= 4:
        return eb, (R, C // 2, 2), (C, 1, C // 2), R, C, None
    r1 = 2 if R >= 4 else 1
    return eb, ((r1, R // r1), C), ((C, r1 * C), 1), R, C, None


def _accesses(rng: random.Random, R: int, C: int, eb: int) -> list[dict]:
    out: list[dict] = []
    for _ in range(rng.randint(1, 3)):
        k = rng.randrange(4)
        if k == 0:
            vs = [v for v in (1, 2, 4, 8, 16) if v * eb <= 16 and v <= C]
            out.append({"kind": "row", "index": rng.randrange(R), "vector": rng.choice(vs)})
        elif k == 1:
            out.append({"kind": "column", "index": rng.randrange(C)})
        elif k == 2 and 16 // eb <= C:
            per = max(1, 16 // eb)
            nums = [n for n in (1, 2, 4) if 8 * (1 + (n > 1)) <= R and per * (1 + (n > 2)) <= C]
            if nums:
                n = rng.choice(nums)
                c0 = per * rng.randrange((C - per * (1 + (n > 2))) // per + 1)
                out.append({"kind": "ldmatrix", "index": [rng.randrange(R - 8 * (1 + (n > 1)) + 1), c0], "num": n})
        else:
            out.append({"kind": "offsets", "offsets": [[rng.randrange(R), rng.randrange(C)]
                                                       for _ in range(rng.randint(1, 32))]})
    return out or [{"kind": "column", "index": 0}]


def _lanes(a: dict, R: int, C: int, eb: int) -> tuple[list[tuple[int, int]], int, int, int]:
    """(lane (row, col) list, vector, access bytes, lanes per phase), as the doctor's conventions define them."""
    if a["kind"] == "row":
        v = a.get("vector", 1)
        return [(a["index"], t * v) for t in range(min(32, C // v))], v, v * eb, PER[v * eb]
    if a["kind"] == "column":
        return [(t, a["index"]) for t in range(min(32, R))], 1, eb, PER[eb]
    if a["kind"] == "ldmatrix":
        per, (r0, c0) = max(1, 16 // eb), a["index"]
        return [(r0 + 8 * (m % 2) + i, c0 + (m // 2) * per) for m in range(a["num"]) for i in range(8)], per, 16, 8
    return [tuple(x) for x in a["offsets"]], 1, eb, PER[eb]


def _totals(place: Callable[[int, int], int], accs: list[dict], R: int, C: int, eb: int) -> list[int] | None:
    """Wavefronts of each access under ``place``, or None when some lane's vector is not contiguous and aligned."""
    out = []
    for a in accs:
        lanes, v, ab, per = _lanes(a, R, C, eb)
        offs = [place(r, c) for r, c in lanes]
        if any(o % v or any(place(r, c + k) != o + k for k in range(1, v)) for o, (r, c) in zip(offs, lanes,
                                                                                            strict=True)):
            return None
        out.append(sum(cost([o * eb for o in offs], ab, per)))
    return out


def _placement(c: dict, f: Callable[[int, int], int], shape: Any, stride: Any, R: int, lead: int | None):
    if c["kind"] == "swizzle":
        g = swizzle(*map(int, c["swizzle"][3:-1].split(",")))
        return lambda r, cc: g(f(r, cc))
    if c["kind"] == "padding":
        st = list(stride)
        st[lead] += c["pad"]
        return lambda r, cc: _ev(shape, tuple(st), r + R * cc)
    if c["kind"] == "xor":  # source bit j of the offset XORs its mask in
        cols = {int(j): m for j, m in c["xor"].items()}

        def place(r: int, cc: int) -> int:
            x = f(r, cc)
            return x ^ _xor_of(x, cols)
        return place
    return f


def _xor_of(x: int, cols: dict[int, int]) -> int:
    out = 0
    for j, m in cols.items():
        if (x >> j) & 1:
            out ^= m
    return out


def check_doctor(rng: random.Random) -> list[tuple]:
    """solve(): every candidate's wavefronts, bijection and footprint as claimed; the best never beaten by a
    brute-force search over every Sw<B,M,S> of the offset bits and every padding up to 128 bytes."""
    eb, shape, stride, R, C, lead = tile(rng)
    accs = _accesses(rng, R, C, eb)
    lay = f"{_text(shape)}:{_text(stride)}"

    def f(r: int, c: int) -> int:
        return _ev(shape, stride, r + R * c)
    naive = _totals(f, accs, R, C, eb)
    try:
        out = solve(eb, lay, accs)
    except LayoutError as e:
        split = "not contiguous" in str(e) or "consecutive offsets" in str(e)  # a vector the tile splits, named
        return [] if naive is None and split else [("refused", lay, eb, accs, str(e))]
    if naive is None:
        return [("a broken vector solved", lay, eb, accs)]
    bad: list[tuple] = []
    if out["naive"]["wavefronts"] != naive:
        bad.append(("naive", lay, eb, accs, out["naive"]["wavefronts"], naive))
    for c in out["candidates"]:
        place = _placement(c, f, shape, stride, R, lead)
        if _totals(place, accs, R, C, eb) != c["wavefronts"]:
            bad.append(("candidate", lay, eb, accs, c["layout"], c["wavefronts"]))
        cells = {place(r, cc) for r in range(R) for cc in range(C)}
        if len(cells) != R * C or c["footprint_bytes"] != (max(cells) + 1) * eb:
            bad.append(("footprint or bijection", lay, eb, c["layout"]))
    n = max(f(r, c) for r in range(R) for c in range(C)).bit_length()
    brute = [sum(naive)]
    for m in range(n):
        for s in range(1, n - m):
            for b in range(1, min(s, n - m - s) + 1):
                g = swizzle(b, m, s)
                t = _totals(lambda r, cc, g=g: g(f(r, cc)), accs, R, C, eb)
                brute += [sum(t)] if t is not None else []
    for p in range(1, 128 // eb + 1) if lead is not None else ():
        st = list(stride)
        st[lead] += p
        t = _totals(lambda r, cc, st=tuple(st): _ev(shape, st, r + R * cc), accs, R, C, eb)
        brute += [sum(t)] if t is not None else []
    if min(brute) < out["candidates"][0]["total"] or min(brute) < out["ideal"]:
        bad.append(("beaten", lay, eb, accs, out["candidates"][0]["layout"], min(brute), out["ideal"]))
    return bad


def check_bank_access(rng: random.Random) -> list[tuple]:
    """bank_access (the banks lab): row / column / ldmatrix through a random swizzle (negative shifts too)."""
    eb, shape, stride, R, C, _ = tile(rng)

    def f(r: int, c: int) -> int:
        return _ev(shape, stride, r + R * c)
    n = max(f(r, c) for r in range(R) for c in range(C)).bit_length()
    swz, g = None, (lambda x: x)
    if rng.random() < 0.7 and n >= 2:
        b = rng.randint(1, 3)
        swz = (b, rng.randint(0, n - 2), rng.choice([1, -1]) * rng.randint(b, b + 2))
        g = swizzle(*swz)
    k, v = rng.randrange(3), 1
    if k == 0:
        v, i = rng.choice([v for v in (1, 2, 4, 8, 16) if v * eb <= 16 and v <= C]), rng.randrange(R)
        acc: dict = {"kind": "row", "index": i, "vector": v}
        cells = [[(i, t * v + q) for q in range(v)] for t in range(min(32, C // v))]
    elif k == 1:
        j = rng.randrange(C)
        acc, cells = {"kind": "column", "index": j}, [[(t, j)] for t in range(min(32, R))]
    else:
        v = 16 // eb
        nums = [q for q in (1, 2, 4) if 8 * (1 + (q > 1)) <= R and v * (1 + (q > 2)) <= C]
        if not nums:
            return []
        num = rng.choice(nums)
        r0, c0 = rng.randrange(R - 8 * (1 + (num > 1)) + 1), rng.randrange(C - v * (1 + (num > 2)) + 1)
        acc = {"kind": "ldmatrix", "num": num, "row": r0, "col": c0}
        cells = [[(r0 + 8 * (m % 2) + i, c0 + (m // 2) * v + q) for q in range(v)]
                 for m in range(num) for i in range(8)]
    offs = [[g(f(r, c)) for r, c in cl] for cl in cells]
    align = 16 if k == 2 else v * eb
    ok = all(o == [o[0] + q for q in range(len(o))] and (o[0] * eb) % align == 0 for o in offs)
    lay = f"{_text(shape)}:{_text(stride)}"
    try:
        r = bank_access(lay, eb, acc, swizzle=swz)
    except LayoutError as e:
        return [] if not ok else [("bank_access refused", lay, eb, acc, swz, str(e))]
    addrs = [eb * o[0] for o in offs]
    ab = 16 if k == 2 else v * eb
    if not ok or (r.byte_addresses, r.phases) != (addrs, cost(addrs, ab, 8 if k == 2 else PER[ab])):
        return [("bank_access", lay, eb, acc, swz, ok)]
    return []


def check_bankfix(rng: random.Random) -> list[tuple]:
    """The banks lab's fixes: best_swizzle_fix is conflict-free and maps the tile onto itself, and finds one where
    any Sw<B,M,S> of the offset bits is one; padding_fix is the smallest padding (up to 128 bytes) that works."""
    eb, shape, stride, R, C, lead = tile(rng)
    if rng.random() < 0.5:
        shape, stride, lead = (R, C), (C, 1), 0
    if rng.randrange(2):
        v, i = rng.choice([v for v in (1, 2, 4, 8, 16) if v * eb <= 16 and v <= C]), rng.randrange(R)
        acc: dict = {"kind": "row", "index": i, "vector": v}
        cells = [[(i, t * v + q) for q in range(v)] for t in range(min(32, C // v))]
    else:
        v, j = 1, rng.randrange(C)
        acc, cells = {"kind": "column", "index": j}, [[(t, j)] for t in range(min(32, R))]

    def ways(place: Callable[[int, int], int]) -> int | None:
        offs = [[place(r, c) for r, c in cl] for cl in cells]
        if any(o != [o[0] + q for q in range(len(o))] or o[0] % len(o) for o in offs):
            return None
        return max(cost([eb * o[0] for o in offs], v * eb, PER[v * eb]))

    def f(r: int, c: int) -> int:
        return _ev(shape, stride, r + R * c)
    base, lay = ways(f), f"{_text(shape)}:{_text(stride)}"
    if base is None:
        return []
    bad: list[tuple] = []
    offsets = {f(r, c) for r in range(R) for c in range(C)}
    n = max(offsets).bit_length()
    try:
        fx = best_swizzle_fix(lay, eb, acc)
    except LayoutError:  # a cap of the search, named
        fx = False
    works = [(b, m, s) for m in range(n) for s in range(1, n - m) for b in range(1, min(s, n - m - s) + 1)
             if {swizzle(b, m, s)(o) for o in offsets} == offsets
             and ways(lambda r, c, g=swizzle(b, m, s): g(f(r, c))) == 1]
    if fx is None and base > 1 and works:
        bad.append(("swizzle fix missed", lay, eb, acc, works[:4]))
    if fx:
        g = swizzle(*fx.swizzle)
        if {g(o) for o in offsets} != offsets or ways(lambda r, c: g(f(r, c))) != 1:
            bad.append(("swizzle fix not conflict-free", lay, eb, acc, fx.swizzle))
    if lead is not None and len(shape) == 2:
        px = padding_fix(lay, eb, acc)
        pads = []
        for p in range(128 // eb + 1):
            st = list(stride)
            st[lead] += p
            if ways(lambda r, c, st=tuple(st): _ev(shape, st, r + R * c)) == 1:
                pads.append(p)
        if (None if px is None else px.padding) != (pads[0] if pads else None):
            bad.append(("padding fix", lay, eb, acc, None if px is None else px.padding, pads[:4]))
    return bad


CHECKS = (check_analyze, check_doctor, check_bank_access, check_bankfix)


def run(seed: int, per: int) -> Counter:
    """Every check ``per`` times on ``random.Random(seed)``: a Counter of cases and problems (printed)."""
    rng, cnt = random.Random(seed), Counter()
    for _ in range(per):
        for check in CHECKS:
            cnt[check.__name__] += 1
            for p in check(rng):
                cnt[f"{check.__name__}: {p[0]}"] += 1
                print("PROBLEM", seed, p)
    return cnt


if __name__ == "__main__":
    lo, hi, per = (int(x) for x in sys.argv[1:4])
    total: Counter = Counter()
    for s in range(lo, hi):
        total += run(s, per)
    print(dict(total))
