"""Blackwell (SM100): the ``tcgen05.mma`` atoms (CuTe's ``SM100_MMA_{TF32,F16BF16,S8,F8F6F4}[_2x1SM]_{SS,TS}``) with
their instruction descriptor, and the UMMA shared-memory descriptor and tensor-memory models of ``sm100_smem`` /
``sm100_tmem`` under one name. Exact to CuTe C++ (``cute/arch/mma_sm100_umma.hpp``, ``cute/atom/mma_traits_sm100.hpp``,
``cute/arch/mma_sm100_desc.hpp``) and the PTX ISA; checked against CuTe C++ host programs, not measured on hardware.

An atom's TV layouts are CuTe's ``MMA_Traits``: one "thread" per CTA (ThrID ``_1:_0``, or ``_2:_1`` for the 2-CTA
``2x1SM`` forms), the values the whole M x K / N x K / M x N tile column-major (``(1,(M,K)):(0,(1,M))``; over two CTAs
``(2,(M/2,K)):(M/2,(1,M))``: CTA c holds rows [c M/2, (c+1) M/2)). K is 256 bits of A's type (32 for F8F6F4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from algebra.core.errors import LayoutError
from algebra.core.layout import Layout
from algebra.hw.atoms import MMAOperands
from algebra.hw.sm100_smem import (  # noqa: F401  (one namespace: sm100.umma_desc, sm100.decode_umma_desc)
    LAYOUT_TYPES,
    decode_umma_desc,
    encode_fields,
    tile_atom,
    umma_desc,
    umma_smem_atom,
)
from algebra.hw.sm100_tmem import accumulator_columns, alloc_columns, occupancy  # noqa: F401

#: short and CuTe spellings -> (CuTe type, bits, instruction-descriptor format code)
TYPES: dict[str, tuple[str, int, int]] = {
    "half_t": ("half_t", 16, 0), "bfloat16_t": ("bfloat16_t", 16, 1), "tfloat32_t": ("tfloat32_t", 32, 2),
    "uint8_t": ("uint8_t", 8, 0), "int8_t": ("int8_t", 8, 1),
    "float_e4m3_t": ("float_e4m3_t", 8, 0), "float_e5m2_t": ("float_e5m2_t", 8, 1),
    "float_e2m3_t": ("float_e2m3_t", 6, 3), "float_e3m2_t": ("float_e3m2_t", 6, 4),
    # CuTe's to_UMMAFormat<float_e2m1_t> is MXF4Format::E2M1 = 1 (the kind::mxf4 code); kind::f8f6f4 reads 1 as E5M2,
    # and CUTLASS's builders pass the unpacked smem type, whose code is 5
    "float_e2m1_t": ("float_e2m1_t", 4, 1),
    "float_e2m3_unpacksmem_t": ("cute::detail::float_e2m3_unpacksmem_t", 8, 3),
    "float_e3m2_unpacksmem_t": ("cute::detail::float_e3m2_unpacksmem_t", 8, 4),
    "float_e2m1_unpacksmem_t": ("cute::detail::float_e2m1_unpacksmem_t", 8, 5),
    "float": ("float", 32, 1), "int32_t": ("int32_t", 32, 2),
}
SHORT: dict[str, str] = {
    "f16": "half_t", "fp16": "half_t", "half": "half_t", "bf16": "bfloat16_t", "tf32": "tfloat32_t",
    "s8": "int8_t", "i8": "int8_t", "int8": "int8_t", "u8": "uint8_t", "uint8": "uint8_t",
    "e4m3": "float_e4m3_t", "e5m2": "float_e5m2_t", "e2m3": "float_e2m3_t", "e3m2": "float_e3m2_t",
    "e2m1": "float_e2m1_t",
    "f32": "float", "fp32": "float", "s32": "int32_t", "i32": "int32_t", "int32": "int32_t",
}
C_FORMATS = {"half_t": 0, "float": 1, "int32_t": 2}
#: kind -> (CuTe op fragment, PTX kind, A/B types allowed, C types allowed, default A/B type)
KINDS: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...], str]] = {
    "tf32": ("TF32", "tf32", ("tfloat32_t",), ("float",), "tfloat32_t"),
    "f16": ("F16BF16", "f16", ("half_t", "bfloat16_t"), ("float", "half_t"), "half_t"),
    "i8": ("S8", "i8", ("int8_t", "uint8_t"), ("int32_t",), "int8_t"),
    "f8f6f4": ("F8F6F4", "f8f6f4", ("float_e4m3_t", "float_e5m2_t", "float_e2m3_t", "float_e3m2_t", "float_e2m1_t",
                                    "float_e2m3_unpacksmem_t", "float_e3m2_unpacksmem_t", "float_e2m1_unpacksmem_t"),
               ("float", "half_t"), "float_e4m3_t"),
}
_KIND_ALIASES = {"tf32": "tf32", "f16": "f16", "bf16": "f16", "f16bf16": "f16", "i8": "i8", "s8": "i8", "u8": "i8",
                 "int8": "i8", "f8f6f4": "f8f6f4", "f8": "f8f6f4", "fp8": "f8f6f4", "e4m3": "f8f6f4",
                 "e5m2": "f8f6f4"}
#: the block-scaled kinds CuTe has (``SM100_MMA_MXF8F6F4_SS``, ``SM100_MMA_MXF4_SS``, ``SM100_MMA_MXF4NVF4_SS_SPARSE``)
_BLOCK_SCALED = {"mxf8f6f4": "SM100_MMA_MXF8F6F4_SS", "mxf4": "SM100_MMA_MXF4_SS",
                 "mxf4nvf4": "SM100_MMA_MXF4NVF4_SS_SPARSE"}
_MN_MAJOR_OK = {"half_t", "bfloat16_t", "tfloat32_t", "int8_t", "uint8_t", "float_e4m3_t", "float_e5m2_t"}


def cute_type(name: str) -> str:
    """A type as CuTe spells it (``half_t``) from a short (``f16``) or CuTe spelling (``cutlass::half_t``)."""
    key = str(name).strip().removeprefix("cute::").removeprefix("cutlass::").removeprefix("detail::")
    key = SHORT.get(key.lower(), key)
    if key not in TYPES:
        raise LayoutError(f"unknown element type {name!r}; short names: {', '.join(SHORT)}; or CuTe's: "
                          f"{', '.join(TYPES)}")
    return key


def n_rule(kind: str, m: int, cta_group: int, a_source: str, b_major: str) -> tuple[tuple[int, ...], str]:
    """The N the op takes (from CuTe's static_asserts, which follow the PTX ISA's tcgen05.mma shapes), and the
    rule in words."""
    def mult(step: int, lo: int) -> tuple[tuple[int, ...], str]:
        return tuple(range(lo, 257, step)), f"a multiple of {step} between {lo} and 256"

    if cta_group == 1:
        if kind == "i8":
            return (8,) + tuple(range(16, 257, 16)), "8 or a multiple of 16 between 16 and 256"
        if a_source == "tmem":
            return mult(8, 8) if m == 64 else mult(16, 16)
        if kind == "f8f6f4" and b_major == "MN":
            return mult(16, 16)
        return mult(8, 8)
    if a_source == "tmem" or kind == "i8" or (kind == "f8f6f4" and b_major == "MN"):
        return mult(32, 32)
    return mult(16, 16)


@dataclass(frozen=True)
class UmmaAtom(MMAOperands):
    """One ``tcgen05.mma`` as CuTe's MMA_Traits: ``A``, ``B``, ``C`` map (CTA, value) to the column-major index of the
    M x K, N x K and M x N tiles; ``instr_desc`` is ``UMMA::make_instr_desc``'s 32-bit value."""

    name: str
    kind: str
    shape_mnk: tuple[int, int, int]
    thr_id: Layout
    A: Layout
    B: Layout
    C: Layout
    types: tuple[str, str, str, str]  # D, A, B, C (CuTe spellings)
    a_major: str
    b_major: str
    cta_group: int
    a_source: str
    instr_desc: int
    ptx: str

    def cpp(self) -> str:
        """The C++ type whose MMA_Traits this atom is (``MMA_Traits<cpp()>``)."""
        m, n, _ = self.shape_mnk
        d, a, b, _ = (TYPES[t][0] for t in self.types)
        am, bm = f"UMMA::Major::{self.a_major}", f"UMMA::Major::{self.b_major}"
        if self.kind == "f8f6f4" and self.a_source == "smem":  # a plain struct; the traits carry the parameters
            one = "integral_constant<UMMA::ScaleIn, UMMA::ScaleIn::One>"
            return (f"{self.name}, {a}, {b}, {d}, C<{m}>, C<{n}>, integral_constant<UMMA::Major, {am}>, "
                    f"integral_constant<UMMA::Major, {bm}>, {one}, {one}")
        return f"{self.name}<{a}, {b}, {d}, {m}, {n}, {am}, {bm}>"

    def decode(self) -> list[dict[str, Any]]:
        """The instruction descriptor, field by field (with a note where CuTe's float_e2m1_t puts the kind::mxf4
        code 1 into a kind::f8f6f4 descriptor, which the hardware reads as E5M2)."""
        out = decode_instr_desc(self.instr_desc, self.kind)
        for f, t in (("a_format", self.types[1]), ("b_format", self.types[2])):
            if t == "float_e2m1_t":
                row = next(r for r in out if r["name"] == f)
                row["meaning"] += (" (CuTe's float_e2m1_t writes MXF4Format::E2M1 = 1; kind::f8f6f4 reads 1 as E5M2, "
                                   "its E2M1 is 5: float_e2m1_unpacksmem_t)")
        return out

    def tmem(self) -> dict[str, Any]:
        """Where the accumulator lies in tensor memory (per CTA: lanes, columns, allocation); a TS form adds where A
        lies (``"a"``) for 8-, 16- and 32-bit A, and for fp6 / fp4 A (unpacked in smem or not) says in ``"a_note"``
        why it is not drawn."""
        m, n, _ = self.shape_mnk
        whole = self.types[1] in _MN_MAJOR_OK  # the 8-, 16- and 32-bit types
        out = occupancy(m, n, self.cta_group, "tmem" if self.a_source == "tmem" and whole else "smem")
        if self.a_source == "tmem" and not whole:
            out["a_note"] = (f"A of {self.types[1]} in tensor memory is not drawn: the instruction reads its 32 K "
                             "elements as 256 bits of a row, CuTe's tmem_frg addresses them as sub-byte values "
                             "(fewer columns), and which is right is not confirmed here")
        return out


def umma(kind: str, m: int, n: int, a_major: str = "K", b_major: str = "K", cta_group: int = 1,
         a_source: str = "smem", ab_type: Any = None, c_type: str | None = None) -> UmmaAtom:
    """The ``tcgen05.mma`` atom of ``kind`` (tf32, f16 / bf16, i8 / s8, f8f6f4) for an M x N x K MMA over
    ``cta_group`` CTAs, A from shared (``"smem"``, SS) or tensor memory (``"tmem"``, TS). ``ab_type``: one type for A
    and B, or an (A, B) pair; ``c_type`` the accumulator (f32, f16, s32; None: the kind's own, s32 for i8 and f32
    for the others). Refuses what the hardware lacks, naming the rule (an f32 C for i8 too: CuTe's
    SM100_MMA_S8_SS refuses it, the other S8 ops would encode an F32 c_format). Post-condition:
    ``size(C) == M * N`` and C is a bijection onto the M x N tile."""
    kkey = _KIND_ALIASES.get(str(kind).strip().lower().removeprefix("kind::"))
    if kkey is None:
        key = str(kind).strip().lower().removeprefix("kind::")
        if key in _BLOCK_SCALED:  # real tcgen05 kinds (CuTe's SM100_MMA_MX*), not modelled: say so, never imply none
            raise LayoutError(f"kind::{key} (CuTe's {_BLOCK_SCALED[key]}) is a block-scaled tcgen05.mma kind with "
                              "scale factors in tensor memory and its own instruction descriptor; it is not modelled "
                              "here, only tf32, f16 (bf16), i8 (s8) and f8f6f4 are")
        raise LayoutError(f"kind must be one of tf32, f16 (bf16), i8 (s8), f8f6f4; not {kind!r}")
    frag, ptx_kind, ab_ok, c_ok, default = KINDS[kkey]
    if ab_type is None:  # a kind named by a type (bf16, u8, e5m2, ...) takes that type
        named = SHORT.get(str(kind).strip().lower().removeprefix("kind::"))
        ab_type = named if named in ab_ok else default
    a_t, b_t = (ab_type if isinstance(ab_type, tuple | list) and len(ab_type) == 2 else (ab_type, ab_type))
    a_t, b_t, c_t = cute_type(a_t), cute_type(b_t), cute_type(c_type or c_ok[0])
    for what, t in (("A", a_t), ("B", b_t)):
        if t not in ab_ok:
            raise LayoutError(f"kind::{ptx_kind} takes A and B of {', '.join(ab_ok)}; {what} is {t}")
    if c_t not in c_ok:
        raise LayoutError(f"kind::{ptx_kind} accumulates in {' or '.join(c_ok)}, not {c_t}")
    if kkey == "f16" and a_t != b_t:
        raise LayoutError(f"kind::f16 needs A and B of one type (both half_t or both bfloat16_t), not {a_t} and {b_t}")
    if kkey == "f16" and c_t == "half_t" and a_t != "half_t":
        raise LayoutError("kind::f16 accumulates bfloat16_t inputs in float only (PTX ISA: f16 D needs f16 A and B)")
    a_major, b_major = str(a_major).upper(), str(b_major).upper()
    for what, mj in (("a_major", a_major), ("b_major", b_major)):
        if mj not in ("K", "MN"):
            raise LayoutError(f"{what} must be 'K' or 'MN', not {mj!r}")
    if a_source not in ("smem", "tmem"):
        raise LayoutError(f"a_source must be 'smem' (SS) or 'tmem' (TS), not {a_source!r}")
    if a_source == "tmem" and a_major != "K":
        raise LayoutError(f"SM100_MMA_{frag}_TS: A from TMEM can't be transposed (a_major must be K)")
    for what, mj, t in (("A", a_major, a_t), ("B", b_major, b_t)):
        if mj == "MN" and t not in _MN_MAJOR_OK:
            raise LayoutError(f"{what} of {t} must be K-major: MN-major is valid only for E4M3, E5M2, INT8, F16, BF16 "
                              "and TF32 (instruction descriptor, a_major / b_major)")
    if type(cta_group) is not int or cta_group not in (1, 2):
        raise LayoutError(f"cta_group must be 1 or 2, not {cta_group!r}")
    ms = (64, 128) if cta_group == 1 else (128, 256)
    name = f"SM100_MMA_{frag}_{'2x1SM_' if cta_group == 2 else ''}{'TS' if a_source == 'tmem' else 'SS'}"
    if type(m) is not int or m not in ms:
        raise LayoutError(f"{name}: M must be {ms[0]} or {ms[1]} for {cta_group} CTA{'s' if cta_group == 2 else ''}, "
                          f"not {m!r}")
    ns, rule = n_rule(kkey, m, cta_group, a_source, b_major)
    if type(n) is not int or n not in ns:
        by_b = kkey == "f8f6f4" and b_major == "MN" and a_source == "smem"  # only the SS traits read B's major
        raise LayoutError(f"{name} (M = {m}{', B MN-major' if by_b else ''}): N must be {rule}, not {n!r}")
    k = 32 if kkey == "f8f6f4" else 256 // TYPES[a_t][1]
    def tv(rows: int, cols: int) -> Layout:  # (CTA, value) -> column-major index of the rows x cols tile
        return Layout((cta_group, (rows // cta_group, cols)), (rows // 2 if cta_group == 2 else 0, (1, rows)))

    thr, a, b, c = Layout(cta_group), tv(m, k), tv(n, k), tv(m, n)
    desc = (C_FORMATS[c_t] << 4 | TYPES[a_t][2] << 7 | TYPES[b_t][2] << 10 | (a_major == "MN") << 15
            | (b_major == "MN") << 16 | (n >> 3) << 17 | (m >> 4) << 24)
    return UmmaAtom(name, kkey, (m, n, k), thr, a, b, c, (c_t, a_t, b_t, c_t), a_major, b_major, cta_group, a_source,
                    desc, f"tcgen05.mma.cta_group::{cta_group}.kind::{ptx_kind}")


#: (name, first bit, width) of ``UMMA::InstrDescriptor``
INSTR_FIELDS: tuple[tuple[str, int, int], ...] = (
    ("sparse_id2", 0, 2), ("sparse_flag", 2, 1), ("saturate", 3, 1), ("c_format", 4, 2), ("a_format", 7, 3),
    ("b_format", 10, 3), ("a_negate", 13, 1), ("b_negate", 14, 1), ("a_major", 15, 1), ("b_major", 16, 1),
    ("n_dim", 17, 6), ("m_dim", 24, 5), ("max_shift", 30, 2))
_FORMAT_NAMES = {"tf32": {0: "F16", 1: "BF16", 2: "TF32"}, "f16": {0: "F16", 1: "BF16", 2: "TF32"},
                 "i8": {0: "UINT8", 1: "INT8"}, "f8f6f4": {0: "E4M3", 1: "E5M2", 3: "E2M3", 4: "E3M2", 5: "E2M1"}}


def decode_instr_desc(value: int, kind: str | None = None) -> list[dict[str, Any]]:
    """Each field of a 32-bit tcgen05 instruction descriptor: name, bits, value and meaning (formats read for
    ``kind`` when given)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 32:
        raise LayoutError(f"instruction descriptor must be a 32-bit unsigned integer, not {value!r}")
    kkey = _KIND_ALIASES.get(str(kind).lower()) if kind else None
    out = []
    for name, lo, w in INSTR_FIELDS:
        v = (value >> lo) & ((1 << w) - 1)
        fmt = _FORMAT_NAMES[kkey].get(v, "undefined") if kkey else f"format code {v}"
        major = "MN-major" if v else "K-major"
        meaning = {"c_format": {0: "F16", 1: "F32", 2: "S32"}.get(v, "undefined"), "a_format": fmt, "b_format": fmt,
                   "a_major": major, "b_major": major, "n_dim": f"N = {v << 3}", "m_dim": f"M = {v << 4}",
                   "sparse_flag": "sparse" if v else "dense"}.get(name, "")
        out.append({"name": name, "bits": f"[{lo},{lo + w})", "value": v, "meaning": meaning})
    return out
