"""The descriptor doctor (algebra.doctor.solver_desc): wgmma descriptors decoded and encoded against CUTLASS's
``make_gmma_desc``, and the TMA argument checks.

The expected values were printed by a host-only program built with nvcc against CUTLASS 4.2's headers
(``cute/atom/mma_traits_sm90_gmma.hpp``: ``SM90::GMMA::make_gmma_desc<Major>(make_tensor(make_smem_ptr<T>(nullptr),
composition(tile_to_shape(Atom<T>{}, (128, 128 / sizeof(T))), (128, 32 / sizeof(T)))))``; the start address is 0
on the host). ``test_matches_cutlass_built_here`` rebuilds that program when nvcc and the headers are present."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from algebra import LayoutError, hopper
from algebra.core.layout import Layout
from algebra.core.products import tile_to_shape
from algebra.doctor import solver_desc as D

#: (major, span, element bits) -> CUTLASS make_gmma_desc value
CUTLASS = {
    ("K", 16, 16): 0x0000000800800000, ("K", 32, 16): 0xc000001000010000, ("K", 64, 16): 0x8000002000010000,
    ("K", 128, 16): 0x4000004000010000, ("MN", 16, 16): 0x0000000800800000, ("MN", 32, 16): 0xc000008000100000,
    ("MN", 64, 16): 0x8000008000200000, ("MN", 128, 16): 0x4000008000400000, ("K", 16, 32): 0x0000000800800000,
    ("K", 32, 32): 0xc000001000010000, ("K", 64, 32): 0x8000002000010000, ("K", 128, 32): 0x4000004000010000,
    ("MN", 32, 32): 0xc000000000100000, ("MN", 128, 32): 0x4000000000400000, ("K", 128, 8): 0x4000004000010000,
    ("MN", 64, 8): 0x8000004000200000,
}


def _tile_text(major: str, span: int, bits: int) -> str:
    atom = hopper.smem_atom(major, span, bits)
    tiled = tile_to_shape(Layout(atom.shape, atom.stride), (128, 1024 // bits))
    return f"{str(atom.layout).split(' o ')[0]} o {tiled}" if span != 16 else str(tiled)


@pytest.mark.parametrize("key", sorted(CUTLASS))
def test_encode_decode_round_trip_equals_cutlass(key):
    major, span, bits = key
    want = CUTLASS[key]
    assert hopper.make_gmma_desc(hopper.smem_atom(major, span, bits), 128, 1024 // bits).value == want
    enc = D.encode(_tile_text(major, span, bits), bits // 8, major)
    assert int(enc["value"], 16) == want and enc["valid"]
    dec = D.decode(hex(want), bits // 8, major, 128, tile=_tile_text(major, span, bits))
    assert dec["valid"], dec["checks"]
    assert dec["span_bytes"] == span and {f["name"]: f["value"] for f in dec["fields"]}["layout_type"] == \
        hopper.SWIZZLE_KINDS[span][2]


def test_decode_draws_the_canonical_layout_and_flags_problems():
    d = D.decode("0x4000004000010000", 2, "K", 64)
    assert d["layout"] == "Sw<3,3,3> o 0 o ((8,8),(8,2)):((64,512),(1,8))"
    assert d["grid"]["rows"] == 64 and d["grid"]["cols"] == 16
    assert d["grid"]["bytes"][1][0] == 128 + 16  # row 1 starts in 16-byte chunk 1
    bad = D.decode("0x4000004000010000", 2, "K", 64, tile="(64,16):(16,1)")
    assert not bad["valid"] and any(c["rule"] == "tile" and not c["ok"] for c in bad["checks"])
    overlap = D.decode(hex(hopper.GmmaDescriptor(0, 16, 256, 1).value), 2, "K", 64)
    assert any(c["rule"] == "no_overlap" and not c["ok"] for c in overlap["checks"])
    misaligned = D.decode(hex(hopper.GmmaDescriptor(256, 16, 1024, 1).value), 2, "K", 64)
    assert any(c["rule"] == "base_offset" and not c["ok"] for c in misaligned["checks"])
    reserved = D.decode(hex(0x4000004000010000 | (1 << 15)), 2, "K", 64)
    assert not reserved["valid"]


@pytest.mark.parametrize("text", ["", "0xZZ", str(1 << 64), "-5"])
def test_bad_descriptor_text_is_refused(text):
    with pytest.raises(LayoutError, match="descriptor"):
        D.decode(text)


def test_encode_refuses_a_non_canonical_tile():
    with pytest.raises(LayoutError, match="tile"):
        D.encode("Sw<3,3,3> o (64,64):(1,64)", 2, "K")
    with pytest.raises(LayoutError, match="tile"):
        D.encode("Sw<2,1,5> o (64,64):(64,1)", 2, "K")


@pytest.mark.parametrize("arch", ["sm90", "sm100"])
def test_encode_refuses_a_composition_of_two_layouts_by_name(arch):
    """``L o 3`` is L composed with the layout 3:1, not a swizzled tile: a named refusal on both architectures."""
    with pytest.raises(LayoutError, match="tile"):
        D.encode("(64,64):(64,1) o 3", 2, "K", arch=arch)


PROGRAM = r"""
#include <cstdio>
#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
using namespace cute;
template <SM90::GMMA::Major M, class Atom, class T> void show(const char* major, int span) {
  constexpr int MN = 128, K = 128 / sizeof(T), KB = 32 / sizeof(T);
  auto first = composition(tile_to_shape(Atom{}, make_shape(Int<MN>{}, Int<K>{})), make_tile(Int<MN>{}, Int<KB>{}));
  auto d = SM90::GMMA::make_gmma_desc<M>(make_tensor(make_smem_ptr<T>((T*)nullptr), first));
  printf("%s %d %d 0x%016llx\n", major, span, (int)sizeof(T) * 8, (unsigned long long)d.desc_);
}
#define K_(A, S, T) show<SM90::GMMA::Major::K, SM90::GMMA::A<T>, T>("K", S);
#define MN_(A, S, T) show<SM90::GMMA::Major::MN, SM90::GMMA::A<T>, T>("MN", S);
int main() {
  K_(Layout_K_INTER_Atom, 16, half_t) K_(Layout_K_SW32_Atom, 32, half_t) K_(Layout_K_SW64_Atom, 64, half_t)
  K_(Layout_K_SW128_Atom, 128, half_t) MN_(Layout_MN_INTER_Atom, 16, half_t) MN_(Layout_MN_SW32_Atom, 32, half_t)
  MN_(Layout_MN_SW64_Atom, 64, half_t) MN_(Layout_MN_SW128_Atom, 128, half_t) K_(Layout_K_SW128_Atom, 128, float)
  MN_(Layout_MN_SW128_Atom, 128, float) K_(Layout_K_SW128_Atom, 128, uint8_t) MN_(Layout_MN_SW64_Atom, 64, uint8_t)
  return 0;
}
"""


def _cutlass_include() -> Path | None:
    try:
        import cutlass_library
    except ImportError:
        return None
    inc = Path(cutlass_library.__file__).parent / "source" / "include"
    return inc if (inc / "cute" / "atom" / "mma_traits_sm90_gmma.hpp").is_file() else None


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None or _cutlass_include() is None, reason="needs nvcc and CUTLASS")
def test_matches_cutlass_built_here(tmp_path):
    src = tmp_path / "gd.cu"
    src.write_text(PROGRAM)
    subprocess.run(["nvcc", "-std=c++17", "-x", "cu", "-arch=sm_90a", f"-I{_cutlass_include()}", "-o",
                    str(tmp_path / "gd"), str(src)], check=True, capture_output=True, timeout=600)
    out = subprocess.run([str(tmp_path / "gd")], capture_output=True, text=True, timeout=60).stdout
    rows = [ln.split() for ln in out.splitlines() if ln.startswith(("K ", "MN "))]
    assert len(rows) == 12
    for major, span, bits, value in rows:
        assert int(value, 16) == CUTLASS[(major, int(span), int(bits))]
        assert int(D.encode(_tile_text(major, int(span), int(bits)), int(bits) // 8, major)["value"], 16) == \
            int(value, 16)


@pytest.mark.parametrize("text", ["Sw<0,4,3> o smem_ptr[16b](unset) o ((_8,_16),(_8,_2)):((_8,_64),(_1,_1024))",
                                  "Sw<0,3,3> o ((8,16),(8,2)):((8,64),(1,1024))", "((8,16),(8,2)):((8,64),(1,1024))"])
def test_encode_reads_the_identity_swizzle_cute_prints_on_an_inter_tile(text):
    """CuTe prints its INTER atoms with the identity swizzle ``Sw<0,4,3>``; that tile's first K-block is the
    no-swizzle layout, and its descriptor is CUTLASS's (it was refused as "not a wgmma swizzle": seed 10810)."""
    assert int(D.encode(text, 2, "K")["value"], 16) == CUTLASS[("K", 16, 16)]
