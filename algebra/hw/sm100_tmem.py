"""Blackwell (SM100) tensor memory: the ``tcgen05.ld`` / ``tcgen05.st`` copy atoms, the allocation granularity and the
place an MMA's accumulator takes. Checked against CuTe C++ (``cute/atom/copy_traits_sm100.hpp``,
``cute/atom/mma_traits_sm100.hpp``: ``UMMA::tmem_frg``) and the PTX ISA, not measured on hardware.

Tensor memory is 128 lanes (data paths, "dp") x 512 columns of 32 bits per SM. A warp reaches only its own quarter
of the lanes: warp w accesses lanes ``32 * (w % 4)`` to ``32 * (w % 4) + 31`` (PTX ISA, tcgen05 "Matrix fragments";
CuTe asserts ``(threadIdx.x / 32) % 4 == (lane / 32) % 4`` in ``copy_unpack``).

CuTe's TMEM copy traits (every atom of the header checked by ``tests/oracle/test_sm100_oracle.py``): ThrID = 32:1;
for a load SrcLayout = RefLayout = (32,V):(0,1), V the bits one warp moves (:data:`SHAPES`), and DstLayout (thread, bit)
-> bit by shape (:func:`_dst`); a store swaps Src and Dst (Ref stays). ValID: :func:`val_id`.
"""

from __future__ import annotations

import re
from functools import cache
from itertools import groupby
from typing import Any

from algebra.core.errors import LayoutError
from algebra.core.layout import Layout, size
from algebra.core.modes import offsets
from algebra.core.notation import parse_layout

LANES = 128
COLUMNS = 512
COLUMN_BITS = 32
DP_B = 1 << 21  # CuTe's TMEM::DP_b: one lane (data path) in TMEM bit addresses
MIN_ALLOC = 32
MAX_WARPS = 32  # a CTA has at most 1024 threads
A_COLUMNS = 8  # a TS-form MMA's A in TMEM: the instruction's 256 bits of K on each row's lane

#: shape -> (lanes per warp access, V / r in bits, the repeats CuTe defines)
SHAPES: dict[str, tuple[int, int, tuple[int, ...]]] = {
    "32dp32b": (32, 1024, (1, 2, 4, 8, 16, 32, 64, 128)),
    "16dp32b": (16, 1024, (1, 2, 4, 8, 16, 32, 64, 128)),
    "16dp64b": (16, 1024, (1, 2, 4, 8, 16, 32, 64, 128)),
    "16dp128b": (16, 2048, (1, 2, 4, 8, 16, 32, 64)),
    "16dp256b": (16, 4096, (1, 2, 4, 8, 16, 32)),
}
_PTX_SHAPE = {"32dp32b": "32x32b", "16dp32b": "16x32bx2", "16dp64b": "16x64b", "16dp128b": "16x128b",
              "16dp256b": "16x256b"}
_NAME = re.compile(r"SM100_TMEM_(LOAD|STORE)_(\d+dp\d+b)(\d+)x(_16b)?")


def _dst(shape: str, r: int) -> str:
    """CuTe's DstLayout of ``SM100_TMEM_LOAD_<shape><r>x``: (thread, bit) -> bit (r = 1 drops the repeat mode)."""
    if shape == "32dp32b":
        return f"(32,{32 * r}):({32 * r},1)"
    if shape == "16dp32b":
        return f"((16,2),{32 * r}):(({64 * r},{32 * r}),1)"
    if shape == "16dp64b":
        return "((2,2,8),32):((512,32,64),1)" if r == 1 else f"((2,2,8),(32,{r})):(({512 * r},32,{64 * r}),(1,64))"
    w = 32 if shape == "16dp128b" else 64
    if r == 1:
        return f"((4,8),({w},2)):(({w},{4 * w}),(1,{32 * w}))"
    return f"((4,8),({w},2,{r})):(({w},{4 * w * r}),(1,{32 * w * r},{4 * w}))"


def split_name(name: str) -> tuple[str, str, int, bool]:
    """``"SM100_TMEM_LOAD_16dp256b4x_16b"`` -> ("LOAD", "16dp256b", 4, True); LayoutError for any other name."""
    m = _NAME.fullmatch(name.strip().removeprefix("cute::").removeprefix("SM100::TMEM::LOAD::")
                        .removeprefix("SM100::TMEM::STORE::"))
    if not m or m.group(2) not in SHAPES or int(m.group(3)) not in SHAPES[m.group(2)][2]:
        raise LayoutError(f"{name!r} is not a tcgen05 copy atom: SM100_TMEM_<LOAD|STORE>_<shape><r>x[_16b] with shape "
                          + ", ".join(f"{s} (r in {list(v[2])})" for s, v in SHAPES.items()))
    return m.group(1), m.group(2), int(m.group(3)), bool(m.group(4))


@cache
def tmem_copy_table() -> dict[str, tuple[str, str, str, str, str]]:
    """name -> (thr_id, src, dst, ref, ptx) in CuTe notation (bits), for every TMEM load / store atom of CuTe."""
    t: dict[str, tuple[str, str, str, str, str]] = {}
    for shape, (_, v, reps) in SHAPES.items():
        for r in reps:
            src, dst = f"(32,{v * r}):(0,1)", _dst(shape, r)
            for suffix, mod in (("", ""), ("_16b", ".pack::16b")):
                t[f"SM100_TMEM_LOAD_{shape}{r}x{suffix}"] = (
                    "32:1", src, dst, src, f"tcgen05.ld.sync.aligned.{_PTX_SHAPE[shape]}.x{r}{mod}.b32")
                t[f"SM100_TMEM_STORE_{shape}{r}x{suffix}"] = (
                    "32:1", dst, src, src,
                    f"tcgen05.st.sync.aligned.{_PTX_SHAPE[shape]}.x{r}{mod.replace('pack', 'unpack')}.b32")
    return t


def val_id(name: str) -> Layout:
    """CuTe's ``Copy_Traits<Op>::ValID``: the bit index of a value -> its TMEM bit address (lane * DP_b + bit)."""
    _, shape, r, packed = split_name(name)
    d, v, _ = SHAPES[shape]
    per_lane = v * r // d
    if packed:
        return Layout(((16, per_lane // 16), d), ((1, 32), DP_B))
    return Layout((per_lane, d), (1, DP_B))


def warp_lanes(warp: int, shape: str = "32dp32b", lane_base: int | None = None) -> tuple[int, int]:
    """The first and last TMEM lane warp ``warp`` reaches with an access of ``shape`` whose address names lane
    ``lane_base`` (default: the first lane of the warp's quarter). LayoutError when the base lies outside the quarter
    ``[32 (w % 4), 32 (w % 4) + 32)`` or the access would cross it."""
    if not isinstance(warp, int) or isinstance(warp, bool) or not 0 <= warp < MAX_WARPS:
        raise LayoutError(f"warp must be a warp of the CTA, 0 to {MAX_WARPS - 1} (at most 1024 threads), not {warp!r}")
    if shape not in SHAPES:
        raise LayoutError(f"shape must be one of {', '.join(SHAPES)}, not {shape!r}")
    q = 32 * (warp % 4)
    base = q if lane_base is None else lane_base
    d = SHAPES[shape][0]
    if not (q <= base and base + d <= q + 32):
        raise LayoutError(f"warp {warp} reaches only lanes {q}-{q + 31} (its quarter: warp % 4 = {warp % 4}); an "
                          f"access of {d} lanes from lane {base} leaves it")
    return base, base + d - 1


def thread_map(name: str, warp: int = 0, element_bits: int = 32, lane_base: int | None = None,
               column_base: int = 0) -> list[list[dict[str, int]]]:
    """For each of the warp's 32 threads, the TMEM (lane, column, first bit) of each register value it loads (or
    stores), for values of ``element_bits``: value v of thread t is bit ``dst(t, v * element_bits)`` of the
    instruction, placed by ValID. Lanes count from ``lane_base`` (default: the warp's quarter)."""
    _, shape, r, _ = split_name(name)
    reg = parse_layout(_dst(shape, r))  # the registers' side: a load's DstLayout, a store's SrcLayout
    vid = val_id(name)
    per_thread = size(reg) // 32
    if element_bits not in (8, 16, 32) or per_thread % element_bits:
        raise LayoutError(f"element_bits must be 8, 16 or 32 and divide the {per_thread} bits a thread holds")
    first, _ = warp_lanes(warp, shape, lane_base)

    def place(addr: int) -> dict[str, int]:
        lane, bit = divmod(addr, DP_B)
        return {"lane": first + lane, "column": column_base + bit // COLUMN_BITS, "bit": bit % COLUMN_BITS}

    return [[place(vid(reg((t, v * element_bits)))) for v in range(per_thread // element_bits)] for t in range(32)]


def alloc_columns(columns: int) -> int:
    """What ``tcgen05.alloc`` must be asked for to hold ``columns`` columns: a power of two, at least 32, at most
    512 (PTX ISA: nCols in [32, 512], a power of 2)."""
    if not isinstance(columns, int) or isinstance(columns, bool) or columns < 1:
        raise LayoutError(f"columns must be a positive integer, not {columns!r}")
    if columns > COLUMNS:
        raise LayoutError(f"{columns} columns do not fit: tensor memory has {COLUMNS} columns per SM")
    return max(MIN_ALLOC, 1 << (columns - 1).bit_length())


def accumulator_columns(m: int, n: int, cta_group: int = 1) -> int:
    """TMEM columns one CTA's share of an M x N accumulator takes (C is stored one 32-bit column per element, f16
    accumulators included: CuTe's ``tmem_frg<c_type, uint32_t>``): N, except M = 128 over 2 CTAs (64 rows per CTA,
    laid as 2 x 64 lanes over N/2 columns)."""
    return n // 2 if cta_group == 2 and m == 128 else n


def accumulator_layout(m: int, n: int, cta_group: int = 1) -> Layout:
    """CuTe's ``UMMA::tmem_frg`` for the M x N accumulator of one MMA at TMEM address 0, as a Layout: (i, j) ->
    ``cta * 2^32 + lane * 2^16 + column`` (a TMEM address is ``lane << 16 | column``). 1 CTA M = 128: lane i, column
    j; 1 CTA M = 64: lanes 0-15 of each quarter (i = i0 + 16 i1 -> lane i0 + 32 i1); 2 CTAs: CTA i // (M/2) holds
    rows [M/2 cta, M/2 (cta+1)); M = 256: lane i % 128, column j; M = 128: row r = i % 64 at lane r for j < N/2 and
    lane 64 + r, column j - N/2 otherwise. For the M, N and CTA counts ``tcgen05.mma`` takes (``sm100.umma``)."""
    if cta_group == 1 and m == 64:
        return Layout(((16, 4), n), ((1 << 16, 32 << 16), 1))
    if cta_group == 2 and m == 128:
        return Layout(((64, 2), (n // 2, 2)), ((1 << 16, 1 << 32), (1, 64 << 16)))
    return Layout(((m // cta_group, cta_group), n), ((1 << 16, 1 << 32), 1))


def a_operand_layout(m: int, cta_group: int = 1) -> Layout:
    """CuTe's ``FrgTypeA::make`` for the A operand of a TS-form MMA (A read from tensor memory) at TMEM address 0, in
    32-bit columns: (i, c, copy) -> ``cta * 2^32 + lane << 16 | column``. A row takes the instruction's 256 bits of K
    on its lane, :data:`A_COLUMNS` columns (column c holds K elements [c 32 / bits, (c + 1) 32 / bits)). 1 CTA
    (``tmem_frg_1sm<a_type, a_type, NonInterleaved>``) and 2 CTAs M = 256: row i on the lane of the accumulator's
    row i; 2 CTAs M = 128 (``tmem_frg_2sm<a_type, a_type, Duplicated>``): each CTA's 64 rows on lanes 0-63 and a copy
    on lanes 64-127 (mode ``copy``, of size 2; 1 otherwise). For 8-, 16- and 32-bit A (``tests/oracle``)."""
    if cta_group == 2 and m == 128:
        return Layout(((64, 2), A_COLUMNS, 2), ((1 << 16, 1 << 32), 1, 64 << 16))
    acc = accumulator_layout(m, A_COLUMNS, cta_group)
    return Layout((acc.shape[0], A_COLUMNS, 1), (acc.stride[0], 1, 0))


def tmem_map(layout: Layout, m: int) -> list[list[tuple[int, int, int]]]:
    """(cta, lane, column) of every cell row i of ``layout`` takes, for each of its M rows (mode 0; the other modes,
    column-major, follow: :func:`accumulator_layout`, :func:`a_operand_layout`)."""
    flat = offsets(layout)  # column-major: row i's cells at i, i + m, i + 2 m, ...
    return [[(a >> 32, (a >> 16) & 0xFFFF, a & 0xFFFF) for a in flat[i::m]] for i in range(m)]


def accumulator_map(m: int, n: int, cta_group: int = 1) -> list[list[tuple[int, int, int]]]:
    """(cta, lane, column) of each element (i, j) of the M x N accumulator (:func:`accumulator_layout`)."""
    return tmem_map(accumulator_layout(m, n, cta_group), m)


def _lane_runs(grid: list[list[tuple[int, int, int]]], cta: int) -> tuple[list[str], int]:
    """The runs of consecutive lanes CTA ``cta``'s cells of ``grid`` cover ("0-15", "32-47", ...), and how many."""
    lanes = sorted({lane for row in grid for (c, lane, _) in row if c == cta})
    runs = [[x for _, x in g] for _, g in groupby(enumerate(lanes), lambda p: p[1] - p[0])]  # consecutive lanes
    return [f"{g[0]}-{g[-1]}" for g in runs], len(lanes)


def occupancy(m: int, n: int, cta_group: int = 1, a_source: str = "smem") -> dict[str, Any]:
    """Per CTA: the lanes and columns the accumulator covers and the columns to allocate. A TS form (``a_source``
    ``"tmem"``) adds ``"a"``: A's :data:`A_COLUMNS` columns, drawn right after C's, the lanes of its rows per CTA,
    and the allocation for C and A together."""
    cols = accumulator_columns(m, n, cta_group)
    grid = accumulator_map(m, n, cta_group)
    ctas = []
    for c in range(cta_group):
        lanes, count = _lane_runs(grid, c)
        ctas.append({"cta": c, "lanes": lanes, "lane_count": count, "columns": cols, "alloc": alloc_columns(cols)})
    out = {"m": m, "n": n, "cta_group": cta_group, "columns": cols, "alloc": alloc_columns(cols), "ctas": ctas,
           "total_lanes": LANES, "total_columns": COLUMNS}
    if a_source == "tmem":
        a = tmem_map(a_operand_layout(m, cta_group), m)
        out["a"] = {"columns": A_COLUMNS, "first_column": cols, "alloc": alloc_columns(cols + A_COLUMNS),
                    "lanes": [_lane_runs(a, c)[0] for c in range(cta_group)]}
    return out
