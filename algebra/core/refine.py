"""Common refinement and common coarsening of shapes under the compatibility order (seed 001): ``compatible(a, b)``
("a <= b") means b is a with some leaves split into tuples of the same size. Both raise ``LayoutError`` when no such
shape exists; ``flat_refinement`` is the common refinement of two flat chains of divisors (composition's divisibility
conditions).
"""

from __future__ import annotations

from itertools import accumulate
from operator import mul
from typing import Any

from algebra.core import inttuple as it
from algebra.core.errors import LayoutError
from algebra.core.inttuple import is_tuple


def common_refinement(a: Any, b: Any) -> Any:
    """The least shape that refines both ``a`` and ``b``.

    Post: ``compatible(a, R)`` and ``compatible(b, R)``; any shape with both properties refines R.

    >>> common_refinement(((2, 3), 4), (6, (2, 2)))
    ((2, 3), (2, 2))
    """
    a, b = it.check_shape(a, "shape a"), it.check_shape(b, "shape b")
    return _refine(a, b, ())


def _refine(a: Any, b: Any, path: tuple) -> Any:
    where = f" at mode {'.'.join(map(str, path))}" if path else ""
    if it.product(a) != it.product(b):
        raise LayoutError(f"no common refinement{where}: sizes {it.product(a)} and {it.product(b)} differ "
                          f"({it.to_str(a)} vs {it.to_str(b)})")
    if not is_tuple(a):
        return b
    if not is_tuple(b):
        return a
    if len(a) != len(b):
        raise LayoutError(f"no common refinement{where}: ranks {len(a)} and {len(b)} differ "
                          f"({it.to_str(a)} vs {it.to_str(b)})")
    return tuple(_refine(x, y, path + (i,)) for i, (x, y) in enumerate(zip(a, b, strict=True)))


def common_coarsening(a: Any, b: Any) -> Any:
    """The greatest shape that both ``a`` and ``b`` refine.

    Post: ``compatible(R, a)`` and ``compatible(R, b)``; R refines every shape with both properties.

    >>> common_coarsening((2, (3, 4)), (2, 12)), common_coarsening((4, 6), (6, 4))
    ((2, 12), 24)
    """
    a, b = it.check_shape(a, "shape a"), it.check_shape(b, "shape b")
    if it.product(a) != it.product(b):
        raise LayoutError(f"no common coarsening: sizes {it.product(a)} and {it.product(b)} differ")
    return _coarsen(a, b)


def _coarsen(a: Any, b: Any) -> Any:
    if is_tuple(a) and is_tuple(b) and len(a) == len(b) and \
            all(it.product(x) == it.product(y) for x, y in zip(a, b, strict=True)):
        return tuple(_coarsen(x, y) for x, y in zip(a, b, strict=True))
    return it.product(a)


def flat_refinement(a: Any, b: Any) -> tuple:
    """The coarsest flat shape whose column-major prefix products include those of both flat shapes.

    Post: ``product(R) == product(a) == product(b)``, and grouping consecutive modes of R gives the leaves of a
    (and of b). Exists when every prefix product of a and of b divide one another in a chain; otherwise
    ``LayoutError`` names the two that do not.

    >>> flat_refinement((4, 6), (2, 12))
    (2, 2, 6)
    """
    fa, fb = it.flatten(it.check_shape(a, "shape a")), it.flatten(it.check_shape(b, "shape b"))
    if it.product(fa) != it.product(fb):
        raise LayoutError(f"no common refinement: sizes {it.product(fa)} and {it.product(fb)} differ")
    cuts = sorted({*accumulate(fa, mul, initial=1), *accumulate(fb, mul, initial=1)})
    for lo, hi in zip(cuts, cuts[1:], strict=False):
        if hi % lo:
            raise LayoutError(f"no common flat refinement: {lo} does not divide {hi} (prefix products of "
                              f"{it.to_str(a)} and {it.to_str(b)})")
    out = tuple(hi // lo for lo, hi in zip(cuts, cuts[1:], strict=False))
    return out if out else (1,)
