"""What Triton's compiler does, pinned without Triton (default suite): answers read off Triton's own
``to_linear_layout`` (3.9, and 3.6 / 3.8 where they differ) and the PTX it compiles for sm_90 on the CPU, and Nsight
Compute on the H200 with Triton 3.6 (``bench/results/triton_conflicts_H200_*.json``), each case one that LayoutLab
once got wrong."""

from __future__ import annotations

import pytest

from algebra.doctor import triton_conflicts as C
from algebra.doctor.triton_layouts import convert
from algebra.doctor.ttgir import TTGIRError


def blocked(spt: list[int], tpw: list[int], wpc: list[int], order: list[int]) -> str:
    return (f"#ttg.blocked<{{sizePerThread = {spt}, threadsPerWarp = {tpw}, warpsPerCTA = {wpc}, "
            f"order = {order}}}>")


def swizzled(vec: int, per: int, maxp: int, order: list[int]) -> str:
    return f"#ttg.swizzled_shared<{{vec = {vec}, perPhase = {per}, maxPhase = {maxp}, order = {order}}}>"


def plans(dist: str, shared: str, shape: list[int], bits: int) -> list[dict]:
    d, s = convert(dist, shape), convert(shared, shape, bits)
    return [C.plan(d, s, bits, "store", warp=w) for w in range(1 << len(d.ll.bases["warp"]))]


def test_an_fma_dot_operand_keeps_its_k_registers_past_the_shape():
    """Triton's to_linear_layout: zero register bases where the shape is smaller than sizePerThread along K."""
    parent = blocked([16, 8], [8, 4], [4, 1], [0, 1])
    got = convert(f"#ttg.dot_op<{{opIdx = 0, parent = {parent}}}>", [2, 2]).bases()
    assert got["register"] == [[1, 0], [0, 0], [0, 0], [0, 0], [0, 1]]
    # the blocked layout too in Triton 3.6 and 3.8 (3.9 drops them: [[1, 0], [0, 1]])
    assert convert(parent, [2, 2]).bases()["register"] == [[1, 0], [0, 0], [0, 0], [0, 0], [0, 1], [0, 0], [0, 0]]


def test_generic_linear_is_read_and_its_register_bases_move_in_one_dimension():
    text = ("#ttg.generic_linear<{register = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [1, 0], [2, 0], [4, 0]], "
            "warp = [[8, 1], [16, 0]], block = []}>")
    t = convert(text, [32, 16])
    assert t.kind == "generic_linear" and t.bases()["warp"] == [[8, 1], [16, 0]]
    with pytest.raises(TTGIRError, match=r"generic_linear\.register: basis \[1, 2\]"):
        convert(text.replace("register = [[0, 1]", "register = [[1, 2]"), [32, 16])


def test_nvmma_rank_must_be_the_tensors():
    nv = "#ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16, rank = 3}>"
    with pytest.raises(TTGIRError, match=r"nvmma_shared\.rank"):
        convert(nv, [64, 64], 16)
    assert convert(nv.replace("rank = 3", "rank = 2"), [64, 64], 16).bases() == convert(
        nv.replace(", rank = 3", ""), [64, 64], 16).bases()


def test_too_many_warps_names_the_field():
    with pytest.raises(TTGIRError, match="warpsPerCTA"):
        convert(blocked([1, 8], [4, 8], [1 << 16, 1 << 16], [1, 0]), [64, 64])


@pytest.mark.parametrize(("dist", "shared", "shape", "bits", "kind", "vbytes", "count", "wavefronts"), [
    # registers at offsets 1, 65, 128, 32: the PTX stores {r0, r1} and {r3, r2} as st.shared.v2.b16 (relabelled)
    (blocked([2, 8], [4, 8], [4, 2], [0, 1]), swizzled(1, 1, 2, [0, 1]), [64, 4], 16, "st.shared.b32", 4, 8, 8),
    # registers at 1, 2, 4, 16, 32, 65: v4.b32 in the PTX, conflict-free on the H200 (Gluon's bank_conflicts: 3)
    (blocked([8, 8], [4, 8], [1, 2], [1, 0]), swizzled(1, 4, 2, [1, 0]), [32, 16], 16, "st.shared.v4.b32", 16, 8,
     32),
    (blocked([4, 1], [8, 4], [1, 1], [0, 1]), swizzled(2, 4, 4, [0, 1]), [32, 32], 32, "st.shared.v4.b32", 16, 8,
     32),
    # stmatrix of 8- and 32-bit elements: a lane's 32-bit word and lanes 0-1 along a 16-byte row
    (blocked([8, 1], [8, 4], [2, 2], [1, 0]), swizzled(8, 4, 8, [0, 1]), [4, 512], 8, "stmatrix.x4", 16, 16, 64),
    (blocked([1, 1], [8, 4], [4, 1], [1, 0]), swizzled(4, 1, 8, [1, 0]), [64, 64], 32, "stmatrix.x4", 16, 8, 32),
    (blocked([1, 1], [1, 32], [4, 1], [1, 0]), swizzled(2, 4, 8, [1, 0]), [1, 8], 32, "stmatrix.x1", 16, 1, 1),
    # stmatrix.trans: register 0 and lanes 0, 1 pick the rows (Nsight: 8 wavefronts per instruction on Triton 3.6)
    (blocked([2, 1], [4, 8], [1, 4], [0, 1]), swizzled(8, 2, 4, [1, 0]), [64, 64], 16, "stmatrix.x4.trans", 16, 4,
     32),
    # into padded_shared: st.shared only (no stmatrix), v at most the shortest interval
    ("#ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 2], instrShape = [16, 8]}>",
     "#ttg.padded_shared<[64:+16] {order = [0, 1], shape = [16, 16]}>", [16, 16], 16, "st.shared.b16", 2, 4, 4),
    (blocked([1, 8], [4, 8], [4, 1], [1, 0]), "#ttg.padded_shared<[64:+8] {order = [1, 0], shape = [64, 64]}>",
     [64, 64], 16, "st.shared.v4.b32", 16, 4, 16),
])
def test_the_compilers_instructions(dist, shared, shape, bits, kind, vbytes, count, wavefronts):
    ps = plans(dist, shared, shape, bits)
    assert {(p["kind"], p["instructions"][0]["vector_bytes"], p["count"]) for p in ps} == {(kind, vbytes, count)}
    assert ps[0]["wavefronts"] == wavefronts


def test_padded_vectors_stay_aligned_for_every_warp():
    """[8:+4, 2048:+2]: 8-element vectors break their alignment past offset 2048 (warp 1's), so every warp stores
    st.shared.v2.b16 as the compiled code does."""
    dist = blocked([2, 1], [16, 2], [4, 1], [1, 0])
    shared = ("#ttg.padded_shared<[8:+4, 2048:+2] {offset = [[0, 4], [0, 32], [1, 0], [0, 1], [2, 0], [0, 2], "
              "[16, 0], [4, 0], [8, 0], [0, 16], [0, 8], [32, 0]], block = []}>")
    assert {(p["kind"], p["count"]) for p in plans(dist, shared, [64, 64], 16)} == {("st.shared.b32", 32)}


def test_fast_pricing_equals_the_instruction_by_instruction_count():
    """plan prices each instruction start modulo a 128-byte line once (with paddings, each padded start), and with
    fast=True counts its repeats: the totals are those of pricing every instruction from its addresses."""
    import random

    rng = random.Random(3)
    shp = [128, 64]
    for _ in range(60):
        bits = rng.choice((8, 16, 32))
        dist = blocked([1 << rng.randint(0, 3), 1 << rng.randint(0, 3)], rng.choice(([4, 8], [8, 4], [2, 16])),
                       rng.choice(([1, 1], [2, 2], [4, 1])), rng.choice(([1, 0], [0, 1])))
        shared = rng.choice((swizzled(1 << rng.randint(0, 3), 1 << rng.randint(0, 2), 1 << rng.randint(0, 3),
                                      rng.choice(([1, 0], [0, 1]))),
                             f"#ttg.padded_shared<[{1 << rng.randint(2, 7)}:+{1 << rng.randint(0, 3)}] "
                             f"{{order = [1, 0], shape = [128, 64]}}>"))
        d, s = convert(dist, shp), convert(shared, shp, bits)
        ref = C.plan(d, s, bits, memo=False)
        for p in (C.plan(d, s, bits), C.plan(d, s, bits, fast=True)):
            assert (p["wavefronts"], p["ideal"], p["count"]) == (ref["wavefronts"], ref["ideal"], ref["count"])
