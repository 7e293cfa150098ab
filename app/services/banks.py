"""The swizzle & banks lab service (``POST /api/banks`` and ``/banks``): a warp's shared-memory access through a
layout, its bank map, and the padded / swizzled alternatives (CONTRACT §3, computed by ``algebra.banks``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import algebra as A
from algebra import LayoutError
from algebra import banks as B
from algebra.core.memo import bounded
from algebra.hw.bankfix import compact_plain, keeps_tile, widest_swizzle_bits
from app.budget import charge, offsets
from app.config import MAX_CELLS, MAX_SIZE
from app.services import code
from app.services.banks_access import (  # noqa: F401 - the lab's access forms, named here for its routes
    ELEMENT_TYPES,
    KINDS,
    access_dict,
    all_swizzle_presets,
    check_vector,
    ldmatrix_story,
    parse_access,
    swizzle_presets,
    vector_widths,
)
from app.services.grid import GridView, boundary_levels
from app.services.guard import guard
from app.services.layouts import describe_layout, is_composed, parse_layout, pow2_text


@dataclass
class BanksView:
    layout: str
    swizzle: str | None
    element_bytes: int
    access: dict[str, Any]
    analysis: Any
    pre_offsets: list[int] = field(default_factory=list)

    @property
    def ways(self) -> int:
        return self.analysis.ways

    @property
    def wavefronts(self) -> int:
        return self.analysis.wavefronts

    def to_json(self) -> dict[str, Any]:
        r = self.analysis
        coords = [list(c) if isinstance(c, tuple | list) else [c] for c in (r.coordinates or [])]
        return {"banks": list(r.banks), "ways": r.ways, "wavefronts": r.wavefronts,
                "byte_addresses": list(r.byte_addresses), "phases": list(r.phases), "access_bytes": r.access_bytes,
                "offsets": list(r.element_offsets or []), "coords": coords}

    def phase_banks(self) -> list[list[tuple[int, int, str]]]:
        """Per phase, per bank: (distinct words, lanes, "lane list") for the 32-bank strip."""
        r = self.analysis
        out = []
        for lanes, words in zip(r.phase_lanes, r.bank_words, strict=True):
            row = []
            for bank in range(B.NUM_BANKS):
                ws = words.get(bank, [])
                who = [ln for ln in lanes if r.banks[ln] == bank]
                row.append((len(ws), len(who), ", ".join(map(str, who))))
            out.append(row)
        return out


def _split(layout_text: str, swizzle: str | None) -> tuple[Any, Any]:
    """(plain layout, swizzle or None), from a layout that may carry its own ``Sw<...> o``."""
    lay = parse_layout(layout_text, offsets=True)
    swz = None
    if swizzle and swizzle.strip() and swizzle.strip().lower() != "none":
        try:
            with guard("swizzle"):
                swz = A.parse(swizzle.strip())
        except LayoutError as exc:  # the parser's words name a position, not the field
            raise LayoutError(str(exc) if str(exc).startswith("swizzle") else f"swizzle: {exc}") from None
        if not isinstance(swz, A.Swizzle):
            raise LayoutError(f"swizzle: {swizzle!r} is not Sw<B,M,S>")
    if is_composed(lay):
        if swz is not None:
            raise LayoutError("give the swizzle either in the layout (Sw<..> o ...) or in the swizzle field, not both")
        if not isinstance(lay.layout_a, A.Swizzle) or lay.offset != 0:
            raise LayoutError("the banks lab takes Sw<B,M,S> o layout (no offset)")
        lay, swz = lay.layout_b, lay.layout_a
    if A.size(lay) > MAX_SIZE:
        raise LayoutError(f"layout: size {pow2_text(A.size(lay))} exceeds the cap of {pow2_text(MAX_SIZE)}")
    return lay, swz


@bounded(8 << 20, "banks views")
def _analyze(layout_text: str, swizzle: str | None, element_bytes: int, access_key: str) -> BanksView:
    import json

    access = json.loads(access_key)
    lay, swz = _split(layout_text, swizzle)
    with guard("banks"):
        r = B.bank_access(lay, element_bytes, access, swizzle=swz)
        pre = [swz(o) if swz is not None else o for o in (r.element_offsets or [])]
    return BanksView(layout=str(lay), swizzle=None if swz is None else str(swz), element_bytes=element_bytes,
                     access=access, analysis=r, pre_offsets=pre)


def analyze(layout_text: str, swizzle: str | None, element_bytes: int, access: dict[str, Any]) -> BanksView:
    """Bank map of the warp access ``access`` to a tile stored by ``layout`` (and ``swizzle`` on element offsets).

    Post-condition (CONTRACT §3): ``banks[t] == (byte_addresses[t] // 4) % 32``; ``ways`` is the worst phase and
    ``wavefronts`` the sum over phases."""
    import json

    if element_bytes not in (1, 2, 4, 8, 16):
        raise LayoutError(f"element_bytes must be 1, 2, 4, 8 or 16, not {element_bytes}")
    if access.get("kind") != "ldmatrix":
        check_vector(int(access.get("vector", 1)), element_bytes)
    return _analyze(layout_text.strip(), (swizzle or "").strip() or None, element_bytes,
                    json.dumps(access, sort_keys=True))


def bank_grid(view: BanksView, grid_id: str, hover: str | None = None) -> GridView | None:
    """The tile coloured and labelled by bank, with the accessed elements outlined; ``hover`` names the element
    whose card shows a hovered cell's coordinate, offsets, byte address and bank (static/app.js)."""
    text = view.layout if view.swizzle is None else f"{view.swizzle} o {view.layout}"
    lv = describe_layout(text, for_grid=True)
    if lv.offsets is None or lv.rows * lv.cols > MAX_CELLS:
        return None
    e = view.element_bytes
    banks = [[(o * e >> 2) & 31 for o in row] for row in lv.offsets]  # B.bank_of(o * e), inlined: 2^16 cells
    per_lane = max(1, view.analysis.access_bytes // e)
    needed = {off + k for off in view.analysis.element_offsets or [] for k in range(per_lane)}
    marks: dict[tuple[int, int], str] = {}
    found: set[int] = set()
    for i, row in enumerate(lv.offsets):  # the first cell (row by row) holding each offset read is outlined
        if needed.isdisjoint(row):
            continue
        for j, o in enumerate(row):
            if o in needed and o not in found:
                found.add(o)
                marks[(i, j)] = "acc"
    meta: dict[str, Any] = {"outline": "outlined: the cells this warp reads", "colour_name": "by bank"}
    if hover and lv.col_off:  # the explorer's per-mode offsets; the card adds the swizzle, byte address and bank
        lanes = {}
        for lane, off in enumerate(view.analysis.element_offsets or []):
            for k in range(per_lane):
                lanes.setdefault(off + k, lane)
        meta.update(hover=hover, kind="banks", e=e, rank=lv.rank, rows=lv.rows, rowCrd=lv.row_crd, rowOff=lv.row_off,
                    colCrd=lv.col_crd, colOff=lv.col_off, swizzle=view.swizzle,
                    lanes={f"{i},{j}": lanes[lv.offsets[i][j]] for i, j in marks})
    return GridView(id=grid_id, rows=lv.rows, cols=lv.cols, text=banks, colour=banks, colour_mod=True, marks=marks,
                    row_levels=boundary_levels(lv.row_leaves, lv.rows), meta=meta,
                    col_levels=boundary_levels(lv.col_leaves, lv.cols), css="narrow",
                    caption=f"{text} · {e}-byte elements · cells show their bank")


def no_grid_reason(view: BanksView) -> str:
    """Why ``bank_grid`` drew nothing for this view: the tile's cell count over the render cap."""
    n = A.size(A.parse(view.layout))
    return (f"the tile has {n:,} cells, over the render cap of {MAX_CELLS:,}: the bank strip and the counts above "
            "are exact, but the tile itself is not drawn (use a smaller tile to see it)")


def tile_rows(view: BanksView) -> int:
    """Rows of the tile's rank-2 view (mode 0 x the rest; a rank-1 tile is one row), as the bank model reads it."""
    shape = A.parse(view.layout).shape
    return A.product(shape[0]) if isinstance(shape, tuple) and len(shape) > 1 else 1


def tile_code(view: BanksView) -> dict[str, str]:
    """CuTe C++ / DSL for the tile's layout, with its swizzle composed on (element offsets)."""
    lay = A.parse(view.layout if view.swizzle is None else f"{view.swizzle} o {view.layout}")
    cpp, dsl = code.layout_code(lay)
    return {"cpp": cpp, "dsl": dsl}


def xor_rows(view: BanksView) -> list[dict[str, Any]]:
    """Per lane: coordinate, offset before/after the swizzle as bit strings with the yyy / zzz bits marked."""
    if view.swizzle is None:
        return []
    sw = A.parse(view.swizzle)
    post = view.analysis.element_offsets or []
    width = max(8, max((o.bit_length() for o in post), default=1), sw.base + sw.bits + sw.shift)
    rows = []
    for lane, (before, after) in enumerate(zip(view.pre_offsets, post, strict=True)):
        mask = (1 << width) - 1  # a negative offset (a negative stride) as its two's-complement low bits
        bits_b = [(int(c), _bitclass(sw, width - 1 - k, True))
                  for k, c in enumerate(format(before & mask, f"0{width}b"))]
        bits_a = [(int(c), _bitclass(sw, width - 1 - k, False))
                  for k, c in enumerate(format(after & mask, f"0{width}b"))]
        crd = (view.analysis.coordinates or [None] * len(post))[lane]
        rows.append({"lane": lane, "crd": crd, "before": before, "after": after, "bits_before": bits_b,
                     "bits_after": bits_a, "byte": view.analysis.byte_addresses[lane],
                     "bank": view.analysis.banks[lane]})
    return rows


def _bitclass(sw: Any, bit: int, source: bool) -> str:
    if source and (sw.yyy_mask >> bit) & 1:
        return "y"
    if (sw.zzz_mask >> bit) & 1:
        return "x"
    return ""


def _preset_fix(lay: Any, element_bytes: int, access: dict[str, Any]) -> str | None:
    """The widest hardware swizzle mode (SW128, then SW64, SW32; ``swizzle_presets``) that makes ``access``
    conflict-free on ``lay`` and maps the tile onto itself (``keeps_tile``), or None: the lab's default "swizzled"
    column is one a TMA / wgmma tile can use."""
    offs: list[int] | None = None
    for _label, sw in reversed(swizzle_presets(element_bytes)):
        try:
            if analyze(str(lay), sw, element_bytes, access).ways == 1:
                s = A.parse(sw)
                if offs is None and not compact_plain(lay) and A.size(lay) <= MAX_CELLS:
                    offs = offsets(lay, "swizzle check: the tile's offsets")  # estimated first, read once
                with guard("swizzle check"):
                    if keeps_tile(lay, (s.bits, s.base, s.shift), offs):
                        return sw
        except LayoutError:
            continue
    return None


def unpadded(lay: Any) -> tuple[Any, int]:
    """(the dense tile, its padding p) for a flat rank-2 ``(R,C):(C+p,1)`` or ``(R,C):(1,R+p)`` with p > 0;
    ``(lay, 0)`` for any other layout. Post-condition: the dense tile has the same shape and its rows (columns) abut."""
    if not isinstance(lay, A.Layout) or not isinstance(lay.shape, tuple) or len(lay.shape) != 2:
        return lay, 0
    (r, c), (d0, d1) = lay.shape, lay.stride
    if not all(type(x) is int for x in (r, c, d0, d1)):
        return lay, 0
    if d1 == 1 and r > 1 and d0 > c:
        return A.Layout((r, c), (c, 1)), d0 - c
    if d0 == 1 and c > 1 and d1 > r:
        return A.Layout((r, c), (1, r)), d1 - r
    return lay, 0


def _per_line(p: int, lay: Any) -> str:
    line = "row" if lay.stride[1] == 1 else "column"
    return f"+{p} element{'' if p == 1 else 's'} per {line}"


def _metered(lanes: int, elements: int) -> None:
    """The search's own estimate of its next piece of work, charged to the request (app.budget) before it runs."""
    if lanes:
        charge("bank lane", lanes, "swizzle / padding search: bank maps")
    if elements:
        charge("swizzled cell", elements, "swizzle search: does the swizzle map the tile onto itself")


def _search_swizzle(lay: Any, element_bytes: int, access: dict[str, Any]) -> tuple[str | None, str]:
    """(Sw<B,M,S>, "") that makes ``access`` conflict-free on ``lay`` (a hardware mode first, then every B the tile
    allows), or (None, why): none exists among what was searched, or the bound that stopped the search."""
    sw = _preset_fix(lay, element_bytes, access)
    if sw is not None:
        return sw, ""
    n = A.size(lay)
    if n > MAX_CELLS:
        return None, (f"the hardware modes (SW32 / SW64 / SW128) leave a conflict, and the full Sw<B,M,S> search "
                      f"enumerates tiles of up to {MAX_CELLS:,} elements; this tile has {n:,}")
    try:
        with guard("swizzle search"):
            offs = offsets(lay, "swizzle search: the tile's offsets")
            best = B.best_swizzle_fix(lay, element_bytes, access, offsets=offs, on_work=_metered)
    except LayoutError as exc:  # a cap, the work budget or a tile it does not read: say so, not "none exists"
        return None, f"the search stopped at a bound before finding a fix: {exc}"
    if best is not None:
        return str(A.Swizzle(*best.swizzle)), ""
    bits = max(max(offs, default=1), 1).bit_length()
    return None, (f"no Sw<B,M,S> removes the conflict: every B from 1 to {widest_swizzle_bits(bits)} (what the "
                  f"tile's {bits} offset bits allow, S >= B), with each M that moves a bank bit and each S at which "
                  "the lanes' offsets differ, was tried")


def _panel(title: str, lay: Any, swizzle: str | None, element_bytes: int, access: dict[str, Any],
           note: str = "") -> dict[str, Any]:
    return {"title": title, "layout": str(lay), "swizzle": swizzle, "note": note, "why": "",
            "view": analyze(str(lay), swizzle, element_bytes, access)}


def _absent(title: str, why: str) -> dict[str, Any]:
    return {"title": title, "view": None, "why": why, "note": ""}


def compare(layout_text: str, swizzle: str | None, element_bytes: int, access: dict[str, Any]) -> list[dict]:
    """The same access on the tile as given and on its fixes, each with its analysis or the reason it is absent.

    A dense tile: naive, padded (the smallest conflict-free padding) and swizzled (the given swizzle, else the first
    conflict-free Sw<B,M,S>: hardware modes, then every B the tile allows). An already padded tile
    ``(R,C):(C+q,1)``: the tile as given, then the unpadded ``(R,C):(C,1)`` and the fixes of that unpadded tile, so
    no padding is counted from the padded pitch and no swizzle is stacked on it unannounced. Post-condition: no
    panel is titled with a padding of 0; a fix that is not needed (the access is conflict-free) says so."""
    lay, swz = _split(layout_text, swizzle)
    base, pad_given = unpadded(lay)
    out: list[dict[str, Any]] = []
    if pad_given:
        given = f"as given: padded ({_per_line(pad_given, lay)})"
        if swz is not None:
            given = f"as given: {swz} on the padded pitch ({_per_line(pad_given, lay)})"
        out.append(_panel(given, lay, None if swz is None else str(swz), element_bytes, access,
                          f"the fixes below start from the unpadded {base}"))
        out.append(_panel("unpadded", base, None, element_bytes, access))
    else:
        out.append(_panel("naive", lay, None, element_bytes, access))
    clean = out[-1]["view"].ways == 1
    try:
        with guard("padding"):
            fix = B.padding_fix(base, element_bytes, access, on_work=_metered)
        if fix is None:
            out.append(_absent("padded", "no padding up to one bank line (128 bytes) removes the conflict"))
        elif fix.padding == 0:
            out.append(_absent("padded", f"not needed: the access is already conflict-free on {base}"))
        else:
            note = ""
            if pad_given:
                note = ("the padding as given is this smallest one" if fix.padding == pad_given else
                        f"the smallest padding that works; the tile as given pads by {pad_given}")
            out.append(_panel(f"padded ({_per_line(fix.padding, base)})", fix.layout, None, element_bytes, access,
                              note))
    except LayoutError as exc:
        out.append(_absent("padded", str(exc)))
    on = f" on the unpadded {base}" if pad_given else ""
    if swz is not None:
        out.append(_panel(f"swizzled ({swz}{on})", base, str(swz), element_bytes, access))
    elif clean:
        out.append(_absent("swizzled", f"not needed: the access is already conflict-free on {base}"))
    else:
        sw_text, why = _search_swizzle(base, element_bytes, access)
        out.append(_absent("swizzled", why) if sw_text is None else
                   _panel(f"swizzled ({sw_text}{on})", base, sw_text, element_bytes, access))
    return out
