"""The bank / wavefront model of CONTRACT §3 on raw byte addresses."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from algebra import LayoutError
from algebra.banks import analyze, analyze_ldmatrix, bank_of


def test_contract_example_eight_rows_of_128_bytes():
    r = analyze([128 * t for t in range(8)], access_bytes=2)
    assert r.banks == [0] * 8
    assert r.ways == 8
    assert r.wavefronts == 8
    assert r.phases == [8]


def test_consecutive_words_are_conflict_free():
    r = analyze([4 * t for t in range(32)])
    assert r.banks == list(range(32))
    assert (r.ways, r.wavefronts, r.phases) == (1, 1, [1])
    assert r.conflict_free


def test_float_column_of_32x32_row_major_is_32_way():
    r = analyze([4 * (32 * i + 5) for i in range(32)])
    assert r.banks == [5] * 32
    assert (r.ways, r.wavefronts) == (32, 32)


def test_padding_33_is_conflict_free():
    r = analyze([4 * (33 * i + 5) for i in range(32)])
    assert sorted(r.banks) == list(range(32))
    assert r.ways == 1


def test_broadcast_same_word_counts_once():
    r = analyze([0] * 32)
    assert (r.ways, r.wavefronts) == (1, 1)
    # two halves of one word are the same word too
    r = analyze([0, 2] * 16, access_bytes=2)
    assert r.ways == 1
    # byte accesses inside one word
    assert analyze([0, 1, 2, 3], access_bytes=1).ways == 1


def test_two_words_in_one_bank_cost_two():
    r = analyze([0, 128] + [4 * t for t in range(1, 30)])
    assert r.ways == 2
    assert r.bank_words[0][0] == [0, 32]


def test_eight_byte_access_has_two_phases():
    r = analyze([8 * t for t in range(32)], access_bytes=8)
    assert r.phases == [1, 1]
    assert r.wavefronts == 2 and r.ways == 1
    assert r.phase_lanes == [list(range(16)), list(range(16, 32))]


def test_sixteen_byte_access_has_four_phases():
    r = analyze([16 * t for t in range(32)], access_bytes=16)
    assert r.phases == [1, 1, 1, 1]
    assert r.wavefronts == 4
    # all lanes of a quarter warp in the same 16 bytes of the bank line: 8 ways
    r = analyze([128 * t for t in range(32)], access_bytes=16)
    assert r.phases == [8, 8, 8, 8]
    assert (r.ways, r.wavefronts) == (8, 32)


def test_eight_byte_stride_two_words_conflicts():
    # 8-byte loads with a 16-byte stride: a half warp covers 256 bytes, two words per bank pair -> 2 ways
    r = analyze([16 * t for t in range(32)], access_bytes=8)
    assert r.phases == [2, 2]


def test_ldmatrix_rows_of_128_bytes():
    rows = [128 * r for r in range(32)]
    assert analyze_ldmatrix(rows[:8], num=1).wavefronts == 8
    assert analyze_ldmatrix(rows[:16], num=2).wavefronts == 16
    r = analyze_ldmatrix(rows, num=4)
    assert r.phases == [8, 8, 8, 8]
    assert (r.ways, r.wavefronts) == (8, 32)
    assert analyze(rows, kind="ldmatrix").wavefronts == 32


def test_ldmatrix_swizzled_rows():
    # the 128B swizzle: chunk ^= row, so row r of a matrix starts at 16 * (r ^ c) inside its 128-byte line
    rows = [128 * r + 16 * ((r % 8) ^ (r // 8)) for r in range(32)]
    r = analyze_ldmatrix(rows, num=4)
    assert r.phases == [1, 1, 1, 1]
    assert r.wavefronts == 4


def test_ldmatrix_contiguous_rows_are_conflict_free():
    r = analyze_ldmatrix([16 * r for r in range(8)], num=1)
    assert r.phases == [1]


@pytest.mark.parametrize(
    ("addresses", "kwargs", "needle"),
    [
        ([2], {"access_bytes": 4}, "not a multiple"),
        ([0] * 33, {}, "at most 32"),
        ([], {}, "at least one"),
        ([0], {"access_bytes": 3}, "access_bytes"),
        ([-4], {}, "negative"),
        ([0], {"kind": "bogus"}, "kind"),
    ],
)
def test_refusals(addresses, kwargs, needle):
    with pytest.raises(LayoutError, match=needle):
        analyze(addresses, **kwargs)


def test_ldmatrix_refusals():
    with pytest.raises(LayoutError, match="16 row addresses"):
        analyze_ldmatrix([0] * 8, num=2)
    with pytest.raises(LayoutError, match="num"):
        analyze_ldmatrix([0] * 24, num=3)
    with pytest.raises(LayoutError, match="multiple"):
        analyze_ldmatrix([8] + [0] * 7, num=1)


def test_to_dict_is_json_ready():
    import json

    d = analyze([128 * t for t in range(8)], access_bytes=2).to_dict()
    assert d["ways"] == 8 and d["wavefronts"] == 8 and d["banks"] == [0] * 8
    json.dumps(d)


widths = st.sampled_from([1, 2, 4, 8, 16])


@st.composite
def warp_request(draw):
    w = draw(widths)
    n = draw(st.integers(1, 32))
    addrs = draw(st.lists(st.integers(0, 4096 // w), min_size=n, max_size=n))
    return [a * w for a in addrs], w


@given(warp_request())
def test_properties(req):
    addrs, w = req
    r = analyze(addrs, access_bytes=w)
    assert r.ways >= 1
    assert r.wavefronts >= len(r.phases)
    assert r.banks == [bank_of(a) for a in addrs]
    lanes_per_phase = {1: 32, 2: 32, 4: 32, 8: 16, 16: 8}[w]
    assert len(r.phases) == -(-len(addrs) // lanes_per_phase)
    # a phase can never cost more than its distinct words
    for lanes, cost in zip(r.phase_lanes, r.phases, strict=True):
        words = {addrs[i] // 4 + k for i in lanes for k in range(max(1, w // 4))}
        assert cost <= len(words)


@given(st.lists(st.integers(0, 512), min_size=32, max_size=32), st.integers(0, 31))
def test_shifting_every_address_by_whole_lines_keeps_cost(words, lines):
    base = analyze([4 * w for w in words])
    moved = analyze([4 * w + 128 * lines for w in words])
    assert base.phases == moved.phases
