"""Coordinate tensors with an origin, as CuTe prints them: ``ArithTuple(2,3) o (4,4):(_1@0,_1@1)``.

A ``CoordTensor`` is CuTe's tensor over an ``ArithmeticTupleIterator``: ``x(i) = origin + layout(i)``
(``make_identity_tensor`` offset by ``local_tile``, or TMA's ``get_tma_tensor``), printed without CuTe's ``_`` static
markers; ``notation.parse`` also reads CuTe's form and the short ``(2,3) o (4,4):(1@0,1@1)``.

Post-conditions: ``parse(str(x)) == x``; ``x(i)`` is a plain tuple of the origin's rank (or of the layout's
codomain, if longer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from algebra.core import inttuple as it
from algebra.core.arith import ArithTuple, ScaledBasis, coprofile, make_basis_like
from algebra.core.errors import LayoutError
from algebra.core.layout import Layout, slice_and_offset


@dataclass(frozen=True)
class CoordTensor:
    """``origin o layout``: ``origin`` a plain (nested) tuple of ints, ``layout`` a Layout whose strides are basis
    elements (``1@0``) or ints."""

    origin: Any
    layout: Layout

    def __post_init__(self) -> None:
        if not isinstance(self.layout, Layout):
            raise LayoutError(f"a coordinate tensor needs a layout, not {self.layout!r}")
        o = self.origin.as_tuple() if isinstance(self.origin, ArithTuple | ScaledBasis) else self.origin
        o = tuple(o) if isinstance(o, list) else o
        if not all(it.is_int(x) for x in it.flatten(o)):
            raise LayoutError(f"a coordinate tensor's origin is a tuple of integers, not {self.origin!r}")
        object.__setattr__(self, "origin", o)
        bad = [d for d in it.flatten(self.layout.stride) if not isinstance(d, ScaledBasis) and d != 0]
        if bad:
            raise LayoutError(f"a coordinate tensor's strides are basis elements such as 1@0 (or 0), not {bad[0]}: "
                              f"{self.layout}")

    @property
    def shape(self) -> Any:
        return self.layout.shape

    @property
    def stride(self) -> Any:
        return self.layout.stride

    def __call__(self, *crd: Any) -> Any:
        """The coordinate at ``crd`` (an index or a coordinate of the layout): ``origin + layout(crd)``."""
        c = crd[0] if len(crd) == 1 else crd
        v = self.layout(c)
        total = ArithTuple.of(self.origin) + (v.as_tuple() if isinstance(v, ArithTuple | ScaledBasis) else v)
        out = it.wrap(total.as_tuple())
        width = max(it.rank(self.origin), it.rank(coprofile(self.layout)))
        return out + (0,) * (width - len(out))

    def moved(self, sub: Layout, offset: Any) -> CoordTensor:
        """``sub`` from this tensor's origin moved by ``offset``: CuTe's slice, tile or partition of it."""
        o = offset.as_tuple() if isinstance(offset, ArithTuple | ScaledBasis) else offset
        return CoordTensor((ArithTuple.of(self.origin) + o).as_tuple(), sub)

    def slice(self, crd: Any) -> CoordTensor:
        """CuTe's ``tensor(crd)``, ``_`` (None) in ``crd``: the free coordinates, the origin moved by the fixed."""
        return self.moved(*slice_and_offset(crd, self.layout))

    def __str__(self) -> str:
        return f"ArithTuple{it.to_str(self.origin) if it.is_tuple(self.origin) else f'({self.origin})'} o {self.layout}"


def make_coord_tensor(origin: Any, shape: Any) -> CoordTensor:
    """``make_identity_tensor(shape)`` moved to ``origin``: ``origin o shape:(1@0,1@1,...)``.

    >>> x = make_coord_tensor((2, 3), (4, 4))
    >>> print(x)
    ArithTuple(2,3) o (4,4):(1@0,1@1)
    >>> x(5)
    (3, 4)
    """
    return CoordTensor(origin, Layout(shape, make_basis_like(shape)))
