"""Hopper (SM90) shared-memory layout atoms, the TMA tensor map arguments and the wgmma matrix descriptor.

Units: CuTe writes the GMMA smem atoms in bits and swizzles byte addresses (``Sw<B,4,3>``: 16-byte chunks, 8 rows).
On elements of ``b`` bits the same permutation is ``Sw<B, 4 + 3 - log2(b), 3>`` (``Sw<3,4,3>`` on bytes is
``Sw<3,3,3>`` on fp16 elements); :func:`swizzle_to_elements` / :func:`swizzle_to_bytes` make that explicit.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from algebra.core.errors import LayoutError
from algebra.core.inttuple import congruent, product
from algebra.core.layout import Layout, size
from algebra.core.ops import composition
from algebra.core.products import logical_divide, tile_to_shape
from algebra.core.recast import recast_layout
from algebra.core.swizzle import ComposedLayout, Swizzle

# --------------------------------------------------------------------------- swizzle units


def _log2_exact(x: int, what: str) -> int:
    if x <= 0 or x & (x - 1):
        raise LayoutError(f"{what} must be a power of two, not {x}")
    return x.bit_length() - 1


def swizzle_to_elements(bms: tuple[int, int, int], element_bits: int) -> tuple[int, int, int]:
    """A byte-address swizzle (B, M, S) as the same permutation of element offsets of ``element_bits``.

    Post-condition: for every byte offset ``y = x * element_bits / 8`` of an element offset x,
    ``Sw<bytes>(y) == Sw<elements>(x) * element_bits / 8`` (M shifts by log2 of the element size in bytes).
    """
    b, m, s = bms
    shift = _log2_exact(element_bits, "element_bits") - 3
    if m - shift < 0:
        raise LayoutError(f"Sw<{b},{m},{s}> on bytes moves bits below one {element_bits}-bit element (M - {shift} < 0)")
    return b, m - shift, s


def swizzle_to_bytes(bms: tuple[int, int, int], element_bits: int) -> tuple[int, int, int]:
    """The inverse of :func:`swizzle_to_elements`: an element-offset swizzle as a byte-address swizzle."""
    b, m, s = bms
    return b, m + _log2_exact(element_bits, "element_bits") - 3, s


# --------------------------------------------------------------------------- GMMA smem layout atoms

#: swizzle span in bytes -> (CuTe name fragment, B of Sw<B,4,3>, layout type code in the wgmma descriptor)
SWIZZLE_KINDS: dict[int, tuple[str, int, int]] = {16: ("INTER", 0, 0), 32: ("SW32", 1, 3), 64: ("SW64", 2, 2),
                                                   128: ("SW128", 3, 1)}
SWIZZLE_SPANS = {v[0]: k for k, v in SWIZZLE_KINDS.items()}  # "SW128" -> 128


@dataclass(frozen=True)
class SmemAtom:
    """One of CuTe's ``GMMA::Layout_{MN,K}_{INTER,SW32,SW64,SW128}_Atom<T>``: ``shape``/``stride`` in elements,
    ``byte_swizzle`` CuTe's ``Sw<B,4,3>``, ``element_swizzle`` the same permutation on element offsets."""

    name: str
    major: str
    span_bytes: int
    element_bits: int
    shape: tuple[int, int]
    stride: tuple[int, int]
    byte_swizzle: tuple[int, int, int]
    element_swizzle: tuple[int, int, int]

    @property
    def layout(self) -> Any:
        """The composed layout ``Sw<B,M',3> o (shape):(stride)`` on element offsets."""
        return ComposedLayout(Swizzle(*self.element_swizzle), 0, Layout(self.shape, self.stride))

    def cute_print(self) -> str:
        """What CuTe prints for the atom: the byte swizzle, the flagged smem pointer, the element layout."""
        return "Sw<{},{},{}> o smem_ptr[{}b](unset) o (_{},_{}):(_{},_{})".format(*self.byte_swizzle, self.element_bits,
                                                                                  *self.shape, *self.stride)

    def __str__(self) -> str:
        return "Sw<{},{},{}> o ({},{}):({},{})".format(*self.element_swizzle, *self.shape, *self.stride)


def smem_atom(major: str, span_bytes: int, element_bits: int) -> SmemAtom:
    """The GMMA shared-memory layout atom for ``major`` in {"K", "MN"}, ``span_bytes`` in {16, 32, 64, 128}
    (16 = INTER, no swizzle) and ``element_bits`` in {8, 16, 32} (also 4 and 64).

    Post-condition: the atom covers 8 rows of ``span_bytes`` bytes: ``size == 8 * span_bytes * 8 / element_bits``.
    """
    major = major.upper()
    if major not in ("K", "MN"):
        raise LayoutError(f"major must be 'K' or 'MN', not {major!r}")
    if span_bytes not in SWIZZLE_KINDS:
        raise LayoutError(f"swizzle span must be one of 16 (INTER), 32, 64, 128 bytes, not {span_bytes}")
    if type(element_bits) is not int or element_bits not in (4, 8, 16, 32, 64):
        raise LayoutError(f"element_bits must be 4, 8, 16, 32 or 64, not {element_bits!r}")
    frag, b, _ = SWIZZLE_KINDS[span_bytes]
    w = span_bytes * 8 // element_bits
    shape, stride = ((8, w), (w, 1)) if major == "K" else ((w, 8), (1, w))
    byte_sw = (b, 4, 3)
    return SmemAtom(f"Layout_{major}_{frag}_Atom", major, span_bytes, element_bits, shape, stride, byte_sw,
                    swizzle_to_elements(byte_sw, element_bits))


def smem_atom_by_name(name: str, element_bits: int) -> SmemAtom:
    """``smem_atom_by_name("Layout_K_SW128_Atom", 16)``; the ``GMMA::`` prefix is optional."""
    core = name.removeprefix("GMMA::").removeprefix("SM90::GMMA::")
    parts = core.split("_")
    if len(parts) != 4 or parts[0] != "Layout" or parts[3] != "Atom":
        raise LayoutError(f"unknown smem layout atom {name!r}: expected Layout_<K|MN>_<INTER|SW32|SW64|SW128>_Atom")
    if parts[2] not in SWIZZLE_SPANS:
        raise LayoutError(f"unknown swizzle {parts[2]!r} in {name!r}")
    return smem_atom(parts[1], SWIZZLE_SPANS[parts[2]], element_bits)


# --------------------------------------------------------------------------- wgmma matrix descriptor

#: (field, first bit, width, unit in bytes) of the 64-bit wgmma shared-memory matrix descriptor
DESCRIPTOR_FIELDS: tuple[tuple[str, int, int, int], ...] = (
    ("start_address", 0, 14, 16),
    ("leading_byte_offset", 16, 14, 16),
    ("stride_byte_offset", 32, 14, 16),
    ("base_offset", 49, 3, 1),
    ("layout_type", 62, 2, 1),
)
LAYOUT_TYPE_NAMES = {0: "INTERLEAVE (no swizzle)", 1: "SWIZZLE_128B", 2: "SWIZZLE_64B", 3: "SWIZZLE_32B"}


@dataclass(frozen=True)
class GmmaDescriptor:
    """The wgmma smem matrix descriptor. Byte quantities are stored as bytes; ``value`` packs them (>> 4).

    Post-condition: ``decode_gmma_descriptor(d.value) == d``.
    """

    start_address: int
    leading_byte_offset: int
    stride_byte_offset: int
    layout_type: int
    base_offset: int = 0

    def __post_init__(self) -> None:
        for name in ("start_address", "leading_byte_offset", "stride_byte_offset"):
            v = getattr(self, name)
            if v < 0 or v % 16:
                raise LayoutError(f"{name} = {v} must be a non-negative multiple of 16 bytes")
            if (v >> 4) >= 1 << 14:
                raise LayoutError(f"{name} = {v} does not fit the 14-bit field (>> 4): must be < {16 << 14}")
        if self.layout_type not in LAYOUT_TYPE_NAMES:
            raise LayoutError(f"layout_type must be 0..3, not {self.layout_type}")
        if not 0 <= self.base_offset < 8:
            raise LayoutError(f"base_offset must be in [0, 8), not {self.base_offset}")

    @property
    def value(self) -> int:
        """The 64-bit descriptor."""
        return sum(((getattr(self, n) // unit) & ((1 << w) - 1)) << lo for n, lo, w, unit in DESCRIPTOR_FIELDS)

    def fields(self) -> list[dict[str, Any]]:
        """:func:`field_rows` of the descriptor."""
        return field_rows(DESCRIPTOR_FIELDS, asdict(self), LAYOUT_TYPE_NAMES[self.layout_type])

    def __str__(self) -> str:
        return f"0x{self.value:016x}"


def field_rows(table: tuple[tuple[str, int, int, int], ...], values: dict[str, int], meaning: str) -> list[dict]:
    """One dict per (name, first bit, width, unit) field of a smem descriptor (wgmma's or UMMA's): name, bits
    "[lo,hi)", the value in bytes (or code), the encoded field value, and for the layout type its ``meaning``."""
    return [{"name": n, "bits": f"[{lo},{lo + w})", "value": values[n], "encoded": values[n] // unit,
             **({"meaning": meaning} if n == "layout_type" else {})} for n, lo, w, unit in table]


def decode_gmma_descriptor(value: int) -> GmmaDescriptor:
    """Unpack a 64-bit descriptor into its fields (bytes)."""
    if not 0 <= value < 1 << 64:
        raise LayoutError(f"descriptor {value} is not a 64-bit unsigned value")
    vals = {name: ((value >> lo) & ((1 << width) - 1)) * unit for name, lo, width, unit in DESCRIPTOR_FIELDS}
    return GmmaDescriptor(**vals)


@dataclass
class TmaCheck:
    """One validity rule of ``cuTensorMapEncodeTiled``: what it demands and whether the arguments meet it."""

    rule: str
    ok: bool
    text: str


@dataclass
class TensorMapArgs:
    """The arguments of ``cuTensorMapEncodeTiled`` (dimension 0 innermost) and the rules checked on them."""

    dtype: str
    rank: int
    global_dim: list[int]
    global_strides: list[int]
    box_dim: list[int]
    element_strides: list[int]
    interleave: str
    swizzle: str
    l2_promotion: str
    oob_fill: str
    checks: list[TmaCheck] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return all(c.ok for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        checks = d.pop("checks")
        return {**d, "valid": self.valid, "checks": checks}


# --------------------------------------------------------------------------- TMA: cuTensorMapEncodeTiled

#: CUtensorMapDataType names -> element size in bytes (packed 4/6-bit types not modelled; FLOAT names the floats)
TMA_DTYPES: dict[str, int] = {
    "UINT8": 1, "UINT16": 2, "UINT32": 4, "INT32": 4, "UINT64": 8, "INT64": 8, "FLOAT16": 2, "FLOAT32": 4,
    "FLOAT64": 8, "BFLOAT16": 2, "FLOAT32_FTZ": 4, "TFLOAT32": 4, "TFLOAT32_FTZ": 4,
}
_DTYPE_ALIASES = {"FP16": "FLOAT16", "HALF": "FLOAT16", "HALF_T": "FLOAT16", "BF16": "BFLOAT16",
                  "BFLOAT16_T": "BFLOAT16", "FP32": "FLOAT32", "FLOAT": "FLOAT32", "TF32": "TFLOAT32",
                  "FP64": "FLOAT64", "DOUBLE": "FLOAT64", "FP8": "UINT8", "E4M3": "UINT8", "E5M2": "UINT8",
                  "INT8": "UINT8", "UINT8_T": "UINT8"}
TMA_SWIZZLE_SPAN = {"NONE": 0, "32B": 32, "64B": 64, "128B": 128}
TMA_INTERLEAVE = ("NONE", "16B", "32B")
TMA_L2_PROMOTION = ("NONE", "L2_64B", "L2_128B", "L2_256B")
TMA_OOB_FILL = ("NONE", "NAN_REQUEST_ZERO_FMA")


def tma_dtype(name: str) -> str:
    """Normalise a data type name (``"bf16"``, ``"CU_TENSOR_MAP_DATA_TYPE_FLOAT16"``, ...) to a TMA_DTYPES key."""
    key = name.upper().removeprefix("CU_TENSOR_MAP_DATA_TYPE_") if isinstance(name, str) else None
    key = _DTYPE_ALIASES.get(key, key)
    if key not in TMA_DTYPES:
        raise LayoutError(f"dtype: unknown TMA data type {name!r:.60}; known: {', '.join(TMA_DTYPES)}")
    return key


def _enum(value: str, allowed: tuple[str, ...] | dict, prefix: str, what: str) -> str:
    key = str(value).upper().removeprefix(prefix)
    if key not in allowed:
        raise LayoutError(f"{what} must be one of {', '.join(allowed)}, not {value!r}")
    return key


def encode_tiled(dtype: str, global_dim: list[int], global_strides: list[int], box_dim: list[int],
                 element_strides: list[int] | None = None, interleave: str = "NONE", swizzle: str = "NONE",
                 l2_promotion: str = "NONE", oob_fill: str = "NONE", global_address: int = 0,
                 strict: bool = True) -> TensorMapArgs:
    """Check the arguments of ``cuTensorMapEncodeTiled`` against the driver's documented requirements.

    ``global_dim``/``box_dim``/``element_strides`` have ``rank`` entries, dimension 0 innermost;
    ``global_strides`` has ``rank - 1`` byte strides (of dimensions 1..rank-1). Returns every rule with its verdict;
    with ``strict`` a failed rule raises LayoutError naming it. Post-condition: ``result.valid`` iff all rules hold.
    """
    dt = tma_dtype(dtype)
    esize = TMA_DTYPES[dt]
    il = _enum(interleave, TMA_INTERLEAVE, "CU_TENSOR_MAP_INTERLEAVE_", "interleave")
    sw = _enum(swizzle, TMA_SWIZZLE_SPAN, "CU_TENSOR_MAP_SWIZZLE_", "swizzle")
    l2 = _enum(l2_promotion, TMA_L2_PROMOTION, "CU_TENSOR_MAP_L2_PROMOTION_", "l2_promotion")
    oob = _enum(oob_fill, TMA_OOB_FILL, "CU_TENSOR_MAP_FLOAT_OOB_FILL_", "oob_fill")
    rank = len(global_dim)
    estr = list(element_strides) if element_strides is not None else [1] * rank
    checks: list[TmaCheck] = []

    def rule(name: str, ok: bool, text: str) -> None:
        checks.append(TmaCheck(name, bool(ok), text))

    min_rank = 3 if il != "NONE" else 1
    rule("rank", min_rank <= rank <= 5, f"tensorRank = {rank} must be in [{min_rank}, 5]"
         + (" (interleaved layouts need rank >= 3)" if il != "NONE" else ""))
    rule("lengths", len(box_dim) == rank and len(estr) == rank and len(global_strides) == max(rank - 1, 0),
         f"boxDim and elementStrides need {rank} entries and globalStrides {max(rank - 1, 0)}; got "
         f"{len(box_dim)}, {len(estr)} and {len(global_strides)}")
    align = 32 if il == "32B" else 16  # of the address and of every stride
    rule("global_address", global_address % align == 0,
         f"globalAddress {global_address} must be {align}-byte aligned")
    for i, d in enumerate(global_dim):
        rule(f"global_dim[{i}]", 0 < d <= 1 << 32, f"globalDim[{i}] = {d} must be in [1, 2^32]")
    for i, s in enumerate(global_strides):
        rule(f"global_strides[{i}]", s % align == 0 and 0 < s < 1 << 40,
             f"globalStrides[{i}] = {s} bytes (of dimension {i + 1}) must be a positive multiple of {align} "
             f"and < 2^40")
    for i, b in enumerate(box_dim):
        rule(f"box_dim[{i}]", 0 < b <= 256, f"boxDim[{i}] = {b} must be in [1, 256]")
    if il == "NONE" and box_dim:
        inner = box_dim[0] * esize
        rule("box_inner_16B", inner % 16 == 0,
             f"boxDim[0] * {esize} B = {inner} B must be a multiple of 16 bytes (no interleave)")
        if sw != "NONE":
            span = TMA_SWIZZLE_SPAN[sw]
            rule("box_inner_swizzle", inner <= span,
                 f"boxDim[0] * {esize} B = {inner} B must be <= the {span}-byte swizzle span, i.e. boxDim[0] <= "
                 f"{span // esize} elements of {dt}")
    for i, e in enumerate(estr):
        rule(f"element_strides[{i}]", 0 < e <= 8, f"elementStrides[{i}] = {e} must be in [1, 8]")
    if il == "32B":
        rule("interleave_swizzle", sw == "32B", f"interleave 32B requires swizzle 32B, not {sw}")
    if oob != "NONE":
        rule("oob_fill", "FLOAT" in dt, f"NaN out-of-bounds fill needs a floating-point type, not {dt}")
    out = TensorMapArgs(dt, rank, list(global_dim), list(global_strides), list(box_dim), estr, il, sw, l2, oob,
                        checks)
    if strict and not out.valid:
        bad = next(c for c in checks if not c.ok)
        raise LayoutError(f"cuTensorMapEncodeTiled refuses rule {bad.rule}: {bad.text}")
    return out


def tma_from_tensor(shape: tuple[int, ...], stride: tuple[int, ...], dtype: str, box: tuple[int, ...],
                    atom: SmemAtom | None = None, swizzle: str | None = None, strict: bool = True) -> TensorMapArgs:
    """The tensor map for a global tensor ``shape:stride`` (element strides, flat modes) copied in boxes of
    ``box`` (one extent per mode) into shared memory laid out by the GMMA ``atom``.

    TMA's dimension 0 is the tensor's stride-1 mode; the others follow in mode order. The swizzle mode is the atom's
    (or ``swizzle``). Post-condition: ``global_dim`` is a permutation of ``shape`` and ``global_strides[i]`` is the
    byte stride of the mode placed at dimension i + 1.
    """
    if not (len(shape) == len(stride) == len(box)):
        raise LayoutError(f"shape {shape}, stride {stride} and box {box} must have one entry per mode")
    ones = [i for i, s in enumerate(stride) if s == 1]
    if len(ones) != 1:
        raise LayoutError(f"TMA needs exactly one contiguous (stride-1) mode; strides {stride} have {len(ones)}")
    order = ones + [i for i in range(len(shape)) if i != ones[0]]
    esize = TMA_DTYPES[tma_dtype(dtype)]
    if atom is not None:
        if swizzle is not None:
            raise LayoutError("give either an smem atom or a swizzle, not both")
        contiguous_mode = 1 if atom.major == "K" else 0
        if len(shape) >= 2 and ones[0] != contiguous_mode:
            raise LayoutError(f"{atom.name} is contiguous along mode {contiguous_mode} but the global tensor is "
                              f"contiguous along mode {ones[0]}: the box would be transposed")
        if atom.element_bits != esize * 8:
            raise LayoutError(f"{atom.name} is for {atom.element_bits}-bit elements, {dtype} has {esize * 8}")
        swizzle = {16: "NONE", 32: "32B", 64: "64B", 128: "128B"}[atom.span_bytes]
    return encode_tiled(dtype, [shape[i] for i in order], [stride[i] * esize for i in order[1:]],
                        [box[i] for i in order], swizzle=swizzle or "NONE", strict=strict)


def canonical_strides(inner: Any, element_bits: int, major: str, w: int, swizzle: str, swizzled: bool,
                      mma: str = "GMMA", k_rows: int = 8) -> tuple[Any, int, int]:
    """``make_gmma_desc`` / ``UMMA::make_umma_desc``'s reading of a rank-2 (MN, K) smem layout with integer strides,
    its swizzle (named ``swizzle``, ``w`` 16-byte units wide) taken off: recast to 16-byte units, ``logical_divide``
    by the canonical (8, 2) (K-major) or (w, k_rows) (MN-major) tile, read the strides. Returns (the divided layout,
    LBO, SBO), in 16-byte units; LayoutError names the canonical-form rule that fails.

    Post-condition: K-major: SBO = the stride between 8-row groups, LBO = the K-direction stride (1 unit when
    swizzled); MN-major: LBO / SBO = the strides between atoms along MN / 8-column groups along K (swapped when not
    swizzled)."""
    t = 128 // element_bits  # elements in one 16-byte row of a core matrix
    for j in range(1, t):  # the 16-byte rows run along the major mode (the recast to 16-byte units hides it otherwise)
        at = (0, j) if major == "K" else (j, 0)
        ext = inner.shape[1] if major == "K" else inner.shape[0]
        if j < product(ext) and inner(at) != j:
            raise LayoutError(f"not a canonical {mma}_{major} layout: a {major}-major operand is stored in 16-byte "
                              f"rows along {major} ({t} elements at stride 1), but element {at} of {inner} sits at "
                              f"offset {inner(at)}" + (" (is it the other major?)" if inner((j, 0) if major == 'K' else
                                                                                  (0, j)) == j else ""))
    try:
        u128 = recast_layout(inner, element_bits, 128)
    except LayoutError as exc:
        raise LayoutError(f"not a canonical {mma} layout: {inner} does not recast to 16-byte units ({exc})") from None
    if major == "K":
        if size(u128[0]) % 8:
            raise LayoutError(f"not a canonical {mma}_K layout: expected an MN size that is a multiple of 8 rows; "
                              f"{inner} has {size(u128[0])} rows of 16-byte units")
        tiler = (Layout(8, 1), Layout(2, 1))
    else:
        tiler = (Layout(w), Layout(k_rows))
    try:
        canon = logical_divide(u128, tiler)
    except LayoutError as exc:
        raise LayoutError(f"not a canonical {mma}_{major} layout: {u128} (16-byte units) does not divide by "
                          f"({tiler[0]}, {tiler[1]}): {exc}") from None
    if not congruent(canon.shape, ((1, 1), (1, 1))):
        raise LayoutError(f"not a canonical {mma}_{major} layout: expected profile ((_,_),(_,_)) after dividing by "
                          f"({tiler[0]}, {tiler[1]}) in 16-byte units; got {canon}")
    (s00, s01), (s10, s11) = canon.stride
    if major == "K":
        if s00 != w:
            raise LayoutError(f"not a canonical {mma}_K layout: the 8 rows of a core matrix must be {w} x 16 bytes "
                              f"apart for {swizzle}; in 16-byte units the layout is {canon} (stride {s00})")
        if swizzled and s10 != 1:
            raise LayoutError(f"not a canonical {mma}_K layout: along K the two 16-byte chunks must be adjacent "
                              f"(stride 1) inside the {swizzle} atom; in 16-byte units the layout is {canon}")
        return canon, s10, s01
    if swizzled and s00 != 1:
        raise LayoutError(f"not a canonical {mma}_MN layout: along MN the 16-byte chunks must be contiguous (stride "
                          f"1) inside the {swizzle} atom; in 16-byte units the layout is {canon}")
    if s10 != w:
        raise LayoutError(f"not a canonical {mma}_MN layout: along K the rows of the atom must be {w} x 16 bytes "
                          f"apart for {swizzle}; in 16-byte units the layout is {canon} (stride {s10})")
    return (canon, s01, s11) if swizzled else (canon, s11, s01)


def make_gmma_desc(atom: SmemAtom, tile_mn: int, tile_k: int, start_address: int = 0) -> GmmaDescriptor:
    """The wgmma descriptor of the first MMA K-block of a ``tile_mn`` x ``tile_k`` smem tile built as CuTe's
    ``tile_to_shape(atom, (tile_mn, tile_k))``, following ``make_gmma_desc<Major>`` (:func:`canonical_strides`)."""
    kblock = 256 // atom.element_bits  # one wgmma K-block: 32 bytes of K
    if tile_k % atom.shape[1] or tile_mn % atom.shape[0] or tile_k % kblock:
        raise LayoutError(f"tile {tile_mn}x{tile_k} must be a multiple of the atom {atom.shape[0]}x{atom.shape[1]} "
                          f"and of the MMA K-block {kblock}")
    tiled = tile_to_shape(Layout(atom.shape, atom.stride), (tile_mn, tile_k))
    code = SWIZZLE_KINDS[atom.span_bytes][2]
    _, lbo, sbo = canonical_strides(composition(tiled, (Layout(tile_mn), Layout(kblock))), atom.element_bits,
                                    atom.major, atom.span_bytes // 16, LAYOUT_TYPE_NAMES[code], atom.span_bytes != 16)
    return GmmaDescriptor(start_address, 16 * lbo, 16 * sbo, code)
