"""Fresh drills graded through the function the HTTP route calls (``service.grade_answer``): the key, its other
spellings (``drill_forms.accepted``) and readable wrong answers (``drill_forms.rejected``), and where the drill's
data allow, answers computed here without the algebra (CuTe shape:stride evaluated by hand, a bank model, swizzles
and descriptors by their bits) that must be right, beside near misses that must be wrong.
``python tests/drill_hunt.py 9400 9600 2`` runs every kind twice on each seed."""

from __future__ import annotations

import ast
import json
import random
import re
import sys
from collections import Counter, defaultdict
from typing import Any

from drill_forms import accepted, rejected

from app.drills import service
from app.drills.core import generate, kinds


def _tree(s: str) -> Any:
    s = s.strip()
    return ast.literal_eval(s.replace("(", "[").replace(")", "]")) if s.startswith("(") else int(s)


def lay(text: str) -> tuple[Any, Any]:
    """CuTe shape:stride as nested lists."""
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if ch == ":" and depth == 0:
            return _tree(text[:i]), _tree(text[i + 1:])
    raise ValueError(text)


def flat(t: Any) -> list[int]:
    return [y for x in t for y in flat(x)] if isinstance(t, list) else [t]


def size(t: Any) -> int:
    n = 1
    for x in flat(t):
        n *= x
    return n


def at1(shape: Any, stride: Any, i: int) -> int:
    """The offset of 1-D coordinate i (colexicographic)."""
    o = 0
    for s, d in zip(flat(shape), flat(stride), strict=True):
        o, i = o + (i % s) * d, i // s
    return o


def at(shape: Any, stride: Any, c: Any) -> int:
    """c: an int (1-D into this mode) or a list (one entry per mode)."""
    if isinstance(c, int):
        return at1(shape, stride, c)
    return sum(at(s, d, x) for s, d, x in zip(shape, stride, c, strict=True))


def natural(shape: Any, i: int) -> Any:
    if isinstance(shape, int):
        return i
    out = []
    for s in shape:
        out.append(natural(s, i % size(s)))
        i //= size(s)
    return out


def ntext(c: Any) -> str:
    return "(" + ",".join(ntext(x) for x in c) + ")" if isinstance(c, list) else str(c)


def _depth(t: Any) -> int:
    return 1 + max(_depth(x) for x in t) if isinstance(t, list) else 0


def sw(x: int, b: int, m: int, s: int) -> int:
    ym = ((1 << b) - 1) << (m + max(0, s))
    return x ^ ((x & ym) >> s if s >= 0 else (x & ym) << -s)


def cost(addrs: list[int], ab: int, per: int) -> list[int]:
    out = []
    for p in range(0, len(addrs), per):
        words = {a // 4 + k for a in addrs[p:p + per] for k in range(max(1, ab // 4))}
        out.append(max(Counter(w % 32 for w in words).values(), default=1))
    return out


def _nums(ans: list[int]) -> tuple[list[str], list[str]]:
    """The list as the key writes it, and up to three one-number misses."""
    wrong = []
    for i in range(min(3, len(ans))):
        a = list(ans)
        a[i] += 1
        wrong.append(", ".join(map(str, a)))
    return [", ".join(map(str, ans))], wrong


Answers = tuple[list[str], list[str]] | None


def _layouts(d: Any, x: dict, v: str) -> Answers:
    k = d.kind
    if k == "layout_stats":
        S, D = lay(x["layout"])
        offs = [at1(S, D, i) for i in range(size(S))]
        return _nums([size(S), max(offs) + 1, len(S) if isinstance(S, list) else 1, _depth(S)])
    if k == "offsets":
        S, D = lay(x["layout"])
        if v == "coords":
            return _nums([at(S, D, c) for c in x["coords"]])
        rows = [[at(S, D, [i, j]) for j in range(size(S[1]))] for i in range(size(S[0]))]
        return ["\n".join(" ".join(map(str, r)) for r in rows)], []
    if k == "natural_coord":
        if v == "flat":
            return [ntext([natural(s, c) for s, c in zip(x["shape"], x["coord"], strict=True)])], []
        if v == "idx":
            return [ntext(natural(x["shape"], x["x"]))], []
        if v == "mapping":
            s = x["shape"][x["mode"]]
            return [" ".join(ntext(natural(s, n)) for n in range(size(s)))], []
        S, D = lay(x["layout"])
        o = at1(S, D, x["x"])
        if v == "offset":
            return [str(o)], [str(o + 1)]
        if v == "three" and len(S) == 2:
            i, n0 = x["x"], size(S[0])
            return [f"{ntext([i % n0, i // n0])} {ntext(natural(S, i))} {o}"], []
    if k == "index_formula":
        _, D = lay(x["layout"])
        terms = [f"{nm}*{st}" for nm, st in zip(x["names"], flat(D), strict=True)]
        return [" + ".join(terms)], [" + ".join(f"{nm}*{st + 1}" for nm, st in zip(x["names"], flat(D),
                                                                                   strict=True))]
    if k == "majorness":
        S, D = lay(x["layout"])
        M, N = size(S[0]), size(S[1])
        m = [[at(S, D, [i, j]) for j in range(N)] for i in range(M)]
        row = all(m[i][j] == m[i][0] + j for i in range(M) for j in range(N)) and (M == 1 or (all(
            m[i + 1][0] - m[i][0] == m[1][0] - m[0][0] for i in range(M - 1)) and m[1][0] - m[0][0] >= N))
        col = all(m[i][j] == m[0][j] + i for i in range(M) for j in range(N)) and (N == 1 or (all(
            m[0][j + 1] - m[0][j] == m[0][1] - m[0][0] for j in range(N - 1)) and m[0][1] - m[0][0] >= M))
        if row and col:
            return None
        key = "row" if row else "column" if col else "neither"
        return [key], [w for w in ("row", "column", "neither") if w != key]
    return None


def _views(d: Any, x: dict, v: str) -> Answers:
    k = d.kind
    if k == "transpose_view":
        S, D = lay(x["matrix"])
        if v == "prove":
            a, b = x["coord"]
            o = a * D[0] + b * D[1]  # T(b, a) by T's strides (D[1], D[0]) is the same element
            return [f"{o}, {b * D[1] + a * D[0]}"], ([f"{o}, {a * D[1] + b * D[0]}"] if a != b and D[0] != D[1]
                                                    else [])
        return [f"({S[1]},{S[0]}):({D[1]},{D[0]})"], ([f"({S[1]},{S[0]}):({D[0]},{D[1]})"] if D[0] != D[1] else [])
    if k == "tiled_view":
        S, D = lay(x["matrix"])
        tm, tn = x["tile"]
        if v == "layout":
            return [f"(({tm},{tn}),({S[0] // tm},{S[1] // tn})):(({D[0]},{D[1]}),({tm * D[0]},{tn * D[1]}))"], []
        if v == "spot":
            return _nums([(ti * tm + i) * D[0] + (tj * tn + j) * D[1] for (i, j), (ti, tj) in x["picks"]])
        return ([f"{D[0]}*i + {D[1]}*j + {tm * D[0]}*ti + {tn * D[1]}*tj"],
                [f"{D[0]}*i + {D[1]}*j + {tm * D[0] + 1}*ti + {tn * D[1]}*tj"])
    if k == "design_view":
        S, _ = lay(x["matrix"])
        M, N = S
        if x["view"] == "transpose":
            return [f"({N},{M}):({M},1)"], [f"({N},{M}):(1,{M})"]
        rs, cs = {"cols2": (1, 2), "rows2": (2, 1), "cols4": (1, 4), "both2": (2, 2)}[x["view"]]
        return [f"({M // rs},{N // cs}):({rs},{cs * M})"], [f"({M // rs},{N // cs}):({rs},{cs * M + 1})"]
    if k == "algebra_op" and x["op"] in ("composition", "coalesce") and all(isinstance(a, str) and ":" in a
                                                                              for a in x["args"]):
        key = lay(d.expected)
        SA, DA = lay(x["args"][0])
        if x["op"] == "coalesce":
            ok = size(key[0]) == size(SA) and all(at1(*key, i) == at1(SA, DA, i) for i in range(size(SA)))
        else:  # A as written, its last mode extended past size(A)
            SB, DB = lay(x["args"][1])
            fs, fd = flat(SA), flat(DA)

            def a_ext(i: int) -> int:
                o = 0
                for n, (s, dd) in enumerate(zip(fs, fd, strict=True)):
                    c, i = (i, 0) if n == len(fs) - 1 else (i % s, i // s)
                    o += c * dd
                return o
            ok = size(key[0]) == size(SB) and all(at1(*key, i) == a_ext(at1(SB, DB, i)) for i in range(size(SB)))
        return ([d.expected] if ok else ["the key is not the function"]), []
    return None


def _hardware(d: Any, x: dict, v: str) -> Answers:
    k = d.kind
    if k == "banks":
        S, D = lay(x["layout"])
        if v in ("banks", "distinct", "ways", "formula", "swizzled"):
            j, swz = x["col"], x.get("swizzle")

            def off(i: int) -> int:
                return sw(i * D[0] + j * D[1], *swz) if swz else i * D[0] + j * D[1]
            if v in ("banks", "swizzled"):
                return _nums([off(i) % 32 for i in x["lanes"]])
            per_bank = Counter(off(i) % 32 for i in range(32))  # 32 rows: 32 distinct words
            n = len(per_bank) if v == "distinct" else max(per_bank.values())
            if v == "formula":
                return [f"({D[0]}*r + {j}) mod 32"], [f"({D[0] + 1}*r + {j}) mod 32"]
            return [str(n)], [str(n + 1)]
        if v == "ldmatrix_ways":
            eb, a = x["ebytes"], x["access"]
            n = cost([eb * ((a["row"] + i) * D[0] + a["col"] * D[1]) for i in range(8)], 16, 8)[0]
            return [str(n)], [str(n + 1)]
        from test_drills_fresh import _conflict_free  # the fix drills' own brute force

        right, wrong = [], []
        for b in (1, 2, 3, 4, 5):
            for m in (0, 1, 2, 3):
                for s in range(b, b + 3):
                    (right if _conflict_free(d, S[1], (b, m, s)) else wrong).append(f"Sw<{b},{m},{s}>")
        for p in range(12):
            (right if _conflict_free(d, S[1] + p, None) else wrong).append(f"pad {p}")
        return right, wrong
    if k == "swizzle":
        if v == "apply":
            return _nums([sw(z, *x["swizzle"]) for z in x["xs"]])
        m = re.match(r"Sw<(-?\d+),(-?\d+),(-?\d+)>\s*o\s*(?:0\s*o\s*)?(.*)$", x["layout"])
        swz, (S, D) = tuple(int(m.group(i)) for i in (1, 2, 3)), lay(m.group(4))
        if v == "composed":
            return _nums([sw(at(S, D, c), *swz) for c in x["coords"]])
        hits = [(i, j) for i in range(size(S[0])) for j in range(size(S[1]))
                if sw(at(S, D, [i, j]), *swz) == x["offset"]]
        return ([f"({i},{j})" for i, j in hits], [f"({i},{j + 1})" for i, j in hits[:1]]) if len(hits) == 1 else None
    if k == "arith" and v == "basis":
        idx = flat([natural(s, c) if isinstance(c, int) else c for s, c in zip(x["shape"], x["coord"], strict=True)])
        out: dict[int, int] = defaultdict(int)
        for c, (val, dim) in zip(idx, x["basis"], strict=True):
            out[dim] += c * val
        ans = [out[i] for i in range(max(dim for _, dim in x["basis"]) + 1)]
        return [ntext(ans)], [ntext([ans[0] + 1] + ans[1:])]
    if k == "tmem_lanes":
        q = 32 * (x["warp"] % 4)
        if "32dp" in x["atom"]:
            return [f"{q}-{q + 31}"], [f"{q}-{q + 15}", f"{(q + 32) % 128}-{(q + 32) % 128 + 31}"]
        lo = q + x["lane_offset"]
        other = lo + 16 if lo % 32 == 0 else lo - 16
        return [f"{lo}-{lo + 15}"], [f"{other}-{other + 15}", f"{q}-{q + 31}"]
    if k == "umma_desc":
        dsc = int(x["descriptor"], 16)
        t = {0: "SWIZZLE_NONE", 1: "SWIZZLE_128B_BASE32B", 2: "SWIZZLE_128B", 4: "SWIZZLE_64B",
             6: "SWIZZLE_32B"}[dsc >> 61]
        lbo, sbo = 16 * ((dsc >> 16) & 0x3FFF), 16 * ((dsc >> 32) & 0x3FFF)
        return [f"{t}, LBO={lbo}, SBO={sbo}"], [f"{t}, LBO={lbo + 16}, SBO={sbo}", f"{t}, LBO={lbo}, SBO={sbo + 16}"]
    return None


def _threads(d: Any, x: dict, v: str) -> Answers:
    k = d.kind
    if k == "tv_layout" and v in ("mma_pos", "mma_owner", "copy"):
        S, D = lay(x["tv"])
        T = size(S[0])
        M = (x.get("tile") or x.get("tiler"))[0]
        if v == "mma_pos":
            i = at1(S, D, x["thread"] + T * x["value"])
            return [f"({i % M},{i // M})"], ([f"({i % M + 1},{i // M})"] if i % M + 1 < M else [])
        if v == "mma_owner":
            r, c = x["rc"]
            return [f"{t}, {u}" for t in range(T) for u in range(size(S[1])) if at1(S, D, t + T * u) == r + M * c], []
        idx = [at1(S, D, x["thread"] + T * u) for u in range(size(S[1]))]
        return [" ".join(f"({i % M},{i // M})" for i in idx)], []
    if k == "sectors":
        S, D = lay(x["tv"])
        T, eb = size(S[0]), x["element_bytes"]
        idx = {at1(S, D, t + T * u) for t in range(32) for u in range(x["vector"])}
        if x["memory"] is not None:
            MS, MD = lay(x["memory"])
            idx = {at(MS, MD, [i % size(MS[0]), i // size(MS[0])]) for i in idx}
        # (no memory layout: column-major, the index is the offset)
        byte_set = {eb * i + q for i in idx for q in range(eb)}
        sectors = {a // 32 for a in byte_set}
        u = f"{100 * len(byte_set) / (32 * len(sectors)):g}%"
        return [f"{len(sectors)}, {u}"], [f"{len(sectors) + 1}, {u}"]
    if k == "copy_coverage":
        S, D = lay(x["tv"])
        M, N = x["tiler"]
        hits = Counter(at1(S, D, i) for i in range(size(S)))

        def rc(i: int) -> str:
            return f"({i % M},{i // M})"
        dup = [i for i in range(M * N) if hits[i] > 1]
        hole = [i for i in range(M * N) if hits[i] == 0]
        once = [i for i in range(M * N) if hits[i] == 1]
        if not dup and not hole:
            return ["covers"], [f"duplicate {rc(0)}", f"hole {rc(0)}"]
        return ([f"duplicate {rc(i)}" for i in dup[:4]] + [f"hole {rc(i)}" for i in hole[:4]],
                ["covers"] + [f"duplicate {rc(i)}" for i in once[:2]] + [f"hole {rc(i)}" for i in once[:2]])
    return None


def independent(d: Any) -> Answers:
    """(answers that must grade right, answers that must grade wrong) computed here, or None for a drill whose key
    is not recomputed here."""
    x, v = json.loads(json.dumps(d.data)), d.variant.split("/")[0]
    for part in (_layouts, _views, _hardware, _threads):
        got = part(d, x, v)
        if got is not None:
            return got
    return None


def hunt(seed: int, per: int) -> Counter:
    """Every kind ``per`` times on drill seeds drawn from ``random.Random(seed)``: counts, problems printed."""
    rng, cnt = random.Random(seed), Counter()
    for kind in kinds():
        for _ in range(per):
            d = generate(kind.kind, rng.randrange(1, 2**31 - 1))
            right, wrong = [d.expected, *accepted(d)], list(rejected(d))
            mine = independent(d)
            if mine is not None:
                cnt["recomputed"] += 1
                right, wrong = right + mine[0], wrong + mine[1]
            cnt["drills"] += 1
            for text, want in [(t, True) for t in right] + [(t, False) for t in wrong]:
                cnt["submissions"] += 1
                _, verdict, _ = service.grade_answer(None, d.id, text)
                if verdict.correct != want:
                    cnt["wrong accepted" if not want else "right refused"] += 1
                    print("PROBLEM", d.id, repr(d.expected), repr(text), want, verdict.reason)
    return cnt


if __name__ == "__main__":
    lo, hi, n = (int(a) for a in sys.argv[1:4])
    total: Counter = Counter()
    for s in range(lo, hi):
        total += hunt(s, n)
    print(dict(total))
