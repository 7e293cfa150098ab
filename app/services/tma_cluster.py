"""The TV atlas's TMA section: ``make_tma_atom(op, gA, sA_layout, cta_tile, cluster_size)`` (``algebra.hw.tma``)
drawn over the CTA tile (each cell: the CTA of the cluster that loads it and the TMA instruction), with the box,
the TMA coordinate tensor, ``tma_partition``'s per-CTA source and destination views, the cuTensorMapEncodeTiled
checks (``algebra.hw.hopper``) and its C++ / DSL code."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import urlencode

import algebra as A
from algebra import LayoutError
from algebra.hw import tma as TMA
from app.config import MAX_CELLS
from app.services.grid import GridView
from app.services.guard import guard
from app.services.layouts import parse_layout

#: (label, global layout, smem layout, CTA tile, cluster size, dtype)
PRESETS: list[tuple[str, str, str, str, int, str]] = [
    ("K-major fp16, 128B swizzle, 2 CTAs multicast", "(4096,4096):(4096,1)",
     "Sw<3,3,3> o ((8,16),(64,1)):((64,512),(1,0))", "128,64", 2, "FLOAT16"),
    ("the same tile, 4 CTAs", "(4096,4096):(4096,1)", "Sw<3,3,3> o ((8,16),(64,1)):((64,512),(1,0))", "128,64", 4,
     "FLOAT16"),
    ("K = 128 with a 64-wide swizzle atom: two TMA instructions", "(4096,4096):(4096,1)",
     "Sw<3,3,3> o ((8,16),(64,2)):((64,512),(1,8192))", "128,128", 1, "FLOAT16"),
    ("M-major fp32, no swizzle", "(2048,1024):(1,2048)", "(64,32):(1,64)", "64,32", 1, "FLOAT32"),
    ("contiguous modes merged into one TMA dimension (coalesce_256)", "(32,1024):(1,32)", "(32,8):(1,32)", "32,8", 2,
     "FLOAT16"),
]


@dataclass
class TmaClusterView:
    atom: Any
    grid: GridView
    parts: list[dict[str, str]] = field(default_factory=list)
    encode: Any = None
    cpp: str = ""
    dsl: str = ""
    hopper_link: str = ""


def _ints(text: str, what: str, low: int = 1) -> tuple[int, ...]:
    """Integers in ``low`` .. 2^20, comma-separated: a CTA tile's extents (low 1) or a tile coordinate (low 0)."""
    parts = [p.strip() for p in str(text).strip("() ").split(",") if p.strip()]
    if not parts or not all(p.isdecimal() and low <= int(p) <= 1 << 20 for p in parts):
        kind = "positive integers" if low else "integers >= 0"
        raise LayoutError(f"{what}: {text!r} is not a list of {kind} up to 2^20, e.g. {'128,64' if low else '1,0'}")
    return tuple(int(p) for p in parts)


@lru_cache(maxsize=16)
def tma_cluster_view(gmem: str, smem: str, tile: str, cluster: int, dtype: str = "FLOAT16",
                     cta_coord: str = "") -> TmaClusterView:
    g = parse_layout(gmem, "global tensor", plain=True)
    s = parse_layout(smem, "shared-memory layout")
    t = _ints(tile, "CTA tile")
    coord = _ints(cta_coord, "CTA coordinate", 0) if cta_coord.strip() else None
    op = "SM90_TMA_LOAD_MULTICAST" if cluster > 1 else "SM90_TMA_LOAD"
    with guard("make_tma_atom"):
        atom = TMA.make_tma_atom(op, g, s, t, cluster, dtype)
    if len(t) != 2:
        raise LayoutError(f"the picture needs a rank-2 CTA tile, not {t}")
    rows, cols = t
    if rows * cols > MAX_CELLS:
        raise LayoutError(f"a {rows}x{cols} tile exceeds the render cap of {MAX_CELLS:,} cells")
    text, colour = [[""] * cols for _ in range(rows)], [[-1] * cols for _ in range(rows)]
    with guard("tma_partition"):
        for i in range(rows):
            for j in range(cols):
                ins, cta = atom.owner(i + rows * j)
                text[i][j] = f"C{cta}" + (f"·I{ins}" if atom.instructions > 1 else "")
                colour[i][j] = (cta * 8 + ins) % 32
        parts = []
        for r in range(cluster):
            p = atom.partition(r, coord)
            parts.append({"cta": str(r), "source": str(p["source"]), "loads": str(p["loads"]), "destination":
                          str(p["destination"]) + (f" at smem offset {p['smem_offset']}" if p["smem_offset"] else "")})
        enc = atom.encode()
    grid = GridView(id="grid-tma", rows=rows, cols=cols, text=text, colour=colour, css="tv",
                    caption=f"CTA tile {rows}x{cols}: C<r> = CTA r of the cluster loads it"
                            + (", I<i> = TMA instruction i" if atom.instructions > 1 else ""))
    cpp = (f"auto gA = make_tensor(make_gmem_ptr(ptr), {A.to_cpp(g, style='type')});\n"
           f"auto sA_layout = {A.to_cpp(s, style='type') if isinstance(s, A.Layout) else A.to_cpp(s)};\n"
           f"auto tma = make_tma_atom({op}{{}}, gA, sA_layout, make_shape(Int<{t[0]}>{{}}, Int<{t[1]}>{{}})"
           + (f", Int<{cluster}>{{}}" if cluster > 1 else "") + ");\n"
           f"Tensor mA = tma.get_tma_tensor(shape(gA));   // {atom.tma_tensor()}\n"
           "auto [tAgA, tAsA] = tma_partition(tma, cta_rank_in_cluster, "
           f"Layout<Int<{cluster}>>{{}}, group_modes<0,2>(sA), group_modes<0,2>(gA_tile));")
    dsl = (f"tma_atom, mA = cute.nvgpu.cpasync.make_tiled_tma_atom(\n    cute.nvgpu.cpasync.CopyBulkTensorTileG2S"
           f"{'Multicast' if cluster > 1 else ''}Op(), gA, sA_layout, ({t[0]}, {t[1]})"
           + (f", num_multicast={cluster}" if cluster > 1 else "") + ")\n"
           "tAsA, tAgA = cute.nvgpu.cpasync.tma_partition(tma_atom, cta_rank, cute.make_layout("
           f"{cluster}), cute.group_modes(sA, 0, 2), cute.group_modes(gA_tile, 0, 2))")
    prob = atom.problem()  # the tensor TMA sees: one mode per TMA dimension (merged global modes as one)
    link = "/tv?" + urlencode({"ttensor": str(A.Layout(tuple(e for e, _ in prob), tuple(d for _, d in prob))),
                               "tbox": ",".join(map(str, atom.box)), "tdtype": dtype,
                               "tswz": enc.swizzle if hasattr(enc, "swizzle") else "NONE"}) + "#hopper-h"
    return TmaClusterView(atom=atom, grid=grid, parts=parts, encode=enc, cpp=cpp, dsl=dsl, hopper_link=link)


def tma_json(v: TmaClusterView) -> dict[str, Any]:
    a = v.atom
    return {"op": a.op, "dims": [list(d) for d in a.dims], "gbasis": str(a.gbasis()), "full_box": list(a.full_box),
            "box": list(a.box),
            "vector": a.vector, "instructions": a.instructions, "cluster_size": a.cluster_size,
            "tma_tensor": str(a.tma_tensor()), "partitions": v.parts, "owners": v.grid.text,
            "encode": v.encode.to_dict() if v.encode is not None else None}
