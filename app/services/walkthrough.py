"""The TV atlas's walkthroughs: a copy (atom -> ``make_tiled_copy`` -> ``partition_S`` / ``partition_D``) and an MMA
(atom A / B / C -> ``make_tiled_mma`` warps -> ``partition_A/B/C`` of a tile), each following one thread through
every level. Grids come from ``app.services.tv`` / ``tiled``; the partitions from ``algebra.hw.atoms_tiled``.

Post-conditions: in every partition grid, the cells outlined ("acc") are exactly the elements of the chosen thread's
fragment (``offset + frag(k)`` through the tensor's layout and swizzle), and each cell names the thread that holds it
and that element's index in the thread's fragment (the lowest thread where several hold it).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import algebra as A
from algebra import LayoutError, atoms
from app.budget import WorkCapError, cap_of, offsets, remaining
from app.config import MAX_CELLS
from app.services import tiled as T
from app.services import tv as TV
from app.services.grid import GridView
from app.services.guard import guard
from app.services.layouts import is_composed, parse_layout, table_shape
from layoutlab.model import lane_in_atom, lanes_text, mma_lanes, pick_lane

#: (label, atom, thread layout, value layout, element bits, source, destination) for the copy walkthrough
COPY_WALKS: list[tuple[str, str, str, str, int, str, str]] = [
    ("cp.async 16 B, 128 threads, row-major gmem -> smem", "SM80_CP_ASYNC_CACHEALWAYS_16B", "(16,8):(8,1)",
     "(1,8):(8,1)", 16, "(16,64):(64,1)", "(16,64):(64,1)"),
    ("the same copy over a 32x128 tile (2x2 repeats)", "SM80_CP_ASYNC_CACHEALWAYS_16B", "(16,8):(8,1)",
     "(1,8):(8,1)", 16, "(32,128):(128,1)", "(32,128):(128,1)"),
    ("cp.async 16 B into a swizzled smem tile", "SM80_CP_ASYNC_CACHEALWAYS_16B", "(16,8):(8,1)", "(1,8):(8,1)", 16,
     "(16,64):(64,1)", "Sw<3,3,3> o (16,64):(64,1)"),
    ("128-bit copy, column-major tiles", "UniversalCopy_128b", "(32,4):(1,32)", "(4,1):(1,4)", 32,
     "(128,4):(1,128)", "(128,4):(1,128)"),
]
#: (label, atom, atom layout, tile M,N,K) for the MMA walkthrough
MMA_WALKS: list[tuple[str, str, str, str]] = [
    ("m16n8k16, 2x2 warps, the tiled MMA's own tile", "SM80_16x8x16_F32F16F16F32_TN", "(2,2,1)", ""),
    ("the same over a 64x32x16 tile", "SM80_16x8x16_F32F16F16F32_TN", "(2,2,1)", "64,32,16"),
    ("m16n8k16, 4x1 warps", "SM80_16x8x16_F32F16F16F32_TN", "(4,1,1)", ""),
    ("m16n8k8, 1x2 warps", "SM80_16x8x8_F32F16F16F32_TN", "(1,2,1)", "32,32,16"),
]
MAX_PART_THREADS = 1024


@dataclass
class Part:
    """One partitioned tensor: its grid and the chosen thread's fragment (CuTe notation and origin offset)."""

    title: str
    call: str
    fragment: str
    offset: int
    grid: GridView


@dataclass
class Walk:
    kind: str
    atom: str
    thread: int  # MMA: a lane, the id CuTe's get_slice reads and print_latex labels; copy: make_tiled_copy's index
    num_threads: int
    #: (title, text, grids, arrangement: "" side by side, "mma-atom" B above C and A left of C)
    levels: list[tuple[str, str, list[GridView], str]] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: MMA: the tiled MMA's lanes (:func:`layoutlab.model.mma_lanes`), the thread picker's choices; copy: empty
    lanes: list[int] = field(default_factory=list)

    @property
    def lanes_text(self) -> str:
        return lanes_text(self.lanes)


def _outline(g: GridView, cells: set[tuple[int, int]]) -> GridView:
    g.marks = {c: "acc" for c in cells}
    return g


def _owners(layout: Any, lanes: Any, part: Any) -> tuple[int, int, list[list[int]], list[list[int]],
                                                           dict[int, tuple[str, int, list[tuple[int, int]]]]]:
    """For a (possibly swizzled) tensor layout: (rows, cols, owning thread per cell, fragment index per cell,
    per thread (fragment, origin, cells)), for each thread id t of ``lanes``. ``part(plain, t)`` is CuTe's partition
    of the unswizzled tensor."""
    plain = layout.layout_b if is_composed(layout) else layout
    outer = (lambda o: layout.layout_a(layout.offset + o)) if is_composed(layout) else (lambda o: o)
    rows, cols = table_shape(plain)
    if rows * cols > MAX_CELLS:
        raise LayoutError(f"a {rows}x{cols} tensor exceeds the render cap of {MAX_CELLS:,} cells")
    where: dict[int, tuple[int, int]] = {}
    for k, o in enumerate(offsets(layout, "copy table")):
        where.setdefault(o, (k % rows, k // rows))
    threads = [[-1] * cols for _ in range(rows)]
    values = [[-1] * cols for _ in range(rows)]
    per: dict[int, tuple[str, int, list[tuple[int, int]]]] = {}
    for t in lanes:
        frag, off = part(plain, t)
        cells = []
        for v, o in enumerate(offsets(frag, "fragment")):
            cell = where.get(outer(off + o))
            if cell is None:
                raise LayoutError(f"thread {t}'s element {v} (offset {outer(off + o)}) is outside the tensor "
                                  f"{layout}: the tensor must cover the tiling's tile")
            i, j = cell
            if threads[i][j] < 0:
                threads[i][j], values[i][j] = t, v
            cells.append(cell)
        per[t] = (str(frag), off, cells)
    return rows, cols, threads, values, per


def _owner_grid(grid_id: str, caption: str, rows: int, cols: int, threads: list[list[int]],
                values: list[list[int]], mine: list[tuple[int, int]], by_warp: bool) -> GridView:
    view = TV.TVView(name="", kind="", operand="", operands=(), tv_layout="", rows=rows, cols=cols, threads=threads,
                     values=values, sharers=[], num_threads=0, num_values=0, shape=[rows, cols], ptx="")
    g = TV.tv_grid(view, grid_id, by_warp=by_warp)
    g.caption = caption
    return _outline(g, set(mine))


@lru_cache(maxsize=16)
def copy_walk(atom: str, thr: str, val: str, bits: int, src: str, dst: str, thread: str) -> Walk:
    """Copy atom -> make_tiled_copy(atom, thr, val) -> partition_S(src) / partition_D(dst), following ``thread``."""
    tview = T.tiled_copy_view(atom.strip(), thr.strip(), val.strip(), bits)
    t = pick_lane(thread, range(tview.num_threads))  # a tiled copy's threads: 0 .. n - 1
    with guard("make_tiled_copy"):
        tc = atoms.make_tiled_copy(atom.strip(), thr_layout=A.parse(thr), val_layout=A.parse(val), element_bits=bits)
    _walk_cells(parse_layout(src, "source", offsets=True), parse_layout(dst, "destination", offsets=True))
    walk = Walk(kind="copy", atom=tc.atom.name, thread=t, num_threads=tc.num_threads)
    a_src, a_dst = TV.tv_view(tc.atom.name, "src", bits), TV.tv_view(tc.atom.name, "dst", bits)
    level1 = [TV.tv_grid(a_src, "walk-atom-src"), TV.tv_grid(a_dst, "walk-atom-dst")]
    walk.levels.append(("1 · the copy atom", f"{tc.atom.name}: one instruction, {a_src.num_threads} thread(s) × "
                        f"{a_src.num_values} value(s) of {bits} bits ({a_src.ptx})", level1, ""))
    g2 = TV.tv_grid(tview, "walk-tiled", by_warp=tview.num_threads > 32)
    _outline(g2, {(i, j) for i, row in enumerate(tview.threads) for j, x in enumerate(row) if x == t})
    walk.levels.append(("2 · make_tiled_copy", f"thread layout {thr}, value layout {val}: TV layout "
                        f"{tview.tv_layout} over a {tview.tile} tile; thread {t} outlined", [g2], ""))
    for side, text, grid_id in (("S", src, "walk-src"), ("D", dst, "walk-dst")):
        what = "source" if side == "S" else "destination"
        lay = parse_layout(text, what, offsets=True)
        rows, cols, threads, values, per = _copy_table(atom.strip(), thr, val, bits, text.strip(), side)
        frag, off, mine = per[t]
        g = _owner_grid(grid_id, f"{what} {lay}", rows, cols, threads, values, mine, tc.num_threads > 32)
        walk.parts.append(Part(title=f"partition_{side}: the {what}", call=f"thr_copy.partition_{side}({what})",
                               fragment=frag, offset=off, grid=g))
        if is_composed(lay):
            walk.parts.append(_physical(lay, cols, threads, values, mine, grid_id, tc.num_threads > 32))
    return walk


def _walk_cells(*tensors: Any) -> None:
    """The cells a copy walk draws for its tensors (each whole, and a swizzled one by address as well), estimated
    before any is built: over the request's drawn-cell cap, refused naming it (a tensor over the render cap is
    refused by ``_owners``, naming that cap)."""
    cells = 0
    for lay in tensors:
        rows, cols = table_shape(lay.layout_b if is_composed(lay) else lay)
        if rows * cols > MAX_CELLS:
            return
        cells += rows * cols + (-(-A.cosize(lay) // cols) * cols if is_composed(lay) else 0)
    if cells > remaining("drawn cell"):
        raise WorkCapError(f"partition_S / partition_D: the source and destination grids draw {cells:,} cells, over "
                           f"the work cap of {cap_of('drawn cell'):,} drawn cells per request (smaller tensors: the "
                           "tiled copy's tile is enough)")


def _physical(lay: Any, cols: int, threads: list[list[int]], values: list[list[int]],
              mine: list[tuple[int, int]], grid_id: str, by_warp: bool) -> Part:
    """A swizzled tensor drawn by address: physical offset p at (p // cols, p % cols), labelled with the thread that
    writes it, so the swizzle's scattering of each thread's vector is visible."""
    rows = len(threads)
    prow = -(-A.cosize(lay) // cols)
    pt = [[-1] * cols for _ in range(prow)]
    pv = [[-1] * cols for _ in range(prow)]
    offs = offsets(lay, "destination by address")
    for k, p in enumerate(offs):
        i, j = k % rows, k // rows
        pt[p // cols][p % cols], pv[p // cols][p % cols] = threads[i][j], values[i][j]
    phys = {(offs[i + rows * j] // cols, offs[i + rows * j] % cols) for i, j in mine}
    g = _owner_grid(grid_id + "-phys", f"{lay} by address (rows of {cols} elements)", prow, cols, pt, pv,
                    sorted(phys), by_warp)
    return Part(title="the destination by address", call=f"{lay.layout_a} scatters each row's vectors",
                fragment="", offset=0, grid=g)


@lru_cache(maxsize=16)
def _copy_table(atom: str, thr: str, val: str, bits: int, text: str, side: str) -> tuple:
    """``_owners`` of a tiled copy's source (side "S") or destination ("D") tensor, shared by every thread's walk."""
    with guard("make_tiled_copy"):
        tc = atoms.make_tiled_copy(atom, thr_layout=A.parse(thr), val_layout=A.parse(val), element_bits=bits)
    lay = parse_layout(text, "source" if side == "S" else "destination", offsets=True)
    with guard(f"partition_{side}"):
        return _owners(lay, range(tc.num_threads), tc.partition_S if side == "S" else tc.partition_D)


@lru_cache(maxsize=16)
def _mma_table(atom: str, layout: str, op: str, rows: int, cols: int) -> tuple:
    """``_owners`` of a tiled MMA's operand ``op`` over a rows x cols tile, shared by every thread's walk."""
    with guard("make_tiled_mma"):
        tm = atoms.make_tiled_mma(atom, A.parse(layout))
    fn = {"A": tm.partition_A, "B": tm.partition_B, "C": tm.partition_C}[op]
    with guard(f"partition_{op}"):
        return _owners(A.Layout((rows, cols)), mma_lanes(tm, offsets), fn)


def _tile_mnk(text: str, default: tuple[int, int, int]) -> tuple[int, int, int]:
    if not text.strip():
        return default
    parts = [p.strip() for p in text.strip("() ").split(",")]
    if len(parts) != 3 or not all(p.isdecimal() and int(p) > 0 for p in parts):
        raise LayoutError(f"tile: {text!r} is not M,N,K (three positive integers, e.g. 64,32,16)")
    m, n, k = (int(p) for p in parts)
    for name, x, d in (("M", m, default[0]), ("N", n, default[1]), ("K", k, default[2])):
        if x % d:
            raise LayoutError(f"tile: {name} = {x} is not a multiple of the tiled MMA's {name} = {d}")
    return m, n, k


@lru_cache(maxsize=16)
def mma_walk(atom: str, layout: str, tile: str, thread: str) -> Walk:
    """MMA atom A / B / C with one thread in all three -> make_tiled_mma warps -> partition_A/B/C of an M x N x K
    tile (default: the tiled MMA's own tile), following ``thread``."""
    lay = parse_layout(layout, "atom layout", plain=True, offsets=True)
    if A.size(lay) > 64:
        raise LayoutError(f"atom layout: {A.size(lay)} atoms exceeds the cap of 64")
    with guard("make_tiled_mma"):
        tm = atoms.make_tiled_mma(atom.strip(), lay)
        own = tuple(tm.tile_size_mnk(i) for i in range(3))
    if tm.num_threads > MAX_PART_THREADS:
        raise LayoutError(f"tiled MMA: {tm.num_threads:,} threads exceeds the cap of {MAX_PART_THREADS:,}")
    m, n, k = _tile_mnk(tile, own)
    with guard("make_tiled_mma"):
        lanes = mma_lanes(tm, offsets)
    t = pick_lane(thread, lanes)
    walk = Walk(kind="mma", atom=tm.atom.name, thread=t, num_threads=tm.num_threads, lanes=lanes)
    nthr_atom = tm.atom.num_threads
    idx, lane = lane_in_atom(tm, t)  # the atom's pictures label its threads by lane (thr_id)
    level1 = []
    for op in ("B", "A", "C"):  # drawn as CuTe's print_latex draws an MMA: B (transposed) above C, A left of C
        v = TV.tv_view(tm.atom.name, op)
        if op == "B":
            v = replace(v, rows=v.cols, cols=v.rows, threads=[list(r) for r in zip(*v.threads, strict=True)],
                        values=[list(r) for r in zip(*v.values, strict=True)], operand="B (K x N, transposed)")
        g = TV.tv_grid(v, f"walk-atom-{op.lower()}")
        g.css = "tv compact"
        g.caption = f"{op} · {v.tv_layout}"
        level1.append(_outline(g, {(i, j) for i, row in enumerate(v.threads) for j, x in enumerate(row) if x == lane}))
    who = f"thread {t} is thread {idx} of the atom" + (f" (lane {lane}, as the cells name it: T{lane})"
                                                         if lane != idx else "") + ","
    walk.levels.append(("1 · the MMA atom: A, B and C", f"{tm.atom.name} ({tm.atom.ptx}): {nthr_atom} threads; "
                        f"{who} outlined in A, B and C. B is drawn transposed (K x N) above C "
                        "(M x N), A (M x K) to its left, as CuTe's print_latex draws an MMA", level1, "mma-atom"))
    tv = T.tiled_mma_view(tm.atom.name, layout.strip(), "C")
    g2 = TV.tv_grid(tv, "walk-warps", by_warp=True)
    _outline(g2, {(i, j) for i, row in enumerate(tv.threads) for j, x in enumerate(row) if x == t})
    walk.levels.append(("2 · make_tiled_mma: the warps", f"atom layout {lay}: {tm.num_threads} threads in "
                        f"{-(-tm.num_threads // 32)} warp(s), coloured by warp, over C = {tv.tile}; thread {t} "
                        "outlined", [g2], ""))
    shapes = {"A": (m, k), "B": (n, k), "C": (m, n)}
    for op in ("A", "B", "C"):
        rows, cols = shapes[op]
        _, _, threads, values, per = _mma_table(tm.atom.name, layout.strip(), op, rows, cols)
        frag, off, mine = per[t]
        g = _owner_grid(f"walk-part-{op.lower()}", f"{op}: {rows} x {cols}", rows, cols, threads, values, mine,
                        True)
        walk.parts.append(Part(title=f"partition_{op}", call=f"thr_mma.partition_{op}(g{op})", fragment=frag,
                               offset=off, grid=g))
    if (m, n, k) != own:
        walk.notes.append(f"the {m}x{n}x{k} tile holds {m // own[0]} x {n // own[1]} x {k // own[2]} copies of the "
                          f"tiled MMA's {own[0]}x{own[1]}x{own[2]}: each thread's fragment repeats over them")
    return walk
