"""The ``Layout``: a function from coordinates to offsets given by a hierarchical shape and stride.

``L(c) = sum_i c_i * d_i`` over the natural coordinate ``c`` of the shape ``s`` and the stride ``d``. Beside the
class: its free functions (size, cosize, rank, depth, modes, slicing, coordinates, the identity layout) and
``with_shape``, a composition. Layout stands on the mode arithmetic of ``algebra.core.modes`` and the never-wrong
layer of ``algebra.core.checks``, neither of which builds a Layout.
"""

from __future__ import annotations

import itertools
from math import prod
from typing import Any

from algebra.core import inttuple as it
from algebra.core.arith import clmul, coshape, make_basis_like
from algebra.core.checks import verify
from algebra.core.errors import LayoutError, NoShape
from algebra.core.inttuple import IntTuple, is_int
from algebra.core.modes import coalesce_x_pair, compose, flat_pair, offsets

_new = object.__new__
_MAXM = it.MAX_MAGNITUDE
_UNCOUNTED = 1 << 62  # ``Layout._leaves`` of a Layout built by ``_raw``: above every count, until ``leaves`` counts


class Layout:
    """A CuTe layout ``shape:stride``.

    ``Layout(shape)`` uses the compact column-major stride (CuTe's ``LayoutLeft``: shape-1 modes get stride 0).
    Post-conditions: ``congruent(shape, stride)``; shapes are positive ints; hashable (treat it as immutable:
    no function of the package ever mutates a Layout); ``_leaves`` counts the leaves of the shape (``leaves``).
    """

    __slots__ = ("shape", "stride", "_hash", "_leaves")

    def __init__(self, shape: Any, stride: Any = None) -> None:
        if stride is None and type(shape) is int:  # one mode: its compact stride, then the int fast path
            stride = it.compact_major(shape)
        leaves = -1  # until the input is known to be valid
        if type(shape) is tuple and type(stride) is tuple and len(shape) == len(stride) and len(shape) <= 64:
            for x in shape:  # flat fast path: already valid and congruent (explicit loops: cheaper than all())
                if type(x) is not int or not 0 < x <= _MAXM:
                    break
            else:
                for x in stride:
                    if type(x) is not int or not -_MAXM <= x <= _MAXM:
                        break
                else:
                    leaves = len(shape)
        elif type(shape) is int and type(stride) is int and 0 < shape <= _MAXM and -_MAXM <= stride <= _MAXM:
            leaves = 1
        if leaves < 0:
            shape = it.check_shape(shape)
            if stride is None:
                stride = it.compact_col_major(shape)
            else:
                stride = it.check_stride(stride)
                if not it.congruent(shape, stride):
                    raise LayoutError(f"shape {it.to_str(shape)} and stride {it.to_str(stride)} are not "
                                      "congruent (different profiles)")
                _check_kinds(stride)
            leaves = len(it.flatten(shape))
        self.shape = shape
        self.stride = stride
        self._hash = None
        self._leaves = leaves

    @staticmethod
    def _raw(shape: IntTuple, stride: IntTuple) -> Layout:
        """Build without validation (internal: inputs already congruent and valid). Layouts are never mutated."""
        obj = _new(Layout)
        obj.shape = shape
        obj.stride = stride
        obj._hash = None
        obj._leaves = _UNCOUNTED
        return obj

    def leaves(self) -> int:
        """The number of leaves of the shape (``len(flatten(shape))``), counted once."""
        n = self._leaves
        if n == _UNCOUNTED:
            n = self._leaves = len(it.flatten(self.shape))
        return n

    # ----------------------------------------------------------------------------------------- evaluation
    def __call__(self, *crd: Any) -> Any:
        """Evaluate at a 1-D, flat or natural coordinate; with ``None`` entries, return the slice (a Layout)."""
        c = crd[0] if len(crd) == 1 else tuple(crd)
        if type(c) is int and c >= 0:  # a 1-D index: nothing to slice or check
            return it.crd2idx(c, self.shape, self.stride)
        if len(crd) == 0:
            raise LayoutError("a coordinate is required")
        if _has_none(c):
            return slice_layout(c, self)
        for x in it.flatten(c):
            if not is_int(x):
                raise LayoutError(f"coordinate entries must be integers, got {x!r}")
            if x < 0:
                raise LayoutError(f"coordinate entries must be non-negative, got {x}")
        return it.crd2idx(c, self.shape, self.stride)

    def __getitem__(self, i: int) -> Layout:
        """Mode ``i`` as a layout (CuTe's ``layout<i>``)."""
        if type(self.shape) is not tuple:
            if i in (0, -1):
                return self
            raise LayoutError(f"mode {i} out of range for rank-1 layout {self}")
        try:
            return Layout._raw(self.shape[i], self.stride[i])
        except (IndexError, TypeError):
            raise LayoutError(f"mode {i} out of range for rank-{len(self.shape)} layout {self}") from None

    def __len__(self) -> int:
        return it.rank(self.shape)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    # ----------------------------------------------------------------------------------------- identity
    def __eq__(self, other: object) -> bool:
        # a stride leaf (int, ScaledBasis, F2) equals only a leaf of its own kind: plain tuple equality suffices
        return other is self or type(other) is Layout and self.shape == other.shape and self.stride == other.stride

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = self._hash = hash((self.shape, self.stride))
        return h

    def __str__(self) -> str:
        return f"{it.to_str(self.shape)}:{it.to_str(self.stride)}"

    def __repr__(self) -> str:
        return f"Layout({it.to_str(self.shape)}, {it.to_str(self.stride)})"

    # ----------------------------------------------------------------------------------------- conveniences
    def size(self) -> int:
        return it.product(self.shape)

    def with_shape(self, *shape: Any) -> Layout:
        """``composition(self, make_layout(shape))`` (CuTe's ``Layout::with_shape``). Post: ``R(c) == self(i)``
        for every coordinate ``c`` of ``shape`` with column-major index ``i < size(self)``; refused as
        ``composition`` refuses."""
        b = Layout(shape[0] if len(shape) == 1 else tuple(shape))
        c = coalesce_x_pair(self.shape, self.stride)
        return verify("composition", (self, b), Layout._raw(*compose(c[0], c[1], b.shape, b.stride)))


def _has_none(c: Any) -> bool:
    if c is None:
        return True
    return type(c) is tuple and any(_has_none(x) for x in c)


# --------------------------------------------------------------------------------------------- free functions


def size(x: Any) -> int:
    """Number of coordinates: product of the shape (of a Layout, ComposedLayout or HTuple)."""
    return it.product(x.shape) if hasattr(x, "shape") or hasattr(x, "layout_b") else it.product(_not_text(x))


def _not_text(x: Any) -> Any:
    """``x``, refused when it is a layout's text rather than a layout or an IntTuple."""
    if isinstance(x, str):
        raise LayoutError(f"expected a layout or an IntTuple, got the text {x!r} (A.parse reads it)")
    return x


def cosize(layout: Any) -> int:
    """CuTe's ``cosize``: ``size(coshape(L)) == sum((s_i - 1) * |d_i|) + 1`` over the flat modes (the extent of the
    codomain; max offset + 1 for non-negative strides). Basis strides: the product of the coshape. F2 strides: the
    largest offset + 1 (an F2 offset read as its bits)."""
    if type(layout) is not Layout and hasattr(layout, "layout_b"):
        if hasattr(layout.layout_b, "yyy_mask"):  # L o O o Sw: no shape (nor has it a cosize in CuTe)
            raise NoShape(layout.no_shape())
        return cosize(layout.layout_b) + (layout.offset if is_int(layout.offset) else 0)
    if not hasattr(layout, "stride"):
        raise LayoutError(f"cosize: expected a layout, got {layout!r}")
    fs, fd = flat_pair(layout.shape, layout.stride)
    total = 1
    for i in range(len(fs)):  # (flat_pair: as many strides as shapes)
        if type(d := fd[i]) is not int:
            break
        total += (fs[i] - 1) * (d if d >= 0 else -d)
    else:
        return total
    if any(hasattr(d, "is_f2") for d in fd):  # F2 strides: the largest offset + 1 (bits: one past the top bit)
        top = _f2_max(fs, fd)
        if top is not None:
            return top + 1
        if it.product(fs) <= 1 << 20:
            return max(offsets(layout)) + 1
        raise LayoutError(f"cosize of {layout}: {it.product(fs):,} offsets, with integer strides beside F2 ones (or "
                          "modes of many sizes that are not powers of two), are over the 2^20 this largest offset "
                          "is enumerated for")
    return it.product(coshape(layout))


def rank(x: Any) -> int:
    return it.rank(x.shape if hasattr(x, "shape") else _not_text(x))


def depth(x: Any) -> int:
    return it.depth(x.shape if hasattr(x, "shape") else _not_text(x))


def shape(x: Any) -> IntTuple:
    return x.shape if hasattr(x, "shape") else _not_text(x)


def stride(x: Layout) -> IntTuple:
    return x.stride


def make_layout(*args: Any) -> Layout:
    """``make_layout(shape[, stride])`` or ``make_layout(L0, L1, ...)`` (concatenation of modes).

    Concatenating a single layout wraps it: ``make_layout(4:1) == (4):(1)`` as in CuTe.
    """
    if args and all(type(x) is Layout for x in args):
        return Layout._raw(tuple(x.shape for x in args), tuple(x.stride for x in args))
    if 1 <= len(args) <= 2:
        return Layout(*args)
    raise LayoutError("make_layout takes (shape), (shape, stride) or layouts")


def make_layout_row_major(shape_: Any) -> Layout:
    """Compact row-major layout (CuTe's ``LayoutRight``)."""
    s = it.check_shape(shape_)
    return Layout._raw(s, it.compact_row_major(s))


def make_ordered_layout(shape_: Any, order: Any) -> Layout:
    """Compact layout whose strides follow ``order`` (smaller order = smaller stride), CuTe's ``compact_order``.

    ``order`` may be coarser than the shape (one entry for a whole mode, laid out column-major inside). Each entry
    starts at the product of the sizes of the entries with a smaller order, so equal orders start at the same stride
    (they overlap, as in CuTe)."""
    s = it.check_shape(shape_)

    def like(sh: Any, o: Any) -> Any:  # CuTe's product_like(shape, order)
        if type(o) is tuple:
            if type(sh) is not tuple or len(sh) != len(o):
                raise LayoutError(f"order {it.to_str(order)} does not match shape {it.to_str(s)} (mismatched ranks)")
            return tuple(like(a, b) for a, b in zip(sh, o, strict=True))
        if not is_int(o):
            raise LayoutError(f"order {it.to_str(order)}: entries must be integers")
        return it.product(sh)

    ref_shape, ref_order = it.flatten(like(s, order)), it.flatten(order)

    def go(sh: Any, o: Any) -> Any:
        if type(o) is tuple:
            return tuple(go(a, b) for a, b in zip(sh, o, strict=True))
        start = prod([x for x, y in zip(ref_shape, ref_order, strict=True) if y < o])
        return it.compact_col_major(sh, start)

    return Layout._raw(s, go(s, order))


def slice_layout(crd: Any, layout: Layout) -> Layout:
    """CuTe's ``slice``: keep the modes where ``crd`` is None (``_``), drop the others."""
    if crd is None:
        return Layout._raw(layout.shape, layout.stride)
    return Layout._raw(_lift(crd, layout.shape), _lift(crd, layout.stride))


def _lift(c: Any, t: Any) -> tuple:
    """The modes of ``t`` that ``c`` keeps, nested slices flattened into this level."""
    if type(c) is not tuple:
        return (t,) if c is None else ()
    if type(t) is not tuple or len(c) != len(t):
        raise LayoutError(f"slice coordinate rank does not match {it.to_str(t)}")
    return tuple([m for i in range(len(c)) for m in ((t[i],) if c[i] is None else _lift(c[i], t[i]))])


def slice_and_offset(crd: Any, layout: Layout) -> tuple[Layout, int]:
    """The slice of ``layout`` at ``crd`` and the offset of the fixed coordinates (None counts as 0)."""
    return slice_layout(crd, layout), it.crd2idx(_zero_none(crd), layout.shape, layout.stride)


def _zero_none(c: Any) -> Any:
    """``c`` with 0 for each None (a 0 into a whole mode is its coordinate 0)."""
    if type(c) is tuple:
        return tuple(_zero_none(x) for x in c)
    return 0 if c is None else c


def get_hier_coord(layout: Layout, index: int) -> IntTuple:
    """The natural coordinate ``c`` with ``layout(c) == index`` for a compact injective layout
    (CuTe's ``idx2crd(index, shape, stride)``)."""
    return it.idx2crd(index, layout.shape, layout.stride)


def get_flat_coord(layout: Layout, index: int) -> tuple:
    """``get_hier_coord`` grouped by top-level mode (each mode's coordinate as one integer)."""
    hier = get_hier_coord(layout, index)
    if type(layout.shape) is not tuple:
        return hier
    return tuple(it.crd2idx(c, s) for c, s in zip(hier, layout.shape, strict=True))


def is_injective(layout: Layout) -> bool:
    """True when distinct coordinates map to distinct offsets (checked by enumeration, capped at 2^20)."""
    n = size(layout)
    if n > (1 << 20):
        raise LayoutError("injectivity check is capped at 2^20 coordinates")
    return len(set(offsets(layout))) == n  # a set in C; collision() walks in Python for its counterexample


def collision(values: Any) -> tuple[int, int] | None:
    """The counterexample to injectivity of a table of offsets (``values[i]`` = L(i)): the pair (i, j), i < j, with
    ``values[i] == values[j]`` and j the smallest such index; None when every value differs.
    Example: ``collision(offsets(Layout((2, 2), (1, 1)))) == (1, 2)``."""
    first: dict[Any, int] = {}
    for j, v in enumerate(values):
        i = first.setdefault(v, j)
        if i != j:
            return i, j
    return None


def is_compact(layout: Layout) -> bool:
    """True when the image is exactly [0, size): a bijection onto a contiguous range."""
    n = size(layout)
    if n > (1 << 20):
        raise LayoutError("compactness check is capped at 2^20 coordinates")
    return sorted(offsets(layout)) == list(range(n))


def make_identity_layout(shape: Any) -> Layout:
    """``shape:make_basis_like(shape)``: maps every natural coordinate to itself.

    Post: ``L(c) == c`` (as an ArithTuple) for every natural coordinate c; ``coshape(L) == shape`` for a tuple
    shape. Example: ``str(make_identity_layout((4, 8))) == "(4,8):(1@0,1@1)"``."""
    shape = it.check_shape(shape)
    return Layout(shape, make_basis_like(shape))


def _as_layout(x: Any) -> Layout:
    """``x`` itself for a Layout; the layout ``x:1`` for an int ``x`` (CuTe's tile size); refused otherwise."""
    if isinstance(x, Layout):
        return x
    if is_int(x):
        return Layout(x)
    raise LayoutError(f"expected a layout, got {x!r}")


def layout_arg(x: Any, op: str, name: str = "A") -> Any:
    """The argument ``name`` of ``op`` as a layout with a shape: a Layout or a swizzled ``Sw o O o L`` as it is, an int
    ``n`` the layout ``n:1`` (as ``_as_layout``). Refused otherwise: ``L o O o Sw`` (CuTe's inverse of a swizzled
    layout with an offset) is a function of 1-D offsets and a bare swizzle a function of offsets, neither with a shape
    (``NoShape``, naming the op and the argument); ``_as_layout`` refuses the rest."""
    if type(x) is Layout:
        return x
    if hasattr(x, "layout_b"):
        if hasattr(x.layout_b, "yyy_mask"):  # L o O o Sw: its shape refuses, saying why
            raise NoShape(f"{op}: {name} = {x.no_shape()}")
        return x
    if hasattr(x, "yyy_mask"):
        raise NoShape(f"{op}: {name} = {x} is a swizzle, not a layout: it has no shape (a swizzled layout is "
                      f"composition({x}, L), written {x} o 0 o L)")
    return _as_layout(x)


def _check_kinds(stride: IntTuple) -> None:
    """LayoutError for strides mixing scaled bases and F2 elements: a coordinate and a XOR offset have no sum."""
    kinds = {getattr(d, "is_f2", False): d for d in it.flatten(stride) if type(d) is not int}
    if len(kinds) > 1:
        raise LayoutError(f"stride {it.to_str(stride)} mixes a scaled basis ({kinds[False]}) and an F2 element "
                          f"({kinds[True]}): a layout's strides are integers with one kind or the other, not both")


def _f2_max(fs: Any, fd: Any, most: int = 4096) -> int | None:
    """The largest ``XOR_m c_m * d_m`` over ``c_m < s_m`` (F2 strides, or 0, or size-1 modes), None for another int
    stride or past ``most`` pieces: ``{c < s}`` is the union over the set bits p of s of the affine pieces
    ``(s >> p + 1 << p + 1) + span{2^t : t < p}``, mapped linearly; the largest of ``a + V`` is read off V's reduced
    basis, without enumerating."""
    pieces = []
    for s, d in zip(fs, fd, strict=True):
        v = getattr(d, "value", None) if type(d) is not int else (0 if d == 0 or s == 1 else None)
        if v is None:
            return None
        pieces.append([(clmul(s >> p + 1 << p + 1, v), [v << t for t in range(p)]) for p in range(s.bit_length())
                       if s >> p & 1])
    if it.product(tuple(len(x) for x in pieces)) > most:
        return None
    best = 0
    for choice in itertools.product(*pieces):
        a, basis = 0, []
        for off, span in choice:
            a ^= off
            for b in span:  # reduced into an echelon basis: distinct leading bits, highest first
                for e in basis:
                    b = min(b, b ^ e)
                basis = sorted([*basis, b], reverse=True) if b else basis
        for e in basis:
            a = max(a, a ^ e)
        best = max(best, a)
    return best
