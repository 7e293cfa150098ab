"""The swizzle & banks lab's inputs: element sizes, swizzle presets per element size, and the access forms of the page
(``access=kind:arg`` with ``vector``, ``num``, ``trans``) and of ``POST /api/banks``, turned into the access dicts of
``algebra.banks.bank_access``; and what an ldmatrix access reads and delivers, in words and per lane."""

from __future__ import annotations

from typing import Any

from algebra import LayoutError, hopper
from algebra.hw.bank_access import ldmatrix_arrangement, ldmatrix_rows
from app.services.layouts import parse_layout

KINDS = ("column", "row", "offsets", "ldmatrix", "thread_layout")
ELEMENT_TYPES = [(1, "1 B (int8, fp8)"), (2, "2 B (fp16, bf16)"), (4, "4 B (fp32)"), (8, "8 B (fp64)"),
                 (16, "16 B (a 128-bit vector)")]
LDMATRIX_NUMS = (1, 2, 4)


def swizzle_presets(element_bytes: int) -> list[tuple[str, str]]:
    """(label, Sw<B,M,S> on element offsets) for the 32B / 64B / 128B swizzle modes of this element size.

    Post-condition: each is ``Sw<B, 4 - log2(element_bytes), 3>`` (the byte swizzle Sw<B,4,3> on elements), B = 1..3,
    narrowest first; empty where no mode exists (none today: 1..16-byte elements all have one)."""
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


def all_swizzle_presets(element_types: list[tuple[int, str]] | None = None) -> dict[str, list[list[str]]]:
    """``{element_bytes: [[label, Sw<B,M,S>], ...]}`` for every element size: the page switches its presets to the
    element size picked, even while an analysis fails (static/banks.js)."""
    return {str(e): [list(p) for p in swizzle_presets(e)] for e, _ in (element_types or ELEMENT_TYPES)}


def parse_access(text: str, vector: int = 1, num: int = 4, trans: bool = False) -> dict[str, Any]:
    """The page's ``access=kind:arg`` form -> the access dict of ``algebra.banks.bank_access``.

    ``column:3``, ``row:0``, ``ldmatrix:0,8`` (first row, first column; ``num`` matrices, ``trans``),
    ``offsets:0,64,128``, ``thread_layout:(8,4):(4,1)`` (thread t reads the 1-D coordinate thr(t))."""
    check_vector(vector, 1)  # the element size is checked with it in analyze
    kind, _, arg = (text or "column:0").strip().partition(":")
    kind, arg = kind.strip().lower(), arg.strip()
    if kind not in KINDS:
        raise LayoutError(f"access: unknown kind {kind!r}; one of {', '.join(KINDS)}")
    try:
        if kind in ("column", "row"):
            return {"kind": kind, "index": _whole(arg or "0"), "vector": vector}
        if kind == "ldmatrix":
            r0, _, c0 = arg.partition(",")
            return _ldmatrix(num, _whole(r0.strip() or "0"), _whole(c0.strip() or "0"), trans)
        if kind == "offsets":
            return {"kind": kind, "offsets": [_whole(x) for x in arg.replace(" ", "").split(",") if x],
                    "vector": vector}
    except ValueError:
        raise LayoutError(f"access: {text!r} is not kind:integer(s), e.g. column:0 or ldmatrix:0,8") from None
    return {"kind": kind, "layout": _thread_layout(arg or "32:1", "access: thread layout"), "vector": vector}


def _whole(text: str) -> int:
    """A whole number as typed in the access field: ASCII digits with an optional minus sign, at most 40 of them
    (``int()`` alone would also read ``1_0``, ``+3`` and other scripts' digits); else ValueError."""
    body = text[1:] if text.startswith("-") else text
    if not (body.isascii() and body.isdigit() and len(body) <= 40):
        raise ValueError(text)
    return int(text)


def _ldmatrix(num: int, row: int, col: int, trans: bool) -> dict[str, Any]:
    if num not in LDMATRIX_NUMS:
        raise LayoutError(f"ldmatrix: .x{num} does not exist; num is 1, 2 or 4")
    return {"kind": "ldmatrix", "num": num, "row": row, "col": col, "trans": bool(trans)}


def _thread_layout(text: str, what: str) -> str:
    """A thread layout (thread t reads the vector at its 1-D coordinate thr(t)): plain, integer strides."""
    return str(parse_layout(text, what, plain=True, offsets=True))


def access_dict(kind: str, index: Any, vector: int, num: int, layout: str | None,
                trans: bool = False) -> dict[str, Any]:
    """The JSON API's access object -> the access dict of ``algebra.banks.bank_access``."""
    if kind in ("column", "row"):
        if not isinstance(index, int):
            raise LayoutError(f"access.index: {kind} takes one integer")
        return {"kind": kind, "index": index, "vector": vector}
    if kind == "ldmatrix":
        r0, c0 = (index, 0) if isinstance(index, int) or index is None else (list(index) + [0, 0])[:2]
        if not all(isinstance(x, int) for x in (r0 or 0, c0)):
            raise LayoutError("access.index: ldmatrix takes a first row or [row, column]")
        return _ldmatrix(num, r0 or 0, c0, trans)
    if kind == "offsets":
        items = [index] if isinstance(index, int) else list(index or [])
        if not items:
            raise LayoutError("access.index: offsets needs one element offset or [row, column] per thread")
        return {"kind": kind, "offsets": items, "vector": vector}
    return {"kind": kind, "layout": _thread_layout(layout or "32:1", "access.layout"), "vector": vector}


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


def ldmatrix_story(access: dict[str, Any], rows: int, element_bytes: int) -> dict[str, Any] | None:
    """What an ldmatrix access reads and what each lane receives, for the page: ``{"text", "lanes"}`` or None for
    another kind. ``lanes[t]``: the (row, column) of the 16-byte row lane t addresses, and the two 16-bit elements
    of matrix 0 it receives (``trans``: a column pair of the matrix instead of a row pair).

    Post-condition: the row addresses are those of ``algebra.hw.bank_access.ldmatrix_rows`` (the bank map's)."""
    if access.get("kind") != "ldmatrix":
        return None
    num, r0, c0, trans = int(access["num"]), int(access["row"]), int(access["col"]), bool(access.get("trans"))
    per_row = 16 // element_bytes if 16 % element_bytes == 0 else 1
    arrange = ldmatrix_arrangement(num, rows, access.get("arrange"))
    addr = ldmatrix_rows(num, r0, c0, per_row, arrange)
    where = ", ".join(f"{m}: rows {addr[8 * m][0]}..{addr[8 * m][0] + 7}, columns {addr[8 * m][1]}.."
                      f"{addr[8 * m][1] + per_row - 1}" for m in range(num))
    if arrange == "row" and num > 1:
        placed = f"the tile has {rows} rows, so the {num} matrices sit side by side along rows {r0}..{r0 + 7}"
    elif num > 1:
        placed = "matrix m sits 8 rows down for odd m and one 16-byte row to the right for m >= 2 (an MMA operand's "\
                 "16 x 16 fragment)"
    else:
        placed = "one matrix"
    text = (f"ldmatrix.sync.aligned.m8n8.x{num}{'.trans' if trans else ''}.shared.b16: lanes 8m..8m+7 give the "
            f"addresses of the 8 rows (16 bytes each) of matrix m ({where}); {placed}. Each matrix is one phase of "
            "8 row reads. " + ("With .trans each lane receives a column pair of every matrix instead of a row pair: "
                               "the same rows are read, so the banks and wavefronts are the same."
                               if trans else "Add .trans to deliver columns instead of rows: the rows read, and so "
                               "the banks, stay the same."))
    lanes = []
    for t in range(32):
        i, w = t // 4, t % 4
        got = [(2 * w, i), (2 * w + 1, i)] if trans else [(i, 2 * w), (i, 2 * w + 1)]
        row = addr[t] if t < len(addr) else None
        lanes.append({"lane": t, "addresses": row, "receives": got})
    return {"text": text, "lanes": lanes, "arrange": arrange, "trans": trans, "num": num}
