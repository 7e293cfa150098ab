"""Worked examples from the seeds and CuTe's documentation, checked against the engine."""

import re

import pytest

import algebra as A
from algebra import LayoutError

P = A.parse


def test_contract_surface():
    L = A.Layout((4, (2, 4)), (2, (1, 8)))
    assert str(L) == "(4,(2,4)):(2,(1,8))"
    assert (L(5), L((1, 5)), L((1, (1, 2)))) == (3, 19, 19)
    assert [L(i) for i in range(8)] == [0, 2, 4, 6, 1, 3, 5, 7]
    assert (A.size(L), A.cosize(L), A.rank(L), A.depth(L)) == (32, 32, 2, 2)
    assert str(L[1]) == "(2,4):(1,8)"
    assert str(A.Layout((4, 8))) == "(4,8):(1,4)"
    assert A.parse(str(L)) == L
    assert A.idx2crd(7, (3, (2, 3))) == (1, (0, 1))
    assert A.crd2idx((1, (0, 1)), (3, (2, 3))) == 7


def test_crd2idx_refuses_a_stride_not_congruent_with_the_shape():
    """CuTe's crd2idx static_asserts "Mismatched Ranks" (hand probes, corpus_s115xx.json): these crashed, or
    repeated a tuple."""
    for crd, shape, stride in [((1, 2), (2, 3), (1,)), ((1, 2), (2, 3), 4), (5, 4, (1, 2)),
                               ((1, (1, 1)), (2, (2, 2)), (1, 2))]:
        with pytest.raises(A.LayoutError, match="not congruent"):
            A.crd2idx(crd, shape, stride)
    assert A.crd2idx(-3, (2, (3, 4)), (1, (2, 6))) == -3  # CuTe's print, C++'s divmod
    for idx, shape, stride in [(34, ((7, (7,)), 4), (1, (1, 3))), (2, 4, ((3, 2), (2, 1), 3)),
                               (256, (7, ((3, 1), 5)), ((2,), 2)), ((1, 2), (2, 3), 4)]:  # seed 11520: crashed
        with pytest.raises(A.LayoutError, match="not congruent"):
            A.idx2crd(idx, shape, stride)
    assert A.idx2crd(5, 1, (2, 3)) == 0 and A.idx2crd(5, (2, 3), 4) == (1, 0)  # CuTe's prints
    assert A.idx2crd((1, 5), (2, (3, 2)), (1, 4)) == (1, (1, 0))


def test_an_empty_tiler_as_cute():
    """Hand probes (corpus_s115xx.json): flat_divide / flat_product slice the empty tile mode away (CuTe's
    repeat<0>(_) is ()), tiled_divide keeps it; local_tile by an empty tiler does not compile in CuTe."""
    L = A.parse("(4,(2,3)):(1,(4,8))")
    assert str(A.flat_divide(L, ())) == str(A.flat_product(L, ())) == "(4,(2,3)):(1,(4,8))"
    assert str(A.tiled_divide(L, ())) == "((),4,(2,3)):((),1,(4,8))"
    assert str(A.zipped_divide(L, ())) == "((),(4,(2,3))):((),(1,(4,8)))"
    with pytest.raises(A.LayoutError, match="empty"):
        A.local_tile(L, (), (0,))


def test_a_layout_without_modes_as_cute():
    """make_layout(()) is ():() as CuTe prints it; the ops that read one of its modes refused in CuTe (get<R-1>, a
    fold over nothing) and crashed or answered here (hand probes, corpus_s115xx.json)."""
    E, L = A.make_layout(()), A.parse("(4,2):(1,4)")
    assert (str(E), A.size(E), A.cosize(E), str(A.nullspace(E)), str(A.filter_zeros(E))) == ("():()", 1, 1, "1:0",
                                                                                              "():()")
    assert str(A.blocked_product(L, E)) == "((4,1),(2,1)):((1,0),(4,0))"  # appended to rank 2 first
    assert str(A.tile_to_shape(E, (4, 2))) == "((1,4),(1,2)):((0,1),(0,4))"
    ev = A.registry.get("evaluate").fn
    for f in (lambda: A.coalesce(E), lambda: A.right_inverse(E), lambda: A.left_inverse(E), lambda: A.complement(E, 8),
              lambda: A.composition(E, L), lambda: A.composition(L, E), lambda: A.logical_divide(L, E),
              lambda: A.logical_product(E, L), lambda: A.upcast(E, 2), lambda: A.max_common_vector(L, E),
              lambda: A.complement(L, ()), lambda: A.crd2idx((), ()), lambda: A.idx2crd(3, ()),
              lambda: ev(A.Layout(((), 8), ((), 1)), ((), 3)), lambda: ev(A.Layout(((), 8), ((), 1)), 5)):
        with pytest.raises(A.LayoutError, match="no modes"):
            f()


def test_recast_layout_bit_widths_are_integers():
    with pytest.raises(A.LayoutError, match="old bits must be a positive integer .*got '8'"):  # a TypeError before
        A.recast_layout(A.parse("(4,2):(1,4)"), "8", 16)


def test_default_stride_is_compact_col_major_with_static_ones():
    assert str(A.Layout((1, 4))) == "(1,4):(0,1)"
    assert str(A.Layout(((2, 3), 4))) == "((2,3),4):((1,2),6)"


def test_one_d_coordinate_past_the_end_extends_last_mode():
    L = P("(4,2):(1,10)")
    assert L(9) == 1 + 2 * 10  # 9 -> (1, 2): the last mode is not wrapped


@pytest.mark.parametrize("text,expected", [
    ("(4,2):(1,4)", [0, 1, 2, 3, 4, 5, 6, 7]),  # seed 002 part 1 (column-major)
    ("(4,2):(2,1)", [0, 2, 4, 6, 1, 3, 5, 7]),  # part 2 (row-major)
    ("(2,(2,2)):(4,(2,1))", [0, 4, 2, 6, 1, 5, 3, 7]),  # part 3 (hierarchical)
])
def test_seed_offsets(text, expected):
    L = P(text)
    assert [L(i) for i in range(A.size(L))] == expected


def test_coalesce_examples():
    assert str(A.coalesce(P("(2,(1,6)):(1,(6,2))"))) == "12:1"
    assert str(A.coalesce(P("(4,8):(1,4)"))) == "32:1"
    assert str(A.coalesce(P("(4,8):(8,1)"))) == "(4,8):(8,1)"
    assert str(A.coalesce(P("(1,1):(3,5)"))) == "1:0"
    assert str(A.coalesce(P("(2,2):(0,0)"))) == "4:0"
    assert str(A.coalesce(P("(2,(1,6),4):(1,(6,2),12)"), (1, 1))) == "(2,6,4):(1,2,12)"


def test_composition_examples():
    assert str(A.composition(P("(6,2):(8,2)"), P("(4,3):(3,1)"))) == "((2,2),3):((24,2),8)"
    assert str(A.composition(P("(4,8):(8,1)"), P("(8,4):(4,1)"))) == "(8,4):(1,8)"  # transposed view
    assert str(A.composition(P("(4,8):(8,1)"), P("(2,8):(2,4)"))) == "(2,8):(16,1)"  # even rows
    # CuTe's weak divisibility accepts this one and prints (2,2):(32,2), which is not A o B: refused
    with pytest.raises(LayoutError, match=r"stride divisibility.*CuTe would print \(2,2\):\(32,2\)"):
        A.composition(P("(6,2):(8,2)"), P("4:4"))
    with pytest.raises(LayoutError, match="shape divisibility"):
        A.composition(P("(6,2):(8,2)"), P("4:2"))


def test_composition_post_condition_and_tilers():
    a, b = P("(6,2):(8,2)"), P("(4,3):(3,1)")
    r = A.composition(a, b)
    assert all(r(i) == a(b(i)) for i in range(A.size(b)))
    # a tiler applies mode by mode and drops the modes it does not name
    t = A.composition(P("(8,8):(1,8)"), (P("4:2"),))
    assert str(t) == "(4):(2)"
    assert str(A.composition(P("(8,8):(1,8)"), (P("4:2"), P("2:4")))) == "(4,2):(2,32)"
    assert str(A.composition(P("(4,1):(1,0)"), P("8:1"))) == "(4,2):(1,0)"  # past size(A), CuTe keeps the 0


def test_complement_examples():
    assert str(A.complement(P("4:2"), 24)) == "(2,3):(1,8)"
    assert str(A.complement(P("(2,2):(1,6)"), 24)) == "(3,2):(2,12)"
    assert str(A.complement(P("4:1"), 24)) == "6:4"
    assert str(A.complement(P("4:0"), 8)) == "8:1"
    with pytest.raises(LayoutError, match="Non-injective"):
        A.complement(P("(2,2):(1,1)"), 8)


def test_divides_and_products_examples():
    assert str(A.logical_divide(P("24:1"), P("4:2"))) == "(4,(2,3)):(2,(1,8))"
    z = A.zipped_divide(P("(9,(4,8)):(59,(13,1))"), (P("3:3"), P("(2,4):(1,8)")))
    assert str(z) == "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))"
    assert str(A.logical_product(P("(2,2):(4,1)"), P("6:1"))) == "((2,2),(2,3)):((4,1),(2,8))"
    assert str(A.blocked_product(P("(2,5):(5,1)"), P("(3,4):(1,3)"))) == "((2,3),(5,4)):((5,10),(1,30))"
    assert str(A.raked_product(P("(2,5):(5,1)"), P("(3,4):(1,3)"))) == "((3,2),(4,5)):((10,5),(30,1))"
    td = A.tiled_divide(P("(8,8):(1,8)"), (2, 4))
    assert str(td) == "((2,4),4,2):((1,8),2,32)"
    fd = A.flat_divide(P("(8,8):(1,8)"), (2, 4))
    assert str(fd) == "(2,4,4,2):(1,8,2,32)"


def test_inverses():
    L = P("(4,8):(8,1)")
    ri, li = A.right_inverse(L), A.left_inverse(L)
    assert all(L(ri(i)) == i for i in range(A.size(ri)))
    assert all(li(L(i)) == i for i in range(A.size(L)))
    assert str(A.right_inverse(P("(2,2):(2,1)"))) == "(2,2):(2,1)"
    assert str(A.right_inverse(P("4:2"))) == "1:0"


def test_tiled_copy_tv_layout_from_seed():
    thr, val = P("(16,8):(8,1)"), P("(1,8):(0,1)")
    mn = A.raked_product(thr, val)
    tv = A.right_inverse(mn).with_shape((A.size(thr), A.size(val)))
    assert str(tv) == "((8,16),8):((128,1),16)"


def test_swizzle_and_composed():
    sw = A.Swizzle(3, 4, 3)
    assert sw(0b1000_0000) == 0b1001_0000
    C = A.parse("Sw<3,4,3> o 0 o (8,64):(64,1)")
    assert isinstance(C, A.ComposedLayout) and A.parse(str(C)) == C
    assert C((1, 0)) == sw(64)
    assert A.parse("Sw<3,4,3> o (8,64):(64,1)") == C
    assert str(A.composition(sw, P("(8,64):(64,1)"))) == "Sw<3,4,3> o 0 o (8,64):(64,1)"
    # the swizzle permutes the offsets of a full tile
    assert sorted(C(i) for i in range(512)) == list(range(512))
    with pytest.raises(LayoutError):
        A.Swizzle(3, 4, 2)


def test_max_common_vector_and_tile_to_shape():
    assert A.max_common_vector(P("(4,8):(1,4)"), P("(4,8):(1,4)")) == 32
    assert A.max_common_vector(P("(4,8):(8,1)"), P("(4,8):(1,4)")) == 1
    assert str(A.tile_to_shape(P("(2,2):(1,2)"), (4, 6))) == "((2,2),(2,3)):((1,4),(2,8))"


def test_local_tile_and_partition():
    sub, off = A.local_tile(P("(8,8):(1,8)"), (4, 4), (1, 1))
    assert str(sub) == "(4,4):(1,8)" and off == 4 + 32
    part, off = A.local_partition(P("(16,8):(1,16)"), P("(16,2):(1,16)"), 17)
    assert off == 1 + 16 and A.size(part) == 4


@pytest.mark.parametrize("bad", [
    "(4,8", "(4,8):(1)", "(0,4):(1,4)", "(-2,4):(1,4)", "(4.5,2)", "abc", "", "((((", ")", "(4,8):(1,4) extra",
    "(" * 200 + "1" + ")" * 200, "Sw<1,2>", "<2:1, 4:2",
])
def test_bad_notation_raises_layout_error(bad):
    with pytest.raises(LayoutError):
        A.parse(bad)


def test_bad_constructors():
    for shape, stride in [((4, 8), (1,)), ((4, 0), (1, 4)), ((4, "x"), (1, 4)), (True, 1), (4, 1.5)]:
        with pytest.raises(LayoutError):
            A.Layout(shape, stride)
    with pytest.raises(LayoutError):
        A.Layout(1 << 70)


def test_symbolic_ops_on_real_sizes_are_fast():
    big = P("(8192,8192):(8192,1)")
    z = A.zipped_divide(big, (P("128:1"), P("64:1")))
    assert str(z) == "((128,64),(64,128)):((8192,1),(1048576,64))"


def test_tiler_notation_round_trip():
    t = A.parse("<2:1, 4:2>")
    assert t == (P("2:1"), P("4:2"))
    assert A.to_str(t) == "<2:1, 4:2>"
    assert A.parse(A.to_str((P("2:1"), None, 4))) == (P("2:1"), None, 4)


def test_local_tile_and_partition_as_cute_tensors() -> None:
    """CuTe's answers on a tensor at address 0 (tests/oracle/data/corpus_e*.json): the tile's layout and its offset."""
    L = A.parse("(16,32):(1,16)")
    assert [str(x) for x in A.local_tile(L, (4, 8), (1, 2))] == ["(4,8):(1,16)", "260"]
    assert [str(x) for x in A.local_tile(L, (4,), (1, 2))] == ["((4)):((1))", "36"]
    assert [str(x) for x in A.local_partition(L, A.parse("(2,4):(4,1)"), 5)] == ["(8,8):(2,64)", "17"]
    with pytest.raises(A.LayoutError, match="rank of the tile grid"):
        A.local_tile(A.parse("1:1"), A.parse("1:1"), (0,))  # a tuple coordinate into an int grid: CuTe refuses


def test_idx2crd_past_the_end_extends_the_last_mode_as_cute() -> None:
    """CuTe's idx2crd(i, shape) (tests/oracle/data/corpus_e*.json): no wrap in the last mode, an int shape keeps i."""
    assert A.idx2crd(7, (3, (2, 3))) == (1, (0, 1))
    assert A.idx2crd(25, (3, (2, 3))) == (1, (0, 4))
    assert A.idx2crd(100, (3, (2, 3))) == (1, (1, 16))
    assert A.idx2crd(5, (1, (1, 3))) == (0, (0, 5))
    assert A.idx2crd(5, ((4,),)) == ((5,),)
    assert A.idx2crd(5, 1) == 5
    assert A.idx2crd((1, 5), (3, (2, 3))) == (1, (1, 2))
    assert all(A.crd2idx(A.idx2crd(i, (3, (2, 3))), (3, (2, 3))) == i for i in range(200))


@pytest.mark.parametrize(("idx", "shown"), [(None, "_"), ((1, None), "(1,_)"), ((1, (None, 1)), "(1,(_,1))")])
@pytest.mark.parametrize("stride", [None, (1, (3, 6))])
def test_idx2crd_refuses_an_index_with_a_slice_marker(idx, shown, stride) -> None:
    """``_`` (None) selects a whole mode in a slice; it is no index. (1,(_,1)) came back as (1,(None,1)), the others
    as a bare TypeError."""
    with pytest.raises(LayoutError) as e:
        A.inttuple.idx2crd(idx, (3, (2, 3)), stride)
    assert str(e.value) == ("idx2crd: the index must be an integer or a tuple of integers congruent with the shape "
                            f"(3,(2,3)), got {shown}")


def test_make_ordered_layout_as_cute_compact_order() -> None:
    """CuTe's answers (tests/oracle/data/corpus_e*.json): equal orders start at the same stride, and an order entry
    may stand for a whole mode (column-major inside it)."""
    assert str(A.make_ordered_layout((2, 3), (0, 0))) == "(2,3):(1,1)"
    assert str(A.make_ordered_layout((4, (2, 3)), (1, (0, 0)))) == "(4,(2,3)):(6,(1,1))"
    assert str(A.make_ordered_layout(((2, 3), 4), (1, 0))) == "((2,3),4):((4,8),1)"
    assert str(A.make_ordered_layout((2, 3, 4), (5, 1, 3))) == "(2,3,4):(12,1,3)"
    assert str(A.tile_to_shape(A.parse("(2,2):(1,2)"), (4, 6), (1, 1))) == "((2,2),(2,3)):((1,4),(2,4))"
    with pytest.raises(LayoutError, match="does not match"):
        A.make_ordered_layout((2, 3), (0, (1, 2)))


def test_downcast_needs_a_plus_one_stride_as_cute() -> None:
    """CuTe's has_int1: a -1 stride alone is not "adjacent elements" (corpus_neg1.json)."""
    with pytest.raises(LayoutError, match="stride-1"):
        A.downcast(A.parse("(1,3):(-1,12)"), 4)
    assert str(A.downcast(A.parse("(2,3):(1,-2)"), 2)) == "(4,3):(1,-4)"


def test_negative_coordinates_divide_as_cpp() -> None:
    """CuTe's divmod is C++'s (truncated): -3 over (2,4) is (-1,-1), not (1,-2) (corpus_s90xx.json)."""
    ev = A.registry.get("evaluate").fn
    assert A.idx2crd(-3, (2, 4)) == (-1, -1) and A.idx2crd(-7, ((2, 3), 4)) == ((-1, 0), -1)
    assert ev(A.parse("(2,4):(1,5)"), -3) == -6 and ev(A.parse("(3,(2,4)):(1,(10,3))"), (1, -3)) == -12


@pytest.mark.parametrize(("thr", "idx", "cute"), [("(2,4):(1,3)", 4, "(4,2):(2,32) at offset 8"),
                                                  ("(2,4):(-1,2)", 3, "(4,2):(2,32) at offset 7"),
                                                  ("(2,4):(4,1)", 9, "(4,2):(2,32) at offset 8")])
def test_local_partition_refuses_cute_s_coordinate_of_another_thread(thr, idx, cute) -> None:
    """CuTe's get_flat_coord(i) is each leaf's (i / stride) % shape: for a gapped or negative stride, or an index that
    is no thread's, it is not a coordinate c with T(c) == i (corpus_s90xx.json); a stride-0 mode divides by 0."""
    with pytest.raises(LayoutError, match=f"thread coordinate condition: .*CuTe would print .* = {re.escape(cute)}$"):
        A.local_partition(A.parse("(8,8):(1,8)"), A.parse(thr), idx)
    with pytest.raises(LayoutError, match="stride 0"):
        A.local_partition(A.parse("(8,8):(1,8)"), A.parse("(2,4):(0,1)"), 3)
    assert [str(x) for x in A.local_partition(A.parse("(8,8):(1,8)"), A.parse("(2,4):(1,3)"), 7)] == ["(4,2):(2,32)",
                                                                                                          "17"]


def test_rank_mismatches_of_a_projection_or_an_order_name_the_ranks() -> None:
    """CuTe refuses both with a tuple_size error (mismatched ranks); the refusal says so (corpus_s90xx.json)."""
    with pytest.raises(LayoutError, match="mismatched ranks"):
        A.local_tile(A.parse("((4),32):((1),0)"), (None, 4, 8), 2, (1, 1, None))
    with pytest.raises(LayoutError, match="mismatched ranks"):
        A.tile_to_shape(A.parse("(2,(1,3)):(3,(0,1))"), (4, 6), ((1, 0), 1))


@pytest.mark.parametrize(("a", "b", "vec", "lay"), [("(8,3):(64,3)", "(1,(6,6)):(36,(6,1))", 1, "1:0"),
                                                    ("(8,2,3):(1,8,2)", "(6,2,2):(1,36,6)", 6, "6:1"),
                                                    ("(4,5,5):(1,4,60)", "(4,3,8):(1,0,4)", 4, "4:1")])
def test_max_common_answers_cute_where_a_o_right_inverse_b_is_not_a_layout(a, b, vec, lay) -> None:
    """A o right_inverse(B) is refused (not A o B past its first mode), but CuTe's run, the coalesced first mode of
    its print, is the function: A(R(i)) == i up to it and not at it (corpus_s101xx.json, CuTe C++'s answers)."""
    a, b = A.parse(a), A.parse(b)
    with pytest.raises(LayoutError, match="is not a layout"):
        A.composition(a, A.right_inverse(b))
    assert A.max_common_vector(a, b) == vec and str(A.max_common_layout(a, b)) == lay


def test_local_tile_answers_cute_s_tile_where_it_is_right() -> None:
    """zipped_divide(((3,4)):((4,1)), 2) is not a layout (its rest mode steps through the 3 by 2), but tile 0 is A's
    first two elements: CuTe's ((2)):((4)) at offset 0 is answered; tile 1 (A(2), A(3) = 8, 1) is refused with
    CuTe's print (corpus_s101xx.json)."""
    lay = A.parse("((3,4)):((4,1))")
    with pytest.raises(LayoutError, match="is not a layout"):
        A.zipped_divide(lay, (2,))
    assert [str(x) for x in A.local_tile(lay, (2,), (0,))] == ["((2)):((4))", "0"]
    assert [str(x) for x in A.local_tile(A.parse("((9,2),4):((4,64),16)"), (6,), (0, 0))] == ["((6)):((4))", "0"]
    with pytest.raises(LayoutError, match=re.escape("CuTe would print local_tile(((3,4)):((4,1)), (2), (1)) = "
                                                    "((2)):((4)) at offset 8")):
        A.local_tile(lay, (2,), (1,))


@pytest.mark.parametrize(("a", "tiler", "crd", "cute"), [
    ("(8,12):(1,8)", ("4:-1",), (0, 0), "((4)):((-1)) @ 0"),
    ("(3,4):(4,1)", (1, "2:-1"), (0, 0), "(1,2):(0,-1) @ 0"),
    ("10:1", ("((8),1):((-1),2)",), (0,), "((((8),1))):((((-1),2))) @ 0"),
    ("(8,(4,2)):(1,(8,32))", ("2:-16", "4:0"), (3, 0), "(2,4):(-16,0) @ 3"),
    ("(2,(1,(3))):(0,(0,(1)))", ("(2):(-1)", 3), (0, 0), "((2),3):((0),1) @ 0"),
    ("(4,2,(1,(2,4))):(2,8,(2,(1,-16)))", ("8:-1", 2), (0, 0, 4), "(8,2):(-2,8) @ -32")])
def test_local_tile_answers_cute_s_tile_of_a_negative_stride_tiler_where_it_is_right(a, tiler, crd, cute) -> None:
    """zipped_divide by a negative-stride tiler is not a layout (its rest shape is -1), but CuTe's tile is A at each
    point of the tile's coordinates inside A's domain, mode by mode (the last: a point (1,1) of the tile reads mode 0
    at -1, off A, though its 1-D offset 1 is in A): answered (corpus_s101xx.json, CuTe C++'s prints)."""
    tl = tuple(A.parse(x) if isinstance(x, str) else x for x in tiler)
    with pytest.raises(LayoutError, match="positive shape condition"):
        A.zipped_divide(A.parse(a), tl)
    r, off = A.local_tile(A.parse(a), tl, crd)
    assert f"{r} @ {off}" == cute


def test_local_tile_refuses_cute_s_tile_of_a_negative_stride_tiler_off_the_function() -> None:
    """Tile 1 of (4,3):(3,1) by 4:-1 starts past mode 0 (size 4): CuTe prints ((4)):((-3)) at offset 12, but the tile's
    first point is A's offset 4, A(0,1) = 1: refused with the condition and CuTe's print."""
    with pytest.raises(LayoutError, match=re.escape("positive shape condition") + ".*" + re.escape(
            "CuTe would print local_tile((4,3):(3,1), <4:-1>, (1,0)) = ((4)):((-3)) at offset 12")):
        A.local_tile(A.parse("(4,3):(3,1)"), (A.parse("4:-1"),), (1, 0))


def test_contract_ops_take_their_documented_keyword_arguments():
    """CONTRACT §1 names the arguments (``A.complement(L, cotarget)``, ``A.coalesce(L, profile)``): by keyword they
    give what they give by position, through the cache and the never-wrong layer alike."""
    L = A.Layout((4, (2, 4)), (2, (1, 8)))
    assert A.complement(L, cotarget=64) == A.complement(L, 64) == A.parse("2:32")
    assert A.coalesce(L, profile=(1, 1)) == A.coalesce(L, (1, 1))
    assert A.logical_divide(L, tiler=A.Layout(2)) == A.logical_divide(L, A.Layout(2))
    assert A.local_partition(L, tile=A.Layout(2), index=1) == A.local_partition(L, A.Layout(2), 1)
    with pytest.raises(TypeError, match="cotargt"):
        A.complement(L, cotargt=64)
    with pytest.raises(LayoutError):
        A.complement(A.Layout((2, 2), (1, 1)), cotarget=8)


def test_a_layouts_text_is_refused_where_a_layout_or_int_tuple_is_expected():
    """size / rank / depth / shape read IntTuples too, so text was read as a leaf (size("4:2") was "4:2"); cosize
    raised AttributeError and coalesce took a text profile for none."""
    for fn in (A.size, A.rank, A.depth, A.shape, A.cosize):
        with pytest.raises(A.LayoutError, match="expected a layout"):
            fn("4:2")
    with pytest.raises(A.LayoutError, match="expected a layout"):
        A.cosize((2, 3))
    with pytest.raises(A.LayoutError, match="the text '\\(1,1\\)'"):
        A.coalesce(A.parse("(2,(2,2)):(1,(2,4))"), "(1,1)")
    assert (A.size((2, (3, 4))), A.rank((2, (3, 4))), A.depth((2, (3, 4)))) == (24, 2, 2)
    assert str(A.coalesce(A.parse("(2,(2,2)):(1,(2,4))"), (1, 1))) == "(2,4):(1,2)"


def test_digits_are_ascii_digits():
    """A full-width 8 is not the integer 8 in CuTe's notation: the character is named."""
    with pytest.raises(A.LayoutError, match="unexpected character '８'"):
        A.parse("(８,4):(1,8)")
    assert str(A.parse("(8,\t4) : (1, 8)")) == "(8,4):(1,8)"
