"""What ``layoutlab`` draws: any layout-like object turned into panels (one grid each).

Recognised without importing their packages (by attributes and type names, never ``import numpy`` / ``torch`` /
``pycute`` / ``triton``):

- our ``Layout`` and ``ComposedLayout`` (swizzled), and CuTe notation text, CuTe DSL's printed forms included
  (``(_4,_8):(_8,_1)``, ``Sw<3,4,3> o _0 o (8,64):(64,1)``);
- a TV layout with ``tile=(M, N)``: ``(thread, value) -> index`` in the tile, column-major (CuTe's
  ``print_latex_tv``);
- an atom (``algebra.atoms.get``): an MMA atom's A, B and C, a copy atom's source and destination; a tiled copy
  (its TV layout over its tiler) or tiled MMA (A, B and C over its tile);
- a numpy array (``.strides`` in bytes / ``.itemsize``) or a torch tensor (``.stride()`` in elements);
- anything else with ``.shape`` and ``.stride`` in CuTe's sense (a pycute ``Layout``; a CuTe DSL layout);
- a Triton TTGIR layout attribute (text starting with ``#``) with ``shape=(R, C)``, or a ``(text, shape)`` pair.

Every refusal is a ``LayoutError`` (a ``ValueError``) with a one-line reason.
"""

from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import algebra as A
import layoutlab.model as model
from algebra import LayoutError
from algebra import inttuple as it
from algebra.core.swizzle import ComposedLayout
from layoutlab.caps import MAX_CELLS, MAX_DEPTH, MAX_SIZE, MAX_THREADS, clip


@dataclass
class Panel:
    """One grid to draw. ``view``: a layout's table (offsets, hover data); or ``threads`` / ``values`` (a TV picture:
    cell (m, n) holds thread ``threads[m][n]``'s value ``values[m][n]``, and ``index[m][n]`` is its index in the
    tile, the TV layout's offset); ``note`` says why no grid is drawn (over a cap), ``notation`` is always shown."""

    title: str
    notation: str
    view: model.LayoutView | None = None
    rows: int = 0
    cols: int = 0
    threads: list[list[int]] | None = None
    values: list[list[int]] | None = None
    index: list[list[int]] | None = None
    note: str | None = None

    @property
    def is_tv(self) -> bool:
        return self.threads is not None


def _ints(x: Any, what: str, depth: int = 0, seen: list[int] | None = None) -> Any:
    """A shape or stride as plain ints / nested tuples (torch.Size, lists, numpy ints and arrays, pycute's tuples).
    Sequences are measured before they are read: more than algebra's MAX_LEAVES entries in all is refused, and so is
    one that yields more or fewer entries than its ``len`` (read at most once past it)."""
    seen = [0] if seen is None else seen
    if depth > MAX_DEPTH + 2:
        raise LayoutError(f"{what}: nested deeper than the cap of {MAX_DEPTH}")
    if isinstance(x, bool):
        raise LayoutError(f"{what}: {x!r} is not an integer")
    if isinstance(x, Integral):
        return int(x)
    text = isinstance(x, (str, bytes))
    # a sequence (a numpy 1-D array has __index__ too, which raises: it is read as its entries; a 0-d one is a number)
    if isinstance(x, (tuple, list)) or (hasattr(x, "__iter__") and hasattr(x, "__len__") and not text
                                        and getattr(x, "ndim", 1) != 0):
        n = len(x)
        seen[0] += n
        if seen[0] > it.MAX_LEAVES:
            raise LayoutError(f"{what} has more than {it.MAX_LEAVES:,} modes")
        entries = list(itertools.islice(x, n + 1))  # no more than it claims (an endless iterator is read n + 1 times)
        if len(entries) != n:
            raise LayoutError(f"{what}: {type(x).__name__} claims {n} entries (its len) but "
                              f"{'yields more' if len(entries) > n else f'yields {len(entries)}'}")
        return tuple(_ints(v, what, depth + 1, seen) for v in entries)
    if hasattr(x, "__index__") and not text:
        return int(x.__index__())
    raise LayoutError(f"{what}: {x!r} is not an integer or a tuple of integers")


def _flat1(t: Any) -> Any:
    return t[0] if isinstance(t, tuple) and len(t) == 1 else t


def layout_of(x: Any) -> Any:
    """``x`` as our Layout / ComposedLayout, or None when ``x`` is no single layout (an atom, a TV picture)."""
    if isinstance(x, (A.Layout, ComposedLayout)):
        return x
    if isinstance(x, str):
        return model.parse_layout(x)
    try:
        return _foreign(x)
    except (LayoutError, RecursionError):
        raise
    except Exception as exc:  # noqa: BLE001 - the object's own code raised (a torch sparse tensor's stride())
        why = " ".join(f"{type(exc).__name__}: {exc}".split())
        raise LayoutError(f"{type(x).__name__}: reading its shape and strides raised {clip(why)}") from None


def _foreign(x: Any) -> Any:
    """:func:`layout_of` of an object of another package (its attributes may raise anything)."""
    # numpy: strides in bytes; torch: stride() in elements (checked before the generic .shape/.stride)
    if hasattr(x, "strides") and hasattr(x, "itemsize") and hasattr(x, "shape") and not callable(x.shape):
        shape, item = _ints(tuple(x.shape), "array shape"), int(x.itemsize)
        strides = _ints(tuple(x.strides), "array strides")
        if item <= 0:
            raise LayoutError(f"{type(x).__name__}: its item size is {item} bytes: its elements have no offsets")
        if any(s % item for s in strides):
            raise LayoutError(f"array strides {strides} (bytes) are not multiples of its item size {item}: no element "
                              "layout")
        if not shape:
            return A.Layout(1, 0)
        return _made(x, _flat1(shape), _flat1(tuple(s // item for s in strides)))
    stride = getattr(x, "stride", None)
    if stride is not None and callable(stride) and hasattr(x, "shape") and hasattr(x, "element_size"):  # torch
        shape = _ints(tuple(x.shape), "tensor shape")
        strides = _ints(tuple(stride()), "tensor strides")
        if not shape:
            return A.Layout(1, 0)
        return _made(x, _flat1(shape), _flat1(strides))
    if hasattr(x, "layoutA") and hasattr(x, "layoutB") and hasattr(x, "offset"):  # pycute's ComposedLayout
        return model.parse_layout(str(x))
    if hasattr(x, "shape") and stride is not None and not callable(stride):  # pycute, CuTe DSL, anything CuTe-like
        try:
            shape_t, stride_t = _ints(x.shape, "shape"), _ints(stride, "stride")
        except LayoutError as exc:  # not integer tuples (a DSL's basis strides): its printed form is CuTe notation
            try:
                return model.parse_layout(str(x))
            except LayoutError:
                raise LayoutError(f"{type(x).__name__}: {clip(exc)}, and its text is no CuTe notation") from None
        return _made(x, shape_t, stride_t)
    return None


def _made(x: Any, shape: Any, stride: Any) -> A.Layout:
    """The Layout of integer tuples read from ``x``; where they make none (not congruent, an extent of 0, over the
    magnitude cap) the algebra's own reason, naming ``x``'s type."""
    try:
        return A.Layout(shape, stride)
    except LayoutError as exc:
        raise LayoutError(f"{type(x).__name__}: {clip(exc)}") from None


def _layout_panel(layout: Any, title: str = "") -> Panel:
    n = A.size(layout)
    view = model.facts(layout)
    p = Panel(title=title, notation=str(layout), view=view)
    if n > MAX_CELLS:
        p.note = model.over_cap_note(n)
        return p
    model.fill_table(view, layout)
    model.fill_hover(view, layout)
    model.finish(view)
    p.rows, p.cols = view.rows, view.cols
    return p


def _tv_panel(title: str, notation: str, tv: Any, rows: int, cols: int, row_major: bool = False,
              atom: Any = None, clip: bool = False) -> Panel:
    """The grid of a TV layout over a ``rows x cols`` tile; an ``atom``'s threads are labelled by its ``thr_id``.
    With ``clip`` (a tiled copy, as the TV atlas draws it) pairs past the tile are left out and counted in the
    title."""
    p = Panel(title=title, notation=notation, rows=rows, cols=cols)
    if rows * cols > MAX_CELLS:
        p.note = f"a {rows}x{cols} tile exceeds the render cap of {MAX_CELLS:,} cells: the grid is not drawn"
        return p
    if A.size(tv) > MAX_SIZE:  # every (thread, value) pair is enumerated
        p.note = (f"size {model.pow2_text(A.size(tv))} exceeds the cap of {model.pow2_text(MAX_SIZE)} (thread, value) "
                  "pairs enumerated: the grid is not drawn")
        return p
    if atom is None:
        p.threads, p.values, held = model.tv_tile(tv, rows, cols, row_major, clip=clip)
        past = A.size(tv) - sum(map(sum, held))
        p.title += f" · {past:,} (thread, value) pair{'s' * (past != 1)} past the tile" if past else ""
    else:
        p.threads, p.values, _ = model.atom_tile(atom, tv, rows, cols, row_major)
    p.index = [[r * cols + c if row_major else r + rows * c for c in range(cols)] for r in range(rows)]
    return p


def _tile(tile: Any) -> tuple[int, int]:
    t = _ints(tile, "tile")
    t = (t,) if isinstance(t, int) else t
    if not t or len(t) > 2 or any(it.product(s) <= 0 for s in t):
        raise LayoutError(f"tile: {tile!r} is not (M, N) with positive extents")
    return (1, it.product(t[0])) if len(t) == 1 else (it.product(t[0]), it.product(t[1]))


def _triton(text: str, shape: Any, element_bits: int) -> list[Panel]:
    from algebra.doctor.triton_layouts import convert, cute_of
    from algebra.doctor.triton_shared import offset_table

    shp = [int(s) for s in _ints(shape, "shape")] if not isinstance(shape, int) else [int(shape)]
    if len(shp) > 2:
        raise LayoutError("shape: a Triton layout is drawn for rank-1 and rank-2 tensors")
    rows, cols = (1, shp[0]) if len(shp) == 1 else (shp[0], shp[1])
    if rows * cols > MAX_CELLS:
        return [Panel(title=text, notation=text, note=f"shape: {rows * cols:,} cells is over the grid cap of "
                      f"{MAX_CELLS:,}: the grid is not drawn")]
    t = convert(text, shp, element_bits)
    c = cute_of(t)
    if t.shared:
        if c["cute"]:
            return [_layout_panel(model.parse_layout(c["cute"]), f"{t.kind} · {shp} · CuTe {c['cute']}")]
        flat = offset_table(t.ll, t.paddings, shp)
        offs = [flat[r * cols:(r + 1) * cols] for r in range(rows)]
        view = model.LayoutView(layout=t.text, size=rows * cols, cosize=max(flat) + 1, rank=len(shp), depth=1,
                                rows=rows, cols=cols, offsets=offs)
        return [Panel(title=f"{t.kind} · {shp} · element offsets", notation=t.text, view=view, rows=rows, cols=cols)]
    threads, values, _ = model.triton_tv_tile(t, rows, cols)
    p = Panel(title=f"{t.kind} · {shp} · registers", notation=c["cute"] or t.text, rows=rows, cols=cols,
              threads=threads, values=values, index=[[r * cols + j for j in range(cols)] for r in range(rows)])
    return [p]


def _atom_panels(x: Any, element_bits: int) -> list[Panel] | None:
    """The grids of an MMA / copy atom, a tiled copy or a tiled MMA; None for anything else."""
    from algebra.hw.atoms import CopyAtom, MMAAtom
    from algebra.hw.atoms_tiled import TiledCopy, TiledMMA
    from algebra.hw.sm100 import UmmaAtom

    if isinstance(x, MMAAtom | UmmaAtom | CopyAtom):  # UmmaAtom: a tcgen05.mma atom (one thread per CTA)
        out = []
        for op in ("src", "dst") if isinstance(x, CopyAtom) else ("A", "B", "C"):
            tv, rows, cols, row_major = model.atom_operand(x, op, element_bits)
            title = f"{x.name} · {op}" + (f" ({element_bits}-bit elements, rows of 16 bytes)" if row_major else "")
            out.append(_tv_panel(title, str(tv), tv, rows, cols, row_major, atom=x))
        return out
    if isinstance(x, TiledCopy | TiledMMA) and x.num_threads > MAX_THREADS:  # the TV atlas's cap: every thread's
        kind = "tiled copy" if isinstance(x, TiledCopy) else "tiled MMA"    # partition is enumerated
        return [Panel(title=f"{kind} {x.atom.name}", notation=str(x.tv_layout if isinstance(x, TiledCopy) else
                                                                   x.thr_layout_vmnk),
                      note=f"{x.num_threads:,} threads exceeds the cap of {MAX_THREADS:,} threads: the grid is not "
                           "drawn")]
    if isinstance(x, TiledCopy):
        rows, cols = (1, x.tiler[0]) if len(x.tiler) == 1 else (x.tiler[0], it.product(tuple(x.tiler[1:])))
        if hasattr(x, "get_layoutS_TV") and hasattr(x, "get_layoutD_TV"):  # CuTe's print_latex(TiledCopy): S, D
            try:
                return [_tv_panel(f"tiled copy {x.atom.name} · {side} · {' x '.join(map(str, x.tiler))}", str(tv),
                                  tv, rows, cols, clip=True)
                        for side, tv in (("S", x.get_layoutS_TV()), ("D", x.get_layoutD_TV()))]
            except LayoutError:  # not (thread, value) -> index in the tiler: the TV layout alone below
                pass
        return [_tv_panel(f"tiled copy {x.atom.name} · {' x '.join(map(str, x.tiler))}", str(x.tv_layout),
                          x.tv_layout, rows, cols, clip=True)]
    if isinstance(x, TiledMMA):
        out = []
        m, n, k = (x.tile_size_mnk(i) for i in range(3))
        for op in ("A", "B", "C"):
            rows, cols = {"A": (m, k), "B": (n, k), "C": (m, n)}[op]
            p = Panel(title=f"tiled MMA {x.atom.name} · {op} · {m} x {n} x {k}", notation=str(x.thr_layout_vmnk),
                      rows=rows, cols=cols)
            if rows * cols > MAX_CELLS:
                p.note = f"a {rows}x{cols} tile exceeds the render cap of {MAX_CELLS:,} cells: the grid is not drawn"
            else:
                p.threads, p.values, _ = model.tiled_mma_tile(x, op)
                p.index = [[r + rows * c for c in range(cols)] for r in range(rows)]
            out.append(p)
        return out
    return None


def panels(x: Any, tile: Any = None, shape: Any = None, element_bits: int = 16) -> list[Panel]:
    """The grids of ``x`` (see the module docstring). Raises LayoutError with a one-line reason on what it cannot
    draw: unreadable text, an object with no shape, a TV layout that leaves its tile."""
    if isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) and x[0].lstrip().startswith("#"):
        x, shape = x
    if isinstance(x, str) and x.lstrip().startswith("#"):
        if shape is None:
            raise LayoutError("a TTGIR layout attribute needs the tensor's shape: shape=(R, C) (in the terminal, "
                              "--shape R,C)")
        return _triton(x.strip(), shape, element_bits)
    if shape is not None:
        raise LayoutError(f"shape {shape}: only a TTGIR layout attribute (text starting with #) takes a tensor "
                          f"shape, and {type(x).__name__} {str(x)[:60]!r} is not one")
    if "algebra.hw" in sys.modules and (atom := _atom_panels(x, element_bits)) is not None:  # (no atom exists
        if tile is not None:  # before the hardware models are loaded: a terminal's layout does not load them)
            raise LayoutError(f"tile {tile}: draws a plain (thread, value) layout over a tile; an atom, a tiled copy "
                              "or a tiled MMA draws its own tiles")
        return atom
    layout = layout_of(x)
    if layout is None:
        raise LayoutError(f"{type(x).__name__}: not a layout: it has no .shape and .stride (give a Layout, CuTe "
                          "notation, an atom, an array or a TTGIR attribute with shape=)")
    if A.depth(layout) > MAX_DEPTH:
        raise LayoutError(f"layout: depth {A.depth(layout)} exceeds the cap of {MAX_DEPTH}")
    if tile is not None:
        if isinstance(layout, ComposedLayout) or A.rank(layout) != 2:
            raise LayoutError(f"TV layout {layout}: a (thread, value) layout is rank 2 and plain")
        rows, cols = _tile(tile)
        return [_tv_panel(f"TV layout · tile {rows} x {cols}", str(layout), layout, rows, cols)]
    return [_layout_panel(layout)]
