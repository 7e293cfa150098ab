"""common_refinement / common_coarsening under the compatibility order, and flat refinements."""

from __future__ import annotations

import random

import pytest

import algebra as A
from algebra import LayoutError
from algebra.core.refine import common_coarsening, common_refinement, flat_refinement


@pytest.mark.parametrize(("a", "b", "want"), [
    ((6, 4), (6, (2, 2)), (6, (2, 2))),
    (((2, 3), 4), (6, (2, 2)), ((2, 3), (2, 2))),
    (24, (4, 6), (4, 6)),
    ((4, 6), 24, (4, 6)),
    ((2, 3), (2, 3), (2, 3)),
    (((2, 2), 8), ((2, 2), (2, 4)), ((2, 2), (2, 4))),
])
def test_common_refinement(a, b, want):
    r = common_refinement(a, b)
    assert r == want
    assert A.compatible(a, r) and A.compatible(b, r)


@pytest.mark.parametrize(("a", "b"), [((2, 3), (3, 2)), ((4, 6), (2, 2, 6)), (8, 12)])
def test_common_refinement_refuses(a, b):
    with pytest.raises(LayoutError, match="no common refinement"):
        common_refinement(a, b)


@pytest.mark.parametrize(("a", "b", "want"), [
    ((2, (3, 4)), (2, 12), (2, 12)),
    ((4, 6), (6, 4), 24),
    ((6, (2, 2)), ((2, 3), (2, 2)), (6, (2, 2))),
    ((4, 6), (4, (2, 3)), (4, 6)),
    (((2, 2), 4), ((2, 2), (2, 2)), ((2, 2), 4)),
])
def test_common_coarsening(a, b, want):
    c = common_coarsening(a, b)
    assert c == want
    assert A.compatible(c, a) and A.compatible(c, b)


def test_common_coarsening_refuses_different_sizes():
    with pytest.raises(LayoutError, match="sizes"):
        common_coarsening((4, 6), (4, 8))


def test_lattice_properties_on_random_shapes():
    rng = random.Random(3)

    def split(s):
        splits = [(d, s // d) for d in range(2, s) if s % d == 0]
        return rng.choice(splits) if splits else s

    for _ in range(300):
        base = tuple(rng.choice((2, 4, 6, 8, 12)) for _ in range(rng.randint(1, 3)))
        which = [rng.choice("ab-") for _ in base]      # refine each leaf in a, in b, or in neither
        a = tuple(split(x) if w == "a" else x for x, w in zip(base, which, strict=True))
        b = tuple(split(x) if w == "b" else x for x, w in zip(base, which, strict=True))
        r, c = common_refinement(a, b), common_coarsening(a, b)
        assert A.compatible(a, r) and A.compatible(b, r) and A.compatible(base, r)
        assert A.compatible(c, a) and A.compatible(c, b)
        assert c == base


def test_flat_refinement():
    assert flat_refinement((4, 6), (2, 12)) == (2, 2, 6)
    assert flat_refinement((2, (3, 4)), (6, 4)) == (2, 3, 4)
    assert flat_refinement(8, 8) == (8,)
    assert flat_refinement(1, 1) == (1,)
    with pytest.raises(LayoutError, match="4 does not divide 6"):
        flat_refinement((4, 6), (6, 4))
    with pytest.raises(LayoutError):
        flat_refinement((4, 6), (4, 8))
