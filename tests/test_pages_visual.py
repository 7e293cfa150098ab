"""The visualizer's fixes and walkthroughs through the API and the pages: the banks lab's thread_layout access and
per-thread widths, the sector form's errors, the explorer's error slot while typing, silent results that now say
why, the banks lab's defaults, the GPU lab's messages, and the copy / MMA walkthroughs (checked against
``algebra.hw.atoms_tiled`` directly)."""

from __future__ import annotations

import re

import algebra as A
from algebra import atoms

HX = {"HX-Request": "true"}


def outlined(g) -> set[tuple[int, int]]:
    """The (row, column) of every outlined cell of a parsed grid."""
    return {ij for ij, (_, cls) in g.cells.items() if "acc" in cls}


def banks(client, access: dict, layout: str = "(8,64):(64,1)", e: int = 2):
    return client.post("/api/banks", json={"layout": layout, "element_bytes": e, "access": access})


def test_thread_layout_counts_every_thread_and_honours_the_width(client):
    r = banks(client, {"kind": "thread_layout", "layout": "(8,4):(4,1)"})
    assert r.status_code == 200 and len(r.json()["banks"]) == 32  # not size(shape[0]) = 8 lanes
    r8 = banks(client, {"kind": "thread_layout", "layout": "(8,4):(4,1)", "vector": 8})
    body = r8.json()
    assert r8.status_code == 200 and body["access_bytes"] == 16 and len(body["banks"]) == 32
    assert body["phases"] == [body["phases"][0]] * 4  # 16-byte accesses: four phases of 8 threads
    # thread t reads the 8-element vector at 1-D coordinate thr(t) of the 8 x 8 grid of vectors
    thr = A.parse("(8,4):(4,1)")
    expect = [(thr(t) % 8) * 64 + (thr(t) // 8) * 8 for t in range(32)]
    assert body["offsets"] == expect


def test_illegal_per_thread_width_is_a_clear_422(client):
    r = banks(client, {"kind": "row", "index": 0, "vector": 16})
    assert r.status_code == 422
    msg = r.json()["detail"]
    assert "256 bits" in msg and "1 to 8 elements" in msg and "access_bytes" not in msg


def test_banks_page_offers_only_legal_widths(client):
    def widths(e: int) -> list[str]:
        html = client.get("/banks", params={"element_bytes": e}).text
        menu = re.search(r'<select id="vec"[^>]*>(.*?)</select>', html, re.S).group(1)
        return re.findall(r'<option value="(\d+)"', menu)

    assert widths(2) == ["1", "2", "4", "8"]
    assert widths(4) == ["1", "2", "4"]
    assert widths(16) == ["1"]
    page = client.get("/banks", params={"element_bytes": 2, "vector": 16, "access": "row:0"}, headers=HX).text
    assert "vector: &#39;16&#39; is not one of 1, 2, 4, 8" in page and "at most 16 bytes" in page  # the rule, named


def test_sector_form_reports_the_layout_not_the_vector(client):
    r = client.get("/tv", params={"part": "(8,4):(4,1", "eb": 4, "vector": 1},
                   headers={**HX, "HX-Target": "sectors"})
    assert "TV layout" in r.text and "is not an integer" not in r.text and "vector:" not in r.text
    r = client.get("/tv", params={"part": "(8,4):(4,1)", "eb": 4, "vector": "x"},
                   headers={**HX, "HX-Target": "sectors"})
    assert "vector: &#39;x&#39; is not a whole number" in r.text


def test_explorer_error_while_typing_leaves_the_grid(client):
    r = client.get("/", params={"layout": "(4,8):(8"}, headers=HX)
    assert r.status_code == 200 and r.headers["HX-Retarget"] == "#explorer-error"
    assert r.headers["HX-Reswap"] == "innerHTML"
    assert "role=\"alert\"" in r.text and "grid-explorer" not in r.text and "last layout that parsed" in r.text
    ok = client.get("/", params={"layout": "(4,8):(8,1)"}, headers=HX)
    assert 'id="explorer-error"' in ok.text and 'hx-swap-oob="true"' in ok.text and "grid-explorer" in ok.text
    full = client.get("/", params={"layout": "(4,8):(8"})  # a page load shows the error in the slot
    assert full.status_code == 200 and "unexpected end" in full.text


def test_banks_error_while_typing_leaves_the_analysis(client):
    r = client.get("/banks", params={"layout": "(8,64):(64", "element_bytes": 2}, headers=HX)
    assert r.headers["HX-Retarget"] == "#banks-error" and "grid-banks" not in r.text and "role=\"alert\"" in r.text
    ok = client.get("/banks", params={"layout": "(8,64):(64,1)", "element_bytes": 2}, headers=HX)
    assert 'id="banks-error"' in ok.text and 'hx-swap-oob="true"' in ok.text and 'id="grid-banks"' in ok.text


def test_local_partition_refuses_a_thread_out_of_range(client):
    r = client.post("/api/algebra", json={"op": "local_partition", "args": ["(8,4):(4,1)", "(4,8):(8,1)", "99"]})
    assert r.status_code == 422 and "thread index 99 is out of range 0..31" in r.json()["detail"]
    ok = client.post("/api/algebra", json={"op": "local_partition", "args": ["(8,4):(4,1)", "(4,8):(8,1)", "31"]})
    assert ok.status_code == 200


def test_a_divide_that_outgrows_a_says_why(client):
    html = client.get("/algebra", params={"op": "logical_divide", "a": "32:1", "b": "3:1"}).text
    note = re.search(r'<p class="msg note op-note">(.*?)</p>', html, re.S).group(1)
    assert "32-cell A draws 33 cells" in note and "3 does not divide" in note
    html = client.get("/algebra", params={"op": "logical_divide", "a": "32:1", "b": "4:1"}).text
    assert "op-note" not in html
    api = client.post("/api/algebra", json={"op": "logical_divide", "args": ["32:1", "3:1"]}).json()
    assert api["result"] == "(3,11):(1,3)" and "draws 33 cells" in api["notes"][0]
    assert client.post("/api/algebra", json={"op": "logical_divide", "args": ["32:1", "4:1"]}).json()["notes"] == []


def test_a_highlighted_by_b(client, read_grid):
    html = client.get("/algebra", params={"op": "logical_divide", "a": "(8,8):(8,1)", "b": "<2:1, 4:1>"}).text
    g = read_grid(html, "grid-tiles").cells
    z = A.zipped_divide(A.parse("(8,8):(8,1)"), (A.Layout(2), A.Layout(4)))
    tile = {o: k // A.size(z[0]) for k, o in reversed(list(enumerate(A.offsets(z))))}
    a = A.parse("(8,8):(8,1)")
    assert all(g[i, j][0] == str(tile[a((i, j))]) for i in range(8) for j in range(8))
    assert len({text for text, _ in g.values()}) == 8  # eight 2x4 tiles


def test_banks_tile_over_the_cap_says_why(client):
    html = client.get("/banks", params={"layout": "(400,250):(250,1)", "element_bytes": 2,
                                        "access": "column:0", "compare": "0"}).text
    assert 'id="grid-note"' in html and "100,000 cells" in html and "65,536" in html


def test_banks_defaults_match_the_readme(client):
    html = client.get("/banks", params={"layout": "(8,64):(64,1)", "element_bytes": 2, "access": "column:0"}).text
    titles = re.findall(r"<h3>([^<]*)</h3>", html)
    assert "swizzled (Sw&lt;3,3,3&gt;)" in titles
    html = client.get("/banks", params={"layout": "(32,32):(32,1)", "element_bytes": 4, "access": "column:0"}).text
    assert "padded (+1 element per row)" in html and "+1 elements" not in html


def test_lab_page_speaks_plainly(client):
    html = client.get("/lab").text
    assert "Shared Library Not Found" not in html
    reason = re.search(r'id="queue-reason"[^>]*>([^<]*)<', html).group(1)
    device = re.search(r'<section class="lab-device" id="device">(.*?)</section>', html, re.S).group(1)
    assert "`" not in device
    if "live workers: 0" in device:
        assert 'id="queue-btn" disabled' in html and "none is running" in reason


def test_copy_walkthrough_follows_one_thread(client, read_grid):
    atom, thr, val = "SM80_CP_ASYNC_CACHEALWAYS_16B", "(16,8):(8,1)", "(1,8):(8,1)"
    q = {"cw_atom": atom, "cw_thr": thr, "cw_val": val, "cw_bits": 16, "cw_src": "(32,128):(128,1)",
         "cw_dst": "Sw<3,3,3> o (32,128):(128,1)", "cw_t": 9}
    html = client.get("/tv", params=q, headers={**HX, "HX-Target": "copywalk"}).text
    tc = atoms.make_tiled_copy(atom, thr_layout=A.parse(thr), val_layout=A.parse(val), element_bits=16)
    frag, off = tc.partition_S(A.parse("(32,128):(128,1)"), 9)
    mine = {((off + o) // 128, (off + o) % 128) for o in A.offsets(frag)}  # row-major: offset -> (row, column)
    assert len(mine) == 32  # 8 values x 2 x 2 repeats of the 16x64 tile
    for gid in ("walk-src", "walk-dst"):  # the same logical elements on both sides
        g = read_grid(html, gid)
        assert outlined(g) == mine and all(g.cells[c][0].startswith("T9V") for c in mine)
    assert "partition_S" in html and f"from offset {off}" in html
    phys = read_grid(html, "walk-dst-phys")  # the swizzled destination by address
    sw = A.parse("Sw<3,3,3> o (32,128):(128,1)")
    moved = {(sw((i, j)) // 128, sw((i, j)) % 128) for i, j in mine}
    assert outlined(phys) == moved
    bad = client.get("/tv", params={**q, "cw_t": 128}, headers={**HX, "HX-Target": "copywalk"}).text
    assert "thread: 128 is out of range" in bad


def test_mma_walkthrough_and_warp_colours(client, read_grid):
    q = {"mw_atom": "SM80_16x8x16_F32F16F16F32_TN", "mw_layout": "(2,2,1)", "mw_tile": "64,32,16", "mw_t": 37}
    html = client.get("/tv", params=q, headers={**HX, "HX-Target": "mmawalk"}).text
    for gid in ("walk-atom-a", "walk-atom-b", "walk-atom-c", "walk-warps", "walk-part-a", "walk-part-b",
                "walk-part-c"):
        assert f'id="{gid}"' in html
    tm = atoms.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", A.Layout((2, 2, 1)))
    for op, (rows, cols), part in (("a", (64, 16), tm.partition_A), ("c", (64, 32), tm.partition_C)):
        frag, off = part(A.Layout((rows, cols)), 37)
        mine = {((off + o) % rows, (off + o) // rows) for o in A.offsets(frag)}
        assert outlined(read_grid(html, f"walk-part-{op}")) == mine
    atom_c = read_grid(html, "walk-atom-c")  # lane 37 % 32 = 5 of the atom, outlined in C
    lit = [atom_c.cells[c][0] for c in outlined(atom_c)]
    assert lit and all(t.startswith("T5V") for t in lit)
    warps = read_grid(html, "walk-warps")  # one colour per warp: T0 and T32 differ
    colour: dict[int, set[str]] = {}
    for text, cls in warps.cells.values():
        t = int(text[1:].split("V")[0])
        colour.setdefault(t // 32, set()).update(c for c in cls if c.startswith("p"))
    assert len(colour) == 4 and all(len(c) == 1 for c in colour.values())
    assert len(set().union(*colour.values())) == 4


def test_tv_page_has_both_walkthroughs(client):
    html = client.get("/tv").text  # their forms; their results come when opened (tests/test_pages_tv_lazy.py)
    assert 'id="copywalk-form"' in html and 'id="mmawalk-form"' in html
    html = client.get("/tv?cw_t=0&mw_t=0").text  # a permalink naming their fields: both open and filled
    assert 'id="copy-walk-thread"' in html and 'id="mma-walk-thread"' in html
    assert 'data-filter-for="atom-select"' in html  # the atom picker's search


def test_partition_api(client):
    r = client.post("/api/partition", json={"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "thread": 9,
                                            "thr_layout": "(16,8):(8,1)", "val_layout": "(1,8):(8,1)"})
    body = r.json()
    assert r.status_code == 200 and body["kind"] == "copy" and body["num_threads"] == 128
    src, dst = body["parts"]
    assert src["call"].endswith("partition_S(source)") and dst["call"].endswith("partition_D(destination)")
    assert src["cells"] == [[1, j] for j in range(8, 16)] and src["offset"] == 72
    r = client.post("/api/partition", json={"atom": "SM80_16x8x16_F32F16F16F32_TN", "thread": 37})
    parts = r.json()["parts"]
    assert [p["call"] for p in parts] == ["thr_mma.partition_A(gA)", "thr_mma.partition_B(gB)",
                                          "thr_mma.partition_C(gC)"]
    assert [len(p["cells"]) for p in parts] == [8, 4, 4]
    bad = client.post("/api/partition", json={"atom": "SM80_16x8x16_F32F16F16F32_TN", "thread": 128})
    assert bad.status_code == 422 and "out of range" in bad.json()["detail"]
    bad = client.post("/api/partition", json={"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "src": "(8,8):(8,1)"})
    assert bad.status_code == 422


def test_blocked_and_raked_products_by_copy(client, read_grid):
    """The "by copy of A" panel: blocked keeps each copy of A together, raked interleaves the copies."""
    def copies(op: str) -> list[list[str]]:
        html = client.get("/algebra", params={"op": op, "a": "(2,2):(1,2)", "b": "(2,3):(1,2)"}).text
        cells = read_grid(html, "grid-tiles").cells
        return [[cells[i, j][0] for j in range(6)] for i in range(4)]

    assert copies("blocked_product")[:2] == [["0", "0", "2", "2", "4", "4"]] * 2
    assert copies("raked_product")[0] == ["0", "2", "4", "0", "2", "4"]


def test_every_walkthrough_preset_renders(client):
    from app.services.walkthrough import COPY_WALKS, MMA_WALKS

    for _label, atom, thr, val, bits, src, dst in COPY_WALKS:
        q = {"cw_atom": atom, "cw_thr": thr, "cw_val": val, "cw_bits": bits, "cw_src": src, "cw_dst": dst, "cw_t": 1}
        html = client.get("/tv", params=q, headers={**HX, "HX-Target": "copywalk"}).text
        assert 'id="walk-src"' in html and 'id="walk-dst"' in html and 'role="alert"' not in html, atom
    for _label, atom, layout, tile in MMA_WALKS:
        q = {"mw_atom": atom, "mw_layout": layout, "mw_tile": tile, "mw_t": 1}
        html = client.get("/tv", params=q, headers={**HX, "HX-Target": "mmawalk"}).text
        assert 'id="walk-part-c"' in html and 'role="alert"' not in html, atom
