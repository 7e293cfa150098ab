"""The descriptor doctor: a 64-bit shared-memory matrix descriptor, Hopper's wgmma or Blackwell's UMMA, decoded into
the canonical layout it implies (and encoded back from a smem layout), and the arguments of ``cuTensorMapEncodeTiled``
checked and drawn.

Canonical layouts (CUTLASS ``cute/atom/mma_traits_sm90_gmma.hpp``, comment above ``make_gmma_desc``), in units of
elements with T = 16 / element_bytes (one 16-byte row of a core matrix) and w = span / 16:

* K-major:  INTERLEAVE ``((8,m),(T,2k)):((1T,SBO),(1,LBO))``; swizzled ``Sw o ((8,m),(T,2k)):((wT,SBO),(1,T))``
* MN-major: INTERLEAVE ``((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))``; swizzled ``Sw o ((T,w,m),(8,k)):((1,T,LBO),(wT,SBO))``

where the swizzle is ``Sw<B,4,3>`` on bytes (B = 1, 2, 3 for 32/64/128B). Bit fields (``mma_sm90_desc.hpp``,
``union GmmaDescriptor``): start address [0,14), LBO [16,30), SBO [32,46) (all >> 4), base offset [49,52), layout
type [62,64) (0 none, 1 128B, 2 64B, 3 32B); every other bit is reserved (zero).

Blackwell's UMMA descriptor (``algebra.hw.sm100_smem``, CuTe's ``make_umma_desc``) reads the same canonical layouts
plus MN-major ``SWIZZLE_128B_BASE32B``; it sets version = 1 in [46,48) (Hopper keeps bits 46-48 reserved, which is how
a pasted value is told apart) and keeps the layout type in [61,64) (2 = 128B, 1 = 128B_BASE32B). Checked against
CuTe C++ and the PTX ISA, not measured on hardware.
"""

from __future__ import annotations

import math
from typing import Any

from algebra.core import inttuple as it
from algebra.core.errors import LayoutError
from algebra.core.layout import Layout, offsets
from algebra.core.notation import parse
from algebra.core.swizzle import ComposedLayout, Swizzle
from algebra.doctor.solver_explain import hardware_swizzle
from algebra.hw import hopper
from algebra.hw import sm100_smem as U
from algebra.hw.bankfix import swizzle_fn

SPAN_OF_TYPE = {code: span for span, (_, _, code) in hopper.SWIZZLE_KINDS.items()}
RESERVED_MASK = ((1 << 64) - 1) & ~sum(((1 << w) - 1) << lo for _, lo, w, _ in hopper.DESCRIPTOR_FIELDS)
MAX_MN = 256
#: UMMA layout type -> the Hopper layout type of the same swizzle (the canonical forms agree), None for BASE32B
TO_SM90 = {0: 0, 2: 1, 4: 2, 6: 3, 1: None}
#: what each architecture calls the MMA that reads the operand
OPERANDS = {"sm90": "wgmma", "sm100": "UMMA"}


def parse_descriptor(text: Any) -> int:
    """``"0x4000004000010000"``, a decimal string or an int -> the 64-bit value (LayoutError naming ``descriptor``)."""
    if isinstance(text, int) and not isinstance(text, bool):
        v = text
    else:
        s = str(text or "").strip().lower().replace("_", "").replace("'", "").removesuffix("ull").removesuffix("ul")
        try:
            v = int(s, 0) if s.startswith(("0x", "0b", "0o")) else int(s, 10) if s.isdecimal() else int(s, 16)
        except ValueError:
            raise LayoutError(f"descriptor: {str(text)[:40]!r} is not a hex or decimal 64-bit value") from None
    if not 0 <= v < 1 << 64:
        raise LayoutError("descriptor: the value does not fit in 64 bits")
    return v


def _is_sm100(value: int) -> bool:
    """True when the version field (bits 46-47) is 1, Blackwell's mark."""
    return (value >> 46) & 3 == 1


def _check_element_bytes(element_bytes: int, arch: str) -> None:
    if element_bytes not in (1, 2, 4):
        raise LayoutError(f"element_bytes: {OPERANDS[arch]} operands in shared memory are 1, 2 or 4 bytes")


def _parse_tile(tile: str) -> Any:
    try:
        return parse(tile)
    except (LayoutError, ValueError) as exc:
        raise LayoutError(f"tile: {exc}") from None


def canonical_layout(major: str, layout_type: int, element_bytes: int, mn: int, k: int, lbo: int, sbo: int,
                     arch: str = "sm90") -> Any:
    """The element layout (MN x K) a descriptor of ``arch`` implies, the swizzle composed on (offsets relative to
    the start)."""
    _check_element_bytes(element_bytes, "sm90")
    t = 16 // element_bytes
    if arch == "sm100":
        if layout_type not in U.LAYOUT_TYPES:
            raise LayoutError(f"layout_type {layout_type} is not defined (0 none, 1 128B_BASE32B, 2 128B, 4 64B, "
                              "6 32B)")
        if TO_SM90[layout_type] is None:
            if major != "MN":
                raise LayoutError("major: SWIZZLE_128B_BASE32B is an MN-major layout only (CuTe: "
                                  "make_umma_desc<Major::K> refuses it)")
            if mn % (8 * t) or k % 4:
                raise LayoutError(f"tile: MN-major 128B_BASE32B needs MN a multiple of {8 * t} and K a multiple of 4")
            lay = Layout(((t, 8, mn // (8 * t)), (4, k // 4)),
                         ((1, t, lbo // element_bytes), (8 * t, sbo // element_bytes)))
            return ComposedLayout(Swizzle(*hopper.swizzle_to_elements((2, 5, 2), 8 * element_bytes)), 0, lay)
        layout_type = TO_SM90[layout_type]
    span = SPAN_OF_TYPE[layout_type]
    w = span // 16
    lbo_e, sbo_e = lbo // element_bytes, sbo // element_bytes
    if major == "K":
        if mn % 8 or (k * element_bytes) % 16:
            raise LayoutError(f"tile: K-major needs MN a multiple of 8 and K a multiple of {t} elements")
        shape = ((8, mn // 8), (t, k // t))
        stride = ((t, sbo_e), (1, lbo_e)) if layout_type == 0 else ((w * t, sbo_e), (1, t))
        if layout_type and k // t > w:
            raise LayoutError(f"tile: K = {k} elements spans {k * element_bytes} bytes, more than the {span}-byte "
                              f"swizzle atom (one {'tcgen05.mma' if arch == 'sm100' else 'wgmma'} reads 32 bytes of K)")
    elif major == "MN":
        if mn % (w * t) or k % 8:
            raise LayoutError(f"tile: MN-major {span}B needs MN a multiple of {w * t} and K a multiple of 8")
        shape = ((t, w, mn // (w * t)), (8, k // 8))
        stride = ((1, t, sbo_e), (t, lbo_e)) if layout_type == 0 else ((1, t, lbo_e), (w * t, sbo_e))
    else:
        raise LayoutError(f"major: K or MN, not {major!r}")
    lay = Layout(shape, stride)
    if layout_type == 0:
        return lay
    b = hopper.SWIZZLE_KINDS[span][1]
    return ComposedLayout(Swizzle(*hopper.swizzle_to_elements((b, 4, 3), 8 * element_bytes)), 0, lay)


def explain(major: str, layout_type: int, element_bytes: int, lbo: int, sbo: int) -> list[dict[str, Any]]:
    """LBO and SBO of a UMMA descriptor in words, each with the two elements (MN, K) of the canonical layout whose
    offsets they separate (the page draws an arrow between them)."""
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


def _grid(lay: Any, mn: int, k: int, element_bytes: int, major: str) -> dict[str, Any]:
    """Per element (i, j): its byte offset and the core matrix (8 x 16 B) it belongs to, for drawing."""
    rows = [[lay((i, j)) * element_bytes for j in range(k)] for i in range(mn)]
    cr, cc = (8, 16 // element_bytes) if major == "K" else (16 // element_bytes, 8)
    ids = [[(i // cr) + (mn // cr) * (j // cc) for j in range(k)] for i in range(mn)]
    return {"rows": mn, "cols": k, "bytes": rows, "core": ids}


def _sm90_fields(value: int, major: str, element_bytes: int, mn: int, k: int, check: Any) -> tuple[dict, Any, dict]:
    """Hopper's fields and checks: (the answer's head, the canonical layout, its extras)."""
    d = hopper.decode_gmma_descriptor(value & ~RESERVED_MASK)
    span = SPAN_OF_TYPE[d.layout_type]
    check("reserved_bits", not value & RESERVED_MASK,
          "reserved bits are zero" if not value & RESERVED_MASK else
          f"reserved bits set: 0x{value & RESERVED_MASK:016x} (bits 14-15, 30-31, 46-48, 52-61 must be 0)"
          + ("; bits 46-47 = 1 is Blackwell's version mark: decode it as an SM100 UMMA descriptor"
             if _is_sm100(value) else ""))
    repeat = 8 * span
    if d.layout_type:
        want = (d.start_address >> 7) & 7 if d.start_address % repeat else 0
        check("base_offset", d.base_offset == want,
              f"start address {d.start_address} is {'not ' if d.start_address % repeat else ''}aligned to the "
              f"{repeat}-byte swizzle repeat: base_offset should be {want} (PTX: (start >> 7) & 7), it is "
              f"{d.base_offset}")
    if major == "K" and d.layout_type:
        check("lbo_unused", d.leading_byte_offset == 16,
              f"LBO = {d.leading_byte_offset} B is ignored for swizzled K-major layouts; CUTLASS writes 1 (16 B)")
    lay = canonical_layout(major, d.layout_type, element_bytes, mn, k, d.leading_byte_offset, d.stride_byte_offset)
    head = {"encoding": "Hopper wgmma shared-memory descriptor", "value": f"0x{value:016x}", "fields": d.fields(),
            "span_bytes": span, "swizzle": hopper.LAYOUT_TYPE_NAMES[d.layout_type]}
    return head, lay, {}


def _sm100_fields(value: int, major: str, element_bytes: int, mn: int, k: int, check: Any) -> tuple[dict, Any, dict]:
    """Blackwell's fields and checks, as :func:`_sm90_fields`; the extras explain LBO and SBO."""
    d = U.decode_umma_desc(value)
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
    lay = canonical_layout(major, lt, element_bytes, mn, k, lbo, sbo, arch="sm100")
    head = {"encoding": "Blackwell UMMA shared-memory descriptor (tcgen05.mma)", "value": d["value"],
            "fields": hopper.field_rows(U.FIELDS, d, d["layout_type_name"]), "span_bytes": U.LAYOUT_GEOMETRY[lt][2],
            "swizzle": d["layout_type_name"]}
    return head, lay, {"explain": explain(major, lt, element_bytes, lbo, sbo)}


def decode(descriptor: Any, element_bytes: int = 2, major: str = "K", mn: int = 64, k: int | None = None,
           tile: str | None = None, arch: str = "sm90") -> dict[str, Any]:
    """Every field, the canonical layout it implies for an MN x K operand (K defaults to one MMA K-block of 32
    bytes), its drawing, and the checks (reserved bits, alignment, base offset, overlap, the tile's layout).

    ``arch``: "sm90" (Hopper's wgmma descriptor), "sm100" (Blackwell's UMMA descriptor, with LBO / SBO explained
    under ``explain``) or "auto" (Blackwell when bits 46-47 hold 1); the answer's ``arch`` and ``encoding`` say which
    it was read as."""
    if arch not in ("sm90", "sm100", "auto"):
        raise LayoutError(f"arch: sm90, sm100 or auto, not {arch!r}")
    value = parse_descriptor(descriptor)
    if arch == "auto":
        arch = "sm100" if _is_sm100(value) else "sm90"
    major = str(major).upper()
    _check_element_bytes(element_bytes, arch)
    k = k or 32 // element_bytes
    if not 1 <= mn <= MAX_MN or not 1 <= k <= MAX_MN:
        raise LayoutError(f"mn: MN and K must be in [1, {MAX_MN}]")
    checks: list[dict[str, Any]] = []

    def check(rule: str, ok: bool, text: str) -> None:
        checks.append({"rule": rule, "ok": bool(ok), "text": text})

    fields = _sm100_fields if arch == "sm100" else _sm90_fields
    head, lay, extra = fields(value, major, element_bytes, mn, k, check)
    offs = offsets(lay)
    check("no_overlap", len(set(offs)) == len(offs),
          "every element has its own address" if len(set(offs)) == len(offs) else
          "two elements share an address: SBO / LBO are smaller than the core matrices they separate")
    if tile:
        match = _compare_tile(tile, lay, mn, k)
        check("tile", match["ok"], match["text"])
    span = head["span_bytes"]
    return {"arch": arch, **head, "major": major, "element_bytes": element_bytes, "mn": mn, "k": k,
            "layout": str(lay), "checks": checks, "valid": all(c["ok"] for c in checks),
            "grid": _grid(lay, mn, k, element_bytes, major), "repeat_bytes": 8 * span if span > 16 else 16, **extra}


def _compare_tile(tile: str, lay: Any, mn: int, k: int) -> dict[str, Any]:
    t = _parse_tile(tile)
    for j in range(k):
        for i in range(mn):
            try:
                a = t((i, j))
            except (LayoutError, ValueError, IndexError, TypeError):
                return {"ok": False, "text": f"the tile {t} has no element ({i}, {j}) of the {mn}x{k} operand"}
            if a != lay((i, j)):
                return {"ok": False, "text": f"the tile puts ({i}, {j}) at offset {a}, the descriptor at {lay((i, j))}"}
    return {"ok": True, "text": f"the tile {t} equals the descriptor's layout on the {mn}x{k} operand"}


def encode(tile: str, element_bytes: int = 2, major: str = "K", start_address: int = 0, k: int | None = None,
           arch: str = "sm90") -> dict[str, Any]:
    """The descriptor of a smem tile (CuTe notation, MN x K in elements, optionally ``Sw<..> o``) for ``arch``
    "sm90" (``make_gmma_desc``) or "sm100" (``make_umma_desc``, :func:`_encode_sm100`): the swizzle gives the layout
    type, the strides between core matrices give LBO / SBO; the result is checked by decoding it and comparing the
    implied layout with the tile on the first K-block (LayoutError when it is not canonical)."""
    if arch == "sm100":
        return _encode_sm100(tile, element_bytes, major, start_address)
    if arch != "sm90":
        raise LayoutError(f"arch: sm90 or sm100, not {arch!r}")
    major = str(major).upper()
    _check_element_bytes(element_bytes, arch)
    t = _parse_tile(tile)
    sw = getattr(t, "layout_a", None)
    inner = getattr(t, "layout_b", t)
    if not isinstance(inner, Layout) or getattr(t, "offset", 0):
        raise LayoutError("tile: give a layout or Sw<B,M,S> o layout (no offset)")
    if sw is not None and not isinstance(sw, Swizzle):
        raise LayoutError(f"tile: {t} composes two layouts; give a layout or Sw<B,M,S> o layout")
    if not all(isinstance(d, int) for d in it.flatten(inner.stride)):
        raise LayoutError("tile: strides must be integers (a basis-stride layout maps to coordinates, not offsets)")
    span = hardware_swizzle((sw.bits, sw.base, sw.shift) if sw is not None else None, element_bytes)
    if span is None:
        raise LayoutError(f"tile: {sw} is not a wgmma swizzle for {element_bytes}-byte elements (32/64/128B are "
                          f"Sw<1..3,{4 - (element_bytes.bit_length() - 1)},3>)")
    layout_type = hopper.SWIZZLE_KINDS[span][2]
    shp = inner.shape
    if not it.is_tuple(shp) or len(shp) != 2:
        raise LayoutError("tile: give a rank-2 (MN, K) layout")
    mn, ktot = it.product(shp[0]), it.product(shp[1])
    k = k or min(ktot, 32 // element_bytes)
    te = 16 // element_bytes
    w = span // 16

    def at(i: int, j: int) -> int:
        return inner((i, j)) * element_bytes

    if major == "K":
        sbo = at(8, 0) - at(0, 0) if mn > 8 else 0
        lbo = at(0, te) - at(0, 0) if layout_type == 0 and k > te else 16
    else:
        blk = w * te
        far = at(blk, 0) - at(0, 0) if mn > blk else 0
        kk = at(0, 8) - at(0, 0) if k > 8 else 0
        lbo, sbo = (kk, far) if layout_type == 0 else (far, kk)
    try:
        desc = hopper.GmmaDescriptor(start_address, max(lbo, 0), max(sbo, 0), layout_type)
    except LayoutError as exc:
        raise LayoutError(f"tile: {exc}") from None
    out = decode(desc.value, element_bytes, major, mn, k, tile=str(t))
    if not out["valid"]:
        bad = next(c for c in out["checks"] if not c["ok"])
        raise LayoutError(f"tile: not a canonical GMMA {major}-major layout: {bad['text']}")
    return out


def _encode_sm100(tile: str, element_bytes: int, major: str, start_address: int) -> dict[str, Any]:
    """The UMMA descriptor of a smem tile (MN x K; CuTe's print or element units), as ``make_umma_desc`` builds it,
    decoded again on the tile's first MMA K-block (LayoutError naming the canonical-form rule when it is none)."""
    _check_element_bytes(element_bytes, "sm100")
    try:
        value = U.umma_desc(tile, 8 * element_bytes, major, start_address)
    except LayoutError as exc:
        raise LayoutError(f"tile: {exc}") from None
    t = _parse_tile(tile)
    shp = t.shape if isinstance(t.shape, tuple) else ()
    mn = it.product(shp[0]) if len(shp) == 2 else 64
    ktot = it.product(shp[1]) if len(shp) == 2 else 32 // element_bytes
    k = min(ktot, 32 // element_bytes if str(major).upper() == "K" else 8)
    out = decode(value, element_bytes, major, min(mn, 256), k, tile=str(t), arch="sm100")
    out["encoded_from"] = tile
    if not out["valid"]:
        bad = next(c for c in out["checks"] if not c["ok"])
        raise LayoutError(f"tile: not a canonical UMMA {major}-major layout: {bad['text']}")
    return out


# --------------------------------------------------------------------------- TMA: cuTensorMapEncodeTiled


#: argument -> the name of its enum (``CU_TENSOR_MAP_<name>_...``)
TMA_ENUMS = {"dtype": "DATA_TYPE", "interleave": "INTERLEAVE", "swizzle": "SWIZZLE", "l2_promotion": "L2_PROMOTION",
             "oob_fill": "FLOAT_OOB_FILL"}


def parse_tma_call(text: str) -> dict[str, Any]:
    """The arguments of a pasted ``cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, ptr, dims,
    strides, box, elementStrides, INTERLEAVE, SWIZZLE, L2, OOB)`` call: the enum names and the ``{...}`` lists (or
    array names, which are refused) in order. LayoutError names what is missing."""
    import re

    if not isinstance(text, str) or len(text) > 4000:
        raise LayoutError("call: paste the cuTensorMapEncodeTiled call (at most 4000 characters)")
    enums = {k: re.search(rf"CU_TENSOR_MAP_{name}_(\w+)", text) for k, name in TMA_ENUMS.items()}
    if not enums["dtype"]:
        raise LayoutError("call: no CU_TENSOR_MAP_DATA_TYPE_... argument found")
    lists = [[int(x, 0) for x in re.findall(r"-?0x[0-9a-fA-F]+|-?\d+", m)]  # a minus sign is kept (was dropped)
             for m in re.findall(r"\{([^{}]*)\}", text)]
    if len(lists) < 3:
        raise LayoutError("call: write globalDim, globalStrides, boxDim (and elementStrides) as {..} lists")
    return {"global_dim": lists[0], "global_strides": lists[1], "box_dim": lists[2],
            "element_strides": lists[3] if len(lists) > 3 else None, **{k: m.group(1) for k, m in enums.items() if m}}


#: 16-byte chunks drawn per box row: a box over TMA's 256-element limit is refused by its rule, and its drawing (one
#: entry per chunk, a box of 10^12 elements: 10 s and out of memory) stops here.
MAX_DRAWN_CHUNKS = 256


def tma(args: dict[str, Any]) -> dict[str, Any]:
    """Every rule of ``cuTensorMapEncodeTiled`` (``algebra.hw.hopper.encode_tiled``) with its verdict, and the box as
    it lands in shared memory: per box row (at most 64) the physical 16-byte chunk of each logical chunk after the
    swizzle (byte address bits [4, 7) XOR bits [7, 10) for 128B, fewer for 64B / 32B)."""
    if "call" in args:
        if len(args) > 1:  # the call's arguments would silently replace them
            raise LayoutError(f"{next(k for k in args if k != 'call')}: give the pasted call alone, or the arguments "
                              "without call")
        args = parse_tma_call(args["call"])
    known = ("dtype", "global_dim", "global_strides", "box_dim", "element_strides", "interleave", "swizzle",
             "l2_promotion", "oob_fill", "global_address")
    unknown = [k for k in args if k not in known]
    if unknown:
        raise LayoutError(f"{unknown[0]}: unknown argument; known: {', '.join(known)}")
    for k in ("global_dim", "global_strides", "box_dim", "element_strides"):
        v = args.get(k)
        if k == "element_strides" and v is None:
            continue  # the driver's default, all 1
        if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v) or len(v) > 5:
            raise LayoutError(f"{k}: a list of at most 5 integers")
        big = next((str(x) for x in v if abs(x) >= 1 << 64), None)
        if big is not None:  # the driver takes cuuint64_t / cuuint32_t
            shown = big if len(big) <= 24 else f"{big[:20]}... ({len(big)} digits)"
            raise LayoutError(f"{k}[{[str(x) for x in v].index(big)}]: {shown} does not fit in 64 bits")
    address = args.get("global_address", 0)
    if type(address) is not int or not 0 <= address < 1 << 64:
        raise LayoutError(f"global_address: an integer in [0, 2^64), not {address!r:.40}")
    given = {k: v for k, v in args.items() if v is not None}  # null: the driver's default (dtype has none)
    r = hopper.encode_tiled(**{"dtype": args.get("dtype"), **given}, strict=False)
    out = r.to_dict()
    esize = hopper.TMA_DTYPES[r.dtype]
    box = r.box_dim
    inner = box[0] * esize if box else 0
    rows = math.prod(box[1:])
    span = hopper.TMA_SWIZZLE_SPAN[r.swizzle]
    sw = swizzle_fn({0: 0, 32: 1, 64: 2, 128: 3}[span], 4, 3)  # Sw<B,4,3> on byte addresses
    chunks = max(1, inner // 16)
    shown = range(0, 16 * min(chunks, MAX_DRAWN_CHUNKS), 16)  # a legal box row has at most 256 x 8 B = 128 chunks
    grid = [[sw(a) // 16 - row * inner // 16 for a in (row * inner + c for c in shown)] for row in range(min(rows, 64))]
    out["box"] = {"rows": rows, "row_bytes": inner, "chunks": chunks, "chunk_of": grid, "shown_rows": len(grid),
                  "shown_chunks": min(chunks, MAX_DRAWN_CHUNKS),
                  "bytes": rows * inner, "smem_alignment": 8 * span if span else 128}
    return out
