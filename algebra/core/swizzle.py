"""``Swizzle<B,M,S>`` and ``ComposedLayout`` (swizzle o offset o layout), as in CuTe's ``swizzle.hpp``.

``Sw<B,M,S>(x) = x ^ ((x & yyy_mask) >> S)`` with ``yyy_mask = ((1<<B)-1) << (M + max(0,S))``: the B bits
starting at bit M+S are XOR-ed into the B bits starting at bit M.
"""

from __future__ import annotations

from typing import Any

from algebra.core import inttuple as it
from algebra.core.arith import F2, Frozen, f2_apply, f2_columns
from algebra.core.checks import capped, checking
from algebra.core.errors import LayoutError, NoShape
from algebra.core.inttuple import is_int
from algebra.core.layout import Layout, _has_none
from algebra.core.modes import bw_coalesce, offsets

MAX_B, MAX_M, MAX_S = 16, 32, 32  # the largest Swizzle<B,M,S> parameters (the cap on every parsed swizzle)


class Swizzle(Frozen):
    """A bit-XOR function on offsets. Post: a bijection on [0, 2^(M+B+|S|)) that fixes bits outside the mask."""

    __slots__ = ("bits", "base", "shift", "yyy_mask")

    def __init__(self, bits: int, base: int, shift: int | None = None) -> None:
        shift = bits if shift is None else shift
        for name, v in (("B", bits), ("M", base), ("S", shift)):
            if not is_int(v):
                raise LayoutError(f"Swizzle {name} must be an integer, got {v!r}")
        if bits < 0 or base < 0:
            raise LayoutError(f"Swizzle<{bits},{base},{shift}>: B and M must be non-negative")
        if abs(shift) < bits:
            raise LayoutError(f"Swizzle<{bits},{base},{shift}>: |S| must be at least B")
        if bits > MAX_B or base > MAX_M or abs(shift) > MAX_S:
            raise LayoutError(f"Swizzle<{bits},{base},{shift}>: parameters exceed the cap (B<={MAX_B}, M<={MAX_M}, "
                              f"|S|<={MAX_S})")
        # yyy_mask: the source bits (read, shifted down by S), computed once
        for k, v in zip(self.__slots__, (bits, base, shift, ((1 << bits) - 1) << (base + max(0, shift))), strict=True):
            object.__setattr__(self, k, v)

    @property
    def zzz_mask(self) -> int:
        """The target bits (flipped)."""
        return ((1 << self.bits) - 1) << (self.base - min(0, self.shift))

    def __call__(self, offset: int) -> int:
        if type(offset) is not int and not is_int(offset):
            if type(offset) is F2:  # an F2 offset (a layout with F2 strides inside): the same bits, swizzled
                return F2(self(offset.value))
            raise LayoutError(f"a swizzle applies to integer offsets, got {offset!r}")
        y = offset & self.yyy_mask
        return offset ^ (y >> self.shift if self.shift >= 0 else y << -self.shift)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Swizzle) and (
            self.bits, self.base, self.shift) == (other.bits, other.base, other.shift)

    def __hash__(self) -> int:
        return hash(("Sw", self.bits, self.base, self.shift))

    def __str__(self) -> str:
        return f"Sw<{self.bits},{self.base},{self.shift}>"

    def __repr__(self) -> str:
        return f"Swizzle({self.bits}, {self.base}, {self.shift})"

    def size(self) -> int:
        """The span of offsets the swizzle permutes: ``2^(M + B + |S|)``."""
        return 1 << (self.base + self.bits + abs(self.shift))


class ComposedLayout(Frozen):
    """``layout_a o offset o layout_b``: ``R(c) == layout_a(offset + layout_b(c))`` (CuTe's ``ComposedLayout<A,O,B>``,
    A a Layout or a Swizzle, B a Layout, a Swizzle or itself a ComposedLayout: CuTe composes ``A o O o B`` with C
    into ``A o O o (B o C)``, printed as one chain). ``Sw o O o L`` has L's shape, size and rank (a nested one, its
    innermost layout's); ``L o O o Sw`` (CuTe's inverse of a swizzled layout with an offset) is a function of 1-D
    offsets on its ``domain``, with no shape (``NoShape``). An F2 offset of B (its bits) and O add as ints."""

    __slots__ = ("layout_a", "offset", "layout_b")

    def __init__(self, layout_a: Any, offset: int, layout_b: Any) -> None:
        if not isinstance(layout_a, Layout | Swizzle):
            raise LayoutError(f"ComposedLayout: the outer function must be a layout or a swizzle, got {layout_a}")
        if not isinstance(layout_b, Layout | Swizzle | ComposedLayout):
            raise LayoutError(f"ComposedLayout: the inner function must be a layout or a swizzle, got {layout_b}")
        if not is_int(offset):
            raise LayoutError("ComposedLayout: the offset must be an integer")
        for k, v in zip(self.__slots__, (layout_a, offset, layout_b), strict=True):
            object.__setattr__(self, k, v)

    @property
    def shape(self) -> Any:
        if type(self.layout_b) is Swizzle:
            raise NoShape(self.no_shape())
        return self.layout_b.shape

    def no_shape(self) -> str:
        """Why ``L o O o Sw`` has no shape."""
        return (f"{self} has no shape: it is a function of 1-D offsets (the layout {self.layout_a} after the swizzle "
                f"{self.layout_b}), defined where {self.domain_text()}; nor has it in CuTe")

    @property
    def stride(self) -> Any:
        return self.layout_b.stride

    def domain(self) -> list:
        """``L o O o Sw``'s x with ``0 <= O + Sw(x) < size(L)``: ``Sw(y - O)`` for those y (Sw is its own inverse);
        a chain ending in it, that of its inner part where each layout of the chain is defined."""
        b, a = self.layout_b, self.layout_a
        if type(b) is not Swizzle:
            return b.domain() if type(a) is Swizzle else [x for x in b.domain() if 0 <= self.offset + b(x) < a.size()]
        return sorted(b(y - self.offset) for y in range(max(0, self.offset), a.size()))

    def domain_text(self) -> str:
        """Where each layout of the chain read after an offset is defined (in words)."""
        b, a = self.layout_b, self.layout_a
        mine = "" if type(a) is Swizzle else f"0 <= {self.offset} + {f'({b})' if type(b) is ComposedLayout else b}(x)" \
            f" < {a.size()}"
        return ", ".join(t for t in (b.domain_text() if type(b) is ComposedLayout else "", mine) if t)

    def __call__(self, *crd: Any) -> Any:
        c = crd[0] if len(crd) == 1 else tuple(crd)
        if _has_none(c):  # CuTe's layout(crd) with _ is slice(crd, layout): products.slice_composed, set there
            return ComposedLayout.slice(c, self)
        if (v := self.at(c, 1)) is None:  # a layout of the chain read at a negative index: off the domain
            raise LayoutError(f"{self} is not defined at x = {c!r}, a 1-D offset with {self.domain_text()}. CuTe "
                              f"would print evaluate({self}, {it.to_str(c)}) = {self.at(c, 2)}")
        return v

    def at(self, c: Any, how: int = 0) -> Any:
        """``self(c)``; None where a layout of the chain is read outside ``[0, size)`` (how = 1: at a negative index,
        past the size it goes on as a layout does), or (how = 2) CuTe's value there (its arithmetic goes on: C's
        truncating divmod of a negative index over the layout's shape)."""
        b, a = self.layout_b, self.layout_a
        y = b.at(c, how) if type(b) is ComposedLayout else b(c)
        if type(y) is F2 and (self.offset or type(a) is not Swizzle):  # F2 bits plus an int offset: a sum
            y = y.value
        if y is None or type(a) is Swizzle or 0 <= y + self.offset < a.size() or how and y + self.offset > 0:
            return None if y is None else a(y + self.offset)
        return it.crd2idx(y + self.offset, a.shape, a.stride) if how == 2 else None  # (C's divmod, as CuTe's)

    def __getitem__(self, i: int) -> ComposedLayout:
        return make_composed(self.layout_a, self.offset, self.layout_b[i] if self.shape is not None else None)

    __len__ = Layout.__len__  # of the shape (a nested chain: its innermost layout's)
    size = Layout.size

    def with_layout_b(self, b: Layout) -> Any:
        """``composition(layout_a, offset, b)``: the same outer function around a new inner layout."""
        return make_composed(self.layout_a, self.offset, b) if self.shape is not None else None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ComposedLayout) and (self.layout_a, self.offset, self.layout_b) == (
            other.layout_a, other.offset, other.layout_b)

    def __hash__(self) -> int:
        return hash((self.layout_a, self.offset, self.layout_b))

    def __str__(self) -> str:
        return f"{self.layout_a} o {self.offset} o {self.layout_b}"

    def __repr__(self) -> str:
        return f"ComposedLayout({self.layout_a!r}, {self.offset}, {self.layout_b!r})"


def make_composed(a: Any, offset: int, b: Any) -> Any:
    """CuTe's ``composition(A, offset, B)``: a ComposedLayout, except that the identity swizzle ``Sw<0,M,S>``
    with offset 0 before a Layout is dropped and ``B`` itself is returned (as CuTe does)."""
    if isinstance(a, Swizzle) and a.bits == 0 and offset == 0 and isinstance(b, Layout):
        return b
    return ComposedLayout(a, offset, b)


def chain(a: Any, offset: int, b: Any) -> Any:
    """CuTe's ``composition(A, O, B)`` with A itself composed, ``A1 o O1 o A2``: the function ``A1 o O1 o (A2 o O o
    B)``, printed as CuTe prints its ``(A1 o O1 o A2) o O o B``, one chain (function composition is associative)."""
    return ComposedLayout(a.layout_a, a.offset, chain(a.layout_b, offset, b)) if type(a) is ComposedLayout else \
        make_composed(a, offset, b)


def make_swizzle(y: int, z: int) -> Swizzle:
    """CuTe's ``make_swizzle<Y, Z>()``: the swizzle whose source bits are ``y`` and target bits ``z``.

    B = popcount(y) (must equal popcount(z)), M = min(trailing zeros of y, z) (32 for 0, taken mod 32),
    S = tz(y) - tz(z); refused when the two bit counts differ, ``|S| < B``, or ``y | z`` is not that swizzle's
    mask (the bits are not two runs of B bits S apart)."""
    if y < 0 or z < 0 or y >= 1 << 32 or z >= 1 << 32:
        raise LayoutError(f"make_swizzle: the bit masks {y} and {z} are not 32-bit unsigned values")
    b = bin(y).count("1")
    if bin(z).count("1") != b:
        raise LayoutError(f"make_swizzle: the source bits {y:#b} and target bits {z:#b} have different counts "
                          "(CuTe: \"Number of bits in Y and Z don't match\")")
    ty = (y & -y).bit_length() - 1 if y else 32
    tz = (z & -z).bit_length() - 1 if z else 32
    m, sh = min(ty, tz) % 32, ty - tz
    if abs(sh) < b:
        raise LayoutError(f"make_swizzle: source bits {y:#b} and target bits {z:#b} give Swizzle<{b},{m},{sh}> "
                          "with |S| < B (CuTe: \"abs(SShift) must be more than BBits\")")
    sw = Swizzle(b, m, sh)
    if (y | z) != (sw.yyy_mask | sw.zzz_mask):
        raise LayoutError(f"make_swizzle: source bits {y:#b} and target bits {z:#b} are not two runs of {b} bits "
                          f"(CuTe: \"Something went wrong.\")")
    return sw


def merge_swizzles(a: Swizzle, b: Swizzle) -> Swizzle:
    """CuTe's ``composition(Swizzle, Swizzle)``: ``make_swizzle<Ya ^ Yb, Za ^ Zb>()`` for two swizzles of the same
    shift. Post: ``R(x) == a(b(x))`` for every x (checked on the bits either swizzle touches; otherwise
    ``LayoutError`` with what CuTe prints and a counterexample)."""
    if a.shift != b.shift:
        raise LayoutError(f"composition {a} o {b}: CuTe merges only swizzles of the same shift "
                          "(\"Can only merge swizzles of the same shift.\")")
    res = make_swizzle(a.yyy_mask ^ b.yyy_mask, a.zzz_mask ^ b.zzz_mask)
    for x in (1 << t for t in range(max(s.base + s.bits + abs(s.shift) for s in (a, b)) if checking() else 0)):
        if res(x) != a(b(x)):
            raise LayoutError(f"composition {a} o {b} is not a swizzle: their bits overlap. CuTe would print {res} "
                              f"here; at x = {x} that gives {res(x)}, but {a}({b}({x})) = {a(b(x))}")
    return res


def layout_swizzle(a: Layout, sw: Swizzle) -> Any:
    """CuTe's ``composition(Layout a, Swizzle sw)``: ``make_swizzle<a(yyy), a(zzz)>() o a``, the swizzle moved to
    the offsets side. Post: ``R(i) == a(sw(i))`` for every ``i < size(a)`` with ``sw(i) < size(a)`` (the unit indices
    decide where both are F2-linear); else (CuTe prints it: "works in simple cases") refused, with a counterexample."""
    y, z, n = a(sw.yyy_mask), a(sw.zzz_mask), it.product(a.shape)
    if not is_int(y) or not is_int(z):  # F2 strides (CuTe has none): A o Sw, F2-linear, written as an F2 layout
        # (Sw(i) past size(A) is no constraint: Sw(i) & (n - 1) keeps R linear)
        if (cols := f2_columns(a.shape, a.stride) if not n & (n - 1) else None) is None:
            raise LayoutError(f"composition {a} o {sw}: A has F2 strides, so A o Sw is written as an F2 layout, which "
                              "needs A F2-linear (power-of-two shapes, int strides on bits of their own); CuTe has no "
                              "F2 strides")
        return Layout(*_bit_modes(a.shape, [f2_apply(cols, sw(1 << t) & (n - 1)) for t in range(len(cols))]))
    new = make_swizzle(y, z)
    res = make_composed(new, 0, a)
    cols = f2_columns(a.shape, a.stride) if checking() and not n & (n - 1) and (sw.yyy_mask | sw.zzz_mask) < n else None
    if cols is None and checking():
        capped(n, f"composition {a} o {sw} is refused: CuTe would print {res}, not confirmed here to be A o Sw (")
    at = (lambda x: f2_apply(cols, x)) if cols is not None else offsets(a).__getitem__ if checking() else None
    for i in (1 << t for t in range(len(cols))) if cols is not None else range(n if checking() else 0):
        if (j := sw(i)) < n and new(at(i)) != at(j):
            raise LayoutError(
                f"composition {a} o {sw} is not a layout: the swizzle's bits do not land on whole bits of the "
                f"offsets. CuTe would print {res} here; at i = {i} that gives {new(at(i))}, but A({sw}({i})) = A({j}) "
                f"= {at(j)}")
    return res


def _bit_modes(shape: Any, cols: list, top: bool = True) -> tuple:
    """(shape, stride) with the profile of ``shape``: each leaf on its next log2(s) columns (popped from ``cols``), as
    the coalesced bit modes ``2:F(col)``, as ``as_f2_layout`` writes them."""
    if type(shape) is tuple:
        parts = [_bit_modes(s, cols, False) for s in shape]
        return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
    mine = [F2(cols.pop(0)) for _ in range(shape.bit_length() - 1)]
    return _one_mode(bw_coalesce((2,) * (len(mine) - 1), tuple(mine[:-1]), 2, mine[-1]) if mine else (1, 0), top)


def _one_mode(sd: tuple, top: bool) -> tuple:
    """A leaf's bit modes ``(s, d)``; at the top of a rank-1 layout (``top``), kept one mode: ``((s,), (d,))``."""
    return ((sd[0],), (sd[1],)) if top and type(sd[0]) is tuple else sd


def as_f2_layout(x: Any) -> Layout:
    """``Sw<B,M,S> o 0 o L`` as a Layout with F2 strides (``algebra.core.arith.F2``), L's profile kept: where L's
    offsets combine without carries (every leaf of shape > 1 has a power-of-two shape and stride, no two leaves share
    a bit), ``Sw(L(c)) = XOR_t c_t * Sw(d << t)`` over the bits t of each leaf, and each leaf becomes the coalesced
    bit modes ``2:F(Sw(d << t))``. A Swizzle alone is ``(2,...,2)`` over its bits. Refused (``LayoutError``) where the
    swizzled layout is not F2-linear (a carry, an offset). Post: ``R(i) == x(i)`` for every ``i`` (as ints).

    >>> from algebra.core.notation import parse
    >>> str(as_f2_layout(parse("Sw<3,0,3> o 0 o (8,8):(1,8)")))
    '(8,8):(F1,F9)'
    """
    if type(x) is Swizzle:
        k = x.base + x.bits + abs(x.shift)
        return Layout((2,) * k, tuple(F2(x(1 << t)) for t in range(k)))
    if type(x) is not ComposedLayout or type(x.layout_a) is not Swizzle:
        raise LayoutError(f"as_f2_layout takes a swizzle or a swizzled layout Sw o 0 o L, got {x}")
    if x.offset != 0:
        raise LayoutError(f"{x}: the offset {x.offset} makes the map affine, not linear over F2")
    sw, used = x.layout_a, 0
    if type(x.layout_b) is ComposedLayout:  # Sw o 0 o (Sw' o 0 o L): L's bit columns through Sw', then through Sw
        inner = as_f2_layout(x.layout_b)  # (a chain's shape is its innermost layout's)
        return Layout(*_bit_modes(x.layout_b.shape, [sw(c) for c in f2_columns(inner.shape, inner.stride)]))

    def walk(s: Any, d: Any) -> tuple:
        nonlocal used
        if type(s) is tuple:
            parts = [walk(a, b) for a, b in zip(s, d, strict=True)]
            return tuple(p[0] for p in parts), tuple(p[1] for p in parts)
        if s == 1:
            return 1, 0
        if s & (s - 1) or type(d) is not int or d < 0 or d & (d - 1):
            raise LayoutError(f"{x}: mode {s}:{d} does not move whole bits (shape and stride powers of two), so the "
                              "swizzle of its offsets is not F2-linear")
        if d == 0:
            return s, 0
        bits = (s - 1) * d
        if used & bits:
            raise LayoutError(f"{x}: mode {s}:{d} shares bits with another mode: the sum carries, which F2 does not")
        used |= bits
        cols = [F2(sw(d << t)) for t in range(s.bit_length() - 1)]
        return bw_coalesce((2,) * (len(cols) - 1), tuple(cols[:-1]), 2, cols[-1])

    return Layout(*_one_mode(walk(x.layout_b.shape, x.layout_b.stride), type(x.layout_b.shape) is not tuple))
