"""Bank conflicts of a store (or load) between a Triton distributed layout and a shared one: the instructions the
compiler would issue and their wavefronts under the bank model (``algebra.hw.banks.analyze``, CONTRACT §3).

The register -> shared map: each register, lane and warp bit of the distributed layout goes to a tensor element,
and the shared layout stores that element at an offset (for padded_shared, the linear offset plus its paddings).
Without paddings the map is linear over F2, so it is a list of offset columns.

Instructions (per warp, register bits that broadcast -- map to no new element -- dropped):

* ``ldmatrix`` / ``stmatrix`` where the map fits 8x8 matrices of 16-byte rows, as Triton's lowerLdStMatrix divides
  it: the registers of each lane's 32-bit word (offsets 1, 2, ... below 4 bytes, any register order) and lanes 0, 1
  -> the rest of a 16-byte row, lanes 2-4 pick the 8 rows (8-, 16- or 32-bit elements); or, for ``.trans`` (16-bit),
  lanes 2-4 -> offsets 1, 2, 4 (register 0 and lanes 0, 1 pick the rows, as Triton 3.6 does; 3.9 picks the register
  whose rows share the fewest banks); the next one or two registers pick matrices (x2, x4); every row 16-byte
  aligned. One phase per matrix: 8 rows of 16 bytes.
* otherwise ``ld.shared`` / ``st.shared`` of v elements per lane, v the widest power of two whose elements are
  consecutive and aligned in both layouts (the registers span the offsets 1, 2, ..., v/2 -- the compiler relabels
  registers, so a register at offset 65 beside one at offset 1 is one at 64 -- and no lane or warp bit touches the
  low log2(v) offset bits), at most 16 bytes. Into a padded_shared buffer: st.shared only, v at most the shortest
  padding interval, and every warp's vectors consecutive and v-aligned after the paddings (where a padding breaks
  that alignment, Triton 3.9 emits misaligned vectors; the model counts the aligned ones).

The remaining register bits enumerate the instructions: every repeat of the CTA tile over the tensor is there, since
the layout for the shape already holds them as register bits. ``ideal`` of an instruction is its number of phases.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from operator import or_
from typing import Any

from algebra.core.arith import f2_apply, f2_rank
from algebra.core.errors import LayoutError
from algebra.doctor.linear_layout import inverse_columns, span
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
        """Where linear offset ``lin`` is stored (``triton_shared.padded``)."""
        return padded(lin, self.paddings)


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
    inverse = inverse_columns(cols) if len(cols) == nbits else None
    if inverse is None:
        raise LayoutError(f"shared: its {len(cols)} offset bits are not a bijection onto the {nbits} element bits "
                          "of the tensor, so an element has no single offset")
    b = dist.ll.bases
    if len(b.get("lane", [])) != LANES:
        raise LayoutError(f"distributed: {len(b.get('lane', []))} lane bits; an NVIDIA warp has 32 lanes")

    def go(vs: list[list[int]]) -> list[int]:
        return [f2_apply(inverse, pack(v, shape)) for v in vs]
    reg = go([v for v in b["register"] if any(v)])
    return Mapping(reg, go(b["lane"]), go(b.get("warp", [])), inverse, shared.paddings, max(1, element_bits // 8),
                   1 << len(b.get("warp", [])))


def _matrix_fit(m: Mapping) -> tuple[str, list[int], list[int], list[int]] | None:
    """(variant, register bits used, row columns, matrix-selector columns) when the map fits ldmatrix / stmatrix as
    Triton's lowerLdStMatrix divides it (the module docstring; ``.trans`` as Triton 3.6 does, measured on the H200).
    Post: None unless every row, matrix and repeat starts on 16 bytes."""
    eb = m.element_bytes
    if eb > 4 or m.paddings:
        return None  # Triton lowers a store into a padded_shared buffer with st.shared only
    lane, word = m.lane, 4 // eb
    variants = []
    packed = [m.reg.index(1 << k) for k in range(word.bit_length() - 1) if (1 << k) in m.reg]
    if len(packed) == word.bit_length() - 1 and lane[0] == word and lane[1] == 2 * word:
        variants.append(("", packed, lane[2:5]))
    if eb == 2 and m.reg and lane[2:5] == [1, 2, 4]:
        variants.append((".trans", [0], [m.reg[0], lane[0], lane[1]]))
    for variant, used, rows in variants:
        others = [i for i in range(len(m.reg)) if i not in used]
        if any(c & (16 // eb - 1) for c in rows + [m.reg[i] for i in others] + m.warp):
            continue  # a row, a matrix or a repeat would start inside a 16-byte row
        sel = others[:2]
        return variant, used + sel, rows, [m.reg[i] for i in sel]
    return None


def _vector(m: Mapping, element_bits: int, cap: int | None = None) -> tuple[int, list[int]]:
    """(v, the register columns that enumerate the instructions): v as the module docstring says (the relabelled
    registers: seen in Triton 3.9's PTX and measured with Triton 3.6 on the H200), at most ``cap`` elements.
    Post: the columns returned span the registers' offsets beyond the vector, low log2(v) bits cleared, and are
    independent."""
    top = max(1, 128 // max(element_bits, 1)) if cap is None else cap
    top = min([top] + [i for i, _ in m.paddings])
    lanes = reduce(or_, m.lane + m.warp, 0)
    have = f2_rank(m.reg)
    v = 1
    while 2 * v <= top and not lanes & (2 * v - 1) and f2_rank([*m.reg, v]) == have:
        v *= 2
    return v, _independent([c & ~(v - 1) for c in m.reg])


def _independent(cols: list[int]) -> list[int]:
    """The nonzero columns independent of those kept before them (the core's ``f2_rank``), in order."""
    out: list[int] = []
    for c in cols:
        if c and f2_rank([*out, c]) > len(out):
            out.append(c)
    return out


def _contiguous(m: Mapping, cols: list[int], v: int) -> bool:
    """Every vector of v elements from a start in the span of ``cols`` stays consecutive and v-aligned after the
    paddings. Columns that share no bit take a shortcut: the paddings add over the bits of an offset, so every start
    is aligned when every column is (v is at most the shortest interval, so no interval ends inside a vector)."""
    if not m.paddings:
        return True
    union = reduce(or_, cols, 0)
    if sum(bin(c).count("1") for c in cols) == bin(union).count("1") and v <= min(i for i, _ in m.paddings):
        return not union & (v - 1) and all(m.offset(c) % v == 0 for c in cols)
    for s in span(cols):
        o = m.offset(s)
        if o % v or any(m.offset(s + j) != o + j for j in range(1, v)):
            return False
    return True


def _name(op: str, nbytes: int) -> str:
    base = "st.shared" if op == "store" else "ld.shared"
    return base + {1: ".b8", 2: ".b16", 4: ".b32", 8: ".v2.b32", 16: ".v4.b32"}[nbytes]


def plan(dist: TritonLayout, shared: TritonLayout, element_bits: int, op: str = "store", warp: int = 0,
         fast: bool = False, matrix: bool = True, memo: bool = True) -> dict[str, Any]:
    """The instructions of warp ``warp`` and their wavefronts: ``{"instructions": [{"kind", "vector_bytes",
    "wavefronts", "ideal", "phases", "index"}], "wavefronts", "ideal", "warp", "warps", "vector", "kind", "count",
    "why"}`` (``index``: the instruction's number, its register bits beyond the vector or matrix).
    Post: each instruction's wavefronts and phases are ``analyze`` of its byte addresses (instructions whose starts
    differ by whole 128-byte lines cost the same, so each such start is priced once; ``fast`` also skips the
    per-instruction list and counts the repeats of each start instead of enumerating them; ``memo=False`` prices
    every instruction from its addresses, the reference the shortcuts are tested against); ``matrix=False`` never
    picks ldmatrix / stmatrix (Gluon's ``bank_conflicts`` counts ld.shared / st.shared only)."""
    if op not in ("store", "load"):
        raise LayoutError(f"op: {op!r} is not store or load")
    if element_bits not in (8, 16, 32, 64):
        raise LayoutError(f"element_bits: {element_bits!r} is not 8, 16, 32 or 64")
    m = mapping(dist, shared, element_bits)
    if not isinstance(warp, int) or isinstance(warp, bool) or not 0 <= warp < m.warps:
        raise LayoutError(f"warp: {warp!r} is outside the layout's {m.warps} warp(s) (0..{m.warps - 1})")
    eb = m.element_bytes
    wbase = f2_apply(m.warp, warp)
    fit = _matrix_fit(m) if matrix else None
    if fit is not None:
        variant, used, rows, sel = fit
        rest = [c for i, c in enumerate(m.reg) if i not in used]
        num = 1 << len(sel)
        akind = "stmatrix" if op == "store" else "ldmatrix"
        kind, vbytes = akind + f".x{num}" + variant, 16
        lanes = [s ^ r for s in span(sel) for r in span(rows)]  # matrix-major: 8 rows of each matrix
        why = (f"{kind}: 8 rows of 16 bytes per matrix ("
               + ("lanes 2-4 run along a row, register 0 and lanes 0-1 pick the rows" if variant else
                  "each lane's 32-bit word and lanes 0-1 run along a row, lanes 2-4 pick the rows") + ")")
    else:
        v, rest = _vector(m, element_bits)
        while v > 1 and not _contiguous(m, rest + m.lane + m.warp, v):  # one width for every warp
            v, rest = _vector(m, element_bits, v // 2)
        vbytes = v * eb
        kind, akind = _name(op, vbytes), ("sts" if op == "store" else "lds")
        lanes = span(m.lane)
        why = (f"{kind}: {v} element{'s' if v > 1 else ''} per lane, the widest run that is consecutive in "
               "registers and in shared memory" + (" and stays aligned after the paddings" if m.paddings else ""))
    if (1 << len(rest)) > MAX_INSTRUCTIONS:
        raise LayoutError(f"shape: {1 << len(rest):,} instructions per warp is over the cap of {MAX_INSTRUCTIONS:,}")
    line = max(1, 128 // eb)
    cache: dict[int, tuple[int, list[int]]] = {}
    bases, mult = span(rest), 1
    if fast and memo and not m.paddings:  # an instruction's cost depends on its start modulo a 128-byte line
        low = _independent([c % line for c in rest])
        bases, mult = span(low), 1 << (len(rest) - len(low))
    lane_bits = reduce(or_, lanes, 0)
    out, total, ideal = [], 0, 0
    for i, base in enumerate(bases):
        b = base ^ wbase
        # with paddings, offset(b ^ x) = offset(b) + offset(x) when b and x share no bit (the paddings add over the
        # bits of an offset), so the cost depends on offset(b) modulo a line; otherwise every lane is looked up
        key = b % line if not m.paddings else (m.offset(b) % line if not b & lane_bits else None)
        key = key if memo else None
        got = cache.get(key) if key is not None else None
        if got is None:
            addrs = [(m.offset(b ^ x) if m.paddings else b ^ x) * eb for x in lanes]
            r = analyze(addrs, access_bytes=vbytes, kind=akind)
            got = (r.wavefronts, list(r.phases))
            if key is not None:
                cache[key] = got
        total += got[0] * mult
        ideal += len(got[1]) * mult
        if not fast:
            out.append({"kind": kind, "vector_bytes": vbytes, "wavefronts": got[0], "ideal": len(got[1]),
                        "phases": got[1], "index": i})
    return {"instructions": out, "wavefronts": total, "ideal": ideal, "warp": warp, "warps": m.warps,
            "vector": None if fit else v, "kind": kind, "count": 1 << len(rest), "why": why}
