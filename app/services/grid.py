"""Grid view models: the HTML of an offset/thread grid, built once per render and shared by every page.

A grid is a ``rows x cols`` table of labelled, coloured cells with nested-mode boundaries. The cell markup is
produced here as one string (a 128x128 grid is 16,384 cells: a Jinja loop would cost several times more), the
surrounding chrome (headers, tools, hover metadata) lives in ``templates/_grid.html``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup, escape

PALETTE = 32


def boundary_levels(leaves: Sequence[int], n: int) -> list[int]:
    """Border level of each of ``n`` positions along a mode whose flattened shape is ``leaves`` (fastest first).

    Post-condition: ``levels[k] == m`` (capped at 3) where m is how many leading leaf extents roll over at k, i.e. the
    largest m with ``k % prod(leaves[:m]) == 0``, not counting the last leaf (whose roll-over is the grid's edge);
    position 0 and positions in modes with a single leaf get 0.
    """
    levels = [0] * n
    inner = [s for s in leaves if s > 1][:-1]
    if not inner:
        return levels
    period = 1
    for m, s in enumerate(inner, start=1):
        period *= s
        for k in range(period, n, period):
            levels[k] = min(m, 3)
    return levels


@dataclass
class GridView:
    """One rendered grid. ``text[i][j]`` is the label of cell (i, j) and ``colour[i][j]`` its palette index
    (-1: uncoloured). ``marks`` adds a class to single cells; ``meta`` travels to the page as JSON for hover cards."""

    id: str
    rows: int
    cols: int
    text: list[list[Any]]
    colour: list[list[int]] | None = None
    row_levels: list[int] = field(default_factory=list)
    col_levels: list[int] = field(default_factory=list)
    row_labels: list[str] | None = None
    col_labels: list[str] | None = None
    marks: dict[tuple[int, int], str] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    caption: str = ""
    css: str = ""

    @property
    def cells(self) -> int:
        return self.rows * self.cols

    def header(self) -> Markup:
        labels = self.col_labels or [str(j) for j in range(self.cols)]
        lv = self.col_levels or [0] * self.cols
        parts = ['<tr><th class="corner" scope="col"></th>']
        parts += [f'<th scope="col" class="l{lv[j]}">{escape(labels[j])}</th>' if lv[j] else
                  f'<th scope="col">{escape(labels[j])}</th>' for j in range(self.cols)]
        parts.append("</tr>")
        return Markup("".join(parts))

    def body(self) -> Markup:
        """The ``<tbody>`` rows. Cells are ``<td class="p{colour} l{level}">label</td>``."""
        clv = self.col_levels or [0] * self.cols
        rlv = self.row_levels or [0] * self.rows
        csuf = [f" l{v}" if v else "" for v in clv]
        rlabels = self.row_labels or [str(i) for i in range(self.rows)]
        out: list[str] = []
        for i in range(self.rows):
            row_text = self.text[i]
            row_col = self.colour[i] if self.colour is not None else None
            out.append(f'<tr class="t{rlv[i]}">' if rlv[i] else "<tr>")
            out.append(f'<th scope="row">{escape(rlabels[i])}</th>')
            if self.marks:
                cells = []
                for j in range(self.cols):
                    c = row_col[j] if row_col is not None else -1
                    cls = (f"p{c}" if c >= 0 else "x") + csuf[j]
                    mark = self.marks.get((i, j))
                    if mark:
                        cls += " " + mark
                    cells.append(f'<td class="{cls}">{_label(row_text[j])}</td>')
                out.append("".join(cells))
            elif row_col is not None:
                out.append("".join([f'<td class="p{c}{s}">{_label(t)}</td>' if c >= 0 else
                                    f'<td class="x{s}">{_label(t)}</td>'
                                    for t, c, s in zip(row_text, row_col, csuf, strict=True)]))
            else:
                out.append("".join([f'<td class="{s[1:]}">{_label(t)}</td>' if s else f"<td>{_label(t)}</td>"
                                    for t, s in zip(row_text, csuf, strict=True)]))
            out.append("</tr>")
        return Markup("".join(out))

    def meta_json(self) -> Markup:
        """The hover metadata as a JSON literal safe to embed in ``<script type="application/json">``."""
        return Markup(json.dumps(self.meta, separators=(",", ":")).replace("<", "\\u003c"))


def _label(t: Any) -> str:
    if isinstance(t, int):
        return str(t)
    return str(escape(t))


def offset_colours(offsets: list[list[int]]) -> list[list[int]]:
    """Palette index of each offset: ``offset mod 32`` (the bank of a 4-byte element at that offset)."""
    return [[v % PALETTE for v in row] for row in offsets]
