"""A thread / value grid sent as data: its labels and colours are its hover tables' (``meta["threads"]`` and
``meta["values"]``), so its JSON says ``"t": "tv"`` instead of repeating them (layoutlab/grid.py ``_tv_period``)."""

from __future__ import annotations

import json
import re

import pytest

import algebra as A
from algebra import atoms
from app.services import tv as S
from app.services.grid import GridView
from layoutlab.model import tv_cells

URL = "/tv?atom=SM90_64x256x16_F32F16F16_SS&operand=C"


def grid_json(html: str, gid: str, kind: str) -> dict:
    m = re.search(rf'<script type="application/json" class="grid-{kind}" data-for="{gid}">(.*?)</script>', html, re.S)
    assert m, f"no grid-{kind} for {gid}"
    return json.loads(m.group(1))


def test_the_sm90_64x256_permalink_sends_its_cells_once(client, read_grid):
    """The page's 16,384 cells: each reads T<thread>V<value> with the thread and value of CuTe's TV layout (cell
    (m, n) is element m + 64 n of the C tile), coloured by lane; the JSON carries no second copy of them."""
    r = client.get(URL)
    assert r.status_code == 200
    data = grid_json(r.text, "grid-tv", "data")
    assert data["t"] == "tv" and data["c"] is None and data["tv"] == 1
    assert len(r.content) < 260_000  # was 448 kB with the labels and colours repeated
    g = read_grid(r.text, "grid-tv")
    tv = atoms.get("SM90_64x256x16_F32F16F16_SS").C
    want = {}
    for t in range(A.size(tv[0])):
        for v in range(A.size(tv[1])):
            e = tv(t, v)
            want[e % 64, e // 64] = f"T{t}V{v}"
    text, classes = g.text, g.classes
    assert {(i, j): text[i][j] for i in range(64) for j in range(256)} == want
    assert all(classes[i][j] == {f"p{int(want[i, j][1:].split('V')[0]) % 32}"} for i in range(64)
               for j in range(256))


@pytest.mark.parametrize("by_warp", [False, True])
def test_tv_grids_by_thread_and_by_warp(read_grid, by_warp):
    threads = [[(i * 37 + j * 5) % 130 - 1 for j in range(40)] for i in range(20)]  # -1: a cell no thread holds
    values = [[(i + j) % 9 for j in range(40)] for i in range(20)]
    text, colour, meta = tv_cells(threads, values, by_warp)
    g = GridView(id="g", rows=20, cols=40, text=text, colour=colour, meta=meta, css="tv")
    html = g.figure()
    data = grid_json(html, "g", "data")
    assert data["t"] == "tv" and data["tv"] == (32 if by_warp else 1)
    rg = read_grid(html, "g")
    assert rg.text == text
    assert rg.classes == [[{f"p{c}"} if c >= 0 else {"x"} for c in row] for row in colour]


def test_a_grid_that_differs_from_its_tables_sends_its_cells(read_grid):
    """Labels or colours that are not the tables' (a marked-up copy, another palette) travel as they are."""
    threads = [[j % 64 for j in range(40)] for _ in range(20)]
    values = [[i for _ in range(40)] for i in range(20)]
    text, colour, meta = tv_cells(threads, values)
    text[3][7] = "T9V9"
    g = GridView(id="g", rows=20, cols=40, text=text, colour=colour, meta=meta)
    assert grid_json(g.figure(), "g", "data")["t"] == text
    text, colour, meta = tv_cells(threads, values)
    colour[0][0] = 5
    g = GridView(id="g", rows=20, cols=40, text=text, colour=colour, meta=meta)
    data = grid_json(g.figure(), "g", "data")
    assert data["t"] == text and data["c"] == colour
    assert read_grid(g.figure(), "g").classes[0][0] == {"p5"}


def test_the_tv_view_service_is_what_the_page_draws():
    view = S.tv_view("SM90_64x256x16_F32F16F16_SS", "C", 16)
    g = S.tv_grid(view, "grid-tv")
    assert g.deferred and g._tv_period() == 1
