"""The swizzle & banks lab service (``POST /api/banks`` and ``/banks``): a warp's shared-memory access through a
layout, its bank map, and the padded / swizzled alternatives (CONTRACT §3, computed by ``algebra.banks``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import algebra as A
from algebra import LayoutError, hopper
from algebra import banks as B
from algebra.core.memo import bounded
from app.config import MAX_CELLS, MAX_SIZE
from app.services import code
from app.services.grid import GridView, boundary_levels
from app.services.guard import guard
from app.services.layouts import describe_layout, is_composed, parse_layout, pow2_text

KINDS = ("column", "row", "offsets", "ldmatrix", "thread_layout")
ELEMENT_TYPES = [(1, "1 B (int8, fp8)"), (2, "2 B (fp16, bf16)"), (4, "4 B (fp32)"), (8, "8 B (fp64)"),
                 (16, "16 B (a 128-bit vector)")]


def swizzle_presets(element_bytes: int) -> list[tuple[str, str]]:
    """(label, Sw<B,M,S> on element offsets) for the 32B / 64B / 128B swizzle modes of this element size."""
    out = []
    for span, (name, bits, _code) in sorted(hopper.SWIZZLE_KINDS.items()):
        if bits == 0:
            continue
        try:
            b, m, s = hopper.swizzle_to_elements((bits, 4, 3), element_bytes * 8)
        except LayoutError:
            continue
        out.append((f"{name} ({span}-byte rows)", f"Sw<{b},{m},{s}>"))
    return out


def parse_access(text: str, vector: int = 1, num: int = 4) -> dict[str, Any]:
    """The page's ``access=kind:arg`` form -> the access dict of ``algebra.banks.bank_access``.

    ``column:3``, ``row:0``, ``ldmatrix:0,8`` (first row, first column), ``offsets:0,64,128``,
    ``thread_layout:(8,4):(4,1)`` (thread t reads the 1-D coordinate thr(t))."""
    check_vector(vector, 1)  # the element size is checked with it in analyze
    kind, _, arg = (text or "column:0").strip().partition(":")
    kind, arg = kind.strip().lower(), arg.strip()
    if kind not in KINDS:
        raise LayoutError(f"access: unknown kind {kind!r}; one of {', '.join(KINDS)}")
    try:
        if kind in ("column", "row"):
            return {"kind": kind, "index": int(arg or 0), "vector": vector}
        if kind == "ldmatrix":
            r0, _, c0 = arg.partition(",")
            return {"kind": kind, "num": num, "row": int(r0 or 0), "col": int(c0 or 0)}
        if kind == "offsets":
            return {"kind": kind, "offsets": [int(x) for x in arg.replace(" ", "").split(",") if x], "vector": vector}
    except ValueError:
        raise LayoutError(f"access: {text!r} is not kind:integer(s), e.g. column:0 or ldmatrix:0,8") from None
    return {"kind": kind, "layout": _thread_layout(arg or "32:1", "access: thread layout"), "vector": vector}


def _thread_layout(text: str, what: str) -> str:
    """A thread layout (thread t reads the vector at its 1-D coordinate thr(t)): plain, integer strides."""
    return str(parse_layout(text, what, plain=True, offsets=True))


def access_dict(kind: str, index: Any, vector: int, num: int, layout: str | None) -> dict[str, Any]:
    """The JSON API's access object -> the access dict of ``algebra.banks.bank_access``."""
    if kind in ("column", "row"):
        if not isinstance(index, int):
            raise LayoutError(f"access.index: {kind} takes one integer")
        return {"kind": kind, "index": index, "vector": vector}
    if kind == "ldmatrix":
        r0, c0 = (index, 0) if isinstance(index, int) or index is None else (list(index) + [0, 0])[:2]
        if not all(isinstance(x, int) for x in (r0 or 0, c0)):
            raise LayoutError("access.index: ldmatrix takes a first row or [row, column]")
        return {"kind": kind, "num": num, "row": r0 or 0, "col": c0}
    if kind == "offsets":
        items = [index] if isinstance(index, int) else list(index or [])
        if not items:
            raise LayoutError("access.index: offsets needs one element offset or [row, column] per thread")
        return {"kind": kind, "offsets": items, "vector": vector}
    return {"kind": kind, "layout": _thread_layout(layout or "32:1", "access.layout"), "vector": vector}


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
        with guard("swizzle"):
            swz = A.parse(swizzle.strip())
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
        bits_b = [(int(c), _bitclass(sw, width - 1 - k, True)) for k, c in enumerate(format(before, f"0{width}b"))]
        bits_a = [(int(c), _bitclass(sw, width - 1 - k, False)) for k, c in enumerate(format(after, f"0{width}b"))]
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
    conflict-free on ``lay``, or None: the lab's default "swizzled" column is one a TMA / wgmma tile can use."""
    for _label, sw in reversed(swizzle_presets(element_bytes)):
        try:
            if analyze(str(lay), sw, element_bytes, access).ways == 1:
                return sw
        except LayoutError:
            continue
    return None


def check_vector(vector: int, element_bytes: int) -> None:
    """Refuse a per-thread width over one 128-bit access (LayoutError naming the widest legal width)."""
    if vector < 1 or vector & (vector - 1) or vector * element_bytes > 16:
        widest = max(1, 16 // element_bytes)
        raise LayoutError(f"per thread: {vector} elements of {element_bytes} bytes is {vector * element_bytes * 8} "
                          f"bits; a shared-memory access is 8 to 128 bits, so with {element_bytes}-byte elements "
                          f"pick 1 to {widest} elements (a power of two)")


def vector_widths(element_bytes: int) -> list[int]:
    """The per-thread widths (elements) of a legal access: powers of two up to 16 bytes."""
    return [v for v in (1, 2, 4, 8, 16) if v * element_bytes <= 16]


def compare(layout_text: str, swizzle: str | None, element_bytes: int, access: dict[str, Any]) -> list[dict]:
    """Naive (no swizzle), padded (the smallest padding that is conflict-free) and swizzled (the given swizzle, or
    the first conflict-free one) versions of the same access, each with its analysis or the reason it is absent."""
    lay, swz = _split(layout_text, swizzle)
    out: list[dict[str, Any]] = []
    base = analyze(str(lay), None, element_bytes, access)
    out.append({"title": "naive", "layout": str(lay), "swizzle": None, "view": base, "why": ""})
    try:
        with guard("padding"):
            fix = B.padding_fix(lay, element_bytes, access)
        if fix is None:
            out.append({"title": "padded", "view": None, "why": "no padding up to one bank line removes the conflict"})
        else:
            unit = "element" if fix.padding == 1 else "elements"
            out.append({"title": f"padded (+{fix.padding} {unit} per row)", "layout": str(fix.layout),
                        "swizzle": None, "view": analyze(str(fix.layout), None, element_bytes, access), "why": ""})
    except LayoutError as exc:
        out.append({"title": "padded", "view": None, "why": str(exc)})
    sw_text = str(swz) if swz is not None else _preset_fix(lay, element_bytes, access)
    why = "no Sw<B,M,S> with B <= 3 removes the conflict"
    if sw_text is None and A.size(lay) <= MAX_CELLS:
        try:
            with guard("swizzle search"):  # bounded: B.MAX_SWIZZLE_CANDIDATES bank maps, B.MAX_CLOSURE_CHECKS passes
                best = B.best_swizzle_fix(lay, element_bytes, access, max_bits=3)
        except LayoutError as exc:  # a cap ended the search: say so, not "none exists"
            best, why = None, str(exc)
        sw_text = str(A.Swizzle(*best.swizzle)) if best else None
    if sw_text is None:
        out.append({"title": "swizzled", "view": None, "why": why})
    else:
        out.append({"title": f"swizzled ({sw_text})", "layout": str(lay), "swizzle": sw_text,
                    "view": analyze(str(lay), sw_text, element_bytes, access), "why": ""})
    return out
