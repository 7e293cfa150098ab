"""LayoutLab's library face: the explorer's grids wherever a layout is, in a notebook, a terminal or a paper.

```python
import layoutlab
layoutlab.show("(4,8):(8,1)")          # Jupyter: the explorer's interactive grid; a terminal: print_layout's table
layoutlab.html(x) -> str               # self-contained HTML (inline style and script, no network)
layoutlab.svg(x) -> str                # the same grid as an SVG document
layoutlab.latex(x) -> str              # TikZ as CuTe's print_latex writes it (pdflatex compiles it)
layoutlab.text(x) -> str               # the table as cute::print_layout prints it
```

``x``: our Layout / ComposedLayout, CuTe notation text (the DSL's printed forms too), a TV layout with
``tile=(M, N)``, an atom, a tiled copy / MMA, a pycute Layout or any object with ``.shape`` and ``.stride``, a numpy /
torch array, a Triton TTGIR attribute with ``shape=(R, C)`` (see ``layoutlab.inputs``). Options: ``colour`` "offset",
"bank" or "thread"; ``element_bytes`` (the bank width of a cell, default 4). Input that cannot be drawn raises
``layoutlab.LayoutError`` (``algebra.LayoutError``, a ``ValueError``) with a one-line reason; ``show`` in IPython
displays that reason instead. A layout over the render cap (``layoutlab.caps.MAX_CELLS`` cells) is not drawn: the
output says so and shows its notation.

Every cell of the HTML and SVG outputs is one element with a ``data-offset`` attribute holding its offset (CuTe's
``L(i, j)`` as ``print_layout`` prints it: an integer, or for a coordinate tensor such as
``ArithTuple(2,3) o (4,4):(1@0,1@1)`` the coordinate, ``(2,3)``), its text the offset; TV cells also carry
``data-thread`` / ``data-value`` and read ``T<t>V<v>``.

Importing this package in IPython registers display formatters (``text/html`` and ``text/plain`` alike): a bare
Layout, ComposedLayout, coordinate tensor, atom, tiled copy / MMA, or pycute Layout or ComposedLayout as a cell's last
line draws itself.
"""

from __future__ import annotations

import sys
from typing import Any

from algebra import LayoutError

__all__ = ["LayoutError", "Picture", "html", "latex", "show", "svg", "text"]


def _panels(x: Any, tile: Any, shape: Any, element_bits: int) -> list:
    from layoutlab.inputs import panels

    try:
        return panels(x, tile=tile, shape=shape, element_bits=element_bits)
    except LayoutError:
        raise
    except RecursionError:
        raise LayoutError(f"{type(x).__name__}: nested too deeply to draw") from None
    except (TypeError, ValueError, IndexError, KeyError, AttributeError, ArithmeticError) as exc:
        raise LayoutError(f"{type(x).__name__}: cannot draw it ({type(exc).__name__}: {exc})") from None


class Picture:
    """What ``show`` displays: ``_repr_html_`` for Jupyter, ``__repr__`` (the print_layout table) for text."""

    def __init__(self, x: Any, colour: str | None = None, element_bytes: int = 4, tile: Any = None,
                 shape: Any = None, element_bits: int = 16) -> None:
        from layoutlab.render import check_colour

        check_colour(colour, element_bytes)
        self.panels = _panels(x, tile, shape, element_bits)
        self.colour, self.element_bytes = colour, element_bytes

    def _repr_html_(self) -> str:
        from layoutlab import render

        return render.html(self.panels, self.colour, self.element_bytes)

    def svg(self) -> str:
        from layoutlab import render

        return render.svg(self.panels, self.colour, self.element_bytes)

    def latex(self) -> str:
        from layoutlab import render

        return render.latex(self.panels, self.colour, self.element_bytes)

    def text(self) -> str:
        from layoutlab import render

        return render.text(self.panels)

    def __repr__(self) -> str:
        return self.text()


class Refusal:
    """The display of input that cannot be drawn: its reason, as HTML and as text (no traceback)."""

    def __init__(self, message: str) -> None:
        self.message = message

    def _repr_html_(self) -> str:
        from layoutlab.render import error_html

        return error_html(self.message)

    def __repr__(self) -> str:
        return f"layoutlab: {self.message}"


def html(x: Any, colour: str | None = None, element_bytes: int = 4, tile: Any = None, shape: Any = None,
         element_bits: int = 16, *, color: str | None = None) -> str:
    """Self-contained HTML of ``x``'s grid(s): the explorer's figure with its hover card, zoom and cell menus; inline
    style and script, no network; unique ids, so that many outputs share a page."""
    return Picture(x, colour or color, element_bytes, tile, shape, element_bits)._repr_html_()


def svg(x: Any, colour: str | None = None, element_bytes: int = 4, tile: Any = None, shape: Any = None,
        element_bits: int = 16, *, color: str | None = None) -> str:
    """An SVG document of ``x``'s grid(s), as the pages' SVG export draws them."""
    return Picture(x, colour or color, element_bytes, tile, shape, element_bits).svg()


def latex(x: Any, colour: str | None = None, element_bytes: int = 4, tile: Any = None, shape: Any = None,
          element_bits: int = 16, *, color: str | None = None) -> str:
    """A standalone TikZ document of ``x`` in the style of CuTe's ``print_latex`` (``pdflatex`` compiles it).
    Raises LayoutError for a grid over the render cap."""
    return Picture(x, colour or color, element_bytes, tile, shape, element_bits).latex()


def text(x: Any, tile: Any = None, shape: Any = None, element_bits: int = 16) -> str:
    """The table of ``x`` as ``cute::print_layout`` prints it."""
    return Picture(x, None, 4, tile, shape, element_bits).text()


def _ipython() -> Any:
    mod = sys.modules.get("IPython")
    if mod is None:
        return None
    try:
        return mod.get_ipython()
    except Exception:  # noqa: BLE001 - no shell: not in IPython
        return None


def show(x: Any, colour: str | None = None, element_bytes: int = 4, tile: Any = None, shape: Any = None,
         element_bits: int = 16, *, color: str | None = None) -> None:
    """Draw ``x``: in IPython / Jupyter the interactive grid (a terminal IPython shows the table; a refusal displays
    its reason, never a traceback), elsewhere the table as ``cute::print_layout`` prints it (a refusal raises
    LayoutError)."""
    if _ipython() is not None:
        from IPython.display import display

        try:
            display(Picture(x, colour or color, element_bytes, tile, shape, element_bits))
        except LayoutError as exc:
            display(Refusal(str(exc)))
        return
    print(text(x, tile, shape, element_bits))


def _format_html(obj: Any) -> str:
    try:
        return Picture(obj)._repr_html_()
    except LayoutError as exc:
        return Refusal(str(exc))._repr_html_()


def _format_text(obj: Any, p: Any, cycle: bool) -> None:
    try:
        p.text(Picture(obj).text())
    except LayoutError:
        p.text(str(obj))


#: pycute's kinds drawn by a bare cell (registered by module and name: pycute is not imported).
PYCUTE_KINDS = (("pycute.layout", "Layout"), ("pycute.swizzle", "ComposedLayout"))


def register(ip: Any = None) -> bool:
    """Register ``text/html`` (the grid) and ``text/plain`` (print_layout's table) formatters for our layouts,
    coordinate tensors (``ArithTuple(2,3) o (4,4):(1@0,1@1)``), atoms, tiled copies / MMAs and pycute's Layout and
    ComposedLayout (PYCUTE_KINDS). True when registered."""
    ip = ip or _ipython()
    if ip is None or not hasattr(ip, "display_formatter"):
        return False
    from algebra import Layout
    from algebra.core.coord_tensor import CoordTensor
    from algebra.core.swizzle import ComposedLayout
    from algebra.hw.atoms import CopyAtom, MMAAtom
    from algebra.hw.atoms_tiled import TiledCopy, TiledMMA
    from algebra.hw.sm100 import UmmaAtom

    fmts = ip.display_formatter.formatters
    for cls in (Layout, ComposedLayout, CoordTensor, MMAAtom, UmmaAtom, CopyAtom, TiledCopy, TiledMMA):
        fmts["text/html"].for_type(cls, _format_html)
        fmts["text/plain"].for_type(cls, _format_text)
    for module, name in PYCUTE_KINDS:
        fmts["text/html"].for_type_by_name(module, name, _format_html)
        fmts["text/plain"].for_type_by_name(module, name, _format_text)
    if hasattr(ip, "set_custom_exc") and not getattr(ip, "_layoutlab_exc", False):
        ip.set_custom_exc((LayoutError,), _one_line)  # a refusal reads as its one line, not a traceback
        ip._layoutlab_exc = True
    return True


def _one_line(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: Any = None) -> list[str]:
    """IPython's report of a LayoutError raised in a cell: ``LayoutError: <reason>``, without the frames."""
    stb = [f"{etype.__name__}: {value}"]
    shell._showtraceback(etype, value, stb)
    return stb


register()
