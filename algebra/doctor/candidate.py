"""One candidate placement of a tile in shared memory, as the layout doctor's search keeps it: its kind (naive,
swizzle, padding, xor), its parameters and the wavefronts of each access under it. The search (``solver``) makes
them and the XOR search (``solver_xor``) adds its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from algebra.doctor.solver_access import Place


@dataclass
class Candidate:
    """One placement of the tile: ``kind`` naive / swizzle / padding / xor, its parameters and its cost."""

    kind: str
    place: Place
    swizzle: tuple[int, int, int] | None = None
    pad: int = 0
    xor: dict[int, int] | None = None
    phases: list[list[int] | None] = field(default_factory=list)
    footprint_bytes: int = 0
    fn: Any = None  # offset -> offset, when the placement is a function of the tile's own offsets (swizzles)

    @property
    def safe_vector(self) -> int:
        """Vectors this wide stay whole without checking: swizzles and XOR maps flip no bit below their lowest
        target bit (the tile as given is checked once, as the naive candidate)."""
        if self.swizzle:
            return 1 << self.swizzle[1]
        if self.kind == "xor":
            return min((m & -m for m in (self.xor or {}).values() if m), default=1 << 30)
        return 1

    @property
    def wavefronts(self) -> list[int]:
        return [sum(p) if p else 0 for p in self.phases]

    @property
    def total(self) -> int:
        return sum(self.wavefronts)

    @property
    def xor_bits(self) -> int:
        if self.swizzle:
            return self.swizzle[0]
        return sum(bin(m).count("1") for m in (self.xor or {}).values())
