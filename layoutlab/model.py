"""From a layout to its grid: the rank-2 offset table, the hover cards' coordinates and each mode's share, boundary
levels, and thread / value tables of TV layouts. The explorer's service (app/services/layouts.py), the TV atlas
(app/services/tv.py) and ``layoutlab`` build their grids here, so a page and a notebook draw the same cells.

Enumeration goes through ``enum(layout, what) -> [L(k) for k < size(L)]``: the app passes its budgeted one
(``app.budget.offsets``), ``layoutlab`` the plain ``algebra.offsets``.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import algebra as A
from algebra import LayoutError
from algebra import inttuple as it
from layoutlab.caps import MAX_CELLS, MAX_DEPTH, MAX_NESTING, MAX_TEXT, nesting_depth
from layoutlab.coordinates import coordinate_components, in_coshape, template, with_strides
from layoutlab.grid import Grid, boundary_levels, offset_colours

Enum = Callable[[Any, str], list]


def plain_offsets(layout: Any, what: str) -> list:
    """``A.offsets(layout)``: the enumeration outside a request (no work budget)."""
    return A.offsets(layout)


def pow2_text(n: int) -> str:
    """``2^k`` for exact powers of two, otherwise the number with thousands separators."""
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else f"{n:,}"


def is_composed(layout: Any) -> bool:
    return hasattr(layout, "layout_b")


def parse_layout(text: str, what: str = "layout") -> Any:
    """CuTe notation (CuTe's and the DSL's printed forms; a Layout or a swizzled ComposedLayout) under the text caps.

    Raises LayoutError on empty or malformed text, text over MAX_TEXT characters or MAX_NESTING levels, a shape
    deeper than MAX_DEPTH, or text that is no layout (a swizzle or a tiler alone)."""
    text = (text or "").strip()
    if not text:
        raise LayoutError(f"{what}: empty input; type a layout such as (4,8):(8,1)")
    if len(text) > MAX_TEXT:
        raise LayoutError(f"{what}: {len(text):,} characters exceeds the cap of {MAX_TEXT:,}")
    if nesting_depth(text) > MAX_NESTING:
        raise LayoutError(f"{what}: nested {nesting_depth(text)} deep, over the nesting cap of {MAX_NESTING}")
    try:
        layout = A.parse(text)
    except LayoutError as exc:
        msg = str(exc)
        raise LayoutError(msg if msg.startswith(what) else f"{what}: {msg}") from None
    if hasattr(layout, "domain") and not hasattr(layout, "shape"):  # L o O o Sw: CuTe's inverse of Sw o -O o L
        raise LayoutError(f"{what}: {layout} is a layout applied after a swizzle, a function of 1-D offsets x defined "
                          f"where {layout.domain_text()}, with no coordinate shape: there is no grid to draw"
                          + _drawn_inverse(layout))
    if not hasattr(layout, "shape") or not callable(layout):
        raise LayoutError(f"{what}: {text!r} is not a layout (a swizzle or tiler alone has no grid)")
    if A.depth(layout) > MAX_DEPTH:
        raise LayoutError(f"{what}: depth {A.depth(layout)} exceeds the cap of {MAX_DEPTH}")
    return layout


def _drawn_inverse(layout: Any) -> str:
    """``; its right inverse, R, is drawn`` for ``L o O o Sw`` whose right inverse is a swizzled layout, else ""."""
    try:
        inv = A.right_inverse(layout)
    except LayoutError:
        return ""
    return f" (its right inverse {inv} is a swizzled layout, drawn on its own)" if hasattr(inv, "shape") else ""


@dataclass
class LayoutView:
    """Everything the explorer, ``/api/layout`` and ``layoutlab`` show for one layout."""

    layout: str
    size: int
    cosize: int
    rank: int
    depth: int
    injective: bool | None = None
    compact: bool | None = None
    rows: int = 0
    cols: int = 0
    offsets: list[list[int]] | None = None
    coords: list[list[str]] | None = None  # a coordinate layout (basis strides): L(i, j) as "(x,y)" text
    note: str | None = None
    drawn: bool = True  # False when the grid's hover data is over the work cap (note says so)
    row_crd: list[str] = field(default_factory=list)
    col_crd: list[list[str]] = field(default_factory=list)
    row_off: list[int] = field(default_factory=list)
    col_off: list[list[int]] = field(default_factory=list)
    row_leaves: tuple[int, ...] = ()
    col_leaves: tuple[int, ...] = ()
    swizzle: str | None = None
    cpp: str = ""
    dsl: str = ""
    formula: str = ""
    #: (lowest, highest) offset, from the strides alone; None for coordinate layouts
    offset_range: tuple[int, int] | None = None
    #: L(size - 1) + 1, pycute's cosize: it differs from CuTe's (the width of offset_range) when a stride is negative
    last_plus_one: int | None = None

    def to_json(self) -> dict[str, Any]:
        cells = self.coords if self.coords is not None else self.offsets
        table = None if cells is None else {"rows": self.rows, "cols": self.cols, "offsets": cells}
        return {"layout": self.layout, "size": self.size, "cosize": self.cosize, "rank": self.rank,
                "depth": self.depth, "injective": self.injective, "compact": self.compact, "table": table,
                "note": self.note, "offset_range": list(self.offset_range) if self.offset_range else None,
                "last_plus_one": self.last_plus_one}


def _modes(layout: Any) -> list[Any]:
    """Top-level modes of a plain layout (a rank-1 layout is its own single mode)."""
    return [layout[k] for k in range(A.rank(layout))] if it.is_tuple(layout.shape) else [layout]


def table_shape(layout: Any) -> tuple[int, int]:
    """(rows, cols) of the rank-2 view: rank <= 1 is one row; otherwise mode 0 by the product of modes 1.."""
    shape = layout.shape
    if not it.is_tuple(shape) or len(shape) <= 1:
        return 1, it.product(shape)
    return it.product(shape[0]), it.product(shape[1:])


def inner_layout(layout: Any) -> Any:
    """The Layout under a swizzle (``Sw o O o L``: L) or an origin (``ArithTuple(2,3) o L``: L), else ``layout``."""
    return layout.layout_b if is_composed(layout) else layout.layout if hasattr(layout, "origin") else layout


def fill_table(view: LayoutView, layout: Any, enum: Enum = plain_offsets) -> None:
    """offsets[i][j] = L(i + rows * j), and the mode leaves along rows and columns (for boundaries). A coordinate
    tensor ``origin o L`` shows ``origin + L(i)``."""
    plain = inner_layout(layout)
    rows, cols = table_shape(plain)
    components = None if is_composed(layout) else coordinate_components(plain)
    origin = it.flatten(layout.origin) if hasattr(layout, "origin") else ()
    if origin and components is not None and len(origin) > len(components[1]) and type(components[0]) is tuple \
            and not any(type(c) is tuple for c in components[0]):  # (1,2,3) o (4,4):(1@0,1@1): entry 2 is constant
        extra = len(origin) - len(components[1])
        components = ((*components[0], *(1,) * extra), [*components[1], *[with_strides(plain.shape, [0] * len(
            it.flatten(plain.shape)))] * extra])
    if origin and components is not None and len(origin) > len(components[1]):
        raise LayoutError(f"{layout}: an origin of {len(origin)} entries beside coordinates of "
                          f"{len(components[1])} entries: there is no grid to draw")
    if origin and components is not None:  # (1) o (4,4):(1@0,1@1): (1,0)
        origin = origin + (0,) * (len(components[1]) - len(origin))
    if components is not None:  # coordinates (basis strides): integer arithmetic, one layout per entry
        coshape, leaves = components
        columns = [enum(leaf, "layout table") for leaf in leaves]
        if origin:  # origin + L(i), in the coshape that reaches from 0 to the origin's far corner
            columns = [[v + o for v in column] for column, o in zip(columns, origin, strict=True)]
            coshape = it.unflatten(tuple(c + o for c, o in zip(it.flatten(coshape), origin, strict=True)), coshape)
        form = template(coshape)
        texts = [form.format(*c) for c in zip(*columns, strict=True)]
        # the index of each coordinate in coshape (colex): one more integer layout, its strides the entries' weights
        weights = it.flatten(it.prefix_product(coshape))
        index = [sum(w * d for w, d in zip(weights, ds, strict=True))
                 for ds in zip(*(it.flatten(leaf.stride) for leaf in leaves), strict=True)]
        base = sum(w * o for w, o in zip(weights, origin, strict=False))
        flat = [base + k for k in enum(with_strides(plain.shape, index), "layout table")]
        view.coords = _rows(texts, rows)
    elif origin:  # a coordinate tensor the integer path does not take (a negative basis stride): its own origin + L(k)
        enum(plain, "layout table")  # (charged as any enumeration)
        crds = [layout(k) for k in range(A.size(plain))]
        view.coords = _rows([it.to_str(c) for c in crds], rows)
        weights, w = [], 1  # colex weights over each entry's span: an index per cell, for the colours
        for e in range(len(crds[0])):
            weights.append(w)
            w *= max(c[e] for c in crds) - min(c[e] for c in crds) + 1
        flat = [sum(w * d for w, d in zip(weights, c, strict=True)) for c in crds]
    else:
        flat = enum(layout, "layout table")  # L(k) in 1-D (column-major) order, swizzle included
        strides = it.flatten(plain.stride)
        if any(getattr(d, "is_basis", False) for d in strides) or (
                not all(type(d) is int for d in strides) and not set(map(type, flat)) <= {int}):
            # coordinates the integer path does not take (mixed or negative basis strides; a coordinate layout's
            # cells are coordinates even where every value is the int 0, all its modes of size 1)
            coshape = A.coshape(plain)
            crds = [in_coshape(c, coshape) for c in flat]  # 0@0, 3@0 (one basis), (1,2) (several): one form
            view.coords = _rows([it.to_str(c) for c in crds], rows)
            flat = [it.crd2idx(c, coshape) for c in crds]
    view.offsets = _rows(flat, rows)
    view.rows, view.cols = rows, cols
    row_mode, col_modes = split_modes(view, plain)
    view.row_leaves = it.flatten(row_mode.shape) if row_mode is not None else ()
    view.col_leaves = it.flatten(tuple(m.shape for m in col_modes))


def split_modes(view: LayoutView, plain: Any) -> tuple[Any, list[Any]]:
    """(the row mode or None for rank <= 1, the column modes) of the rank-2 view."""
    shape = plain.shape
    if view.rank <= 1:
        return None, [plain[0]] if it.is_tuple(shape) and len(shape) == 1 else [plain]
    return plain[0], _modes(plain)[1:]


def coord_texts(shape: Any) -> list[str]:
    """The natural coordinate of each 1-D index of ``shape`` as text: ``coord_texts(s)[k] ==
    it.to_str(it.idx2crd(k, s))``, built as products of the modes' lists (mode 0 fastest) instead of one idx2crd per
    index (a 128x128 column mode took a quarter of a second)."""
    if not it.is_tuple(shape):
        return [str(k) for k in range(shape)]
    parts = [coord_texts(s) for s in reversed(shape)]
    return ["(" + ",".join(reversed(p)) + ")" for p in itertools.product(*parts)]


def _mode_table(mode: Any, enum: Enum, coshape: Any = None) -> tuple[list[str], list[int]]:
    """(natural coordinate as text, offset) of each 1-D coordinate of one mode. A mode of a coordinate layout whose
    coshape is ``coshape``: its contributions as coordinates of that coshape, computed with integer arithmetic."""
    crd = coord_texts(mode.shape)
    components = coordinate_components(mode, coshape) if coshape is not None else None
    if components is not None:
        columns = [enum(leaf, "hover coordinates") for leaf in components[1]]
        form = template(coshape)
        return crd, [form.format(*c) for c in zip(*columns, strict=True)]
    off = enum(mode, "hover coordinates")
    if coshape is not None:  # a coordinate layout the integer path does not take (a negative basis stride)
        return crd, [it.to_str(in_coshape(o, coshape)) for o in off]
    return crd, off if not off or type(off[0]) is int else [str(o) for o in off]  # coordinates as text


def _rows(cells: list, rows: int) -> list[list]:
    """The column-major list ``cells`` as ``rows`` lists: ``out[i][j] == cells[i + rows * j]``."""
    cols = len(cells) // rows if rows else 0
    if cols < rows:  # few columns: one zip over the columns
        return [list(r) for r in zip(*(cells[j * rows:(j + 1) * rows] for j in range(cols)), strict=True)]
    return [cells[i::rows] for i in range(rows)]


#: Bytes of page each column-mode entry of the hover data costs (its coordinate and offset, as JSON).
HOVER_BYTES = 8


def fill_hover(view: LayoutView, layout: Any, enum: Enum = plain_offsets, byte_cap: int | None = None,
               charge: Callable[[str, int, str], None] | None = None) -> None:
    """Per-row / per-column coordinates and each mode's contribution, for the hover cards of a drawn grid.

    Post-condition: ``row_off[i] + sum(col_off[j]) == L(i, j)`` before any swizzle; ``col_crd[j][k]`` is the
    natural coordinate of column j in column mode k (column-major over the column modes). Over ``byte_cap``
    rendered bytes of hover data the view is marked not drawn, with a note naming the cap."""
    plain = inner_layout(layout)
    row_mode, col_modes = split_modes(view, plain)
    coshape = A.coshape(plain) if view.coords is not None else None
    if row_mode is not None:
        view.row_crd, view.row_off = _mode_table(row_mode, enum, coshape)
    else:
        view.row_off, view.row_crd = [0], ["0"]
    tables = [_mode_table(m, enum, coshape) for m in col_modes]
    sizes = [len(t[0]) for t in tables]
    if len(tables) == 1 and sizes[0] == view.cols:  # one column mode (every rank <= 2 layout): no mixed radix
        view.col_crd = [[c] for c in tables[0][0]]
        view.col_off = [[o] for o in tables[0][1]]
        return
    entries = view.cols * len(tables)
    if byte_cap is not None and HOVER_BYTES * entries > byte_cap:  # a fixed bound, so the view stays cacheable
        view.drawn = False
        view.note = (f"the hover data of {entries:,} column-mode entries ({view.cols:,} columns x {len(tables)} "
                     f"column modes) is over the work cap of {byte_cap:,} rendered bytes: the grid is not drawn")
        return
    if charge is not None:
        charge("rendered byte", HOVER_BYTES * entries, "hover cards of the column modes")
    # column j is mixed radix over the column modes, mode 0 fastest: itertools.product varies its last list fastest
    view.col_crd = [list(reversed(p)) for p in itertools.product(*[c for c, _ in reversed(tables)])]
    view.col_off = [list(reversed(p)) for p in itertools.product(*[o for _, o in reversed(tables)])]


def fill_range(view: LayoutView, layout: Any) -> None:
    """``offset_range`` and ``last_plus_one`` of a layout with integer strides (O(rank), nothing enumerated)."""
    fs, fd = it.flatten(layout.shape), it.flatten(layout.stride)
    if not all(type(d) is int and type(s) is int for s, d in zip(fs, fd, strict=True)):
        return
    lo = sum((s - 1) * d for s, d in zip(fs, fd, strict=True) if d < 0)
    hi = sum((s - 1) * d for s, d in zip(fs, fd, strict=True) if d > 0)
    view.offset_range = (lo, hi)
    view.last_plus_one = sum((s - 1) * d for s, d in zip(fs, fd, strict=True)) + 1


def facts(layout: Any) -> LayoutView:
    """The scalar facts of a layout (nothing enumerated)."""
    view = LayoutView(layout=str(layout), size=A.size(layout), cosize=A.cosize(layout), rank=A.rank(layout),
                      depth=A.depth(layout))
    if is_composed(layout):
        view.swizzle = str(layout.layout_a)
    else:
        fill_range(view, layout)
    return view


def finish(view: LayoutView) -> None:
    """``injective`` and ``compact`` of an enumerated view.

    A set of ints hashes them by their low bits: offsets that are all multiples of 2^k (``1048576:1048576``) all
    share them, and 2^20 of them took 0.9 s to gather instead of 0.2 s (over the page's CPU budget). They are
    gathered shifted right by the k bits they share: the same test of distinctness. Offsets that share a factor of
    two are never 0, 1, ..., size - 1 (for a size above 1), so such a view is not compact."""
    rows = view.offsets or ()

    def values() -> Iterator[int]:
        return itertools.chain.from_iterable(rows)

    # the bits every offset shares: only looked for past a first few thousand offsets that share some
    sample = functools.reduce(operator.or_, itertools.islice(values(), 4096), 0)
    low = functools.reduce(operator.or_, values(), 0) if sample & 1 == 0 else 1
    k = (low & -low).bit_length() - 1 if low else 0
    flat = {v >> k for v in values()} if k else set(values())
    view.injective = len(flat) == view.size
    if view.coords is not None:  # compact: every coordinate of the codomain (its coshape) is reached once
        view.compact = view.injective and view.size == view.cosize
        return
    view.compact = view.injective and k == 0 and min(flat, default=0) == 0 and max(flat, default=-1) == view.size - 1


def over_cap_note(n: int) -> str:
    return f"size {pow2_text(n)} exceeds the render cap of {MAX_CELLS:,} cells: the grid is not drawn"


def layout_grid(view: LayoutView, grid_id: str, hover: str | None = None, colour: str = "offset",
                cls: type[Grid] = Grid, element_bytes: int = 4, **extra: Any) -> Grid | None:
    """The explorer grid of ``view`` (None when there is no table or it is over the render cap).

    ``colour``: "offset" (palette ``offset mod 32``), "bank" (the bank of the offset's first byte for elements of
    ``element_bytes`` bytes: ``(offset * element_bytes // 4) mod 32``), "thread" (by row: mode 0, the thread mode of a
    (thread, value) layout) or anything else (none)."""
    if view.offsets is None or not view.drawn or view.rows * view.cols > MAX_CELLS:
        return None
    wide = any(v >= 10_000 or v <= -1000 for row in view.offsets for v in (row[0], row[-1]))
    meta: dict[str, Any] = {"rank": view.rank, "rows": view.rows, "rowCrd": view.row_crd, "rowOff": view.row_off,
                            "colCrd": view.col_crd, "colOff": view.col_off}
    if hover:
        meta["hover"] = hover
    if view.swizzle:
        meta["swizzle"] = view.swizzle
    palette = None
    if colour == "offset":
        palette = offset_colours(view.offsets)
    elif colour == "bank":
        palette = [[(v * element_bytes // 4) % 32 for v in row] for row in view.offsets]
        meta["colour_name"] = f"by bank ({element_bytes}-byte elements)"
    elif colour == "thread":
        palette = [[i % 32] * view.cols for i in range(view.rows)]
        meta["colour_name"] = "by thread (row, mode 0)"
    return cls(
        id=grid_id, rows=view.rows, cols=view.cols, text=view.coords or view.offsets, colour=palette,
        row_levels=boundary_levels(view.row_leaves, view.rows), col_levels=boundary_levels(view.col_leaves, view.cols),
        meta=meta, caption=view.layout, css="wide" if wide or view.coords else "",
        colour_mod=colour == "offset" and view.coords is None, **extra)


Table = list[list[int]]


def tv_tile(tv: Any, rows: int, cols: int, row_major: bool = False, enum: Enum = plain_offsets,
            clip: bool = False) -> tuple[Table, Table, Table]:
    """(threads, values, holders) per cell of a ``rows x cols`` tile that the TV layout ``tv`` ((thread, value) ->
    index, column-major in the tile, or row-major) covers.

    Post-condition, as CuTe's ``print_latex_tv`` labels a cell: ``(threads[m][n], values[m][n])`` is the first
    (thread, value) pair, threads outer and values inner, with ``tv(t, v)`` at (m, n); -1 where none is;
    ``holders[m][n]`` counts the pairs at (m, n). Raises LayoutError for a pair outside the tile, or with ``clip``
    leaves it out (a tiled copy's claims past its tiler, which its coverage counts). The TV atlas's tiled copies,
    ``layoutlab``'s TV pictures and CuTe's ``print_latex_copy`` label a cell by this one rule."""
    nthr = it.product(tv.shape[0]) if it.is_tuple(tv.shape) else A.size(tv)
    nval = A.size(tv) // max(1, nthr)
    threads = [[-1] * cols for _ in range(rows)]
    values = [[-1] * cols for _ in range(rows)]
    count = [[0] * cols for _ in range(rows)]
    flat = enum(tv, "TV layout")  # index k = t + nthr * v
    for t in range(nthr):
        for v in range(nval):
            idx = flat[t + nthr * v]
            if type(idx) is not int:
                raise LayoutError(f"TV layout {tv}: ({t},{v}) maps to {idx}, not an index of the tile")
            r, c = (idx // cols, idx % cols) if row_major else (idx % rows, idx // rows)
            if not (0 <= r < rows and 0 <= c < cols):
                if clip:
                    continue
                raise LayoutError(f"TV layout {tv} maps ({t},{v}) to {idx}, outside the {rows}x{cols} tile")
            if count[r][c] == 0:
                threads[r][c], values[r][c] = t, v
            count[r][c] += 1
    return threads, values, count


def atom_operand(atom: Any, op: str, element_bits: int = 16) -> tuple[Any, int, int, bool]:
    """(TV layout, rows, cols, row_major) of operand ``op`` of an atom as its picture draws it: an MMA atom's A / B /
    C (D is C) over its M x K / N x K / M x N tile, column-major; a copy atom's src / dst over its element span as
    rows of 16 bytes (row-major, so an ldmatrix 8x8 matrix shows as 8 rows of 8 fp16 values)."""
    if hasattr(atom, "operand_shape"):
        return atom.operand(op), *atom.operand_shape(op), False
    tv = atom.src_layout(element_bits) if op == "src" else atom.dst_layout(element_bits)
    cols = max(1, 128 // element_bits)
    return tv, -(-A.cosize(tv) // cols), cols, True


def atom_tile(atom: Any, tv: Any, rows: int, cols: int, row_major: bool = False,
              enum: Enum = plain_offsets) -> tuple[Table, Table, Table]:
    """:func:`tv_tile` of one of ``atom``'s TV layouts with each thread index ``t`` named ``thr_id(t)``, the lane
    CuTe's ``print_latex(MMA_Atom)`` (``print_latex(make_tiled_mma(atom))``) labels it with: SM70's quad-pair atoms
    put threads 0-7 on lanes 0-3 and 16-19 (``T16 V0`` at (4, 0) of C); every other atom's ``thr_id`` is the
    identity. Cells and values are ``tv_tile``'s."""
    threads, values, holders = tv_tile(tv, rows, cols, row_major, enum)
    lanes = atom_lanes(atom)
    if any(t >= len(lanes) for row in threads for t in row):
        raise LayoutError(f"{atom.name}: TV layout {tv} has threads past thr_id {atom.thr_id}")
    return [[lanes[t] if t >= 0 else -1 for t in row] for row in threads], values, holders


def atom_lanes(atom: Any) -> list[int]:
    """The lane of each thread index of ``atom`` (its ``thr_id``, enumerated)."""
    return [atom.thr_id(t) for t in range(A.size(atom.thr_id))]


def mma_lanes(tm: Any, enum: Enum = plain_offsets) -> list[int]:
    """The lanes of a tiled MMA, ascending: the offsets of ``thr_layout_vmnk``, the thread ids CuTe's ``get_slice``
    reads and ``print_latex`` labels. SM70's quad-pair atoms in a (1,2,1) layout: lanes 0-7 and 16-23 (8-15 are
    no thread's: ``get_slice(8)`` would read lane 0's coordinate); atoms whose ``thr_id`` is the identity (SM80,
    SM90): 0 .. num_threads - 1."""
    return sorted(set(enum(tm.thr_layout_vmnk, "threads")))


def lane_in_atom(tm: Any, lane: int) -> tuple[int, int]:
    """(thread index in its atom, the lane the atom's picture names it by) of tiled-MMA lane ``lane``: the V of
    CuTe's ``get_slice(lane)`` (``thr_layout_vmnk.get_flat_coord(lane)``), and that index's :func:`atom_lanes`.
    SM70 (1,2,1): lane 21 is thread 5 of the atom at N = 1, labelled T17 in the atom's picture."""
    v = A.get_flat_coord(tm.thr_layout_vmnk, lane)[0]
    return v, atom_lanes(tm.atom)[v]


def lanes_text(lanes: Sequence[int]) -> str:
    """Ascending lanes as runs: ``[0, 1, 2, 3, 16, 17]`` -> ``"0-3, 16-17"``."""
    runs: list[list[int]] = []
    for t in lanes:
        if runs and t == runs[-1][1] + 1:
            runs[-1][1] = t
        else:
            runs.append([t, t])
    return ", ".join(f"{a}-{b}" if b > a else f"{a}" for a, b in runs)


def pick_lane(text: Any, lanes: Sequence[int], what: str = "thread") -> int:
    """The lane a thread picker names: one of ``lanes`` (ascending), typed as a whole number or as its label
    (``17`` or ``T17``); blank is the first lane. Anything else raises LayoutError naming the valid lanes: not a
    whole number, negative or past the last lane ("out of range"), or a number between lanes that no thread has
    (SM70 (1,2,1): 8)."""
    s = str(text if text is not None else "").strip()
    if not s:
        return lanes[0]
    valid = f"{len(lanes)} thread{'s' if len(lanes) != 1 else ''} are lanes {lanes_text(lanes)}"
    digits = s[1:] if s[:1] in "Tt" else s
    if not re.fullmatch(r"-?[0-9]+", digits):
        raise LayoutError(f"{what}: {s[:40]!r} is not a lane (a whole number, or T and one); the {valid}")
    if digits.startswith("-") or len(digits) > 9 or int(digits) > lanes[-1]:
        raise LayoutError(f"{what}: {digits[:40]}{'…' if len(digits) > 40 else ''} is out of range: the {valid}")
    v = int(digits)
    if v not in lanes:
        raise LayoutError(f"{what}: {v} is not the lane of any thread: the {valid}")
    return v


def tv_cells(threads: Table, values: Table, by_warp: bool = False) -> tuple[list[list[str]], Table, dict[str, Any]]:
    """(labels ``T<thread>V<value>``, palette indices, hover metadata) of a thread / value grid, coloured by thread
    (32 lane colours, ``thread mod 32``) or, with ``by_warp``, by warp (``thread // 32``)."""
    text = [[f"T{t}V{v}" if t >= 0 else "" for t, v in zip(tr, vr, strict=True)]
            for tr, vr in zip(threads, values, strict=True)]
    colour = [[(t // 32 if by_warp else t) % 32 if t >= 0 else -1 for t in tr] for tr in threads]
    meta = {"threads": threads, "values": values, "colour_name": "by warp" if by_warp else "by thread"}
    return text, colour, meta


def check_permutation_fits(tm: Any, op: str, rows: int, cols: int) -> None:
    """Refuse an operand that a permutation with holes (cosize > size) tiles past its edge: each of the operand's two
    modes is ``logical_divide(extent:1, p)``, whose cosize must stay within the extent (a 16-wide B divided by
    (8,2):(1,16) spans 32, so the atoms at N = 1 read rows 16.. of memory: CuTe's partition points off the tensor)."""
    for mode, extent in zip(({"A": 0, "B": 1, "C": 0}[op], {"A": 2, "B": 2, "C": 1}[op]), (rows, cols), strict=True):
        p = tm.permutation[mode]
        if p is not None and A.cosize(p) > A.size(p):
            div = A.logical_divide(A.Layout(extent), p)
            if A.cosize(div) > extent:
                raise LayoutError(f"partition_{op}: the permutation's {'MNK'[mode]} entry {p} (size {A.size(p)}, "
                                  f"cosize {A.cosize(p)}) divides the {rows}x{cols} {op}'s {extent} into {div}, "
                                  f"which reaches {A.cosize(div) - 1}: past the tensor (CuTe's partition points off "
                                  "it)")


def mma_cell(tm: Any, op: str, t: int, v: int, e: int, rows: int, cols: int) -> tuple[int, int]:
    """(row, col) of element ``e`` (column-major) of a rows x cols operand ``op``, value ``v`` of thread ``t``'s
    ``partition_<op>``. An element past the operand is refused: a permutation with holes (cosize > size) steps its
    tiles by its size, so the last tile reaches past any tensor (CuTe's partition points off it)."""
    if 0 <= e < rows * cols:
        return e % rows, e // rows
    why = "".join(f"; the permutation's {'MNK'[i]} entry {p} spans {A.cosize(p)}, more than its size {A.size(p)}"
                  for i, p in enumerate(tm.permutation) if p is not None and A.cosize(p) > A.size(p))
    raise LayoutError(f"partition_{op}: thread {t}'s value {v} is element {e}, outside the {rows}x{cols} {op}{why}")


def tiled_mma_tile(tm: Any, op: str, enum: Enum = plain_offsets) -> tuple[Table, Table, Table]:
    """(threads, values, holders) of operand ``op`` ("A", "B", "C") of a tiled MMA over its whole M x K / N x K /
    M x N tile (column-major): cell (m, n) names the lowest thread whose ``partition_<op>`` holds it and its index in
    that thread's fragment; ``holders`` counts the threads holding it. A thread is named by its id as CuTe's
    ``get_slice`` reads it and ``print_latex`` labels it (the offsets of ``thr_layout_vmnk``: SM70's quadpair atoms
    use lanes 0-3 and 16-19, so a tiled MMA of 16 threads spans lanes 0-23)."""
    m, n, k = (tm.tile_size_mnk(i) for i in range(3))
    rows, cols = {"A": (m, k), "B": (n, k), "C": (m, n)}[op]
    threads = [[-1] * cols for _ in range(rows)]
    values = [[-1] * cols for _ in range(rows)]
    holders = [[0] * cols for _ in range(rows)]
    check_permutation_fits(tm, op, rows, cols)
    tile = A.Layout((rows, cols))
    part = {"A": tm.partition_A, "B": tm.partition_B, "C": tm.partition_C}[op]
    for t in mma_lanes(tm, enum):
        frag, off = part(tile, t)
        for v, o in enumerate(enum(frag, "fragment")):
            r, c = mma_cell(tm, op, t, v, off + o, rows, cols)
            if threads[r][c] < 0:
                threads[r][c], values[r][c] = t, v
            holders[r][c] += 1
    return threads, values, holders


def triton_tv_tile(t: Any, rows: int, cols: int) -> tuple[Table, Table, int]:
    """(threads, values, extra holders) of a distributed Triton layout (``algebra.doctor.triton_layouts.
    TritonLayout``) over a rank-1 or rank-2 tensor of ``rows x cols``: cell (r, c) holds thread ``lane + 32 * warp``'s
    register ``values[r][c]`` (the first holder, when several threads hold one element)."""
    b = t.ll.bases
    nreg, nlane = len(b["register"]), len(b["lane"])
    packed = [(r, c) for r, c in ([v0[0], v0[-1]] if len(v0) == 2 else [0, v0[0]] for v0 in
                                  b["register"] + b["lane"] + b["warp"])]
    threads = [[-1] * cols for _ in range(rows)]
    values = [[-1] * cols for _ in range(rows)]
    holders = 0
    pts = [(0, 0)]
    for r, c in packed:
        pts += [(x ^ r, y ^ c) for x, y in pts]
    for i, (r, c) in enumerate(pts):
        reg, rest = i & ((1 << nreg) - 1), i >> nreg
        thread = (rest & ((1 << nlane) - 1)) + 32 * (rest >> nlane)
        if threads[r][c] < 0:
            threads[r][c], values[r][c] = thread, reg
        else:
            holders += 1
    return threads, values, holders
