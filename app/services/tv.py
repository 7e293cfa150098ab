"""The TV atlas service: MMA / copy atoms as thread-value grids, and a thread partition's sector efficiency.

Used by ``/api/atoms/...`` and the ``/tv`` page. The atoms themselves (names, TV layouts) come from
``algebra.atoms``; sector counts from ``algebra.hw.coalescing``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import algebra as A
from algebra import LayoutError, atoms, coalescing
from algebra import inttuple as it
from algebra.core.memo import bounded
from app.budget import cell_kind, charge, offsets
from app.config import MAX_CELLS, MAX_SIZE
from app.services.grid import GridView
from app.services.guard import guard
from app.services.layouts import parse_layout, pow2_text
from layoutlab.model import atom_lanes, atom_operand, atom_tile, tv_cells

DEFAULT_ATOM = "SM80_16x8x16_F32F16F16F32_TN"
MMA_OPERANDS = ("A", "B", "C")
COPY_OPERANDS = ("src", "dst")

#: (label, TV layout, element bytes, vector ("" = widest legal)): the 16x8 column-major fp32 tile split two ways
SECTOR_PRESETS: list[tuple[str, str, int, str]] = [
    ("2x2 per thread, scalar loads", "((8,4),(2,2)):((2,32),(1,16))", 4, "1"),
    ("2x2 per thread, 8-byte vectors", "((8,4),(2,2)):((2,32),(1,16))", 4, ""),
    ("(16,2) thread layout (local_partition)", "((16,2),4):((1,16),32)", 4, "1"),
]


def atom_menu() -> list[tuple[str, list[str]]]:
    """Atom names grouped for a <select>: SM80 mma.sync, SM70, SM90 wgmma, copy atoms, SM100 TMEM copy atoms."""
    groups: dict[str, list[str]] = {"SM80 mma.sync": [], "SM90 wgmma": [], "SM70 / other MMA": [], "copy atoms": []}
    for n in atoms.mma_names():
        key = "SM80 mma.sync" if n.startswith("SM80") else "SM90 wgmma" if n.startswith("SM90") else "SM70 / other MMA"
        groups[key].append(n)
    groups["copy atoms"] = [n for n in atoms.copy_names() if not n.startswith("SM100_TMEM_")]
    groups["SM100 tcgen05.ld / st (TMEM)"] = [n for n in atoms.copy_names() if n.startswith("SM100_TMEM_")]
    return [(k, v) for k, v in groups.items() if v]


@dataclass
class TVView:
    name: str
    kind: str
    operand: str
    operands: tuple[str, ...]
    tv_layout: str
    rows: int
    cols: int
    threads: list[list[int]]
    values: list[list[int]]
    sharers: list[list[int]]
    num_threads: int
    num_values: int
    shape: list[int]
    ptx: str
    note: str = ""
    lanes: list[int] | None = None  # an atom's thread index -> lane (thr_id), the labels of its threads

    def to_json(self) -> dict[str, Any]:
        return {"operand": self.operand, "tv_layout": self.tv_layout, "rows": self.rows, "cols": self.cols,
                "threads": self.threads, "values": self.values}


def _get(name: str) -> Any:
    with guard("atom"):
        return atoms.get(name)


@lru_cache(maxsize=256)
def tv_view(name: str, operand: str = "C", element_bits: int = 16) -> TVView:
    """The TV grid of one operand of an atom: cell (m, n) holds thread ``threads[m][n]``'s value ``values[m][n]``,
    the thread named by its lane (the atom's ``thr_id``, as CuTe's print_latex labels it:
    ``layoutlab.model.atom_tile``).

    MMA operands index the M x K / N x K / M x N tile column-major; copy atoms index their element span, drawn as
    rows of 16 bytes (row-major), so an ldmatrix 8x8 matrix shows as 8 rows of 8 fp16 values."""
    atom = _get(name)
    if isinstance(atom, atoms.MMAAtom):
        op = operand.upper()
        if op not in MMA_OPERANDS + ("D",):
            raise LayoutError(f"operand of an MMA atom is A, B or C, not {operand!r}")
        kind, ops, shape = "mma", MMA_OPERANDS, list(atom.shape_mnk)
    else:
        op = operand.lower()
        if op not in COPY_OPERANDS:
            raise LayoutError(f"operand of a copy atom is src or dst, not {operand!r}")
        kind, ops, shape = "copy", COPY_OPERANDS, []
    with guard("atom"):
        tv, rows, cols, row_major = atom_operand(atom, op, element_bits)
    shape = shape or [rows, cols]
    if rows * cols > MAX_CELLS:
        raise LayoutError(f"{name} {op}: {rows}x{cols} exceeds the render cap of {MAX_CELLS:,} cells")
    with guard("atom"):
        threads, values, count = atom_tile(atom, tv, rows, cols, row_major, offsets)
    shared = max((c for row in count for c in row), default=1)
    note = (f"each element is held by {shared} (thread, value) pairs: the thread mode has stride 0 (the operand is "
            "read from shared memory by every thread); the first thread is shown") if shared > 1 else ""
    return TVView(name=atom.name, kind=kind, operand=op, operands=ops, tv_layout=str(tv), rows=rows, cols=cols,
                  threads=threads, values=values, sharers=count, num_threads=it.product(tv.shape[0]),
                  num_values=it.product(tv.shape[1]), shape=shape, ptx=atom.ptx, note=note,
                  lanes=atom_lanes(atom))


def tv_grid(view: Any, grid_id: str, by_warp: bool = False) -> GridView:
    """Cells labelled ``T<thread>V<value>`` and coloured by thread (32 lane colours, ``thread mod 32``) or, with
    ``by_warp``, by warp (``thread // 32``: one colour per warp, so a tiled MMA's warps are told apart)."""
    text, colour, meta = tv_cells(view.threads, view.values, by_warp)
    return GridView(id=grid_id, rows=view.rows, cols=view.cols, text=text, colour=colour, css="tv", meta=meta,
                    caption=f"{view.name} · {view.operand} · {view.tv_layout}")


@dataclass
class SectorView:
    tv: str
    element_bytes: int
    vector: int
    max_vector: int
    utilization: float
    total_sectors: int
    instructions: list[dict[str, Any]]
    total_lines: int = 0


@bounded(4 << 20, "sector views")
def sector_view(tv_text: str, element_bytes: int, vector: int | None = None) -> SectorView:
    """32-byte sectors per instruction of warp 0 of a TV partition ((thread, value) -> element offset)."""
    tv = parse_layout(tv_text, "TV layout", offsets=True)
    if A.size(tv) > MAX_SIZE:
        raise LayoutError(f"TV layout: size {pow2_text(A.size(tv))} exceeds the cap of {pow2_text(MAX_SIZE)}")
    if not isinstance(tv, A.Layout) and A.size(tv) <= coalescing.MAX_TABLE:  # read pair by pair: estimated first
        charge(cell_kind(tv), 2 * A.size(tv), "sectors: the partition's (thread, value) pairs, read twice")
    with guard("sectors"):
        r = coalescing.partition_sectors(tv, element_bytes, vector=vector)
    ins = [{"values": s.values, "sectors": s.num_sectors, "lines": s.num_lines, "bytes": s.bytes_requested,
            "utilization": s.bytes_used / (32 * s.num_sectors), "first": s.byte_addresses[:8]}
           for s in r.instructions]
    return SectorView(tv=str(tv), element_bytes=element_bytes, vector=r.vector, max_vector=r.max_vector,
                      utilization=r.utilization, total_sectors=r.total_sectors, instructions=ins,
                      total_lines=r.total_lines)
