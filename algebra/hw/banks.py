"""Shared-memory banks and wavefronts (CONTRACT §3): the bank map of one warp-wide instruction from its byte
addresses. Access patterns from layouts are ``algebra.hw.bank_access``; the padding and swizzle fixes
``algebra.hw.bankfix``.

The model: 32 banks of 4 bytes, ``bank = (byte_address // 4) % 32``. A warp's request is split into phases by its
access width (<= 4 bytes: one phase of 32 lanes; 8 bytes: two of 16; 16 bytes: four of 8; ldmatrix / stmatrix: one
phase per 8x8 matrix of eight 16-byte rows). Inside a phase, lanes touching the same 4-byte word share it
(broadcast); the phase costs as many wavefronts as the largest number of distinct words in any one bank (at least 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from algebra.core.errors import LayoutError

NUM_BANKS = 32
BANK_BYTES = 4
WARP_SIZE = 32
LDMATRIX_ROW_BYTES = 16
LANES_PER_PHASE = {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}


@dataclass(frozen=True)
class BankAnalysis:
    """The bank map of one warp-wide shared-memory instruction.

    Post-conditions: ``len(banks) == len(byte_addresses)``; ``phases[p] >= 1`` for every phase;
    ``ways == max(phases)``; ``wavefronts == sum(phases) >= len(phases)``.
    """

    byte_addresses: list[int]
    access_bytes: int
    kind: str
    banks: list[int]
    phases: list[int]
    phase_lanes: list[list[int]]
    bank_words: list[dict[int, list[int]]] = field(repr=False)
    coordinates: list[Any] | None = None
    element_offsets: list[int] | None = None

    @property
    def ways(self) -> int:
        """The largest per-phase wavefront count (1 means conflict-free)."""
        return max(self.phases)

    @property
    def wavefronts(self) -> int:
        """The total wavefront count: the sum over phases."""
        return sum(self.phases)

    @property
    def conflict_free(self) -> bool:
        """True when every phase is served in one wavefront."""
        return self.ways == 1

    def conflict(self) -> dict[str, Any] | None:
        """A witness of the worst phase's conflict, None when conflict-free: the bank with the most distinct words
        there, and for each of those words the first lane touching it (``{"phase", "bank", "ways", "lanes",
        "byte_addresses" (those lanes' addresses), "words" (each word's first byte)}``).

        Post-condition: ``ways == max(phases)``; every word lies in ``bank``; lane ``lanes[i]`` touches ``words[i]``."""
        if self.ways == 1:
            return None
        p = self.phases.index(self.ways)
        bank, words = max(self.bank_words[p].items(), key=lambda kv: (len(kv[1]), -kv[0]))
        span = max(1, self.access_bytes // BANK_BYTES)
        lanes = [next(t for t in self.phase_lanes[p] if 0 <= w - self.byte_addresses[t] // BANK_BYTES < span)
                 for w in words]
        return {"phase": p, "bank": bank, "ways": len(words), "lanes": lanes,
                "byte_addresses": [self.byte_addresses[t] for t in lanes], "words": [w * BANK_BYTES for w in words]}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: banks, ways, wavefronts, byte_addresses, phases, phase_lanes, bank_words."""
        out: dict[str, Any] = {
            "banks": list(self.banks),
            "ways": self.ways,
            "wavefronts": self.wavefronts,
            "byte_addresses": list(self.byte_addresses),
            "phases": list(self.phases),
            "phase_lanes": [list(p) for p in self.phase_lanes],
            "bank_words": [{str(b): list(w) for b, w in sorted(d.items())} for d in self.bank_words],
            "access_bytes": self.access_bytes,
            "kind": self.kind,
        }
        if self.coordinates is not None:
            out["coordinates"] = [_jsonable(c) for c in self.coordinates]
        if self.element_offsets is not None:
            out["element_offsets"] = list(self.element_offsets)
        return out


def _jsonable(c: Any) -> Any:
    return [_jsonable(x) for x in c] if isinstance(c, tuple | list) else c


def bank_of(byte_address: int) -> int:
    """The bank a byte address falls in: ``(byte_address // 4) % 32``."""
    return (byte_address // BANK_BYTES) % NUM_BANKS


def phase_costs(addrs: list[int], access_bytes: int, per_phase: int) -> list[int]:
    """Each phase's cost: of the distinct 4-byte words its ``per_phase`` lanes touch (``access_bytes`` from each
    lane's address), the most that fall in one bank (>= 1)."""
    out, span = [], range(max(1, access_bytes // BANK_BYTES))
    for start in range(0, len(addrs), per_phase):
        count = [0] * NUM_BANKS
        for w in {a // BANK_BYTES + k for a in addrs[start:start + per_phase] for k in span}:
            count[w % NUM_BANKS] += 1
        out.append(max(count) or 1)
    return out


def _phases(addrs: list[int], access_bytes: int, kind: str, per_phase: int) -> BankAnalysis:
    """The bank map with phases of ``per_phase`` lanes (:func:`phase_costs`) and each phase's distinct 4-byte words
    grouped by bank."""
    phase_lanes, bank_words, span = [], [], range(max(1, access_bytes // BANK_BYTES))
    for start in range(0, len(addrs), per_phase):
        stop = min(start + per_phase, len(addrs))
        by_bank: dict[int, list[int]] = {}
        for w in sorted({a // BANK_BYTES + k for a in addrs[start:stop] for k in span}):
            by_bank.setdefault(w % NUM_BANKS, []).append(w)
        phase_lanes.append(list(range(start, stop)))
        bank_words.append(by_bank)
    banks = [(a // BANK_BYTES) % NUM_BANKS for a in addrs]  # bank_of, inlined
    return BankAnalysis(addrs, access_bytes, kind, banks, phase_costs(addrs, access_bytes, per_phase), phase_lanes,
                        bank_words)


def _check_addresses(addresses: Sequence[int], align: int, limit: int, what: str, relative: bool) -> list[int]:
    """``relative``: the addresses count from a tensor's pointer at a 128-byte boundary (a layout's offsets), so a
    negative one lies below the pointer and keeps its bank, ``floor(a / 4) mod 32``; else they are absolute (>= 0)."""
    addrs = [int(a) for a in addresses]
    if not addrs:
        raise LayoutError(f"{what}: at least one address is required")
    if len(addrs) > limit:
        raise LayoutError(f"{what}: {len(addrs)} addresses given, at most {limit} lanes")
    for lane, a in enumerate(addrs):
        if a < 0 and not relative:
            raise LayoutError(f"{what}: lane {lane} has negative byte address {a}")
        if a % align:
            raise LayoutError(f"{what}: lane {lane} byte address {a} is not a multiple of the {align}-byte access")
    return addrs


def analyze(byte_addresses: Sequence[int], access_bytes: int = 4, kind: str = "lds") -> BankAnalysis:
    """Bank map of one warp instruction; ``byte_addresses[i]`` is lane i's address (lane order).

    ``kind`` is ``"lds"``/``"sts"`` (ordinary loads and stores, phases by ``access_bytes`` in {1, 2, 4, 8, 16}) or
    ``"ldmatrix"``/``"stmatrix"`` (the addresses are row addresses, 8 per matrix; see :func:`analyze_ldmatrix`).
    Post-condition: ``banks[i] == (byte_addresses[i] // 4) % 32``; phase p covers lanes
    ``[p * n, (p + 1) * n)`` with n = 32, 16, 8 lanes for accesses of <= 4, 8, 16 bytes.
    """
    return _phases(*request(byte_addresses, access_bytes, kind))


def request(byte_addresses: Sequence[int], access_bytes: int = 4, kind: str = "lds",
            relative: bool = False) -> tuple[list[int], int, str, int]:
    """:func:`analyze`'s checked request: (addresses, access bytes, kind, lanes per phase); LayoutError as it.
    ``relative=True``: addresses from a layout's offsets, counted from a 128-byte-aligned pointer (negative ones
    allowed: a negative stride reaches below the pointer)."""
    if kind in ("ldmatrix", "stmatrix"):
        if len(byte_addresses) % 8:
            raise LayoutError(f"{kind}: the number of row addresses ({len(byte_addresses)}) must be 8, 16 or 32")
        return ldmatrix_request(byte_addresses, len(byte_addresses) // 8, kind, relative)
    if kind not in ("lds", "sts"):
        raise LayoutError(f"kind must be lds, sts, ldmatrix or stmatrix, not {kind!r}")
    if access_bytes not in LANES_PER_PHASE:
        raise LayoutError(f"access_bytes must be one of 1, 2, 4, 8, 16, not {access_bytes}")
    addrs = _check_addresses(byte_addresses, access_bytes, WARP_SIZE, f"{access_bytes}-byte access", relative)
    return addrs, access_bytes, kind, LANES_PER_PHASE[access_bytes]


def analyze_ldmatrix(row_addresses: Sequence[int], num: int = 1, trans: bool = False,
                     kind: str = "ldmatrix") -> BankAnalysis:
    """Bank map of ``ldmatrix``/``stmatrix`` ``.x{num}`` (``.trans`` moves registers, not shared-memory rows).

    ``row_addresses`` holds the 8 * num row addresses (lanes 0..8*num-1), each a 16-byte-aligned row of 16 bytes.
    Post-condition: one phase per 8x8 matrix, phase m covering rows ``8m .. 8m+7``; so wavefronts >= num.
    """
    del trans  # the transpose happens in the register distribution; the rows read are the same
    return _phases(*ldmatrix_request(row_addresses, num, kind))


def ldmatrix_request(row_addresses: Sequence[int], num: int, kind: str,
                     relative: bool = False) -> tuple[list[int], int, str, int]:
    """:func:`analyze_ldmatrix`'s checked request, as :func:`request`."""
    if num not in (1, 2, 4):
        raise LayoutError(f"{kind}: num must be 1, 2 or 4 (x1, x2, x4), not {num}")
    if len(row_addresses) != 8 * num:
        raise LayoutError(f"{kind}.x{num} takes {8 * num} row addresses, {len(row_addresses)} given")
    addrs = _check_addresses(row_addresses, LDMATRIX_ROW_BYTES, WARP_SIZE, f"{kind}.x{num}", relative)
    return addrs, LDMATRIX_ROW_BYTES, kind, 8
