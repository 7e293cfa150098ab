"""Triton's layouts as LayoutLab reads them: one function per ``/api/triton/*`` route (CONTRACT §6), shared with the
explorer's and the TV atlas's Triton panels.

``layout_view`` reads one TTGIR attribute for a shape: its kind, Triton's LinearLayout bases, the CuTe layout beside
it (and its swizzle), the F2 matrix, and for a shared layout every element's offset. ``conflicts_view`` prices a
store or load between a distributed and a shared layout (``algebra.doctor.triton_conflicts``) and asks the doctor
for the fix (``algebra.doctor.triton_fix``). Every error is a LayoutError (422) naming the request's field.
"""

from __future__ import annotations

from math import prod
from typing import Any

from algebra import LayoutError, Swizzle
from algebra.doctor import triton_conflicts as C
from algebra.doctor import triton_fix as F
from algebra.doctor.linear_layout import describe_swizzle
from algebra.doctor.triton_layouts import TritonLayout, check_shape, convert, cute_of
from algebra.doctor.triton_shared import offset_table
from algebra.doctor.ttgir import TTGIRError
from app.budget import charge
from app.services.guard import guard

#: shared layouts up to this many elements list their offsets (128 x 128)
MAX_OFFSETS = 128 * 128
#: conflicts are counted for tensors up to this many elements
MAX_CONFLICT_ELEMENTS = 1 << 16
#: worked examples for the pages: (label, attribute, shape)
EXAMPLES: list[tuple[str, str, str]] = [
    ("blocked 1x8 per thread", "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
     "order = [1, 0]}>", "64,64"),
    ("mma v2 (mma.sync)", "#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], "
     "instrShape = [16, 8]}>", "64,64"),
    ("mma v3 (wgmma) accumulator", "#ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [4, 1], "
     "instrShape = [16, 64, 16]}>", "64,64"),
    ("dot operand A of mma v2", "#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [2, 2], "
     "instrShape = [16, 8]}>\n#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>", "64,32"),
    ("swizzled_shared 8/1/8", "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>", "64,64"),
    ("nvmma_shared 128 B", "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>",
     "64,64"),
    ("padded_shared +4 per row", "#ttg.padded_shared<[64:+4] {order = [1, 0], shape = [64, 64]}>", "64,64"),
]


def parse_shape(text: str) -> list[int]:
    """``"64,64"`` or ``"[64, 64]"`` as a shape; LayoutError names ``shape``."""
    parts = [p for p in text.strip().strip("[]()").replace("x", ",").split(",") if p.strip()]
    if not parts or not all(p.strip().isascii() and p.strip().isdigit() and len(p.strip()) < 8 for p in parts):
        raise LayoutError(f"shape: {text[:40]!r} is not a list of sizes such as 64,64")
    return check_shape([int(p) for p in parts])


def read(text: str, shape: Any, element_bits: int | None, field: str) -> TritonLayout:
    """One attribute for one shape, every error prefixed with the request's field name."""
    shp = check_shape(shape)
    charge("linear point", prod(shp), f"{field} for {shp}")
    try:
        with guard(field):
            return convert(text, shp, element_bits)
    except LayoutError as exc:
        msg = str(exc)
        keep = msg.startswith(("shape:", "element_bits:", f"{field}:"))
        raise LayoutError(msg if keep else f"{field}: {msg}") from None


def _nest(flat: list[int], shape: list[int]) -> list:
    """``flat`` (row-major) as nested lists of ``shape``: ``out[i][j]...`` is element (i, j, ...); rank 1 is flat."""
    if len(shape) == 1:
        return flat
    step = len(flat) // shape[0]
    rows = [flat[i * step:(i + 1) * step] for i in range(shape[0])]
    return rows if len(shape) == 2 else [_nest(r, shape[1:]) for r in rows]


def layout_view(text: str, shape: Any, element_bits: int = 16) -> dict[str, Any]:
    """``POST /api/triton/layout``: ``{"kind", "ttgir", "shape", "element_bits", "bases", "cute", "cute_why",
    "swizzle", "matrix"}``, plus for a shared layout ``"offsets"`` (row-major nested lists, each element's offset in
    the CTA that holds it; null past MAX_OFFSETS elements, or where an element has no single offset, with
    ``"offsets_note"``) and ``"paddings"``, and for a distributed one the counts of registers, lanes and warps."""
    t = read(text, shape, element_bits, "layout")
    with guard("layout"):
        c = cute_of(t)
        ll = t.linear()
        out: dict[str, Any] = {"kind": t.kind, "ttgir": t.text, "shape": t.shape, "element_bits": element_bits,
                               "bases": t.bases(), "cute": c["cute"], "cute_why": c["why"], "swizzle": None,
                               "matrix": ll.matrix(), "shared": t.shared}
        if c["swizzle"]:
            b, m, s = c["swizzle"]
            out["swizzle"] = {**describe_swizzle(Swizzle(b, m, s)), "name": f"Sw<{b},{m},{s}>"}
        if t.shared:
            out["paddings"] = t.paddings
            n = prod(t.shape)
            if n <= MAX_OFFSETS:
                charge("integer cell", n, "shared layout offsets")
                try:
                    out["offsets"] = _nest(offset_table(t.ll, t.paddings, t.shape), t.shape)
                except TTGIRError as exc:  # Triton accepts a layout that stores an element twice (a zero basis)
                    out["offsets"], out["offsets_note"] = None, str(exc)
            else:
                out["offsets"] = None
                out["offsets_note"] = f"{n:,} elements: offsets are listed up to {MAX_OFFSETS:,} (128 x 128)"
        else:
            b = t.ll.bases
            out.update(registers=1 << len(b["register"]), lanes=1 << len(b["lane"]), warps=1 << len(b["warp"]))
    return out


def conflicts_view(distributed: str, shared: str, shape: Any, element_bits: int = 16, op: str = "store",
                   warp: int = 0) -> dict[str, Any]:
    """``POST /api/triton/conflicts``: ``{"instructions": [{"kind", "vector_bytes", "wavefronts", "ideal", "phases",
    "index"}], "wavefronts", "ideal", "warp", "warps", "instruction", "count", "why", "fix": {"ttgir", "cute",
    "wavefronts", "ideal", "instruction", ...}}`` for warp ``warp``."""
    shp = check_shape(shape)
    n = prod(shp)
    if n > MAX_CONFLICT_ELEMENTS:
        raise LayoutError(f"shape: {n:,} elements is over the cap of {MAX_CONFLICT_ELEMENTS:,} for conflicts")
    d = read(distributed, shp, element_bits, "distributed")
    s = read(shared, shp, element_bits, "shared")
    warps = 1 << len(d.ll.bases.get("warp", []))
    # the plan: 32 lanes of each instruction, at most one instruction per element of the warp
    charge("integer cell", 32 * min(n // warps, C.MAX_INSTRUCTIONS), "conflicts")
    with guard("conflicts"):
        p = C.plan(d, s, element_bits, op, warp)
    # the fix prices each candidate's distinct instruction starts modulo a 128-byte line (32 lanes each) and looks
    # up every instruction's start once
    line = 128 // max(1, element_bits // 8)
    charge("integer cell", len(F.candidates(shp, element_bits)) * (32 * min(p["count"], line) + p["count"] + 512),
           "the fix's search")
    with guard("conflicts"):
        fix = F.fix(d, s, element_bits, op, warp)
    return {"distributed": d.text, "shared": s.text, "shape": shp, "element_bits": element_bits, "op": op,
            "warp": p["warp"], "warps": p["warps"], "instruction": p["kind"], "count": p["count"], "why": p["why"],
            "instructions": p["instructions"], "wavefronts": p["wavefronts"], "ideal": p["ideal"], "fix": fix}
