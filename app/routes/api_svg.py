"""``POST /api/svg``: the picture of what one grid of a page shows, drawn by ``layoutlab.grid.Grid.svg_body``, the one
drawing of a grid that ``layoutlab.svg`` uses too. The pages' SVG button sends the grid as it stands (its cells, the
colours and labels the cell menus chose, thread isolation, outlines) and downloads the answer."""

from __future__ import annotations

from fastapi import APIRouter, Response

from algebra import LayoutError
from app.budget import BudgetedRoute
from app.config import MAX_CELLS
from app.schemas import SvgIn
from app.services.grid import GridView
from layoutlab.grid import svg_document

router = APIRouter(route_class=BudgetedRoute, prefix="/api", tags=["layout"])


def _check(body: SvgIn) -> None:
    """Refuse a grid whose parts do not fit together, naming the first part that does not."""
    n = body.rows * body.cols
    if n > MAX_CELLS:
        raise LayoutError(f"rows x cols = {n} cells, over the cap of {MAX_CELLS} cells in one grid")
    need = {"text": n, "colour": n, "row_levels": body.rows, "col_levels": body.cols, "row_labels": body.rows,
            "col_labels": body.cols}
    for name, want in need.items():
        got = len(getattr(body, name))
        if got != want and (got or name in ("text", "colour")):  # levels and labels may be left out
            raise LayoutError(f"{name}: {got} entries where the {body.rows} x {body.cols} grid needs {want}")
    if body.colour and max(body.colour) >= len(body.palette):
        raise LayoutError(f"colour: index {max(body.colour)} where the palette has {len(body.palette)} fills")
    bad = next(((i, j) for i, j, _ in body.marks if i >= body.rows or j >= body.cols), None)
    if bad:
        raise LayoutError(f"marks: cell {bad} is outside the {body.rows} x {body.cols} grid")


@router.post("/svg", response_class=Response,
             responses={200: {"content": {"image/svg+xml": {}}, "description": "an SVG document"},
                        422: {"description": "a part of the grid missing, malformed or over a cap; detail names it"}})
def post_svg(body: SvgIn) -> Response:
    """An SVG document of one grid as a page shows it: the same drawing as ``layoutlab.svg``. Its cells are charged
    to the request's work budget as every drawn grid's are (app.services.grid.GridView)."""
    _check(body)
    r, c = body.rows, body.cols
    grid = GridView(id="svg", rows=r, cols=c, text=[body.text[i * c:(i + 1) * c] for i in range(r)],
                colour=[body.colour[i * c:(i + 1) * c] for i in range(r)], row_levels=body.row_levels,
                col_levels=body.col_levels, row_labels=body.row_labels or None, col_labels=body.col_labels or None,
                marks={(i, j): cls for i, j, cls in body.marks}, caption=body.caption,
                meta={"outline": body.outline} if body.outline else {})
    return Response(svg_document([grid.svg_body(body.palette or ["#fff"])]), media_type="image/svg+xml")
