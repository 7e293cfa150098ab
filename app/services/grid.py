"""The pages' grids: ``layoutlab.grid.Grid`` (the one grid model and its markup, shared with the notebook and the
SVG export), charged to the request's work budget and handed to Jinja as safe markup."""

from __future__ import annotations

from markupsafe import Markup

from app.budget import charge
from layoutlab.grid import (  # noqa: F401 - the pages' names for the shared model
    BAND_ROWS,
    PALETTE,
    TILE_COLS,
    WARM_CELLS,
    WARM_COLS,
    WARM_ROWS,
    Grid,
    _factors,
    boundary_levels,
    offset_colours,
)


class GridView(Grid):
    """A ``Grid`` drawn by a page: every drawn grid is charged to the request's work budget (app.budget) before it is
    rendered, and its markup reaches the templates as ``Markup``."""

    def __post_init__(self) -> None:
        charge("drawn cell", self.rows * self.cols, f"grid {self.id}")

    def figure(self, tools: bool = True, export: bool = True) -> Markup:
        return Markup(super().figure(tools, export))

    def header(self) -> Markup:
        return Markup(super().header())

    def body(self) -> Markup:
        return Markup(super().body())

    def data_json(self) -> Markup:
        return Markup(super().data_json())

    def meta_json(self) -> Markup:
        return Markup(super().meta_json())
