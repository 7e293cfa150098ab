"""The few LinearLayout builders Triton makes its layouts with (``lib/Tools/LinearLayout.cpp``,
``LinearLayoutConversions.cpp``), so that the conversions in ``triton_layouts`` read like Triton's own:
``identity1d``, ``zeros1d``, and ``ensure_not_smaller`` / ``ensure_not_larger``, which fit a layout to a tensor shape
(repeating it over registers, or broadcasting its largest bases); the product ``*``, ``transpose_outs`` and
``compose`` are ``linear_layout.LinearLayout``'s (``TLL`` here), whose map is a core Layout with F2 strides.

Post-condition of every builder: a new ``TLL`` (they never mutate), whose out-dim sizes are powers of two and whose
basis values lie inside them.
"""

from __future__ import annotations

from typing import Any

from algebra.core.errors import LayoutError
from algebra.doctor.linear_layout import LinearLayout


def log2(n: int, what: str) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1 or n & (n - 1):
        raise LayoutError(f"{what}: {n!r} is not a power of two")
    return n.bit_length() - 1


TLL = LinearLayout  # Triton's LinearLayout, built unchecked (``LinearLayout.raw``)


def identity1d(size: int, in_dim: str, out_dim: str) -> TLL:
    return TLL.raw({in_dim: [[1 << i] for i in range(log2(size, f"{in_dim} size"))]}, {out_dim: size})


def zeros1d(size: int, in_dim: str, out_dim: str) -> TLL:
    return TLL.raw({in_dim: [[0] for _ in range(log2(size, f"{in_dim} size"))]}, {out_dim: 1})


def empty() -> TLL:
    return TLL.raw({}, {})


def dims(rank: int) -> list[str]:
    return [f"dim{i}" for i in range(rank)]


def identity_nd(in_dim: str, shape: list[int], order: list[int]) -> TLL:
    """Triton's identityStandardND: identity1D per dimension, the most minor (order[0]) first."""
    names = dims(len(shape))
    out = empty()
    for d in order:
        out = out * identity1d(shape[d], in_dim, names[d])
    return out


def matrix_order(rank: int, row_major: bool) -> list[int]:
    """Triton's getMatrixOrder: [rank-1, ..., 0], the two innermost swapped when not row-major."""
    order = list(range(rank - 1, -1, -1))
    if not row_major:
        order[0], order[1] = order[1], order[0]
    return order


def ensure_not_smaller(ll: TLL, shape: dict[str, int], in_dim: str) -> TLL:
    """Repeat ``ll`` over ``in_dim`` (register or offset) until each out-dim covers ``shape`` (out-dims in the
    layout's own order)."""
    out = ll
    for name in list(ll.outs):
        have, want = ll.outs[name], shape[name]
        if have < want:
            out = out * identity1d(want // have, in_dim, name)
    return out


def ensure_not_larger(ll: TLL, shape: dict[str, int], broadcast_registers: bool = True) -> TLL:
    """Zero the largest bases of each out-dim larger than ``shape`` (they broadcast) until it fits; without
    ``broadcast_registers`` such register bases are dropped instead. Post: each out-dim's size is
    ``min(size, shape)``."""
    bases = {k: [list(v) for v in b] for k, b in ll.bases.items()}
    names = list(ll.outs)
    dropped: set[int] = set()
    for j, name in enumerate(names):
        have, want = ll.outs[name], shape[name]
        if have <= want:
            continue
        found = [(v[j], k, i) for k, b in bases.items() for i, v in enumerate(b) if v[j] != 0]
        found.sort(key=lambda t: -t[0])
        for _, k, i in found:
            if have <= want:
                break
            if not broadcast_registers and k == "register":
                dropped.add(i)
            else:
                bases[k][i][j] = 0
            have >>= 1
    if not broadcast_registers and "register" in bases:
        bases["register"] = [v for i, v in enumerate(bases["register"]) if i not in dropped]
    return TLL.raw(bases, {n: min(ll.outs[n], shape[n]) for n in names})


def as_dict(names: list[str], shape: list[int]) -> dict[str, int]:
    return dict(zip(names, shape, strict=True))


def check_pow2_list(v: Any, what: str, rank: int | None = None, allow_one: bool = True) -> list[int]:
    """A list of powers of two (of length ``rank`` when given); TTGIRError-style LayoutError naming ``what``."""
    if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise LayoutError(f"{what}: expected a list of integers, got {v!r}")
    if rank is not None and len(v) != rank:
        raise LayoutError(f"{what}: expected {rank} entries (one per dimension), got {len(v)}")
    for x in v:
        if x < 1 or x & (x - 1) or (not allow_one and x == 1):
            raise LayoutError(f"{what}: {x} is not a power of two")
    return list(v)
