"""Swizzled and F2-strided layouts at the edges the s102xx hunt closed: a swizzled tensor's partition at a coordinate
outside the shape (refused with CuTe's print), a negative int stride meeting F2 strides (the F2 sign condition),
an F2 layout composed with a swizzle and the inverses of ``Sw o 0 o (F2 layout)`` (exact, over F2), the slice of
``Sw o O o (F2 layout)`` (exact where the offset adds as a XOR), and ``x(c)`` with ``_`` as CuTe's slice.

CuTe's prints are those of the oracle (``tests/oracle/cute_cpp.py``, the nvidia-cutlass 4.2 headers).
"""

from __future__ import annotations

import random

import f2_brute as fb
import pytest

import algebra as A
from algebra.teach.coords import evaluate

P = A.parse


@pytest.mark.parametrize(("args", "cute"), [
    (("Sw<2,3,3> o 16 o (8,64):(64,1)", "(2,8):(-1,2)", 5), "Sw<2,3,3> o 80 o (4,8):(128,8) at offset 2"),
    (("Sw<3,4,3> o 0 o (8,64):(64,1)", "(2,4):(-1,2)", 3), "Sw<3,4,3> o 64 o (4,16):(128,4) at offset 1"),
    (("Sw<3,3,3> o 0 o (16,64):(64,1)", "(4,4):(-1,8)", 9), "Sw<3,3,3> o 192 o (4,16):(256,4) at offset 1"),
])
def test_partition_outside_the_thread_shape_names_cutes_print(args: tuple, cute: str) -> None:
    """c = get_flat_coord(i) has a negative entry: CuTe's slice masks it in its swizzle bits (to_mixed_bits) and
    passes the rest as C++ arithmetic; the refusal said "CuTe's slice there is unread"."""
    with pytest.raises(A.LayoutError, match="thread coordinate condition") as err:
        A.local_partition(P(args[0]), P(args[1]), args[2])
    assert str(err.value).endswith(f"= {cute}")


@pytest.mark.parametrize(("tiler", "crd", "cute"), [
    ((8, 8), (0, 9), "((2,4),8):((64,144),1) at offset 8"), ((8, 8), (0, -1), "((2,4),8):((64,144),1) at offset -8"),
    ((4, 8), (3, 1), "((2,2),8):((64,144),1) at offset 296"),  # answered ((2,2),8):((-64,144),1) @ 872 before
])
def test_tile_outside_the_grid_names_cutes_print(tiler: tuple, crd: tuple, cute: str) -> None:
    """A tile coordinate past the grid or below it: CuTe's tile is not the tensor's (slice condition). CuTe's
    to_mixed_bits masks each fixed entry to its mode's bits (``c * d & (s - 1) * d``); without the mask the tile
    at (3,1) of a (2,8) grid printed another layout."""
    with pytest.raises(A.LayoutError, match="slice condition") as err:
        A.local_tile(P("Sw<3,4,3> o 0 o (8,64):(64,1)"), tiler, crd)
    assert str(err.value).endswith(f"= {cute}")


def test_tile_below_the_grid_where_cute_is_right() -> None:
    r, off = A.local_tile(P("Sw<3,3,3> o 0 o (16,64):(64,1)"), (8, 8), (-1, 2))
    assert (str(r), off) == ("((2,2,2),8):((72,112,288),1)", -496)  # CuTe's print


@pytest.mark.parametrize(("a", "b"), [("(8,8):(F1,F9)", "4:-1"), ("(8,8):(F1,F9)", "(2,4):(8,-1)"),
                                      ("64:-1", "(8,8):(F1,F9)"), ("(8,8):(-1,F9)", "4:1")])
def test_negative_int_strides_beside_f2_strides_name_the_sign_condition(a: str, b: str) -> None:
    with pytest.raises(A.LayoutError, match="F2 sign condition"):
        A.composition(P(a), P(b))


def test_negative_int_strides_off_the_f2_bits_still_compose() -> None:
    assert str(A.composition(P("(8,8):(1,F8)"), P("4:-1"))) == "4:-1"


@pytest.mark.parametrize(("a", "sw", "want"), [
    ("(8,8):(F1,F9)", (3, 0, 3), "(8,8):(F1,F8)"),  # Sw<3,0,3> o Sw<3,0,3> is the identity
    ("(8,8):(F8,F1)", (1, 0, 3), "(8,(2,4)):(F8,(F9,F2))"),
    ("(8,8):(F1,F9)", (2, 3, 3), "(8,8):(F1,F9)"),  # the swizzle's bits past size(A): no constraint
])
def test_f2_layout_after_a_swizzle_is_an_f2_layout(a: str, sw: tuple, want: str) -> None:
    """Refused before ("the layout's values at the swizzle masks are not integers")."""
    x, s = P(a), A.Swizzle(*sw)
    r = A.composition(x, s)
    assert str(r) == want and fb.check_composition(x, s, r) is None


def test_inverses_of_swizzled_f2_layouts_are_exact() -> None:
    rng = random.Random(10390)
    for _ in range(300):
        f = fb.random_f2(rng)
        if not fb.f2_linear(f) or not fb._has_f2(f.stride):
            continue
        x = A.ComposedLayout(A.Swizzle(rng.randint(1, 3), rng.randint(0, 4), rng.choice((3, 4, -3, -4))), 0, f)
        if abs(x.layout_a.shift) < x.layout_a.bits:
            continue
        assert fb.check_right_inverse(x, A.right_inverse(x)) is None, x
        assert fb.check_left_inverse(x, A.left_inverse(x)) is None, x


@pytest.mark.parametrize(("x", "crd", "want"), [
    ("Sw<2,3,3> o 8 o (8,8):(F1,F9)", (None, 3), "Sw<2,3,3> o 0 o (8):(F1)"),
    ("Sw<2,3,3> o 64 o (8,8):(F1,F9)", (3, None), "Sw<2,3,3> o 0 o (8):(F9)"),
    ("Sw<2,3,3> o 1 o (8,8):(F1,F9)", (None, 3), "F2 slice condition"),  # 1 + (j ^ 27) carries at j = 1
])
def test_slice_of_a_swizzled_f2_layout(x: str, crd: tuple, want: str) -> None:
    """``Sw o O o (F2 layout)`` at a coordinate with ``_``: ``Sw o 0 o slice`` with ``A(c_0)`` XORed (a TypeError
    or "the offset must be an integer" before)."""
    lay = P(x)
    if "condition" in want:
        with pytest.raises(A.LayoutError, match=want):
            lay(crd)
        return
    r, off = A.local_tile(lay, (8, 1), (0, 3)) if crd == (None, 3) else (lay(crd), None)
    assert str(lay(crd)) == want
    if off is not None:  # R(j) ^ A(c_0) == A(c_j): the offset is a bit vector
        assert all(int(r(j) + off) == lay((j, 3)) for j in range(8))


@pytest.mark.parametrize(("x", "crd", "want"), [
    ("Sw<3,4,3> o 0 o (8,64):(64,1)", (None, 9), "((2,4)):((64,144))"),  # decayed, as CuTe
    ("Sw<3,2,3> o 8 o (8,32):(32,1)", (None, 9), "slice condition"),  # CuTe prints (8):(36), not the function
    ("(16,4):(4,1) o -8 o Sw<1,2,4> o 0 o (8,2):(1,8)", (None, 1), "(16,4):(4,1) o 0 o (8):(1)"),
    ("Sw<1,1,1> o 40 o (4,4):(F9,F1)", (None, None), "Sw<1,1,1> o 40 o (4,4):(F9,F1)"),  # all _: the layout itself
    ("(16,16):(1,16) o 0 o (4,4):(F1,F3)", (None, 1), "F2 offset condition"),  # 0 + (F3 ^ j): not an int sum
])
def test_a_composed_layout_called_with_underscore_is_cutes_slice(x: str, crd: tuple, want: str) -> None:
    """CuTe's ``layout(crd)`` with ``_`` is ``slice(crd, layout)``; ``ComposedLayout.__call__`` kept the swizzle
    and added the offset (``Sw<3,2,3> o 17 o (8):(32)`` for the second), which is not what CuTe prints. An F2 inner
    layout's offset was added to the int offset (the all-``_`` slice refused: "the offset must be an integer")."""
    lay = P(x)
    if "condition" in want:
        with pytest.raises(A.LayoutError, match=want):
            lay(crd)
        return
    assert str(lay(crd)) == want == str(evaluate(lay, crd))


def test_a_swizzled_layout_at_a_negative_coordinate_is_cutes_value() -> None:
    """``evaluate`` reads a plain layout at a negative coordinate with C++'s arithmetic; a swizzled one refused
    ("coordinate entries must be non-negative"). CuTe: -81 (Sw<3,4,5>(-33), the bits of a negative int)."""
    assert evaluate(P("Sw<3,4,5> o 0 o (16,1):(2,1)"), (-16, -1)) == -81


def test_a_tile_past_the_grid_cute_gets_right_has_cutes_offset() -> None:
    """The fixed entries' bits that feed the swizzle are masked to their modes (to_mixed_bits): the offset was 3708."""
    r, off = A.local_tile(P("Sw<5,4,-5> o 512 o (32,8,2):(1,64,32)"), (4, 4), (7, 2, 3))
    assert (str(r), off) == ("(4,4):(1,2112)", 1084)


@pytest.mark.parametrize(("x", "op", "tiler", "cute"), [
    ("Sw<1,0,-8> o 0 o 8:1", "logical_divide", ("(2,2):(1,2)",), "Sw<1,0,-8> o 0 o (((2,2),2)):(((1,2),4))"),
])
def test_the_f2_form_of_a_rank_1_layout_is_rank_1(x: str, op: str, tiler: tuple, cute: str) -> None:
    """``as_f2_layout`` keeps L's profile: a rank-1 L stays one mode (its bit modes nested), so a tiler by mode divides
    the whole layout as CuTe's divide of ``Sw o 0 o L`` does (it was ``(2,4):(F257,F2)``, rank 2: the tiler's mode
    0 divided the mode 2:F257 alone, and went past it: ``(((2,2),1),4):(((F257,F514),0),F2)``, 514 at i = 2)."""
    f = A.as_f2_layout(P(x))
    assert A.rank(f) == 1 and str(f) == "((2,4)):((F257,F2))"
    got, want = getattr(A, op)(f, tuple(map(P, tiler))), P(cute)
    assert A.rank(got) == A.rank(want.layout_b) and [int(got(i)) for i in range(A.size(want))] == [
        want(i) for i in range(A.size(want))]


def test_the_f2_form_of_nested_swizzles_keeps_both() -> None:
    """``as_f2_layout(Sw o 0 o Sw' o 0 o L)`` read L's strides through the outer swizzle only (``(8,16):(F1,F8)``,
    32 where the layout gives 1056); now through both, and its divide is CuTe's divide of the nested layout."""
    x = P("Sw<1,6,8> o 0 o Sw<2,5,-5> o 0 o (8,16):(1,8)")
    f = A.as_f2_layout(x)
    assert str(f) == "(8,(4,4)):(F1,(F8,F1056))" and [int(f(i)) for i in range(128)] == [x(i) for i in range(128)]
    cute = P("Sw<1,6,8> o 0 o Sw<2,5,-5> o 0 o ((((2,2),2),1),(2,8)):((((2,1),4),0),(8,16))")
    got = A.logical_divide(f, (P("((2,2),2):((2,1),4)"), 2))
    assert [int(got(i)) for i in range(128)] == [cute(i) for i in range(128)]
