"""HTML pages: permalinks restore state, htmx requests get the result block only, bad input is inline (200)."""

from __future__ import annotations

import re

import pytest

HX = {"HX-Request": "true"}


def test_explorer_permalink_renders_grid(client, read_grid):
    r = client.get("/", params={"layout": "(4,(2,4)):(2,(1,8))"})
    assert r.status_code == 200
    assert 'id="grid-explorer"' in r.text and "<html" in r.text
    assert 'value="(4,(2,4)):(2,(1,8))"' in r.text
    g = read_grid(r.text, "grid-explorer")
    assert (g.rows, g.cols) == (4, 8) and sorted(int(v) for row in g.text for v in row) == list(range(32))
    assert g.text[1][6] == "26"  # column 6 is (0, 3) of mode (2,4): 1*2 + 0*1 + 3*8
    assert [j for j, (_, cls) in enumerate(g.col_labels) if "l1" in cls] == [2, 4, 6]  # the (2,4) mode's boundary


def test_explorer_htmx_fragment(client, read_grid):
    r = client.get("/", params={"layout": "(2,3):(3,1)"}, headers=HX)
    assert r.status_code == 200 and "<html" not in r.text and 'id="grid-explorer"' in r.text
    assert read_grid(r.text, "grid-explorer").text == [["0", "1", "2"], ["3", "4", "5"]]


def test_explorer_bad_input_inline(client):
    r = client.get("/", params={"layout": "(4,8"}, headers=HX)
    assert r.status_code == 200 and 'role="alert"' in r.text and "grid-explorer" not in r.text


def test_explorer_render_cap_message(client):
    r = client.get("/", params={"layout": "(512,256):(256,1)"}, headers=HX)
    assert r.status_code == 200 and "65,536" in r.text and "grid-explorer" not in r.text
    assert "131,072" in r.text  # the size is still shown


def test_workbench_permalink(client):
    r = client.get("/algebra", params={"op": "composition", "a": "(6,2):(8,2)", "b": "(4,3):(3,1)"})
    assert r.status_code == 200
    assert "((2,2),3):((24,2),8)" in r.text
    for gid in ("grid-a", "grid-b", "grid-r"):
        assert f'id="{gid}"' in r.text
    assert '"by":"via"' in r.text  # result cells link back through B to A


def test_workbench_refusal_inline(client):
    r = client.get("/algebra", params={"op": "complement", "a": "(4,8", "b": ""}, headers=HX)
    assert r.status_code == 200 and 'role="alert"' in r.text


def test_banks_permalink_contract_example(client):
    r = client.get("/banks", params={"layout": "(8,64):(64,1)", "element_bytes": "2", "swizzle": "Sw<3,3,3>",
                                     "access": "column:0"})
    assert r.status_code == 200
    m = re.search(r'id="verdict".*?data-k="ways">(\d+)<.*?data-k="wavefronts">(\d+)<', r.text, re.S)
    assert m and m.groups() == ("1", "1")
    assert 'id="xor-table"' in r.text and 'id="compare"' in r.text


def test_banks_naive_is_eight_way(client):
    r = client.get("/banks", params={"layout": "(8,64):(64,1)", "element_bytes": "2", "access": "column:0"},
                   headers=HX)
    m = re.search(r'id="verdict".*?data-k="ways">(\d+)<.*?data-k="wavefronts">(\d+)<', r.text, re.S)
    assert m and m.groups() == ("8", "8")


@pytest.mark.parametrize("access", ["diagonal:1", "column:x", "column:999", "ldmatrix:7,60"])
def test_banks_bad_access_inline(client, access):
    r = client.get("/banks", params={"layout": "(8,64):(64,1)", "access": access}, headers=HX)
    assert r.status_code == 200 and 'role="alert"' in r.text


def test_tv_permalink(client):
    r = client.get("/tv", params={"atom": "SM80_16x8x16_F32F16F16F32_TN", "operand": "C"})
    assert r.status_code == 200 and 'id="grid-tv"' in r.text
    assert "T0V0" in r.text and "T31V3" in r.text and 'data-thread="31"' in r.text


def test_tv_sector_panel_seed_numbers(client):
    r = client.get("/tv", params={"part": "((8,4),(2,2)):((2,32),(1,16))", "eb": "4", "vector": "1"})
    assert re.search(r'id="utilization">50 %<', r.text)
    r = client.get("/tv", params={"part": "((16,2),4):((1,16),32)", "eb": "4", "vector": "1"})
    assert re.search(r'id="utilization">100 %<', r.text)


def test_tv_unknown_atom_inline(client):
    r = client.get("/tv", params={"atom": "SM99_X"})  # a name the atom menu does not offer: app.page_query
    assert r.status_code == 200 and 'role="alert"' in r.text and '<li data-field="atom">' in r.text
    assert '<option value="SM99_X" selected disabled>' in r.text


def test_openapi_lists_the_contract_routes(client):
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/api/layout", "/api/algebra", "/api/banks", "/api/atoms", "/api/sectors"} <= set(paths)


@pytest.mark.parametrize(("target", "needle", "absent"), [("result", 'id="grid-tv"', 'id="grid-tiled"'),
                                                          ("sectors", 'id="utilization"', 'id="grid-tv"'),
                                                          ("tiled", 'id="grid-tiled"', 'id="grid-tv"'),
                                                          ("hopper", 'id="grid-smem"', 'id="grid-tiled"')])
def test_tv_panels_answer_their_own_fragment(client, target, needle, absent):
    r = client.get("/tv", headers={**HX, "HX-Target": target})
    assert r.status_code == 200 and "<html" not in r.text and needle in r.text and absent not in r.text


def test_tv_page_has_every_panel_and_copy_buttons(client):
    # the tiled section comes closed (its grid when opened, tests/test_pages_tv_lazy.py); a permalink naming one of
    # its fields renders it open, with the other panels
    r = client.get("/tv", params={"tatom": "SM80_CP_ASYNC_CACHEALWAYS_16B"})
    for gid in ("grid-tv", "grid-tiled", "grid-smem"):
        assert f'id="{gid}"' in r.text
    assert "make_tiled_copy(Copy_Atom&lt;SM80_CP_ASYNC_CACHEALWAYS_16B, half_t&gt;{}, thr, val)" in r.text
    assert "cute.make_layout(((4, 8), (2, 2)), stride=((32, 1), (16, 8)))" in r.text


def test_tv_hopper_panel_names_the_failing_rule(client, read_grid):
    q = {"hmajor": "K", "hspan": "128", "hbits": "16", "tbox": "64,128"}
    r = client.get("/tv", params=q, headers={**HX, "HX-Target": "hopper"})
    m = re.search(r'id="tma-verdict"[^>]*>(.*?)</p>', r.text, re.S)
    assert m and "box_inner_swizzle" in m.group(1) and "refuses" in m.group(1)
    assert "GMMA::Layout_K_SW128_Atom&lt;half_t&gt;" in r.text
    assert "SmemLayoutAtomKind.K_SW128, cutlass.Float16" in r.text  # copy as CuTe DSL
    assert "make_shape(Int&lt;64&gt;{}, Int&lt;64&gt;{})" in r.text  # copy as CuTe C++: tile_to_shape to 64 x 64
    g = read_grid(r.text, "grid-smem")
    # Sw<3,3,3> o (8,64):(64,1): row r's 16-byte chunks (8 fp16) are XOR-ed with r
    assert (g.rows, g.cols) == (8, 64)
    assert [int(g.text[r][0]) for r in range(8)] == [64 * r + 8 * r for r in range(8)]
    assert re.search(r'id="desc-value">0x4000004000010000<', r.text)  # LBO 16 B, SBO 1024 B, SWIZZLE_128B
    r = client.get("/tv", params={**q, "tbox": "64,64"}, headers={**HX, "HX-Target": "hopper"})
    assert "accepts these arguments" in r.text


@pytest.mark.parametrize(("q", "target"), [({"ttensor": "(4096,(2,2)):(4,(1,2))"}, "hopper"), ({"tbox": "x"}, "hopper"),
                                           ({"dmn": "7"}, "hopper"), ({"tthr": "((("}, "tiled"),
                                           ({"tatom": "SM80_16x8x16_F32F16F16F32_TN", "tlayout": "(2,2"}, "tiled")])
def test_tv_bad_panel_input_is_inline(client, q, target):
    r = client.get("/tv", params=q, headers={**HX, "HX-Target": target})
    assert r.status_code == 200 and 'role="alert"' in r.text
    assert client.get("/tv", params=q).status_code == 200


def test_tv_unknown_choices_are_refused_naming_the_field(client):
    """A value no menu offers is not read as the default (that drew SW128 for hspan=48): named in the page."""
    r = client.get("/tv", params={"hspan": "48", "hmajor": "Q", "hbits": "7"}, headers={**HX, "HX-Target": "hopper"})
    assert r.status_code == 200 and "hmajor" in r.text and "is not one of K, MN" in r.text, r.text[:300]
    r = client.get("/tv", params={"hspan": "32", "hmajor": "k", "hbits": "16"}, headers={**HX, "HX-Target": "hopper"})
    assert r.status_code == 200 and "GMMA::Layout_K_SW32_Atom&lt;half_t&gt;" in r.text
