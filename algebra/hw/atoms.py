"""MMA and copy atoms as TV layouts, named and laid out as in CuTe's ``mma_traits_sm*.hpp`` / ``copy_traits_sm*.hpp``.

An MMA atom's ``A``, ``B``, ``C`` map (thread, value) to the column-major index of the M x K, N x K and M x N tile.
A copy atom's ``src``/``dst``/``ref`` map (thread, value) to a *bit* index, as CuTe writes them; ``src_layout(b)``
etc. recast them to elements of b bits (CuTe's ``Copy_Atom<Op, T>``: ``recast_layout<uint1_t, T>``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, partialmethod

from algebra.core.errors import LayoutError
from algebra.core.layout import Layout, size
from algebra.core.notation import parse_layout
from algebra.core.recast import recast_layout
from algebra.hw.sm100_tmem import tmem_copy_table

# --------------------------------------------------------------------------- MMA atoms


class MMAOperands:
    """What every MMA atom answers from its ``thr_id``, ``A``, ``B``, ``C`` and ``shape_mnk`` (the SM70-SM90 atoms
    here, Blackwell's tcgen05.mma in algebra.hw.sm100)."""

    thr_id: Layout
    A: Layout
    B: Layout
    C: Layout
    shape_mnk: tuple[int, int, int]

    @property
    def num_threads(self) -> int:
        return size(self.thr_id)

    def operand(self, which: str) -> Layout:
        """``"A"``, ``"B"``, ``"C"`` (``"D"`` is C)."""
        key = which.upper()
        if key not in ("A", "B", "C", "D"):
            raise LayoutError(f"operand must be A, B, C or D, not {which!r}")
        return self.C if key == "D" else getattr(self, key)

    def operand_shape(self, which: str) -> tuple[int, int]:
        """(rows, cols) of the tile the operand's TV layout indexes column-major: M x K, N x K or M x N."""
        m, n, k = self.shape_mnk
        return {"A": (m, k), "B": (n, k), "C": (m, n), "D": (m, n)}[which.upper()]


@dataclass(frozen=True)
class MMAAtom(MMAOperands):
    """One MMA instruction. Post-conditions: ``size(A[1]) * size(thr_id) == M * K`` (``== K`` per thread row for
    wgmma SS, whose A is read from shared memory by all 128 threads: stride 0 on the thread mode) and likewise for B
    and C; every (thread, value) of C hits a distinct index of the M x N tile."""

    name: str
    shape_mnk: tuple[int, int, int]
    thr_id: Layout
    A: Layout
    B: Layout
    C: Layout
    types: tuple[str, str, str, str]  # D, A, B, C value types
    ptx: str


    def smem_operand(self, which: str) -> bool:
        """True for an operand the instruction reads from shared memory through a descriptor (wgmma's A and B of
        the SS form, B of the RS form): its fragment is a tensor of descriptors, not registers."""
        key = which.upper()
        return self.name.startswith("SM90_") and (key == "B" or (key == "A" and self.name.endswith("_SS")))

    def value_bits(self, which: str) -> int:
        """Bits of one value of operand ``which`` (``types`` holds D, A, B, C)."""
        t = self.types[{"D": 0, "A": 1, "B": 2, "C": 3}[which.upper()]]
        return {"half_t": 16, "bfloat16_t": 16, "float": 32, "tfloat32_t": 32, "double": 64, "int8_t": 8,
                "int32_t": 32}[t]



SM80_16x8_Row = "((4,8),(2,2)):((32,1),(16,8))"
SM80_8x8_Row = "((4,8),2):((16,1),8)"
SM80_8x4 = "((4,8),1):((8,1),0)"
SM70_QuadPair = "(4,2):(1,16)"
SM70_8x4_Row = "(8,4):(1,8)"
SM70_8x4_Col = "((4,2),4):((8,4),1)"
SM70_8x8_16b = "(8,8):(1,8)"
SM70_8x8_32b = "((2,2,2),(2,2,2)):((1,16,4),(8,2,32))"
_T_NAMES = {"F16": "half_t", "F32": "float", "BF16": "bfloat16_t", "TF32": "tfloat32_t", "F64": "double",
            "S8": "int8_t", "S32": "int32_t"}

_SM80_F16 = ("F16F16F16F16", "F32F16F16F32", "F32BF16BF16F32")
# "MxNxK" -> (A, B, C, the value types of its atoms); every SM80 atom is one warp (thr_id 32:1)
_SM80 = {
    "16x8x8": (SM80_16x8_Row, SM80_8x8_Row, SM80_16x8_Row, _SM80_F16),
    "16x8x16": ("((4,8),(2,2,2)):((32,1),(16,8,128))", "((4,8),(2,2)):((16,1),(8,64))", SM80_16x8_Row, _SM80_F16),
    "16x8x4": ("((4,8),2):((16,1),8)", SM80_8x4, SM80_16x8_Row, ("F32TF32TF32F32",)),
    "16x8x8_TF32": ("((4,8),(2,2)):((16,1),(8,64))", "((4,8),2):((8,1),32)", SM80_16x8_Row, ("F32TF32TF32F32",)),
    "8x8x4": (SM80_8x4, SM80_8x4, SM80_8x8_Row, ("F64F64F64F64",)),
    "16x8x32": ("((4,8),(4,2,2)):((64,1),(16,8,256))", "((4,8),(4,2)):((32,1),(8,128))", SM80_16x8_Row,
                ("S32S8S8S32",)),
}
_SM90_N = tuple(range(8, 257, 8))
_SM90_TYPES = ("F16F16F16", "F32F16F16", "F32BF16BF16")


SM90_ALayout_64x16 = "((4,8,4),(2,2,2)):((128,1,16),(64,8,512))"  # register A of the RS form, 16-bit A


@cache
def _mma_table() -> dict[str, tuple]:
    t: dict[str, tuple] = {}
    for key, (a, b, c, all_types) in _SM80.items():
        m, n, k = map(int, key.split("_")[0].split("x"))
        for types in all_types:
            t[f"SM80_{m}x{n}x{k}_{types}_TN"] = (m, n, k, "32:1", a, b, c, types,
                                                 f"mma.sync.aligned.m{m}n{n}k{k}.row.col")
    for acc in ("F16F16F16F16", "F32F16F16F32"):
        c = SM70_8x8_16b if acc.startswith("F16") else SM70_8x8_32b
        for tn in ("TN", "NT", "NN", "TT"):
            a_row, b_col = tn[0] == "T", tn[1] == "N"
            t[f"SM70_8x8x4_{acc}_{tn}"] = (8, 8, 4, SM70_QuadPair, SM70_8x4_Row if a_row else SM70_8x4_Col,
                                           SM70_8x4_Row if b_col else SM70_8x4_Col, c, acc, "mma.sync.aligned.m8n8k4."
                                           f"{'row' if a_row else 'col'}.{'col' if b_col else 'row'}")
    for n in _SM90_N:
        c = f"((4,8,4),(2,2,{n // 8})):((128,1,16),(64,8,512))"
        b = f"(128,({n},16)):(0,(1,{n}))"
        for types in _SM90_TYPES:
            ptx = f"wgmma.mma_async.sync.aligned.m64n{n}k16"
            t[f"SM90_64x{n}x16_{types}_SS"] = (64, n, 16, "128:1", "(128,(64,16)):(0,(1,64))", b, c, types, ptx)
            t[f"SM90_64x{n}x16_{types}_RS"] = (64, n, 16, "128:1", SM90_ALayout_64x16, b, c, types, ptx)
    return t


def mma_names() -> list[str]:
    """Every MMA atom name this module knows (CuTe's struct names)."""
    return sorted(_mma_table())


# --------------------------------------------------------------------------- copy atoms


@dataclass(frozen=True)
class CopyAtom:
    """One copy instruction. ``src``/``dst``/``ref``: (thread, value) -> bit index, as CuTe's Copy_Traits.

    Post-condition: ``size(src) == size(dst)`` (bits moved per instruction, all threads together).
    """

    name: str
    thr_id: Layout
    src: Layout
    dst: Layout
    ref: Layout
    ptx: str

    @property
    def num_threads(self) -> int:
        return size(self.thr_id)

    def _recast(self, which: str, bits: int) -> Layout:
        """``src_layout`` / ``dst_layout`` / ``ref_layout``: (thread, value) -> element index of the source
        (destination, reference), for elements of ``bits``. Refused, as CuTe's ``Copy_Atom<Op, T>`` static asserts
        do for all three, where a recast layout loses threads: ldmatrix's registers are 32-bit pieces, so with
        64-bit T its (32, 32-bit) register side has 16 "threads" (CopyOperation is not valid for Dst of ValType)."""
        out = {}
        for key, what in (("src", "source"), ("dst", "destination"), ("ref", "reference")):
            lay = getattr(self, key)
            per_thread_bits = size(lay) // self.num_threads
            if bits <= 0 or per_thread_bits % bits:
                cute = (f" (CuTe's recast rounds up and prints (1,1):(0,1): one {bits}-bit element per "
                        f"{per_thread_bits}-bit copy)") if self.num_threads == 1 and bits > per_thread_bits else ""
                raise LayoutError(f"{self.name}: {per_thread_bits} bits per thread ({what}) is not a whole number of "
                                  f"{bits}-bit elements{cute}")
            out[key] = recast_layout(lay, 1, bits)
            if size(out[key][0]) != self.num_threads:
                raise LayoutError(f"{self.name} cannot move {bits}-bit elements: its {what} layout {lay} (bits) "
                                  f"recast to {bits}-bit elements is {out[key]}, {size(out[key][0])} threads where the "
                                  f"atom has {self.num_threads} (CuTe: static_assert \"CopyOperation is not valid for "
                                  f"{key.capitalize()} of ValType\")")
        return out[which]

    src_layout = partialmethod(_recast, "src")
    dst_layout = partialmethod(_recast, "dst")
    ref_layout = partialmethod(_recast, "ref")

    def num_values(self, element_bits: int) -> int:
        """Values each thread moves per instruction (CuTe's ``NumValSrc``)."""
        return size(self.src_layout(element_bits)[1])


_LDSM = {  # (src, dst) of SM75 ldmatrix in bits
    "SM75_U32x1_LDSM_N": ("((8,4),128):((128,0),1)", "(32,32):(32,1)", "ldmatrix.sync.aligned.m8n8.x1.shared.b16"),
    "SM75_U32x2_LDSM_N": ("((16,2),128):((128,0),1)", "(32,(32,2)):(32,(1,1024))",
                          "ldmatrix.sync.aligned.m8n8.x2.shared.b16"),
    "SM75_U32x4_LDSM_N": ("(32,128):(128,1)", "(32,(32,4)):(32,(1,1024))", "ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
    "SM75_U16x2_LDSM_T": ("((8,4),128):((128,0),1)", "((4,8),(16,2)):((256,16),(1,128))",
                          "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16"),
    "SM75_U16x4_LDSM_T": ("((16,2),128):((128,0),1)", "((4,8),(16,2,2)):((256,16),(1,128,1024))",
                          "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"),
    "SM75_U16x8_LDSM_T": ("(32,128):(128,1)", "((4,8),(16,2,4)):((256,16),(1,128,1024))",
                          "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"),
}
#: bits -> the unsigned type CuTe names for them
UINT_TYPES = {8: "uint8_t", 16: "uint16_t", 32: "uint32_t", 64: "uint64_t", 128: "uint128_t"}


@cache
def _copy_table() -> dict[str, tuple[str, str, str, str, str]]:
    t: dict[str, tuple[str, str, str, str, str]] = {}
    for name, (src, dst, ptx) in _LDSM.items():  # stmatrix: ldmatrix reversed
        t[name] = ("32:1", src, dst, dst, ptx)
        t[name.replace("SM75", "SM90").replace("LDSM", "STSM")] = ("32:1", dst, src, dst,
                                                                    ptx.replace("ldmatrix", "stmatrix"))
    for bits in UINT_TYPES:  # one thread moves `bits` bits: src = dst = ref = (1,bits):(0,1)
        one = ("1:0",) + (f"(1,{bits}):(0,1)",) * 3
        if bits >= 32:
            t[f"SM80_CP_ASYNC_CACHEALWAYS_{bits // 8}B"] = one + (f"cp.async.ca.shared.global [{bits // 8}]",)
        t[f"UniversalCopy_{bits}b"] = one + (f"ld/st of {bits} bits",)
    t["SM80_CP_ASYNC_CACHEGLOBAL_16B"] = t["SM80_CP_ASYNC_CACHEALWAYS_16B"][:4] + ("cp.async.cg.shared.global [16]",)
    t.update(tmem_copy_table())  # SM100 tcgen05.ld / tcgen05.st (algebra.hw.sm100_tmem)
    return t


_ALIASES = {f"SM80_CP_ASYNC_CACHEALWAYS<{v}>": f"SM80_CP_ASYNC_CACHEALWAYS_{b // 8}B" for b, v in UINT_TYPES.items()
            if b >= 32}
_ALIASES.update({f"UniversalCopy<{v}>": f"UniversalCopy_{b}b" for b, v in UINT_TYPES.items()})
_ALIASES["SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"] = "SM80_CP_ASYNC_CACHEGLOBAL_16B"


def copy_names() -> list[str]:
    """Every copy atom name this module knows."""
    return sorted(_copy_table())


@cache
def _atom(name: str) -> MMAAtom | CopyAtom:
    """The one builder of both tables' atoms: their layouts parsed from CuTe's notation, an MMA atom's value types read
    from its name's spelling (``F32BF16BF16F32``: D, A, B, C; SM90's ``F32BF16BF16`` lists D, A, B and C is D)."""
    if name in _copy_table():
        thr, src, dst, ref, ptx = _copy_table()[name]
        return CopyAtom(name, *map(parse_layout, (thr, src, dst, ref)), ptx)
    m, n, k, thr, a, b, c, types, ptx = _mma_table()[name]
    vt = re.findall(r"[BT]?F\d+|S\d+", types)
    return MMAAtom(name, (m, n, k), *map(parse_layout, (thr, a, b, c)), tuple(_T_NAMES[x] for x in (vt + vt[:1])[:4]),
                   ptx)  # type: ignore[arg-type]


def names() -> list[str]:
    """All atom names: MMA atoms, then copy atoms."""
    return mma_names() + copy_names()


def get(name: str) -> MMAAtom | CopyAtom:
    """The atom called ``name`` (CuTe's names; ``cute::`` prefixes and template spellings such as
    ``SM80_CP_ASYNC_CACHEALWAYS<uint128_t>`` are accepted)."""
    key = name.strip().removeprefix("cute::").replace(" ", "")
    key = key.removeprefix("SM100::TMEM::LOAD::").removeprefix("SM100::TMEM::STORE::")
    key = _ALIASES.get(key, key)
    if key in _mma_table() or key in _copy_table():
        return _atom(key)
    raise LayoutError(f"unknown atom {name!r}; atoms.names() lists the {len(names())} known atoms")


# tiled copy / tiled MMA: algebra.hw.atoms_tiled (``algebra.atoms`` names both)
__all__ = ["CopyAtom", "MMAAtom", "copy_names", "get", "mma_names", "names"]
