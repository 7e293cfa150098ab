"""F2 (XOR) arithmetic, swizzles as F2 matrices, F2 layouts (seed 001's F2 strides)."""

from __future__ import annotations

import itertools

import pytest

import algebra as A
from algebra import LayoutError
from algebra.doctor.f2 import (
    F2,
    F2Layout,
    apply,
    clmul,
    compose,
    describe_swizzle,
    identity,
    inverse,
    is_involution,
    matrix_of,
    matrix_str,
    rank,
    rows,
    swizzle_matrix,
    to_f2_layout,
)


def test_f2_arithmetic_from_the_seed():
    assert F2(0b1010) + F2(0b1100) == F2(0b0110)
    assert str(F2(0b1010) + F2(0b1100)) == "F6"
    assert F2(0b1010) * 2 == F2(20)                 # a power of two is a plain shift
    assert F2(0b11) * 0b11 == F2(5)                 # carry-less: 3 * 3 is 5, not 9
    assert sum([F2(1), F2(3), F2(4)]) == F2(6)
    assert F2(7) - F2(7) == F2(0)
    assert int(F2(9)) == 9 and len({F2(3), F2(3)}) == 1
    with pytest.raises(LayoutError):
        F2(-1)
    with pytest.raises(AttributeError):
        F2(1).value = 2


def test_clmul_matches_schoolbook_without_carries():
    assert clmul(0b101, 0b11) == 0b1111
    for a, b in itertools.product(range(32), repeat=2):
        if a & (a << 1) == 0 or b in (0, 1, 2, 4, 8, 16):  # no carries when b is a power of two
            if b & (b - 1) == 0:
                assert clmul(a, b) == a * b
        assert clmul(a, b) == clmul(b, a)
    with pytest.raises(LayoutError):
        clmul(-1, 2)


def test_matrix_algebra():
    m = [0b011, 0b010, 0b100]
    assert apply(m, 0b011) == 0b001
    assert compose(m, identity(3)) == m
    assert compose(inverse(m), m) == identity(3)
    assert rank(m) == 3 and rank([1, 1, 2]) == 2 and rank([0b110, 0b011, 0b101]) == 2
    with pytest.raises(LayoutError, match="singular"):
        inverse([1, 1, 2])
    assert matrix_str([1, 3]) == "1 1\n0 1"
    assert rows([1, 3]) == [0b11, 0b10]


@pytest.mark.parametrize(("b", "m", "s"), [(3, 4, 3), (2, 0, 3), (3, 3, 3), (5, 0, 5), (2, 1, 4), (1, 2, -3)])
def test_swizzle_matrix_is_an_involution(b, m, s):
    sw = A.Swizzle(b, m, s)
    cols = swizzle_matrix(sw)
    n = len(cols)
    assert n == m + b + abs(s)
    assert all(apply(cols, x) == sw(x) for x in range(1 << n))
    assert is_involution(cols) and rank(cols) == n
    assert inverse(cols) == cols
    assert rows(cols, n) == sw.f2_matrix()
    d = describe_swizzle(sw)
    assert d["involution"] and d["rank"] == n and len(d["matrix"]) == n
    assert "its own inverse" in d["text"]


def test_matrix_of_a_layout_of_bits():
    lay = A.Layout((2, 2, 2), (4, 1, 2))
    assert matrix_of(lay, 3) == [4, 1, 2]


def test_f2_layouts():
    f = F2Layout((4, 4), (1, 4))
    assert all(f(x) == x for x in range(16))
    g = F2Layout((2, 2), (F2(3), F2(1)))
    assert [g(i) for i in range(4)] == [0, 3, 1, 2]
    h = F2Layout(4, F2(3))                         # a 4-element mode: coordinate bits t go to 3 << t
    assert [h(i) for i in range(4)] == [0, 3, 6, 5]
    assert h.matrix() == [3, 6]
    assert str(g) == "(2,2):(F3,F1)"
    with pytest.raises(LayoutError):
        F2Layout((3,), (1,)).matrix()
    with pytest.raises(LayoutError):
        F2Layout((2, 2), (1,))


def test_to_f2_layout_of_swizzles():
    sw = A.Swizzle(3, 4, 3)
    f = to_f2_layout(sw)
    assert all(f(x) == sw(x) for x in range(1 << 10))
    c = A.parse("Sw<3,4,3> o 0 o (8,64):(64,1)")
    g = to_f2_layout(c)
    assert all(g(i) == c(i) for i in range(512))
    assert compose(inverse(g.matrix()), g.matrix()) == identity(9)
    c2 = A.parse("Sw<2,0,3> o 0 o ((2,4),8):((1,8),2)")
    with pytest.raises(LayoutError, match="overlaps"):
        to_f2_layout(c2)
    with pytest.raises(LayoutError):
        to_f2_layout(A.parse("Sw<3,4,3> o 0 o (6,64):(64,1)"))
    with pytest.raises(LayoutError):
        to_f2_layout(A.ComposedLayout(A.Swizzle(3, 4, 3), 8, A.Layout((8, 64), (64, 1))))
    with pytest.raises(LayoutError):
        to_f2_layout(A.Layout(8))
