"""ScaledBasis / ArithTuple arithmetic, identity layouts, coshape / coprofile (seed 001's ArithTuple section)."""

from __future__ import annotations

import pickle

import pytest

import algebra as A
from algebra import LayoutError
from algebra.core.arith import (
    ArithTuple,
    E,
    ScaledBasis,
    as_arithmetic_tuple,
    basis_get,
    basis_value,
    coprofile,
    coshape,
    make_basis_like,
)
from algebra.core.layout import make_identity_layout


def test_printing_follows_cute():
    assert str(E(0)) == "1@0"
    assert str(E(1)) == "1@1"
    assert str(E(0, 0)) == "1@0@0"
    assert str(E(1, 0)) == "1@0@1"          # mode 1, sub-mode 0: CuTe prints the path innermost first
    assert str(3 * E(0)) == "3@0"
    assert str(ScaledBasis(42, (1, 0))) == "42@0@1"
    assert ScaledBasis(42, ()) == 42 and isinstance(ScaledBasis(42, ()), int)
    assert E() == 1
    assert E([1, 0]) == E(1, 0)


def test_attributes_and_immutability():
    b = ScaledBasis(2, (1, 0))
    assert b.is_basis and b.value == 2 and b.mode_path == (1, 0)
    assert b.as_tuple() == (0, (2,))
    with pytest.raises(AttributeError):
        b.value = 3
    assert pickle.loads(pickle.dumps(b)) == b
    assert pickle.loads(pickle.dumps(ArithTuple(1, (2, 3)))) == ArithTuple(1, (2, 3))


def test_arithmetic():
    assert 3 * E(0) + 5 * E(1) == ArithTuple(3, 5)
    assert str(3 * E(0) + 5 * E(1)) == "(3,5)"
    assert isinstance(E(0) * 3, ScaledBasis) and E(0) * 3 == 3 * E(0)
    assert 0 + E(1) is not None and str(0 + E(1)) == "1@1"
    assert ArithTuple(1, 2, 3) + ArithTuple(7, 8, 9) == ArithTuple(8, 10, 12)
    assert ArithTuple(1, 2, 3) * 4 == 4 * ArithTuple(1, 2, 3) == ArithTuple(4, 8, 12)
    assert ArithTuple(1, 2, (3, 4)) + (7, 8, (9, 10)) == ArithTuple(8, 10, (12, 14))
    assert str(E(0) + E(1, 1)) == "(1,(0,1))"
    assert E(0) - E(0) == ArithTuple(0)
    assert -E(2) == ScaledBasis(-1, (2,))
    with pytest.raises(LayoutError):
        ArithTuple(1, 2, 3) + 7
    with pytest.raises(LayoutError):
        E(0) + 1


def test_equality_zero_extends_and_hash_agrees():
    assert E(1) * 2 == ArithTuple(0, 2) == ArithTuple(0, 2, 0)
    assert hash(E(1) * 2) == hash(ArithTuple(0, 2, 0))
    assert E(0) != E(1)
    assert len({E(0), ArithTuple(1), ArithTuple(1, 0)}) == 1


def test_colex_order():
    assert 0 < E(0)
    assert ArithTuple(1, 0, 0) < ArithTuple(0, 1, 0)
    assert ArithTuple(*A.idx2crd(3, (3, 4))) < ArithTuple(*A.idx2crd(7, (3, 4)))
    assert E(1) > E(0)


def test_basis_helpers():
    assert basis_value(3 * E(1)) == 3 and basis_value(7) == 7
    assert basis_get(E(1, 0), (4, (2, 3))) == 2
    assert basis_get(5, (4, 8)) == (4, 8)
    with pytest.raises(LayoutError):
        basis_get(E(2), (4, 8))
    assert as_arithmetic_tuple(E(1)) == ArithTuple(0, 1)
    assert make_basis_like((4, (2, 3))) == (E(0), (E(1, 0), E(1, 1)))
    assert make_basis_like(8) == 1


def test_identity_layout_maps_coordinates_to_themselves():
    ident = make_identity_layout((4, 8))
    assert str(ident) == "(4,8):(1@0,1@1)"
    assert ident(2, 3) == ArithTuple(2, 3)
    assert str(ident(5)) == "(1,1)"
    nested = make_identity_layout((2, (3, 4)))
    assert str(nested) == "(2,(3,4)):(1@0,(1@0@1,1@1@1))"
    for i in range(A.size(nested)):
        assert nested(i) == ArithTuple.of(A.idx2crd(i, (2, (3, 4))))
    assert str(make_identity_layout(8)) == "8:1"
    swap = A.Layout((4, 8), (E(1), E(0)))
    assert swap(2, 3) == ArithTuple(3, 2)


def test_coshape_and_coprofile():
    assert coshape(A.Layout((4, 8), (1, 4))) == 32
    assert coshape(A.Layout((4, 8), (8, 1))) == 32
    assert coshape(make_identity_layout((4, 8))) == (4, 8)
    assert coshape(make_identity_layout((2, (3, 4)))) == (2, (3, 4))
    assert coshape(A.Layout((4, 8), (E(0), E(2)))) == (4, 1, 8)
    assert coprofile(A.Layout((4, 8), (1, 4))) == 0
    assert coprofile(make_identity_layout((2, (3, 4)))) == (0, (0, 0))
    assert coprofile(24) == 0 and coprofile((None, 4)) == (0, 0)


def test_composition_with_identity_layouts():
    ident = make_identity_layout((16, 8))
    tv = A.parse("((4,8),(2,2)):((32,1),(16,8))")
    r = A.composition(ident, tv)
    assert str(r) == "((4,8),(2,2)):((2@1,1@0),(1@1,8@0))"
    assert all(r(i) == ident(tv(i)) for i in range(A.size(tv)))
    row = A.Layout((4, 8), (8, 1))
    assert A.composition(row, make_identity_layout((4, 8))) == row
    h = A.parse("(4,(2,4)):(2,(1,8))")
    assert A.composition(h, make_identity_layout((4, (2, 4)))) == h
    assert str(A.composition(make_identity_layout((4, 8)), A.Layout((8, 4), (4, 1)))) == "(8,4):(1@1,1@0)"


def test_layouts_with_basis_strides_round_trip_flat_paths():
    ident = make_identity_layout((4, 8))
    assert A.parse(str(ident)) == ident


def test_layouts_with_nested_basis_paths_round_trip():
    nested = make_identity_layout((2, (3, 4)))
    assert A.parse(str(nested)) == nested


def test_bad_values():
    with pytest.raises(LayoutError):
        ScaledBasis(1.5, (0,))
    with pytest.raises(LayoutError):
        ScaledBasis(1, (-1,))
    with pytest.raises(LayoutError):
        ArithTuple(1, "x")
