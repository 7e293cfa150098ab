"""Layouts over F2: carry-less (XOR) stride arithmetic and the XOR-matrix view of a swizzle (seed 001).

- ``F2(v)`` is a vector of bits (an element of F_2^m): ``+`` is XOR and ``*`` by an int is the carry-less product
  (``F2(0b11) * 0b11 == F2(0b101)``, where ``3 * 3 == 9`` in Z). ``clmul(a, b)`` is that product on ints.
- A matrix over F2 is a list of columns, each an int bitmask: column j is the image of the unit vector ``1 << j``.
  ``apply``, ``compose``, ``rank``, ``inverse``, ``is_involution`` work on that form.
- ``swizzle_matrix(Swizzle(B, M, S))`` is the matrix of ``x ^ ((x & yyy_mask) >> S)``; it is its own inverse because
  the source bits (yyy) and the target bits (zzz) do not overlap when ``|S| >= B``.
- ``F2Layout(shape, stride)`` evaluates like a Layout but sums ``c_i * d_i`` with XOR and carry-less products;
  ``to_f2_layout(x)`` writes a Swizzle, or a ComposedLayout whose inner layout moves whole bits, as one.
"""

from __future__ import annotations

from typing import Any

from algebra.core import inttuple as it
from algebra.core.arith import F2, MAX_BITS, clmul
from algebra.core.errors import LayoutError
from algebra.core.inttuple import is_int

__all__ = ["F2", "F2Layout", "clmul", "describe_swizzle", "swizzle_matrix", "to_f2_layout"]

# --------------------------------------------------------------------------------------------- matrices


def matrix_of(f: Any, nbits: int) -> list[int]:
    """Columns of the F2 matrix of ``f`` on ``nbits`` bits: column j is ``f(1 << j)`` (f must be linear)."""
    _check_bits(nbits)
    return [int(f(1 << j)) for j in range(nbits)]


def identity(nbits: int) -> list[int]:
    return [1 << j for j in range(_check_bits(nbits))]


def apply(cols: list[int], x: int) -> int:
    """The matrix times the bit vector ``x``: the XOR of the columns at the set bits of x."""
    if x < 0 or x >> len(cols):
        raise LayoutError(f"{x} has bits beyond the {len(cols)} the matrix acts on")
    out, j = 0, 0
    while x:
        if x & 1:
            out ^= cols[j]
        x >>= 1
        j += 1
    return out


def compose(a: list[int], b: list[int]) -> list[int]:
    """Columns of ``a o b`` (apply b, then a)."""
    return [apply(a, c) for c in b]


def rows(cols: list[int], nbits: int | None = None) -> list[int]:
    """Row masks: row i has bit j set when input bit j feeds output bit i (``Swizzle.f2_matrix``'s form)."""
    n = nbits if nbits is not None else max(len(cols), max((c.bit_length() for c in cols), default=0))
    return [sum(1 << j for j, c in enumerate(cols) if (c >> i) & 1) for i in range(n)]


def rank(cols: list[int]) -> int:
    """Rank over F2 (Gaussian elimination on the columns)."""
    basis: list[int] = []
    for c in cols:
        for b in basis:
            c = min(c, c ^ b)
        if c:
            basis.append(c)
            basis.sort(reverse=True)
    return len(basis)


def inverse(cols: list[int]) -> list[int]:
    """Columns of the inverse of a square invertible matrix; ``LayoutError`` if it is singular.

    Post: ``compose(inverse(m), m) == identity(len(m))``."""
    n = len(cols)
    if any(c >> n for c in cols):
        raise LayoutError("inverse needs a square matrix")
    rws = rows(cols, n)
    aug = [rws[i] | (1 << (n + i)) for i in range(n)]
    for col in range(n):
        piv = next((r for r in range(col, n) if (aug[r] >> col) & 1), None)
        if piv is None:
            raise LayoutError("the matrix is singular over F2: the map is not a bijection")
        aug[col], aug[piv] = aug[piv], aug[col]
        for r in range(n):
            if r != col and (aug[r] >> col) & 1:
                aug[r] ^= aug[col]
    inv_rows = [a >> n for a in aug]
    return [sum(1 << i for i in range(n) if (inv_rows[i] >> j) & 1) for j in range(n)]


def is_involution(cols: list[int]) -> bool:
    """``M o M == I``: applying the map twice gives back every input."""
    return compose(cols, cols) == identity(len(cols))


def matrix_str(cols: list[int], nbits: int | None = None) -> str:
    """The matrix as 0/1 rows, output bit 0 on top, input bit 0 on the left."""
    n = len(cols)
    return "\n".join(" ".join("1" if (r >> j) & 1 else "0" for j in range(n)) for r in rows(cols, nbits or n))


def _check_bits(nbits: Any) -> int:
    if not is_int(nbits) or not 0 <= nbits <= MAX_BITS:
        raise LayoutError(f"a bit count is an integer in [0, {MAX_BITS}], got {nbits!r}")
    return nbits


# --------------------------------------------------------------------------------------------- swizzles


def swizzle_matrix(sw: Any, nbits: int | None = None) -> list[int]:
    """Columns of ``Sw<B,M,S>`` on ``nbits`` bits (default ``M + B + |S|``): the identity plus, for each of the B
    source bits at ``M + S + t``, a 1 in the target row ``M + t`` (S > 0)."""
    return matrix_of(sw, nbits if nbits is not None else sw.base + sw.bits + abs(sw.shift))


def describe_swizzle(sw: Any, nbits: int | None = None) -> dict[str, Any]:
    """The F2 view of a swizzle as data for a page: matrix rows, masks, rank, involution, and a sentence."""
    cols = swizzle_matrix(sw, nbits)
    n = len(cols)
    inv = is_involution(cols)
    src = [b for b in range(n) if (sw.yyy_mask >> b) & 1]
    dst = [b for b in range(n) if (sw.zzz_mask >> b) & 1]
    text = (f"{sw} XORs bits {src} into bits {dst}; over F2 it is the identity plus those {len(src)} entries. "
            + ("Source and target bits do not overlap (|S| >= B), so the source bits pass through unchanged and "
               "applying it twice gives back every offset: it is its own inverse." if inv else
               "It is not its own inverse."))
    return {"matrix": matrix_str(cols).splitlines(), "yyy_mask": sw.yyy_mask, "zzz_mask": sw.zzz_mask,
            "nbits": n, "rank": rank(cols), "involution": inv, "text": text}


# --------------------------------------------------------------------------------------------- F2 layouts


class F2Layout:
    """``shape:stride`` with F2 strides: ``L(c) = XOR_i (c_i * d_i)`` with carry-less products.

    A mode of shape ``2^k`` and stride ``F2(d)`` sends its coordinate bit t to ``d << t``. Coordinates are read
    like a Layout's (1-D, flat or natural). Post: ``L(c)`` is an int; ``matrix()`` gives its F2 matrix."""

    __slots__ = ("shape", "stride")

    def __init__(self, shape: Any, stride: Any) -> None:
        shape = it.check_shape(shape)
        stride = _map(stride, F2)
        if not it.congruent(shape, stride):
            raise LayoutError("F2 layout: shape and stride are not congruent")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "stride", stride)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("F2Layout is immutable")

    def __call__(self, *crd: Any) -> int:
        c = crd[0] if len(crd) == 1 else tuple(crd)
        return int(F2(0) + it.crd2idx(c, self.shape, self.stride))

    def size(self) -> int:
        return it.product(self.shape)

    def matrix(self) -> list[int]:
        """Columns per coordinate bit (every shape must be a power of two)."""
        cols: list[int] = []
        for s, d in zip(it.flatten(self.shape), it.flatten(self.stride), strict=True):
            if s & (s - 1):
                raise LayoutError(f"F2 matrix: shape {s} is not a power of two")
            cols += [d.value << t for t in range(s.bit_length() - 1)]
        return cols

    def __eq__(self, other: object) -> bool:
        return isinstance(other, F2Layout) and (self.shape, self.stride) == (other.shape, other.stride)

    def __hash__(self) -> int:
        return hash((self.shape, self.stride))

    def __str__(self) -> str:
        return f"{it.to_str(self.shape)}:{it.to_str(self.stride)}"

    __repr__ = __str__


def _map(t: Any, f: Any) -> Any:
    return tuple(_map(x, f) for x in t) if isinstance(t, list | tuple) else f(t)


def to_f2_layout(x: Any, nbits: int | None = None) -> F2Layout:
    """An F2Layout with the same value as ``x`` at every 1-D coordinate.

    ``x``: a Swizzle (on ``nbits`` bits: shape ``(2,...,2)``, stride ``Sw(1 << j)``), or a ComposedLayout
    ``Sw o 0 o L`` whose L has power-of-two shapes and strides and moves disjoint bit ranges (then L's integer sums
    are XORs): every leaf of shape ``2^k`` becomes k bit-modes with strides ``Sw(d << t)``.
    Refuses (LayoutError) anything that is not F2-linear."""
    if hasattr(x, "yyy_mask"):
        cols = swizzle_matrix(x, nbits)
        return F2Layout(tuple([2] * len(cols)) if len(cols) != 1 else 2, tuple(cols) if len(cols) != 1 else cols[0])
    if not hasattr(x, "layout_b"):
        raise LayoutError("to_f2_layout takes a Swizzle or a swizzled (composed) layout")
    if x.offset:
        raise LayoutError("a non-zero offset makes the map affine, not linear over F2")
    sw, lay = x.layout_a, x.layout_b
    used = 0
    shape: list = []
    stride: list = []
    for s, d in zip(it.flatten(lay.shape), it.flatten(lay.stride), strict=True):
        if s == 1:
            continue
        if s & (s - 1) or not is_int(d) or d <= 0 or d & (d - 1):
            raise LayoutError(f"mode {s}:{d} does not move whole bits (shapes and strides must be powers of two)")
        k, base = s.bit_length() - 1, d.bit_length() - 1
        bits = ((1 << k) - 1) << base
        if used & bits:
            raise LayoutError(f"mode {s}:{d} overlaps the bits of another mode: the sum carries")
        used |= bits
        shape += [2] * k
        stride += [sw(d << t) for t in range(k)]
    if not shape:
        return F2Layout(1, 0)
    return F2Layout(tuple(shape) if len(shape) > 1 else shape[0], tuple(stride) if len(stride) > 1 else stride[0])
