"""The layout doctor on fresh asks (seeds 14200-14299), each answer checked without the solver: the printed layout
(``Sw<B,M,S> o 0 o L``, a padding or ``Xor<...> o L``) evaluated by pycute and a hand-written swizzle, lanes from the
access conventions of CONTRACT §5, wavefronts from the bank rules of CONTRACT §3 written out here (32 banks x 4 bytes,
phases by access width, one phase per 8x8 matrix of ldmatrix / stmatrix), and the best candidate against a brute force
over every Sw<B,M,S> and padding. Then the asks the hardware cannot serve, which are refused naming the condition."""

from __future__ import annotations

import math
import random
import re

import pytest

from algebra.doctor.solver import solve, swizzle_space
from algebra.doctor.solver_access import SolveError, make_tile

PER_PHASE = {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}


def flatten(t) -> tuple:
    return sum((flatten(x) for x in t), ()) if isinstance(t, tuple) else (t,)


def product(t) -> int:
    return math.prod(flatten(t))


class _Plain:
    """A plain layout written from the definition (colexicographic coordinates, the inner product with the strides),
    independent of the algebra under test."""

    def __init__(self, shape, stride) -> None:
        self.shape, self.stride = shape, stride

    def __call__(self, i: int) -> int:
        total = 0
        for n, d in zip(flatten(self.shape), flatten(self.stride), strict=True):
            total += (i % n) * d
            i //= n
        return total


def _plain(text: str) -> _Plain:
    shape, stride = text.split(":")
    return _Plain(eval(shape), eval(stride))  # noqa: S307 - test data in CuTe notation, tuples of ints


def _swizzle(b: int, m: int, s: int, o: int) -> int:
    return o ^ ((o & (((1 << b) - 1) << (m + s))) >> s)


def _fixed(text: str):
    """coordinate i (column-major over the shape) -> element offset, for the text the doctor printed."""
    if m := re.fullmatch(r"Sw<(\d+),(\d+),(\d+)> o 0 o (.*)", text):
        b, mm, s, lay = int(m[1]), int(m[2]), int(m[3]), _plain(m[4])
        return lambda i: _swizzle(b, mm, s, lay(i)), lay
    if m := re.fullmatch(r"Xor<([^>]*)> o (.*)", text):
        pairs, lay = [tuple(map(int, p.split(":"))) for p in m[1].split(",")], _plain(m[2])

        def f(i: int) -> int:
            o = lay(i)
            for j, mask in pairs:
                o ^= mask * ((lay(i) >> j) & 1)
            return o
        return f, lay
    lay = _plain(text)
    return lay, lay


def _wavefronts(addrs: list[int], ab: int, matrix: bool) -> int:
    per, total = 8 if matrix else PER_PHASE[ab], 0
    for s in range(0, len(addrs), per):
        banks: dict[int, set[int]] = {}
        for a in addrs[s:s + per]:
            for w in range(a // 4, max(a // 4 + 1, (a + ab) // 4)):
                banks.setdefault(w % 32, set()).add(w)
        total += max(len(v) for v in banks.values())
    return total


def _lanes(acc: dict, rows: int, cols: int, eb: int) -> tuple[list[tuple[int, int]], int, bool] | None:
    k, v = acc["kind"], acc.get("vector", 1)
    if k == "row":
        return [(acc["index"], t * v) for t in range(min(cols // v, 32))], v, False
    if k == "column":
        return [(t, acc["index"]) for t in range(min(rows, 32))], 1, False
    if k == "offsets":
        return [tuple(e) for e in acc["offsets"]], v, False
    if k == "thread_layout":
        xs = [_plain(acc["layout"])(t) for t in range(32)]
        return [(x % rows, x // rows) for x in xs], v, False
    if k in ("ldmatrix", "stmatrix"):
        per, (r0, c0) = 16 // eb, acc["index"]
        return [(r0 + 8 * (m % 2) + i, c0 + (m // 2) * per) for m in range(acc["num"]) for i in range(8)], per, True
    return None


def _cost(f, rows: int, lsu: list, eb: int) -> int | None:
    """Total wavefronts of the accesses under placement f, None when a vector is no longer whole and aligned."""
    total = 0
    for lanes, v, matrix in lsu:
        addrs = []
        for r, c in lanes:
            o = f(r + rows * c)
            if o % v or any(f(r + rows * (c + k)) != o + k for k in range(1, v)):
                return None
            addrs.append(o * eb)
        total += _wavefronts(addrs, 16 if matrix else v * eb, matrix)
    return total


def _check_witness(pa: dict, ab: int, per: int) -> None:
    """A conflict's witness is real: its lanes lie in its phase, each touches its word, every word is in its bank
    and distinct, and there are as many as the phase's wavefronts (the worst phase's)."""
    c = pa["conflict"]
    if max(pa["phases"]) == 1:
        assert c is None
        return
    assert c["ways"] == max(pa["phases"]) == pa["phases"][c["phase"]] == len(set(c["words"])) == len(c["lanes"])
    for lane, addr, word in zip(c["lanes"], c["byte_addresses"], c["words"], strict=True):
        assert c["phase"] * per <= lane < (c["phase"] + 1) * per and pa["byte_addresses"][lane] == addr
        assert addr // 4 * 4 <= word < addr + max(ab, 4) and (word // 4) % 32 == c["bank"]


def _ask(rng: random.Random) -> dict:
    eb = rng.choice([1, 2, 2, 4, 4, 8, 16])
    rows, cols = rng.choice([8, 16, 32, 64]), rng.choice([8, 16, 32, 64, 128])
    tile = rng.choice([f"({rows},{cols}):({cols},1)"] * 3 + [f"({rows},{cols}):({cols + rng.choice([1, 2, 4])},1)"])
    vs = [v for v in (1, 2, 4, 8, 16) if v * eb <= 16 and v <= cols]
    padded = not tile.endswith(f"({cols},1)")
    accs: list[dict] = []
    for _ in range(rng.choice([1, 2, 2, 3])):
        k = rng.choice(["row", "column", "offsets", "thread_layout", "ldmatrix", "stmatrix"])
        v = 1 if padded else rng.choice(vs)
        if k == "row":
            accs.append({"kind": "row", "index": rng.randrange(rows), "vector": v, "op": rng.choice(["load", "store"])})
        elif k == "offsets" and 32 // max(1, cols // v) <= rows:
            lpr = min(32, cols // v)
            accs.append({"kind": "offsets", "vector": v, "offsets": [[t // lpr, (t % lpr) * v] for t in range(32)]})
        elif k == "thread_layout" and not padded and 32 % rows == 0 and 32 // rows * v <= cols:
            accs.append({"kind": "thread_layout", "layout": f"({rows},{32 // rows}):(1,{rows * v})", "vector": v})
        elif k in ("ldmatrix", "stmatrix") and not padded and 16 % eb == 0 and rows >= 16 and cols >= 32 // eb:
            accs.append({"kind": k, "index": [8 * rng.randrange(rows // 8 - 1), 0], "num": rng.choice([1, 2, 4]),
                         "trans": rng.random() < 0.5})
        else:
            accs.append({"kind": "column", "index": rng.randrange(cols)})
    return {"element_bytes": eb, "tile": tile, "accesses": accs}


@pytest.mark.parametrize("seed", range(14200, 14216))
def test_fresh_asks_checked_without_the_solver(seed):
    ask = _ask(random.Random(seed))
    eb, lay = ask["element_bytes"], _plain(ask["tile"])
    rows, size = lay.shape[0], product(lay.shape)
    table = [lay(i) for i in range(size)]
    lsu = [x for a in ask["accesses"] if (x := _lanes(a, rows, size // rows, eb))]
    r = solve(eb, ask["tile"], ask["accesses"])
    for cand in [r["naive"], *r["candidates"]]:
        f, shown = _fixed(cand["layout"])
        assert tuple(flatten(shown.shape)) == tuple(flatten(lay.shape)), cand["layout"]
        image = [f(i) for i in range(size)]
        assert len(set(image)) == size, f"{cand['layout']} is not a bijection onto its storage"
        if cand["kind"] in ("swizzle", "xor"):
            assert set(image) == set(table) or (max(image) + 1) * eb == cand["footprint_bytes"], cand["layout"]
        assert (max(image) + 1) * eb == cand["footprint_bytes"] or cand["kind"] == "naive", cand["layout"]
        assert _cost(f, rows, lsu, eb) == cand["total"], (cand["layout"], cand["wavefronts"])
        assert cand["total"] >= r["ideal"]
        for (lanes, v, matrix), pa in zip(lsu, [p for p in cand["per_access"] if p["byte_addresses"]], strict=True):
            assert pa["byte_addresses"] == [f(rr + rows * c) * eb for rr, c in lanes], (cand["layout"], pa["name"])
            _check_witness(pa, 16 if matrix else v * eb, 8 if matrix else PER_PHASE[v * eb])
    brute = _cost(lambda i: table[i], rows, lsu, eb)
    nbits = max(table).bit_length()
    for b in range(1, nbits + 1):
        for m in range(nbits):
            for s in range(b, nbits - m - b + 1):
                image = [_swizzle(b, m, s, o) for o in table]
                if set(image) == set(table) and (c := _cost(lambda i, im=image: im[i], rows, lsu, eb)) is not None:
                    brute = min(brute, c)
    ld = lay.stride[0]
    for p in range(1, 256 // eb + 1):
        c = _cost(lambda i, p=p: (i % rows) * (ld + p) + i // rows, rows, lsu, eb)
        brute = brute if c is None else min(brute, c)
    assert r["candidates"][0]["total"] <= brute, (ask, r["candidates"][0]["layout"], brute)


def test_stmatrix_is_ldmatrix_rows_written():
    r = solve(2, "(16,64):(64,1)", [{"kind": "stmatrix", "index": [0, 0], "num": 4}])
    best = r["candidates"][0]
    assert r["naive"]["wavefronts"] == [32] and best["layout"] == "Sw<3,3,3> o 0 o (16,64):(64,1)"
    assert best["wavefronts"] == [4] and best["per_access"][0]["kind"] == "stmatrix"
    assert best["per_access"][0]["op"] == "store" and "stmatrix rows" in best["why"]
    with pytest.raises(SolveError, match=r"accesses\[0\]\.op: stmatrix stores"):
        solve(2, "(16,64):(64,1)", [{"kind": "stmatrix", "op": "load"}])
    with pytest.raises(SolveError, match=r"accesses\[0\]\.op: ldmatrix loads.*stmatrix"):
        solve(2, "(16,64):(64,1)", [{"kind": "ldmatrix", "op": "store"}])


@pytest.mark.parametrize("tile,box,rule", [
    ("(64,64):(64,1)", [64, 32], r"dense block.*element \(1, 0\) is at offset 64, but a dense box from offset 0 "
                                 r"puts it at 32"),
    ("(64,64):(64,1)", [64, 4], r"4 x 2 = 8 bytes, not a multiple of 16"),
    ("(64,64):(1,64)", [32, 64], r"with the rows inner, element \(0, 1\) is at offset 64, but a dense box"),
    ("(64,8):(8,1)", [1, 8], r"starts at byte 16, not a multiple of 128"),
])
def test_a_tma_box_that_cannot_write_the_tile_is_refused(tile, box, rule):
    with pytest.raises(SolveError, match=r"accesses\[0\]\.box: TMA cannot write .*" + rule):
        solve(2, tile, [{"kind": "tma", "box": box}, {"kind": "column", "index": 0}])


def test_tma_boxes_that_write_the_tile():
    best = solve(2, "(64,64):(64,1)", [{"kind": "tma", "box": [8, 64]}, {"kind": "column", "index": 0}])
    assert best["candidates"][0]["tma"] == "SWIZZLE_128B" and best["candidates"][0]["constraints_met"]
    best = solve(2, "(64,64):(1,64)", [{"kind": "tma", "box": [64, 8]}, {"kind": "row", "index": 0}])
    assert best["candidates"][0]["swizzle"] == "Sw<3,3,3>" and best["candidates"][0]["constraints_met"]
    with pytest.raises(SolveError, match="TMA moves elements of 1, 2, 4 or 8 bytes"):
        solve(16, "(8,8):(8,1)", [{"kind": "tma", "box": [8, 8]}, {"kind": "row", "index": 0}])


@pytest.mark.parametrize("eb,tile,access,rule", [
    (4, "(64,32):(1,64)", {"operand": "B", "major": "MN"}, r"\.major: wgmma reads an MN-major operand only for 16-bit"),
    (1, "(128,64):(1,128)", {"operand": "A", "major": "MN"}, r"8-bit operands \(element_bytes 1\) must be K-major"),
    (8, "(64,64):(64,1)", {"operand": "B", "major": "K"}, r"not 64-bit elements"),
    (2, "(64,128):(128,1)", {"operand": "A", "major": "K"},
     r"no K-major GMMA atom .* tiles to \(64,128\):\(128,1\).*tile_to_shape\(GMMA::Layout_K_SW128_Atom<half_t>"),
    (2, "(64,64):(64,1)", {"operand": "B", "major": "MN"}, r"no MN-major GMMA atom"),
])
def test_a_wgmma_operand_the_hardware_cannot_read_is_refused(eb, tile, access, rule):
    with pytest.raises(SolveError, match=r"accesses\[0\]" + rule if rule.startswith(r"\.") else rule):
        solve(eb, tile, [{"kind": "wgmma", **access}, {"kind": "row", "index": 0}])


def test_a_vector_the_tile_splits_names_the_lane_and_its_offsets():
    with pytest.raises(SolveError, match=r"accesses\[0\]: lane 0's ldmatrix\.x2 row \(16 elements from \(row 46, "
                                         r"col 0\)\) lies at offsets 11868, 11869, 11870, 11871, \.\.\. of"):
        solve(1, "(64,256):(258,1)", [{"kind": "ldmatrix", "index": [46, 0], "num": 2}])


@pytest.mark.parametrize("tile", ["(2,2):(4611686018427387904,1)", "(32768,2):(1,1000000000000)"])
def test_a_tile_spanning_past_the_cap_is_refused_naming_it(tile):
    with pytest.raises(SolveError, match=r"tile: .* over the cap of 16777216 bytes"):
        solve(2, tile, [{"kind": "column", "index": 0}])


def test_a_sparse_tile_answers_and_searches_only_swizzles_that_can_move_a_bank():
    # offsets {0, 1, 2^23, 2^23 + 1}: before, ~2,000 swizzles were tried and some printed past Swizzle's cap (a 500)
    r = solve(1, "(2,2):(8388608,1)", [{"kind": "column", "index": 0}, {"kind": "row", "index": 1}])
    assert r["candidates"][0]["total"] == 2 and r["searched"]["swizzles"] < 100


@pytest.mark.parametrize("seed", range(14220, 14226))
def test_the_swizzles_left_out_cost_what_the_tile_as_given_costs(seed):
    """``swizzle_space`` leaves out swizzles that move no bank bit or no bit set in the tile: each costs the naive
    total (checked against every Sw<B,M,S> on the tile's bits)."""
    from algebra.doctor.linear_layout import swizzles
    from algebra.doctor.solver import candidate, evaluate
    from algebra.doctor.solver_access import parse_accesses

    rng = random.Random(seed)
    eb = rng.choice([1, 2, 4, 8, 16])
    t = make_tile(rng.choice(["(32,32):(32,1)", "(16,64):(128,1)", "(64,8):(16,1)"]), eb)
    accs = parse_accesses([{"kind": "column", "index": rng.randrange(t.cols)},
                           {"kind": "offsets", "offsets": [[rng.randrange(t.rows), rng.randrange(t.cols)]
                                                           for _ in range(32)]}], t)
    naive = candidate(t, "naive")
    assert evaluate(t, accs, naive)
    kept = set(swizzle_space(t))
    for bms in swizzles(t.max_offset.bit_length()):
        if bms in kept or not evaluate(t, accs, c := candidate(t, "swizzle", bms)):
            continue
        assert c.wavefronts == naive.wavefronts, bms


def test_vector_kept_is_exact_on_a_gapped_tile():
    # (64,8):(16,1): offset bit 3 is never set, so Sw<3,0,3> flips bit 0 of no offset and keeps 2-element vectors
    r = solve(8, "(64,8):(16,1)", [{"kind": "offsets", "offsets": [[30 + t, 0] for t in range(32)], "vector": 2}])
    sw = {c["swizzle"]: c["vector_kept"] for c in r["candidates"] if c["swizzle"]}
    assert sw["Sw<3,0,3>"] is True
    r = solve(2, "(64,64):(64,1)", [{"kind": "row", "index": 0, "vector": 8}, {"kind": "column", "index": 0}])
    assert all(c["vector_kept"] == (int(c["swizzle"][3:].split(",")[1]) >= 3)
               for c in r["candidates"] if c["swizzle"])


def test_the_routes_take_stmatrix_and_refuse_impossible_asks_with_422(client):
    body = {"element_bytes": 2, "tile": "(16,64):(64,1)", "accesses": [{"kind": "stmatrix", "index": [0, 0], "num": 2}]}
    r = client.post("/api/solve/smem", json=body)
    assert r.status_code == 200 and r.json()["candidates"][0]["wavefronts"] == [2]
    r = client.post("/api/solve/access", json={"element_bytes": 2, "tile": "(16,64):(64,1)",
                                                "access": {"kind": "stmatrix", "index": [0, 0], "num": 2}})
    assert r.status_code == 200 and r.json()["kind"] == "stmatrix" and r.json()["wavefronts"] == 16
    for acc, words in (({"kind": "tma", "box": [64, 32]}, "dense block"),
                       ({"kind": "wgmma", "operand": "B", "major": "MN"}, "no MN-major GMMA atom")):
        r = client.post("/api/solve/smem", json={"element_bytes": 2, "tile": "(64,64):(64,1)",
                                                 "accesses": [acc, {"kind": "column", "index": 0}]})
        assert r.status_code == 422 and r.json()["detail"].startswith("accesses[0]") and words in r.json()["detail"]
    r = client.post("/api/solve/smem", json={"element_bytes": 2, "tile": "(2,2):(4611686018427387904,1)",
                                             "accesses": [{"kind": "column", "index": 0}]})
    assert r.status_code == 422 and "over the cap of 16777216 bytes" in r.json()["detail"]


def test_the_lab_says_it_does_not_measure_stmatrix():
    from gpu_worker import solve_bench

    with pytest.raises(SolveError, match="not stmatrix"):
        solve_bench.plan(2, "(16,64):(64,1)", [{"kind": "stmatrix", "index": [0, 0], "num": 4}], [{"kind": "naive"}])


def test_vector_kept_is_false_where_the_tile_as_given_splits_vectors():
    # (32,256):(257,1): odd rows start at odd offsets, so a 2-element vector there is split whatever the swizzle
    r = solve(2, "(32,256):(257,1)", [{"kind": "thread_layout", "layout": "(32,1):(64,1)", "vector": 2}])
    for c in r["candidates"]:
        assert c["vector_kept"] == (c["kind"] == "padding" and (257 + c["pad"]) % 2 == 0), c["layout"]
        if c["kind"] == "swizzle":
            assert "already splits some vectors" in c["why"]


def test_the_cpp_snippet_declares_each_name_once():
    # the atom form used to be a second `auto smem_layout = ...`, which does not compile pasted as shown
    r = solve(2, "(64,64):(64,1)", [{"kind": "column", "index": 0}, {"kind": "wgmma", "operand": "A", "major": "K"}])
    cpp = r["candidates"][0]["code"]["cpp"]
    assert cpp.count("auto smem_layout =") == 1 and "auto smem_layout_gmma = tile_to_shape(GMMA::Layout_K_SW128" in cpp


def test_a_conflicting_layout_is_shown_with_its_lanes_addresses_and_bank():
    r = solve(4, "(32,32):(32,1)", [{"kind": "row", "index": 0, "op": "store"}, {"kind": "column", "index": 0}])
    c = r["naive"]["per_access"][1]["conflict"]
    assert c == {"phase": 0, "bank": 0, "ways": 32, "lanes": list(range(32)),
                 "byte_addresses": [128 * t for t in range(32)], "words": [128 * t for t in range(32)]}
    assert "lanes 0, 1, 2, 3," in r["naive"]["why"] and "touch 32 different 4-byte words of bank 0" in r["naive"]["why"]
    assert r["candidates"][0]["per_access"][1]["conflict"] is None and "Left here" not in r["candidates"][0]["why"]
    # 16-byte vectors: a lane touches 4 words; the witness names the lane of each word
    r = solve(2, "(64,64):(64,1)", [{"kind": "thread_layout", "layout": "(8,4):(1,512)", "vector": 8}])
    c = r["naive"]["per_access"][0]["conflict"]
    assert c["ways"] == 8 and c["lanes"] == list(range(8)) and c["bank"] == 0


@pytest.mark.parametrize("seed", [14281, 14282])
def test_a_padded_tiles_swizzle_footprint_is_the_largest_moved_offset(seed):
    """Off a compact range the footprint walks the offsets from the largest down (bounded by the target mask); it
    equals the largest swizzled offset over every offset, also past the old 16,384-offset limit (then no swizzle was
    tried at all)."""
    from algebra.doctor.linear_layout import swizzles
    from algebra.doctor.solver import swizzle_footprint

    rng = random.Random(seed)
    for _ in range(6):
        r, c = rng.choice([8, 16, 32]), rng.choice([16, 32, 64])
        t = make_tile(rng.choice([f"({r},{c}):({c + rng.randrange(1, 9)},1)", f"({r},{c}):({2 * c},1)"]), 2)
        for b, m, s in swizzles(t.max_offset.bit_length()):
            want = max(x ^ ((x & (((1 << b) - 1) << (m + s))) >> s) for x in t.table)
            assert swizzle_footprint(t, b, m, s) == (want + 1) * 2, (t.text, b, m, s)
    r = solve(1, "(256,256):(257,1)", [{"kind": "column", "index": 3}, {"kind": "row", "index": 5}])
    assert r["searched"]["swizzles"] > 0 and r["candidates"][0]["total"] == 2
