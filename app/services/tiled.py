"""Tiled copies and tiled MMAs for the TV atlas: ``make_tiled_copy(atom, thr, val)`` and ``make_tiled_mma(atom,
atom_layout)`` (``algebra.atoms``) drawn as thread/value grids over their whole tile."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import algebra as A
from algebra import LayoutError, atoms
from algebra import inttuple as it
from algebra.core.memo import bounded
from app.budget import offsets
from app.config import MAX_CELLS, MAX_THREADS
from app.services import code
from app.services.guard import guard
from app.services.layouts import parse_layout
from layoutlab.model import mma_lanes, tiled_mma_tile, tv_tile

#: (label, atom, thread layout, value layout, element bits) for make_tiled_copy
COPY_PRESETS: list[tuple[str, str, str, str, int]] = [
    ("cp.async 16B: 128 threads, 8 fp16 each", "SM80_CP_ASYNC_CACHEALWAYS_16B", "(16,8):(8,1)", "(1,8):(8,1)", 16),
    ("cp.async 16B, column-major threads", "SM80_CP_ASYNC_CACHEALWAYS_16B", "(32,4):(1,32)", "(8,1):(1,8)", 16),
    ("128-bit universal copy, fp32", "UniversalCopy_128b", "(8,16):(16,1)", "(1,4):(4,1)", 32),
]
#: (label, atom, atom layout) for make_tiled_mma
MMA_PRESETS: list[tuple[str, str, str]] = [
    ("m16n8k16, 2x2 warps", "SM80_16x8x16_F32F16F16F32_TN", "(2,2,1)"),
    ("m16n8k16, 4x1 warps", "SM80_16x8x16_F32F16F16F32_TN", "(4,1,1)"),
    ("m16n8k8, 1x2 warps", "SM80_16x8x8_F32F16F16F32_TN", "(1,2,1)"),
]


@dataclass
class TiledView:
    """Owner of each element of a tiled copy's / MMA's tile: ``threads[m][n]`` holds value ``values[m][n]``."""

    kind: str
    name: str
    operand: str
    tv_layout: str
    rows: int
    cols: int
    threads: list[list[int]]
    values: list[list[int]]
    num_threads: int
    num_values: int
    tile: str
    cpp: str = ""
    dsl: str = ""
    note: str = ""
    #: a tiled copy's duplicates / holes in words, and the cells to mark (``TiledCopy.coverage_detail``)
    problem: str = ""
    bad: list[tuple[int, int]] | None = None
    coverage: dict[str, Any] | None = None
    tiler: list[int] | None = None
    layout_s: str = ""
    layout_d: str = ""
    extra: dict[str, Any] | None = None
    #: a tiled MMA's lanes (``thr_layout_vmnk``'s offsets, sorted): the labels of its threads; None: 0 .. num_threads-1
    lanes: list[int] | None = None


def _threads(n: int, what: str) -> None:
    if n > MAX_THREADS:
        raise LayoutError(f"{what}: {n:,} threads exceeds the cap of {MAX_THREADS:,}")


def _cells(rows: int, cols: int, what: str) -> None:
    if rows * cols > MAX_CELLS:
        raise LayoutError(f"{what}: a {rows}x{cols} tile exceeds the render cap of {MAX_CELLS:,} cells")


@bounded(8 << 20, "tiled copy views")
def tiled_copy_view(atom: str, thr_text: str, val_text: str, element_bits: int) -> TiledView:
    """``make_tiled_copy(Copy_Atom<atom, T>{}, thr, val)``: its TV layout over the tiler, drawn column-major.

    Post-condition: cell (m, n) of the ``tiler`` tile is held by thread ``threads[m][n]`` as its value
    ``values[m][n]``, i.e. ``tv_layout(t, v) == m + rows * n``."""
    thr = parse_layout(thr_text, "thread layout", plain=True, offsets=True)
    val = parse_layout(val_text, "value layout", plain=True, offsets=True)
    _threads(A.size(thr), "thread layout")
    _cells(A.size(thr) * A.size(val), 1, "tiled copy")
    with guard("make_tiled_copy"):
        tc = atoms.make_tiled_copy(atom, thr_layout=thr, val_layout=val, element_bits=element_bits)
    cpp, dsl = code.tiled_copy_code(tc.atom.name, element_bits, thr, val)
    return copy_view_of(tc, cpp, dsl, "make_tiled_copy")


@bounded(8 << 20, "tiled copy views")
def tiled_copy_tv_view(atom: str, tv_text: str, tiler_text: str, element_bits: int) -> TiledView:
    """The CuTe DSL's ``make_tiled_copy(atom, layout_tv, tiler_mn)`` (C++ ``make_tiled_copy_impl``)."""
    tv = parse_layout(tv_text, "layout_tv", plain=True, offsets=True)
    parts = [p.strip() for p in tiler_text.strip().strip("()").split(",") if p.strip()]
    if not parts or not all(p.isdecimal() and 0 < int(p) <= 4096 for p in parts):
        raise LayoutError(f"tiler: {tiler_text!r} is not M,N (positive integers up to 4096, e.g. 16,64)")
    tiler = tuple(int(p) for p in parts)
    _threads(A.size(tv[0]) if len(tv) == 2 else A.size(tv), "layout_tv")
    with guard("make_tiled_copy"):
        tc = atoms.make_tiled_copy(atom, layout_tv=tv, tiler=tiler, element_bits=element_bits)
    cpp = (f"auto tiled_copy = make_tiled_copy_impl(Copy_Atom<{atom}, {code.CPP_TYPES.get(element_bits, 'half_t')}>"
           f"{{}},\n    {A.to_cpp(tv, style='type')},\n    Shape<{', '.join(f'_{x}' for x in tiler)}>{{}});")
    dsl = f"tiled_copy = cute.make_tiled_copy(atom, {A.to_dsl(tv)}, {tiler})"
    return copy_view_of(tc, cpp, dsl, "make_tiled_copy")


def copy_view_of(tc: Any, cpp: str, dsl: str, what: str) -> TiledView:
    """A TiledCopy's grid over its tiler, its coverage in words and the cells to mark."""
    tiler = tuple(tc.tiler)
    rows, cols = (1, tiler[0]) if len(tiler) == 1 else (tiler[0], it.product(tiler[1:]))
    _threads(tc.num_threads, what)
    _cells(rows, cols, what)
    _cells(A.size(tc.tv_layout), 1, what)
    with guard(what):
        threads, values, _ = tv_tile(tc.tv_layout, rows, cols, enum=offsets, clip=True)  # print_latex_copy's labels
        detail = tc.coverage_detail(limit=MAX_CELLS)
        s_tv, d_tv = str(tc.get_layoutS_TV()), str(tc.get_layoutD_TV())
    from app.services.kernel_path import coverage_words

    problem, bad = coverage_words(tc, what)
    return TiledView(kind="copy", name=tc.atom.name, operand="tile", tv_layout=str(tc.tv_layout), rows=rows,
                     cols=cols, threads=threads, values=values, num_threads=tc.num_threads,
                     num_values=A.size(tc.tv_layout[1]), tile=" x ".join(map(str, tiler)), cpp=cpp, dsl=dsl,
                     problem=problem, bad=sorted(bad), coverage=coverage_json(detail), tiler=list(tiler),
                     layout_s=s_tv, layout_d=d_tv)


def coverage_json(d: dict[str, Any], limit: int = 256) -> dict[str, Any]:
    """``TiledCopy.coverage_detail`` for JSON: counts, and up to ``limit`` duplicate / uncovered elements."""
    return {"duplicates": d["duplicates"], "uncovered": d["uncovered"], "outside": d["outside"],
            "duplicate_elements": [{"element": list(e["element"]), "claims": [list(c) for c in e["claims"]]}
                                   for e in d["duplicate_elements"][:limit]],
            "uncovered_elements": [list(e) for e in d["uncovered_elements"][:limit]],
            "duplicate_threads": d["duplicate_threads"][:limit]}


@bounded(8 << 20, "tiled mma views")
def tiled_mma_view(atom: str, layout_text: str, operand: str, perm_text: str = "") -> TiledView:
    """``make_tiled_mma(atom{}, atom_layout)``: each thread's ``partition_<operand>`` of the whole M x K / N x K /
    M x N tile (column-major), so cell (m, n) names the thread holding it and its index in that thread's fragment."""
    from app.services.kernel_path import build_mma

    op = operand.upper()
    if op not in ("A", "B", "C"):
        raise LayoutError(f"operand of a tiled MMA is A, B or C, not {operand!r}")
    tm, lay = build_mma(atom, layout_text, perm_text)
    with guard("make_tiled_mma"):
        m, n, k = (tm.tile_size_mnk(i) for i in range(3))
        tvs = {o: str(tm.get_layout_TV(o)) for o in "ABC"}
    _threads(tm.num_threads, "tiled MMA")
    with guard("make_tiled_mma"):
        lanes = mma_lanes(tm, offsets)
    rows, cols = {"A": (m, k), "B": (n, k), "C": (m, n)}[op]
    _cells(rows, cols, "tiled MMA")
    with guard("make_tiled_mma"):
        threads, values, holders = tiled_mma_tile(tm, op, offsets)
    shared = max(max(row) for row in holders)
    note = (f"each element of {op} is held by {shared} threads (the atoms along "
            f"{'N' if op == 'A' else 'M'} read the same {op}); the lowest thread is shown") if shared > 1 else ""
    nvals = max((v for row in values for v in row), default=-1) + 1
    cpp, _ = code.tiled_mma_code(tm.atom.name, lay)
    return TiledView(kind="mma", name=tm.atom.name, operand=op, tv_layout=str(tm.thr_layout_vmnk), rows=rows,
                     cols=cols, threads=threads, values=values, num_threads=tm.num_threads, num_values=nvals,
                     tile=f"{m} x {n} x {k}", cpp=cpp, note=note, lanes=lanes,
                     extra={"layout_TV": tvs, "tile_mnk": [m, n, k],
                            "permutation": [None if p is None else str(p) for p in tm.permutation]})


def tiled_view(kind: str, atom: str, thr: str, val: str, bits: int, layout: str, operand: str, perm: str = "",
               layout_tv: str = "", tiler: str = "", mma: str = "") -> TiledView:
    """The tiled copy (kind "copy") or tiled MMA (kind "mma") of the TV atlas form: a copy from thread / value
    layouts, from a TV layout and a tiler (``layout_tv``, ``tiler``), or feeding operand ``operand`` of the tiled MMA
    ``mma`` (``make_tiled_copy_A/B/C``, with ``layout`` / ``perm`` as that MMA's atom layout and permutation)."""
    given = [name for name, x in (("mma", mma), ("layout_tv", layout_tv), ("tiler", tiler)) if x.strip()]
    if kind == "mma":
        if given:  # never dropped in silence: they belong to a copy atom's forms
            raise LayoutError(f"{given[0]}: only a copy atom takes it ({atom.strip()} is an MMA atom, drawn by "
                              "make_tiled_mma with atom_layout and permutation)")
        return tiled_mma_view(atom.strip(), layout.strip(), operand.strip(), perm.strip())
    if layout_tv.strip() or tiler.strip():
        if not (layout_tv.strip() and tiler.strip()):
            raise LayoutError("make_tiled_copy from a TV layout needs both layout_tv and tiler")
        if mma.strip():
            raise LayoutError("mma: make_tiled_copy_A/B/C takes its TV layout and tiler from the tiled MMA; give "
                              "either mma or layout_tv and tiler")
        return tiled_copy_tv_view(atom.strip(), layout_tv.strip(), tiler.strip(), bits)
    if mma.strip():
        from app.services.kernel_path import copy_cpp, copy_dsl, operand_copy

        tc = operand_copy(atom, bits, mma, layout, perm, operand)
        op = operand.strip().upper()
        t = code.CPP_TYPES.get(bits, "half_t")
        v = copy_view_of(tc, f"auto tiled_copy = make_tiled_copy_{op}({copy_cpp(tc.atom.name, t)}, mma);",
                         f"tiled_copy = cute.make_tiled_copy_{op}({copy_dsl(tc.atom.name, t)}, mma)",
                         f"make_tiled_copy_{op}")
        v.operand = op
        return v
    return tiled_copy_view(atom.strip(), thr.strip(), val.strip(), bits)


def tiled_json(v: TiledView) -> dict[str, Any]:
    out = {"kind": v.kind, "atom": v.name, "operand": v.operand, "tile": v.tile, "tv_layout": v.tv_layout,
           "rows": v.rows, "cols": v.cols, "num_threads": v.num_threads, "threads": v.threads, "values": v.values}
    if v.kind == "copy":
        out.update(tiler=v.tiler, layout_S_TV=v.layout_s, layout_D_TV=v.layout_d, coverage=v.coverage,
                   problem=v.problem)
    out.update(v.extra or {})
    return out
