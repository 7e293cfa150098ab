"""Access patterns from layouts, and the padding / swizzle fix finders (seeds 000, 002, 004)."""

import pytest

from algebra import LayoutError
from algebra.banks import bank_access, padding_fix
from algebra.core.layout import Layout

ROW_MAJOR_32 = Layout((32, 32), (32, 1))


def test_float_column_of_row_major_32x32_is_32_way():
    r = bank_access(ROW_MAJOR_32, 4, {"kind": "column", "index": 5})
    assert r.element_offsets == [32 * i + 5 for i in range(32)]
    assert r.byte_addresses == [4 * (32 * i + 5) for i in range(32)]
    assert r.banks == [5] * 32
    assert (r.ways, r.wavefronts) == (32, 32)
    assert r.coordinates[:2] == [(0, 5), (1, 5)]


def test_padding_33_is_conflict_free():
    r = bank_access(Layout((32, 32), (33, 1)), 4, {"kind": "column", "index": 5})
    assert r.banks[:4] == [5, 6, 7, 8]
    assert r.banks == [(i + 5) % 32 for i in range(32)]
    assert r.ways == 1


def test_row_read_of_row_major_is_conflict_free():
    r = bank_access(ROW_MAJOR_32, 4, {"kind": "row", "index": 7})
    assert r.banks == list(range(32))
    assert r.ways == 1


def test_fp16_8x64_column_is_8_way():
    r = bank_access(Layout((8, 64), (64, 1)), 2, {"kind": "column", "index": 3})
    assert r.byte_addresses == [128 * i + 6 for i in range(8)]
    assert r.banks == [1] * 8
    assert (r.ways, r.wavefronts) == (8, 8)


def test_string_layouts_are_accepted():
    pytest.importorskip("algebra.core.notation")
    r = bank_access("(8,64):(64,1)", 2, {"kind": "column", "index": 0})
    assert r.ways == 8


def test_ldmatrix_x4_on_128_byte_rows_is_32_wavefronts():
    r = bank_access(Layout((16, 64), (64, 1)), 2, {"kind": "ldmatrix", "num": 4})
    assert r.phases == [8, 8, 8, 8]
    assert r.wavefronts == 32
    # matrix 0: rows 0..7 at column 0; matrix 1: rows 8..15; matrix 2: rows 0..7 at column 8
    assert r.coordinates[0] == (0, 0) and r.coordinates[8] == (8, 0) and r.coordinates[16] == (0, 8)
    assert r.byte_addresses[16] == 16


def test_ldmatrix_x1_and_x2():
    lay = Layout((16, 64), (64, 1))
    assert bank_access(lay, 2, {"kind": "ldmatrix", "num": 1}).wavefronts == 8
    assert bank_access(lay, 2, {"kind": "ldmatrix", "num": 2}).wavefronts == 16
    # 16-byte rows packed back to back: conflict-free
    assert bank_access(Layout((16, 8), (8, 1)), 2, {"kind": "ldmatrix", "num": 2}).phases == [1, 1]


def test_vector_row_reads():
    lay = Layout((8, 64), (64, 1))
    r = bank_access(lay, 2, {"kind": "row", "index": 2, "vector": 8})
    assert r.access_bytes == 16 and len(r.byte_addresses) == 8 and r.wavefronts == 1
    r = bank_access(Layout((4, 256), (256, 1)), 2, {"kind": "row", "index": 0, "vector": 8})
    assert r.phases == [1, 1, 1, 1]


def test_explicit_offsets_and_coordinates():
    r = bank_access(ROW_MAJOR_32, 4, {"kind": "offsets", "offsets": [32 * t + 5 for t in range(32)]})
    assert r.ways == 32
    r = bank_access(ROW_MAJOR_32, 4, {"kind": "offsets", "offsets": [[t, 5] for t in range(32)]})
    assert r.ways == 32
    # coordinates are 1-D coordinates of the layout (column-major order): t + 32*5 is (t, 5)
    r = bank_access(ROW_MAJOR_32, 4, {"kind": "coords", "coords": [t + 32 * 5 for t in range(32)]})
    assert r.ways == 32


def test_thread_layout_and_tv():
    tile = Layout((16, 8))  # column-major 16x8 floats, 512 bytes
    r = bank_access(tile, 4, {"kind": "thread_layout", "layout": Layout(32, 1)})
    assert r.ways == 1 and r.element_offsets == list(range(32))
    tv = Layout(((8, 4), (2, 2)), ((2, 32), (1, 16)))  # one 2x2 block per thread
    r = bank_access(tile, 4, {"kind": "tv", "layout": tv, "values": [0, 1]})
    # a half warp spans rows 0..15 of columns 0..3: 2 lines of 64 bytes over banks 0..15 -> 2 ways
    assert r.access_bytes == 8 and r.phases == [2, 2]
    r = bank_access(tile, 4, {"kind": "tv", "layout": tv, "values": [0]})
    assert r.element_offsets[:3] == [0, 2, 4] and r.ways == 4  # four 128-byte lines, even banks only


def test_non_contiguous_vector_is_refused():
    with pytest.raises(LayoutError, match="not contiguous"):
        bank_access(Layout((8, 64), (1, 8)), 2, {"kind": "row", "index": 0, "vector": 2})


@pytest.mark.parametrize(
    "access",
    [{"kind": "diagonal"}, {"kind": "column", "index": 40}, {"kind": "row", "index": -1},
     {"kind": "ldmatrix", "num": 4, "row": 10}],
)
def test_bad_access_is_refused(access):
    with pytest.raises(LayoutError):
        bank_access(Layout((16, 32), (32, 1)), 2, access)


def test_padding_fix_float_column():
    fix = padding_fix(ROW_MAJOR_32, 4, {"kind": "column", "index": 5})
    assert fix.padding == 1 and str(fix.layout) == "(32,32):(33,1)"
    assert fix.analysis.ways == 1


def test_padding_fix_fp16_column_and_ldmatrix():
    assert padding_fix(Layout((8, 64), (64, 1)), 2, {"kind": "column", "index": 0}).padding == 2
    fix = padding_fix(Layout((16, 64), (64, 1)), 2, {"kind": "ldmatrix", "num": 4})
    assert fix.padding == 8  # 16 bytes: the 144-byte row stride
    assert fix.analysis.wavefronts == 4


def test_padding_fix_none_when_impossible():
    # every lane reads a different word of bank 0 however the rows are padded? No: a broadcast-free
    # column of 64 rows is two warps' worth; here a stride-0 mode makes all lanes hit one word: already free.
    assert padding_fix(Layout((32, 32), (0, 1)), 4, {"kind": "column", "index": 0}).padding == 0
    with pytest.raises(LayoutError, match="rank-2"):
        padding_fix(Layout(32, 1), 4, {"kind": "column", "index": 0})


def _ways_or_error(fn):
    try:
        return fn()
    except LayoutError as err:
        return str(err)


@pytest.mark.parametrize("layout,eb,access", [
    ("(32,128):(128,1)", 4, {"kind": "column", "index": 5}),
    ("(32,64):(64,1)", 2, {"kind": "row", "index": 3, "vector": 4}),
    ("(16,64):(64,1)", 2, {"kind": "ldmatrix", "num": 2}),
    ("(32,32):(32,1)", 8, {"kind": "row", "index": 0, "vector": 2}),
    ("Sw<2,1,3> o 0 o (32,32):(32,1)", 4, {"kind": "column", "index": 1}),
])
def test_lane_ways_is_the_bank_maps_ways_under_every_kind_of_swizzle(layout, eb, access):
    """The searches' fast test (``lane_ways``; Sw<B,M,S> applied as int arithmetic) answers as the whole bank map
    does, the same LayoutError when a swizzle splits a vector; cached lane offsets are not changed by a map's
    caller."""
    from algebra.banks import lane_bank_map, lane_offsets, lane_ways
    from algebra.core.swizzle import Swizzle

    lanes = lane_offsets(layout, eb, access)
    for sw in (None, Swizzle(3, 0, 5), Swizzle(2, 4, -3), Swizzle(1, 1, 1), lambda o: o ^ 1, Swizzle(3, 3, 3)):
        plain = (lambda o, s=sw: s(o)) if sw is not None else None  # the same swizzle, as a plain callable
        full = _ways_or_error(lambda s=sw: lane_bank_map(lanes, eb, s).ways)
        assert _ways_or_error(lambda s=sw: lane_ways(lanes, eb, s)) == full
        assert _ways_or_error(lambda p=plain: lane_bank_map(lanes, eb, p).to_dict()) == _ways_or_error(
            lambda s=sw: lane_bank_map(lanes, eb, s).to_dict())
    r = bank_access(layout, eb, access)
    want = r.to_dict()
    r.coordinates.append("changed")
    r.element_offsets.append(-1)
    assert bank_access(layout, eb, access).to_dict() == want
