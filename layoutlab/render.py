"""The outputs of ``layoutlab``: every one drawn from the grid model (``layoutlab.grid.Grid``) that the pages draw.

- ``html``: the explorer's figure (the same markup, CSS and scripts), self-contained;
- ``svg``: ``Grid.svg_body``, the same drawing as the pages' SVG button (``POST /api/svg``);
- ``text``: the table as ``cute::print_layout`` prints it;
- ``latex``: TikZ as CuTe's ``print_latex`` / ``print_latex_tv`` write it.

A cell of the HTML and SVG outputs is one element carrying its offset: ``<span data-offset="5">5</span>`` in the
HTML (a TV cell also ``data-thread`` and ``data-value``, its text ``T<t>V<v>``), ``<g class="cell"
data-offset="5">`` in the SVG; headers and labels carry none. So ``[data-offset]`` counts the cells, whatever the
layout. The offset is ``L(i, j)`` as ``cute::print_layout`` prints it: an integer, or for a coordinate layout (scaled
basis strides, ``ArithTuple(2,3) o (4,4):(1@0,1@1)``) the coordinate it maps to, ``data-offset="(2,3)"``.
"""

from __future__ import annotations

import itertools
import uuid
from typing import Any

import layoutlab.model as model
import layoutlab.web as web
from layoutlab.grid import Grid, escape, svg_document
from layoutlab.inputs import Panel

COLOURS = ("offset", "bank", "thread")
#: Cells of one TikZ picture. pdflatex's default main memory is 5,000,000 words, the format takes 1.9M, a plain node
#: about 530 and a T/V node (``\shortstack``) about 780 (measured from the log): 4,096 plain nodes fit (4.0M), and a
#: T/V cell counts LATEX_TV_WEIGHT against the cap (2,730 of them: 4.0M; a 64 x 64 TV tile needs 5.04M and stops with
#: "TeX capacity exceeded", as CuTe's print_latex of a 128x32x32 tiled MMA does).
LATEX_CELLS = 64 * 64
LATEX_TV_WEIGHT = 1.5
_ids = itertools.count()


def check_colour(colour: str | None, element_bytes: int) -> None:
    from algebra import LayoutError

    if colour is not None and colour not in COLOURS:
        raise LayoutError(f"colour: {colour!r} is not one of {', '.join(COLOURS)}")
    if not isinstance(element_bytes, int) or isinstance(element_bytes, bool) or not 1 <= element_bytes <= 64:
        raise LayoutError(f"element_bytes: {element_bytes!r} is not a whole number of bytes from 1 to 64")


def grid_of(p: Panel, grid_id: str, colour: str | None = None, element_bytes: int = 4) -> Grid | None:
    """The Grid of one panel (None when the panel is over a cap): every cell written inline, each with its
    ``data-offset`` (and a TV cell's ``data-thread`` / ``data-value``)."""
    if p.note is not None:
        return None
    if p.is_tv:
        text, palette, meta = model.tv_cells(p.threads, p.values, by_warp=False)
        index = p.index or [[0] * p.cols for _ in range(p.rows)]
        if colour == "offset":
            palette = [[v % 32 for v in row] for row in index]
            meta["colour_name"] = "by offset"
        elif colour == "bank":
            palette = [[(v * element_bytes // 4) % 32 for v in row] for row in index]
            meta["colour_name"] = f"by bank ({element_bytes}-byte elements)"
        attrs = [[f' data-offset="{o}" data-thread="{t}" data-value="{v}"' if t >= 0 else f' data-offset="{o}"'
                  for o, t, v in zip(orow, trow, vrow, strict=True)]
                 for orow, trow, vrow in zip(index, p.threads, p.values, strict=True)]
        meta["hover"] = f"{grid_id}-card"
        return Grid(id=grid_id, rows=p.rows, cols=p.cols, text=text, colour=palette, css="tv", meta=meta,
                    caption=f"{p.title} · {p.notation}" if p.title else p.notation, cell_attrs=attrs, inline=True)
    view = p.view
    attrs = [[f' data-offset="{escape(v)}"' for v in row] for row in view.coords or view.offsets]
    g = model.layout_grid(view, grid_id, hover=f"{grid_id}-card", colour=colour or "offset", cls=Grid,
                          element_bytes=element_bytes, cell_attrs=attrs, inline=True)
    if g is not None:
        if p.title:
            g.caption = f"{p.notation} · {p.title}" if p.title != p.notation else p.notation
        if not view.row_crd:  # a table with no hover data (Triton's padded offsets): the card names the cell
            g.meta = {"hover": g.meta["hover"]}
    return g


def _note(p: Panel, error: bool = False) -> str:
    cls = "llab-note llab-error" if error else "llab-note"
    return f'<div class="{cls}" role="note"><b>{escape(p.notation)}</b><br>{escape(p.note or "")}</div>'


def html(ps: list[Panel], colour: str | None = None, element_bytes: int = 4) -> str:
    """One self-contained HTML fragment: the grids (each beside its hover card), the scoped CSS and the scripts."""
    out = [f'<div class="llab" id="llab-{uuid.uuid4().hex[:12]}"><style>{web.css()}</style>']
    for p in ps:
        gid = f"ll{uuid.uuid4().hex[:10]}g{next(_ids)}"
        g = grid_of(p, gid, colour, element_bytes)
        if g is None:
            out.append(_note(p))
            continue
        facts = ""
        if p.view is not None and p.view.size:
            v = p.view
            facts = (f'<div class="muted">size {v.size} · cosize {v.cosize} · rank {v.rank} · depth {v.depth}'
                     + (" · " + ("injective" if v.injective else "not injective") if v.injective is not None else "")
                     + "</div>")
        hint = ("hover a cell: its thread (lane, warp) and value" if p.is_tv else
                "hover a cell: its coordinates and each mode's share")
        out.append(f'<div class="with-card">{g.figure(tools=True, export=False)}<div class="hover" id="{gid}-card" '
                   f'role="status"><span class="muted">{hint}</span></div></div>{facts}')
    out.append(f"<script>{web.script()}</script></div>")
    return "".join(out)


def error_html(message: str) -> str:
    """A notebook output for input that cannot be drawn: the reason, no traceback."""
    return (f'<div class="llab"><style>{web.css()}</style><div class="llab-note llab-error" role="alert">'
            f"{escape(message)}</div></div>")


def svg(ps: list[Panel], colour: str | None = None, element_bytes: int = 4) -> str:
    """One SVG document: the grids one under the other (``Grid.svg_body`` each), a note in place of a grid over the
    cap."""
    pictures = []
    for k, p in enumerate(ps):
        g = grid_of(p, f"svg{k}", colour, element_bytes)
        if g is None:
            note = escape(p.note or "")
            pictures.append((f'<text x="4" y="16" class="caption">{escape(p.notation)}</text>'
                             f'<text x="4" y="34" class="note">{note}</text>', 8 * len(p.note or ""), 44))
        else:
            pictures.append(g.svg_body(web.palette()))
    return svg_document(pictures)


def text(ps: list[Panel]) -> str:
    """The tables as ``cute::print_layout`` prints them (its header line, column indices, ``+----+`` rules, row
    indices; cells ``num_digits(cosize) + 2`` wide); a TV panel's cells as ``T<t>V<v>``; a panel over the cap as its
    notation and the reason."""
    out = []
    for p in ps:
        if p.note is not None:
            out.append(f"{p.notation}\n{p.note}\n")
            continue
        if p.is_tv:
            cells = [[f"T{t}V{v}" if t >= 0 else "" for t, v in zip(tr, vr, strict=True)]
                     for tr, vr in zip(p.threads, p.values, strict=True)]
            width = max(len(c) for row in cells for c in row) + 2
            head = f"{p.notation}" + (f"  ({p.title})" if p.title else "")
        else:
            v = p.view
            cells = v.coords or v.offsets
            width = (num_digits(v.cosize) if v.coords is None else max(len(c) for r in cells for c in r)) + 2
            head = p.notation
        cols = len(cells[0]) if cells else 0
        rule = "    " + ("+" + "-" * width) * cols + "+"
        lines = [head, "    " + "".join(f"  {j:>{width - 2}} " for j in range(cols))]
        for i, row in enumerate(cells):
            lines.append(rule)
            lines.append(f"{i:>2}  " + "".join(f"| {str(c):>{width - 2}} " for c in row) + "|")
        lines.append(rule)
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def num_digits(x: int) -> int:
    """CuTe's ``num_digits`` (cute/util/print.hpp): decimal digits of x, 1 for anything below 10."""
    return next((d for d in range(1, 10) if x < 10 ** d), 10)


_TV_TIKZ = ("{rgb,255:red,175;green,175;blue,255}", "{rgb,255:red,175;green,255;blue,175}",
            "{rgb,255:red,255;green,255;blue,175}", "{rgb,255:red,255;green,175;blue,175}",
            "{rgb,255:red,210;green,210;blue,255}", "{rgb,255:red,210;green,255;blue,210}",
            "{rgb,255:red,255;green,255;blue,210}", "{rgb,255:red,255;green,210;blue,210}")
_BW = ("black!00", "black!40", "black!20", "black!60", "black!10", "black!50", "black!30", "black!70")


def latex(ps: list[Panel], colour: str | None = None, element_bytes: int = 4) -> str:
    """A standalone LaTeX document (``pdflatex`` compiles it; TikZ only) drawing each panel as CuTe's
    ``print_latex`` (a layout: ``\\node[fill=..] at (m,n) {offset};``, grey levels by offset mod 8; a rank-1 layout
    as one column, as CuTe appends a 1:0 mode) or ``print_latex_tv`` (a TV picture: ``\\shortstack{T<t> \\\\
    V<v>}``, coloured by thread mod 8, in CuTe's order: threads outer, values inner) draws it, line for line; panels
    side by side. With ``colour`` "bank" or "offset", cells take the pages' 32 colours by bank / offset."""
    from algebra import LayoutError

    for p in ps:
        if p.note is not None:
            raise LayoutError(f"{p.notation}: {p.note}")
    if latex_cells(ps) > LATEX_CELLS:
        cells = sum(p.rows * p.cols for p in ps)
        tv = sum(p.rows * p.cols for p in ps if p.is_tv)
        weighed = f" ({tv:,} of them T/V cells, each counted {LATEX_TV_WEIGHT:g} times)" if tv else ""
        raise LayoutError(f"latex: {cells:,} cells{weighed} is over the cap of {LATEX_CELLS:,} for one TikZ picture "
                          "(pdflatex runs out of memory on bigger ones); draw it with svg or html")
    dims = [(p.cols, 1) if not p.is_tv and p.view.rank <= 1 else (p.rows, p.cols) for p in ps]  # as drawn
    wide = sum(c + 2 for _, c in dims) >= 0.62 * max(r + 2 for r, _ in dims)  # article's text block is ~1:1.6
    fit = "{\\linewidth}{!}" if wide else "{!}{\\textheight}"
    pal = web.palette()
    lines = [f"% Layout: {p.notation}" for p in ps]
    lines += ["% standalone crops the page to the picture; without it (a minimal TeX), an article page holds it scaled",
              "\\IfFileExists{standalone.cls}{\\documentclass{standalone}\\newcommand\\llabshow{\\usebox\\llabbox}}",
              f"{{\\documentclass{{article}}\\usepackage{{graphicx}}\\pagestyle{{empty}}"
              f"\\newcommand\\llabshow{{\\noindent\\resizebox{fit}{{\\usebox\\llabbox}}}}}}",
              "\\usepackage{tikz}", "\\newsavebox\\llabbox", ""]
    lines += [f"\\definecolor{{llab{k}}}{{HTML}}{{{c[1:].upper()}}}" for k, c in enumerate(pal)]
    lines += ["", "\\begin{document}", "\\begin{lrbox}{\\llabbox}",
              "\\begin{tikzpicture}[x={(0cm,-1cm)},y={(1cm,0cm)},every node/.style={minimum size=1cm, outer sep=0pt}]",
              ""]
    shift = 0
    for p, (rows, cols) in zip(ps, dims, strict=True):
        lines.append(f"\\begin{{scope}}[shift={{(0,{shift})}}]")
        lines.append(f"\\node[anchor=west] at (-2,-1) {{\\texttt{{{_tex(p.title or p.notation)}}}}};")
        index = p.index if p.is_tv else p.view.offsets
        # print_latex draws a rank-1 layout as one column (append<2>(L, 1:0)): cell (0, n) of the row at (n, 0)
        column = (rows, cols) != (p.rows, p.cols)
        tv_nodes = []
        for m in range(p.rows):
            for n in range(p.cols):
                o = index[m][n] if index else 0
                if p.is_tv:
                    t, v = p.threads[m][n], p.values[m][n]
                    if t < 0:
                        continue
                    fill = _fill(colour or "thread", o, t, element_bytes, _TV_TIKZ[t % 8])
                    tv_nodes.append((t, v, f"\\node[fill={fill}] at ({m},{n}) {{\\shortstack{{T{t} \\\\ V{v}}}}};"))
                else:
                    label = p.view.coords[m][n] if p.view.coords else str(o)
                    fill = _fill(colour or "gray", o, n if column else m, element_bytes, _BW[o % 8])
                    at = f"{n},0" if column else f"{m},{n}"
                    lines.append(f"\\node[fill={fill}] at ({at}) {{{_tex(label)}}};")
        lines += [line for *_, line in sorted(tv_nodes)]  # print_latex_tv's order: threads outer, values inner
        lines.append(f"\\draw[color=black,thick,shift={{(-0.5,-0.5)}}] (0,0) grid ({rows},{cols});")
        lines += [f"\\node at ({m},-1) {{\\Large{{\\texttt{{{m}}}}}}};" for m in range(rows)]
        lines += [f"\\node at (-1,{n}) {{\\Large{{\\texttt{{{n}}}}}}};" for n in range(cols)]
        lines.append("\\end{scope}")
        lines.append("")
        shift += cols + 2
    lines += ["\\end{tikzpicture}", "\\end{lrbox}", "\\llabshow", "\\end{document}", ""]
    return "\n".join(lines)


def latex_cells(ps: list[Panel]) -> float:
    """What the panels weigh against LATEX_CELLS: a plain cell 1, a T/V cell LATEX_TV_WEIGHT."""
    return sum(p.rows * p.cols * (LATEX_TV_WEIGHT if p.is_tv else 1) for p in ps)


def _fill(colour: str, offset: int, thread: int, element_bytes: int, default: str) -> str:
    if colour == "offset":
        return f"llab{offset % 32}"
    if colour == "bank":
        return f"llab{(offset * element_bytes // 4) % 32}"
    if colour == "thread" and default.startswith("black"):  # a plain layout coloured by row (mode 0)
        return f"llab{thread % 32}"
    return default


_TEX = {"<": "\\ensuremath{<}", ">": "\\ensuremath{>}", "~": "\\textasciitilde{}", "^": "\\textasciicircum{}",
        "\\": "\\textbackslash{}", "\u00b7": "--"}


def _tex(s: Any) -> str:
    """Text for a TikZ node in any pdflatex (OT1 encoding, ASCII): TeX's specials escaped, other characters
    outside ASCII written as ``?``."""
    return "".join("\\" + c if c in "#$%&_{}" else _TEX.get(c, c if c.isascii() else "?") for c in str(s))
