"""The grid model: the HTML of an offset/thread grid, built once per render and shared by every page and the notebook
(``layoutlab.html``), and its picture (``Grid.svg_body``: ``layoutlab.svg`` and the pages' SVG button alike): one
model, one markup, one drawing of a grid.

A grid is a ``rows x cols`` array of labelled, coloured cells with nested-mode boundaries. It is drawn with fixed-size
spans in flex rows, not a ``<table>`` (table layout is what made a 128x128 grid slow to paint), and cut into tiles of
BAND_ROWS x TILE_COLS cells that the browser lays out only near the viewport (``content-visibility``). The markup is
produced here as one string (a 128x128 grid is 16,384 cells: a Jinja loop would cost several times more); the chrome
around it (caption, tools, hover metadata) lives in ``templates/_grid.html``.

Markup (``i``: row, ``j``: column)::

    <div class="gh"><span></span><div class="gt [cold]" data-j="{first column}">         column labels, in tiles
      <span class="l{level}">{column label}</span>...</div>...</div>
    <div class="gk">                                                                       a band of rows
      <div class="gl"><span class="t{level}">{row label}</span>...</div>                     its row labels
      <div class="gt lazy" data-j="{first column}">                                         a tile
        <div class="gr [t{level}]" data-i="{i}"><span class="p{colour} [l{level}] [mark]">{label}</span>...</div>

Cell (i, j) is child ``j - data-j`` of the ``.gr`` with ``data-i == i`` in the tile whose columns hold j.

A small grid (up to WARM_CELLS cells within WARM_ROWS x WARM_COLS) arrives with every cell. A bigger one (``deferred``)
is sent as data: every tile arrives empty and cold (``<div class="gt cold" data-j data-i0>``), the column labels past
WARM_COLS too (``<div class="gt cold" data-j data-h>``), and the cells travel as JSON (``data_json``: labels, colours,
marks, boundary levels, column labels). static/grid-data.js writes a tile with exactly the markup above: the tiles on
screen before the first paint, the others as they scroll near or while the page is idle. So the HTML parser, htmx and
the first layout never see the cells off screen: the workbench's three 128x128 grids were 1.5 MB of HTML and ~49k
elements to parse; its page is now 0.31 MB with 1.6k elements in all at the first paint (bench/web.py). A deferred
grid of fewer than BAND_ROWS rows has wider tiles (``tile_cols``), and its hover tables travel short where they repeat
the page (``meta_json``): a 1 x 65,536 grid was 3.3 MB, now 0.44 MB.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

PALETTE = 32
#: Tile size: rows per band and columns per tile.
BAND_ROWS = 16
TILE_COLS = 16
#: A grid within WARM_ROWS x WARM_COLS (and WARM_CELLS) arrives with its cells; the column labels of a bigger one arrive
#: for its first WARM_COLS columns (more than a 1400 px screen shows beside a hover card), the others as data.
WARM_ROWS = 32
WARM_COLS = 32
#: A grid of more cells than this (or wider or taller than WARM_COLS x WARM_ROWS) is sent as data (``deferred``).
WARM_CELLS = 256
#: The marks drawn as an outline in a picture, and their colour: the cells a warp reads, and a wrong answer.
OUTLINES = {"acc": "#111", "bad": "#c53030"}


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


#: The largest integer a JavaScript number holds exactly (Number.MAX_SAFE_INTEGER).
JS_SAFE = (1 << 53) - 1


def exact_json(x: Any) -> Any:
    """``x`` (an int or nested lists of them) with every integer past JS_SAFE written as its decimal text, so that the
    page reads it exactly (a JSON number past 2^53 is rounded by JSON.parse: 2^60 + 1 read as 2^60); ``x`` itself
    (the same object) when no integer is past it."""
    if type(x) is int:
        return str(x) if abs(x) > JS_SAFE else x
    if isinstance(x, list):
        out = [exact_json(v) for v in x]
        return x if all(a is b for a, b in zip(out, x, strict=True)) else out
    return x


def escape(x: Any) -> str:
    """HTML-escaped text, as markupsafe writes it (``&amp; &lt; &gt; &#34; &#39;``), without importing it."""
    return (str(x).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&#34;")
            .replace("'", "&#39;"))


@dataclass
class Grid:
    """One rendered grid. ``text[i][j]`` is the label of cell (i, j) and ``colour[i][j]`` its palette index
    (-1: uncoloured). ``marks`` adds a class to single cells; ``meta`` travels to the page as JSON for hover cards.
    ``cell_attrs[i][j]`` (optional) is written into cell (i, j)'s ``<span>`` as it is (``layoutlab`` writes
    ``data-offset="..."`` there, so that each cell is one element naming its offset); ``inline`` sends every cell as
    HTML whatever the size (a notebook output has no later requests: nothing may arrive as data)."""

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
    #: True when ``colour[i][j] == text[i][j] % PALETTE`` (offsets, banks): the JSON then leaves the colours out
    colour_mod: bool = False
    cell_attrs: list[list[str]] | None = None
    inline: bool = False

    def __post_init__(self) -> None:
        """Nothing here; a subclass hooks in (the pages' GridView charges the request's work budget)."""

    @property
    def cells(self) -> int:
        return self.rows * self.cols

    @property
    def deferred(self) -> bool:
        """True when the grid is sent as data: its tiles arrive empty and static/grid-data.js builds them from
        ``data_json`` (more than WARM_CELLS cells, or more rows or columns than WARM_ROWS / WARM_COLS); never
        when ``inline``."""
        big = self.rows > WARM_ROWS or self.cols > WARM_COLS or self.rows * self.cols > WARM_CELLS
        return big and not self.inline

    @property
    def tile_cols(self) -> int:
        """Columns per tile: TILE_COLS, or for a deferred grid of fewer than BAND_ROWS rows as many more as keep a
        tile near BAND_ROWS x TILE_COLS cells (a 1 x 65,536 grid is 256 tiles of 256, not 4,096 of 16). An ``inline``
        grid has one tile per band, as wide as the grid, so its cells come in row-major order (as print_layout
        reads them)."""
        if self.inline:
            return max(1, self.cols)
        if not self.deferred or self.rows >= BAND_ROWS:
            return TILE_COLS
        return TILE_COLS * (BAND_ROWS // max(1, self.rows))

    def data_json(self) -> str:
        """The cells as JSON for the client-side tile builder (safe inside ``<script type="application/json">``):
        ``{"t": labels by row, "c": palette index by row or null, "cm": 32 when the colour is the label mod 32
        (then "c" is null), "m": [[i, j, class]], "rl" / "cl": {index: level} of the rows / columns whose boundary level
        is not 0, "ch": the column labels, or null when column j is labelled j}``. A thread / value grid whose labels
        and colours are its hover tables' (``_tv_period``) sends ``"t": "tv"``, ``"c": null`` and ``"tv": p`` instead:
        cell (i, j) reads ``T<thread>V<value>`` and has colour ``(thread // p) mod 32`` (blank and -1 where the thread
        is -1), from ``meta["threads"]`` and ``meta["values"]`` (the SM90 64x256 C grid's JSON: 196 kB -> 0.1 kB)."""
        tv = self._tv_period()
        text = exact_json(self.text)
        mod = self.colour_mod and text is self.text  # a label past 2^53 as text: its colour is sent, not computed
        data = {"t": "tv" if tv else text, "c": None if mod or tv else self.colour,
                "cm": PALETTE if mod else 0, **({"tv": tv} if tv else {}),
                "m": [[i, j, c] for (i, j), c in self.marks.items()],
                "rl": _sparse(self.row_levels), "cl": _sparse(self.col_levels),
                "ch": [str(x) for x in self.col_labels] if self.col_labels else None}
        return json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")

    def _tv_period(self) -> int:
        """p (1: by thread, 32: by warp) when every label is ``T<thread>V<value>`` of ``meta["threads"]`` and
        ``meta["values"]`` (blank where the thread is -1) and every colour ``(thread // p) % PALETTE`` (-1 there), as
        ``layoutlab.model.tv_cells`` draws them; else 0. Checked in full: a grid that differs anywhere sends its cells.
        """
        threads, values = self.meta.get("threads"), self.meta.get("values")
        if (self.colour is None or not isinstance(threads, list) or not isinstance(values, list)
                or len(threads) != self.rows or len(values) != self.rows):
            return 0
        try:
            text = [[f"T{t}V{v}" if t >= 0 else "" for t, v in zip(tr, vr, strict=True)]
                    for tr, vr in zip(threads, values, strict=True)]
        except (TypeError, ValueError):
            return 0
        if text != self.text:
            return 0
        for p in (1, 32):
            if self.colour == [[(t // p) % PALETTE if t >= 0 else -1 for t in tr] for tr in threads]:
                return p
        return 0

    def header(self) -> str:
        """The column-label row: the corner above the row labels, then the labels in tiles of ``tile_cols`` (cold
        beyond WARM_COLS, like the cells below them; a deferred grid sends its cold ones empty, marked ``data-h``,
        and static/grid-data.js writes their labels from ``data_json``)."""
        labels = [escape(x) for x in self.col_labels] if self.col_labels else range(self.cols)  # digits: no escape
        lv = self.col_levels or [0] * self.cols
        tc = self.tile_cols
        parts = ['<div class="gh"><span></span>']
        for t0 in range(0, self.cols, tc):
            w = min(tc, self.cols - t0)
            cold = " cold" if t0 >= WARM_COLS and not self.inline else ""
            width = f";--w:{w}" if w != TILE_COLS else ""
            if cold and self.deferred:
                parts.append(f'<div class="gt cold" data-j="{t0}" data-h style="--h:1{width}"></div>')
                continue
            spans = "".join(f'<span class="l{lv[j]}">{labels[j]}</span>' if lv[j] else f"<span>{labels[j]}</span>"
                            for j in range(t0, t0 + w))
            parts.append(f'<div class="gt{cold}" data-j="{t0}" style="--h:1{width}">{spans}</div>')
        parts.append("</div>")
        return "".join(parts)

    def _row_cells(self, i: int, csuf: list[str], plain: list[str]) -> list[str]:
        """The ``<span>`` of each cell of row i."""
        row_text = self.text[i]
        row_col = self.colour[i] if self.colour is not None else None
        if self.marks or self.cell_attrs is not None:
            attrs = self.cell_attrs[i] if self.cell_attrs is not None else [""] * self.cols
            cells = []
            for j in range(self.cols):
                c = row_col[j] if row_col is not None else -1
                cls = (f"p{c}" if c >= 0 else "x" if row_col is not None or self.marks else "") + csuf[j]
                mark = self.marks.get((i, j))
                if mark:
                    cls += " " + mark
                cls = f' class="{cls.strip()}"' if cls.strip() else ""
                cells.append(f"<span{cls}{attrs[j]}>{_label(row_text[j])}</span>")
            return cells
        if row_col is not None:
            return [f'<span class="p{c}{s}">{_label(t)}</span>' if c >= 0 else f'<span class="x{s}">{_label(t)}</span>'
                    for t, c, s in zip(row_text, row_col, csuf, strict=True)]
        return [f"{o}{_label(t)}</span>" for t, o in zip(row_text, plain, strict=True)]

    def body(self) -> str:
        """Bands of BAND_ROWS rows, each with its row labels and its tiles of ``tile_cols`` columns (see the module
        docstring). A grid that is not ``deferred`` arrives with every cell; a deferred (bigger) one arrives
        with every tile empty and cold (``data-i0`` = its first row), and static/grid-data.js builds the tiles on
        screen from ``data_json`` before the first paint, the others as they scroll near or while the page is idle."""
        rlv = self.row_levels or [0] * self.rows
        rlabels = self.row_labels or [str(i) for i in range(self.rows)]
        tc = self.tile_cols
        if not self.deferred:
            clv = self.col_levels or [0] * self.cols
            csuf = [f" l{v}" if v else "" for v in clv]
            plain = [f'<span class="l{v}">' if v else "<span>" for v in clv]
        out: list[str] = []
        for b0 in range(0, self.rows, BAND_ROWS):
            h = min(BAND_ROWS, self.rows - b0)
            band = range(b0, b0 + h)
            out.append(f'<div class="gk" style="--h:{h}">' if h != BAND_ROWS else '<div class="gk">')
            out.append('<div class="gl">')
            out.append("".join(f'<span class="t{rlv[i]}">{escape(rlabels[i])}</span>' if rlv[i] else
                               f"<span>{escape(rlabels[i])}</span>" for i in band))
            out.append("</div>")
            if self.deferred:  # built by static/grid-data.js from data_json
                for t0 in range(0, self.cols, tc):
                    w = min(tc, self.cols - t0)
                    style = f' style="--w:{w}"' if w != TILE_COLS else ""
                    out.append(f'<div class="gt cold" data-j="{t0}" data-i0="{b0}"{style}></div>')
                out.append("</div>")
                continue
            cells = {i: self._row_cells(i, csuf, plain) for i in band}
            opens = [f'<div class="gr t{rlv[i]}" data-i="{i}">' if rlv[i] else f'<div class="gr" data-i="{i}">'
                     for i in band]
            for t0 in range(0, self.cols, tc):
                w = min(tc, self.cols - t0)
                style = f' style="--w:{w}"' if w != TILE_COLS else ""
                out.append(f'<div class="gt lazy" data-j="{t0}"{style}>')  # not laid out while off screen
                for i in band:
                    out.append(opens[i - b0])
                    out.append("".join(cells[i][t0:t0 + w]))
                    out.append("</div>")
                out.append("</div>")
            out.append("</div>")
        return "".join(out)

    def figure(self, tools: bool = True, export: bool = True) -> str:
        """The whole figure every page and notebook output draws (templates/_grid.html's ``grid`` macro is this):
        caption, tools (zoom, full screen, the cells menu, and with ``export`` the SVG button, which asks the server's
        ``POST /api/svg`` to draw what the grid shows with ``svg_body``), the cells in their scroll box, and the hover
        metadata (and for a deferred grid the cells as data) as JSON. A notebook output has no server to ask: it
        leaves the button out (``layoutlab.svg(x)`` is the same drawing)."""
        g, cap = self, escape(self.caption) if self.caption else ""
        name = cap or escape(self.id)
        first = escape(g.meta.get("colour_name") or ("by thread (lane)" if g.meta.get("threads") else "by value"))
        if g.meta.get("threads"):
            menu = ('<label>cells <select class="cell-label"><option value="value">thread, value</option><option '
                    'value="thread">thread</option><option value="vindex">value index</option><option value="index">'
                    'index</option><option value="coord">(row, col)</option></select></label><label>colour <select '
                    f'class="cell-colour"><option value="value">{first}'
                    '</option><option value="lane">by thread (lane)</option><option value="warp">by warp</option>'
                    '<option value="vindex">by value index</option><option value="none">none</option></select></label>')
        else:
            menu = ('<label>cells <select class="cell-label"><option value="value">value</option><option value="index">'
                    'index</option><option value="coord">coordinate</option></select></label><label>colour <select '
                    f'class="cell-colour"><option value="value">{first}'
                    '</option><option value="col">by tile (column, mode 1)</option><option value="row">by row (mode 0)'
                    '</option><option value="none">none</option></select></label>')
        export = (f'<button type="button" class="svg-export" data-grid="{escape(g.id)}" data-name="{name}" '
                  'title="Download this grid as an SVG file">SVG</button>') if tools and export else ""
        style = f"--cols:{g.cols}"
        if g.meta.get("threads"):  # thread / value grids: cells as wide as the longest "T<thread>V<value>" label
            values = g.meta.get("values") or [[0]]
            style += f"; --label-ch:{2 + len(str(max(map(max, g.meta['threads'])))) + len(str(max(map(max, values))))}"
        parts = [
            f'<figure class="gridfig" id="fig-{escape(g.id)}"><figcaption class="tools">',
            f'<span class="mono grid-caption">{cap}</span>' if cap else "",
            f'<span class="gridtools" data-grid="{escape(g.id)}">',
            '<button type="button" class="zoom" data-zoom="out" title="Zoom out" aria-label="zoom out">−</button>'
            '<button type="button" class="zoom" data-zoom="in" title="Zoom in" aria-label="zoom in">+</button>'
            '<button type="button" class="zoom" data-zoom="fit" title="Fit the whole grid in view">Fit</button>'
            '<button type="button" class="zoom" data-zoom="1" title="Actual size">1:1</button>'
            '<output class="zoom-level" aria-live="polite"></output><button type="button" class="fullscreen" '
            'title="Show this grid full screen (Esc leaves)" aria-pressed="false">Full screen</button>',
            '<details class="gridview"><summary title="What the cells show and how they are coloured">Cells</summary>'
            f'<div class="menu">{menu}</div></details>{export}</span></figcaption>',
            f'<div class="gridwrap" tabindex="0" role="group" aria-label="{name}: {g.rows} x {g.cols} cells; arrow '
            'keys move a cursor">',
            f'<div class="grid {escape(g.css)}" id="{escape(g.id)}" data-rows="{g.rows}" data-cols="{g.cols}" '
            f'style="{style}">{g.header()}{g.body()}</div></div>',
            f'<script type="application/json" class="grid-meta" data-for="{escape(g.id)}">{g.meta_json()}</script>'
            if g.meta else "",
            f'<script type="application/json" class="grid-data" data-for="{escape(g.id)}">{g.data_json()}</script>'
            if g.deferred else "",
            "</figure>"]
        return "".join(parts)

    def svg_body(self, palette: list[str]) -> tuple[str, int, int]:
        """(the SVG elements, width, height) of this grid: the one drawing of a grid as a picture, for
        ``layoutlab.svg`` and the pages' SVG button alike. One ``<g class="cell">`` per cell (a ``<rect>`` filled
        with ``palette[colour]`` and a ``<text>``, with the cell's ``cell_attrs``), the nested-mode lines, the row and
        column labels; the ``marks``: ``dim`` cells faded, ``acc`` / ``bad`` cells outlined over everything; under it
        the caption and, where cells are outlined, what the outline means (``meta["outline"]``)."""
        longest = max((len(str(t)) for row in self.text for t in row), default=1)
        w, h, pad = max(44, -(-67 * longest // 10) + 8), 22, 28
        width, height = pad + self.cols * w + 2, pad + self.rows * h + 2 + 40
        out = []
        labels = [str(x) for x in self.col_labels] if self.col_labels else [str(j) for j in range(self.cols)]
        rlabels = self.row_labels or [str(i) for i in range(self.rows)]
        out += [f'<text x="{pad + j * w + w / 2:g}" y="{pad - 8}" text-anchor="middle" fill="#666">{escape(t)}</text>'
                for j, t in enumerate(labels)]
        out += [f'<text x="{pad - 6}" y="{pad + i * h + h / 2 + 4:g}" text-anchor="end" fill="#666">{escape(t)}</text>'
                for i, t in enumerate(rlabels)]
        clv = self.col_levels or [0] * self.cols
        for i in range(self.rows):
            for j in range(self.cols):
                x, y = pad + j * w, pad + i * h
                c = self.colour[i][j] if self.colour is not None else -1
                fill = palette[c % len(palette)] if c >= 0 else "#fff"
                attrs = self.cell_attrs[i][j] if self.cell_attrs is not None else ""
                dim = ' fill-opacity="0.18"' if "dim" in self.marks.get((i, j), "").split() else ""
                line = (f'<line x1="{x}" y1="{y}" x2="{x}" y2="{y + h}" stroke="#222" stroke-width="{clv[j]}"/>'
                        if clv[j] else "")
                out.append(f'<g class="cell"{attrs}><rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{fill}"{dim} '
                           f'stroke="#999" stroke-width="0.5"/><text x="{x + w / 2:g}" y="{y + h / 2 + 4:g}" '
                           f'text-anchor="middle">{_label(self.text[i][j])}</text>{line}</g>')
        for i, lv in enumerate(self.row_levels or []):
            if lv:
                y = pad + i * h
                out.append(f'<line x1="{pad}" y1="{y}" x2="{pad + self.cols * w}" y2="{y}" stroke="#222" '
                           f'stroke-width="{lv}"/>')
        outlined = 0
        for (i, j), cls in sorted(self.marks.items()):
            kind = next((k for k in OUTLINES if k in cls.split()), None)
            if kind:
                outlined += 1
                out.append(f'<rect x="{pad + j * w + 1.5:g}" y="{pad + i * h + 1.5:g}" width="{w - 3}" '
                           f'height="{h - 3}" fill="none" stroke="{OUTLINES[kind]}" stroke-width="2.5" '
                           f'class="{kind}"/>')
        notes = [self.caption] + [self.meta.get("outline") or f"outlined: {outlined} marked cells"] * bool(outlined)
        y0 = pad + self.rows * h + 18
        out += [f'<text x="{pad}" y="{y0 + 16 * k}" fill="#333" class="caption">{escape(t)}</text>'
                for k, t in enumerate(t for t in notes if t)]
        return "".join(out), width, height

    def meta_json(self) -> str:
        """The hover metadata as a JSON literal safe to embed in ``<script type="application/json">``.

        A deferred grid's per-column tables are sent short where they repeat what the page has: ``"colCrd": "j"``
        when ``colCrd[j] == [str(j)]`` for every column, ``{"f": [f0, f1, ...]}`` when every ``colCrd[j]`` is one
        tuple ``"(a,b,...)"`` whose parts run through the lists fk mixed-radix, part 0 fastest (see ``_factors``),
        ``"colOff": "t"`` when a one-row grid has ``colOff[j] == [text[0][j]]``; static/grid-data.js ``metaFor`` expands
        them (a 1-D grid of 65,536 cells: 1.2 MB -> 0.1 kB)."""
        meta = self.meta
        crd, off = meta.get("colCrd"), meta.get("colOff")
        if self.deferred and isinstance(crd, list) and len(crd) == self.cols:
            meta = dict(meta)
            if all(len(c) == 1 and c[0] == str(j) for j, c in enumerate(crd)):
                meta["colCrd"] = "j"
            elif (f := _factors([c[0] for c in crd] if all(len(c) == 1 for c in crd) else [])) is not None:
                meta["colCrd"] = {"f": f}
            if (self.rows == 1 and isinstance(off, list) and len(off) == self.cols
                    and all(len(o) == 1 and type(o[0]) is int and o[0] == t for o, t in zip(off, self.text[0],
                                                                                                strict=True))):
                meta["colOff"] = "t"
        if any(k in meta and exact_json(meta[k]) is not meta[k] for k in ("rowOff", "colOff")):
            meta = {**meta, "rowOff": exact_json(meta.get("rowOff")), "colOff": exact_json(meta.get("colOff"))}
        return json.dumps(meta, separators=(",", ":")).replace("<", "\\u003c")


def _parts(text: str) -> list[str] | None:
    """The top-level parts of a tuple written ``"(a,b,...)"`` (parts may nest), or None when ``text`` is no tuple."""
    if len(text) < 2 or text[0] != "(" or text[-1] != ")":
        return None
    if text.count("(") == 1:  # flat: the common case, at C speed
        return text[1:-1].split(",")
    parts, depth, start = [], 0, 1
    for k, ch in enumerate(text[1:-1], start=1):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(text[start:k])
            start = k + 1
    parts.append(text[start:-1])
    return parts


def _factors(texts: list[str]) -> list[list[str]] | None:
    """Lists f0, f1, ... with ``texts[j] == "(" + ",".join(fk[digit k of j]) + ")"`` where the digits are j in mixed
    radix (len(f0), len(f1), ...), digit 0 fastest; None when ``texts`` is not such a product (checked in full)."""
    split = [_parts(t) for t in texts]
    if len(texts) < 2 or split[0] is None or len(split[0]) < 2:
        return None
    n, stride, factors = len(texts), 1, []
    for k in range(len(split[0])):
        first = split[0][k + 1:]  # digit k rolls over where a later part first changes
        size = next((m for m in range(1, n // stride) if (p := split[m * stride]) is None or p[k + 1:] != first),
                    n // stride)
        factors.append([p[k] if (p := split[m * stride]) is not None and len(p) > k else "" for m in range(size)])
        stride *= size
    if stride != n:
        return None
    rebuilt = ["(" + ",".join(reversed(p)) + ")" for p in itertools.product(*reversed(factors))]
    return factors if rebuilt == texts else None


def _sparse(levels: Sequence[int]) -> dict[str, int]:
    """``{str(k): levels[k]}`` for the non-zero levels only (a 1-D grid of 65,536 columns has a handful)."""
    return {str(k): v for k, v in enumerate(levels) if v}


def _label(t: Any) -> str:
    if isinstance(t, int):
        return str(t)
    return str(escape(t))


def offset_colours(offsets: list[list[int]]) -> list[list[int]]:
    """Palette index of each offset: ``offset mod 32`` (the bank of a 4-byte element at that offset)."""
    return [[v % PALETTE for v in row] for row in offsets]


def svg_document(pictures: list[tuple[str, int, int]]) -> str:
    """One SVG document of ``(elements, width, height)`` pictures (``Grid.svg_body`` each, or a note), one under the
    other 12 px apart, on white."""
    parts, y, width = [], 0, 200
    for body, w, h in pictures:
        parts.append(f'<g transform="translate(0,{y})">{body}</g>')
        y += h + 12
        width = max(width, w)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" font-family="monospace" '
            f'font-size="11"><rect width="{width}" height="{y}" fill="#fff"/>' + "".join(parts) + "</svg>")
