"""The descriptor doctor for Blackwell: a 64-bit UMMA shared-memory descriptor (``algebra.hw.sm100_smem``) decoded
into the canonical layout it implies, LBO and SBO shown on that layout, and a smem tile encoded into one; and the
tell-tale of each encoding, so that a pasted value is read as Hopper's or Blackwell's.

Hopper's wgmma descriptor keeps bits 46-48 and 52-61 reserved (zero) and its layout type in [62,64) (1 = 128B);
Blackwell's sets version = 1 in [46,48) and keeps the layout type in [61,64) (2 = 128B, 1 = 128B_BASE32B).
Checked against CuTe C++ (``make_umma_desc``) and the PTX ISA, not measured on hardware.
"""

from __future__ import annotations

from typing import Any

from algebra.core.errors import LayoutError
from algebra.hw import sm100_smem as U
from algebra.hw.hopper import swizzle_to_elements

#: UMMA layout type -> the Hopper layout type of the same swizzle (the canonical forms agree), None for BASE32B
TO_SM90 = {0: 0, 2: 1, 4: 2, 6: 3, 1: None}


def detect(value: int) -> str:
    """"sm100" when the version field (bits 46-47) is 1, the Blackwell mark; "sm90" otherwise."""
    return "sm100" if (value >> 46) & 3 == 1 else "sm90"


def canonical_layout(major: str, layout_type: int, element_bytes: int, mn: int, k: int, lbo: int, sbo: int) -> Any:
    """The element layout (MN x K) a UMMA descriptor implies (offsets from the start address)."""
    from algebra.core.layout import Layout
    from algebra.core.swizzle import ComposedLayout, Swizzle
    from algebra.doctor.solver_desc import canonical_layout as sm90_layout

    if layout_type not in U.LAYOUT_TYPES:
        raise LayoutError(f"layout_type {layout_type} is not defined (0 none, 1 128B_BASE32B, 2 128B, 4 64B, 6 32B)")
    if TO_SM90[layout_type] is not None:
        return sm90_layout(major, TO_SM90[layout_type], element_bytes, mn, k, lbo, sbo)
    if major != "MN":
        raise LayoutError("major: SWIZZLE_128B_BASE32B is an MN-major layout only (CuTe: make_umma_desc<Major::K> "
                          "refuses it)")
    t = 16 // element_bytes
    if mn % (8 * t) or k % 4:
        raise LayoutError(f"tile: MN-major 128B_BASE32B needs MN a multiple of {8 * t} and K a multiple of 4")
    lay = Layout(((t, 8, mn // (8 * t)), (4, k // 4)), ((1, t, lbo // element_bytes), (8 * t, sbo // element_bytes)))
    return ComposedLayout(Swizzle(*swizzle_to_elements((2, 5, 2), 8 * element_bytes)), 0, lay)


def explain(major: str, layout_type: int, element_bytes: int, lbo: int, sbo: int) -> list[dict[str, Any]]:
    """LBO and SBO in words, each with the two elements (MN, K) of the canonical layout whose offsets they separate
    (the page draws an arrow between them)."""
    t = 16 // element_bytes
    w = U.LAYOUT_GEOMETRY[layout_type][0]
    name = U.LAYOUT_TYPES[layout_type]
    if major == "K":
        out = [{"field": "SBO", "bytes": sbo, "from": [0, 0], "to": [8, 0],
                "text": f"SBO = {sbo} B: from one group of 8 rows (MN) to the next, e.g. row 0 to row 8 of the same "
                        f"column. Each row of a group is {16 * w} B long ({name}), so a dense tile has SBO = "
                        f"{8 * 16 * w} B."}]
        if layout_type == 0:
            out.append({"field": "LBO", "bytes": lbo, "from": [0, 0], "to": [0, t],
                        "text": f"LBO = {lbo} B: from one 8x16-byte core matrix to the next along K (element "
                                f"column 0 to column {t})."})
        else:
            out.append({"field": "LBO", "bytes": lbo, "from": None, "to": None,
                        "text": f"LBO = {lbo} B is not used for a swizzled K-major layout: the whole K extent of one "
                                f"MMA lies inside the {16 * w}-byte swizzle row (CuTe writes 1, i.e. 16 B)."})
        return out
    kz = 4 if layout_type == 1 else 8
    if layout_type == 0:
        return [{"field": "LBO", "bytes": lbo, "from": [0, 0], "to": [0, 8],
                 "text": f"LBO = {lbo} B: from one group of 8 K-rows to the next (element K 0 to K 8)."},
                {"field": "SBO", "bytes": sbo, "from": [0, 0], "to": [t, 0],
                 "text": f"SBO = {sbo} B: from one 16-byte column of {t} MN elements to the next (MN 0 to MN {t})."}]
    return [{"field": "LBO", "bytes": lbo, "from": [0, 0], "to": [w * t, 0],
             "text": f"LBO = {lbo} B: from one swizzle atom to the next along MN (MN 0 to MN {w * t}); the atom is "
                     f"{16 * w} B = {w * t} elements of MN wide."},
            {"field": "SBO", "bytes": sbo, "from": [0, 0], "to": [0, kz],
             "text": f"SBO = {sbo} B: from one group of {kz} K-rows to the next (K 0 to K {kz}); a dense atom has "
                     f"SBO = {kz * 16 * w} B."}]


def decode(value: int, element_bytes: int = 2, major: str = "K", mn: int = 64, k: int | None = None,
           tile: str | None = None) -> dict[str, Any]:
    """Every field of a UMMA descriptor, the canonical layout it implies for an MN x K operand (K defaults to one
    MMA K-block of 32 bytes), its drawing, LBO / SBO explained, and the checks."""
    from algebra.core.layout import offsets
    from algebra.doctor.solver_desc import MAX_MN, _compare_tile, _grid

    major = str(major).upper()
    if element_bytes not in (1, 2, 4):
        raise LayoutError("element_bytes: UMMA operands in shared memory are 1, 2 or 4 bytes")
    k = k or 32 // element_bytes
    if not 1 <= mn <= MAX_MN or not 1 <= k <= MAX_MN:
        raise LayoutError(f"mn: MN and K must be in [1, {MAX_MN}]")
    d = U.decode_umma_desc(value)
    checks: list[dict[str, Any]] = []

    def check(rule: str, ok: bool, text: str) -> None:
        checks.append({"rule": rule, "ok": bool(ok), "text": text})

    check("reserved_bits", not d["reserved_bits"], "reserved bits are zero" if not d["reserved_bits"] else
          f"reserved bits set: 0x{d['reserved_bits']:016x} (bits 14-15, 30-31, 48, 53-60 must be 0)")
    check("version", d["version"] == 1, f"version = {d['version']}: Blackwell descriptors carry 1 in bits 46-47"
          + ("" if d["version"] == 1 else " (a value with 0 there is likely Hopper's wgmma descriptor)"))
    lt = d["layout_type"]
    if lt not in U.LAYOUT_TYPES:
        raise LayoutError(f"descriptor: layout type {lt} (bits 61-63) is not defined; 0 none, 1 128B_BASE32B, 2 128B, "
                          "4 64B, 6 32B")
    check("lbo_mode", d["lbo_mode"] == 0, "LBO mode 0 (legacy: LBO in bytes >> 4), as CuTe writes it" if not
          d["lbo_mode"] else "LBO mode 1: CuTe's make_umma_desc always writes 0")
    lbo, sbo = d["leading_byte_offset"], d["stride_byte_offset"]
    lay = canonical_layout(major, lt, element_bytes, mn, k, lbo, sbo)
    offs = offsets(lay)
    check("no_overlap", len(set(offs)) == len(offs), "every element has its own address" if len(set(offs)) ==
          len(offs) else "two elements share an address: SBO / LBO are smaller than the core matrices they separate")
    if tile:
        m = _compare_tile(tile, lay, mn, k)
        check("tile", m["ok"], m["text"])
    span = U.LAYOUT_GEOMETRY[lt][2]
    core = (8, 16 // element_bytes) if major == "K" else (16 // element_bytes, 8)
    fields = [{"name": n, "bits": f"[{lo},{lo + w})", "value": d[n], "encoded": d["encoded"][n],
               **({"meaning": d["layout_type_name"]} if n == "layout_type" else {})} for n, lo, w, _ in U.FIELDS]
    return {"arch": "sm100", "encoding": "Blackwell UMMA shared-memory descriptor (tcgen05.mma)",
            "value": d["value"], "fields": fields, "span_bytes": span, "swizzle": d["layout_type_name"],
            "major": major, "element_bytes": element_bytes, "mn": mn, "k": k, "layout": str(lay), "checks": checks,
            "valid": all(c["ok"] for c in checks), "grid": _grid(lay, mn, k, element_bytes, core),
            "repeat_bytes": 8 * span if lt else 16, "explain": explain(major, lt, element_bytes, lbo, sbo)}


def decode_any(descriptor: Any, element_bytes: int = 2, major: str = "K", mn: int = 64, k: int | None = None,
               tile: str | None = None, arch: str = "sm90") -> dict[str, Any]:
    """The descriptor doctor for either encoding: ``arch`` "sm90" (Hopper's wgmma descriptor,
    ``solver_desc.decode``), "sm100" (Blackwell's UMMA descriptor) or "auto" (Blackwell when bits 46-47 hold 1).
    The answer's ``arch`` and ``encoding`` say which it was read as."""
    from algebra.doctor import solver_desc

    if arch not in ("sm90", "sm100", "auto"):
        raise LayoutError(f"arch: sm90, sm100 or auto, not {arch!r}")
    value = solver_desc.parse_descriptor(descriptor)
    if arch == "sm100" or (arch == "auto" and detect(value) == "sm100"):
        return decode(value, element_bytes, major, mn, k, tile)
    return solver_desc.decode(value, element_bytes, major, mn, k, tile)


def encode_any(tile: str, element_bytes: int = 2, major: str = "K", start_address: int = 0,
               arch: str = "sm90") -> dict[str, Any]:
    """The descriptor of a smem tile for ``arch`` "sm90" (``make_gmma_desc``) or "sm100" (``make_umma_desc``)."""
    from algebra.doctor import solver_desc

    if arch == "sm100":
        return encode(tile, element_bytes, major, start_address)
    if arch != "sm90":
        raise LayoutError(f"arch: sm90 or sm100, not {arch!r}")
    return solver_desc.encode(tile, element_bytes, major, start_address)


def encode(tile: str, element_bytes: int = 2, major: str = "K", start_address: int = 0) -> dict[str, Any]:
    """The UMMA descriptor of a smem tile (MN x K; CuTe's print or element units), as ``make_umma_desc`` builds it,
    decoded again on the tile's first MMA K-block (LayoutError naming the canonical-form rule when it is none)."""
    if element_bytes not in (1, 2, 4):
        raise LayoutError("element_bytes: UMMA operands in shared memory are 1, 2 or 4 bytes")
    from algebra.core.inttuple import product
    from algebra.core.notation import parse

    try:
        value = U.umma_desc(tile, 8 * element_bytes, major, start_address)
    except LayoutError as exc:
        raise LayoutError(f"tile: {exc}") from None
    t = parse(tile)
    shp = t.shape if isinstance(t.shape, tuple) else ()
    mn = product(shp[0]) if len(shp) == 2 else 64
    ktot = product(shp[1]) if len(shp) == 2 else 32 // element_bytes
    k = min(ktot, 32 // element_bytes) if str(major).upper() == "K" else min(ktot, 8 if ktot >= 8 else ktot)
    out = decode(value, element_bytes, major, min(mn, 256), k, tile=str(t))
    out["encoded_from"] = tile
    if not out["valid"]:
        bad = next(c for c in out["checks"] if not c["ok"])
        raise LayoutError(f"tile: not a canonical UMMA {major}-major layout: {bad['text']}")
    return out
