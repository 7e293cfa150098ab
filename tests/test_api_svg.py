"""``POST /api/svg``: the pages' SVG button asks the server to draw the grid, with the one drawing of a grid
(``layoutlab.grid.Grid.svg_body``) that ``layoutlab.svg`` uses too; what does not fit together is a 422 naming it."""

from __future__ import annotations

import re

import pytest

import layoutlab
from layoutlab import render
from layoutlab.inputs import panels


def model_of(text: str) -> dict:
    """The body the page's SVG button sends for the grid ``layoutlab`` draws of ``text`` (fills as hex colours)."""
    g = render.grid_of(panels(text)[0], "g")
    pal = render.web.palette()
    return {"rows": g.rows, "cols": g.cols, "text": [str(t) for row in g.text for t in row],
            "palette": pal, "colour": [c for row in g.colour for c in row], "row_levels": g.row_levels,
            "col_levels": g.col_levels, "caption": g.caption}


def without_cell_attrs(svg: str) -> str:
    """The drawing without ``layoutlab``'s per-cell ``data-offset`` and its outer group."""
    return re.sub(r'<g class="cell"[^>]*>', '<g class="cell">', svg)


@pytest.mark.parametrize("text", ["(2,3):(3,1)", "(4,(2,4)):(2,(1,8))", "Sw<3,4,3> o _0 o (8,64):(64,1)", "8:2"])
def test_the_page_and_the_library_draw_a_grid_the_same(client, text):
    r = client.post("/api/svg", json=model_of(text))
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
    assert without_cell_attrs(r.text) == without_cell_attrs(layoutlab.svg(text))


def test_marks_fade_and_outline_cells_and_say_what_the_outline_means(client):
    body = model_of("(2,3):(3,1)") | {"marks": [[0, 0, "acc"], [1, 2, "bad dim"], [1, 1, "dim"]],
                                       "outline": "the cells this warp reads"}
    svg = client.post("/api/svg", json=body).text
    assert svg.count('class="acc"') == 1 and svg.count('class="bad"') == 1
    assert svg.count('fill-opacity="0.18"') == 2 and "the cells this warp reads" in svg
    body.pop("outline")
    assert "outlined: 2 marked cells" in client.post("/api/svg", json=body).text


@pytest.mark.parametrize("change, words", [
    ({"text": ["1"] * 5}, "text: 5 entries where the 2 x 3 grid needs 6"),
    ({"colour": [0] * 7}, "colour: 7 entries"),
    ({"col_levels": [0, 1]}, "col_levels: 2 entries where the 2 x 3 grid needs 3"),
    ({"colour": [40] * 6}, "colour: index 40 where the palette has 32 fills"),
    ({"marks": [[2, 0, "acc"]]}, "marks: cell (2, 0) is outside the 2 x 3 grid"),
    ({"rows": 300, "cols": 300}, "over the cap of 65536 cells"),
    ({"palette": ["red; background:url(x)"]}, "palette"),
    ({"marks": [[0, 0, "acc onclick"]]}, "marks"),
    ({"text": ["<b>" * 30] + ["1"] * 5}, "text"),
    ({"rows": 0}, "rows"),
    ({"rows": True}, "rows"),
])
def test_a_grid_that_does_not_fit_together_is_refused_by_name(client, change, words):
    r = client.post("/api/svg", json=model_of("(2,3):(3,1)") | change)
    assert r.status_code == 422 and words in r.json()["detail"], r.text


def test_labels_are_escaped(client):
    body = model_of("(2,3):(3,1)") | {"text": ["<script>"] * 6, "caption": "Sw<3,3,3> o (8,64):(64,1)"}
    svg = client.post("/api/svg", json=body).text
    assert "<script>" not in svg and "&lt;script&gt;" in svg and "Sw&lt;3,3,3&gt; o" in svg


def test_mark_coordinates_are_json_integers(client):
    body = model_of("(2,3):(3,1)") | {"marks": [[True, 0, "acc"]]}
    assert client.post("/api/svg", json=body).status_code == 422


def test_the_picture_is_charged_to_the_work_budget_before_it_is_drawn(client, monkeypatch):
    from app import budget

    monkeypatch.setattr(budget, "WORK_UNITS", 5 * budget.COST["drawn cell"])  # five drawn cells a request
    r = client.post("/api/svg", json=model_of("(2,3):(3,1)"))
    assert r.status_code == 422 and "grid svg" in r.json()["detail"], r.text


def test_the_app_draws_grids_only_through_the_charged_view():
    """Every grid the app draws is a GridView (charged before it is drawn): no other module of app/ takes the bare
    model from layoutlab.grid, so the next route that draws a grid cannot forget the charge."""
    from pathlib import Path

    app_dir = Path(__file__).resolve().parent.parent / "app"
    view = app_dir / "services" / "grid.py"
    takes_model = re.compile(r"^\s*(from layoutlab\.grid import[^\n]*\bGrid\b|import layoutlab\.grid)", re.M)
    bare = [str(p.relative_to(app_dir)) for p in app_dir.rglob("*.py")
            if p != view and takes_model.search(p.read_text())]
    assert bare == []
