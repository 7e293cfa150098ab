"""Global-memory sectors of a thread partition (seed 003's 16x8 fp32 example)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from algebra import LayoutError
from algebra.core.layout import Layout, make_layout
from algebra.core.products import zipped_divide
from algebra.hw.coalescing import partition_sectors, sectors, widest_vector

TILE = Layout((16, 8))  # 16x8 fp32, column-major


def tv_from_zipped(z):
    """zipped_divide gives ((within a tile), (which tile)); as a partition that is (value, thread): swap."""
    return make_layout(z[1], z[0])


def test_one_2x2_block_per_thread_is_50_percent():
    z = zipped_divide(TILE, (2, 2))
    assert str(z) == "((2,2),(8,4)):((1,16),(2,32))"
    tv = tv_from_zipped(z)
    p = partition_sectors(tv, 4, vector=1)
    first = p.instructions[0]
    assert first.byte_addresses[:6] == [0, 8, 16, 24, 32, 40]
    assert first.num_sectors == 8
    assert first.utilization == pytest.approx(0.5)
    assert len(p.instructions) == 4


def test_vectorising_the_2x2_block_restores_100_percent():
    tv = tv_from_zipped(zipped_divide(TILE, (2, 2)))
    assert widest_vector(tv, 4) == 2
    p = partition_sectors(tv, 4)
    assert p.vector == 2
    assert [r.num_sectors for r in p.instructions] == [8, 8]
    assert all(r.utilization == 1.0 for r in p.instructions)
    assert p.instructions[0].values == [0, 1]


def test_thread_layout_16x2_is_4_sectors_100_percent():
    z = zipped_divide(TILE, (16, 2))
    assert str(z) == "((16,2),(1,4)):((1,16),(0,32))"
    tv = make_layout(z[0], z[1])  # here the within-tile mode is indexed by the thread
    p = partition_sectors(tv, 4)
    assert p.vector == 1
    assert p.instructions[0].byte_addresses[:6] == [0, 4, 8, 12, 16, 20]
    assert all(r.num_sectors == 4 and r.utilization == 1.0 for r in p.instructions)
    assert p.total_sectors == 16 and p.utilization == 1.0


def test_memory_layout_composes_with_the_partition():
    # same partition over a row-major tile: neighbouring threads now walk down a column, 8 columns apart
    tv = make_layout(*zipped_divide(Layout((16, 8)), (16, 2)))
    p = partition_sectors(tv, 4, memory=Layout((16, 8), (8, 1)))
    assert p.instructions[0].num_sectors == 16
    assert p.instructions[0].utilization == pytest.approx(0.25)


def test_raw_sectors():
    r = sectors([4 * t for t in range(32)], 4)
    assert r.sectors == [0, 1, 2, 3] and r.utilization == 1.0
    r = sectors([128 * t for t in range(32)], 4)
    assert r.num_sectors == 32 and r.utilization == pytest.approx(4 / 32)
    r = sectors([0] * 32, 4)  # broadcast: one sector, 4 useful bytes
    assert r.num_sectors == 1 and r.bytes_used == 4 and r.bytes_requested == 128
    r = sectors([16 * t for t in range(32)], 16)
    assert r.num_sectors == 16 and r.utilization == 1.0


def test_refusals():
    with pytest.raises(LayoutError, match="multiple"):
        sectors([2], 4)
    tv = tv_from_zipped(zipped_divide(TILE, (2, 2)))
    with pytest.raises(LayoutError, match="divide"):
        partition_sectors(tv, 4, vector=3)
    with pytest.raises(LayoutError, match="wider"):
        partition_sectors(tv, 4, vector=4)
    with pytest.raises(LayoutError, match="two modes"):
        partition_sectors(Layout(32), 4)


@given(st.lists(st.integers(0, 1 << 12), min_size=1, max_size=32), st.sampled_from([1, 2, 4, 8, 16]))
def test_sector_properties(words, width):
    r = sectors([w * width for w in words], width)
    assert 0 < r.utilization <= 1
    assert r.bytes_used <= r.bytes_requested
    assert r.num_sectors >= -(-r.bytes_used // 32)
