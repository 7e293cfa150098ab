"""The TV atlas's Blackwell panel: a tcgen05.mma atom (CuTe's A / B / C and the instruction descriptor), where its
accumulator lies in tensor memory for 1 and 2 CTAs, and a tcgen05.ld / st copy atom drawn as which thread of the
warp receives which lane and column (``algebra.hw.sm100``). Checked against CuTe C++ and the PTX ISA, not measured:
no Blackwell GPU is lent here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from algebra import LayoutError
from algebra.hw import sm100, sm100_tmem
from app.services.guard import guard

KINDS = ("f16", "bf16", "tf32", "i8", "f8f6f4")
AB_TYPES = {"f16": ("f16",), "bf16": ("bf16",), "tf32": ("tf32",), "i8": ("s8", "u8"),
            "f8f6f4": ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")}
C_TYPES = {"f16": ("f32", "f16"), "bf16": ("f32",), "tf32": ("f32",), "i8": ("s32",), "f8f6f4": ("f32", "f16")}
TMEM_ATOMS = tuple(n for n in sm100_tmem.tmem_copy_table() if n.startswith("SM100_TMEM_LOAD_"))
QUARTER_COLOURS = ("#e8f1fb", "#eaf7ea", "#fdf0e2", "#f3eafb")


@dataclass
class UmmaView:
    atom: Any
    fields: list[dict[str, Any]]
    tmem: dict[str, Any]
    svg: str
    cpp: str


@dataclass
class TmemView:
    name: str
    atom: Any
    warp: int
    first: int
    last: int
    ptx: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    columns: int = 0
    svg: str = ""
    value_bits: int = 32


def whole(text: str, what: str) -> int:
    """A form field's whole number (ASCII digits, at most 4 of them: every M, N, CTA count and warp is below 1,000);
    LayoutError naming the field and what was typed otherwise."""
    t = text.strip()
    if not (t.isascii() and t.isdigit() and len(t) <= 4):
        raise LayoutError(f"{what} must be a whole number (at most 4 digits), not {t[:20]!r}")
    return int(t)


def _occupancy_svg(occ: dict[str, Any]) -> str:
    """Per CTA a 128-lane x allocated-column box: the accumulator's cells filled (colour: which row of C), and for a
    TS form A's cells right after C's (the same colour for the same row, its columns framed), the four 32-lane
    quarters marked; one pixel per column (at most 512), two per lane. ``occ``: ``sm100_tmem.occupancy``."""
    m, n, cta_group = occ["m"], occ["n"], occ["cta_group"]
    layers = [("C", sm100_tmem.accumulator_map(m, n, cta_group), 0, 0)]
    if "a" in occ:
        layers.append(("A", sm100_tmem.tmem_map(sm100_tmem.a_operand_layout(m, cta_group), m),
                       occ["a"]["first_column"], occ["a"]["columns"]))
    cols = occ["a"]["alloc"] if "a" in occ else occ["alloc"]
    width, height, gap = max(cols, 120) + 80, 2 * 128 + 30, 20
    what = "an accumulator" + (" and A" if "a" in occ else "")
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" id="tmem-svg" role="img" width="{cta_group * (width + gap)}" '
             f'height="{height}" aria-label="tensor memory occupancy of {what} ({m}x{n}) over {cta_group} '
             'CTA(s)">']
    for c in range(cta_group):
        x0 = c * (width + gap) + 76
        used = occ["columns"] + (occ["a"]["columns"] if "a" in occ else 0)
        parts.append(f'<text x="{x0}" y="12" font-size="11">CTA {c}: {used} / {cols} columns</text>')
        for q in range(4):
            parts.append(f'<rect x="{x0}" y="{20 + 64 * q}" width="{cols}" height="64" fill="{QUARTER_COLOURS[q]}" '
                         'stroke="#999" stroke-dasharray="3,2"/>')
            parts.append(f'<text x="{x0 - 74}" y="{20 + 64 * q + 36}" font-size="10">lanes {32 * q}-{32 * q + 31}'
                         '</text>')
        for op, grid, first, framed in layers:
            for i, row in enumerate(grid):
                if row[0][0] != c:
                    continue
                # one rect per (row, lane) run: contiguous columns on a lane
                lanes: dict[int, list[int]] = {}
                for _, ln, cl in row:
                    lanes.setdefault(ln, []).append(first + cl)
                hue = (i * 360 // m) % 360
                for ln, cl in lanes.items():
                    parts.append(f'<rect class="tmem-{op.lower()}" x="{x0 + min(cl)}" y="{20 + 2 * ln}" '
                                 f'width="{max(cl) - min(cl) + 1}" height="2" fill="hsl({hue},60%,55%)">'
                                 f'<title>{op} row {i}: lane {ln}, columns {min(cl)}-{max(cl)}</title></rect>')
            if framed:  # A's columns: a frame over them and its name under it
                parts.append(f'<rect x="{x0 + first - 0.5}" y="19.5" width="{framed + 1}" height="257" fill="none" '
                             f'stroke="#222"/><text x="{x0 + first}" y="{height - 1}" font-size="9">{op}</text>')
    parts.append("</svg>")
    return "".join(parts)


def umma_view(kind: str, m: int, n: int, a_major: str, b_major: str, cta_group: int, a_source: str, ab_type: str,
              c_type: str | None) -> UmmaView:
    with guard("umma"):
        atom = sm100.umma(kind, m, n, a_major, b_major, cta_group, a_source, ab_type or None, c_type)
        occ = atom.tmem()
        return UmmaView(atom, atom.decode(), occ, _occupancy_svg(occ), f"MMA_Traits<{atom.cpp()}>")


def tmem_view(name: str, warp: int, element_bits: int = 32) -> TmemView:
    """Which thread of warp ``warp`` receives which (lane, column) with the load ``name``; the warp's own quarter
    is the only one it reaches. A ``_16b`` atom's values are 16 bits, one per column (two to a register)."""
    with guard("tmem"):
        if name not in sm100_tmem.tmem_copy_table():
            raise LayoutError(f"atom: {name!r} is not a tcgen05 copy atom (SM100_TMEM_LOAD_* / SM100_TMEM_STORE_*)")
        from algebra import atoms

        _, shape, _, packed = sm100_tmem.split_name(name)
        first, last = sm100_tmem.warp_lanes(warp, shape)
        bits = 16 if packed else element_bits  # .pack::16b: a register holds two columns' 16-bit values
        tm = sm100_tmem.thread_map(name, warp, bits)
        cols = max(v["column"] for t in tm for v in t) + 1
        view = TmemView(name, atoms.get(name), warp, first, last, sm100_tmem.tmem_copy_table()[name][4], columns=cols,
                        value_bits=bits)
        shown = min(cols, 64)
        cell = {(v["lane"], v["column"]): (t, j) for t, vals in enumerate(tm) for j, v in enumerate(vals)}
        for lane in range(32 * (warp % 4), 32 * (warp % 4) + 32):
            view.rows.append({"lane": lane, "cells": [cell.get((lane, c)) for c in range(shown)]})
        q = warp % 4
        parts = ['<svg xmlns="http://www.w3.org/2000/svg" id="tmem-quarters" role="img" width="420" height="150" '
                 f'aria-label="warp {warp} reaches only lanes {32 * q} to {32 * q + 31}">']
        for k in range(4):
            mine = k == q
            fill = "#8fc1ef" if mine else "#eee"
            parts.append(f'<rect x="90" y="{10 + 32 * k}" width="300" height="30" fill="{fill}" stroke="#666"/><text'
                         f' x="4" y="{30 + 32 * k}" font-size="11">lanes {32 * k}-{32 * k + 31}'
                         f'</text><text x="100" y="{30 + 32 * k}" font-size="11">warps {k}, {k + 4}, {k + 8}, ...'
                         f'{" (warp " + str(warp) + ": here)" if mine else " (not reachable)"}</text>')
        parts.append("</svg>")
        view.svg = "".join(parts)
        return view
