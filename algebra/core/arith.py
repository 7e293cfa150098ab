"""The stride kinds beside the int: ``F2`` (bit vectors: XOR sums, carry-less products), ``ScaledBasis`` (``v@m``),
``ArithTuple`` and the identity layout, as in CuTe's ``arithmetic_tuple.hpp``.

A ``ScaledBasis(v, (m0, m1, ...))`` is the arithmetic tuple that is zero everywhere except for ``v`` at the mode path
``(m0, m1, ...)`` (outermost mode first). CuTe prints the path innermost first: ``E<1,0>`` (mode 1, sub-mode 0)
prints ``1@0@1``; so does ``str(ScaledBasis(1, (1, 0)))``.

Arithmetic (what ``Layout.__call__`` needs, since ``crd2idx`` sums ``c * d`` from ``int 0``):

- ``int * SB`` and ``SB * int`` -> ScaledBasis; ``0 + SB`` -> the same ScaledBasis;
- ``SB + SB``, ``SB + ArithTuple``, ``ArithTuple + tuple`` -> ArithTuple (elementwise, shorter tuples zero-extended);
- adding a non-zero ``int`` to a basis element or arithmetic tuple raises ``LayoutError`` (no common profile).

Equality and hashing use the zero-extended vector: ``ScaledBasis(2, (1,)) == ArithTuple(0, 2) == ArithTuple(0, 2, 0)``.
"""

from __future__ import annotations

from functools import total_ordering
from typing import Any

from algebra.core import inttuple as it
from algebra.core.errors import LayoutError
from algebra.core.inttuple import is_int, is_tuple

MAX_PATH = 64
MAX_BITS = 64


def clmul(a: int, b: int) -> int:
    """Carry-less product: the XOR of ``a << t`` over the set bits t of ``b`` (polynomials over F2)."""
    if not (is_int(a) and is_int(b)) or a < 0 or b < 0:
        raise LayoutError("carry-less products take non-negative integers")
    return f2_apply([a << t for t in range(b.bit_length())], b)


class Frozen:
    """Immutable instances (the constructor sets the slots with ``object.__setattr__``)."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")


class F2(Frozen):
    """A bit vector, the third kind of stride leaf (beside ints and ``ScaledBasis``): ``F2(a) + F2(b) == F2(a ^ b)``,
    ``F2(a) * n == F2(clmul(a, n))``; prints ``F6``. A Layout with F2 strides sums ``c_i * d_i`` with XOR and
    carry-less products: ``Layout((8, 8), (F2(1), F2(9)))`` is the swizzle ``Sw<3,0,3>`` of an 8x8 tile.

    Post: immutable and hashable; ``int(F2(v)) == v``; ``0 + F2(v) == F2(v)`` so ``sum`` works; never equal to an int.

    >>> F2(3) + F2(5), F2(3) * 3, 2 * F2(5)
    (F6, F5, F10)
    """

    __slots__ = ("value",)
    is_f2 = True  # a stride leaf (``inttuple.check_stride``), not a basis element

    def __init__(self, value: Any) -> None:
        v = value.value if isinstance(value, F2) else value
        if not is_int(v) or v < 0 or v.bit_length() > MAX_BITS:
            raise LayoutError(f"an F2 vector is a non-negative integer of at most {MAX_BITS} bits, got {value!r}" + (
                " (F2 sign condition: a negative int offset, stride or coordinate met an F2 (XOR) stride; a bit vector "
                "has no sign, so a layout cannot mix negative int strides with F2 strides)" if is_int(v) and v < 0
                else ""))
        object.__setattr__(self, "value", v)

    def __add__(self, other: Any) -> F2:
        if isinstance(other, F2) or is_int(other):
            return F2(self.value ^ F2(other).value)
        return NotImplemented

    __radd__ = __sub__ = __rsub__ = __add__  # over F2, subtraction is addition

    def __mul__(self, other: Any) -> F2:
        if isinstance(other, F2) or is_int(other):
            return F2(clmul(self.value, F2(other).value))
        return NotImplemented

    __rmul__ = __mul__

    def __int__(self) -> int:
        return self.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, F2) and other.value == self.value

    def __hash__(self) -> int:
        return hash(("F2", self.value))

    def __str__(self) -> str:
        return f"F{self.value}"

    __repr__ = __str__


def is_zero(d: Any) -> bool:
    """A zero stride leaf: the int 0 or the F2 zero ``F0``. Its mode is a broadcast (every coordinate of it adds
    nothing to the offset): ``filter_zeros``, ``filter``, ``nullspace`` and ``complement`` drop or collect it."""
    return (type(d) is int and d == 0) or (type(d) is F2 and d.value == 0)


# --------------------------------------------------------------------------------------------- plain-tuple vectors


def _vec_add(a: Any, b: Any) -> Any:
    """Elementwise sum of two int / nested-tuple vectors, zero-extending the shorter tuple."""
    if is_tuple(a) and is_tuple(b):
        n = max(len(a), len(b))
        return tuple(_vec_add(a[i] if i < len(a) else 0, b[i] if i < len(b) else 0) for i in range(n))
    if is_tuple(a) or is_tuple(b):
        vec, k = (a, b) if is_tuple(a) else (b, a)
        if k != 0:
            raise LayoutError(f"cannot add the integer {k} to the coordinate {it.to_str(vec)}")
        return vec
    return a + b


def _canon(a: Any) -> Any:
    """Zero-extension normal form: trailing zeros dropped at every level, an all-zero tuple becomes 0."""
    if not is_tuple(a):
        return a
    items = [_canon(x) for x in a]
    while items and items[-1] == 0:
        items.pop()
    return tuple(items) if items else 0


def _as_vec(x: Any) -> Any:
    """int, tuple, ScaledBasis or ArithTuple -> plain int / nested tuple."""
    if isinstance(x, _Vector):
        return x.as_tuple()
    if is_tuple(x) or is_int(x):
        return x
    raise LayoutError(f"not a coordinate: {x!r}")


# --------------------------------------------------------------------------------------------- ScaledBasis, ArithTuple


@total_ordering
class _Vector(Frozen):
    """What ``ScaledBasis`` and ``ArithTuple`` share: the arithmetic and equality of the module docstring, and the
    colexicographic order of the zero-extended vectors (the last entry is most significant)."""

    __slots__ = ()
    noun = "coordinate"  # in the refusal of ``+ int``
    equals_tuples = True  # ``ArithTuple(0, 2) == (0, 2)``; a basis element is never equal to a plain tuple

    def __add__(self, other: Any) -> Any:
        if is_int(other):
            if other == 0:
                return self
            raise LayoutError(f"cannot add the integer {other} to the {self.noun} {self}")
        if isinstance(other, _Vector) or is_tuple(other):
            return ArithTuple.of(_vec_add(self.as_tuple(), _as_vec(other)))
        return NotImplemented

    __radd__ = __add__

    def __neg__(self) -> Any:
        return self * -1

    def __sub__(self, other: Any) -> Any:
        return self + _map_leaves(_as_vec(other), lambda x: -x)

    def __rsub__(self, other: Any) -> Any:
        return (-self) + other

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Vector) or (self.equals_tuples and is_tuple(other)):
            return _canon(self.as_tuple()) == _canon(_as_vec(other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(("arith", _canon(self.as_tuple())))

    def __lt__(self, other: Any) -> bool:
        fa, fb = it.flatten(self.as_tuple()), it.flatten(_as_vec(other))
        w = max(len(fa), len(fb))
        return (fa + (0,) * (w - len(fa)))[::-1] < (fb + (0,) * (w - len(fb)))[::-1]


class ScaledBasis(_Vector):
    """``value`` placed at ``mode_path`` of an otherwise-zero arithmetic tuple; prints ``value@m_k@...@m_0``.

    ``ScaledBasis(v, ())`` collapses to the plain int ``v`` (CuTe's ``E<>`` is ``_1``).
    Post: immutable, hashable; ``is_basis`` is True (``Layout`` accepts it as a stride leaf).
    """

    __slots__ = ("value", "mode_path")
    is_basis = True
    noun = "basis element"
    equals_tuples = False

    def __new__(cls, value: int, mode_path: Any = ()) -> Any:
        path = (mode_path,) if is_int(mode_path) else tuple(mode_path)
        if not is_int(value):
            raise LayoutError(f"a basis element needs an integer value, got {value!r}")
        if len(path) > MAX_PATH or any(not is_int(m) or m < 0 or m > it.MAX_LEAVES for m in path):
            raise LayoutError(f"bad basis mode path {path!r}: non-negative integers, at most {MAX_PATH} deep")
        if not path:
            return value
        obj = object.__new__(cls)
        object.__setattr__(obj, "value", value)
        object.__setattr__(obj, "mode_path", path)
        return obj

    def __reduce__(self) -> tuple:
        return (ScaledBasis, (self.value, self.mode_path))

    def as_tuple(self) -> Any:
        """The arithmetic tuple as a plain nested tuple: ``(0, (v,))`` for path ``(1, 0)``."""
        out: Any = self.value
        for m in reversed(self.mode_path):
            out = (0,) * m + (out,)
        return out

    def __mul__(self, k: Any) -> Any:
        if is_int(k):
            return ScaledBasis(self.value * k, self.mode_path)
        return NotImplemented

    __rmul__ = __mul__

    def __abs__(self) -> ScaledBasis:
        return ScaledBasis(abs(self.value), self.mode_path)

    def __str__(self) -> str:
        return str(self.value) + "".join(f"@{m}" for m in reversed(self.mode_path))

    def __repr__(self) -> str:
        return f"ScaledBasis({self.value}, {self.mode_path})"


class ArithTuple(_Vector):
    """An element of Z^S: a (nested) tuple of ints added elementwise and scaled by ints; prints ``(a,b)``.

    ``ArithTuple(2, 3)`` or ``ArithTuple.of((2, (0, 1)))``. ``items`` is the plain nested tuple.
    Post: immutable, hashable, equal to any other vector with the same zero-extended entries.
    """

    __slots__ = ("items",)

    def __init__(self, *items: Any) -> None:
        def check(x: Any) -> Any:
            if isinstance(x, list | tuple):
                return tuple(check(e) for e in x)
            if is_int(x):
                return x
            if isinstance(x, _Vector):
                return x.as_tuple()
            raise LayoutError(f"arithmetic tuple entries must be integers, got {x!r}")

        object.__setattr__(self, "items", check(items))

    @classmethod
    def of(cls, t: Any) -> ArithTuple:
        """Wrap a plain nested tuple (an int becomes a rank-1 tuple)."""
        return cls(*t) if is_tuple(t) else cls(t)

    def __reduce__(self) -> tuple:
        return (ArithTuple, self.items)

    def as_tuple(self) -> Any:
        return self.items

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> Any:
        return self.items[i]

    def __iter__(self):
        return iter(self.items)

    def __mul__(self, k: Any) -> Any:
        if is_int(k):
            return ArithTuple.of(_map_leaves(self.items, lambda x: x * k))
        return NotImplemented

    __rmul__ = __mul__

    def __abs__(self) -> ArithTuple:
        return ArithTuple.of(_map_leaves(self.items, abs))  # entrywise, as ``coshape`` takes it of a stride

    def __str__(self) -> str:
        return it.to_str(self.items)

    def __repr__(self) -> str:
        return f"ArithTuple{it.to_str(self.items)}"


# --------------------------------------------------------------------------------------------- helpers


def E(*modes: Any) -> Any:
    """The unit basis element at the mode path ``modes``: ``E(0)`` is ``1@0``, ``E(1, 0)`` is ``1@0@1``
    (mode 1, sub-mode 0); ``E()`` is the int 1. A single list argument is also accepted: ``E([1, 0])``."""
    if len(modes) == 1 and isinstance(modes[0], list | tuple):
        modes = tuple(modes[0])
    return ScaledBasis(1, tuple(modes))


def basis_value(x: Any) -> Any:
    """The scale of a basis element; other values unchanged."""
    return x.value if isinstance(x, ScaledBasis) else x


def basis_get(b: Any, t: Any) -> Any:
    """The part of the HTuple ``t`` at the mode path of the basis element ``b`` (``t`` itself for an int)."""
    if not isinstance(b, ScaledBasis):
        return t
    for m in b.mode_path:
        if not is_tuple(t) or m >= len(t):
            raise LayoutError(f"basis {b} selects a mode that {it.to_str(t)} does not have")
        t = t[m]
    return t


def as_arithmetic_tuple(x: Any) -> Any:
    """ScaledBasis / tuple -> ArithTuple; ArithTuple and int unchanged."""
    if isinstance(x, ScaledBasis) or is_tuple(x):
        return ArithTuple.of(_as_vec(x))
    return x


def as_stride_leaf(x: Any) -> Any:
    """A sum of strides as one stride leaf: an ArithTuple with one non-zero entry is that entry's ``v@m`` (``8:(2)``
    printed a tuple where the stride is ``2@0``), one with none is ``0@m`` of its last entry; anything else (a sum
    over several codomain modes, ``2@0 + 1@1``) as it is."""
    if not isinstance(x, ArithTuple):
        return x
    leaves: list[tuple[tuple, int]] = []  # (path, entry) of every entry, the non-zero ones counted

    def walk(t: Any, path: tuple) -> None:
        for k, e in enumerate(t):
            walk(e, path + (k,)) if is_tuple(e) else leaves.append((path + (k,), e))

    walk(x.as_tuple(), ())
    hit = [(p, e) for p, e in leaves if e]
    if len(hit) > 1:
        return x
    return ScaledBasis(hit[0][1], hit[0][0]) if hit else ScaledBasis(0, leaves[-1][0]) if leaves else 0


def make_basis_like(shape: Any, _prefix: tuple = ()) -> Any:
    """Basis strides congruent with ``shape``: ``make_basis_like((a, (b, c))) == (1@0, (1@0@1, 1@1@1))``.

    Post: ``congruent(result, shape)``; leaf at mode path p is ``E(*p)`` (an int shape gives the int 1)."""
    if is_tuple(shape):
        return tuple(make_basis_like(s, _prefix + (i,)) for i, s in enumerate(shape))
    return E(*_prefix)


def coshape(layout: Any) -> Any:
    """The codomain's bounding box: ``L`` evaluated at the last coordinate with strides made non-negative, plus one
    in every codomain entry. Post: ``product(coshape(L)) == cosize(L)`` for integer strides; for an identity
    layout of a tuple shape ``coshape(L) == shape(L)``. Returns an int or a plain nested tuple."""
    m1 = _map_leaves(layout.shape, lambda x: x - 1)
    co = it.inner_product(m1, _map_leaves(layout.stride, abs))
    return _map_leaves(_as_vec(co) if isinstance(co, _Vector) else co, lambda x: x + 1)


def coprofile(x: Any) -> Any:
    """The profile of the codomain: ``0`` for integer strides, a tuple of zeros congruent with the coordinates a
    basis-stride layout returns. A tiler is profiled mode by mode (``coprofile((None, 4)) == (0, 0)``)."""
    if x is None or is_int(x):
        return 0
    if is_tuple(x):
        return tuple(coprofile(e) for e in x)
    total = sum(it.flatten(x.stride))
    return it.repeat_like(_as_vec(total) if isinstance(total, _Vector) else total, 0)


def _map_leaves(t: Any, f: Any) -> Any:
    return tuple(_map_leaves(x, f) for x in t) if is_tuple(t) else f(t)


# --------------------------------------------------------------------------------------------- F2-linear layouts


def has_f2(stride: Any) -> bool:
    """True when some leaf of ``stride`` is an F2 element."""
    if type(stride) is tuple:
        return any(type(x) is not int and has_f2(x) for x in stride)
    return type(stride) is not int and getattr(stride, "is_f2", False)


def f2_columns(shape: Any, stride: Any) -> list[int] | None:
    """The F2 matrix of ``shape:stride`` as columns, one per bit of the 1-D coordinate (column-major, so bit t of
    the index is bit t of the coordinate), when the layout is F2-linear: every mode of shape > 1 has a power-of-two
    shape and an F2 stride, or an int stride that is a power of two whose bits no other int mode uses (then the int
    sums never carry). None otherwise.

    >>> f2_columns((8, 8), (F2(1), F2(9)))
    [1, 2, 4, 9, 18, 36]
    >>> f2_columns((4, 3), (1, 4)) is None
    True
    """
    cols: list[int] = []
    used = 0
    for s, d in zip(it.flatten(shape), it.flatten(stride), strict=True):
        if s == 1:
            continue
        if s & (s - 1):
            return None
        if type(d) is int and d >= 0 and d & (d - 1) == 0 and not used & (s - 1) * d:
            used |= (s - 1) * d
        elif type(d) is F2:
            d = d.value
        else:
            return None
        cols += [d << t for t in range(s.bit_length() - 1)]
    return cols


def f2_apply(cols: list[int], x: int) -> int:
    """The F2-linear map with these columns at ``x < 2^len(cols)``: the XOR of ``cols[t]`` over the set bits t of x."""
    out = 0
    while x:
        out ^= cols[(x & -x).bit_length() - 1]
        x &= x - 1
    return out


def _f2_basis(cols: list[int]) -> dict[int, tuple[int, int]]:
    """Gaussian elimination over F2: pivot (top bit) -> (vector, the columns XORed into it, as a bitmask)."""
    basis: dict[int, tuple[int, int]] = {}
    for j, v in enumerate(cols):
        comb = 1 << j
        while v and (p := v.bit_length() - 1) in basis:
            v, comb = v ^ basis[p][0], comb ^ basis[p][1]
        if v:
            basis[p] = (v, comb)
    return basis


def f2_rank(cols: list[int]) -> int:
    """The rank of the columns over F2. ``f2_rank([3, 1, 2]) == 2``."""
    return len(_f2_basis(cols))


def f2_solve(cols: list[int], targets: list[int]) -> list[int | None]:
    """For each target vector y: a set of columns (a bitmask over their indices) whose XOR is y, or None when y is
    outside their span. Gaussian elimination over F2; columns that depend on earlier ones are never used.

    >>> f2_solve([3, 1, 2], [2, 1, 4])
    [3, 2, None]
    """
    basis, out = _f2_basis(cols), []
    for y in targets:
        comb = 0
        while y and (p := y.bit_length() - 1) in basis:
            y, comb = y ^ basis[p][0], comb ^ basis[p][1]
        out.append(None if y else comb)
    return out
