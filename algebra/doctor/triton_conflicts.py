"""Bank conflicts of a store (or load) between a Triton distributed layout and a shared one: the instructions the
compiler would issue and their wavefronts under the bank model (``algebra.hw.banks.analyze``, CONTRACT §3).

The register -> shared map: each register, lane and warp bit of the distributed layout goes to a tensor element,
and the shared layout stores that element at an offset (for padded_shared, the linear offset plus its paddings).
Without paddings the map is linear over F2, so it is a list of offset columns.

Instructions (per warp, register bits that broadcast -- map to no new element -- dropped):

* ``ldmatrix`` / ``stmatrix`` (16-bit elements) where the map fits an 8x8 matrix: register bit 0 -> offset 1 and
  lanes 0, 1 -> offsets 2, 4 (each lane holds 2 elements of one 16-byte row; lanes 2-4 pick the 8 rows), or, for
  ``.trans``, lanes 2-4 -> offsets 1, 2, 4 (register bit 0 and lanes 0, 1 pick the rows); up to two further register
  bits pick matrices (x2, x4); every row 16-byte aligned. One phase per matrix: 8 rows of 16 bytes.
* otherwise ``ld.shared`` / ``st.shared`` of v elements per lane, v the widest power of two whose elements are
  consecutive and aligned in both layouts (some register bits map to offsets 1, 2, ..., v/2 and no other bit touches
  the low log2(v) offset bits), at most 16 bytes.

The remaining register bits enumerate the instructions: every repeat of the CTA tile over the tensor is there, since
the layout for the shape already holds them as register bits. ``ideal`` of an instruction is its number of phases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from algebra.core.errors import LayoutError
from algebra.doctor import f2
from algebra.doctor.triton_layouts import TritonLayout
from algebra.doctor.triton_shared import pack, padded
from algebra.hw.banks import analyze

LANES = 5
MAX_INSTRUCTIONS = 4096


@dataclass
class Mapping:
    """The register -> offset map of one distributed/shared pair (block 0)."""

    reg: list[int]        # offset column of each register bit that is not a broadcast
    lane: list[int]
    warp: list[int]
    inverse: list[int]    # element index bit -> linear offset
    paddings: list[list[int]]
    element_bytes: int
    warps: int

    def offset(self, lin: int) -> int:
        return padded(lin, self.paddings) if self.paddings else lin


def mapping(dist: TritonLayout, shared: TritonLayout, element_bits: int) -> Mapping:
    """Columns of the register/lane/warp -> linear offset map. LayoutError names the field when the pair does not
    describe one tensor of one CTA."""
    if shared.shared is False:
        raise LayoutError(f"shared: {shared.kind} is a distributed layout; give a shared one (swizzled_shared, ...)")
    if dist.shared:
        raise LayoutError(f"distributed: {dist.kind} is a shared layout; give a distributed one (blocked, ...)")
    if dist.shape != shared.shape:
        raise LayoutError(f"shape: the layouts were read for {dist.shape} and {shared.shape}")
    shape = dist.shape
    sb = shared.ll.bases
    if any(any(v) for v in sb.get("block", [])) or any(any(v) for v in dist.ll.bases.get("block", [])):
        raise LayoutError("CGALayout: conflicts are counted inside one CTA; give layouts of a single CTA")
    cols = [pack(v, shape) for v in sb["offset"]]
    nbits = sum(s.bit_length() - 1 for s in shape)
    if len(cols) != nbits or f2.rank(cols) != nbits:
        raise LayoutError(f"shared: its {len(cols)} offset bits are not a bijection onto the {nbits} element bits "
                          "of the tensor, so an element has no single offset")
    inverse = f2.inverse(cols)
    b = dist.ll.bases
    if len(b.get("lane", [])) != LANES:
        raise LayoutError(f"distributed: {len(b.get('lane', []))} lane bits; an NVIDIA warp has 32 lanes")

    def go(vs: list[list[int]]) -> list[int]:
        return [f2.apply(inverse, pack(v, shape)) for v in vs]
    reg = [c for c, v in zip(go(b["register"]), b["register"], strict=True) if any(v)]
    return Mapping(reg, go(b["lane"]), go(b.get("warp", [])), inverse, shared.paddings, max(1, element_bits // 8),
                   1 << len(b.get("warp", [])))


def _span(cols: list[int]) -> list[int]:
    out = [0]
    for c in cols:
        out += [x ^ c for x in out]
    return out


def _matrix_fit(m: Mapping) -> tuple[str, list[int], list[int], list[int]] | None:
    """(variant, register bits used, row columns, matrix-selector columns) when the map fits ldmatrix/stmatrix."""
    if m.element_bytes != 2 or not m.reg:
        return None
    lane = m.lane
    variants = []
    if m.reg[0] == 1 and lane[0] == 2 and lane[1] == 4:
        variants.append(("", lane[2:5]))
    if lane[2:5] == [1, 2, 4]:
        variants.append((".trans", [m.reg[0], lane[0], lane[1]]))
    for variant, rows in variants:
        if any(c & 7 for c in rows + m.reg[1:] + m.warp):
            continue  # a row, a matrix or a repeat would start inside a 16-byte row
        sel = m.reg[1:3]
        return variant, [0] + list(range(1, 1 + len(sel))), rows, sel
    return None


def _vector(m: Mapping, element_bits: int) -> tuple[int, list[int]]:
    """(v, the register bits that hold the vector, in offset order)."""
    best: tuple[int, list[int]] = (1, [])
    cap = max(1, 128 // max(element_bits, 1))
    k = 0
    while (1 << (k + 1)) <= cap:
        want = [1 << i for i in range(k + 1)]
        if not all(w in m.reg for w in want):
            break
        used = [m.reg.index(w) for w in want]
        rest = [c for i, c in enumerate(m.reg) if i not in used] + m.lane + m.warp
        if any(c & ((1 << (k + 1)) - 1) for c in rest):
            break
        k += 1
        best = (1 << k, used)
    return best


def _contiguous(m: Mapping, starts: list[int], v: int) -> bool:
    """Every vector of v elements from a linear start stays consecutive and v-aligned after the paddings."""
    if not m.paddings:
        return True
    for s in starts:
        o = m.offset(s)
        if o % v or any(m.offset(s + j) != o + j for j in range(1, v)):
            return False
    return True


def _name(op: str, nbytes: int) -> str:
    base = "st.shared" if op == "store" else "ld.shared"
    return base + {1: ".b8", 2: ".b16", 4: ".b32", 8: ".v2.b32", 16: ".v4.b32"}[nbytes]


def plan(dist: TritonLayout, shared: TritonLayout, element_bits: int, op: str = "store", warp: int = 0,
         fast: bool = False, matrix: bool = True) -> dict[str, Any]:
    """The instructions of warp ``warp`` and their wavefronts: ``{"instructions": [{"kind", "vector_bytes",
    "wavefronts", "ideal", "phases", "index"}], "wavefronts", "ideal", "warp", "warps", "vector", "kind", "count",
    "why"}`` (``index``: the instruction's number, its register bits beyond the vector or matrix).
    Post: each instruction's wavefronts and phases are ``analyze`` of its byte addresses (``fast`` skips the
    per-instruction list and memoises costs of address sets that differ by whole 128-byte lines); ``matrix=False``
    never picks ldmatrix / stmatrix (Gluon's ``bank_conflicts`` counts ld.shared / st.shared only)."""
    if op not in ("store", "load"):
        raise LayoutError(f"op: {op!r} is not store or load")
    if element_bits not in (8, 16, 32, 64):
        raise LayoutError(f"element_bits: {element_bits!r} is not 8, 16, 32 or 64")
    m = mapping(dist, shared, element_bits)
    if not isinstance(warp, int) or isinstance(warp, bool) or not 0 <= warp < m.warps:
        raise LayoutError(f"warp: {warp!r} is outside the layout's {m.warps} warp(s) (0..{m.warps - 1})")
    eb = m.element_bytes
    wbase = f2.apply(m.warp, warp)
    fit = _matrix_fit(m) if matrix else None
    starts_ok = False
    if fit is not None:
        variant, used, rows, sel = fit
        rest = [c for i, c in enumerate(m.reg) if i not in used]
        row_starts = [wbase ^ x for x in _span(rest + sel + rows)]
        starts_ok = _contiguous(m, row_starts, 8)
    if fit is not None and starts_ok:
        num = 1 << len(sel)
        kind = ("stmatrix" if op == "store" else "ldmatrix") + f".x{num}" + variant
        lane_sets = [[s ^ r for s in _span(sel) for r in _span(rows)]]  # matrix-major: 8 rows of each matrix
        vbytes, how, akind = 16, "matrix", ("stmatrix" if op == "store" else "ldmatrix")
        why = (f"{kind}: each lane holds 2 elements of a 16-byte row of an 8x8 matrix "
               f"({'lanes 2-4 run along the row' if variant else 'register 0 and lanes 0-1 run along the row'})")
        v = 8
    else:
        v, used = _vector(m, element_bits)
        rest = [c for i, c in enumerate(m.reg) if i not in used]
        while v > 1 and not _contiguous(m, [wbase ^ x for x in _span(rest + m.lane)], v):
            v //= 2
            used = used[:-1]
            rest = [c for i, c in enumerate(m.reg) if i not in used]
        vbytes = v * eb
        kind, how, akind = _name(op, vbytes), "vector", ("sts" if op == "store" else "lds")
        lane_sets = [_span(m.lane)]
        why = (f"{kind}: {v} element{'s' if v > 1 else ''} per lane, the widest run that is consecutive in "
               "registers and in shared memory" + ("" if fit is None else
                                                   " (an 8x8 matrix fits, but a padding breaks its 16-byte rows)"))
    if (1 << len(rest)) > MAX_INSTRUCTIONS:
        raise LayoutError(f"shape: {1 << len(rest):,} instructions per warp is over the cap of {MAX_INSTRUCTIONS:,}")
    line = max(1, 128 // eb)
    memo: dict[tuple[int, ...], tuple[int, list[int]]] = {}
    out, total, ideal = [], 0, 0
    for i, base in enumerate(_span(rest)):
        b = base ^ wbase
        if m.paddings:
            addrs = [m.offset(b ^ x) * eb for x in lane_sets[0]]
            key = None
        else:
            key = (b % line,)
            addrs = [(b ^ x) * eb for x in lane_sets[0]]
        got = memo.get(key) if key is not None and fast else None
        if got is None:
            r = analyze(addrs, access_bytes=vbytes, kind=akind) if how == "vector" else analyze(addrs, kind=akind)
            got = (r.wavefronts, list(r.phases))
            if key is not None:
                memo[key] = got
        total += got[0]
        ideal += len(got[1])
        if not fast:
            out.append({"kind": kind, "vector_bytes": vbytes, "wavefronts": got[0], "ideal": len(got[1]),
                        "phases": got[1], "index": i})
    return {"instructions": out, "wavefronts": total, "ideal": ideal, "warp": warp, "warps": m.warps,
            "vector": v if how == "vector" else None, "kind": kind, "count": 1 << len(rest), "why": why}
