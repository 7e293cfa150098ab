"""Hopper smem layout atoms, TMA tensor map rules, and the wgmma descriptor fields (seed 004)."""

import pytest

from algebra import LayoutError
from algebra.banks import bank_access
from algebra.core.swizzle import Swizzle
from algebra.hw.hopper import (
    GmmaDescriptor,
    decode_gmma_descriptor,
    encode_tiled,
    smem_atom,
    smem_atom_by_name,
    swizzle_to_bytes,
    swizzle_to_elements,
    tma_from_tensor,
)


def test_byte_and_element_swizzles():
    assert swizzle_to_elements((3, 4, 3), 16) == (3, 3, 3)
    assert swizzle_to_elements((3, 4, 3), 8) == (3, 4, 3)
    assert swizzle_to_elements((3, 4, 3), 32) == (3, 2, 3)
    assert swizzle_to_bytes((3, 3, 3), 16) == (3, 4, 3)
    with pytest.raises(LayoutError, match="below one"):
        swizzle_to_elements((3, 0, 3), 16)
    sb, se = Swizzle(3, 4, 3), Swizzle(*swizzle_to_elements((3, 4, 3), 32))
    assert all(sb(4 * x) == 4 * se(x) for x in range(2048))


@pytest.mark.parametrize(("major", "span", "bits", "shape", "stride"), [
    ("K", 128, 16, (8, 64), (64, 1)),
    ("K", 64, 16, (8, 32), (32, 1)),
    ("K", 32, 8, (8, 32), (32, 1)),
    ("K", 16, 16, (8, 8), (8, 1)),
    ("MN", 128, 16, (64, 8), (1, 64)),
    ("MN", 64, 8, (64, 8), (1, 64)),
])
def test_smem_atoms(major, span, bits, shape, stride):
    atom = smem_atom(major, span, bits)
    assert (atom.shape, atom.stride) == (shape, stride)
    b = {16: 0, 32: 1, 64: 2, 128: 3}[span]
    assert atom.byte_swizzle == (b, 4, 3)
    assert atom.element_swizzle == swizzle_to_elements((b, 4, 3), bits)
    assert atom.shape[0] * atom.shape[1] * bits == 8 * span * 8


def test_k_sw128_fp16_atom_prints_and_is_conflict_free_for_ldmatrix():
    atom = smem_atom_by_name("GMMA::Layout_K_SW128_Atom", 16)
    assert atom.name == "Layout_K_SW128_Atom"
    assert atom.cute_print() == "Sw<3,4,3> o smem_ptr[16b](unset) o (_8,_64):(_64,_1)"
    assert str(atom) == "Sw<3,3,3> o (8,64):(64,1)"
    lay = atom.layout
    assert sorted(lay(i) for i in range(512)) == list(range(512))
    assert bank_access(lay, 2, {"kind": "column", "index": 5}).ways == 1
    # the plain (8,64):(64,1) atom without its swizzle: 8 ways
    assert bank_access(atom.layout.layout_b, 2, {"kind": "column", "index": 5}).ways == 8


def test_bad_atoms():
    with pytest.raises(LayoutError, match="major"):
        smem_atom("X", 128, 16)
    with pytest.raises(LayoutError, match="span"):
        smem_atom("K", 96, 16)
    with pytest.raises(LayoutError, match="unknown"):
        smem_atom_by_name("Layout_K_SW256_Atom", 16)


def test_tma_bf16_k_major_tile_128b():
    # A: M x K = 4096 x 4096 bf16, row-major (K contiguous); box 64 (K) x 128 (M)
    args = encode_tiled("bf16", [4096, 4096], [8192], [64, 128], swizzle="128B")
    assert args.valid and args.dtype == "BFLOAT16" and args.element_strides == [1, 1]
    assert {c.rule for c in args.checks} >= {"box_inner_swizzle", "global_strides[0]", "box_dim[1]"}


def test_tma_box_wider_than_the_swizzle_is_refused():
    with pytest.raises(LayoutError, match="box_inner_swizzle.*boxDim\\[0\\] <= 64"):
        encode_tiled("bf16", [4096, 4096], [8192], [128, 128], swizzle="CU_TENSOR_MAP_SWIZZLE_128B")
    args = encode_tiled("bf16", [4096, 4096], [8192], [128, 128], swizzle="128B", strict=False)
    assert not args.valid
    assert [c.rule for c in args.checks if not c.ok] == ["box_inner_swizzle"]
    assert encode_tiled("fp8", [4096, 4096], [4096], [128, 128], swizzle="128B").valid


@pytest.mark.parametrize(("kwargs", "rule"), [
    ({"global_strides": [8200]}, "global_strides[0]"),
    ({"box_dim": [64, 512]}, "box_dim[1]"),
    ({"box_dim": [4, 128], "swizzle": "NONE"}, "box_inner_16B"),
    ({"element_strides": [1, 9]}, "element_strides[1]"),
    ({"global_dim": [0, 4096]}, "global_dim[0]"),
    ({"global_address": 8}, "global_address"),
    ({"interleave": "32B"}, "rank"),
])
def test_tma_rules(kwargs, rule):
    base = {"dtype": "bf16", "global_dim": [4096, 4096], "global_strides": [8192], "box_dim": [64, 128],
            "swizzle": "128B"}
    base.update(kwargs)
    args = encode_tiled(**base, strict=False)
    assert rule in [c.rule for c in args.checks if not c.ok]
    with pytest.raises(LayoutError, match="refuses rule"):
        encode_tiled(**base)


def test_tma_from_tensor_with_an_smem_atom():
    atom = smem_atom("K", 128, 16)
    args = tma_from_tensor((4096, 1024), (1024, 1), "bf16", (128, 64), atom=atom)
    assert args.global_dim == [1024, 4096] and args.global_strides == [2048] and args.box_dim == [64, 128]
    assert args.swizzle == "128B" and args.valid
    with pytest.raises(LayoutError, match="box_inner_swizzle"):
        tma_from_tensor((4096, 1024), (1024, 1), "bf16", (128, 128), atom=atom)
    with pytest.raises(LayoutError, match="contiguous along mode"):
        tma_from_tensor((4096, 1024), (1, 4096), "bf16", (128, 64), atom=atom)
    with pytest.raises(LayoutError, match="exactly one contiguous"):
        tma_from_tensor((64, 64), (64, 2), "bf16", (64, 64))


def test_gmma_descriptor_fields():
    d = GmmaDescriptor(start_address=0x400, leading_byte_offset=16, stride_byte_offset=1024, layout_type=1)
    assert d.value == (0x400 >> 4) | (1 << 16) | (64 << 32) | (1 << 62)
    assert decode_gmma_descriptor(d.value) == d
    f = {row["name"]: row for row in d.fields()}
    assert f["stride_byte_offset"]["encoded"] == 64 and f["layout_type"]["meaning"] == "SWIZZLE_128B"
    assert f["start_address"]["bits"] == "[0,14)"
    with pytest.raises(LayoutError, match="multiple of 16"):
        GmmaDescriptor(8, 16, 1024, 1)
    with pytest.raises(LayoutError, match="14-bit"):
        GmmaDescriptor(1 << 18, 16, 1024, 1)
    with pytest.raises(LayoutError, match="layout_type"):
        GmmaDescriptor(0, 16, 1024, 4)


@pytest.mark.parametrize(("major", "span", "lbo", "sbo", "code"), [
    ("K", 128, 16, 1024, 1), ("K", 64, 16, 512, 2), ("K", 32, 16, 256, 3), ("K", 16, 2048, 128, 0),
    ("MN", 128, 1024, 2048, 1), ("MN", 64, 512, 2048, 2),
])
def test_make_gmma_desc_from_the_tiled_atom(major, span, lbo, sbo, code):
    from algebra.hw.hopper import make_gmma_desc

    d = make_gmma_desc(smem_atom(major, span, 16), 128, 64, start_address=0x800)
    assert (d.leading_byte_offset, d.stride_byte_offset, d.layout_type) == (lbo, sbo, code)
    assert d.start_address == 0x800 and decode_gmma_descriptor(d.value) == d


def test_make_gmma_desc_refuses_a_partial_tile():
    from algebra.hw.hopper import make_gmma_desc

    with pytest.raises(LayoutError, match="multiple"):
        make_gmma_desc(smem_atom("K", 128, 16), 100, 64)


@pytest.mark.parametrize("major", ["K", "MN"])
@pytest.mark.parametrize("span", [16, 32, 64, 128])
@pytest.mark.parametrize("bits", [8, 16, 32])
def test_gmma_and_umma_read_one_canonical_layout(major, span, bits):
    # CuTe's UMMA reuses GMMA's smem atoms: on the first K-block of the same tile, make_gmma_desc and make_umma_desc
    # read the same LBO and SBO (one canonical-layout reader, hopper.canonical_strides, under both)
    from algebra.core.ops import composition
    from algebra.hw import sm100_smem
    from algebra.hw.hopper import make_gmma_desc

    atom = smem_atom(major, span, bits)
    mn, kblock = 2 * atom.shape[0], 256 // bits
    k = max(kblock, atom.shape[1])
    g = make_gmma_desc(atom, mn, k)
    tile = sm100_smem.tile_atom(atom, mn, k)
    first = tile.with_layout_b(composition(tile.layout_b, (mn, kblock))) if hasattr(tile, "layout_b") else \
        composition(tile, (mn, kblock))
    u = sm100_smem.decode_umma_desc(sm100_smem.umma_desc(first, bits, major))
    assert (u["leading_byte_offset"], u["stride_byte_offset"]) == (g.leading_byte_offset, g.stride_byte_offset)
