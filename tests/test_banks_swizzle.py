"""Swizzled accesses and the swizzle fix finder (seeds 000, 002, 004), with property tests."""

from hypothesis import given, settings
from hypothesis import strategies as st

from algebra.banks import bank_access, swizzle_fixes
from algebra.core.layout import Layout
from algebra.core.notation import parse
from algebra.core.swizzle import Swizzle


def test_sw_5_0_5_fixes_the_float_column():
    r = bank_access("(32,32):(32,1)", 4, {"kind": "column", "index": 5}, swizzle="Sw<5,0,5>")
    assert r.banks[:4] == [5, 4, 7, 6]  # row r lands in bank 5 ^ r
    assert sorted(r.banks) == list(range(32))
    assert (r.ways, r.wavefronts) == (1, 1)


def test_sw_5_0_7_fixes_row_stride_128_words():
    plain = bank_access("(32,128):(128,1)", 4, {"kind": "column", "index": 5})
    assert plain.ways == 32
    r = bank_access("(32,128):(128,1)", 4, {"kind": "column", "index": 5}, swizzle="Sw<5,0,7>")
    assert r.banks[:4] == [5, 4, 7, 6]
    assert r.ways == 1
    # the 32-word swizzle only sees the low 3 row bits (shifted up by 2) of a 128-word stride: 8 banks, 4 ways
    assert bank_access("(32,128):(128,1)", 4, {"kind": "column", "index": 5}, swizzle="Sw<5,0,5>").ways == 4


def test_fp16_8x64_column_with_128b_swizzle():
    for col in range(64):
        plain = bank_access("(8,64):(64,1)", 2, {"kind": "column", "index": col})
        assert (plain.ways, plain.wavefronts) == (8, 8)
        fixed = bank_access("(8,64):(64,1)", 2, {"kind": "column", "index": col}, swizzle="Sw<3,3,3>")
        assert (fixed.ways, fixed.wavefronts) == (1, 1)


def test_swizzle_inside_a_composed_layout_matches_a_separate_swizzle():
    a = bank_access("Sw<3,3,3> o (8,64):(64,1)", 2, {"kind": "column", "index": 9})
    b = bank_access("(8,64):(64,1)", 2, {"kind": "column", "index": 9}, swizzle=(3, 3, 3))
    assert a.byte_addresses == b.byte_addresses and a.ways == 1
    # explicit offsets go through the composed layout's swizzle too
    c = bank_access("Sw<3,3,3> o (8,64):(64,1)", 2, {"kind": "offsets", "offsets": [64 * r + 9 for r in range(8)]})
    assert c.byte_addresses == a.byte_addresses


def test_byte_swizzle_equals_element_swizzle_on_fp16():
    # Sw<3,4,3> on byte addresses is Sw<3,3,3> on fp16 element offsets
    sw_bytes, sw_elems = Swizzle(3, 4, 3), Swizzle(3, 3, 3)
    assert all(sw_bytes(2 * x) == 2 * sw_elems(x) for x in range(4096))


def test_ldmatrix_x4_swizzled_is_4_wavefronts():
    lay = Layout((16, 64), (64, 1))
    plain = bank_access(lay, 2, {"kind": "ldmatrix", "num": 4})
    assert plain.wavefronts == 32
    r = bank_access(lay, 2, {"kind": "ldmatrix", "num": 4}, swizzle=Swizzle(3, 3, 3))
    assert r.phases == [1, 1, 1, 1] and r.wavefronts == 4
    for k in range(0, 64, 16):  # every 16-column k-block of the tile
        assert bank_access(lay, 2, {"kind": "ldmatrix", "num": 4, "col": k}, swizzle="Sw<3,3,3>").wavefronts == 4


def test_swizzle_fixes_float_column():
    fixes = swizzle_fixes("(32,32):(32,1)", 4, {"kind": "column", "index": 5})
    assert [f.swizzle for f in fixes] == [(5, 0, 5)]
    assert all(f.analysis.ways == 1 for f in fixes)


def test_swizzle_fixes_fp16_column_include_the_128b_swizzle():
    fixes = swizzle_fixes("(8,64):(64,1)", 2, {"kind": "column", "index": 0})
    assert (3, 3, 3) in [f.swizzle for f in fixes]
    for f in fixes:  # each is re-checked by the model
        r = bank_access("(8,64):(64,1)", 2, {"kind": "column", "index": 0}, swizzle=f.swizzle)
        assert r.ways == 1


def test_swizzle_fixes_for_ldmatrix_keep_16_byte_rows():
    fixes = swizzle_fixes("(16,64):(64,1)", 2, {"kind": "ldmatrix", "num": 4})
    found = [f.swizzle for f in fixes]
    assert (3, 3, 3) in found
    assert all(m >= 3 for _, m, _ in found)  # a swizzle moving bits below 16 bytes would split a row


def test_swizzle_fixes_narrow_tiles():
    # 32 rows of 8 floats: offsets 8r put r's low 2 bits above the bank bits 0..2; the only fix moves r's high bits
    # (offset bits 5..7) down onto bits 0..2
    assert bank_access("(32,8):(8,1)", 4, {"kind": "column", "index": 0}).ways == 8
    assert [f.swizzle for f in swizzle_fixes("(32,8):(8,1)", 4, {"kind": "column", "index": 0})] == [(3, 0, 5)]
    # 16-byte elements: 8 rows of 128 bytes read down a column in one quarter-warp phase
    assert [f.swizzle for f in swizzle_fixes("(8,8):(8,1)", 16, {"kind": "column", "index": 0})] == [(3, 0, 3)]


def test_swizzle_fixes_empty_when_the_tile_is_too_small_to_permute():
    # rows one word apart are already conflict-free: every candidate the finder returns must keep that
    fixes = swizzle_fixes("(32,1):(1,1)", 4, {"kind": "column", "index": 0})
    assert all(f.analysis.ways == 1 for f in fixes)
    # two rows of one word each 32 words apart cannot be separated: the tile holds only offsets {0, 32}
    assert swizzle_fixes("(2,1):(32,1)", 4, {"kind": "column", "index": 0}) == []


@st.composite
def tile_and_swizzle(draw):
    rb = draw(st.integers(0, 5))
    cb = draw(st.integers(0, 7))
    bits = rb + cb
    b = draw(st.integers(0, max(0, min(3, bits // 2))))
    s = draw(st.integers(b, max(b, bits - b)))
    m = draw(st.integers(0, max(0, bits - b - s)))
    return 1 << rb, 1 << cb, (b, m, s)


@settings(max_examples=60, deadline=None)
@given(tile_and_swizzle(), st.sampled_from([1, 2, 4]))
def test_swizzle_never_changes_the_set_of_addresses_of_a_full_tile(case, eb):
    rows, cols, sw = case
    lay = Layout((rows, cols), (cols, 1))
    plain, swz = set(), set()
    for j in range(cols):
        for start in range(0, rows, 32):
            acc = {"kind": "column", "index": j, "start": start, "count": min(32, rows - start)}
            plain |= set(bank_access(lay, eb, acc).byte_addresses)
            swz |= set(bank_access(lay, eb, acc, swizzle=sw).byte_addresses)
    assert plain == swz == {eb * o for o in range(rows * cols)}


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 5), st.integers(0, 6), st.integers(0, 3), st.integers(0, 4), st.integers(0, 4))
def test_column_reads_of_any_swizzled_tile(rb, cb, b, m, s):
    s = max(s, b)
    rows, cols = 1 << rb, 1 << cb
    lay = parse(f"({rows},{cols}):({cols},1)")
    r = bank_access(lay, 4, {"kind": "column", "index": cols - 1}, swizzle=(b, m, s))
    assert r.ways >= 1 and r.wavefronts >= len(r.phases)
    assert r.ways <= rows
