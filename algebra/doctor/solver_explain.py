"""What the layout doctor says about a candidate: which hardware path accepts it (TMA swizzle mode, GMMA smem atom,
base alignment), its bit diagram, its CuTe C++ / DSL code and a paragraph on why it works.

Hardware rules (``algebra.hw.hopper``): TMA and wgmma swizzle byte addresses with ``Sw<B,4,3>`` (B = 1, 2, 3: the
32/64/128-byte modes); on elements of ``e`` bytes that is ``Sw<B, 4 - log2 e, 3>``. wgmma needs the tile to be a
GMMA atom tiled over it (``tile_to_shape``); TMA writes a dense box whose contiguous extent is a multiple of 16 bytes
and at most the swizzle span (or a tiled atom, box by box). The smem base must be aligned to the swizzle's repeat:
8 rows x span (1024 B for 128B). A padded layout fits neither.

An XOR map is written ``Xor<j:mask,...> o tile``: offset o of the tile as given becomes o XOR every ``mask`` whose
source bit ``j`` is set in o (no CuTe type expresses it; the code is a plain function).
"""

from __future__ import annotations

from typing import Any

from algebra.core.emit import to_cpp, to_dsl
from algebra.core.layout import Layout, offsets
from algebra.core.products import tile_to_shape
from algebra.core.swizzle import ComposedLayout, Swizzle
from algebra.doctor.solver_access import Access, Tile
from algebra.hw import hopper, sm100_smem
from algebra.hw.bankfix import bank_bits, hardware_swizzles
from algebra.hw.banks import analyze

CPP_TYPES = {1: "uint8_t", 2: "half_t", 4: "float", 8: "double", 16: "uint128_t"}
#: swizzle span in bytes -> the name TMA and the UMMA descriptor give it
SWIZZLE_NAMES = {16: "SWIZZLE_NONE", 32: "SWIZZLE_32B", 64: "SWIZZLE_64B", 128: "SWIZZLE_128B"}
TMA_SPANS = {name: span for span, name in SWIZZLE_NAMES.items()}
#: why a fix that is no CuTe swizzle of the tile meets no hardware path
NOT_HARDWARE = {"padding": "a padded tile is neither a TMA box nor a GMMA atom: TMA writes dense boxes and wgmma reads "
                           "the canonical (8 x 16-byte core matrix) layouts",
                "xor": "a general XOR map is no TMA swizzle mode nor GMMA atom: only Sw<1..3,4,3> on bytes are"}


def hardware_swizzle(sw: tuple[int, int, int] | None, element_bytes: int) -> int | None:
    """The span in bytes (32/64/128) when ``sw`` on elements is a TMA/wgmma mode (``bankfix.hardware_swizzles``),
    16 for no swizzle (Sw<0,M,S> is the identity: CuTe prints its INTER atoms so), else None."""
    if sw is None or sw[0] == 0:
        return 16
    return 16 << sw[0] if tuple(sw) in hardware_swizzles(element_bytes) else None


def modes_on_tile(sw: tuple[int, int, int], element_bytes: int, nbits: int) -> list[int]:
    """Spans (32/64/128 bytes, narrowest first) of the TMA swizzle modes that act as ``sw`` on every offset below
    2^nbits: same M and S, and the same source bits inside those nbits (a mode's higher source bits read zeros).
    Post-condition: for each span returned, ``Sw<B', M, S>(x) == sw(x)`` for all ``0 <= x < 2^nbits``."""
    b, m, s = sw
    live = nbits - m - s  # source bits of a swizzle with (M, S) that lie inside the tile
    if s != 3 or live < 1:
        return []
    return [16 << b2 for b2, m2, _ in sorted(hardware_swizzles(element_bytes))
            if m2 == m and min(b2, live) == min(b, live)]


def _tiles_to(tile: Tile, atom: Any) -> bool:
    """True when ``tile_to_shape(atom, (rows, cols))`` (CuTe's, the swizzle left out) has the tile's offsets."""
    ar, ac = atom.shape
    if tile.rows % ar or tile.cols % ac:
        return False
    try:
        tiled = tile_to_shape(Layout(atom.shape, atom.stride), (tile.rows, tile.cols))
    except ValueError:
        return False
    probe = [(r, c) for r in (0, 1, ar - 1, tile.rows - 1) for c in (0, 1, ac - 1, tile.cols - 1)]
    return all(tiled(r + tile.rows * c) == tile.offset(r, c) for r, c in probe) and offsets(tiled) == tile.table


def _atom_match(tile: Tile, sw: tuple[int, int, int] | None, span: int) -> str | None:
    """The GMMA atom name when tile_to_shape(atom, (rows, cols)) has the tile's offsets, else None."""
    if tile.element_bytes >= 8:  # GMMA operands are 8-, 16- or 32-bit
        return None
    for major in ("K", "MN"):
        atom = hopper.smem_atom(major, span, 8 * tile.element_bytes)
        if (sw is None or atom.element_swizzle == sw) and _tiles_to(tile, atom):
            return f"GMMA::{atom.name}<{CPP_TYPES[tile.element_bytes]}>"
    return None


def wgmma_refusal(tile: Tile, major: str) -> str | None:
    """Why no candidate can serve a ``major``-major wgmma operand, or None: the doctor only permutes the tile as given
    (a swizzle) or pads it, so some GMMA atom (INTER, SW32, SW64 or SW128) must tile to its offsets."""
    eb = tile.element_bytes
    for span in (16, 32, 64, 128):
        atom = hopper.smem_atom(major, span, 8 * eb)
        if _tiles_to(tile, atom):
            return None
    atom = hopper.smem_atom(major, 128, 8 * eb)
    ar, ac = atom.shape
    hint = (f"tile_to_shape(GMMA::{atom.name}<{CPP_TYPES[eb]}>{{}}, make_shape({tile.rows}, {tile.cols})) is such a "
            "layout" if tile.rows % ar == 0 and tile.cols % ac == 0 else
            f"the {major}-major atoms are {'8 x W' if major == 'K' else 'W x 8'} (W = 16..128 bytes of elements)")
    return (f"no {major}-major GMMA atom (INTER, SW32, SW64, SW128) tiles to {tile.text} (tile_to_shape over its "
            f"{tile.rows} x {tile.cols} (MN x K) gives other offsets), so no swizzle or padding of it is a layout "
            f"wgmma reads; {hint}")


def _umma_match(tile: Tile, sw: tuple[int, int, int] | None, wgmma: str | None) -> str | None:
    """The SM100 UMMA smem atom (and descriptor layout type) that tiles to the candidate: the GMMA atoms are UMMA's
    too; ``Sw<2,5,2>`` on bytes is ``Layout_MN_SW128_32B_Atom`` (SWIZZLE_128B_BASE32B, MN-major only)."""
    if wgmma is not None:
        span = hardware_swizzle(sw, tile.element_bytes) or 16
        return wgmma.replace("GMMA::", "UMMA::") + f" ({SWIZZLE_NAMES[span]})"
    if sw is None or tile.element_bytes > 4 or (sw[0], sw[1] + tile.element_bytes.bit_length() - 1, sw[2]) != (2, 5, 2):
        return None
    if not _tiles_to(tile, sm100_smem.umma_smem_atom("Layout_MN_SW128_32B_Atom", 8 * tile.element_bytes)):
        return None
    return f"UMMA::Layout_MN_SW128_32B_Atom<{CPP_TYPES[tile.element_bytes]}> (SWIZZLE_128B_BASE32B)"


def hardware(tile: Tile, accesses: list[Access], cand: Any) -> dict[str, Any]:
    """``{"tma", "wgmma", "umma", "base_alignment", "constraints_met", "notes", "vector_kept"}`` for a candidate
    (``umma``: the SM100 smem atom and UMMA descriptor layout type that read it, 128B_BASE32B included;
    ``vector_kept``: every vector of the accesses' width stays whole anywhere in the tile, not only at the lanes
    given -- a swizzle needs M >= log2(widest vector), a padding a leading stride that is a multiple of it)."""
    eb, sw = tile.element_bytes, cand.swizzle
    tma = wgmma = umma = None
    notes: list[str] = []
    tile_mode = None
    if cand.kind in ("naive", "swizzle"):
        span = hardware_swizzle(sw, eb)
        box = (tile.dense_extent or 0) * eb if eb <= 8 else 0  # bytes of a dense box's contiguous extent, 0 for none
        dense = box > 0 and box % 16 == 0  # TMA's element types are at most 8 bytes
        if span is not None:
            wgmma = _atom_match(tile, sw, span)
            if sw is None:
                tma = "SWIZZLE_NONE" if dense else None
            elif (dense and box <= span) or wgmma is not None:
                tma = SWIZZLE_NAMES[span]
        wide = [sp for sp in modes_on_tile(sw, eb, tile.max_offset.bit_length()) if box <= sp] if (
            tma is None and sw is not None and dense) else []
        if wide:
            tile_mode, tma = wide[0], SWIZZLE_NAMES[wide[0]]
            notes.append(f"TMA: on this tile Sw<{sw[0]},{sw[1]},{sw[2]}> is the {tma} mode (the mode's higher source "
                         f"bits lie past the tile's last offset), which takes the {box}-byte box rows; base aligned "
                         f"to {8 * wide[0]} bytes")
        if eb <= 4:
            umma = _umma_match(tile, sw, wgmma)
    else:
        notes.append(NOT_HARDWARE[cand.kind])
    align = eb << sum(sw) if sw is not None else 128  # Sw<B,M,S> repeats every 2^(M+S+B)
    if tile_mode is not None:  # TMA's pattern follows the address: the base sits on the mode's 8-row repeat
        align = max(align, 8 * tile_mode)
    fixed = len(notes)
    for a in accesses:
        if a.kind == "tma" and tma is None:
            notes.append(f"{a.name}: TMA cannot write this layout")
        elif a.kind == "tma" and tma != "SWIZZLE_NONE" and a.box_inner_bytes > TMA_SPANS[tma]:
            notes.append(f"{a.name}: the box's inner extent is {a.box_inner_bytes} bytes, wider than the {tma} mode's "
                         f"{TMA_SPANS[tma]}-byte span (TMA needs the inner box extent within the swizzle span)")
        if a.kind == "wgmma" and (wgmma is None or (a.major == "MN") != ("_MN_" in wgmma)):
            notes.append(f"{a.name}: no {a.major}-major GMMA atom tiles to this layout")
    vec = max((a.vector for a in accesses if not a.constraint), default=1)
    kept = ((tile.layout.stride[tile.lead] + cand.pad) % vec == 0 if cand.kind == "padding"
            else tile.vectors_whole(vec) and (cand.kind == "naive" or cand.safe_vector >= vec
                                              or _keeps_vectors(tile, cand.columns, vec)))
    return {"tma": tma, "wgmma": wgmma, "umma": umma, "base_alignment": align, "constraints_met": len(notes) == fixed,
            "notes": notes, "vector_kept": kept}


def _keeps_vectors(tile: Tile, columns: dict[int, int], vec: int) -> bool:
    """True when the XOR map ``o ^ A(o_hi)`` (source bit -> target mask) keeps every ``vec``-aligned run of ``vec``
    offsets of the tile whole: each source bit set in some offset lies above the vector's bits and XORs into none of
    them (a source bit never set in the tile, such as bit 3 of ``(64,8):(16,1)``, moves nothing)."""
    low = vec - 1
    return all(j >= low.bit_length() and not mask & low for j, mask in columns.items() if (tile.live_bits >> j) & 1)


# --------------------------------------------------------------------------- bits, code, why


def bit_labels(tile: Tile) -> list[str]:
    """Per offset bit (0 = lowest) the coordinate bit that sets it ("c0", "r2") where the tile moves whole bits."""
    n = tile.max_offset.bit_length()
    labels = [""] * n
    for name, extent, unit in (("r", tile.rows, (1, 0)), ("c", tile.cols, (0, 1))):
        for j in range((extent - 1).bit_length()):
            o = tile.offset((1 << j) * unit[0], (1 << j) * unit[1]) - tile.offset(0, 0)
            if o > 0 and o & (o - 1) == 0 and o.bit_length() - 1 < n:
                labels[o.bit_length() - 1] = f"{name}{j}"
    return labels


def bit_diagram(tile: Tile, cand: Any) -> dict[str, Any]:
    """``{"nbits", "labels", "xor": [[source bit, target bit], ...], "kept": low bits untouched, "bank_bits"}``."""
    eb = tile.element_bytes
    pairs = [[j, t] for j, mask in sorted(cand.columns.items()) for t in range(mask.bit_length()) if (mask >> t) & 1]
    low = min((p[1] for p in pairs), default=0)
    return {"nbits": tile.max_offset.bit_length(), "labels": bit_labels(tile), "xor": pairs, "kept": low,
            "bank_bits": list(range(*bank_bits(eb))), "element_bytes": eb}


def layout_of(tile: Tile, cand: Any) -> Any:
    """The fixed tile as an algebra object (Layout / ComposedLayout), or None for an XOR map."""
    if cand.kind == "swizzle":
        return ComposedLayout(Swizzle(*cand.swizzle), 0, tile.layout)
    if cand.kind == "padding":
        lay = tile.layout
        return Layout(lay.shape, tuple(d + cand.pad * (i == tile.lead) for i, d in enumerate(lay.stride)))
    return tile.layout if cand.kind == "naive" else None


def code(tile: Tile, lay: Any, xor: list[tuple[int, int]], wgmma: str | None) -> dict[str, str]:
    """CuTe C++ and CuTe DSL source for the fixed tile ``lay`` (``algebra.core.emit``); an XOR map (``lay`` None) as
    a plain function of the (source bit, target mask) pairs ``xor``."""
    if lay is not None:
        cpp = f"auto smem_layout = {to_cpp(lay)};"
        if wgmma:
            cpp += f"\n// the same tile from the GMMA atom (its swizzle acts on the smem pointer's byte address: " \
                   f"use it as make_tensor(make_smem_ptr(p), smem_layout_gmma)):\nauto smem_layout_gmma = " \
                   f"tile_to_shape({wgmma}{{}}, make_shape(Int<{tile.rows}>{{}}, Int<{tile.cols}>{{}}));"
        return {"cpp": cpp, "dsl": f"smem_layout = {to_dsl(lay)}"}
    terms = " ^ ".join(f"(((o >> {j}) & 1) * 0x{m:x})" for j, m in xor)
    return {"cpp": f"// o = {tile.text}(r, c); no CuTe Swizzle expresses this map\n"
                   f"__device__ int smem_offset(int o) {{ return o ^ {terms or '0'}; }}",
            "dsl": f"def smem_offset(o):  # o = the offset of {tile.text}\n    return o ^ {terms or '0'}"}


def _chunk_sentence(accesses: list[Access], eb: int, m: int) -> str:
    """What M keeps whole, said against the widest access of this request (a scalar read is not told about
    vectors it does not use)."""
    chunk = eb << m
    widest = max((a.access_bytes(eb) for a in accesses if not a.constraint), default=eb)
    if widest == eb:
        what = f"every access here is a {eb}-byte scalar"
    else:
        kinds = {f"{a.kind} rows" if a.matrix else "vectors" for a in accesses
                 if not a.constraint and a.access_bytes(eb) == widest}
        what = f"the widest accesses here are {widest} bytes ({' and '.join(sorted(kinds, reverse=True))})"
    kept = (f"M = 0 keeps no low bit fixed: the swizzle moves single {eb}-byte elements" if m == 0 else
            f"M = {m} keeps the low {m} bits fixed: a chunk of 2^{m} = {1 << m} elements ({chunk} bytes) moves as a "
            "whole")
    tail = "so no access is split" if widest <= chunk else "wider than that, so only the lanes given stay contiguous"
    return f"{kept}; {what}, {tail}."


def why(tile: Tile, accesses: list[Access], cand: Any, naive: Any, bits: dict[str, Any]) -> str:
    """One paragraph: what conflicts in the tile as given and how this candidate spreads it (a swizzle's source bits
    named as its ``bit_diagram`` labels them)."""
    eb = tile.element_bytes
    row_bytes = (tile.cols if tile.lead != 1 else tile.rows) * eb
    worst = max(((a, w) for a, w in zip(accesses, naive.wavefronts, strict=True) if not a.constraint),
                key=lambda aw: aw[1] - aw[0].ideal(eb))
    a, wf = worst
    head = (f"As given, {a.name} costs {wf} wavefronts against an ideal of {a.ideal(eb)}. "
            if wf > a.ideal(eb) else "As given, every access is already at its ideal. ")
    if row_bytes % 128 == 0 and row_bytes:
        head += (f"Each contiguous line of the tile is {row_bytes} bytes, a multiple of the 128 bytes that the 32 "
                 "banks cover, so every line starts in bank 0 and the same column of different lines falls in one "
                 "bank. ")
    if cand.kind == "naive":
        return head.strip()
    if cand.kind == "padding":
        p = cand.pad * eb
        return head + (f"Padding each line by {cand.pad} element(s) ({p} bytes) shifts line r by r x {p} bytes, "
                       f"so consecutive lines start {p // 4 if p >= 4 else p} "
                       f"{'bank(s)' if p >= 4 else 'byte(s)'} apart and a column spreads over the banks; it costs "
                       f"{cand.footprint_bytes - tile.footprint_bytes} extra bytes and rules out TMA and wgmma.")
    if cand.kind == "xor":
        return head + ("No Sw<B,M,S> reaches this cost: the map XORs each varying high offset bit into its own mix of "
                       "bank bits (an F2-linear map that is not a shifted identity), which keeps every vector whole "
                       "because it only flips bits above the widest vector.")
    b, m, s = cand.swizzle
    src = [bits["labels"][j] or f"bit {j}" for j, _ in bits["xor"]]
    vec_bytes = eb << m
    text = (f"Sw<{b},{m},{s}> XORs offset bits {m + s}..{m + s + b - 1} ({', '.join(src)}) into bits "
            f"{m}..{m + b - 1}. " + _chunk_sentence(accesses, eb, m) + " "
            f"B = {b} permutes 2^{b} = {1 << b} such chunks, so 2^{b} lines that would hit the same banks "
            f"land on {1 << b} different ones ({(1 << b) * vec_bytes} bytes"
            + (", one full 128-byte row of banks" if (1 << b) * vec_bytes == 128 else "") + "). "
            f"S = {s} makes the source start at bit M + S = {m + s}, the first bit that changes from line to line "
            f"in this tile.")
    return head + text


def _witness(per_access: list[dict[str, Any]]) -> str:
    """The conflict left in this placement, one access's worst bank (``BankAnalysis.conflict``), as a sentence."""
    worst = max((p for p in per_access if p.get("conflict")), key=lambda p: p["wavefronts"] - p["ideal"], default=None)
    if worst is None:
        return ""
    c = worst["conflict"]
    return (f" Left here: in {worst['name']}'s phase {c['phase']}, lanes {', '.join(map(str, c['lanes']))} (byte "
            f"addresses {', '.join(map(str, c['byte_addresses']))}) touch {c['ways']} different 4-byte words of bank "
            f"{c['bank']}, so that phase takes {c['ways']} wavefronts.")


def describe(tile: Tile, accesses: list[Access], cand: Any, hw: dict[str, Any], naive: Any) -> dict[str, Any]:
    """A candidate as JSON (CONTRACT §5 fields and the doctor's extras). The wavefronts are recomputed with
    ``algebra.hw.banks.analyze`` (the reference model) from the candidate's addresses."""
    eb = tile.element_bytes
    per_access = []
    for a, offs in zip(accesses, cand.offsets, strict=True):
        if offs is None:  # a constraint
            per_access.append({"name": a.name, "kind": a.kind, "wavefronts": 0, "ideal": 0, "phases": [],
                               "conflict": None, "byte_addresses": [], "banks": []})
            continue
        addrs = [o * eb for o in offs]
        r = analyze(addrs, a.access_bytes(eb), a.kind)  # kind: lds or ldmatrix
        per_access.append({"name": a.name, "kind": a.kind, "op": a.op, "wavefronts": r.wavefronts,
                           "ideal": a.ideal(eb), "phases": r.phases, "byte_addresses": addrs, "banks": r.banks,
                           "conflict": r.conflict()})
    lay, sw, xor, bits = layout_of(tile, cand), cand.swizzle, sorted((cand.xor or {}).items()), bit_diagram(tile, cand)
    xor_name = "Xor<" + ",".join(f"{j}:{m}" for j, m in xor) + f"> o {tile.text}"
    return {"kind": cand.kind, "layout": str(lay) if lay is not None else xor_name,
            "swizzle": f"Sw<{sw[0]},{sw[1]},{sw[2]}>" if sw else None, "pad": cand.pad,
            "xor": {str(k): v for k, v in xor} or None,
            "wavefronts": [p["wavefronts"] for p in per_access], "total": sum(p["wavefronts"] for p in per_access),
            "ideal": sum(a.ideal(eb) for a in accesses), "footprint_bytes": cand.footprint_bytes,
            "extra_bytes": cand.footprint_bytes - tile.footprint_bytes, "vector_kept": hw["vector_kept"],
            "tma": hw["tma"] if hw["tma"] != "SWIZZLE_NONE" or cand.kind == "naive" else None, "wgmma": hw["wgmma"],
            "umma": hw.get("umma"), "atom": hw["wgmma"], "base_alignment": hw["base_alignment"],
            "constraints_met": hw["constraints_met"],
            "notes": hw["notes"], "bits": bits, "code": code(tile, lay, xor, hw["wgmma"]),
            "why": why(tile, accesses, cand, naive, bits) + _witness(per_access) + ("" if hw["vector_kept"] else
                   " Caution: the tile as given already splits some vectors of that width (its rows do not start at "
                   "a multiple of the width); only the lanes given are whole vectors." if not tile.vectors_whole(
                       max((a.vector for a in accesses if not a.constraint), default=1)) else
                   " Caution: this fix keeps the vectors of the lanes given whole, but not every vector of that width "
                   "elsewhere in the tile (it flips bits inside a vector there); a fix marked as keeping vectors is "
                   "safe for the same pattern on every row."),
            "per_access": per_access}
