"""The bank and sector models on tiles with negative strides, and the banks lab's and sectors panel's typed numbers,
against a brute-force model written from the hardware rules (seeds 14100-14199).

The hardware rules, written here independently of ``algebra.hw``: 32 banks of 4 bytes; a warp's request is split
into phases of 32 (accesses up to 4 bytes), 16 (8 bytes) or 8 lanes (16 bytes; ldmatrix: one 8x8 matrix, 8 rows of
16 bytes); in a phase each distinct 4-byte word costs one slot of its bank (same-word lanes share it) and the phase
costs its fullest bank. Global memory moves 32-byte sectors. A layout's offsets are relative to the tensor's
pointer, which sits at a 128-byte boundary (bank 0, a sector boundary), so a negative stride reaches below the
pointer: byte address ``e * offset`` is negative there, and its bank is still ``floor(address / 4) mod 32``.
"""

from __future__ import annotations

import random

import pytest

from algebra import LayoutError
from algebra.hw.bank_access import bank_access
from algebra.hw.coalescing import partition_sectors
from tests.test_banks_bruteforce import _phases  # the brute-force bank model, written once for the tests

PER_PHASE = {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}


def _banks(client, layout, eb, swizzle=None, **access):
    return client.post("/api/banks", json={"layout": layout, "swizzle": swizzle, "element_bytes": eb,
                                           "access": access})


def test_a_reversed_fp32_tile_column_is_32_way_as_the_hardware_counts(client):
    # (32,32):(-32,1): row i starts 128*i bytes below the pointer, so a column read still lands in one bank
    j = _banks(client, "(32,32):(-32,1)", 4, kind="column", index=5).json()
    want = [4 * (-32 * i + 5) for i in range(32)]
    assert j["byte_addresses"] == want
    assert j["banks"] == [5] * 32 and j["ways"] == 32 and j["wavefronts"] == 32
    j = _banks(client, "(32,32):(-33,1)", 4, kind="column", index=0).json()
    assert j["ways"] == 1 and sorted(j["banks"]) == list(range(32))


@pytest.mark.parametrize("seed", range(14100, 14106))
def test_negative_stride_tiles_match_the_brute_force_model(client, seed):
    rng = random.Random(seed)
    for _ in range(25):
        rows, cols = rng.choice([8, 16, 32]), rng.choice([16, 32, 64])
        eb = rng.choice([1, 2, 4, 8, 16])
        d0 = rng.choice([-cols, -cols - rng.randint(1, 8), cols])
        d1 = rng.choice([1, -1]) if d0 > 0 else 1
        layout = f"({rows},{cols}):({d0},{d1})"
        kind = rng.choice(["column", "row"])
        vec = rng.choice([v for v in (1, 2, 4) if v * eb <= 16]) if kind == "row" and d1 == 1 else 1
        idx = rng.randrange(cols if kind == "column" else rows)
        if kind == "column":
            addrs = [eb * (i * d0 + idx * d1) for i in range(min(rows, 32))]
        else:
            addrs = [eb * (idx * d0 + t * vec * d1) for t in range(min(cols // vec, 32))]
        r = _banks(client, layout, eb, kind=kind, index=idx, vector=vec)
        if any(a % (vec * eb) for a in addrs):  # an odd pitch misaligns a vector: no such instruction
            assert r.status_code == 422 and "not a multiple" in r.json()["detail"], (layout, eb, vec)
            continue
        ph = _phases(addrs, vec * eb, PER_PHASE[vec * eb])
        assert r.status_code == 200, (layout, eb, kind, r.text)
        j = r.json()
        assert j["byte_addresses"] == addrs
        assert j["banks"] == [(a // 4) % 32 for a in addrs]
        assert (j["ways"], j["wavefronts"], j["phases"]) == (max(ph), sum(ph), ph), (layout, eb, kind, idx, vec)


def test_ldmatrix_on_a_reversed_tile_reads_rows_below_the_pointer():
    # (16,64):(-64,1) fp16: rows of 128 bytes, row i at -128*i bytes: each 8-row matrix hits one 4-bank group
    r = bank_access("(16,64):(-64,1)", 2, {"kind": "ldmatrix", "num": 4, "row": 0, "col": 0})
    assert r.byte_addresses[:8] == [-128 * i for i in range(8)]
    assert r.phases == _phases(r.byte_addresses, 16, 8) == [8, 8, 8, 8]


def test_explicit_offsets_must_be_offsets_of_the_tile_when_strides_are_negative(client):
    # (32,128):(-128,1) fp16 covers offsets -3968 .. 127: -5 is an element of row 1, 200 is no element at all
    ok = _banks(client, "(32,128):(-128,1)", 2, kind="offsets", index=[-5, 0, 127])
    assert ok.status_code == 200, ok.text
    assert ok.json()["byte_addresses"] == [-10, 0, 254]
    bad = _banks(client, "(32,128):(-128,1)", 2, kind="offsets", index=[200])
    assert bad.status_code == 422
    assert "[-3968, 128)" in bad.json()["detail"]


def test_sectors_of_a_reversed_partition():
    # 32 threads at offsets 0, -1, ..., -31 of fp32: bytes -124 .. 3, the four sectors -4 .. 0
    from algebra import parse

    p = partition_sectors(parse("(32,4):(-1,32)"), 4)
    first = p.instructions[0]
    assert first.byte_addresses[:3] == [0, -4, -8]
    assert first.sectors == [-4, -3, -2, -1, 0]
    assert first.bytes_used == 128 and first.num_sectors == 5


@pytest.mark.parametrize("seed", range(14110, 14113))
def test_sector_counts_with_negative_strides_match_the_brute_force(client, seed):
    rng = random.Random(seed)
    for _ in range(20):
        t0, t1 = rng.choice([(32, 1), (8, 4), (4, 8)])
        s0, s1 = rng.choice([-1, 1, -2, 4]), rng.choice([-8, 8, -32, 32])
        nval, vs = rng.choice([1, 2, 4]), rng.choice([64, -64, 128])
        eb = rng.choice([1, 2, 4, 8])
        tv = f"(({t0},{t1}),{nval}):(({s0},{s1}),{vs})"
        r = client.post("/api/sectors", json={"tv": tv, "element_bytes": eb, "vector": 1})
        assert r.status_code == 200, (tv, r.text)
        total = 0
        for v in range(nval):
            addrs = [eb * ((t % t0) * s0 + (t // t0) * s1 + v * vs) for t in range(32)]
            total += len({(a + k) // 32 for a in addrs for k in range(eb)})
        assert r.json()["total_sectors"] == total, tv


def test_the_raw_bank_model_still_refuses_a_negative_absolute_address():
    from algebra.banks import analyze

    with pytest.raises(LayoutError, match="negative"):
        analyze([-4])


MENU_VALUES = [
    ("element_bytes=3", "element_bytes: '3' is not one of 1, 2, 4, 8, 16"),
    ("element_bytes=%D9%A4", "element_bytes: '\u0664' is not one of 1, 2, 4, 8, 16"),
    ("element_bytes=four", "element_bytes: 'four' is not one of 1, 2, 4, 8, 16"),
    ("element_bytes=4&access=row:0&vector=3", "vector: '3' is not one of 1, 2, 4"),
    ("element_bytes=4&access=row:0&vector=8", "vector: '8' is not one of 1, 2, 4"),
    ("element_bytes=2&access=ldmatrix:0,0&num=3", "num: '3' is not one of 1, 2, 4"),
    ("element_bytes=2&access=ldmatrix:0,0&trans=2", "trans: '2' is not one of 0, 1")]


@pytest.mark.parametrize(("query", "needle"), MENU_VALUES)
def test_the_banks_page_names_a_menu_value_it_does_not_offer(client, query, needle):
    """A menu value no form sends (a hand-edited permalink) gets every page's answer (app.page_query): 200, the
    field named in the page, the value kept in its form field."""
    import html

    r = client.get(f"/banks?layout=(32,32):(32,1)&{query}")
    assert r.status_code == 200
    assert needle in html.unescape(r.text), query
    assert 'aria-invalid="true"' in r.text


@pytest.mark.parametrize(("query", "needle"), [
    ("element_bytes=4&access=column:%D9%A4", "is not kind:integer(s)"),
    ("element_bytes=4&access=column:1_0", "is not kind:integer(s)"),
    ("element_bytes=4&access=offsets:%EF%BC%91", "is not kind:integer(s)"),
])
def test_the_banks_page_names_a_bad_number_instead_of_answering_another_question(client, query, needle):
    import html

    r = client.get(f"/banks?layout=(32,32):(32,1)&{query}")
    assert r.status_code == 200
    text = html.unescape(r.text)
    assert needle in text, query
    assert 'id="permalink"' not in r.text  # no analysis is shown for a question that was not asked


def test_the_banks_page_takes_every_legal_number(client):
    for e, vec in ((1, 16), (2, 8), (4, 4), (8, 2), (16, 1)):
        r = client.get(f"/banks?layout=(32,64):(64,1)&element_bytes={e}&access=row:0&vector={vec}")
        assert "is not one of" not in r.text, (e, vec)
    r = client.get("/banks?layout=(16,64):(64,1)&element_bytes=2&access=ldmatrix:0,0&num=2&trans=1")
    assert "is not one of" not in r.text


@pytest.mark.parametrize(("eb", "needle"), [("3", "'3' is not one of 1, 2, 4, 8, 16"),
                                            ("%D9%A4", "'\u0664' is not one of 1, 2, 4, 8, 16")])
def test_the_sectors_panel_names_a_bad_element_size(client, eb, needle):
    import html

    r = client.get(f"/tv?part=((16,2),4):((1,16),32)&eb={eb}")
    assert needle in html.unescape(r.text)


def test_the_sectors_api_names_the_element_size_rule(client):
    r = client.post("/api/sectors", json={"tv": "(32,4):(1,32)", "element_bytes": 3})
    assert r.status_code == 422
    assert "element_bytes" in r.text and "access_bytes" not in r.text


def test_a_row_with_no_whole_vector_is_named(client):
    r = _banks(client, "(4,2):(2,1)", 4, kind="row", index=0, vector=4)
    assert r.status_code == 422
    detail = r.json()["detail"]
    assert "2 columns" in detail and "vector of 4" in detail


def _keeps(tile, b, m, s):
    ymask = ((1 << b) - 1) << (m + s)
    return all((o ^ ((o & ymask) >> s)) in tile for o in tile)


def test_the_compared_swizzle_keeps_the_tile_in_its_storage():
    # 5x20 16-byte elements: Sw<3,0,3> is conflict-free on column 7 but sends offsets 96..99 to 100..103, past the
    # 100 elements of the tile; a fix must map the tile onto itself
    from app.services.banks import compare

    panels = {p["title"].split(" ")[0]: p for p in compare("(5,20):(20,1)", None, 16, {"kind": "column", "index": 7})}
    sw = panels["swizzled"]
    if sw["view"] is not None:
        b, m, s = map(int, sw["view"].swizzle[3:-1].split(","))
        assert _keeps({20 * i + j for i in range(5) for j in range(20)}, b, m, s), sw["view"].swizzle
        assert sw["view"].ways == 1


@pytest.mark.parametrize("seed", range(14140, 14143))
def test_every_compared_swizzle_keeps_odd_tiles_in_their_storage(seed):
    from app.services.banks import compare

    rng = random.Random(seed)
    for _ in range(40):
        rows, cols = rng.choice([5, 6, 12, 24, 40]), rng.choice([10, 20, 24, 40, 48, 96])
        eb = rng.choice([1, 2, 4, 8, 16])
        access = {"kind": "column", "index": rng.randrange(cols), "vector": 1}
        panels = {p["title"].split(" ")[0]: p for p in compare(f"({rows},{cols}):({cols},1)", None, eb, access)}
        view = panels["swizzled"]["view"]
        if view is not None:
            b, m, s = map(int, view.swizzle[3:-1].split(","))
            assert _keeps({cols * i + j for i in range(rows) for j in range(cols)}, b, m, s), (rows, cols, eb, view)


def test_fixes_of_a_reversed_tile_are_fixes():
    from app.services.banks import compare

    panels = {p["title"].split(" ")[0]: p for p in compare("(32,32):(-32,1)", None, 4, {"kind": "column", "index": 0})}
    assert panels["naive"]["view"].ways == 32
    padded = panels["padded"]["view"]
    assert padded.layout == "(32,32):(-33,1)" and padded.ways == 1  # |pitch| grows: rows stay apart
    sw = panels["swizzled"]
    assert "no Sw<B,M,S> removes the conflict" not in sw["why"]  # the search does not read offsets below 0
    panels = {p["title"].split(" ")[0]: p for p in compare("(8,64):(-64,1)", None, 2, {"kind": "column", "index": 0})}
    view = panels["swizzled"]["view"]
    b, m, s = map(int, view.swizzle[3:-1].split(","))
    assert view.ways == 1 and _keeps({-64 * i + j for i in range(8) for j in range(64)}, b, m, s)


def test_the_xor_table_of_a_reversed_swizzled_tile_is_drawn(client):
    r = client.get("/banks?layout=(8,64):(-64,1)&element_bytes=2&swizzle=Sw<3,3,3>&access=column:0")
    assert r.status_code == 200 and 'id="xor-table"' in r.text


def test_a_swizzled_tile_past_the_drawing_budget_still_gets_its_analysis(client):
    # 256x256 swizzled: enumerating (8 units a cell) and drawing (24) the tile is past one request's work budget;
    # the bank map is 32 lanes and must still be shown, with why the grid is not drawn
    import html

    r = client.get("/banks?layout=(256,256):(256,1)&element_bytes=4&swizzle=Sw<2,3,4>&access=column:1&compare=0")
    text = html.unescape(r.text)
    assert r.status_code == 200 and 'id="permalink"' in r.text, text[text.find('role="alert"'):][:300]
    assert 'id="grid-note"' in r.text and "work cap" in text


def test_the_doctor_names_why_it_does_not_take_a_reversed_tile(client):
    r = client.post("/api/solve/smem", json={"element_bytes": 4, "tile": "(32,32):(-32,1)",
                                             "accesses": [{"name": "c", "kind": "column", "index": 0}]})
    assert r.status_code == 422
    assert "offset -992" in r.json()["detail"] and "negative stride" in r.json()["detail"]


def test_a_swizzled_partition_at_the_table_cap_is_answered_within_the_budget(client):
    # 65,536 (thread, value) pairs, the cap of a swizzled partition: it used to be read pair by pair and ran past
    # the request's CPU budget; the answer is the brute-force count
    tv = "Sw<3,3,3> o ((32,64),32):((32,1024),1)"
    r = client.post("/api/sectors", json={"tv": tv, "element_bytes": 4, "vector": 1})
    assert r.status_code == 200, r.text

    def sw(x):
        return x ^ ((x & (7 << 6)) >> 3)

    total = 0
    for v in range(32):
        addrs = [4 * sw(32 * t + v) for t in range(32)]  # warp 0: threads 0..31 of the (32,64) mode
        total += len({(a + k) // 32 for a in addrs for k in range(4)})
    assert r.json()["total_sectors"] == total


@pytest.mark.parametrize("seed", range(14190, 14192))
def test_sectors_and_lines_match_the_brute_force(client, seed):
    rng = random.Random(seed)
    for _ in range(20):
        t0 = rng.choice([32, 8, 4])
        s0, s1 = rng.choice([1, 2, 3, 8]), rng.choice([16, 64, 100, 256])
        nval, vs = rng.choice([1, 2]), rng.choice([1, 512])
        eb = rng.choice([1, 2, 4, 8, 16])
        tv = f"(({t0},{32 // t0}),{nval}):(({s0},{s1}),{vs})"
        r = client.post("/api/sectors", json={"tv": tv, "element_bytes": eb, "vector": 1})
        assert r.status_code == 200, (tv, r.text)
        sectors = lines = 0
        for v in range(nval):
            addrs = [eb * ((t % t0) * s0 + (t // t0) * s1 + v * vs) for t in range(32)]
            touched = {(a + k) // 32 for a in addrs for k in range(eb)}
            sectors, lines = sectors + len(touched), lines + len({x // 4 for x in touched})
        j = r.json()
        assert (j["total_sectors"], j["total_lines"]) == (sectors, lines), tv
        assert [i["lines"] for i in j["instructions"]] == [
            len({(eb * ((t % t0) * s0 + (t // t0) * s1 + v * vs) + k) // 128 for t in range(32) for k in range(eb)})
            for v in range(nval)]


def test_the_sectors_panel_shows_the_lines(client):
    # fp32, 32 threads on 32 consecutive offsets per value: 4 sectors, one 128-byte line per instruction
    r = client.get("/tv?part=((16,2),4):((1,16),32)&eb=4")
    assert 'id="total-sectors">16<' in r.text and 'id="total-lines">4<' in r.text


@pytest.mark.parametrize(("typed", "selected"), [("16", 'value="16" selected'), ("3", 'value="3" selected'),
                                                 ("%D9%A4", 'value="\u0664" selected')])
def test_the_doctor_permalink_keeps_the_element_size_it_names(client, typed, selected):
    # 16 B is a size the solver takes; 3 and a unicode digit are kept as typed, so the solver's 422 names the rule
    # instead of the page solving for the preset's 2 B
    r = client.get(f"/doctor?tile=(32,32):(32,1)&element_bytes={typed}")
    menu = r.text.split('id="s-eb"', 1)[1].split("</select>", 1)[0]
    assert selected in menu and menu.count(" selected") == 1
    body = {"element_bytes": 3, "tile": "(32,32):(32,1)", "accesses": [{"name": "c", "kind": "column", "index": 0}]}
    assert "must be one of 1, 2, 4, 8, 16" in client.post("/api/solve/smem", json=body).json()["detail"]


@pytest.mark.parametrize("seed", range(14196, 14198))
def test_a_reversed_tile_costs_what_its_buffer_costs_from_its_start(seed):
    # the kernel's buffer starts at the tile's lowest offset, rounded down to a 128-byte line: every address moves
    # by the same multiple of 128 bytes, which keeps each word's bank, so the model's count is the count of the raw
    # (non-negative) addresses the GPU lab measures
    from algebra.banks import analyze

    rng = random.Random(seed)
    for _ in range(30):
        rows, cols, eb = rng.choice([8, 16, 32]), rng.choice([32, 64]), rng.choice([1, 2, 4, 8])
        pitch = -(cols + rng.choice([0, 0, 1, 4, 8]))
        r = bank_access(f"({rows},{cols}):({pitch},1)", eb, {"kind": "column", "index": rng.randrange(cols)})
        shift = -(min(r.byte_addresses) // 128) * 128
        raw = analyze([a + shift for a in r.byte_addresses], access_bytes=eb)
        assert (raw.banks, raw.phases) == (r.banks, r.phases)
