"""CuTe C++ as the oracle for the atoms: a host-only program prints every atom's TV layouts, a tiled copy, tiled MMA
partitions and the GMMA smem atoms, and each line is compared with ``algebra.atoms`` / ``algebra.hw.hopper``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cute_cpp import compile_and_run, printed, toolchain  # noqa: E402

import algebra as A  # noqa: E402
from algebra import atoms  # noqa: E402
from algebra.hw.hopper import smem_atom  # noqa: E402

pytestmark = pytest.mark.oracle

SM90_N = tuple(range(8, 257, 8))  # every wgmma N
SM90_TYPES = ("F16F16F16", "F32F16F16", "F32BF16BF16")
CPP_COPY = {
    **{n: n for n in atoms.copy_names() if "LDSM" in n or "STSM" in n},
    "SM80_CP_ASYNC_CACHEALWAYS_4B": "SM80_CP_ASYNC_CACHEALWAYS<uint32_t>",
    "SM80_CP_ASYNC_CACHEALWAYS_8B": "SM80_CP_ASYNC_CACHEALWAYS<uint64_t>",
    "SM80_CP_ASYNC_CACHEALWAYS_16B": "SM80_CP_ASYNC_CACHEALWAYS<uint128_t>",
    "SM80_CP_ASYNC_CACHEGLOBAL_16B": "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>",
    **{f"UniversalCopy_{b}b": f"UniversalCopy<uint{b}_t>" for b in (8, 16, 32, 64, 128)},
}


def mma_cpp_names() -> dict[str, str]:
    out = {n: n for n in atoms.mma_names() if n.startswith(("SM80_", "SM70_"))}
    for n in SM90_N:
        for t in SM90_TYPES:
            for form in ("SS", "RS"):
                name = f"SM90_64x{n}x16_{t}_{form}"
                out[name] = f"SM90::GMMA::MMA_64x{n}x16_{t}_{form}<GMMA::Major::K, GMMA::Major::K>"
    return out


def program() -> str:
    lines = [
        "#include <cstdio>", "#include <cute/tensor.hpp>", "#include <cute/atom/mma_atom.hpp>",
        "#include <cute/atom/copy_atom.hpp>", "#include <cute/atom/mma_traits_sm90_gmma.hpp>",
        "#include <cute/arch/mma_sm90_gmma_ext.hpp>",
        "#include <cute/atom/mma_traits_sm90_gmma_ext.hpp>", "#include <cute/atom/copy_traits_sm90.hpp>",
        "using namespace cute;",
        'template <class T> void show(const char* k, T const& x) { printf("%s\\t", k); print(x); printf("\\n"); }',
        "int main() {",
    ]
    for py, cpp in mma_cpp_names().items():
        for op in ("ALayout", "BLayout", "CLayout", "ThrID"):
            lines.append(f'  show("{py}.{op}", typename MMA_Traits<{cpp}>::{op}{{}});')
    for py, cpp in CPP_COPY.items():
        for op in ("SrcLayout", "DstLayout", "RefLayout", "ThrID"):
            lines.append(f'  show("{py}.{op}", typename Copy_Traits<{cpp}>::{op}{{}});')
    lines += [
        "  auto tc = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<uint128_t>, half_t>{},",
        "                            Layout<Shape<_16,_8>,Stride<_8,_1>>{}, Layout<Shape<_1,_8>>{});",
        '  show("tc.tiler", typename decltype(tc)::Tiler_MN{});',
        '  show("tc.tv", typename decltype(tc)::TiledLayout_TV{});',
        "  static half_t buf[128 * 64];",
        "  auto g = make_tensor(make_gmem_ptr(buf), Layout<Shape<_128,_64>,Stride<_64,_1>>{});",
        "  auto ps = tc.get_slice(9).partition_S(g);",
        '  show("tc.S9", ps.layout()); printf("tc.S9.off\\t%d\\n", int(ps.data().get() - buf));',
        "  auto mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2,_2,_1>>{});",
        "  static float cbuf[64 * 64];",
        "  auto c = make_tensor(make_gmem_ptr(cbuf), Layout<Shape<_64,_64>>{});",
        "  auto pc = mma.get_slice(37).partition_C(c);",
        '  show("mma.C37", pc.layout()); printf("mma.C37.off\\t%d\\n", int(pc.data().get() - cbuf));',
        "  auto pa = mma.get_slice(5).partition_A(make_tensor(make_gmem_ptr(cbuf), Layout<Shape<_32,_16>>{}));",
        '  show("mma.A5", pa.layout()); printf("mma.A5.off\\t%d\\n", int(pa.data().get() - cbuf));',
    ]
    for major in ("K", "MN"):
        for sw in ("INTER", "SW32", "SW64", "SW128"):
            for t, bits in (("half_t", 16), ("uint8_t", 8), ("float", 32)):
                lines.append(f'  show("atom.{major}.{sw}.{bits}", GMMA::Layout_{major}_{sw}_Atom<{t}>{{}});')
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def cute_output() -> dict[str, str]:
    if toolchain() is None:
        pytest.skip("no C++ compiler, CuTe headers or CUDA headers")
    return printed(compile_and_run(program(), 900))


def plain(s: str) -> str:
    return s.replace("_", "")


def test_mma_atoms(cute_output):
    for name in mma_cpp_names():
        m = atoms.get(name)
        for op, ours in (("ALayout", m.A), ("BLayout", m.B), ("CLayout", m.C), ("ThrID", m.thr_id)):
            assert str(ours) == plain(cute_output[f"{name}.{op}"]), (name, op)


def test_copy_atoms(cute_output):
    for name in CPP_COPY:
        c = atoms.get(name)
        for op, ours in (("SrcLayout", c.src), ("DstLayout", c.dst), ("RefLayout", c.ref), ("ThrID", c.thr_id)):
            assert str(ours) == plain(cute_output[f"{name}.{op}"]), (name, op)


def test_tiled_copy_and_mma(cute_output):
    tc = atoms.make_tiled_copy("SM80_CP_ASYNC_CACHEALWAYS_16B", A.Layout((16, 8), (8, 1)), A.Layout((1, 8)), 16)
    assert "(" + ",".join(map(str, tc.tiler)) + ")" == plain(cute_output["tc.tiler"])
    assert str(tc.tv_layout) == plain(cute_output["tc.tv"])
    frag, off = tc.partition_S(A.Layout((128, 64), (64, 1)), 9)
    assert (str(frag), off) == (plain(cute_output["tc.S9"]), int(cute_output["tc.S9.off"]))
    mma = atoms.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", A.Layout((2, 2, 1)))
    frag, off = mma.partition_C(A.Layout((64, 64)), 37)
    assert (str(frag), off) == (plain(cute_output["mma.C37"]), int(cute_output["mma.C37.off"]))
    frag, off = mma.partition_A(A.Layout((32, 16)), 5)
    assert (str(frag), off) == (plain(cute_output["mma.A5"]), int(cute_output["mma.A5.off"]))


def test_gmma_smem_atoms(cute_output):
    spans = {"INTER": 16, "SW32": 32, "SW64": 64, "SW128": 128}
    for major in ("K", "MN"):
        for sw, span in spans.items():
            for bits in (16, 8, 32):
                assert smem_atom(major, span, bits).cute_print() == cute_output[f"atom.{major}.{sw}.{bits}"]
