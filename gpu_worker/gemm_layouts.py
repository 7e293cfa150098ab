"""The GEMM ladder's layouts as data: what a rung declares (tile, shared-memory operands as CuTe layouts composed with
their swizzle, the accesses that touch them, TMA boxes, the wgmma descriptor, MMA / copy atoms), the bank model's
prediction for each access, and the compile-time constants the build passes to nvcc.

The declarations themselves are :data:`gpu_worker.gemm_decl.DECLS` (one per rung, beside the rung table of
``gpu_worker.gemm``), with the functions that read them (``predict``, ``predicted_counters``, ``defines``): this
module holds the types and the bank model of one instance, and imports nothing of the rungs. Standard library and
``algebra`` only: ``bench/`` scripts import it on machines without the web app's dependencies.

An access is a list of *instances*: the warp-wide instructions of one CTA in one repetition (a k tile of the main
loop, or a tile of the epilogue), each instance the element coordinates (row, column) of the operand that lane l
touches (``kind="lanes"``, ``width`` bytes from there) or that row address l names (``kind="ldmatrix"``: 16 bytes per
row, 8 rows per 8x8 matrix). The bank model (``algebra.banks.analyze``) of the instance's byte addresses is its
wavefront count; ``ideal`` is its number of phases, the model's floor.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import algebra as A
from algebra.banks import analyze

Coords = list[tuple[int, int]]

#: How Nsight Compute counts an access: "ld" (LDS and LDSM: l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld,
#: smsp__sass_inst_executed_op_shared_ld + _op_ldsm), "st" (STS), "ldgsts" (cp.async), "gmma" (wgmma's operand
#: reads: smsp__sass_inst_executed_op_shared_gmma, l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma), or None (TMA:
#: the copy engine's writes and reads are on none of these counters).
COUNTERS = ("ld", "st", "ldgsts", "gmma", None)


@dataclass(frozen=True)
class Access:
    """One shared-memory instruction of a rung (see the module docstring). ``repeat(m, n, k)`` is how many times a
    launch runs the instance set of one CTA: the per-launch count is ``len(instances()) * repeat(m, n, k)``, each
    instance ``instructions_per_instance`` of the instructions Nsight counts (wgmma: B's reads belong to A's)."""

    name: str
    instruction: str
    counter: str | None
    kind: str
    width: int
    instances: Callable[[], list[Coords]]
    repeat: Callable[[int, int, int], int]
    what: str = ""
    instructions_per_instance: int = 1

    def __post_init__(self) -> None:
        if self.counter not in COUNTERS:
            raise ValueError(f"{self.name}: counter must be one of {COUNTERS}")
        if self.kind not in ("lanes", "ldmatrix"):
            raise ValueError(f"{self.name}: kind is lanes or ldmatrix")


@dataclass(frozen=True)
class SmemOperand:
    """A shared-memory tile: ``shape`` / ``stride`` in elements (CuTe's (rows, cols) of the operand), composed with
    ``swizzle`` (Sw<B,M,S> on element offsets, None for none), ``buffers`` copies of it (pipeline stages)."""

    operand: str
    shape: tuple[int, int]
    stride: tuple[int, int]
    element_bytes: int
    buffers: int
    swizzle: tuple[int, int, int] | None = None
    accesses: tuple[Access, ...] = ()

    @property
    def base(self) -> str:
        """The layout under the swizzle, in CuTe notation."""
        return f"({self.shape[0]},{self.shape[1]}):({self.stride[0]},{self.stride[1]})"

    @property
    def swizzle_text(self) -> str | None:
        return f"Sw<{self.swizzle[0]},{self.swizzle[1]},{self.swizzle[2]}>" if self.swizzle else None

    @property
    def layout(self) -> str:
        """``Sw<B,M,S> o (R,C):(s0,s1)`` (or the plain layout): what ``algebra.parse`` reads."""
        return f"{self.swizzle_text} o {self.base}" if self.swizzle else self.base

    @property
    def pitch(self) -> int:
        """Elements between consecutive rows (row-major) or columns (column-major) in memory."""
        return max(self.stride)

    @property
    def bytes(self) -> int:
        """One buffer's allocation: the outer mode's extent times the pitch (padding included), in bytes."""
        outer = self.shape[0] if self.stride[0] >= self.stride[1] else self.shape[1]
        return outer * self.pitch * self.element_bytes


@dataclass(frozen=True)
class TmaBox:
    """One tensor map: ``box_dim`` innermost first (as cuTensorMapEncodeTiled takes it), its smem destination or
    source layout, multicast to ``multicast`` CTAs of the cluster."""

    operand: str
    direction: str
    box_dim: tuple[int, int]
    swizzle: str
    smem_layout: str
    multicast: int = 1

    @property
    def bytes(self) -> int:
        return self.box_dim[0] * self.box_dim[1] * 2


@dataclass(frozen=True)
class WgmmaDesc:
    """The shared-memory matrix descriptor both operands use (K-major), for a start address of 0, and the
    instruction it feeds."""

    instruction: str
    m: int
    n: int
    k: int
    layout_type: int
    leading_byte_offset: int
    stride_byte_offset: int
    k_step_bytes: int
    major: str = "K"

    @property
    def value(self) -> int:
        from algebra.hw.hopper import GmmaDescriptor

        return GmmaDescriptor(0, self.leading_byte_offset, self.stride_byte_offset, self.layout_type).value


@dataclass(frozen=True)
class RungDecl:
    """Everything a rung declares. ``tile`` is one CTA's (BM, BN, BK); a cluster of ``cluster`` CTAs along M makes
    the problem granularity (BM * cluster, BN, BK)."""

    rung: int
    name: str
    source: str
    tile: tuple[int, int, int]
    threads: int
    stages: int
    smem: tuple[SmemOperand, ...]
    mma_atom: str
    copy_atom: str
    write_atom: str
    changed: str
    fact: str
    cluster: int = 1
    warps: tuple[int, int] | None = None
    tma: tuple[TmaBox, ...] = ()
    wgmma: WgmmaDesc | None = None
    extra_smem: int = 0
    min_cc: str = "8.0"
    defines: dict[str, int] = field(default_factory=dict)

    @property
    def granularity(self) -> tuple[int, int, int]:
        bm, bn, bk = self.tile
        return bm * self.cluster, bn, bk

    @property
    def smem_bytes(self) -> int:
        """Dynamic shared memory the kernel allocates: every operand's buffers plus ``extra_smem`` (alignment)."""
        return sum(op.bytes * op.buffers for op in self.smem) + self.extra_smem

    def operand(self, name: str) -> SmemOperand:
        return next(op for op in self.smem if op.operand == name)


# ------------------------------------------------------------------------------------------------ the bank model
@functools.cache
def _offsets(layout: str) -> tuple[tuple[int, ...], int]:
    """Every element offset of a rank-2 layout in CuTe's (column-major) index order, and its row count."""
    from algebra.core.layout import offsets

    lay = A.parse(layout)
    return tuple(offsets(lay)), A.size(lay[0])


def byte_addresses(op: SmemOperand, coords: Coords) -> list[int]:
    """Byte offsets (from the buffer's start) of the given element coordinates (row, column) under the operand's
    layout: ``element_bytes * L((r, c))``, read from the layout's offsets enumerated once."""
    table, rows = _offsets(op.layout)
    return [op.element_bytes * table[r + rows * c] for r, c in coords]


def instance_analysis(op: SmemOperand, access: Access, coords: Coords):
    """``algebra.banks.analyze`` of one instance."""
    return _analysis(access.kind, access.width, access.counter, tuple(byte_addresses(op, coords)))


@functools.lru_cache(maxsize=4096)
def _analysis(kind: str, width: int, counter: str | None, addrs: tuple[int, ...]):
    if kind == "ldmatrix":
        return analyze(addrs, kind="ldmatrix")
    return analyze(addrs, access_bytes=width, kind="sts" if counter == "st" else "lds")


def _wavefronts(op: SmemOperand, access: Access, coords: Coords) -> tuple[int, int, int]:
    """(wavefronts, phases, ways) of one instance. The model sees only which 4-byte words fall in which bank, so
    moving every address by the same multiple of 128 bytes (32 banks) changes nothing: instances are analysed with
    their lowest 128-byte line at 0, and equal ones once."""
    addrs = byte_addresses(op, coords)
    low = min(addrs) // 128 * 128
    r = _analysis(access.kind, access.width, access.counter, tuple(a - low for a in addrs))
    return r.wavefronts, len(r.phases), r.ways


@dataclass(frozen=True)
class Prediction:
    """The model over every instance of an access: per-instruction wavefronts (mean over instances), the floor
    (phases), the most ways, and the first instance's analysis (what the page draws and the banks lab shows)."""

    instances: int
    wavefronts: float
    ideal: float
    ways: int
    first: object

    @property
    def conflicts(self) -> float:
        return self.wavefronts - self.ideal

    @property
    def is_ideal(self) -> bool:
        return self.wavefronts == self.ideal
