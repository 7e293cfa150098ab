"""F2 (XOR) arithmetic, swizzles as F2 matrices, F2 layouts (seed 001's F2 strides): all of it the core's F2 stride
kind (``algebra.core.arith``) and its ops."""

from __future__ import annotations

import itertools

import pytest

import algebra as A
from algebra import LayoutError
from algebra.core.arith import F2, clmul, f2_columns, f2_rank
from algebra.doctor.linear_layout import describe_swizzle, f2_layout, inverse_columns


def cols_of(lay):
    return f2_columns(lay.shape, lay.stride)


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
    f = f2_layout(m)
    assert int(f(0b011)) == 0b001
    assert cols_of(A.composition(f, f2_layout([1, 2, 4]))) == m
    assert cols_of(A.composition(f2_layout(inverse_columns(m)), f)) == [1, 2, 4]
    assert f2_rank(m) == 3 and f2_rank([1, 1, 2]) == 2 and f2_rank([0b110, 0b011, 0b101]) == 2
    assert inverse_columns([1, 1, 2]) is None                              # singular: no inverse
    assert describe_swizzle(A.Swizzle(1, 0, 1))["matrix"] == ["1 1", "0 1"]


@pytest.mark.parametrize(("b", "m", "s"), [(3, 4, 3), (2, 0, 3), (3, 3, 3), (5, 0, 5), (2, 1, 4), (1, 2, -3)])
def test_swizzle_matrix_is_an_involution(b, m, s):
    sw = A.Swizzle(b, m, s)
    f = A.as_f2_layout(sw)
    cols = cols_of(f)
    n = len(cols)
    assert n == m + b + abs(s)
    assert all(int(f(x)) == sw(x) for x in range(1 << n))
    assert cols_of(A.composition(f, f)) == [1 << j for j in range(n)] and f2_rank(cols) == n
    assert inverse_columns(cols) == cols and cols_of(A.right_inverse(f)) == cols
    d = describe_swizzle(sw)
    assert d["involution"] and d["rank"] == n and len(d["matrix"]) == n
    assert all(d["matrix"][i].split() == [str((sw(1 << j) >> i) & 1) for j in range(n)] for i in range(n))
    assert "its own inverse" in d["text"]


def test_matrix_of_a_layout_of_bits():
    lay = A.Layout((2, 2, 2), (4, 1, 2))
    assert f2_columns(lay.shape, lay.stride) == [4, 1, 2]


def test_f2_layouts():
    f = A.Layout((4, 4), (F2(1), F2(4)))
    assert all(int(f(x)) == x for x in range(16))
    g = A.Layout((2, 2), (F2(3), F2(1)))
    assert [int(g(i)) for i in range(4)] == [0, 3, 1, 2]
    h = A.Layout(4, F2(3))                         # a 4-element mode: coordinate bits t go to 3 << t
    assert [int(h(i)) for i in range(4)] == [0, 3, 6, 5]
    assert cols_of(h) == [3, 6]
    assert str(g) == "(2,2):(F3,F1)"
    assert f2_columns((3,), (F2(1),)) is None
    with pytest.raises(LayoutError):
        A.Layout((2, 2), (F2(1),))


def test_as_f2_layout_of_swizzles():
    sw = A.Swizzle(3, 4, 3)
    f = A.as_f2_layout(sw)
    assert all(int(f(x)) == sw(x) for x in range(1 << 10))
    c = A.parse("Sw<3,4,3> o 0 o (8,64):(64,1)")
    g = A.as_f2_layout(c)
    assert all(int(g(i)) == c(i) for i in range(512))
    gc = cols_of(g)
    assert cols_of(A.composition(f2_layout(inverse_columns(gc)), f2_layout(gc))) == [1 << j for j in range(9)]
    c2 = A.parse("Sw<2,0,3> o 0 o ((2,4),8):((1,8),2)")
    with pytest.raises(LayoutError, match="shares bits"):
        A.as_f2_layout(c2)
    with pytest.raises(LayoutError):
        A.as_f2_layout(A.parse("Sw<3,4,3> o 0 o (6,64):(64,1)"))
    with pytest.raises(LayoutError):
        A.as_f2_layout(A.ComposedLayout(A.Swizzle(3, 4, 3), 8, A.Layout((8, 64), (64, 1))))
    with pytest.raises(LayoutError):
        A.as_f2_layout(A.Layout(8))


def _bits(v):
    return v.value if isinstance(v, F2) else v


def test_an_int_layout_after_an_f2_layout_is_the_function_or_refused():
    """``A o F`` with integer A and F2 F reads A at F's offsets (their bits): the answer is that function, or a
    refusal with a point where the mode arithmetic's layout differs (A adds with carries, F's offsets XOR)."""
    f = A.parse("(8,8):(F1,F9)")
    assert str(A.composition(A.parse("(8,8):(8,1)"), f)) == "(8,8):(F8,F9)"
    for a, i in (("64:3", 3), ("(8,8):(1,9)", 9), ("(4,4,4):(1,8,4)", 36)):
        with pytest.raises(LayoutError, match=f"F2 linearity condition.*at i = {i} "):
            A.composition(A.parse(a), f)  # the mode arithmetic gave (8,8):(F3,F27) for 64:3: 3 ^ 6 is 5, not 9
    rng = __import__("random").Random(8240)
    answered = 0
    for _ in range(300):
        fl = A.as_f2_layout(A.ComposedLayout(A.Swizzle(rng.randint(0, 3), rng.randint(0, 2), rng.randint(3, 5)), 0,
                                             A.Layout((8, 8), (rng.choice(((1, 8), (8, 1)))))))
        s = rng.choice((64, 128, 256))
        a = rng.choice((A.Layout(s, rng.choice((1, 2, 3, 5))), A.Layout((s // 8, 8), (rng.choice((1, 8, 3)), 1)),
                        A.Layout((4, s // 4), (s // 4, 1))))
        try:
            r = A.composition(a, fl)
        except LayoutError as err:
            assert "F2 linearity condition" in str(err)
            continue
        answered += 1
        assert [_bits(r(i)) for i in range(64)] == [a(_bits(fl(i))) for i in range(64)], (str(a), str(fl), str(r))
    assert 60 < answered < 300


def test_an_f2_result_equal_to_int_zero_is_not_refused():
    """F0 and 0 are the same offset: the check compares bits, so this divide is answered (it was refused with
    "at i = 0 that gives 0, but A(B(0)) = F0")."""
    assert str(A.logical_divide(A.parse("(1,2):(F250,0)"), A.parse("(1,2):(4,2)"))) == "((1,2),2):((0,0),0)"


def test_f2_complement_rounds_an_int_cotarget_up_to_a_power_of_two():
    f = A.parse("(8,8):(F1,F9)")
    assert str(A.complement(f, 64)) == "1:0" and str(A.complement(f, 100)) == str(A.complement(f, 128)) == "2:64"
    g = A.parse("(4,2):(F2,F1)")
    for cot in (1, 5, 8, 9, 30):
        r = A.complement(g, cot)
        sums = [int(g(j)) ^ r(i) for i in range(A.size(r)) for j in range(8)]
        assert len(set(sums)) == len(sums) and set(range(cot)) <= set(sums) and A.size(r) * 8 >= cot
    p = A.logical_product(f, A.parse("4:2"))  # complement(f, 64 * 7): 448, rounded up to 512
    assert str(p) == "((8,8),4):((F1,F9),128)"
    with pytest.raises(LayoutError, match="positive int"):
        A.complement(f, (8, 8))


def test_a_swizzle_of_an_f2_layout_evaluates():
    sw, f = A.Swizzle(3, 0, 3), A.parse("(8,8):(F1,F9)")
    c = A.composition(sw, f)
    assert str(c) == "Sw<3,0,3> o 0 o (8,8):(F1,F9)" and A.offsets(c) == list(range(64))  # Sw o Sw is the identity
    assert c(9) == F2(9) and sw(F2(9)) == F2(8)
    p = A.logical_product(A.parse("Sw<3,0,3> o 0 o (8,8):(8,1)"), f)
    assert [int(p(i)) for i in range(64)] == [A.parse("Sw<3,0,3> o 0 o (8,8):(8,1)")(i) for i in range(64)]


def test_max_common_vector_reads_an_f2_unit_stride_as_contiguous():
    f = A.parse("(8,8):(F1,F9)")
    assert A.max_common_vector(f, A.parse("64:1")) == 8 and str(A.max_common_layout(f, A.parse("64:1"))) == "8:1"
    assert A.max_common_vector(f, f) == 64 and A.max_common_vector(f, A.parse("(8,8):(8,1)")) == 1
    assert str(A.max_common_layout(A.parse("(2,4,8):(F2,F1,F9)"), A.parse("64:1"))) == "1:0"
