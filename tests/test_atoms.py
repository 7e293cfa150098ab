"""MMA and copy atoms against the PTX ISA fragment tables, lane by lane and value by value."""

import pytest

from algebra import LayoutError, atoms
from algebra.core.layout import size


def rc(idx, rows):
    """Column-major index in a tile of ``rows`` rows -> (row, col)."""
    return idx % rows, idx // rows


def lane_parts(lane):
    return lane >> 2, lane % 4  # groupID, threadID_in_group


# ----------------------------------------------------------------------------- PTX tables (mma.sync, SM80)


def ptx_m16n8k16_a(lane, i):
    g, t = lane_parts(lane)
    row = g + 8 * ((i >> 1) & 1)
    col = 2 * t + (i & 1) + 8 * (i >> 2)
    return row, col


def ptx_m16n8k16_b(lane, i):  # (k, n)
    g, t = lane_parts(lane)
    return 2 * t + (i & 1) + 8 * (i >> 1), g


def ptx_m16n8_c(lane, i):
    g, t = lane_parts(lane)
    return g + 8 * (i >> 1), 2 * t + (i & 1)


def ptx_m16n8k8_a(lane, i):
    g, t = lane_parts(lane)
    return g + 8 * (i >> 1), 2 * t + (i & 1)


def ptx_m16n8k8_b(lane, i):
    g, t = lane_parts(lane)
    return 2 * t + i, g


def check_operand(layout, nthreads, nvals, rows, formula, kn=False):
    assert size(layout) == nthreads * nvals
    seen = set()
    for lane in range(nthreads):
        for v in range(nvals):
            r, c = rc(layout((lane, v)), rows)
            got = (c, r) if kn else (r, c)  # B is stored N x K; the PTX table is K x N
            assert got == formula(lane, v), (lane, v)
            seen.add(got)
    assert len(seen) == nthreads * nvals


@pytest.mark.parametrize("types", ["F16F16F16F16", "F32F16F16F32", "F32BF16BF16F32"])
def test_sm80_m16n8k16(types):
    mma = atoms.get(f"SM80_16x8x16_{types}_TN")
    assert mma.shape_mnk == (16, 8, 16) and mma.num_threads == 32
    check_operand(mma.A, 32, 8, 16, ptx_m16n8k16_a)
    check_operand(mma.B, 32, 4, 8, ptx_m16n8k16_b, kn=True)
    check_operand(mma.C, 32, 4, 16, ptx_m16n8_c)


def test_contract_strings():
    mma = atoms.get("SM80_16x8x16_F32F16F16F32_TN")
    assert str(mma.C) == "((4,8),(2,2)):((32,1),(16,8))"
    assert str(mma.A) == "((4,8),(2,2,2)):((32,1),(16,8,128))"
    assert str(mma.B) == "((4,8),(2,2)):((16,1),(8,64))"
    assert mma.types == ("float", "half_t", "half_t", "float")
    # lane 5, value 3 sits at index 57: row 9, column 3
    assert mma.C((5, 3)) == 57


@pytest.mark.parametrize("types", ["F16F16F16F16", "F32F16F16F32", "F32BF16BF16F32"])
def test_sm80_m16n8k8(types):
    mma = atoms.get(f"SM80_16x8x8_{types}_TN")
    check_operand(mma.A, 32, 4, 16, ptx_m16n8k8_a)
    check_operand(mma.B, 32, 2, 8, ptx_m16n8k8_b, kn=True)
    check_operand(mma.C, 32, 4, 16, ptx_m16n8_c)


def test_sm80_tf32_f64_s8():
    m = atoms.get("SM80_16x8x8_F32TF32TF32F32_TN")
    check_operand(m.A, 32, 4, 16, lambda l, i: (l // 4 + 8 * (i & 1), l % 4 + 4 * (i >> 1)))
    check_operand(m.B, 32, 2, 8, lambda l, i: (l % 4 + 4 * i, l // 4), kn=True)
    m = atoms.get("SM80_16x8x4_F32TF32TF32F32_TN")
    check_operand(m.A, 32, 2, 16, lambda l, i: (l // 4 + 8 * i, l % 4))
    m = atoms.get("SM80_8x8x4_F64F64F64F64_TN")
    check_operand(m.A, 32, 1, 8, lambda l, i: (l // 4, l % 4))
    check_operand(m.C, 32, 2, 8, lambda l, i: (l // 4, 2 * (l % 4) + i))
    m = atoms.get("SM80_16x8x32_S32S8S8S32_TN")
    check_operand(m.A, 32, 16, 16, lambda l, i: (l // 4 + 8 * ((i >> 2) & 1), 4 * (l % 4) + (i & 3) + 16 * (i >> 3)))
    check_operand(m.B, 32, 8, 8, lambda l, i: (4 * (l % 4) + (i & 3) + 16 * (i >> 2), l // 4), kn=True)


# ----------------------------------------------------------------------------- SM70 m8n8k4 (quad pairs)


def qp_row(lane):
    return lane % 4 + 4 * ((lane >> 4) & 1)


def check_sm70(layout, thr_id, nvals, rows, formula, kn=False):
    for t in range(8):
        lane = thr_id(t)
        for v in range(nvals):
            r, c = rc(layout((t, v)), rows)
            assert ((c, r) if kn else (r, c)) == formula(lane, v), (t, lane, v)


@pytest.mark.parametrize("acc", ["F16F16F16F16", "F32F16F16F32"])
@pytest.mark.parametrize("tn", ["TN", "NT", "NN", "TT"])
def test_sm70_m8n8k4(acc, tn):
    m = atoms.get(f"SM70_8x8x4_{acc}_{tn}")
    assert [m.thr_id(t) for t in range(8)] == [0, 1, 2, 3, 16, 17, 18, 19]
    a_row = lambda l, i: (qp_row(l), i)  # noqa: E731  A .row: a lane holds one row
    a_col = lambda l, i: (i + 4 * ((l >> 4) & 1), l % 4)  # noqa: E731  A .col: a lane holds 4 rows of one column
    check_sm70(m.A, m.thr_id, 4, 8, a_row if tn[0] == "T" else a_col)
    b_col = lambda l, i: (i, qp_row(l))  # noqa: E731  B .col (k, n)
    b_row = lambda l, i: (l % 4, i + 4 * ((l >> 4) & 1))  # noqa: E731
    check_sm70(m.B, m.thr_id, 4, 8, b_col if tn[1] == "N" else b_row, kn=True)
    if acc.startswith("F16"):
        check_sm70(m.C, m.thr_id, 8, 8, lambda l, i: (qp_row(l), i))
    else:
        check_sm70(m.C, m.thr_id, 8, 8, lambda l, i: ((l & 1) + 2 * ((i >> 1) & 1) + 4 * ((l >> 4) & 1),
                                                      2 * ((l >> 1) & 1) + (i & 1) + 4 * (i >> 2)))


# ----------------------------------------------------------------------------- SM90 wgmma


def wg_frag(t, i):
    w, lane = t // 32, t % 32
    g, q = lane_parts(lane)
    return 16 * w + g + 8 * ((i >> 1) & 1), 2 * q + (i & 1) + 8 * (i >> 2)


@pytest.mark.parametrize("n", [8, 16, 24, 64, 128, 200, 256])
@pytest.mark.parametrize("types", ["F16F16F16", "F32F16F16", "F32BF16BF16"])
def test_sm90_wgmma(n, types):
    ss = atoms.get(f"SM90_64x{n}x16_{types}_SS")
    rs = atoms.get(f"SM90_64x{n}x16_{types}_RS")
    assert ss.shape_mnk == (64, n, 16) and ss.num_threads == 128
    check_operand(ss.C, 128, n // 2, 64, wg_frag)
    check_operand(rs.A, 128, 8, 64, wg_frag)
    # SS: every thread sees the whole shared-memory tile (thread stride 0)
    for t in (0, 77, 127):
        assert [ss.A((t, v)) for v in range(64 * 16)] == list(range(64 * 16))
        assert [ss.B((t, v)) for v in range(n * 16)] == list(range(n * 16))
    assert rs.B == ss.B and rs.C == ss.C


def test_sm90_n_values():
    ns = sorted({int(x.split("x")[1]) for x in atoms.names() if x.startswith("SM90_64x")})
    assert ns == list(range(8, 257, 8))


# ----------------------------------------------------------------------------- copy atoms


@pytest.mark.parametrize("num", [1, 2, 4])
def test_ldmatrix_matches_ptx(num):
    cp = atoms.get(f"SM75_U32x{num}_LDSM_N")
    src, dst = cp.src_layout(16), cp.dst_layout(16)
    # lanes 8j..8j+7 give the rows of matrix j (x1 and x2 ignore the upper lanes' addresses: stride 0)
    for lane in range(32):
        e = src((lane, 0))
        assert (e // 64, (e % 64) // 8) == ((lane % (8 * num)) // 8, lane % 8)
        assert [src((lane, v)) for v in range(8)] == [e + v for v in range(8)]
    # register j of lane t holds row t/4, columns 2(t%4), 2(t%4)+1 of matrix j
    assert cp.num_values(16) == 8 and size(dst[1]) == 2 * num  # a 16-byte row in, 2*num halves out
    for lane in range(32):
        for j in range(num):
            for p in range(2):
                e = dst((lane, p + 2 * j))
                assert (e // 64, (e % 64) // 8, e % 8) == (j, lane // 4, 2 * (lane % 4) + p)


@pytest.mark.parametrize("num", [1, 2, 4])
def test_ldmatrix_trans_matches_ptx(num):
    cp = atoms.get(f"SM75_U16x{2 * num}_LDSM_T")
    dst = cp.dst_layout(16)
    for lane in range(32):
        for j in range(num):
            for p in range(2):
                e = dst((lane, p + 2 * j))
                # transposed: lane t holds column t/4, rows 2(t%4), 2(t%4)+1 of the stored matrix j
                assert (e // 64, (e % 64) // 8, e % 8) == (j, 2 * (lane % 4) + p, lane // 4)


def test_stmatrix_is_ldmatrix_reversed():
    for n in (1, 2, 4):
        ld, st = atoms.get(f"SM75_U32x{n}_LDSM_N"), atoms.get(f"SM90_U32x{n}_STSM_N")
        assert st.src == ld.dst and st.dst == ld.src and st.ref == st.src


def test_cp_async_and_universal_copy():
    cp = atoms.get("SM80_CP_ASYNC_CACHEALWAYS_16B")
    assert cp is atoms.get("SM80_CP_ASYNC_CACHEALWAYS<uint128_t>")
    assert str(cp.src) == "(1,128):(0,1)" and cp.num_threads == 1
    assert cp.num_values(16) == 8 and cp.num_values(32) == 4 and str(cp.src_layout(16)) == "(1,8):(0,1)"
    assert atoms.get("SM80_CP_ASYNC_CACHEALWAYS_4B").num_values(32) == 1
    assert atoms.get("UniversalCopy<uint64_t>").num_values(16) == 4
    with pytest.raises(LayoutError, match="whole number"):
        atoms.get("SM80_CP_ASYNC_CACHEALWAYS_4B").src_layout(64)


def test_registry():
    names = atoms.names()
    assert len(names) == len(set(names))
    for n in names:
        assert atoms.get(n).name == n
    with pytest.raises(LayoutError, match="unknown atom"):
        atoms.get("SM80_16x8x16_NOPE")
    assert atoms.get("cute::SM80_16x8x16_F32F16F16F32_TN").operand("D") == atoms.get(
        "SM80_16x8x16_F32F16F16F32_TN").C
