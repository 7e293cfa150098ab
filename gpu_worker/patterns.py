"""From a shared-memory tile layout and an access pattern to the kernel's address table and the model's prediction.

Standard library plus ``algebra`` only, so the stand-alone scripts in ``bench/`` can use it on a bare GPU host.

The tile is ``rows x cols`` elements of ``element_bytes`` bytes; its layout maps a logical coordinate ``(r, c)`` to an
element offset in shared memory (CuTe notation; a swizzle composes on the offset, ``Sw<B,M,S> o (R,C):(C,1)``).
An access is one warp-wide instruction: 32 lane addresses (ordinary loads) or 8 row addresses per 8x8 matrix
(ldmatrix). The kernel repeats ``nacc`` accesses; access ``a`` of each pattern is:

* ``column`` (index c0): lane t reads ``(t mod R, (c0 + a + t div R) mod C)`` -- with R >= 32 simply column c0 + a.
* ``row`` (index r0): lane t reads ``((r0 + a + t div C) mod R, t mod C)``.
* ``ldmatrix`` x1/x2/x4 (index k0): the tile is cut into 8x8 blocks numbered column-major; matrix m of access a is
  block ``k0 + a*num + m``; lane ``8m + i`` gives the address of that block's row i. Each row must be 8 contiguous,
  16-byte aligned b16 elements (any padding or swizzle that keeps 16-byte chunks whole, e.g. Sw<3,3,3>, qualifies).
* ``offsets``: 32 entries, one per lane: an int is a physical element offset, ``[r, c]`` a logical coordinate.
* ``thread_layout``: a CuTe layout T of size 32; lane t reads logical index T(t) of the tile (CuTe's column-major
  1-D coordinate: ``(T(t) mod R, T(t) div R)``).

``offsets`` and ``thread_layout`` issue the same addresses for every one of the ``nacc`` accesses.
"""

from __future__ import annotations

import re
from typing import Any

MAX_ELEMENTS = 1 << 16          # rows * cols of a tile (every cell is evaluated)
MAX_SMEM_BYTES = 200 * 1024     # footprint of one tile (Hopper allows 227 KB per block)
MAX_LAYOUT_CHARS = 4000         # CuTe notation of a tile or thread layout
MAX_MODES = 64                  # flat modes (leaves of the shape) of a tile or thread layout
SWIZZLE_RE = re.compile(r"^\s*Sw<\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*>\s*$")
ACCESS_KINDS = ("column", "row", "ldmatrix", "offsets", "thread_layout")
VARIANTS = ("naive", "padded", "swizzle", "custom")


class PatternError(ValueError):
    """A layout or access the kernel cannot run; the message names the condition (and the cap, for caps)."""


def parse_swizzle(text: str) -> tuple[int, int, int]:
    """``"Sw<B,M,S>"`` -> (B, M, S); raises PatternError unless 0 <= B, M, S <= 16 and S >= B (CuTe's rule |S| >= B)."""
    m = SWIZZLE_RE.match(text or "")
    if not m:
        raise PatternError(f"swizzle must look like Sw<B,M,S>, got {text!r}")
    b, mm, s = (int(x) for x in m.groups())
    if max(b, mm, s) > 16:
        raise PatternError(f"swizzle {text}: B, M and S are capped at 16")
    if s < b:
        raise PatternError(f"swizzle {text}: needs S >= B (the bits XORed in must not overlap the bits they modify)")
    return b, mm, s


def layout_text(variant: str, rows: int, cols: int, pad: int = 0, swizzle: str | None = None,
                custom: str | None = None) -> str:
    """CuTe notation of the tile layout for a variant: naive ``(R,C):(C,1)``, padded ``(R,C):(C+P,1)``,
    swizzle ``Sw<B,M,S> o (R,C):(C,1)``, custom as given."""
    if variant == "naive":
        return f"({rows},{cols}):({cols},1)"
    if variant == "padded":
        return f"({rows},{cols}):({cols + pad},1)"
    if variant == "swizzle":
        b, m, s = parse_swizzle(swizzle or "")
        return f"Sw<{b},{m},{s}> o ({rows},{cols}):({cols},1)"
    if variant == "custom":
        if not custom:
            raise PatternError("custom variant needs a layout in CuTe notation")
        return custom.strip()
    raise PatternError(f"layout variant must be one of {', '.join(VARIANTS)}, not {variant!r}")


def _algebra():
    try:
        import algebra
        from algebra import banks
    except ImportError as exc:  # pragma: no cover - the package ships with the repo
        raise PatternError(f"the algebra package is unavailable: {exc}") from None
    if not hasattr(algebra, "parse"):
        raise PatternError("algebra.parse is not available in this checkout")
    return algebra, banks


def parse_layout(A, text: str, what: str = "layout") -> Any:
    """``A.parse(text)`` within the caps every layout of a job meets, checked in this order, each before any work
    that it bounds: at most MAX_LAYOUT_CHARS characters (before parsing), at most MAX_MODES flat modes (before any
    cell is evaluated). Raises PatternError naming the cap."""
    text = text or ""
    if len(text) > MAX_LAYOUT_CHARS:
        raise PatternError(f"{what}: {len(text):,} characters is over the cap of {MAX_LAYOUT_CHARS:,} characters")
    try:
        layout = A.parse(text)
    except (ValueError, RecursionError) as exc:
        raise PatternError(f"{what} {text[:80]!r}: {str(exc)[:300]}") from None
    inner = getattr(layout, "layout_b", layout)
    shape = getattr(inner, "shape", None)
    if shape is not None and not callable(shape):
        modes = len(A.flatten(shape)) if isinstance(shape, tuple) else 1
        if modes > MAX_MODES:
            raise PatternError(f"{what} {text[:40]!r}...: {modes:,} modes is over the cap of {MAX_MODES} modes "
                               "(coalesce it, or drop its size-1 modes)")
    return layout


def tile_offsets(text: str, rows: int | None = None, cols: int | None = None) -> tuple[str, int, int, list[list[int]]]:
    """Evaluate a rank-2 layout on every coordinate. Post-condition: returns (canonical text, R, C, table) with
    ``table[r][c] == L((r, c))`` for r < R, c < C, every value >= 0 and no two equal (else the refusal names two
    coordinates at one offset). Before any cell is evaluated: the caps of
    ``parse_layout`` (text length, modes) and the cell count (R * C <= MAX_ELEMENTS, computed from the shape)."""
    A, _ = _algebra()
    from algebra.core.layout import collision

    layout = parse_layout(A, text)
    shape = _shape_of(layout)
    if not isinstance(shape, tuple) or len(shape) != 2:
        raise PatternError(f"layout {text!r} must have rank 2 (rows, cols); its shape is {shape}")
    r_, c_ = (A.size(A.Layout(m)) if isinstance(m, tuple) else int(m) for m in shape)
    if rows is not None and (r_, c_) != (rows, cols):
        raise PatternError(f"layout {text!r} has shape {r_}x{c_}, expected {rows}x{cols}")
    if r_ * c_ > MAX_ELEMENTS:
        raise PatternError(f"tile of {r_}x{c_} elements is over the cap of {MAX_ELEMENTS} elements")
    if not _offset_strides(layout):  # read from the strides, before a cell is evaluated
        raise PatternError(f"layout {text!r} maps coordinates to coordinates, not to offsets")
    # L((r, c)) == L(r + c * R): CuTe's 1-D coordinate of (r, c) in a rank-2 shape; every offset mode by mode
    try:
        flat = [int(o) for o in A.offsets(layout)]
    except TypeError:  # basis strides (1@0): the layout maps to coordinates
        raise PatternError(f"layout {text!r} maps coordinates to coordinates, not to offsets") from None
    table = [flat[r::r_] for r in range(r_)]
    low = min(flat)
    if low < 0:
        raise PatternError(f"layout {text!r} maps a coordinate to a negative offset ({low})")
    pair = collision(flat)
    if pair is not None:  # L((r, c)) == L(r + c * R)
        (r0, c0), (r1, c1) = ((i % r_, i // r_) for i in pair)
        raise PatternError(f"layout {text!r} is not injective: coordinates ({r0}, {c0}) and ({r1}, {c1}) both map "
                           f"to offset {flat[pair[0]]}, so the tile does not hold one element per offset and the "
                           "measurement would mean nothing")
    return str(layout), r_, c_, table


def _offset_strides(layout: Any) -> bool:
    """Whether every layout in ``layout`` (itself, or the parts of a composed layout) has integer strides: no basis
    strides (1@0), which map coordinates to coordinates."""
    from algebra.core.checks import int_strides

    parts = (layout, getattr(layout, "layout_a", None), getattr(layout, "layout_b", None),
             getattr(layout, "layout", None), getattr(layout, "inner", None), getattr(layout, "outer", None))
    return all(int_strides(p) for p in parts if p is not None and not callable(getattr(p, "stride", None))
               and getattr(p, "stride", None) is not None)


def _shape_of(layout: Any) -> Any:
    for obj in (layout, getattr(layout, "layout_b", None), getattr(layout, "layout", None),
                getattr(layout, "inner", None), getattr(layout, "outer", None)):
        shape = getattr(obj, "shape", None)
        if shape is not None and not callable(shape):
            return shape
    raise PatternError(f"layout {str(layout)[:80]!r} is not a tile layout: give shape:stride, optionally swizzled "
                       "(Sw<B,M,S> o shape:stride)")


def _lane_coords(access: dict, a: int, rows: int, cols: int) -> list[tuple[int, int]]:
    kind = access["kind"]
    idx = int(access.get("index", 0))
    if kind == "column":
        c = idx + a
        return [(t % rows, (c + t // rows) % cols) for t in range(32)]
    if kind == "row":
        r = idx + a
        return [((r + t // cols) % rows, t % cols) for t in range(32)]
    raise AssertionError(kind)


def plan_smem(spec: dict) -> dict:
    """Address table and prediction for one smem benchmark.

    ``spec`` keys: element_bytes, rows, cols, variant, pad, swizzle, layout (custom), access (dict with ``kind`` and
    its fields: index, num, trans, offsets, layout), nacc. Post-condition: ``addresses`` has ``nacc`` rows of 32
    byte offsets, every ``addresses[a][t] + width <= footprint_bytes``; ``prediction.per_access[a]`` is
    ``algebra.banks.analyze`` of row a (ldmatrix: its 8*num row addresses); ``layout`` is the notation that ran.
    """
    A, banks = _algebra()
    eb = int(spec.get("element_bytes", 4))
    nacc = int(spec.get("nacc", 16))
    access = dict(spec.get("access") or {"kind": "column"})
    kind = access.get("kind", "column")
    if kind not in ACCESS_KINDS:
        raise PatternError(f"access kind must be one of {', '.join(ACCESS_KINDS)}, not {kind!r}")
    text = layout_text(spec.get("variant", "naive"), int(spec.get("rows", 32)), int(spec.get("cols", 32)),
                       int(spec.get("pad", 0)), spec.get("swizzle"), spec.get("layout"))
    rows_cols = (None, None) if spec.get("variant") == "custom" else (int(spec["rows"]), int(spec["cols"]))
    # every layout of the job within its caps before any of them is enumerated
    t_layout = parse_layout(A, access.get("layout") or "", "thread layout") if kind == "thread_layout" else None
    canon, rows, cols, table = tile_offsets(text, *rows_cols)
    footprint = (max(max(r) for r in table) + 1) * eb
    if kind == "ldmatrix":
        num = int(access.get("num", 4))
        if eb != 2:
            raise PatternError("ldmatrix reads b16 elements: element_bytes must be 2")
        if num not in (1, 2, 4):
            raise PatternError(f"ldmatrix num must be 1, 2 or 4, not {num}")
        if rows % 8 or cols % 8:
            raise PatternError(f"ldmatrix needs rows and cols divisible by 8, tile is {rows}x{cols}")
    if kind in ("column", "row", "ldmatrix"):  # later accesses wrap around the tile; the first one is in it
        what, count = {"column": ("column", cols), "row": ("row", rows),
                       "ldmatrix": ("8x8 block", (rows // 8) * (cols // 8))}[kind]
        idx = int(access.get("index", 0))
        if idx >= count:
            raise PatternError(f"access.index: {kind} {idx} is outside the {rows}x{cols} tile, whose {what}s are "
                               f"numbered 0 to {count - 1}")
    footprint = (footprint + 15) // 16 * 16
    if footprint > MAX_SMEM_BYTES:
        raise PatternError(f"tile footprint {footprint} bytes is over the cap of {MAX_SMEM_BYTES} bytes")

    addresses: list[list[int]] = []
    coords: list[list[Any]] = []
    for a in range(nacc):
        if kind in ("column", "row"):
            crd = _lane_coords(access, a, rows, cols)
            offs = [table[r][c] for r, c in crd]
        elif kind == "ldmatrix":
            crd, offs = _ldmatrix_rows(access, a, rows, cols, table)
        elif kind == "offsets":
            crd, offs = _explicit(access, rows, cols, table, footprint // eb)
        else:
            crd, offs = _thread_layout(A, t_layout, access, rows, cols, table)
        addresses.append([o * eb for o in offs])
        coords.append(crd)

    width = 16 if kind == "ldmatrix" else eb
    per_access = []
    for addrs in addresses:
        if kind == "ldmatrix":
            n = 8 * int(access.get("num", 4))
            res = banks.analyze(addrs[:n], kind="ldmatrix")
        else:
            res = banks.analyze(addrs, access_bytes=eb)
        per_access.append({"ways": res.ways, "wavefronts": res.wavefronts, "phases": list(res.phases),
                           "banks": list(res.banks)})
    wf = [p["wavefronts"] for p in per_access]
    return {
        "layout": canon,
        "rows": rows,
        "cols": cols,
        "element_bytes": eb,
        "access": access,
        "nacc": nacc,
        "footprint_bytes": footprint,
        "access_width_bytes": width,
        "addresses": addresses,
        "coords": coords[0],
        "prediction": {
            "wavefronts_per_access": sum(wf) / len(wf),
            "max_ways": max(p["ways"] for p in per_access),
            "min_wavefronts": min(wf),
            "max_wavefronts": max(wf),
            "per_access": per_access,
        },
    }


def _ldmatrix_rows(access: dict, a: int, rows: int, cols: int, table: list[list[int]]):
    num = int(access.get("num", 4))
    nbr, nbc = rows // 8, cols // 8
    crd: list[Any] = []
    offs: list[int] = []
    for m in range(num):
        k = (int(access.get("index", 0)) + a * num + m) % (nbr * nbc)
        r0, c0 = 8 * (k % nbr), 8 * (k // nbr)
        for i in range(8):
            base = table[r0 + i][c0]
            row = [table[r0 + i][c0 + j] for j in range(8)]
            if row != list(range(base, base + 8)) or (base * 2) % 16:
                raise PatternError(f"ldmatrix row ({r0 + i}, {c0}..{c0 + 7}) is not 8 contiguous b16 elements at a "
                                   f"16-byte-aligned address (offsets {row}); pad by multiples of 8 elements or use a "
                                   "swizzle with M >= 3")
            crd.append((r0 + i, c0))
            offs.append(base)
    n = 8 * num
    return [crd[t % n] for t in range(32)], [offs[t % n] for t in range(32)]


def _explicit(access: dict, rows: int, cols: int, table: list[list[int]], limit: int):
    items = access.get("offsets") or []
    if len(items) != 32:
        raise PatternError(f"offsets access needs 32 entries (one per lane), got {len(items)}")
    crd, offs = [], []
    for lane, item in enumerate(items):
        if isinstance(item, int):
            if not 0 <= item < limit:
                raise PatternError(f"lane {lane}: offset {item} is outside the tile's {limit} elements")
            crd.append(item)
            offs.append(item)
        else:
            r, c = (int(x) for x in item)
            if not (0 <= r < rows and 0 <= c < cols):
                raise PatternError(f"lane {lane}: coordinate ({r}, {c}) is outside the {rows}x{cols} tile")
            crd.append((r, c))
            offs.append(table[r][c])
    return crd, offs


def _thread_layout(A, t_layout: Any, access: dict, rows: int, cols: int, table: list[list[int]]):
    text = access.get("layout") or ""
    if not (callable(t_layout) and hasattr(t_layout, "shape")):
        raise PatternError(f"thread layout {text!r} is not a layout such as (32,1):(1,0)")
    if A.size(t_layout) != 32:
        raise PatternError(f"thread layout {text!r} must have size 32 (one entry per lane), has {A.size(t_layout)}")
    crd, offs = [], []
    for t in range(32):
        try:
            i = int(t_layout(t))
        except TypeError:  # basis strides (1@0)
            raise PatternError(f"thread layout {text!r} maps lanes to coordinates, not to 1-D indices") from None
        if not 0 <= i < rows * cols:
            raise PatternError(f"thread layout maps lane {t} to index {i}, outside the {rows}x{cols} tile")
        r, c = i % rows, i // rows
        crd.append((r, c))
        offs.append(table[r][c])
    return crd, offs


def transpose_prediction(tile: int, element_bytes: int, pad: int, swizzle: str) -> dict:
    """Bank model of the shared-memory phases of the tiled transpose kernels, for each of the tiled, padded and
    swizzled tile layouts: the first warp's row write and its column read. fp32: lane t writes (0, t) and reads
    (t, 0), 4 bytes each. fp16: the kernels move 4-byte words (two halves); lane t writes word t of the tile in row
    order, i.e. elements (t // (tile/2), 2 (t % (tile/2))), and reads the word at (t, 0).
    Post-condition: one entry per variant with ``layout``, ``write`` and ``read`` (ways, wavefronts) and
    ``access_bytes``."""
    _, banks = _algebra()
    words = tile // 2
    if element_bytes == 2:
        write = [(t // words, 2 * (t % words)) for t in range(32)]
    else:
        write = [(0, t) for t in range(32)]
    read = [(t, 0) for t in range(32)]
    out = {}
    for variant, text in (("tiled", layout_text("naive", tile, tile)),
                          ("padded", layout_text("padded", tile, tile, pad)),
                          ("swizzled", layout_text("swizzle", tile, tile, swizzle=swizzle))):
        canon, _, _, table = tile_offsets(text, tile, tile)
        entry: dict[str, Any] = {"layout": canon, "access_bytes": 4}
        for phase, crd in (("write", write), ("read", read)):
            res = banks.analyze([table[r][c] * element_bytes for r, c in crd], access_bytes=4)
            entry[phase] = {"ways": res.ways, "wavefronts": res.wavefronts}
        out[variant] = entry
    return out
