"""A note where a swizzle is typed: ``Sw<B,4,3>`` (B = 1..3) is the byte form CuTe prints for the GMMA atoms
(``GMMA::Layout_*_SW32/64/128_Atom``, TMA's SWIZZLE_32B/64B/128B), but the explorer and the banks lab apply a typed
swizzle to element offsets. On element offsets of E-byte elements the same hardware swizzle is Sw<B,4-log2(E),3>."""

from __future__ import annotations

import re

_SW = re.compile(r"\b(?:Sw|Swizzle)\s*<\s*([123])\s*,\s*4\s*,\s*3\s*>")
MODES = {1: "SWIZZLE_32B", 2: "SWIZZLE_64B", 3: "SWIZZLE_128B"}


def byte_form_note(text: str, element_bytes: int | None = None) -> str | None:
    """The note for a ``Sw<B,4,3>`` in ``text`` taken on element offsets, or None when there is none. With
    ``element_bytes`` (the page's element size) it names the element-offset form for that size; without it, for
    2-byte elements (half / bf16, the usual GMMA operand)."""
    m = _SW.search(text or "")
    if not m:
        return None
    b = int(m.group(1))
    if element_bytes == 1:
        return (f"Sw<{b},4,3> is the byte form CuTe prints for the GMMA atoms ({MODES[b]}); with 1-byte elements "
                f"element offsets are byte offsets, so it is that swizzle here.")
    eb = element_bytes or 2
    shift = eb.bit_length() - 1
    size = f"{eb}-byte elements" if element_bytes else "2-byte elements (half, bf16)"
    return (f"Sw<{b},4,3> is the byte form CuTe prints for the GMMA atoms ({MODES[b]}); this page applies it to "
            f"element offsets, where it is a different swizzle. On element offsets of {size} the GMMA atom's "
            f"swizzle is Sw<{b},{4 - shift},3>.")


__all__ = ["byte_form_note"]
