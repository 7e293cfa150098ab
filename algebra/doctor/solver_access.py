"""The layout doctor's inputs: a shared-memory tile and the warp accesses that touch it, and their cost under a
candidate placement of the tile's elements (the bank model of ``algebra.hw.banks``, CONTRACT §3).

Conventions (those of ``algebra.hw.bank_access``): the tile is viewed as rows x cols (mode 0 x the rest); the
1-D coordinate of element (r, c) is ``r + rows * c``; a vector access of v elements starting at (r, c) covers
(r, c), (r, c + 1), ..., (r, c + v - 1) and must land on v consecutive, v-aligned offsets to be one instruction.

Access kinds (``kind``):

* ``offsets``: ``offsets`` = one ``[row, col]`` per lane (1..32 lanes), ``vector`` elements each; an integer entry
  is an element offset of the tile as given (the coordinate stored there).
* ``row``: lane t reads ``vector`` elements from (index, start + t * vector); at most ``count`` (32) lanes, one row.
* ``column``: lane t reads (start + t, index); at most ``count`` (32) lanes.
* ``thread_layout``: lane t reads ``vector`` elements from 1-D coordinate ``layout(t)`` (32 lanes): the tile's
  column-major coordinate ``row + rows * col``, CuTe's coordinate of the tile, not its offset. With
  ``"of": "offset"`` lane t reads at element offset ``layout(t)`` of the tile as given instead (so ``(4,8):(64,8)``
  on a row-major 64-column tile is lane (i, j) at row i, column 8j). A coordinate-read layout whose lanes break
  their vectors is refused with the convention spelled out and, where one exists, its coordinate-read equivalent.
* ``ldmatrix``: ``.x{num}`` (1, 2, 4), first matrix at ``index`` = [row, col] (or ``row``/``col``); matrix m covers
  rows r0 + 8 (m % 2) + i and the 16 bytes from column c0 + (m // 2) * 16 / element_bytes; ``trans`` moves
  registers only, the rows read are the same.
* ``stmatrix``: ldmatrix's rows written (``op`` store, the same bank model: one phase per 8x8 matrix).
* ``tma``: a box written by the copy engine (``box`` = [rows, cols]); no LSU wavefronts, but the fix must be a
  layout TMA writes (a 32/64/128-byte swizzle mode or no swizzle on a dense box).
* ``wgmma``: an operand read through a matrix descriptor (``operand`` A/B, ``major`` K/MN); no LSU wavefronts, but
  the fix must be a GMMA smem atom tiled over the tile.

``op`` is ``load`` (default) or ``store``: the bank model is the same; the GPU lab issues ld.shared / st.shared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from algebra.core import inttuple as it
from algebra.core.errors import LayoutError
from algebra.core.layout import Layout, collision, offsets
from algebra.core.notation import parse
from algebra.hw.bank_access import ldmatrix_rows, modes_2d
from algebra.hw.banks import LANES_PER_PHASE
from algebra.hw.banks import phase_costs as phase_cost  # the one bank model's per-phase cost

ELEMENT_BYTES = (1, 2, 4, 8, 16)
MAX_ELEMENTS = 1 << 16          # 256 x 256: every offset of the tile is enumerated
MAX_SPAN_BYTES = 1 << 24        # 16 MiB from offset 0 to the last element: far past any GPU's shared memory
MAX_ACCESSES = 8
WARP = 32
KINDS = ("offsets", "row", "column", "thread_layout", "ldmatrix", "stmatrix", "tma", "wgmma")
MATRIX_KINDS = ("ldmatrix", "stmatrix")
#: The keys each access kind reads (besides ``kind``, ``name`` and ``op``); any other key is refused by its name.
KEYS = {"offsets": ("offsets", "index", "vector"), "row": ("index", "start", "count", "vector"),
        "column": ("index", "start", "count", "vector"), "thread_layout": ("layout", "of", "vector"),
        "ldmatrix": ("index", "row", "col", "num", "trans"), "stmatrix": ("index", "row", "col", "num", "trans"),
        "tma": ("box",), "wgmma": ("operand", "major")}


class SolveError(LayoutError):
    """Bad solver input; the message starts with the field path (``accesses[1].num: ...``)."""


@dataclass(frozen=True)
class Tile:
    """The tile as given: its layout, the rows x cols view and every element's offset (``table[r + rows * c]``).

    Post-condition: ``compact`` iff the offsets are exactly ``range(size)``; ``nbits`` is log2(size) when
    ``compact`` and size is a power of two, else None; ``lead`` is 0 for a flat row-major ``(R,C):(ld,1)``, 1 for a
    flat column-major ``(R,C):(1,ld)`` (the mode that padding stretches), None otherwise."""

    text: str
    layout: Any
    element_bytes: int
    rows: int
    cols: int
    table: list[int]
    compact: bool
    nbits: int | None
    lead: int | None
    max_offset: int = 0

    def offset(self, r: int, c: int) -> int:
        return self.table[r + self.rows * c]

    def vectors_whole(self, vec: int) -> bool:
        """True when every run (r, c) .. (r, c + vec - 1) with c a multiple of vec lies at vec consecutive offsets
        from a multiple of vec in the tile as given (a row-major ``(R,C):(ld,1)``: vec divides ld)."""
        if vec == 1:
            return True
        if self.lead == 0:
            return self.rows == 1 or self.layout.stride[0] % vec == 0
        if vec not in self._whole:
            self._whole[vec] = all(_whole_vector(self.offset, r, c, vec) for r in range(self.rows)
                                   for c in range(0, self.cols - vec + 1, vec))
        return self._whole[vec]

    @cached_property
    def _whole(self) -> dict[int, bool]:
        return {}

    @cached_property
    def descending(self) -> list[int]:
        """The tile's offsets, largest first."""
        return sorted(self.table, reverse=True)

    @cached_property
    def live_bits(self) -> int:
        """The offset bits set in some offset of the tile (the OR of its offsets)."""
        if self.compact:
            return (1 << self.max_offset.bit_length()) - 1
        out = 0
        for o in self.table:
            out |= o
        return out

    @cached_property
    def coordinate_of(self) -> dict[int, tuple[int, int]]:
        """Element offset -> its (row, col) in the tile as given."""
        return {o: (i % self.rows, i // self.rows) for i, o in enumerate(self.table)}

    @property
    def footprint_bytes(self) -> int:
        return (self.max_offset + 1) * self.element_bytes

    @cached_property
    def dense_extent(self) -> int | None:
        """Elements of the contiguous extent when the tile's offsets are exactly a dense row-major (offset
        ``r * cols + c``) or column-major (``r + rows * c``) rows x cols image -- the smem image of a TMA box --
        whatever the layout's shape (``(64,2,2):(1,64,128)`` is the column-major 64 x 4 box); else None. Where
        both hold (one row or one column) the whole tile is one run."""
        if not self.compact:
            return None
        rows, cols, n = self.rows, self.cols, len(self.table)
        if self.lead is not None:  # a flat (R,C):(ld,1) or (R,C):(1,ld): its strides say it
            extent = cols if self.lead == 0 else rows
            return extent if self.layout.stride[self.lead] == extent else None
        t = self.table
        col_major = t[1 % n] == 1 % n and t == list(range(n))
        row_major = (rows == 1 or t[1] == cols) and t == [(i % rows) * cols + i // rows for i in range(n)]
        return max([rows] * col_major + [cols] * row_major, default=None) if rows > 1 and cols > 1 else (
            n if col_major or row_major else None)


@dataclass
class Access:
    """One warp instruction: per lane the (row, col) of its first element, ``vector`` elements each.

    ``kind`` is ``lds`` (ordinary load / store), ``ldmatrix`` / ``stmatrix`` (16-byte row addresses, 8 per matrix)
    or a constraint (``tma`` / ``wgmma``, no lanes)."""

    name: str
    kind: str
    op: str
    lanes: list[tuple[int, int]]
    vector: int
    num: int = 0
    spec: dict = field(default_factory=dict)
    major: str | None = None
    box_inner_bytes: int = 0  # tma: the bytes of the box's contiguous extent (``_tma_box``)

    @property
    def constraint(self) -> bool:
        return self.kind in ("tma", "wgmma")

    @property
    def matrix(self) -> bool:
        """True for ldmatrix / stmatrix: row addresses of 16 bytes, one phase per 8x8 matrix."""
        return self.kind in MATRIX_KINDS

    def access_bytes(self, element_bytes: int) -> int:
        return 16 if self.matrix else self.vector * element_bytes

    def per_phase(self, element_bytes: int) -> int:
        """Lanes per phase: one 8x8 matrix of ldmatrix, else by the access width (CONTRACT §3)."""
        return 8 if self.matrix else LANES_PER_PHASE[self.access_bytes(element_bytes)]

    def cost(self, offsets: list[int], element_bytes: int) -> list[int]:
        """Per-phase wavefronts (``phase_cost``) with lane i's first element at element offset ``offsets[i]``."""
        return phase_cost([o * element_bytes for o in offsets], self.access_bytes(element_bytes),
                          self.per_phase(element_bytes))

    def ideal(self, element_bytes: int) -> int:
        """Fewest wavefronts any placement can give: per phase, the distinct bytes over 128 (at least 1)."""
        if self.constraint:
            return 0
        ab, per = self.access_bytes(element_bytes), self.per_phase(element_bytes)
        return sum(max(1, -(-len(set(self.lanes[s:s + per])) * ab // 128)) for s in range(0, len(self.lanes), per))


def _int(v: Any, where: str, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise SolveError(f"{where}: expected an integer, got {v!r}")
    if not lo <= v <= hi:
        raise SolveError(f"{where}: {v} is outside [{lo}, {hi}]")
    return v


def _parse(text: Any, where: str, example: str) -> Any:
    """The layout written in ``text``; SolveError naming ``where`` when it is empty or does not parse."""
    if not isinstance(text, str) or not text.strip():
        raise SolveError(f"{where}: give the {example}")
    try:
        return parse(text.strip())
    except (LayoutError, ValueError, TypeError, RecursionError) as exc:
        raise SolveError(f"{where}: {exc}") from None


def make_tile(text: str, element_bytes: int) -> Tile:
    """Parse and enumerate the tile. Raises SolveError naming ``tile`` / ``element_bytes`` on bad input or caps."""
    if isinstance(element_bytes, bool) or element_bytes not in ELEMENT_BYTES:
        raise SolveError(f"element_bytes: must be one of {', '.join(map(str, ELEMENT_BYTES))}, not {element_bytes!r}")
    lay = _parse(text, "tile", "tile layout in CuTe notation, e.g. (64,64):(64,1)")
    if not isinstance(lay, Layout):
        raise SolveError("tile: give the unswizzled layout (the solver searches the swizzle), e.g. (64,64):(64,1)")
    if any(not isinstance(d, int) for d in it.flatten(lay.stride)):
        raise SolveError("tile: strides must be integers")
    size = it.product(lay.shape)
    if size > MAX_ELEMENTS:
        raise SolveError(f"tile: {size} elements is over the cap of {MAX_ELEMENTS} (256 x 256)")
    shp = lay.shape
    rows, cols = modes_2d(lay)
    table = offsets(lay)
    if min(table) < 0:
        raise SolveError(f"tile: {lay} reaches offset {min(table)}, below its pointer (a negative stride); the "
                         "doctor lays a tile out from offset 0 up: give it with non-negative strides")
    if (max(table) + 1) * element_bytes > MAX_SPAN_BYTES:
        raise SolveError(f"tile: {lay} spans {(max(table) + 1) * element_bytes} bytes from offset 0 to its last "
                         f"element, over the cap of {MAX_SPAN_BYTES} bytes (16 MiB; shared memory is at most 228 KB "
                         "per SM)")
    pair = collision(table)
    if pair is not None:
        (r0, c0), (r1, c1) = ((i % rows, i // rows) for i in pair)
        raise SolveError(f"tile: {lay} is not injective: coordinates ({r0}, {c0}) and ({r1}, {c1}) both map to offset "
                         f"{table[pair[0]]} (a tile holds one element per offset)")
    compact = max(table) + 1 == size
    nbits = size.bit_length() - 1 if compact and size & (size - 1) == 0 else None
    lead = None
    if it.is_tuple(shp) and len(shp) == 2 and not any(it.is_tuple(x) for x in lay.stride):
        d0, d1 = lay.stride
        lead = 0 if d1 == 1 and d0 >= cols else 1 if d0 == 1 and d1 >= rows else None
    return Tile(str(lay), lay, element_bytes, rows, cols, table, compact, nbits, lead, max(table))


def make_access(spec: Any, i: int, tile: Tile) -> Access:
    """One access from its JSON form (see the module docstring); SolveError names ``accesses[i].<field>``."""
    w = f"accesses[{i}]"
    if not isinstance(spec, dict):
        raise SolveError(f"{w}: expected an object with a kind")
    kind = str(spec.get("kind", "")).lower()
    if kind not in KINDS:
        raise SolveError(f"{w}.kind: {spec.get('kind')!r} is not one of {', '.join(KINDS)}")
    takes = ("kind", "name", "op", *KEYS[kind])
    for key in spec:
        if key not in takes:
            raise SolveError(f"{w}.{str(key)[:40]}: not a key of {kind} accesses; they take {', '.join(takes)}")
    if not isinstance(spec.get("name") or "", str):
        raise SolveError(f"{w}.name: expected text, got {spec['name']!r:.40}")
    name = (spec.get("name") or kind)[:64]
    op = str(spec.get("op", "load")).lower()
    if op not in ("load", "store"):
        raise SolveError(f"{w}.op: load or store, not {spec.get('op')!r}")
    eb, rows, cols = tile.element_bytes, tile.rows, tile.cols
    vec = _int(spec.get("vector", 1), f"{w}.vector", 1, 16)
    if vec & (vec - 1) or vec * eb > 16:
        raise SolveError(f"{w}.vector: {vec} elements of {eb} B is not a 1/2/4/8/16-byte access")
    lanes: list[tuple[int, int]] = []
    if kind == "offsets":
        key = "offsets" if "offsets" in spec or "index" not in spec else "index"  # /api/banks' name for the list
        if "offsets" in spec and "index" in spec:
            raise SolveError(f"{w}.index: give the lanes' entries as offsets (or as index), not both")
        ent = spec[key] if key in spec else None
        if not isinstance(ent, list) or not 1 <= len(ent) <= WARP:
            raise SolveError(f"{w}.{key}: give 1 to 32 [row, col] entries, one per lane")
        for t, e in enumerate(ent):
            if isinstance(e, int) and not isinstance(e, bool):
                if e not in tile.coordinate_of:
                    raise SolveError(f"{w}.{key}[{t}]: offset {e} holds no element of the tile")
                lanes.append(tile.coordinate_of[e])
                continue
            if not isinstance(e, list | tuple) or len(e) != 2:
                raise SolveError(f"{w}.{key}[{t}]: expected [row, col] or an element offset, got {e!r:.40}")
            lanes.append((_int(e[0], f"{w}.{key}[{t}][0]", 0, rows - 1),
                          _int(e[1], f"{w}.{key}[{t}][1]", 0, cols - 1)))
    elif kind in ("row", "column"):  # lane t at (index, start + t * vector) of a row, (start + t, index) of a column
        along, across, step = (cols, rows, vec) if kind == "row" else (rows, cols, 1)
        i = _int(spec.get("index", 0), f"{w}.index", 0, across - 1)
        start = _int(spec.get("start", 0), f"{w}.start", 0, along - 1)
        count = _int(spec.get("count", WARP), f"{w}.count", 1, WARP)
        pos = [start + t * step for t in range(min((along - start) // step, count))]
        lanes = [(i, x) for x in pos] if kind == "row" else [(x, i) for x in pos]
    elif kind == "thread_layout":
        lanes = _thread_lanes(spec, w, tile, vec)
    elif kind in MATRIX_KINDS:
        return _ldmatrix(spec, w, name, tile, kind)
    else:
        return _constraint(spec, kind, w, name, op, tile)
    if not lanes:
        raise SolveError(f"{w}: the access touches no element")
    for t, (r, c) in enumerate(lanes):
        if c + vec > cols:
            raise SolveError(f"{w}: lane {t}'s {vec} elements from ({r}, {c}) run past the {cols} columns")
    return Access(name, "lds", op, lanes, vec, spec=dict(spec))


THREAD_LAYOUT_OF = ("coordinate", "offset")
_RULE = "a thread layout maps lane t to the tile's column-major 1-D coordinate row + {rows}*col, not to an offset"


def _thread_lanes(spec: dict, w: str, tile: Tile, vec: int) -> list[tuple[int, int]]:
    """The (row, col) of each lane's first element of a ``thread_layout`` access (see the module docstring)."""
    of = spec.get("of", "coordinate")
    if of not in THREAD_LAYOUT_OF:
        raise SolveError(f"{w}.of: {str(of)[:20]!r} is not one of coordinate (the tile's column-major 1-D "
                         "coordinate, CuTe's) or offset (an element offset of the tile as given)")
    tl = _parse(spec.get("layout"), f"{w}.layout", "thread layout in CuTe notation, e.g. (8,4):(512,1)")
    if not isinstance(tl, Layout) or it.product(tl.shape) != WARP:
        raise SolveError(f"{w}.layout: must be a layout of size 32 (one entry per lane)")
    rows, cols = tile.rows, tile.cols
    xs = [tl(t) for t in range(WARP)]
    if of == "offset":
        for t, x in enumerate(xs):
            if x not in tile.coordinate_of:
                raise SolveError(f"{w}.layout: lane {t} maps to offset {x}, which holds no element of {tile.text}")
        return [tile.coordinate_of[x] for x in xs]
    for t, x in enumerate(xs):
        if not isinstance(x, int) or not 0 <= x < rows * cols:
            raise SolveError(f"{w}.layout: {_RULE.format(rows=rows)}; lane {t} -> {x}, outside the {rows}x{cols} "
                             f"tile.{_convention(tl, tile)}")
    out = [(x % rows, x // rows) for x in xs]
    for t, (r, c) in enumerate(out):
        if c + vec > tile.cols or not _whole_vector(tile.offset, r, c, vec):
            raise SolveError(f"{w}.layout: {_RULE.format(rows=rows)}; lane {t} -> {xs[t]} = ({r}, {c}), whose {vec} "
                             f"elements are not {vec} consecutive offsets from a multiple of {vec} (offset "
                             f"{tile.offset(r, c)} first).{_convention(tl, tile)}")
    return out


def _whole_vector(place: Callable[[int, int], int], r: int, c: int, vec: int) -> bool:
    """True when (r, c) .. (r, c + vec - 1) lie at ``vec`` consecutive offsets under ``place``, the first a multiple
    of vec (one vector instruction)."""
    o = place(r, c)
    return o % vec == 0 and all(place(r, c + k) == o + k for k in range(1, vec))


def _convention(tl: Any, tile: Tile) -> str:
    """The way out of the convention: the coordinate-read layout that reads what ``tl`` would read as element offsets
    of the tile, when one exists (each stride an offset of the tile and the map linear), and the ``of`` field."""
    text = ""
    where = {o: i for i, o in enumerate(tile.table)}
    flat = it.flatten(tl.stride)
    if all(isinstance(d, int) and d in where for d in flat) and tile.table[0] == 0:
        equiv = Layout(tl.shape, it.unflatten(tuple(where[d] for d in flat), tl.stride))
        if all(where.get(tl(t)) == equiv(t) for t in range(WARP)):
            text = f" As offsets of the tile as stored, {tl} is {equiv} in coordinates;"
    return text + " to give offsets, set \"of\": \"offset\"."


def _ldmatrix(spec: dict, w: str, name: str, tile: Tile, kind: str = "ldmatrix") -> Access:
    """An ldmatrix (or stmatrix: the same rows, written) access; ``kind`` names the instruction in messages."""
    num = spec.get("num", 4)
    if type(num) is not int or num not in (1, 2, 4):
        raise SolveError(f"{w}.num: {kind} takes 1, 2 or 4 matrices (.x1/.x2/.x4), not {num!r}")
    if 16 % tile.element_bytes:
        raise SolveError(f"element_bytes: {kind} rows are 16 bytes of b16; element_bytes must divide 16")
    op = str(spec.get("op", "store" if kind == "stmatrix" else "load")).lower()
    if op != ("store" if kind == "stmatrix" else "load"):
        raise SolveError(f"{w}.op: {kind} {'stores' if kind == 'stmatrix' else 'loads'}, not {spec.get('op')!r}; "
                         f"the {'load' if kind == 'stmatrix' else 'store'} of the same rows is "
                         f"{'ldmatrix' if kind == 'stmatrix' else 'stmatrix'}")
    idx = spec.get("index")
    where = (f"{w}.index[0]", f"{w}.index[1]")
    if isinstance(idx, list) and len(idx) == 2:
        r0, c0 = idx
    elif idx is None or type(idx) is int:  # index as the first row, or row and col
        r0, c0 = spec.get("row", idx or 0), spec.get("col", 0)
        where = (f"{w}.row" if "row" in spec or idx is None else f"{w}.index", f"{w}.col")
    else:
        raise SolveError(f"{w}.index: {kind} takes [row, col] of the first matrix's first row")
    both = [k for k in ("row", "col") if k in spec and (isinstance(idx, list) or k == "row" and idx is not None)]
    if both:
        raise SolveError(f"{w}.{both[0]}: give the first row as index [row, col], or as row and col, not both")
    r0 = _int(r0, where[0], 0, tile.rows - 1)
    c0 = _int(c0, where[1], 0, tile.cols - 1)
    per = 16 // tile.element_bytes
    lanes = ldmatrix_rows(num, r0, c0, per, "grid")
    for r, c in lanes:
        if r >= tile.rows or c + per > tile.cols:
            raise SolveError(f"{w}.index: {kind}.x{num} at ({r0}, {c0}) needs row {r}, columns {c}..{c + per - 1}: "
                             f"outside the {tile.rows}x{tile.cols} tile")
    if "trans" in spec and not isinstance(spec["trans"], bool):
        raise SolveError(f"{w}.trans: true or false")
    return Access(name, kind, "store" if kind == "stmatrix" else "load", lanes, per, num=num, spec=dict(spec))


def _constraint(spec: dict, kind: str, w: str, name: str, op: str, tile: Tile) -> Access:
    major = None
    if kind == "tma":
        box = spec.get("box", [tile.rows, tile.cols])
        if not isinstance(box, list) or len(box) != 2:
            raise SolveError(f"{w}.box: give [rows, cols] of the box")
        br = _int(box[0], f"{w}.box[0]", 1, 256)
        bc = _int(box[1], f"{w}.box[1]", 1, 256)
        if tile.rows % br or tile.cols % bc:
            raise SolveError(f"{w}.box: {br}x{bc} does not tile the {tile.rows}x{tile.cols} tile")
        inner = _tma_box(tile, br, bc, f"{w}.box")
    else:
        operand = str(spec.get("operand", "A")).upper()
        if operand not in ("A", "B"):
            raise SolveError(f"{w}.operand: A or B, not {spec.get('operand')!r}")
        major = str(spec.get("major", "K")).upper()
        if major not in ("K", "MN"):
            raise SolveError(f"{w}.major: K or MN, not {spec.get('major')!r}")
        eb = tile.element_bytes
        if eb not in (1, 2, 4):
            raise SolveError(f"{w}: wgmma reads 8-, 16- or 32-bit (tf32) operands from shared memory, not "
                             f"{8 * eb}-bit elements (element_bytes {eb})")
        if major == "MN" and eb != 2:
            raise SolveError(f"{w}.major: wgmma reads an MN-major operand only for 16-bit types (f16 / bf16: the "
                             f"transpose of imm-trans-a/b); {8 * eb}-bit operands (element_bytes {eb}) must be K-major")
    return Access(name, kind, "store" if kind == "tma" else "load", [], 1, spec=dict(spec), major=major,
                  box_inner_bytes=inner if kind == "tma" else 0)


TMA_SMEM_ALIGN = 128  # bytes: a TMA box's shared-memory address (cp.async.bulk.tensor)


def _tma_box(tile: Tile, br: int, bc: int, where: str) -> int:
    """The bytes of the box's inner (contiguous) extent when TMA can write the tile as given box by box: each
    ``br x bc`` box is one dense block in shared memory (its inner dimension, the columns or the rows, fastest), at a
    128-byte-aligned address, its inner extent a multiple of 16 bytes, elements of at most 8 bytes. A swizzle
    candidate permutes within that image; a padding breaks it. SolveError naming the rule and a counterexample when
    no orientation works (no candidate of the search could then meet the constraint)."""
    eb = tile.element_bytes
    if eb > 8:
        raise SolveError(f"{where}: TMA moves elements of 1, 2, 4 or 8 bytes (cuTensorMapEncodeTiled's data types), "
                         f"not {eb}")
    why = []
    for inner, outer, name in ((bc, br, "columns"), (br, bc, "rows")):
        if inner * eb % 16:
            why.append(f"with the {name} inner, the box's inner extent is {inner} x {eb} = {inner * eb} bytes, not a "
                       "multiple of 16")
            continue
        bad = None
        for r0 in range(0, tile.rows, br):
            for c0 in range(0, tile.cols, bc):
                base = tile.offset(r0, c0)
                if base * eb % TMA_SMEM_ALIGN:
                    bad = (f"the box at ({r0}, {c0}) starts at byte {base * eb}, not a multiple of "
                           f"{TMA_SMEM_ALIGN}")
                    break
                for i in range(outer):
                    for j in range(inner):
                        r, c = (r0 + i, c0 + j) if name == "columns" else (r0 + j, c0 + i)
                        if tile.offset(r, c) != base + i * inner + j:
                            bad = (f"element ({r}, {c}) is at offset {tile.offset(r, c)}, but a dense box from "
                                   f"offset {base} puts it at {base + i * inner + j}")
                            break
                    if bad:
                        break
                if bad:
                    break
            if bad:
                break
        if bad is None:
            return inner * eb
        why.append(f"with the {name} inner, {bad}")
    raise SolveError(f"{where}: TMA cannot write {tile.text} with a {br}x{bc} box: it writes each box as one dense "
                     f"block at a {TMA_SMEM_ALIGN}-byte-aligned address; " + "; ".join(why))


def parse_accesses(specs: Any, tile: Tile) -> list[Access]:
    """Every access; at least one must be an LSU access (offsets/row/column/thread_layout/ldmatrix)."""
    if not isinstance(specs, list) or not 1 <= len(specs) <= MAX_ACCESSES:
        raise SolveError(f"accesses: give 1 to {MAX_ACCESSES} accesses")
    out = [make_access(s, i, tile) for i, s in enumerate(specs)]
    if all(a.constraint for a in out):
        raise SolveError("accesses: at least one warp access (offsets, row, column, thread_layout, ldmatrix or "
                         "stmatrix) is needed; tma and wgmma only constrain the layout")
    return out


# --------------------------------------------------------------------------- cost under a placement

def lane_offsets(acc: Access, place: Callable[[int, int], int]) -> list[int] | None:
    """Each lane's first element offset under ``place`` (r, c) -> offset, or None when some lane's vector is not
    contiguous and aligned there (then the access is no longer one vector instruction)."""
    if not all(_whole_vector(place, r, c, acc.vector) for r, c in acc.lanes):
        return None
    return [place(r, c) for r, c in acc.lanes]


def priced(memo: dict, k: int, acc: Access, offs: list[int], element_bytes: int) -> list[int]:
    """``acc.cost(offs)`` of the k-th access, kept in ``memo`` (one per search) under (k, offsets)."""
    key = (k, tuple(offs))
    p = memo.get(key)
    if p is None:
        p = memo[key] = acc.cost(offs, element_bytes)
    return p


@dataclass
class Candidate:
    """One placement of the tile in shared memory, as the layout doctor's search keeps it (``solver.candidate``
    builds each kind): offset o of the tile as given goes to ``fn(o)`` -- ``swizzle`` ``Sw<B,M,S>``, ``xor`` the F2
    map ``o ^ A(o_hi)`` with ``xor[source bit] = target mask``, ``padding`` the leading stride stretched by ``pad``
    elements; ``fn`` is None for ``naive``, the tile as given. ``solver.evaluate`` fills, per access, each lane's
    first offset (``offsets``) and the wavefronts of each phase (``phases``), None for a constraint."""

    kind: str
    fn: Callable[[int], int] | None = None
    swizzle: tuple[int, int, int] | None = None
    pad: int = 0
    xor: dict[int, int] | None = None
    footprint_bytes: int = 0
    offsets: list[list[int] | None] = field(default_factory=list)
    phases: list[list[int] | None] = field(default_factory=list)

    @property
    def columns(self) -> dict[int, int]:
        """The map as ``o ^ A(o_hi)``, source bit -> target mask: a swizzle's B shifted unit columns, an XOR map's
        own; empty for naive and padding."""
        if self.swizzle:
            b, m, s = self.swizzle
            return {m + s + t: 1 << (m + t) for t in range(b)}
        return self.xor or {}

    @property
    def safe_vector(self) -> int:
        """Vectors this wide stay whole without checking: swizzles and XOR maps flip no bit below their lowest
        target bit (the tile as given is checked once, as the naive candidate); a swizzle's is 2^M."""
        if self.swizzle:
            return 1 << self.swizzle[1]
        return min((m & -m for m in self.xor.values() if m), default=1 << 30) if self.kind == "xor" else 1

    @property
    def wavefronts(self) -> list[int]:
        return [sum(p) if p else 0 for p in self.phases]

    @property
    def total(self) -> int:
        return sum(self.wavefronts)

    @property
    def xor_bits(self) -> int:
        """Bits the map XORs in: the popcount of its columns (B for a swizzle)."""
        return self.swizzle[0] if self.swizzle else sum(bin(m).count("1") for m in (self.xor or {}).values())
