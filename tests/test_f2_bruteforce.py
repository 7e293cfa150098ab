"""Composition, complement and the inverses of F2-strided layouts and swizzled shared-memory tiles against their
post-conditions, checked by enumeration (``tests/f2_brute.py``, independent of the algebra's own checks), on one
fixed seed; ``scripts/f2_hunt.py`` runs the same on many seeds."""

from __future__ import annotations

import f2_brute as fb
import pytest

import algebra as A


def test_one_seed_of_the_hunt_has_no_failure() -> None:
    fails, stats = fb.hunt(9200, 30)
    assert not fails, "\n".join(fails[:10])
    for op in ("composition", "complement", "right_inverse", "left_inverse"):
        assert stats[f"{op} answered"] >= 15, dict(stats)


@pytest.mark.parametrize(("a", "b"), [
    ("Sw<1,3,3> o 64 o (8,32):(32,1)", "(2,2):(F1,F2)"),
    ("Sw<1,3,3> o 64 o (8,32):(32,1)", "(1,2,4,4):(F2,F3,32,F28)"),
    ("Sw<1,4,1> o 8 o (8,4):(4,1)", "(2,8):(2,F2)"),
    ("Sw<3,4,3> o 1 o (8,(4,2)):(4,(1,32))", "(8,2):(F5,F0)"),
])
def test_an_offset_adds_to_the_bits_of_an_f2_inner_layout(a: str, b: str) -> None:
    """``Sw o O o L`` composed with F2 strides is ``Sw o O o (L o B)``; its value is ``Sw(O + bits)``, as
    ``offsets`` has it. ``O + F2`` was a XOR there, so ``composition(Sw<1,3,3> o 64 o (8,32):(32,1), (2,2):(F1,F2))``
    gave Sw(64 ^ 64) = 0 at i = 2 where A(B(2)) = A(2) = Sw(64 + 64) = 128."""
    la, lb = A.parse(a), A.parse(b)
    r = A.composition(la, lb)
    assert fb.check_composition(la, lb, r) is None
    for i in range(A.size(lb)):
        if (x := int(lb(i))) < A.size(la):
            assert int(r(i)) == la(x), (str(r), i)


def test_the_checker_rejects_wrong_answers() -> None:
    """Each check fails on an answer that breaks its post-condition (so the hunt can find one)."""
    f = A.parse("(8,8):(F1,F9)")
    assert fb.check_right_inverse(f, A.parse("(8,8):(F1,F8)")) is not None
    assert fb.check_right_inverse(f, A.parse("8:F1")) is not None  # not the longest run of offsets
    assert fb.check_left_inverse(f, A.parse("64:1")) is not None
    assert fb.check_complement(A.parse("(4,4):(F1,F9)"), 64, A.parse("(2,2):(4,16)")) is not None  # meets L's image
    assert fb.check_complement(A.parse("(4,4):(F1,F9)"), 64, A.parse("2:4")) is not None  # too small
    assert fb.check_complement(A.parse("(4,4):(F1,F9)"), 64, A.parse("(2,2):(32,4)")) is not None  # not ordered
    assert fb.check_composition(f, A.parse("(2,2):(1,8)"), A.parse("(2,2):(F1,F8)")) is not None
    tile = A.parse("Sw<1,3,3> o 64 o (8,32):(32,1)")
    assert fb.check_composition(tile, A.parse("2:2"), A.parse("Sw<1,3,3> o 0 o 2:64")) is not None
    assert fb.check_right_inverse(f, A.right_inverse(f)) is None
    assert fb.check_complement(A.parse("(4,4):(F1,F9)"), 64, A.complement(A.parse("(4,4):(F1,F9)"), 64)) is None


@pytest.mark.parametrize(("layout", "cot", "want"), [
    ("(8,2):(F1,F0)", None, "1:0"), ("(8,2):(F1,0)", 64, "8:8"), ("(2,8,2):(F0,F3,F64)", None, "(2,4):(1,16)"),
    ("((4,2),8):((F1,F0),F36)", 256, "8:4"),
])
def test_the_complement_of_an_f2_layout_filters_its_broadcast_modes_first(layout: str, cot: int | None,
                                                                         want: str) -> None:
    """CuTe's complement is that of ``filter(L)``: a stride-0 mode (``F0`` or ``0``) drops out. The F2 complement
    counted its zero column as dependent and refused ``complement((8,2):(F1,F0))`` as non-injective."""
    lay = A.parse(layout)
    r = A.complement(lay) if cot is None else A.complement(lay, cot)
    assert str(r) == want
    assert fb.check_complement(lay, cot, r) is None
    with pytest.raises(A.LayoutError, match="Non-injective"):  # a dependent non-zero column still is
        A.complement(A.parse("(4,2,2):(F1,F0,F3)"))


def test_offsets_of_ints_beside_f2_strides_nest_as_the_layout_evaluates() -> None:
    """``offsets`` summed every leaf in turn (a XOR once an F2 term was in), where ``Layout.__call__`` sums each mode
    first: in ``(2,4,(2,4),(2,4)):(F55,F0,(8,4),(F8,F4))`` the int mode (8,4) carries (8 + 8 = 16) before the XOR, so
    at i = 296 the layout is 24 where ``offsets`` said 8. The composition check read ``offsets`` and let that layout
    through as ``((2,4),4,1):((F0,F51),4,4) o (2,4,8,8):(F11,F0,16,F16)`` (A(B(296)) = A(16) = 8)."""
    from algebra.core.modes import offsets

    r = A.parse("(2,4,(2,4),(2,4)):(F55,F0,(8,4),(F8,F4))")
    assert offsets(r) == [int(r(i)) for i in range(A.size(r))]
    a, b = A.parse("((2,4),4,1):((F0,F51),4,4)"), A.parse("(2,4,8,8):(F11,F0,16,F16)")
    with pytest.raises(A.LayoutError, match=r"at i = 296 that gives 24, but A\(B\(296\)\) = A\(16\) = 8"):
        A.composition(a, b)
    with pytest.raises(A.LayoutError, match="at i = 296 that gives 24"):
        A.composition(A.ComposedLayout(A.Swizzle(3, 3, 3), 8, a), b)
