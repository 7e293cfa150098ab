"""The grid renderer (app/services/grid.py): cells in tiles, boundaries, marks, warm/cold tiles, caps."""

from __future__ import annotations

import pytest

from app.services.grid import BAND_ROWS, TILE_COLS, WARM_COLS, WARM_ROWS, GridView, boundary_levels

HX = {"HX-Request": "true"}


def render(g: GridView) -> str:
    from app.templating import templates

    return templates.env.from_string('{% from "_grid.html" import grid %}{{ grid(g) }}').render(g=g)


@pytest.mark.parametrize(("rows", "cols"), [(1, 1), (3, 5), (16, 16), (17, 33), (40, 70), (1, 300)])
def test_every_cell_lands_at_its_row_and_column(read_grid, rows, cols):
    text = [[f"{i}.{j}" for j in range(cols)] for i in range(rows)]
    colour = [[(i * cols + j) % 33 - 1 for j in range(cols)] for i in range(rows)]
    view = GridView(id="g", rows=rows, cols=cols, text=text, colour=colour)
    g = read_grid(render(view), "g")
    assert g.text == text
    classes = g.classes
    for i in range(rows):
        for j in range(cols):
            c = colour[i][j]
            assert classes[i][j] == ({f"p{c}"} if c >= 0 else {"x"})
    assert [t for t, _ in g.row_labels] == [str(i) for i in range(rows)]
    assert [t for t, _ in g.col_labels] == [str(j) for j in range(cols)]
    bands = -(-rows // BAND_ROWS)
    assert len(g.tiles) == bands * -(-cols // view.tile_cols)
    assert view.tile_cols == (TILE_COLS if rows >= BAND_ROWS or not view.deferred else 256 // rows)


def test_only_the_top_left_tiles_arrive_warm(read_grid):
    g = read_grid(render(GridView(id="g", rows=128, cols=128, text=[[0] * 128] * 128)), "g")
    warm = g.tiles - g.cold
    assert warm == {(b, t) for b in range(0, WARM_ROWS, BAND_ROWS) for t in range(0, WARM_COLS, TILE_COLS)}
    assert len(warm) * BAND_ROWS * TILE_COLS < 128 * 128 // 8  # what the browser lays out at once


def test_boundaries_marks_and_custom_labels(read_grid):
    rows, cols = 4, 6
    g = GridView(id="g", rows=rows, cols=cols, text=[[i * cols + j for j in range(cols)] for i in range(rows)],
                 row_levels=boundary_levels((2, 2), rows), col_levels=boundary_levels((3, 2), cols),
                 row_labels=["a", "b", "c", "<d>"], col_labels=[f"c{j}" for j in range(cols)],
                 marks={(1, 2): "acc", (3, 5): "bad"})
    html = render(g)
    assert "&lt;d&gt;" in html and "<d>" not in html
    r = read_grid(html, "g")
    assert [cls for _, cls in r.row_labels] == [set(), set(), {"t1"}, set()]
    assert [j for j, (_, cls) in enumerate(r.col_labels) if "l1" in cls] == [3]
    assert r.classes[1][2] == {"x", "acc"} and r.classes[3][5] == {"x", "bad"} and r.classes[3][3] == {"x", "l1"}
    assert [t for t, _ in r.row_labels] == ["a", "b", "c", "<d>"]
    assert r.text[3][5] == "23"


def test_boundary_levels_of_nested_modes():
    assert boundary_levels((2, 4), 8) == [0, 0, 1, 0, 1, 0, 1, 0]
    assert boundary_levels((2, 2, 2), 8) == [0, 0, 1, 0, 2, 0, 1, 0]
    assert boundary_levels((8,), 8) == [0] * 8
    assert boundary_levels((1, 2, 1, 4), 8) == [0, 0, 1, 0, 1, 0, 1, 0]  # size-1 leaves draw nothing


def test_wide_offsets_get_wider_cells(client, read_grid):
    r = client.get("/", params={"layout": "(8,8):(1,2048)"}, headers=HX)
    assert 'class="grid wide"' in r.text
    assert read_grid(r.text, "grid-explorer").text[7][7] == str(7 + 7 * 2048)


def test_large_grid_renders_every_cell_and_the_cap_holds(client, read_grid):
    r = client.get("/", params={"layout": "(256,256):(256,1)"}, headers=HX)
    g = read_grid(r.text, "grid-explorer")
    assert (g.rows, g.cols) == (256, 256) and g.text[255][255] == "65535"
    r = client.get("/", params={"layout": "(257,256):(256,1)"}, headers=HX)
    assert 'id="grid-explorer"' not in r.text and "65,536" in r.text


@pytest.mark.parametrize("layout", ["65536:1", "(65536):(1)", "((256,256)):((1,256))"])
def test_a_one_dimensional_grid_of_65536_cells_arrives_lazily(client, read_grid, layout):
    """A 1 x 65,536 grid is sent as its first tile plus the cells as JSON (labels, hover tables short), like a
    256 x 256 grid, and every cell, column label and boundary still reaches the page (static/app.js expands the
    short tables; tests/browser/test_grid_web_browser.py hovers them)."""
    import json
    import re

    r = client.get("/", params={"layout": layout})
    assert r.status_code == 200
    assert len(r.content) < 600_000, len(r.content)  # it was 3.3 MB (3.5 MB nested)
    g = read_grid(r.text, "grid-explorer")
    assert (g.rows, g.cols) == (1, 65536)
    assert g.text[0] == [str(j) for j in range(65536)]
    assert all(cls == ({f"p{j % 32}", "l1"} if "((" in layout and j and j % 256 == 0 else {f"p{j % 32}"})
               for j, cls in enumerate(g.classes[0]))
    assert [t for t, _ in g.col_labels] == [str(j) for j in range(65536)]
    html_cells = len(re.findall(r'<div class="gr"[^>]*>', r.text))
    assert html_cells == 1  # one warm tile; 255 empty ones filled from the JSON
    meta = json.loads(re.search(r'class="grid-meta" data-for="grid-explorer">(.*?)</script>', r.text).group(1))
    if "((" in layout:  # colCrd[j] == ["(j % 256,j // 256)"], sent as its two factor lists
        assert meta["colCrd"] == {"f": [[str(k) for k in range(256)]] * 2}
    else:  # colCrd[j] == [str(j)]
        assert meta["colCrd"] == "j"
    assert meta["colOff"] == "t"  # colOff[j] == [L(j)], the cell's own label


def test_short_column_tables_are_exact():
    from app.services.grid import _factors
    from app.services.layouts import coord_texts

    for shape in [(4, 3), ((2, 2), 3), (2, (3, 2), 2), (1, 4)]:
        texts = coord_texts(shape)
        f = _factors(texts)
        assert f is not None and len(f) == len(shape)
    assert _factors(["(0,0)", "(1,0)", "(0,1)", "(2,1)"]) is None  # not a product: sent in full
    assert _factors(["0", "1"]) is None and _factors(["(0)", "(1)"]) is None
