"""The explorer's and the TV atlas's Triton panels: a pasted TTGIR layout drawn with the pages' grids (a shared
layout's offsets, a distributed layout's thread/register cells, both checked against the API's bases and offsets),
its CuTe layout and F2 bases beside it, the store's wavefronts and fix, permalinks, and errors shown on the page."""

from __future__ import annotations

import html
import re
from urllib.parse import urlencode

from conftest import parse_grid

BLOCKED = ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
           "order = [1, 0]}>")
SWIZZLED = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"
PLAIN = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
MIXED = "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 3], [2, 0]], block = []}, alignment = 16>"


def test_explorer_draws_a_shared_layout_as_its_offset_grid(client):
    page = client.get("/?" + urlencode({"ttgir": SWIZZLED, "shape": "16,64"})).text
    api = client.post("/api/triton/layout", json={"layout": SWIZZLED, "shape": [16, 64]}).json()
    grid = parse_grid(page, "grid-explorer")
    assert [[int(x) for x in row] for row in grid.text] == api["offsets"]
    assert 'id="tt-cute">Sw&lt;3,3,3&gt; o 0 o (16,64):(64,1)<' in page and 'id="tt-bases"' in page
    assert "Swizzle bits: Sw&lt;3,3,3&gt;" in page
    link = html.unescape(re.search(r'id="tt-permalink" href="([^"]+)"', page).group(1))
    assert client.get(link).text.count('id="tt-cute"') == 1 and "ttgir=" in link


def test_explorer_draws_offsets_when_no_cute_layout_exists(client):
    page = client.get("/?" + urlencode({"ttgir": MIXED, "shape": "4,4"})).text
    api = client.post("/api/triton/layout", json={"layout": MIXED, "shape": [4, 4]}).json()
    assert api["cute"] is None
    assert [[int(x) for x in row] for row in parse_grid(page, "grid-triton").text] == api["offsets"]
    assert "No CuTe layout equals it" in page


def test_explorer_links_a_distributed_layout_to_the_tv_atlas(client):
    page = client.get("/?" + urlencode({"ttgir": BLOCKED, "shape": "64,64"})).text
    link = html.unescape(re.search(r'id="tt-tv-link" href="([^"]+)"', page).group(1))
    assert link.startswith("/tv?tt_layout=")
    assert 'id="grid-triton-tv"' in client.get(link).text


def test_tv_atlas_cells_follow_the_bases(client):
    page = client.get("/tv?" + urlencode({"tt_layout": BLOCKED, "tt_shape": "32,64"})).text
    bases = client.post("/api/triton/layout", json={"layout": BLOCKED, "shape": [32, 64]}).json()["bases"]
    grid = parse_grid(page, "grid-triton-tv").text

    def at(reg: int, lane: int, warp: int) -> tuple[int, int]:
        r = c = 0
        for name, x in (("register", reg), ("lane", lane), ("warp", warp)):
            for i, (dr, dc) in enumerate(bases[name]):
                if (x >> i) & 1:
                    r, c = r ^ dr, c ^ dc
        return r, c
    for reg, lane, warp in ((0, 0, 0), (3, 5, 0), (9, 31, 3), (15, 17, 2)):
        r, c = at(reg, lane, warp)
        assert grid[r][c] == f"T{lane + 32 * warp}V{reg}"


def test_tv_atlas_prices_a_store_and_shows_the_fix(client):
    q = {"tt_layout": BLOCKED, "tt_shape": "64,64", "tt_shared": PLAIN}
    api = client.post("/api/triton/conflicts", json={"distributed": BLOCKED, "shared": PLAIN, "shape": [64, 64]})
    want = api.json()
    frag = client.get("/tv?" + urlencode(q), headers={"HX-Request": "true", "HX-Target": "triton"}).text
    assert "<html" not in frag
    assert f'id="tt-wavefronts">{want["wavefronts"]}<' in frag
    assert html.escape(want["fix"]["ttgir"]) in frag


def test_errors_are_shown_on_the_page(client):
    r = client.get("/?" + urlencode({"ttgir": "#ttg.blocked<{}>", "shape": "64,64"}))
    assert r.status_code == 200 and "layout: blocked.sizePerThread: missing" in r.text
    r = client.get("/tv?" + urlencode({"tt_layout": BLOCKED, "tt_shape": "64,48"}))
    assert r.status_code == 200 and "shape: 48 is not a power of two" in html.unescape(r.text)
    r = client.get("/tv?" + urlencode({"tt_layout": BLOCKED, "tt_shape": "64,64", "tt_shared": BLOCKED}))
    assert "shared: blocked is a distributed layout" in html.unescape(r.text)
