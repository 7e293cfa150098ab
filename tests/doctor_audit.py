"""Fresh-seed audit of the banks lab, the layout doctor and Triton's layouts through their HTTP routes, each answer
recomputed here from the definitions (CONTRACT §3: 32 banks x 4 bytes; phases of 32 / 16 / 8 lanes for accesses of
<= 4, 8, 16 bytes; one phase per 8x8 matrix of ldmatrix / stmatrix; a phase costs the largest number of distinct
4-byte words in one bank, at least 1), with layouts and swizzles evaluated by a plain evaluator written here.

``python tests/doctor_audit.py banks 16500 16510 20`` runs 20 cases per seed on seeds 16500..16509; the sections are
``banks``, ``solve``, ``wide`` (the solver on column-major and non-power-of-two tiles, thread layouts read as
coordinates or offsets, strided lanes), ``compare`` (the banks lab's padded / swizzled comparison against every
Sw<B,M,S> and padding) and ``triton`` (Triton as the oracle: the oracle tests' draws on these seeds; needs
``pip install triton``; the count is the seed step there). Prints each problem and the counts."""

from __future__ import annotations

import os
import random
import re
import sys
import tempfile
from collections import Counter
from typing import Any

PER = {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}


def client() -> Any:
    os.environ.setdefault("LAYOUTLAB_ALLOWED_HOSTS", "testserver")
    os.environ["LAYOUTLAB_WARM"] = "0"
    os.environ.setdefault("LAYOUTLAB_DATA", tempfile.mkdtemp())
    from fastapi.testclient import TestClient

    from app.main import create_app
    return TestClient(create_app(), raise_server_exceptions=False)


def flat(t: Any) -> list[int]:
    return [y for x in t for y in flat(x)] if isinstance(t, tuple) else [t]


def evaluate(shape: Any, stride: Any, i: int) -> int:
    out = 0
    for n, d in zip(flat(shape), flat(stride), strict=True):
        out += (i % n) * d
        i //= n
    return out


def text(t: Any) -> str:
    return "(" + ",".join(text(x) for x in t) + ")" if isinstance(t, tuple) else str(t)


def sw(b: int, m: int, s: int, x: int) -> int:
    return x ^ ((x & (((1 << b) - 1) << (m + s))) >> s) if b else x


def cost(lanes: list[int], width: int, per: int) -> list[int]:
    """Wavefronts per phase of ``per`` lanes: each lane touches ``width`` bytes from its byte address."""
    out = []
    for p in range(0, len(lanes), per):
        words = {a // 4 + k for a in lanes[p:p + per] for k in range(max(1, width // 4))}
        by_bank = Counter(w % 32 for w in words)
        out.append(max(by_bank.values(), default=1))
    return out


# ---------------------------------------------------------------------------------------------------------- banks
def _tile(rng: random.Random) -> tuple[int, Any, Any, int, int, tuple | None]:
    eb = rng.choice((1, 2, 2, 4, 4, 8, 16))
    R, C = 1 << rng.randint(3, 6), 1 << rng.randint(2, 7)
    p = rng.choice((0, 0, 1, 2, 4, 8, 16 // eb if eb < 16 else 1))
    form = rng.randrange(3)
    shape, stride = (R, C), ((C + p, 1) if form != 1 else (1, R + p))
    if form == 2 and C >= 4:
        shape, stride = (R, (C // 2, 2)), (C + p, (1, C // 2))
    swz = None
    if rng.random() < 0.5:
        b, m = rng.randint(1, 3), rng.randint(0, 4)
        swz = (b, m, rng.randint(b, 4))
    return eb, shape, stride, R, C, swz


def _lane_cells(a: dict, R: int, C: int, eb: int) -> tuple[list[tuple[int, int]], int, int, int] | None:
    """(per lane its first (row, col), elements per lane, bytes per lane, lanes per phase), or None if out of tile."""
    if a["kind"] == "column":
        return [(t, a["index"]) for t in range(min(32, R))], 1, eb, PER[eb]
    if a["kind"] == "row":
        v = a["vector"]
        return [(a["index"], t * v) for t in range(min(32, C // v))], v, v * eb, PER[v * eb]
    per, num, (r0, c0) = 16 // eb, a["num"], a["index"]
    grid = num == 1 or R >= 16
    cells = [(r0 + (8 * (m % 2) if grid else 0) + i, c0 + ((m // 2) if grid else m) * per)
             for m in range(num) for i in range(8)]
    if any(r >= R or c + per > C for r, c in cells):
        return None
    return cells, per, 16, 8


def check_banks(rng: random.Random, c: Any) -> list[tuple]:
    eb, shape, stride, R, C, swz = _tile(rng)
    k = rng.choice(("row", "column", "ldmatrix"))
    if k == "ldmatrix" and eb > 16:
        k = "row"
    if k == "column":
        a = {"kind": "column", "index": rng.randrange(C)}
    elif k == "row":
        a = {"kind": "row", "index": rng.randrange(R), "vector": rng.choice([v for v in (1, 2, 4, 8, 16)
                                                                              if v * eb <= 16 and v <= C])}
    else:
        per = 16 // eb
        a = {"kind": "ldmatrix", "num": rng.choice((1, 2, 4)), "trans": rng.random() < 0.5,
             "index": [rng.randrange(R), per * rng.randrange(max(1, C // per))]}
    body = {"layout": f"{text(shape)}:{text(stride)}", "element_bytes": eb, "access": a,
            "swizzle": None if swz is None else "Sw<{},{},{}>".format(*swz)}
    if swz and rng.random() < 0.3:  # the swizzled tile typed as one layout
        body["layout"], body["swizzle"] = "Sw<{},{},{}> o 0 o ".format(*swz) + body["layout"], None
    if rng.random() < 0.25:
        return _check_offsets(rng, c, body, eb, swz)
    r = c.post("/api/banks", json=body)
    lanes = _lane_cells(a, R, C, eb)
    if lanes is None:
        return [] if r.status_code == 422 else [("ldmatrix outside the tile answered", body, r.status_code)]
    cells, v, width, per = lanes

    def addr(rr: int, cc: int) -> int:
        o = evaluate(shape, stride, rr + R * cc)
        return eb * (sw(*swz, o) if swz else o)
    firsts = [addr(rr, cc) for rr, cc in cells]
    contiguous = all(addr(rr, cc + k) == addr(rr, cc) + k * eb and addr(rr, cc) % width == 0
                     for rr, cc in cells for k in range(v))
    if not contiguous:
        if r.status_code == 422:
            return []
        return [("a split vector answered", body, r.status_code, r.text[:200])]
    if r.status_code != 200:
        return [("refused a real access", body, r.status_code, r.text[:300])]
    j = r.json()
    want = cost(firsts, width, per)
    bad = []
    if j["byte_addresses"] != firsts:
        bad.append(("addresses", body, j["byte_addresses"][:8], firsts[:8]))
    if j["banks"] != [(x // 4) % 32 for x in firsts]:
        bad.append(("banks", body))
    if j["phases"] != want or j["wavefronts"] != sum(want) or j["ways"] != max(want):
        bad.append(("wavefronts", body, j["phases"], want))
    return bad


def _check_offsets(rng: random.Random, c: Any, body: dict, eb: int, swz: tuple | None) -> list[tuple]:
    """Explicit element offsets, one per lane (1 to 32 lanes, repeats for broadcasts), ``vector`` elements each:
    only the swizzle applies to them."""
    v = rng.choice([x for x in (1, 2, 4, 8, 16) if x * eb <= 16])
    n = rng.choice((1, 5, 8, 16, 31, 32))
    offs = [v * rng.randrange(64) for _ in range(n)]
    offs = [rng.choice(offs[:2]) if rng.random() < 0.2 else o for o in offs]
    body = dict(body, access={"kind": "offsets", "index": offs, "vector": v})
    r = c.post("/api/banks", json=body)

    def addr(o: int) -> int:
        return eb * (sw(*swz, o) if swz else o)
    split = any(addr(o + k) != addr(o) + k * eb for o in offs for k in range(v))
    split = split or any(addr(o) % (v * eb) for o in offs)
    if r.status_code != 200:
        # offsets past the tile's cosize are refused by name
        return [] if split or "outside" in r.text else [("offsets refused", body, r.status_code, r.text[:200])]
    if split:
        return [("a split vector answered", body)]
    j, firsts = r.json(), [addr(o) for o in offs]
    want = cost(firsts, v * eb, PER[v * eb])
    if j["byte_addresses"] != firsts or j["phases"] != want or j["wavefronts"] != sum(want):
        return [("offsets wavefronts", body, j["phases"], want)]
    return []


# ---------------------------------------------------------------------------------------------------------- solve
SPAN = {"SWIZZLE_32B": (32, 1), "SWIZZLE_64B": (64, 2), "SWIZZLE_128B": (128, 3)}
ATOM = re.compile(r"GMMA::Layout_(K|MN)_(INTER|SW32|SW64|SW128)_Atom<[^>]+>")


def _solve_ask(rng: random.Random) -> tuple[int, int, int, int, list[dict]]:
    eb = rng.choice((1, 2, 2, 4, 4, 8))
    R, C = rng.choice((8, 16, 32, 64)), rng.choice((8, 16, 32, 64, 128))
    while R * C * eb > 65536:
        C //= 2
    pad = rng.choice((0, 0, 0, 1, 2, 4, 8))
    accs: list[dict] = []
    for _ in range(rng.randint(1, 3)):
        k = rng.choice(("row", "column", "ldmatrix", "stmatrix", "offsets"))
        vs = [v for v in (1, 2, 4, 8, 16) if v * eb <= 16 and v <= C and (pad == 0 or v == 1)]
        if k == "row":
            accs.append({"kind": "row", "index": rng.randrange(R), "vector": rng.choice(vs)})
        elif k in ("ldmatrix", "stmatrix") and eb <= 16 and pad == 0 and R >= 16 and C >= 2 * (16 // eb):
            per = 16 // eb
            accs.append({"kind": k, "index": [8 * rng.randrange(R // 8 - 1), per * rng.randrange(C // per - 1)],
                         "num": rng.choice((1, 2, 4)), "trans": rng.random() < 0.5})
        elif k == "offsets":
            v = rng.choice(vs)
            accs.append({"kind": "offsets", "vector": v,
                         "offsets": [[rng.randrange(R), v * rng.randrange(C // v)] for _ in range(32)]})
        else:
            accs.append({"kind": "column", "index": rng.randrange(C)})
    if rng.random() < 0.2 and pad == 0 and eb in (1, 2, 4):
        accs.append({"kind": "wgmma", "operand": rng.choice("AB"), "major": "K"})
    return eb, R, C, pad, accs


def _cells(a: dict, R: int, C: int, eb: int) -> tuple[list[tuple[int, int]], int, int, int]:
    if a["kind"] in ("ldmatrix", "stmatrix"):
        per, (r0, c0) = 16 // eb, a["index"]
        return [(r0 + 8 * (m % 2) + i, c0 + (m // 2) * per) for m in range(a["num"]) for i in range(8)], per, 16, 8
    if a["kind"] == "offsets":
        v = a["vector"]
        return [tuple(x) for x in a["offsets"]], v, v * eb, PER[v * eb]
    return _lane_cells(a, R, C, eb)


def _place(layout: str, R: int, C: int):
    """(row, col) -> element offset of the doctor's printed tile: Sw<B,M,S> o 0 o (R,C):(ld,1), a padded (R,C):(ld,1)
    or Xor<...> o ...; None for a form not written here."""
    m = re.fullmatch(r"(?:Sw<(\d+),(\d+),(\d+)> o 0 o )?\((\d+),(\d+)\):\((\d+),1\)", layout)
    if not m:
        return None
    b, mm, ss, ld = (int(m[1]) if m[1] else 0), int(m[2] or 0), int(m[3] or 0), int(m[6])
    return lambda r, c: sw(b, mm, ss, r * ld + c)


def _lsu_cost(place, accs: list[dict], R: int, C: int, eb: int) -> list[int] | None:
    out = []
    for a in accs:
        if a["kind"] in ("wgmma", "tma"):
            continue
        cells, v, width, per = _cells(a, R, C, eb)
        addrs = []
        for r, c in cells:
            o = place(r, c)
            if o % v or any(place(r, c + k) != o + k for k in range(1, v)):
                return None
            addrs.append(o * eb)
        out.append(sum(cost(addrs, width, per)))
    return out


def _gmma_tile(major: str, span: int, eb: int, R: int, C: int):
    """tile_to_shape(GMMA atom, (R, C)) with the atom's swizzle on the byte address, as element offsets."""
    w = span // eb
    b = {16: 0, 32: 1, 64: 2, 128: 3}[span]
    am, an = (8, w) if major == "K" else (w, 8)
    if R % am or C % an:
        return None

    def place(r: int, c: int) -> int:
        inner = (r % am) * w + (c % an) if major == "K" else (r % am) + (c % an) * w
        tile = (r // am) + (R // am) * (c // an)
        return sw(b, 4, 3, (inner + tile * am * an) * eb) // eb
    return place


def check_solve(rng: random.Random, c: Any) -> list[tuple]:
    eb, R, C, pad, accs = _solve_ask(rng)
    tile = f"({R},{C}):({C + pad},1)"
    r = c.post("/api/solve/smem", json={"element_bytes": eb, "tile": tile, "accesses": accs})
    naive = _lsu_cost(lambda rr, cc: rr * (C + pad) + cc, accs, R, C, eb)
    if r.status_code != 200:
        ok = naive is None or "wgmma" in r.text or "cap" in r.text
        return [] if ok else [("refused", eb, tile, accs, r.status_code, r.text[:300])]
    if naive is None:
        return [("a split vector solved", eb, tile, accs)]
    j, bad = r.json(), []
    if j["naive"]["total"] != sum(naive):
        bad.append(("naive", eb, tile, accs, j["naive"]["total"], naive))
    best = sum(naive)
    for cand in j["candidates"]:
        place = _place(cand["layout"], R, C)
        if place is None:
            continue
        image = {place(rr, cc) for rr in range(R) for cc in range(C)}
        if len(image) != R * C:
            bad.append(("not injective", eb, tile, cand["layout"]))
        got = _lsu_cost(place, accs, R, C, eb)
        if got is None or sum(got) != cand["total"]:
            bad.append(("candidate wavefronts", eb, tile, accs, cand["layout"], cand["total"], got))
        if cand["kind"] == "padding" and (cand.get("tma") or cand.get("wgmma")):
            bad.append(("padding named as TMA / wgmma", tile, cand["layout"], cand.get("tma"), cand.get("wgmma")))
        if cand.get("tma") in SPAN:
            span, b = SPAN[cand["tma"]]
            m = re.match(r"Sw<(\d+),(\d+),(\d+)>", cand["layout"])
            if not m or (int(m[1]), int(m[2]) + (eb.bit_length() - 1), int(m[3])) != (b, 4, 3) or C * eb > span:
                bad.append(("tma mode", eb, tile, cand["layout"], cand["tma"]))
        if cand.get("wgmma"):
            am = ATOM.fullmatch(cand["wgmma"])
            span = {"INTER": 16, "SW32": 32, "SW64": 64, "SW128": 128}[am[2]] if am else 0
            g = _gmma_tile(am[1], span, eb, R, C) if am else None
            if g is None or any(g(rr, cc) != place(rr, cc) for rr in range(R) for cc in range(C)):
                bad.append(("wgmma atom is not the tile", eb, tile, cand["layout"], cand["wgmma"]))
    if j["candidates"] and j["candidates"][0]["total"] > sum(naive):
        bad.append(("best fix costs more than the tile as given", eb, tile, accs))
    n = (R * (C + pad)).bit_length()
    for b in range(1, n + 1):
        for m in range(n):
            for s in range(b, n - m - b + 1):
                t = _lsu_cost(lambda rr, cc, b=b, m=m, s=s: sw(b, m, s, rr * (C + pad) + cc), accs, R, C, eb)
                best = best if t is None else min(best, sum(t))
    for p in range(0, 128 // eb + 1):
        t = _lsu_cost(lambda rr, cc, p=p: rr * (C + p) + cc, accs, R, C, eb)
        best = best if t is None else min(best, sum(t))
    if any(a["kind"] == "wgmma" for a in accs):  # the swizzles wgmma cannot read rank after those it can
        if any(x.get("wgmma") for x in j["candidates"]) and not j["candidates"][0].get("wgmma"):
            bad.append(("best breaks the wgmma operand", eb, tile, accs, j["candidates"][0]["layout"]))
        return bad
    if j["candidates"] and j["candidates"][0]["total"] > best:
        bad.append(("beaten by brute force", eb, tile, accs, j["candidates"][0]["layout"], best))
    return bad


# ---------------------------------------------------------------------------------------------------------- wide
def _wide_ask(rng: random.Random) -> tuple:
    """A tile (row- or column-major, padded, any sizes) and 1-3 accesses, each with ``_cells`` (row, col) -> lanes."""
    eb = rng.choice((1, 2, 2, 4, 4, 8, 16))
    R, C = rng.choice((8, 16, 24, 32, 48, 64, 128)), rng.choice((4, 8, 12, 16, 32, 40, 64, 128))
    while R * C * eb > 65536:
        R //= 2
    pad, colmaj = rng.choice((0, 0, 0, 1, 2, 4, 8, max(1, 16 // eb))), rng.random() < 0.3
    ld = (R if colmaj else C) + pad
    base = (lambda r, c: r + c * ld) if colmaj else (lambda r, c: r * ld + c)
    accs: list[dict] = []
    for _ in range(rng.randint(1, 3)):
        k = rng.choice(("row", "column", "ldmatrix", "thread_layout", "thread_layout", "offsets"))
        vs = [v for v in (1, 2, 4, 8, 16) if v * eb <= 16 and v <= C] if not colmaj else [1]
        v = rng.choice(vs)
        if k == "row":
            accs.append({"kind": "row", "index": rng.randrange(R), "vector": v})
        elif k == "ldmatrix" and not colmaj and R >= 16 and C >= 2 * (16 // eb):
            per = 16 // eb
            accs.append({"kind": rng.choice(("ldmatrix", "stmatrix")), "num": rng.choice((1, 2, 4)),
                         "index": [8 * rng.randrange(R // 8 - 1), per * rng.randrange(C // per - 1)],
                         "trans": rng.random() < 0.5})
        elif k == "thread_layout":  # lanes over rows and vectors, strided; read as coordinates or as offsets
            a0, sr, sc = rng.choice((1, 2, 4, 8, 16, 32)), rng.choice((1, 2, 3)), rng.choice((1, 2))
            a1, of = 32 // a0, rng.random() < 0.3 and not colmaj
            if a0 * sr > R or a1 * v * sc > C:
                accs.append({"kind": "column", "index": rng.randrange(C)})
                continue
            sh, st = ((a0, a1), (sr * ld, sc * v)) if of else ((a0, a1), (sr, R * v * sc))
            if not of and rng.random() < 0.5:
                sh, st = (a1, a0), (R * v * sc, sr)
            if of:
                cells = [divmod(evaluate(sh, st, t), ld) for t in range(32)]
            else:
                cells = [(x % R, x // R) for x in (evaluate(sh, st, t) for t in range(32))]
            accs.append({"kind": "thread_layout", "layout": f"{text(sh)}:{text(st)}", "vector": v,
                         **({"of": "offset"} if of else {}), "_cells": cells})
        elif k == "offsets":
            accs.append({"kind": "offsets", "vector": v,
                         "offsets": [[rng.randrange(R), v * rng.randrange(C // v)] for _ in range(32)]})
        else:
            accs.append({"kind": "column", "index": rng.randrange(C)})
    tile = f"({R},{C}):(1,{ld})" if colmaj else f"({R},{C}):({ld},1)"
    return eb, R, C, colmaj, tile, base, accs


def _wide_cost(place, accs: list[dict], R: int, C: int, eb: int) -> list[int] | None:
    out = []
    for a in accs:
        if "_cells" in a:
            v = a["vector"]
            cells, width, per = a["_cells"], v * eb, PER[v * eb]
        else:
            cells, v, width, per = _cells(a, R, C, eb)
        addrs = []
        for r, c in cells:
            o = place(r, c)
            if r >= R or c + v > C or o % v or any(place(r, c + k) != o + k for k in range(1, v)):
                return None
            addrs.append(o * eb)
        out.append(sum(cost(addrs, width, per)))
    return out


def check_wide(rng: random.Random, c: Any) -> list[tuple]:
    eb, R, C, colmaj, tile, base, accs = _wide_ask(rng)
    body = {"element_bytes": eb, "tile": tile, "accesses": [{k: v for k, v in a.items() if k[0] != "_"} for a in accs]}
    r = c.post("/api/solve/smem", json=body)
    naive = _wide_cost(base, accs, R, C, eb)
    if r.status_code != 200:
        return [] if naive is None else [("refused", body, r.status_code, r.text[:300])]
    if naive is None:
        return [("a split vector solved", body)]
    j, bad, best = r.json(), [], sum(naive)
    if j["naive"]["total"] != best:
        bad.append(("naive", body, j["naive"]["total"], naive))
    n = max(base(R - 1, C - 1), 1).bit_length()
    for b in range(1, n + 1):
        for m in range(n):
            for s in range(b, n - m - b + 1):
                t = _wide_cost(lambda rr, cc, b=b, m=m, s=s: sw(b, m, s, base(rr, cc)), accs, R, C, eb)
                best = best if t is None else min(best, sum(t))
    for p in range(0, 128 // eb + 1):
        q = (R if colmaj else C) + p
        t = _wide_cost((lambda rr, cc, q=q: rr + cc * q) if colmaj else (lambda rr, cc, q=q: rr * q + cc),
                       accs, R, C, eb)
        best = best if t is None else min(best, sum(t))
    if j["candidates"][0]["total"] > best:
        bad.append(("beaten by brute force", body, j["candidates"][0]["layout"], best))
    for cand in j["candidates"]:
        m = re.fullmatch(r"(?:Sw<(\d+),(\d+),(\d+)> o 0 o )?\((\d+),(\d+)\):\((\d+),(\d+)\)", cand["layout"])
        if not m:
            continue
        b, mm, ss, d0, d1 = int(m[1] or 0), int(m[2] or 0), int(m[3] or 0), int(m[6]), int(m[7])

        def place(rr: int, cc: int, b: int = b, mm: int = mm, ss: int = ss, d0: int = d0, d1: int = d1) -> int:
            return sw(b, mm, ss, rr * d0 + cc * d1)
        if len({place(rr, cc) for rr in range(R) for cc in range(C)}) != R * C:
            bad.append(("not injective", body, cand["layout"]))
        got = _wide_cost(place, accs, R, C, eb)
        if got is None or sum(got) != cand["total"]:
            bad.append(("candidate wavefronts", body, cand["layout"], cand["total"], got))
    return bad


# ---------------------------------------------------------------------------------------------------------- compare
def check_compare(rng: random.Random, c: Any) -> list[tuple]:
    """The banks lab's comparison (``app.services.banks.compare``): its padding is the smallest conflict-free one and
    it finds a conflict-free Sw<B,M,S> exactly when one exists (brute force over every B, M, S of the tile's bits)."""
    from app.services.banks import compare
    eb = rng.choice((1, 2, 4, 4, 4, 8, 16))
    R, C, colmaj = 1 << rng.randint(3, 6), 1 << rng.randint(2, 7), rng.random() < 0.3
    d0, d1 = (1, R) if colmaj else (C, 1)
    k, per_row = rng.choice(("row", "column", "column", "ldmatrix")), 16 // eb
    if k == "ldmatrix" and not colmaj and per_row <= C:
        a = {"kind": "ldmatrix", "num": rng.choice((1, 2, 4)), "trans": False,
             "index": [8 * rng.randrange(max(1, R // 8)), per_row * rng.randrange(C // per_row)]}
        acc = {"kind": "ldmatrix", "row": a["index"][0], "col": a["index"][1], "num": a["num"]}
    elif k == "row":
        a = {"kind": "row", "index": rng.randrange(R),
             "vector": rng.choice([v for v in (1, 2, 4, 8, 16) if v * eb <= 16 and v <= C and (v == 1 or not colmaj)])}
        acc = dict(a)
    else:
        a = {"kind": "column", "index": rng.randrange(C)}
        acc = dict(a)
    lanes = _lane_cells(a, R, C, eb)
    if lanes is None:
        return []
    cells, v, width, per = lanes

    def ways(place) -> int | None:
        addrs = []
        for r, cc in cells:
            o = place(r, cc)
            if o % v or any(place(r, cc + j) != o + j for j in range(1, v)):
                return None
            addrs.append(o * eb)
        return max(cost(addrs, width, per))
    lay, base = f"({R},{C}):({d0},{d1})", (lambda r, cc: r * d0 + cc * d1)
    panels = compare(lay, None, eb, acc)
    if ways(base) == 1:
        return []
    n, exists, bad = (R * C - 1).bit_length(), False, []
    for b in range(1, n + 1):
        for m in range(n):
            for s in range(b, n - m - b + 1):
                exists = exists or ways(lambda r, cc, b=b, m=m, s=s: sw(b, m, s, base(r, cc))) == 1
    shown = panels[-1]["view"]
    if exists != (shown is not None) or (shown is not None and shown.ways != 1):
        bad.append(("swizzle panel", lay, eb, acc, exists, panels[-1]["title"], panels[-1]["why"][:160]))
    pads = [p for p in range(0, 128 // eb + 1)
            if ways((lambda r, cc, p=p: r + cc * (R + p)) if colmaj else (lambda r, cc, p=p: r * (C + p) + cc)) == 1]
    m = re.search(r"\+(\d+)", panels[-2]["title"]) if panels[-2]["view"] is not None else None
    if (pads[0] if pads else None) != (int(m.group(1)) if m else None):
        bad.append(("padding panel", lay, eb, acc, pads[:3], panels[-2]["title"]))
    return bad


# ---------------------------------------------------------------------------------------------------------- triton
#: The oracle tests (tests/test_triton_oracle.py) run on the audit's seeds: name -> the offset each adds to its seed.
TRITON = {"test_distributed_layouts_equal_tritons": 0, "test_shared_layouts_equal_tritons": 1000,
          "test_store_conflicts_equal_gluons": 2000,
          "test_blocked_layouts_and_their_operands_on_edge_shapes_equal_tritons": 4000,
          "test_padded_offsets_follow_tritons_definition": 5000,
          "test_cluster_and_rank_3_distributed_layouts_equal_tritons": 0,
          "test_cluster_and_rank_3_shared_layouts_equal_tritons": 0,
          "test_fresh_layout_kinds_equal_tritons_through_the_route": 0,
          "test_conflicts_route_and_its_fix_equal_an_independent_count": 0,
          "test_pasted_text_in_any_field_order_reads_as_tritons_layout": 0}


def run_triton(lo: int, hi: int, names: list[str], step: int = 1) -> Counter:
    """Each oracle test of ``names`` (all of TRITON when empty) called with the seed that draws from Random(seed) for
    seed in lo..hi-1, every ``step``-th; a skip is Triton refusing the draw."""
    import _pytest.outcomes
    import test_triton_oracle as M
    import triton.experimental.gluon.language as ttgl
    import triton_oracle
    M.O, M.ttgl = triton_oracle, ttgl
    total: Counter = Counter()
    for name in names or list(TRITON):
        for seed in range(lo, hi, step):
            try:
                getattr(M, name)(seed - TRITON[name])
                total[f"{name}: pass"] += 1
            except _pytest.outcomes.Skipped:
                total[f"{name}: skip"] += 1
            except Exception as e:  # noqa: BLE001 - every failure is a finding to print
                total[f"{name}: fail"] += 1
                print("PROBLEM", seed, name, type(e).__name__, str(e)[:400], flush=True)
    return total


# ---------------------------------------------------------------------------------------------------------- driver
SECTIONS: dict[str, Any] = {"banks": check_banks, "solve": check_solve, "wide": check_wide, "compare": check_compare}


def main(argv: list[str]) -> None:
    section, lo, hi, per = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    if section == "triton":
        print(dict(run_triton(lo, hi, argv[4:], max(1, per))))
        return
    c, total = client(), Counter()
    for seed in range(lo, hi):
        rng = random.Random(seed)
        for _ in range(per):
            total[section] += 1
            for p in SECTIONS[section](rng, c):
                total[f"{section}: {p[0]}"] += 1
                print("PROBLEM", seed, p, flush=True)
    print(dict(total))


if __name__ == "__main__":
    main(sys.argv[1:])
