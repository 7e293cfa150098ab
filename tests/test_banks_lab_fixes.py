"""The banks lab's comparison and controls: the swizzle search covers every B the tile allows (and says which bound
stopped it), presets follow the element size and keep what was typed, an already padded tile is compared against
its unpadded self, and ldmatrix .x1/.x2/.x4 and .trans are page controls that work on the default 8x64 tile."""

from __future__ import annotations

import html
import itertools
import re

import pytest

import algebra as A
from algebra import banks as B
from algebra.doctor.solver import solve
from algebra.hw import bankfix
from app.budget import WORK_UNITS, charge, within_budget
from app.services import banks as S

HX = {"HX-Request": "true"}
COL0 = {"kind": "column", "index": 0, "vector": 1}


def titles(text: str) -> list[str]:
    return [html.unescape(t) for t in re.findall(r"<h3>([^<]*)</h3>", text)]


def presets_of(text: str) -> list[str]:
    box = re.search(r'<p class="presets" id="sw-presets".*?</p>', text, re.S).group(0)
    return [html.unescape(s) for s in re.findall(r'data-swizzle="([^"]+)"', box)]


def test_fp32_column_comparison_offers_sw505_the_doctors_first():
    panels = S.compare("(32,32):(32,1)", None, 4, COL0)
    sw = panels[-1]
    assert sw["title"] == "swizzled (Sw<5,0,5>)" and sw["view"].ways == 1 and sw["view"].wavefronts == 1
    doctor = solve(4, "(32,32):(32,1)", [{"kind": "column", "index": 0}])["candidates"][0]
    assert doctor["swizzle"] == "Sw<5,0,5>"


def test_fp32_page_shows_the_swizzle_not_the_old_b3_claim(client):
    text = client.get("/banks", params={"layout": "(32,32):(32,1)", "element_bytes": 4, "access": "column:0"}).text
    assert "swizzled (Sw<5,0,5>)" in titles(text) and "B &lt;= 3" not in text
    assert presets_of(text) == ["Sw<1,2,3>", "Sw<2,2,3>", "Sw<3,2,3>"]


def test_search_reaches_every_b_the_tile_allows():
    lay = A.Layout((32, 32), (32, 1))
    assert B.best_swizzle_fix(lay, 4, COL0).swizzle == (5, 0, 5)
    assert B.best_swizzle_fix(lay, 4, COL0, max_bits=3) is None  # the old bound could not find it
    assert bankfix.widest_swizzle_bits(10) == 5 and bankfix.widest_swizzle_bits(16) == 8
    assert B.best_swizzle_fix(A.Layout((128, 128), (128, 1)), 2, COL0).swizzle == (5, 1, 6)


@pytest.mark.parametrize("rows,cols,eb,kind", list(itertools.product((8, 16, 32), (8, 32, 64), (1, 2, 4, 8),
                                                                     ("column", "row"))))
def test_search_finds_a_fix_whenever_one_exists(rows, cols, eb, kind):
    """Brute force over every Sw<B,M,S> of the tile's bits: a fix exists iff the search returns one (the B >= log2
    ways pruning and the candidate filter drop nothing that works)."""
    lay = A.Layout((rows, cols), (cols, 1))
    access = {"kind": kind, "index": 1, "vector": 1}
    offs = set(A.offsets(lay))
    bits = max(offs).bit_length()
    lanes = B.lane_offsets(lay, eb, access)
    exists = False
    if B.lane_bank_map(lanes, eb).ways > 1:
        for b, m, s in itertools.product(range(1, bits + 1), range(bits), range(1, bits)):
            if s < b or m + s + b > bits:
                continue
            sw = A.Swizzle(b, m, s)
            if {sw(o) for o in offs} == offs and B.lane_bank_map(lanes, eb, sw).ways == 1:
                exists = True
                break
    best = B.best_swizzle_fix(lay, eb, access)
    assert (best is not None) == exists
    if best is not None:
        assert best.analysis.ways == 1


def test_search_is_charged_and_a_spent_budget_is_named():
    with within_budget():
        charge("integer cell", WORK_UNITS - 3000, "the rest of this request")
        panels = S.compare("(32,32):(32,1)", None, 4, COL0)
    why = panels[-1]["why"]
    assert panels[-1]["view"] is None and "stopped at a bound" in why and "work cap" in why and "bank lane" in why


def test_the_search_announces_its_work_before_it():
    heard = []
    B.best_swizzle_fix(A.Layout((32, 32), (32, 1)), 4, COL0, on_work=lambda lanes, cells: heard.append(lanes))
    assert heard and heard[0] == 32 and sum(heard) >= 64


def test_presets_follow_the_element_size_in_the_fragment_too(client):
    q = {"layout": "(16,32):(32,1)", "element_bytes": 4, "access": "column:1", "vector": 1}
    for headers in ({}, HX):
        text = client.get("/banks", params=q, headers=headers).text
        assert presets_of(text) == ["Sw<1,2,3>", "Sw<2,2,3>", "Sw<3,2,3>"]
        links = re.findall(r'<a href="(/banks\?[^"]+)" data-swizzle="Sw', text)
        assert links and all("element_bytes=4" in html.unescape(u) and "layout=%2816%2C32%29%3A%2832%2C1%29"
                             in u for u in links)
    assert 'id="sw-presets" data-e="4"' in text and 'hx-swap-oob="true"' in text
    all_sets = S.all_swizzle_presets()
    assert [s for _, s in all_sets["1"]] == ["Sw<1,4,3>", "Sw<2,4,3>", "Sw<3,4,3>"]
    assert [s for _, s in all_sets["16"]] == ["Sw<1,0,3>", "Sw<2,0,3>", "Sw<3,0,3>"]


def test_a_padded_tile_is_compared_with_its_unpadded_fixes():
    panels = S.compare("(32,32):(36,1)", None, 4, COL0)
    assert [p["title"] for p in panels] == ["as given: padded (+4 elements per row)", "unpadded",
                                           "padded (+1 element per row)",
                                           "swizzled (Sw<5,0,5> on the unpadded (32,32):(32,1))"]
    assert panels[1]["layout"] == "(32,32):(32,1)" and panels[1]["view"].ways == 32
    assert panels[2]["layout"] == "(32,32):(33,1)" and "pads by 4" in panels[2]["note"]
    assert panels[3]["layout"] == "(32,32):(32,1)" and panels[3]["view"].ways == 1
    col_major = S.compare("(32,32):(1,40)", None, 4, {"kind": "row", "index": 0, "vector": 1})
    assert col_major[0]["title"] == "as given: padded (+8 elements per column)"
    assert col_major[1]["layout"] == "(32,32):(1,32)"


def test_a_swizzle_on_a_padded_pitch_is_announced():
    panels = S.compare("Sw<3,2,3> o (32,32):(36,1)", None, 4, COL0)
    assert panels[0]["title"] == "as given: Sw<3,2,3> on the padded pitch (+4 elements per row)"
    assert panels[-1]["title"] == "swizzled (Sw<3,2,3> on the unpadded (32,32):(32,1))"


def test_no_padding_of_zero_and_no_unneeded_swizzle(client):
    panels = S.compare("(32,32):(32,1)", None, 4, {"kind": "row", "index": 0, "vector": 1})
    assert panels[1]["view"] is None and panels[1]["why"].startswith("not needed")
    assert panels[2]["view"] is None and panels[2]["why"].startswith("not needed")
    text = client.get("/banks", params={"layout": "(32,32):(33,1)", "element_bytes": 4, "access": "column:0"}).text
    assert "+0 element" not in text and "padded (+1 element per row)" in titles(text)


def test_unpadded_reads_only_flat_rank2_tiles():
    assert S.unpadded(A.parse("(8,64):(72,1)")) == (A.Layout((8, 64), (64, 1)), 8)
    for text in ("(8,64):(64,1)", "(4,(2,4)):(2,(1,8))", "(8,8):(1,1)", "64:1", "(8,8):(0,1)"):
        lay = A.parse(text)
        assert S.unpadded(lay) == (lay, 0)


def test_ldmatrix_x4_works_on_the_default_8x64_tile(client):
    r = client.post("/api/banks", json={"layout": "(8,64):(64,1)", "element_bytes": 2,
                                        "access": {"kind": "ldmatrix", "index": [0, 0], "num": 4}}).json()
    assert len(r["byte_addresses"]) == 32 and r["phases"] == [8, 8, 8, 8]
    assert r["byte_addresses"][:9] == [128 * i for i in range(8)] + [16]  # matrix 1 sits beside matrix 0
    fixed = client.post("/api/banks", json={"layout": "(8,64):(64,1)", "element_bytes": 2, "swizzle": "Sw<3,3,3>",
                                            "access": {"kind": "ldmatrix", "index": [0, 0], "num": 4}}).json()
    assert fixed["phases"] == [1, 1, 1, 1]
    text = client.get("/banks", params={"access": "ldmatrix:0,0"}).text
    assert 'role="alert"' not in text and "side by side" in text


def test_ldmatrix_on_16_rows_keeps_the_operand_fragment():
    r = B.bank_access(A.Layout((16, 64), (64, 1)), 2, {"kind": "ldmatrix", "num": 4})
    assert [c for c in r.coordinates[::8]] == [(0, 0), (8, 0), (0, 8), (8, 8)]


@pytest.mark.parametrize("num,lanes", [(1, 8), (2, 16), (4, 32)])
def test_ldmatrix_controls_num_and_trans(client, num, lanes):
    q = {"layout": "(8,64):(64,1)", "element_bytes": 2, "access": "ldmatrix:0,0", "num": num}
    plain = client.get("/banks", params=q).text
    trans = client.get("/banks", params=dict(q, trans=1)).text
    for text in (plain, trans):
        assert re.search(r'<select id="ldm-num" name="num">.*?</select>', text, re.S)
        assert f'<option value="{num}" selected>.x{num}</option>' in text
        assert len(re.findall(r'<div class="bank ', text.split('id="compare"')[0])) == 32 * (lanes // 8)
    assert 'name="trans" value="1" checked' in trans and 'name="trans" value="1" checked' not in plain
    assert f"m8n8.x{num}.trans.shared.b16" in trans and f"m8n8.x{num}.shared.b16" in plain
    assert ("trans=1" in re.search(r'id="permalink" href="([^"]+)"', trans).group(1)) is True
    verdict = lambda t: re.search(r'id="verdict".*?data-k="wavefronts">(\d+)<', t, re.S).group(1)  # noqa: E731
    assert verdict(plain) == verdict(trans) == str(8 * num)  # 8 rows of one column per matrix: 8-way each


def test_ldmatrix_trans_delivers_columns():
    acc = S.parse_access("ldmatrix:0,0", 1, 4, True)
    story = S.ldmatrix_story(acc, 8, 2)
    assert story["lanes"][5]["receives"] == [(2, 1), (3, 1)]  # lane 5: rows 2..3 of column 1 (.trans)
    assert S.ldmatrix_story(S.parse_access("ldmatrix:0,0", 1, 4, False), 8, 2)["lanes"][5]["receives"] == \
        [(1, 2), (1, 3)]
    r = B.bank_access(A.Layout((8, 64), (64, 1)), 2, acc)
    assert r.phases == B.bank_access(A.Layout((8, 64), (64, 1)), 2, dict(acc, trans=False)).phases


def test_ldmatrix_bad_inputs_are_refused(client):
    with pytest.raises(A.LayoutError, match="arrangement"):
        B.bank_access(A.Layout((16, 64), (64, 1)), 2, {"kind": "ldmatrix", "num": 4, "arrange": "diagonal"})
    with pytest.raises(A.LayoutError, match="row arrangement"):
        B.bank_access(A.Layout((16, 64), (64, 1)), 2, {"kind": "ldmatrix", "num": 4, "row": 8})
    r = client.post("/api/banks", json={"layout": "(8,64):(64,1)", "access": {"kind": "ldmatrix", "num": 3}})
    assert r.status_code == 422
    r = client.post("/api/banks", json={"layout": "(8,64):(64,1)", "access": {"kind": "ldmatrix", "trans": "yes"}})
    assert r.status_code == 422
    text = client.get("/banks", params={"access": "ldmatrix:4,0"}, headers=HX).text
    assert 'role="alert"' in text and "outside the 8x64 tile" in text


def test_big_tile_comparison_says_why_a_grid_is_not_drawn(client):
    text = client.get("/banks", params={"layout": "(256,256):(256,1)", "element_bytes": 2,
                                        "access": "column:0"}).text
    assert "swizzled (Sw<5,1,7>)" in titles(text) and "work budget has left" in text
