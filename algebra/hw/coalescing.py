"""Global-memory coalescing: the 32-byte sectors a warp's load or store touches, per instruction.

A warp instruction fetches every 32-byte sector that any of its lanes' bytes fall in; its utilization is the
share of fetched bytes that some lane asked for. A thread partition (a TV layout, optionally over a memory layout
of the tile) is read in instructions of ``vector`` values per thread: instruction k moves values
``k*vector .. k*vector + vector - 1`` of every thread of the warp.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from algebra.core import inttuple as it
from algebra.core.errors import LayoutError
from algebra.core.layout import Layout, offsets
from algebra.hw.banks import WARP_SIZE

SECTOR_BYTES = 32
#: An L1 / L2 cache line: four sectors.
LINE_BYTES = 128
MAX_VECTOR_BYTES = 16
#: The most instructions (values per thread / vector) one warp's report lists: the work is 32 lanes each.
MAX_INSTRUCTIONS = 1024
#: The most (thread, value) pairs enumerated for a partition that is not a plain layout (swizzled, or over memory).
MAX_TABLE = 1 << 16


@dataclass(frozen=True)
class SectorReport:
    """One warp instruction's sectors. Post-conditions: ``0 < utilization <= 1``;
    ``bytes_used <= bytes_requested`` and ``bytes_used <= 32 * len(sectors)``."""

    byte_addresses: list[int]
    access_bytes: int
    sectors: list[int]
    bytes_requested: int
    bytes_used: int
    values: list[int] | None = None

    @property
    def num_sectors(self) -> int:
        return len(self.sectors)

    @property
    def utilization(self) -> float:
        """Distinct requested bytes / fetched bytes."""
        return self.bytes_used / (SECTOR_BYTES * len(self.sectors))

    @property
    def num_lines(self) -> int:
        """The 128-byte cache lines the sectors fall in (``sector // 4``)."""
        return len({sec // (LINE_BYTES // SECTOR_BYTES) for sec in self.sectors})

    def to_dict(self) -> dict[str, Any]:
        return {"byte_addresses": list(self.byte_addresses), "access_bytes": self.access_bytes,
                "sectors": list(self.sectors), "num_sectors": self.num_sectors, "num_lines": self.num_lines,
                "bytes_requested": self.bytes_requested, "bytes_used": self.bytes_used,
                "utilization": self.utilization, "values": self.values}


def sectors(byte_addresses: Sequence[int], access_bytes: int = 4) -> SectorReport:
    """The sectors touched when lane i accesses ``access_bytes`` bytes at ``byte_addresses[i]``.

    Addresses count from a tensor's pointer at a sector boundary (cudaMalloc gives 256 bytes); a negative stride
    reaches below it, and such a byte's sector is ``floor(b / 32)`` all the same.
    Post-condition: ``sectors`` is the sorted set of ``b // 32`` over every byte b accessed.
    """
    addrs = [int(a) for a in byte_addresses]
    if not addrs:
        raise LayoutError("sectors: at least one address is required")
    if access_bytes not in (1, 2, 4, 8, 16):
        raise LayoutError(f"access_bytes must be 1, 2, 4, 8 or 16, not {access_bytes}")
    for lane, a in enumerate(addrs):
        if a % access_bytes:
            raise LayoutError(f"lane {lane}: byte address {a} is not a multiple of the {access_bytes}-byte access")
    used = {a + k for a in addrs for k in range(access_bytes)}
    secs = sorted({b // SECTOR_BYTES for b in used})
    return SectorReport(addrs, access_bytes, secs, len(addrs) * access_bytes, len(used))


@dataclass(frozen=True)
class PartitionSectors:
    """Sectors of a whole thread partition for one warp, instruction by instruction.

    Post-conditions: ``len(instructions) * vector == values per thread``; ``vector <= max_vector``.
    """

    vector: int
    max_vector: int
    element_bytes: int
    instructions: list[SectorReport]

    @property
    def total_sectors(self) -> int:
        return sum(r.num_sectors for r in self.instructions)

    @property
    def total_lines(self) -> int:
        """128-byte lines summed over the instructions (a line two instructions touch counts for each)."""
        return sum(r.num_lines for r in self.instructions)

    @property
    def utilization(self) -> float:
        return sum(r.bytes_used for r in self.instructions) / (SECTOR_BYTES * self.total_sectors)

    def to_dict(self) -> dict[str, Any]:
        return {"vector": self.vector, "max_vector": self.max_vector, "element_bytes": self.element_bytes,
                "total_sectors": self.total_sectors, "total_lines": self.total_lines, "utilization": self.utilization,
                "instructions": [r.to_dict() for r in self.instructions]}


def _tv_sizes(tv: Any) -> tuple[int, int]:
    shp = tv.shape
    if not it.is_tuple(shp) or len(shp) != 2:
        raise LayoutError(f"a TV layout has two modes (thread, value); {tv} has shape {it.to_str(shp)}")
    return it.product(shp[0]), it.product(shp[1])


def _offset_fn(tv: Any, memory: Any, threads: Any = ()) -> Any:
    """(t, v) -> element offset; for a plain TV layout (additive: T(t) + V(v)) each mode is evaluated once, T on
    ``threads`` only; anything else (a swizzled TV layout) is enumerated once, in one pass over its 1-D indices
    ``t + threads * v`` (callers keep it under MAX_TABLE pairs), not pair by pair."""
    if memory is None and isinstance(tv, Layout):
        t_off, v_off = {t: tv[0](t) for t in threads}, offsets(tv[1])
        return lambda t, v: t_off[t] + v_off[v]
    table, nthr = offsets(tv), _tv_sizes(tv)[0]
    if memory is None:
        return lambda t, v: table[t + nthr * v]
    return lambda t, v: memory(table[t + nthr * v])


def widest_vector(tv: Any, element_bytes: int, memory: Any = None, max_bytes: int = MAX_VECTOR_BYTES) -> int:
    """The largest n (a power of two, n * element_bytes <= max_bytes, n dividing the values per thread) such that
    every thread's values ``g*n .. g*n + n - 1`` sit at consecutive offsets starting at a multiple of n.

    With those, one n-element vector instruction per group is legal and naturally aligned. A plain TV layout is
    checked in O(threads + values): its offset is ``T(t) + V(v)``, so the rule holds exactly when V's groups do and
    every T(t) is a multiple of n (t = 0 gives T(0) = 0); anything else value by value.
    """
    nthr, nval = _tv_sizes(tv)
    if memory is None and isinstance(tv, Layout):
        t_off, rows = offsets(tv[0]), [offsets(tv[1])]
    elif nthr * nval > MAX_TABLE:
        raise LayoutError(f"sectors: a swizzled or memory-mapped partition is checked value by value, and "
                          f"{nthr * nval:,} (thread, value) pairs is over the cap of {MAX_TABLE:,}")
    else:
        off = _offset_fn(tv, memory)
        t_off, rows = [], [[off(t, v) for v in range(nval)] for t in range(nthr)]
    best, n = 1, 2
    while n * element_bytes <= max_bytes and nval % n == 0:
        if not (all(t % n == 0 for t in t_off) and all(
                row[g] % n == 0 and all(row[g + k] == row[g] + k for k in range(1, n))
                for row in rows for g in range(0, nval, n))):
            break
        best, n = n, n * 2
    return best


def partition_sectors(tv: Any, element_bytes: int, memory: Any = None, vector: int | None = None,
                      warp: int = 0, base: int = 0) -> PartitionSectors:
    """Sectors per instruction for warp ``warp`` of the TV layout ``tv`` ((thread, value) -> tile coordinate, or
    offset when ``memory`` is None; else ``memory`` maps the tile coordinate to an element offset).

    ``vector`` defaults to :func:`widest_vector`. Byte address = ``base + element_bytes * offset``. More than
    MAX_INSTRUCTIONS instructions per warp is refused (LayoutError naming the cap).
    """
    if element_bytes not in (1, 2, 4, 8, 16):
        raise LayoutError(f"element_bytes must be 1, 2, 4, 8 or 16 (a global access moves 1 to 16 bytes per "
                          f"thread), not {element_bytes}")
    nthr, nval = _tv_sizes(tv)
    if not (memory is None and isinstance(tv, Layout)) and nthr * nval > MAX_TABLE:
        raise LayoutError(f"sectors: a swizzled or memory-mapped partition is read value by value, and "
                          f"{nthr * nval:,} (thread, value) pairs is over the cap of {MAX_TABLE:,}")
    widest = widest_vector(tv, element_bytes, memory)
    v = widest if vector is None else int(vector)
    if v < 1 or nval % v:
        raise LayoutError(f"vector {v} must divide the {nval} values per thread")
    if v > widest:  # only a vector asked for can be wider
        raise LayoutError(f"vector {v} is wider than the layout allows: each thread's values are contiguous and "
                          f"aligned only in groups of {widest}")
    if nval // v > MAX_INSTRUCTIONS:
        raise LayoutError(f"sectors: each thread holds {nval:,} values, {nval // v:,} instructions of {v} "
                          f"value(s): over the cap of {MAX_INSTRUCTIONS:,} instructions per warp")
    lanes = range(WARP_SIZE * warp, min(WARP_SIZE * (warp + 1), nthr))
    if not lanes:
        raise LayoutError(f"warp {warp} has no threads: the layout has {nthr}")
    off = _offset_fn(tv, memory, lanes)
    out = [replace(sectors([base + element_bytes * off(t, g) for t in lanes], v * element_bytes),
                   values=list(range(g, g + v))) for g in range(0, nval, v)]
    return PartitionSectors(v, widest, element_bytes, out)
