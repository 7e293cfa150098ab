"""The bank map, the doctor's fixes and the smem descriptors against a brute-force model written from the hardware
rules (CONTRACT §3), on input classes the other tests do not draw: rank-3 tiles read by ``[row, col]``, stride-0
tiles, negative-shift swizzles, thread layouts with vectors along rows, 16-byte elements, and descriptor round
trips at random start addresses (seeds 8600-8699)."""

from __future__ import annotations

import random

import pytest

from algebra import LayoutError
from algebra.doctor.solver import solve
from algebra.hw import sm100
from algebra.hw.bank_access import bank_access


def _flat(t):
    return [y for x in t for y in _flat(x)] if isinstance(t, tuple) else [t]


def _eval(shape, stride, i):
    o = 0
    for n, d in zip(_flat(shape), _flat(stride), strict=True):
        o, i = o + (i % n) * d, i // n
    return o


def _view(shape, stride):
    """(rows, cols, (i, j) -> offset): mode 0 x the rest, as the banks lab views a tile."""
    rows = 1
    for n in _flat(shape[0]):
        rows *= n
    cols = 1
    for n in _flat(tuple(shape[1:])):
        cols *= n
    return rows, cols, lambda i, j: _eval(shape[0], stride[0], i) + _eval(tuple(shape[1:]), tuple(stride[1:]), j)


def _swizzle(b, m, s):
    ymask = ((1 << b) - 1) << (m + max(0, s))
    return lambda x: x ^ ((x & ymask) >> s if s >= 0 else (x & ymask) << -s)


def _phases(addrs, access_bytes, per_phase):
    """Per phase: the most distinct 4-byte words in one of 32 banks (at least 1)."""
    out = []
    for p in range(0, len(addrs), per_phase):
        words = {a // 4 + k for a in addrs[p:p + per_phase] for k in range(max(1, access_bytes // 4))}
        per_bank = [0] * 32
        for w in words:
            per_bank[w % 32] += 1
        out.append(max(per_bank))
    return out


def _text(t):
    return "(" + ",".join(_text(x) for x in t) + ")" if isinstance(t, tuple) else str(t)


def test_rank3_tile_read_by_row_col_uses_the_rank2_view():
    # modes 1.. fold into columns (CONTRACT §2): [1, 10] of (4,8,2):(1,4,32) is row 1, column 10 = (1, (2, 1))
    r = bank_access("(4,8,2):(1,4,32)", 4, {"kind": "offsets", "offsets": [[1, 10], [0, 15]]})
    assert r.element_offsets == [1 + 2 * 4 + 32, 7 * 4 + 32]
    col = bank_access("(4,8,2):(1,4,32)", 4, {"kind": "column", "index": 10})
    assert col.element_offsets[1] == r.element_offsets[0]
    # a natural coordinate is still read as one
    assert bank_access("(4,8,2):(1,4,32)", 4, {"kind": "offsets", "offsets": [[1, 2, 1]]}).element_offsets == [41]
    with pytest.raises(LayoutError, match="outside the 4x16 tile"):
        bank_access("(4,8,2):(1,4,32)", 4, {"kind": "offsets", "offsets": [[1, 16]]})


@pytest.mark.parametrize("seed", [8650, 8651])
def test_bank_map_matches_brute_force(seed):
    rng = random.Random(seed)
    checked = 0
    for _ in range(150):
        rows, c2 = rng.choice([4, 8, 16, 32]), rng.choice([2, 4, 8, 16])
        shape = rng.choice([(rows, c2, 2), (rows, 2 * c2), ((2, rows // 2), 2 * c2)])
        cols = 2 * c2
        stride = {3: rng.choice([(cols, 1, c2), (1, rows, rows * c2), (0, 1, c2)]),
                  2: rng.choice([(cols + rng.choice([0, 1, 4]), 1), (1, 0)])}.get(len(shape))
        if isinstance(shape[0], tuple):
            stride = ((cols, 2 * cols), 1)
        R, C, f = _view(shape, stride)
        e = rng.choice([1, 2, 4, 8, 16])
        b, m = rng.randint(1, 3), rng.randint(0, 4)
        sw = (b, m, rng.choice([1, -1]) * rng.randint(b, 5))
        g = _swizzle(*sw)
        kind = rng.choice(["offsets", "thread_layout"])
        if kind == "offsets":
            ents = [[rng.randrange(R), rng.randrange(C)] for _ in range(rng.randint(1, 32))]
            access, vec = {"kind": "offsets", "offsets": ents}, 1
            want_offs = [g(f(i, j)) for i, j in ents]
        else:  # vectors along the rows when the columns are not contiguous
            vec = rng.choice([v for v in (1, 2, 4) if v * e <= 16])
            thr = rng.choice([((8, 4), (4, 1)), ((4, 8), (1, 4)), ((16, 2), (1, 16))])
            access = {"kind": "thread_layout", "layout": f"{_text(thr[0])}:{_text(thr[1])}", "vector": vec}
            along = C > 1 and f(0, 1) - f(0, 0) == 1
            want_offs = []
            for t in range(32):
                x = _eval(thr[0], thr[1], t)
                if vec == 1:
                    cells = [(x % R, x // R)]
                elif along:
                    cells = [(x % R, (x // R) * vec + k) for k in range(vec)]
                else:
                    cells = [((x % (R // vec)) * vec + k, x // (R // vec)) for k in range(vec)]
                if any(not 0 <= i + R * j < R * C for i, j in cells):
                    want_offs = None
                    break
                o = [g(f(i, j)) for i, j in cells]
                if any(y - x1 != 1 for x1, y in zip(o, o[1:], strict=False)) or (o[0] * e) % (vec * e):
                    want_offs = None
                    break
                want_offs.append(o[0])
        lay = f"{_text(shape)}:{_text(stride)}"
        if want_offs is None:
            with pytest.raises(LayoutError):
                bank_access(lay, e, access, swizzle=sw)
            continue
        r = bank_access(lay, e, access, swizzle=sw)
        addrs = [e * o for o in want_offs]
        ab = vec * e
        want = _phases(addrs, ab, {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}[ab])
        assert (r.byte_addresses, r.phases) == (addrs, want), (lay, sw, e, access)
        assert r.banks == [(a // 4) % 32 for a in addrs]
        checked += 1
    assert checked > 60


@pytest.mark.parametrize(("tile", "e", "accesses"), [
    ("(16,32):(32,1)", 16, [{"kind": "ldmatrix", "index": [0, 0], "num": 4}, {"kind": "column", "index": 3}]),
    ("((8,4),64):((64,512),1)", 2, [{"kind": "column", "index": 5}, {"kind": "row", "index": 9, "vector": 8}]),
    ("(48,96):(1,52)", 4, [{"kind": "row", "index": 3}, {"kind": "column", "index": 7}]),
])
def test_doctor_fixes_hold_under_the_brute_force_model(tile, e, accesses):
    from algebra import parse

    lay = parse(tile)
    R, C, f = _view(lay.shape, lay.stride)
    out = solve(e, tile, accesses)
    for c in out["candidates"]:
        if c["kind"] == "swizzle":
            g = _swizzle(*map(int, c["swizzle"][3:-1].split(",")))
            place = lambda i, j, g=g: g(f(i, j))  # noqa: E731
        elif c["kind"] == "padding":
            st = list(lay.stride)
            st[0 if st[1] == 1 else 1] += c["pad"]
            place = _view(lay.shape, tuple(st))[2]
        else:
            continue
        cells = {place(i, j) for i in range(R) for j in range(C)}
        assert len(cells) == R * C and c["footprint_bytes"] == (max(cells) + 1) * e  # a bijection onto its bytes
        for a, got in zip(accesses, c["wavefronts"], strict=True):
            if a["kind"] == "ldmatrix":
                per = 16 // e
                rows = [(a["index"][0] + 8 * (m % 2) + r, a["index"][1] + (m // 2) * per)
                        for m in range(a["num"]) for r in range(8)]
                assert got == sum(_phases([e * place(i, j) for i, j in rows], 16, 8))
            else:
                v = a.get("vector", 1)
                lanes = [(a["index"], t * v) for t in range(min(C // v, 32))] if a["kind"] == "row" else \
                    [(t, a["index"]) for t in range(min(R, 32))]
                assert got == sum(_phases([e * place(i, j) for i, j in lanes], v * e, {1: 32, 2: 32, 4: 32, 8: 16,
                                                                                        16: 8}[v * e]))


def test_umma_descriptor_round_trips_at_random_start_addresses():
    rng = random.Random(8660)
    for _ in range(200):
        fields = {"start_address": 16 * rng.getrandbits(14), "leading_byte_offset": 16 * rng.getrandbits(14),
                  "stride_byte_offset": 16 * rng.getrandbits(14), "layout_type": rng.choice([0, 1, 2, 4, 6]),
                  "base_offset": rng.getrandbits(3), "lbo_mode": rng.getrandbits(1)}
        d = sm100.encode_fields(**fields)
        assert d >> 46 & 3 == 1 and d >> 61 == fields["layout_type"] and d & 0x3FFF == fields["start_address"] >> 4
        back = sm100.decode_umma_desc(d)
        assert {k: back[k] for k in fields} == fields and back["reserved_bits"] == 0


@pytest.mark.parametrize(("tile", "span"), [("(64,2,2):(1,64,128)", None), ("((8,8),64):((64,512),1)", 128)])
def test_tma_accepts_a_dense_box_whatever_its_shape(tile, span):
    # (64,2,2):(1,64,128) is the column-major 64 x 4 box and ((8,8),64):((64,512),1) the row-major 64 x 64 one: TMA
    # writes both (no swizzle, or a mode whose span holds the contiguous extent), as it writes (64,4):(1,64)
    out = solve(2, tile, [{"kind": "column", "index": 0}, {"kind": "tma"}])
    assert out["naive"]["constraints_met"] and out["naive"]["tma"] == "SWIZZLE_NONE"
    best = out["candidates"][0]
    assert best["constraints_met"]
    if span:
        assert best["tma"] == f"SWIZZLE_{span}B" and best["total"] < out["naive"]["total"]


def test_a_swizzle_that_is_a_tma_mode_on_the_tile_is_written_by_tma():
    # fp32 4 x 16 (64-byte rows): Sw<1,2,3> is the 32B mode by name, but on these 256 bytes it is also the 64B
    # mode (Sw<2,4,3> on bytes: source bit 8 lies past the tile), whose span takes the 64-byte rows; the column
    # read is then conflict-free, 1 wavefront against 2 without a swizzle
    out = solve(4, "(4,16):(16,1)", [{"kind": "column", "index": 0}, {"kind": "tma", "box": [4, 16]}])
    best = out["candidates"][0]
    assert (best["swizzle"], best["tma"], best["constraints_met"], best["total"]) == ("Sw<1,2,3>", "SWIZZLE_64B",
                                                                                      True, 1)
    assert best["base_alignment"] >= 512
    tma = _swizzle(2, 4, 3)  # the 64B mode on byte addresses of the dense box
    want = [tma(64 * r) for r in range(4)]
    assert want == [4 * o for o in (0, 16, 36, 52)] == best["per_access"][0]["byte_addresses"]


def test_tile_modes_act_as_the_swizzle_on_the_tile():
    from algebra.doctor.solver_explain import modes_on_tile

    for e in (1, 2, 4, 8):
        for n in range(4, 12):
            for b in (1, 2, 3):
                m = 4 - e.bit_length() + 1
                for span in modes_on_tile((b, m, 3), e, n):
                    other = _swizzle(span.bit_length() - 5, m, 3)
                    assert all(_swizzle(b, m, 3)(x) == other(x) for x in range(1 << n))


def test_fresh_banks_lab_and_doctor_inputs_hold_under_the_brute_force_model():
    """tests/bank_hunt.py's checks (the bank model, the banks lab with ldmatrix and negative-shift swizzles, its
    swizzle and padding fixes, every doctor candidate and a brute-force search over the doctor's space) on seed 9400;
    seeds 9400-9599 ten times each run behind the oracle marker."""
    import bank_hunt

    got = bank_hunt.run(9400, 3)
    assert sum(v for k, v in got.items() if ":" in k) == 0, got


@pytest.mark.oracle
@pytest.mark.parametrize("seed", range(9400, 9600))
def test_fresh_banks_hunt(seed):
    import bank_hunt

    got = bank_hunt.run(seed, 10)
    assert sum(v for k, v in got.items() if ":" in k) == 0, got
