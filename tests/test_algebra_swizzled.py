"""Swizzled layouts through the ops CuTe overloads for ``ComposedLayout`` beyond the divides and products: the
inverses, max_common_vector / max_common_layout, ``composition(Layout, Swizzle)``, the recasts, tile_unzip and
nullspace. Expected strings are CuTe C++'s (nvidia-cutlass 4.2 headers, ``tests/oracle/data/corpus_e*.json``).
"""

from __future__ import annotations

import re

import pytest

import algebra as A

P = A.parse


@pytest.mark.parametrize(("a", "b", "want"), [
    ("Sw<3,4,3> o 0 o (8,64):(64,1)", "(8,64):(64,1)", 16),      # min(inner vector 512, 2^M)
    ("(8,64):(64,1)", "Sw<3,4,3> o 0 o (8,64):(64,1)", 16),      # CuTe swaps the arguments
    ("Sw<3,4,3> o 0 o (8,64):(64,1)", "Sw<3,4,3> o 0 o (8,64):(64,1)", 512),  # same swizzle: no cap
    ("Sw<3,4,3> o 0 o (8,64):(64,1)", "Sw<2,4,3> o 0 o (8,64):(64,1)", 16),
    ("Sw<2,1,3> o 8 o (2,32):(1,2)", "(2,32):(1,2)", 2),
])
def test_max_common_vector_of_a_swizzled_layout_is_capped_at_2_to_the_m(a: str, b: str, want: int) -> None:
    assert A.max_common_vector(P(a), P(b)) == want


def test_max_common_layout_of_a_swizzled_layout() -> None:
    assert str(A.max_common_layout(P("Sw<3,4,3> o 0 o (8,64):(64,1)"), P("(8,64):(64,1)"))) == "16:8"
    with pytest.raises(A.LayoutError, match="no overload"):
        A.max_common_layout(P("Sw<3,4,3> o 0 o (8,64):(64,1)"), P("Sw<3,4,3> o 0 o (8,64):(64,1)"))


@pytest.mark.parametrize(("op", "a", "want"), [
    ("right_inverse", "Sw<2,0,3> o 0 o (4,8):(8,1)", "Sw<2,0,-2> o 0 o (8,4):(4,1)"),
    ("right_inverse", "Sw<3,0,3> o 0 o (16,64):(1,16)", "Sw<3,0,3> o 0 o 1024:1"),
    ("left_inverse", "Sw<2,2,4> o 0 o ((4,2),64):((64,256),1)", "Sw<2,0,-5> o 0 o (64,8):(8,1)"),
    ("left_inverse", "Sw<3,3,5> o 0 o ((2,2),8):((8,16),1)", "Sw<3,0,5> o 0 o (8,4):(4,1)"),
])
def test_inverse_of_a_swizzled_layout_moves_the_swizzle_to_the_offsets(op: str, a: str, want: str) -> None:
    c = P(a)
    r = getattr(A, op)(c)
    assert str(r) == want
    inv = r if op == "right_inverse" else c  # L(R(i)) == i on R's domain, or R(L(i)) == i on L's
    other = c if op == "right_inverse" else r
    assert all(other(inv(i)) == i for i in range(A.size(inv)))


def test_inverse_refusals_name_what_cute_does() -> None:
    with pytest.raises(A.LayoutError, match="abs.SShift. must be more than BBits"):
        A.right_inverse(P("Sw<3,4,3> o 0 o (8,64):(64,1)"))  # the swizzle read through (64,8):(8,1) has |S| < B
    # with a non-zero offset CuTe builds L^-1 o -O o Sw, a layout after the swizzle: answered as CuTe prints it
    r = A.right_inverse(P("Sw<1,2,4> o 8 o (4,16):(16,1)"))
    assert str(r) == "(16,4):(4,1) o -8 o Sw<1,2,4>"
    assert all(P("Sw<1,2,4> o 8 o (4,16):(16,1)")(r(x)) == x for x in r.domain())


def test_layout_after_a_swizzle() -> None:
    assert str(A.composition(P("2:1"), A.Swizzle(2, 3, 3))) == "Sw<2,3,3> o 0 o 2:1"
    assert str(A.composition(P("(16,64):(64,1)"), A.Swizzle(3, 4, 3))) == "Sw<3,0,3> o 0 o (16,64):(64,1)"
    # CuTe prints Sw<3,1,3> o 0 o (8,64):(64,1): the swizzle's source bit 6 of the offsets is also the target of the
    # layout's first mode, so the printed layout differs from A(Sw(i)) already at i = 1
    with pytest.raises(A.LayoutError) as e:
        A.composition(P("(8,64):(64,1)"), A.Swizzle(3, 4, 3))
    msg = str(e.value)
    assert "CuTe would print Sw<3,1,3> o 0 o (8,64):(64,1)" in msg
    i, got, want = (int(x) for x in re.search(r"at i = (\d+) that gives (\d+), but .* = (\d+)$", msg).groups())
    assert P("Sw<3,1,3> o 0 o (8,64):(64,1)")(i) == got != want == P("(8,64):(64,1)")(A.Swizzle(3, 4, 3)(i))


@pytest.mark.parametrize(("op", "args", "want"), [
    ("downcast", ("Sw<1,2,1> o 0 o ((4,2),8):((8,32),1)", 8), "Sw<1,5,1> o 0 o ((4,2),64):((64,256),1)"),
    ("downcast", ("Sw<0,2,1> o 0 o (8,64):(64,1)", 4), "Sw<0,4,1> o 0 o (8,256):(256,1)"),  # identity kept
    ("downcast", ("Sw<3,3,3> o 0 o (8,32):(32,1)", 2), "Sw<3,4,3> o 0 o (8,64):(64,1)"),
    ("recast_layout", ("Sw<2,1,-3> o 512 o (16,8):(1,16)", 16, 128), "Sw<0,0,-3> o 64 o (2,8):(1,2)"),
    ("upcast", ("Sw<3,4,3> o 0 o (8,64):(64,1)", 2), "Sw<3,3,3> o 0 o (8,32):(32,1)"),
])
def test_recasts_of_a_swizzled_layout_recast_every_part(op: str, args: tuple, want: str) -> None:
    assert str(getattr(A, op)(P(args[0]), *args[1:])) == want


def test_recast_refusals_of_a_swizzled_layout() -> None:
    with pytest.raises(A.LayoutError, match="power of two"):
        A.upcast(P("Sw<3,4,3> o 0 o (8,64):(64,1)"), 3)
    with pytest.raises(A.LayoutError, match="offset 8 .* not a multiple of 16"):
        A.upcast(P("Sw<3,4,3> o 8 o (8,64):(64,1)"), 16)


def test_tile_unzip_and_nullspace_of_a_swizzled_layout() -> None:
    got = A.tile_unzip(P("Sw<3,0,-4> o 0 o ((2,2),1):((1,2),4)"), (4,))
    assert str(got) == "Sw<3,0,-4> o 0 o ((2),(2,1)):((1),(2,4))"
    assert str(A.nullspace(P("Sw<3,4,3> o 0 o (8,64):(0,1)"))) == "1:0"  # CuTe does not attempt it


@pytest.mark.parametrize(("op", "args"), [
    ("max_common_vector", ("Sw<3,4,3> o 0 o (8,64):(64,1)", "(8,64):(64,1)")),
    ("right_inverse", ("Sw<2,0,3> o 0 o (4,8):(8,1)",)),
    ("downcast", ("Sw<1,2,1> o 0 o ((4,2),8):((8,32),1)", "8")),
    ("composition", ("(8,64):(64,1)", "Sw<3,4,3>")),
])
def test_explain_ends_where_the_op_does(op: str, args: tuple) -> None:
    parsed = A.registry.parse_args(A.registry.get(op), list(args))
    try:
        want = str(getattr(A, op)(*parsed))
    except A.LayoutError as e:
        with pytest.raises(A.LayoutError) as got:
            A.explain(op, *args)
        assert str(got.value) == str(e)
        return
    last = A.explain(op, *args)[-1]
    assert last["depth"] == 0 and last["kind"] == "result"
    assert (last["layout"] or last.get("value")) == want


@pytest.mark.parametrize(("op", "a", "b", "want"), [
    ("logical_product", "(8,8):(1,8)", "Sw<3,0,3> o 0 o (8,8):(8,1)", "Sw<3,6,3> o 0 o ((8,8),(8,8)):((1,8),(512,64))"),
    ("logical_product", "(2,2):(1,2)", "Sw<1,0,1> o 0 o (2,2):(1,2)", "Sw<1,2,1> o 0 o ((2,2),(2,2)):((1,2),(4,8))"),
    ("tiled_product", "(8,8):(1,8)", "Sw<3,0,3> o 0 o (8,8):(8,1)", "Sw<3,6,3> o 0 o ((8,8),8,8):((1,8),512,64)"),
    ("flat_product", "(8,8):(1,8)", "Sw<3,0,3> o 0 o (8,8):(8,1)", "Sw<3,6,3> o 0 o (8,8,8,8):(1,8,512,64)"),
    ("composition", "(64,64):(1,64)", "Sw<3,0,3> o 0 o (8,8):(8,1)", "Sw<3,0,3> o 0 o (8,8):(8,1)"),
    ("complement", "(4,8):(1,4)", "Sw<3,0,3> o 0 o (8,8):(8,1)", "2:32"),  # CuTe: shape(cotarget)
])
def test_swizzled_second_argument(op: str, a: str, b: str, want: str) -> None:
    r = getattr(A, op)(P(a), P(b))
    assert str(r) == want
    if op == "logical_product":  # the product's function: R(i, j) = A(i) + A*(B(j))
        comp = A.complement(P(a), A.size(P(a)) * A.cosize(P(b).layout_b))
        n0 = A.size(P(a))
        assert all(r(k) == P(a)(k % n0) + comp(P(b)(k // n0)) for k in range(A.size(r)))


def test_swizzles_compose_and_invert_as_in_cute() -> None:
    assert str(A.composition(A.Swizzle(3, 0, 3), A.Swizzle(2, 0, 3))) == "Sw<1,2,3>"
    assert str(A.composition(A.Swizzle(3, 0, 3), A.Swizzle(3, 0, 3))) == "Sw<0,0,0>"
    with pytest.raises(A.LayoutError, match="same shift"):
        A.composition(A.Swizzle(3, 0, 3), A.Swizzle(2, 0, 4))
    assert A.right_inverse(A.Swizzle(3, 0, 3)) == A.Swizzle(3, 0, 3) == A.left_inverse(A.Swizzle(3, 0, 3))
    c = P("Sw<3,0,3> o 0 o (8,8):(0,1)")
    assert A.filter_zeros(c) == c  # CuTe's generic filter_zeros(t) returns a composed layout unchanged
