"""Public parts of ``algebra.core`` that no other test reached: CuTe's IntTuple predicates and ``shape_div``, the
layout queries, ``parse_arg``'s tiler entries, a coordinate tensor's shape and stride, and the refusals of bad
arguments (each names what is wrong)."""

from __future__ import annotations

import pytest

import algebra as A
from algebra.core.notation import MAX_TEXT


def test_weakly_congruent_is_a_coarser_profile():
    assert A.weakly_congruent(4, (2, 3)) and A.weakly_congruent((1, 2), (3, (4, 5)))
    assert not A.weakly_congruent((2, 3), 4) and not A.weakly_congruent((1, 2), (3,))


def test_weakly_compatible_divides_the_matching_mode():
    assert A.weakly_compatible(4, 8) and A.weakly_compatible(4, (2, 4)) and A.weakly_compatible((2, 3), (4, 6))
    assert not A.weakly_compatible(3, 8) and not A.weakly_compatible((2, 3), (4, (2, 2)))


def test_shape_div_as_cute():
    # int/int: a / b, or signum when b % a == 0 and a < b; tuple/int folds the divisor; int/tuple divides by product
    assert A.shape_div(6, 2) == 3 and A.shape_div(2, 6) == 1
    assert A.shape_div((6, 4), 2) == (3, 4) and A.shape_div((2, 8), 4) == (1, 4)
    assert A.shape_div((6, 4), (3, 2)) == (2, 2) and A.shape_div(6, (2, 3)) == 1
    with pytest.raises(A.LayoutError, match="neither of 3 and 2 divides the other"):
        A.shape_div(3, 2)
    with pytest.raises(A.LayoutError, match="mismatched ranks"):
        A.shape_div((2, 3), (1,))


def test_injective_and_compact():
    assert not A.is_injective(A.Layout((4, 2), (1, 0))) and not A.is_compact(A.Layout((4, 2), (1, 0)))
    assert A.is_injective(A.Layout((4, 2), (2, 1))) and A.is_compact(A.Layout((4, 2), (2, 1)))
    assert A.is_injective(A.Layout((4, 2), (1, 8))) and not A.is_compact(A.Layout((4, 2), (1, 8)))


def test_shape_stride_and_make_layout():
    L = A.Layout((4, 2), (1, 0))
    assert (A.shape(L), A.stride(L), A.shape((3, 4))) == ((4, 2), (1, 0), (3, 4))
    assert A.make_layout((4, 2), (2, 1)) == A.Layout((4, 2), (2, 1))
    with pytest.raises(A.LayoutError, match="make_layout takes"):
        A.make_layout(1, 2, 3)


def test_parse_arg_tiler_entries():
    got = A.parse_arg(["4:1", None, 2, "_", ["2:1", "3:2"]])
    assert got == (A.Layout(4, 1), None, 2, None, (A.Layout(2, 1), A.Layout(3, 2)))
    for bad, why in ((True, "expected a layout, tiler or integer"), (1.5, "got float"), ([1.5], "not a tiler entry")):
        with pytest.raises(A.LayoutError, match=why):
            A.parse_arg(bad)


def test_coordinate_tensor_shape_stride_and_origin():
    x = A.make_coord_tensor([1, 2], (4, 8))  # a list origin is a tuple
    assert x.shape == (4, 8) and x.stride == (A.E(0), A.E(1)) and x(5) == (2, 3)
    with pytest.raises(A.LayoutError, match="origin is a tuple of integers"):
        A.make_coord_tensor((1, "a"), (4, 8))


def test_swizzle_size_and_parameters():
    assert A.Swizzle(3, 4, 3).size() == 1 << 10
    for args, why in (((-1, 0, 0), "non-negative"), ((17, 0, 17), "exceed the cap"), ((1.5, 0, 1), "an integer")):
        with pytest.raises(A.LayoutError, match=why):
            A.Swizzle(*args)


@pytest.mark.parametrize("call, why", [
    (lambda: A.Layout((4, 2), (1, 4))[2], "mode 2 out of range"),
    (lambda: A.Layout(4, 1)[1], "mode 1 out of range"),
    (lambda: A.Layout((4, 2))(), "a coordinate is required"),
    (lambda: A.Layout((4, 2))(1.5), "must be integers"),
    (lambda: A.make_ordered_layout((2, 2), (0, "a")), "entries must be integers"),
    (lambda: A.idx2crd((1, 2), (4,)), "mismatched ranks"),
    (lambda: A.parse(5), "expected text"),
    (lambda: A.parse("4" * (MAX_TEXT + 1)), "longer than"),
    (lambda: A.complement(A.Layout((4, 8), (A.E(0), A.E(1))), 64), "basis"),
    (lambda: A.right_inverse(A.Layout((4, 8), (A.E(0), A.E(1)))), "basis"),
    (lambda: A.composition(A.Layout((4, 8)), A.Layout((4, 8), (A.E(0), 2))), "mixes basis"),
    (lambda: A.composition(A.Layout((4, 8)), A.Layout((2, 2), (A.E(2), A.E(0)))), "does not have"),
    (lambda: A.composition(A.Layout((4, 8)), "x"), "cannot compose"),
    (lambda: A.parse("(4,4,2):(F3,2@1,F1)"), r"a scaled basis \(2@1\) and an F2 element \(F[13]\)"),
])
def test_bad_arguments_are_refused(call, why):
    with pytest.raises(A.LayoutError, match=why):
        call()


def test_recast_layout_up_then_down():
    # 16-bit elements as 24-bit ones: CuTe's ratio 3/2, upcast<3> then downcast<2>; the column step of 6 x 16 bits is
    # 4 x 24 bits
    assert A.recast_layout(A.parse("(6,4):(1,6)"), 16, 24) == A.parse("(4,4):(1,4)")
    assert A.recast_layout(A.parse("(8,8):(8,1)"), 16, 16) == A.parse("(8,8):(8,1)")


def test_composition_with_basis_strides_reads_the_modes_of_a():
    # B's mode 0 (stride 1@1) reads A's mode 8:4, its mode 1 (stride 1@0) A's mode 4:1
    assert A.composition(A.Layout((4, 8)), A.Layout((2, 2), (A.E(1), A.E(0)))) == A.Layout((2, 2), (4, 1))


def test_composed_layout_rank_size_and_parts():
    c = A.parse("Sw<3,4,3> o 0 o (8,64):(64,1)")
    assert (len(c), c.size()) == (2, 512)
    from algebra.core.swizzle import ComposedLayout

    sw, lay = A.Swizzle(1, 0, 1), A.Layout(4)
    for parts, why in (((5, 0, lay), "outer function"), ((sw, 0, 5), "inner function"), ((sw, "a", lay), "offset")):
        with pytest.raises(A.LayoutError, match=why):
            ComposedLayout(*parts)
    with pytest.raises(A.LayoutError, match="power of two bits"):
        A.parse("Sw<3,4,3> o smem_ptr[12b](unset) o (8,64):(64,1)")
