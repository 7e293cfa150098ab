"""make_tiled_copy / make_tiled_mma and their partitions (seed 003's sgemm_sm80 A copy)."""

import pytest

import algebra as A
from algebra import LayoutError, atoms


def sgemm_copy():
    return atoms.make_tiled_copy("SM80_CP_ASYNC_CACHEALWAYS_16B", thr_layout=A.Layout((16, 8), (8, 1)),
                                 val_layout=A.Layout((1, 8)), element_bits=16)


def test_contract_tiled_copy():
    tc = sgemm_copy()
    assert tc.tiler == (16, 64)
    assert str(tc.tv_layout) == "((8,16),8):((128,1),16)"
    assert tc.num_threads == 128


def test_tiled_copy_thread_9_owns_row_1_columns_8_to_15():
    tc = sgemm_copy()
    coords = sorted((i % 16, i // 16) for i in (tc.tv_layout((9, v)) for v in range(8)))
    assert coords == [(1, c) for c in range(8, 16)]
    # every element of the tile is copied exactly once
    assert sorted(tc.tv_layout(i) for i in range(A.size(tc.tv_layout))) == list(range(16 * 64))


def test_partition_S_of_a_row_major_tile():
    tc = sgemm_copy()
    frag, off = tc.partition_S(A.Layout((128, 64), (64, 1)), 9)
    assert off == 64 + 8  # row 1, column 8
    assert str(frag) == "((8,1),8,1):((1,0),1024,0)"  # 8 contiguous halves, then 8 tiles down the rows
    frag_d, off_d = tc.partition_D(A.Layout((128, 64), (64, 1)), 9)
    assert (str(frag_d), off_d) == (str(frag), off)


def test_tiled_copy_refusals():
    with pytest.raises(LayoutError, match="too few values"):
        atoms.make_tiled_copy("SM80_CP_ASYNC_CACHEALWAYS_16B", A.Layout(32), A.Layout(4), element_bits=16)
    with pytest.raises(LayoutError, match="MMA atom"):
        atoms.make_tiled_copy("SM80_16x8x16_F32F16F16F32_TN", A.Layout(32))


def test_tiled_mma_2x2_warps():
    tm = atoms.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", A.Layout((2, 2, 1)))
    assert tm.num_threads == 128
    assert [tm.tile_size_mnk(i) for i in range(3)] == [32, 16, 16]
    assert str(tm.thr_layout_vmnk) == "(32,2,2,1):(1,32,64,0)"
    # lane 5 of warp 0: rows 1 and 9, columns 2 and 3 of C
    frag, off = tm.partition_C(A.Layout((32, 16)), 5)
    assert off == 1 + 32 * 2 and str(frag) == "((2,2),1,1):((32,8),0,0)"
    # warp 1 (threads 32..63) is the next 16 rows
    frag, off = tm.partition_C(A.Layout((32, 16)), 37)
    assert off == 16 + 1 + 32 * 2
    # a 64x64 C: 2x4 repeats of the 32x16 tile
    frag, off = tm.partition_C(A.Layout((64, 64)), 37)
    assert str(frag) == "((2,2),2,4):((64,8),32,1024)"
    frag, off = tm.partition_A(A.Layout((32, 16)), 5)
    assert str(frag) == "((2,2,2),1,1):((32,8,256),0,0)" and off == 1 + 32 * 2


def test_partition_C_covers_the_tile_once():
    tm = atoms.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", A.Layout((2, 2, 1)))
    seen = []
    for t in range(tm.num_threads):
        frag, off = tm.partition_C(A.Layout((64, 32)), t)
        seen += [off + frag(i) for i in range(A.size(frag))]
    assert sorted(seen) == list(range(64 * 32))


def test_tiled_mma_refusals():
    with pytest.raises(LayoutError, match="copy atom"):
        atoms.make_tiled_mma("SM75_U32x4_LDSM_N")
    with pytest.raises(LayoutError, match="rank"):
        atoms.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", A.Layout((1, 1, 1, 1)))
