"""Blackwell (SM100) UMMA shared-memory descriptors and the canonical smem layout atoms, exact to CuTe C++
(``cute/arch/mma_sm100_desc.hpp``: ``union SmemDescriptor``; ``cute/atom/mma_traits_sm100.hpp``:
``UMMA::make_umma_desc<Major>``, ``UMMA::Layout_*_Atom``) and the PTX ISA (tcgen05 "Shared memory descriptor").
Checked against CuTe C++ host programs, not measured on hardware.

The 64-bit descriptor's bit fields: :data:`FIELDS` (version 1 on Blackwell); its layout types: :data:`LAYOUT_TYPES`.

Canonical layouts, in 16-byte units (T = 128 / element_bits elements per unit), as ``make_umma_desc`` reads them
after ``logical_divide`` by (W, 2) (K-major) or (W, 8) (MN-major), W = 1, 2, 4, 8 units for none / 32B / 64B / 128B:

* K-major:  none ``((8,m),2):((1,SBO),LBO)``; swizzled ``Sw o ((8,m),2):((W,SBO),1)`` (LBO = 1, unused)
* MN-major: none ``((1,n),(8,k)):((X,SBO),(1,LBO))``; swizzled ``Sw o ((W,n),(8,k)):((1,LBO),(W,SBO))``;
  128B_BASE32B ``Sw<2,5,2> o ((8,n),(4,k)):((1,LBO),(8,SBO))`` (MN-major only)
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from algebra.core.errors import LayoutError
from algebra.core.inttuple import flatten
from algebra.core.layout import Layout
from algebra.core.notation import parse
from algebra.core.products import tile_to_shape
from algebra.core.swizzle import ComposedLayout, Swizzle
from algebra.hw import hopper

#: layout type code -> name (``UMMA::LayoutType``)
LAYOUT_TYPES: dict[int, str] = {0: "SWIZZLE_NONE", 1: "SWIZZLE_128B_BASE32B", 2: "SWIZZLE_128B", 4: "SWIZZLE_64B",
                                6: "SWIZZLE_32B"}
#: layout type -> (swizzle atom width along MN in 16-byte units, byte swizzle (B, M, S), span in bytes)
LAYOUT_GEOMETRY: dict[int, tuple[int, tuple[int, int, int], int]] = {
    0: (1, (0, 4, 3), 16), 6: (2, (1, 4, 3), 32), 4: (4, (2, 4, 3), 64), 2: (8, (3, 4, 3), 128),
    1: (8, (2, 5, 2), 128)}
#: (name, first bit, width, unit in bytes)
FIELDS: tuple[tuple[str, int, int, int], ...] = (
    ("start_address", 0, 14, 16), ("leading_byte_offset", 16, 14, 16), ("stride_byte_offset", 32, 14, 16),
    ("version", 46, 2, 1), ("base_offset", 49, 3, 1), ("lbo_mode", 52, 1, 1), ("layout_type", 61, 3, 1))
RESERVED_MASK = ((1 << 64) - 1) & ~sum(((1 << w) - 1) << lo for _, lo, w, _ in FIELDS)


def layout_type_of(byte_swizzle: tuple[int, int, int] | None) -> int:
    """The descriptor's layout type for a swizzle on byte addresses (CuTe's ``UMMA::layout_type``): Sw<B,4,3> with
    B = 0..3 -> none / 32B / 64B / 128B, Sw<2,5,2> -> 128B_BASE32B; any other swizzle is refused with the rule."""
    if byte_swizzle is None or byte_swizzle[0] == 0:
        return 0
    for lt, (_, bms, _) in LAYOUT_GEOMETRY.items():
        if bms == tuple(byte_swizzle):
            return lt
    raise LayoutError("Sw<{},{},{}> on byte addresses is not a UMMA swizzle: UMMA takes Sw<B,4,3> (B = 0, 1, 2, 3: "
                      "none, 32B, 64B, 128B) or Sw<2,5,2> (128B_BASE32B)".format(*byte_swizzle))


def _split(layout: Any, element_bits: int) -> tuple[Layout, tuple[int, int, int] | None]:
    """(inner element layout, byte swizzle or None) of a layout given as text (CuTe's print with ``smem_ptr[Nb]``,
    or element units), a Layout or a ComposedLayout."""
    if isinstance(layout, str):
        m = re.search(r"smem_ptr\[(\d+)b\]", layout)
        if m and int(m.group(1)) != element_bits:
            raise LayoutError(f"layout: the layout is printed for {m.group(1)}-bit elements (smem_ptr[{m.group(1)}b]), "
                              f"not {element_bits}-bit")
        try:
            layout = parse(layout)
        except LayoutError as exc:
            raise LayoutError(f"layout: {exc}") from None
    if isinstance(layout, Layout):
        return layout, None
    if isinstance(layout, ComposedLayout) and isinstance(layout.layout_a, Swizzle):
        if layout.offset:
            raise LayoutError(f"layout: give the layout at offset 0 (the descriptor's start address is the tensor's "
                              f"address), not {layout.offset}")
        sw = layout.layout_a
        if sw.bits == 0:
            return layout.layout_b, None
        return layout.layout_b, hopper.swizzle_to_bytes((sw.bits, sw.base, sw.shift), element_bits)
    raise LayoutError("layout: give a Layout or Sw<B,M,S> o Layout")


def _canonical(layout: Any, element_bits: int, major: str) -> tuple[int, int, int]:
    """``make_umma_desc``'s reading of the layout: (layout type, LBO, SBO in 16-byte units), through
    :func:`algebra.hw.hopper.canonical_strides`. LayoutError names the canonical-form rule that fails."""
    major = str(major).upper().replace(" ", "").removeprefix("CUTE::").removeprefix("UMMA::").removeprefix("MAJOR::")
    if major not in ("K", "MN"):
        raise LayoutError(f"major must be 'K' or 'MN', not {major!r}")
    if type(element_bits) is not int or element_bits not in (4, 8, 16, 32, 64):
        raise LayoutError(f"element_bits must be 4, 8, 16, 32 or 64, not {element_bits!r}")
    inner, bsw = _split(layout, element_bits)
    lt = layout_type_of(bsw)
    if len(inner) != 2 or not isinstance(inner.shape, tuple):
        raise LayoutError(f"UMMA descriptors describe rank-2 (MN, K) layouts; {inner} has rank {len(inner)}")
    if not all(isinstance(d, int) for d in flatten(inner.stride)):
        raise LayoutError("layout: strides must be integers (offsets in shared memory)")
    if major == "K" and lt == 1:
        raise LayoutError("SWIZZLE_128B_BASE32B is invalid for Major-K (CuTe: make_umma_desc<Major::K>)")
    _, lbo, sbo = hopper.canonical_strides(inner, element_bits, major, LAYOUT_GEOMETRY[lt][0], LAYOUT_TYPES[lt],
                                           lt != 0, "UMMA", 4 if lt == 1 else 8)
    for what, v in (("LBO", lbo), ("SBO", sbo)):
        if not 0 <= v < 1 << 14:
            raise LayoutError(f"{what} = {v} x 16 bytes does not fit the 14-bit field of the descriptor")
    return lt, lbo, sbo


def umma_desc(layout: Any, element_bits: int, major: str = "K", start_address: int = 0) -> int:
    """The 64-bit UMMA shared-memory descriptor of ``layout`` (an MN x K smem layout: CuTe's print
    ``Sw<3,4,3> o smem_ptr[16b](unset) o ...``, element units ``Sw<3,3,3> o ...``, a Layout or ComposedLayout),
    equal to ``UMMA::make_umma_desc<Major>`` on a tensor at shared-memory address ``start_address`` (default 0).

    Post-condition: ``decode_umma_desc(d)`` gives back the start address, LBO and SBO (bytes), version 1, base
    offset 0, LBO mode 0 and the layout type. A layout that is not canonical raises LayoutError naming the rule.
    """
    if not isinstance(start_address, int) or start_address < 0 or start_address % 16 or start_address >= 1 << 18:
        raise LayoutError(f"start_address must be a multiple of 16 below 2^18, not {start_address!r}")
    lt, lbo, sbo = _canonical(layout, element_bits, major)
    return encode_fields(start_address, 16 * lbo, 16 * sbo, lt)  # FIELDS: version 1, base offset 0, LBO mode 0


def decode_umma_desc(d: int) -> dict[str, Any]:
    """Every field of a 64-bit UMMA smem descriptor: ``start_address``, ``leading_byte_offset`` and
    ``stride_byte_offset`` in bytes (the field times 16), ``version``, ``base_offset``, ``lbo_mode``, ``layout_type``
    (the code), with ``layout_type_name``, the raw field values under ``encoded`` and any set reserved bits."""
    if isinstance(d, str):
        try:
            d = int(d.strip().lower().removesuffix("ull").removesuffix("ul"), 0)
        except ValueError:
            raise LayoutError(f"descriptor {d[:40]!r} is not a hex or decimal 64-bit value") from None
    if isinstance(d, bool) or not isinstance(d, int) or not 0 <= d < 1 << 64:
        raise LayoutError(f"descriptor must be a 64-bit unsigned integer, not {d!r}")
    enc = {name: (d >> lo) & ((1 << w) - 1) for name, lo, w, _ in FIELDS}
    out: dict[str, Any] = {name: enc[name] * unit for name, _, _, unit in FIELDS}
    out["layout_type_name"] = LAYOUT_TYPES.get(enc["layout_type"], f"undefined ({enc['layout_type']})")
    out["encoded"] = enc
    out["reserved_bits"] = d & RESERVED_MASK
    out["value"] = f"0x{d:016x}"
    return out


def encode_fields(start_address: int, leading_byte_offset: int, stride_byte_offset: int, layout_type: int,
                  base_offset: int = 0, lbo_mode: int = 0, version: int = 1) -> int:
    """The inverse of :func:`decode_umma_desc` (byte quantities, multiples of 16)."""
    vals = {"start_address": start_address, "leading_byte_offset": leading_byte_offset,
            "stride_byte_offset": stride_byte_offset, "version": version, "base_offset": base_offset,
            "lbo_mode": lbo_mode, "layout_type": layout_type}
    if layout_type not in LAYOUT_TYPES:
        raise LayoutError(f"layout_type must be one of {sorted(LAYOUT_TYPES)} ({', '.join(LAYOUT_TYPES.values())})")
    out = 0
    for name, lo, w, unit in FIELDS:
        v = vals[name]
        if not isinstance(v, int) or v < 0 or v % unit or v // unit >= 1 << w:
            raise LayoutError(f"{name} = {v!r} must be a non-negative multiple of {unit} that fits {w} bits"
                              + (" (>> 4)" if unit == 16 else ""))
        out |= (v // unit) << lo
    return out


# --------------------------------------------------------------------------- canonical smem layout atoms

def umma_smem_atom(name: str, element_bits: int) -> hopper.SmemAtom:
    """``UMMA::Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom<T>`` (CuTe reuses GMMA's) and
    ``UMMA::Layout_MN_SW128_32B_Atom<T>`` = ``upcast<bits>(Sw<2,5,2> o (1024,4):(1,1024))``, T of ``element_bits``."""
    core = name.strip().removeprefix("cute::").removeprefix("UMMA::").removeprefix("SM100::")
    core = core.split("<")[0]
    if core == "Layout_MN_SW128_32B_Atom":
        atom = hopper.smem_atom("MN", 128, element_bits)  # the SW128 MN atom's 1024 bits by 4 rows, not 8
        return replace(atom, name=core, shape=(atom.shape[0], 4), byte_swizzle=(2, 5, 2),
                       element_swizzle=hopper.swizzle_to_elements((2, 5, 2), element_bits))
    parts = core.split("_")
    if len(parts) != 4 or parts[0] != "Layout" or parts[3] != "Atom" or parts[2] not in hopper.SWIZZLE_SPANS:
        raise LayoutError(f"unknown UMMA smem atom {name!r}: Layout_<K|MN>_<INTER|SW32|SW64|SW128>_Atom or "
                          "Layout_MN_SW128_32B_Atom")
    return hopper.smem_atom(parts[1], hopper.SWIZZLE_SPANS[parts[2]], element_bits)


def tile_atom(atom: hopper.SmemAtom, mn: int, k: int) -> Any:
    """``tile_to_shape(atom, (mn, k))`` in element units, the swizzle kept (a ComposedLayout, or a Layout for INTER)."""
    if mn % atom.shape[0] or k % atom.shape[1]:
        raise LayoutError(f"tile {mn}x{k} is not a multiple of {atom.name}'s {atom.shape[0]}x{atom.shape[1]} elements")
    return tile_to_shape(atom.layout, (mn, k))  # the swizzle stays outside; CuTe drops an identity one
