"""CuTe's kernel vocabulary (CONTRACT §7): tiled MMA TV layouts, partition shapes and fragments, the tiled copies that
feed an MMA, make_tiled_copy from a TV layout, coverage, local_tile with a projection and coordinate tensors. The
expected values are CuTe C++'s (tests/oracle/data/vocab_s7.json, printed by tests/oracle/cute_vocab.py; the live
comparison is tests/oracle/test_vocab_oracle.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import algebra as A
from algebra import atoms

ORACLE = Path(__file__).resolve().parent / "oracle"
sys.path.insert(0, str(ORACLE))

import cute_vocab  # noqa: E402

RECORDS = json.loads((ORACLE / "data" / "vocab_s7.json").read_text())
#: seed 9701: partitions and slices of tensors, coordinate tensors (make_identity_tensor) among them, which
#: partition_A/B/C, partition_S/D and local_partition refused before
TENSORS = json.loads((ORACLE / "data" / "vocab_s9701.json").read_text())
#: seed 10801: 60 fresh cases (every kind) that CuTe C++ and we agreed on, kept so that a change is checked against them
FRESH = json.loads((ORACLE / "data" / "vocab_s10801.json").read_text())
#: seeds 11921 (--wide: permuted tiled MMAs of more atoms, wgmma included, tiles off the grid, their tiled copies) and
#: 11931 (--umma: tiled MMAs of tcgen05.mma atoms, 1 and 2 CTAs), as CuTe C++ printed them
WIDE = json.loads((ORACLE / "data" / "vocab_s119xx.json").read_text())


@pytest.mark.parametrize("i", range(len(RECORDS)))
def test_equal_to_cute_cpp(i):
    rec = RECORDS[i]
    ours = cute_vocab.ours(i, rec["case"])
    assert ours and set(ours) == {k for k in rec["cute"] if k.split(".")[0] == str(i)}
    for key, val in ours.items():
        assert rec["cute"][key] == val, (key, rec["case"])


@pytest.mark.parametrize("i", range(len(TENSORS)))
def test_tensor_partitions_and_slices_equal_cute_cpp(i):
    rec = TENSORS[i]
    ours = cute_vocab.ours(i, rec["case"])
    assert ours and set(ours) == {k for k in rec["cute"] if k.split(".")[0] == str(i)}
    for key, val in ours.items():
        assert rec["cute"][key] == val, (key, rec["case"])


@pytest.mark.parametrize("i", range(len(FRESH)))
def test_fresh_cases_still_equal_cute_cpp(i):
    rec = FRESH[i]
    ours = cute_vocab.ours(i, rec["case"])
    assert ours and set(ours) == {k for k in rec["cute"] if k.split(".")[0] == str(i)}
    for key, val in ours.items():
        assert rec["cute"][key] == val, (key, rec["case"])


@pytest.mark.parametrize("i", range(len(WIDE)))
def test_permuted_and_blackwell_tiled_mmas_equal_cute_cpp(i):
    rec = WIDE[i]
    try:
        ours = cute_vocab.ours(i, rec["case"])
    except A.LayoutError as exc:  # a thread's MMA tile past a tensor smaller than the tile: CuTe's print is named
        assert any(f"CuTe prints {rec['cute'][f'{i}.part{op}']} @ {rec['cute'][f'{i}.off{op}']}," in str(exc)
                   for op in "ABC"), str(exc)
        return
    assert ours and set(ours) == set(rec["cute"])
    for key, val in ours.items():
        assert rec["cute"][key] == val, (key, rec["case"])


def test_the_corpus_covers_the_vocabulary():
    kinds = {r["case"]["kind"] for r in RECORDS}
    atoms_seen = {r["case"]["atom"][:4] for r in RECORDS if r["case"]["kind"] == "mma"}
    assert kinds == {"mma", "copy", "copy_tv", "tile"} and {"SM70", "SM80", "SM90"} <= atoms_seen
    assert any(p is not None for r in RECORDS if r["case"]["kind"] == "mma" for p in r["case"]["perm"])
    copies = {c for r in RECORDS if r["case"]["kind"] == "mma" for c in r["case"]["copies"].values()}
    assert any("LDSM" in c for c in copies) and any("CP_ASYNC" in c for c in copies)


# CuTe C++ printed these (host program, CUTLASS 4.2 headers)
SM80 = "SM80_16x8x16_F32F16F16F32_TN"


def test_sm80_2x2_layouts_and_shapes():
    mma = atoms.make_tiled_mma(SM80, atom_layout=A.Layout((2, 2, 1)))
    assert str(mma.get_layoutC_TV()) == "((4,8,2,2),((2,2),(1,1))):((64,1,16,256),((32,8),(0,0)))"
    assert str(mma.get_layoutA_TV()) == "((4,8,2,2),((2,2,2),(1,1))):((64,1,16,0),((32,8,256),(0,0)))"
    assert str(mma.get_layoutB_TV()) == "((4,8,2,2),((2,2),(1,1))):((32,1,0,8),((16,128),(0,0)))"
    assert mma.partition_shape_A((64, 32)) == ((2, 2, 2), 2, 2)
    assert mma.partition_shape_C((64, 64)) == ((2, 2), 2, 4)
    frag = mma.partition_fragment_C(A.Layout((64, 64)), 37)
    assert str(frag) == "((2,2),2,4):((1,2),4,8)"
    cp = atoms.make_tiled_copy_A("SM75_U32x4_LDSM_N", mma, element_bits=16)
    assert cp.tiler == (32, 16) and cp.tv_layout == mma.get_layoutA_TV()


def test_sm70_partitions_no_longer_fail():
    mma = atoms.make_tiled_mma("SM70_8x8x4_F32F16F16F32_TN", atom_layout=A.Layout((2, 2, 1)))
    for t in (0, 5, 17, 31):
        frag, _ = mma.partition_A(A.Layout((32, 8)), t)
        assert A.size(frag) == A.size(mma.partition_fragment_A(A.Layout((32, 8)), t))
        frag, _ = mma.partition_C(A.Layout((32, 32)), t)
        assert A.size(frag) == 32


def test_make_tiled_copy_forms_agree():
    thr, val = A.Layout((16, 8), (8, 1)), A.Layout((1, 8))
    a = atoms.make_tiled_copy("SM80_CP_ASYNC_CACHEALWAYS_16B", thr, val, element_bits=16)
    b = atoms.make_tiled_copy("SM80_CP_ASYNC_CACHEALWAYS_16B", layout_tv=a.tv_layout, tiler=a.tiler,
                              element_bits=16)
    assert a == b and a.coverage() == {"duplicates": 0, "uncovered": 0}
    assert str(a.get_layoutS_TV()) == "((8,16),(8,1)):((128,1),(16,0))"


def test_coverage_finds_duplicates_and_holes():
    tc = atoms.make_tiled_copy("SM80_CP_ASYNC_CACHEALWAYS_16B", A.parse("(16,8):(8,0)"), A.parse("(1,8):(8,1)"), 16)
    cov = tc.coverage()
    assert set(cov) == {"duplicates", "uncovered"} and cov["duplicates"] > 0 and cov["uncovered"] > 0
    d = tc.coverage_detail()
    tv = tc.tv_layout
    for e in d["duplicate_elements"]:
        r, c = e["element"]
        assert len(e["claims"]) > 1 and all(tv((t, v)) == r + 16 * c for t, v in e["claims"])
    held = {tv((t, v)) for t in range(128) for v in range(8)}
    assert all(r + 16 * c not in held for r, c in d["uncovered_elements"])
    assert cov["uncovered"] == 16 * 64 - len(held & set(range(16 * 64)))
    # claims past the tile are neither
    out = atoms.make_tiled_copy("UniversalCopy_32b", layout_tv=A.parse("(8,2):(1,8)"), tiler=(8,), element_bits=32)
    assert out.coverage() == {"duplicates": 0, "uncovered": 0} and out.coverage_detail()["outside"] == 8


@pytest.mark.parametrize(("call", "needle"), [
    (lambda: atoms.make_tiled_copy_B("SM75_U32x4_LDSM_N", atoms.make_tiled_mma(SM80, A.Layout((2, 2, 1))), 16),
     "too few values"),
    (lambda: atoms.make_tiled_copy("SM75_U32x4_LDSM_N", layout_tv=A.parse("(16,8):(8,1)"), tiler=(16, 8)),
     "too few threads"),
    (lambda: atoms.make_tiled_mma(SM80, A.Layout((2, 2, 1))).partition_fragment_C(A.Layout((64, 64)), 128),
     "out of range"),
    (lambda: atoms.make_tiled_copy("SM75_U32x4_LDSM_N", layout_tv=A.parse("(32,8):(8,1)"), tiler="x"), "tiler"),
])
def test_refusals_name_the_condition(call, needle):
    with pytest.raises(A.LayoutError, match=needle):
        call()


def test_local_tile_with_a_projection():
    g = A.Layout((128, 64))
    assert A.local_tile(g, (32, 16, 8), (1, 2, None), (1, None, 1)) == A.local_tile(g, (32, 8), (1, None))
    assert A.local_tile(g, (32, 16, 8), (1, 2, None), (1, 1, None)) == A.local_tile(g, (32, 16), (1, 2))
    with pytest.raises(A.LayoutError, match="projection"):
        A.local_tile(g, (32, 16), (1, 2, 0), (1, None, 1))


@pytest.mark.parametrize("text", ["ArithTuple(2,3) o (4,4):(_1@0,_1@1)", "ArithTuple(2,3) o (4,4):(1@0,1@1)",
                                  "(2,3) o (4,4):(1@0,1@1)", "ArithTuple(_0,_0) o (_64,_32):(_1@0,_1@1)",
                                  "ArithTuple(1,(2,3)) o (2,(2,2)):(1@0,(1@0@1,1@1@1))"])
def test_coordinate_tensors_round_trip_and_evaluate(text):
    x = A.parse(text)
    assert A.parse(str(x)) == x and str(x).startswith("ArithTuple(")
    lay = x.layout
    for i in range(A.size(lay)):
        v = lay(i)
        vec = v.as_tuple() if hasattr(v, "as_tuple") else ()
        want = A.arith.ArithTuple.of(x.origin) + vec
        assert A.arith.ArithTuple.of(x(i)) == want


def test_coordinate_tensor_values():
    x = A.parse("ArithTuple(2,3) o (4,4):(_1@0,_1@1)")
    assert x(0) == (2, 3) and x(5) == (3, 4) and x(15) == (5, 6) and x((1, 2)) == (3, 5)
    for bad in ("ArithTuple(2,3)", "(2,3) o 4:1"):
        with pytest.raises(A.LayoutError):
            A.parse(bad)


def test_api_tiled_and_partition(client):
    r = client.post("/api/tiled", json={"atom": "SM75_U32x4_LDSM_N", "mma": SM80, "atom_layout": "(2,2,1)",
                                        "operand": "A"})
    assert r.status_code == 200, r.text
    j = r.json()
    assert j["tiler"] == [32, 16] and j["tv_layout"] == "((4,8,2,2),((2,2,2),(1,1))):((64,1,16,0),((32,8,256),(0,0)))"
    bad = client.post("/api/tiled", json={"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "thr_layout": "(16,8):(8,0)",
                                          "val_layout": "(1,8):(8,1)"}).json()
    assert bad["coverage"]["duplicates"] > 0 and "claimed more than once" in bad["problem"]
    p = client.post("/api/partition", json={"atom": SM80, "atom_layout": "(2,2,1)", "thread": 37,
                                            "tile": "64,64,32"}).json()
    assert p["fragments"]["C"] == "((2,2),2,4):((1,2),4,8)" and p["partition_shapes"]["A"] == "((2,2,2),2,2)"
    for body, needle in (({"atom": SM80, "atom_layout": "(2,2,1)", "thread": 128}, "out of range"),
                         ({"atom": SM80, "atom_layout": "(2,2,1)", "tile": "64,30,16"}, "does not divide")):
        r = client.post("/api/partition", json=body)
        assert r.status_code == 422 and needle in r.json()["detail"]
    r = client.post("/api/tiled", json={"atom": "SM75_U32x4_LDSM_N", "mma": SM80, "atom_layout": "(2,2,1)",
                                        "operand": "B"})
    assert r.status_code == 422 and "does not fit" in r.json()["detail"]


@pytest.mark.parametrize("side", ["src", "dst"])
@pytest.mark.parametrize("text", ["(16,64):(1@0,1@1)", "ArithTuple(0,0) o (16,64):(1@0,1@1)"])
def test_copy_partition_of_a_coordinate_tensor_is_refused_with_a_reason(client, side, text):
    """The copy walk draws memory tensors by offset: a coordinate tensor as source or destination answered 500
    (its ArithTuple origin could not be written as JSON) or 'cannot evaluate this input'."""
    r = client.post("/api/partition", json={"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", side: text})
    assert r.status_code == 422, r.text
    assert "basis (E) strides" in r.json()["detail"] and "integer offsets" in r.json()["detail"]
    page = client.get("/tv", params={"panel": "copywalk", f"cw_{side}": text})
    assert page.status_code in (200, 422) and "basis (E) strides" in page.text



def test_a_copy_partition_over_the_drawn_cell_cap_is_refused_before_its_grids(client):
    """Two 256x256 tensors (each under the 65,536-cell render cap) drew the source grid and the copy table first and
    were refused at the destination grid, 2.5 s later: the walk's grids are now estimated before any is built, and
    the refusal names the drawn-cell cap."""
    from app import budget
    from app.services import walkthrough as W

    body = {"atom": "UniversalCopy_32b", "thr_layout": "(32,32)", "val_layout": "(1,2)", "thread": 5,
            "src": "(256,256)", "dst": "(256,256)"}
    r = client.post("/api/partition", json=body)
    assert r.status_code == 422 and "draw 131,072 cells, over the work cap of 87,381 drawn cells" in r.text, r.text
    with budget.within_budget() as b, pytest.raises(A.LayoutError, match="drawn cells per request"):
        W.copy_walk("UniversalCopy_32b", "(32,32)", "(1,2)", 16, "(256,256)", "(256,256)", "5")
    assert not [w for w, _ in b.charges if w.startswith(("grid walk", "copy table"))], b.charges
    ok = client.post("/api/partition", json={**body, "src": "(128,128)", "dst": "(128,128)"})
    assert ok.status_code == 200 and len(ok.json()["parts"][0]["cells"]) == 16


#: Copy_Atom<Op, T> that CuTe C++ does not compile (static_assert "CopyOperation is not valid for Src / Dst / Ref of
#: ValType": a recast layout with fewer threads than the atom), from every copy atom of cute_vocab.COPIES with 8-, 16-,
#: 32- and 64-bit T (seed range 13450-13499's audit); the other pairs print what atoms.get(op).src/dst/ref_layout give
INVALID_T = [("SM75_U32x2_LDSM_N", 64), ("SM75_U32x4_LDSM_N", 64), ("SM75_U16x2_LDSM_T", 32), ("SM75_U16x4_LDSM_T", 32),
             ("SM75_U16x4_LDSM_T", 64), ("SM75_U16x8_LDSM_T", 32), ("SM75_U16x8_LDSM_T", 64), ("SM90_U32x2_STSM_N", 64),
             ("SM90_U32x4_STSM_N", 64)]


@pytest.mark.parametrize("op,bits", INVALID_T)
def test_copy_atoms_refuse_the_element_types_cute_refuses(client, op, bits):
    """ldmatrix / stmatrix hold 32-bit registers (the .trans forms 16-bit halves): with 64-bit (32-bit) T a recast
    layout has 16 threads for 32, and the page drew a 16-thread TV layout (make_tiled_copy_A of an F64 MMA with
    SM90_U32x4_STSM_N passed; CuTe does not compile it). Refused wherever the atom is used, naming CuTe's assert."""
    atom = atoms.get(op)
    with pytest.raises(A.LayoutError, match="CopyOperation is not valid for (Src|Dst|Ref) of ValType"):
        atom.src_layout(bits)
    with pytest.raises(A.LayoutError, match="cannot move"):
        atoms.make_tiled_copy(op, A.Layout((32, 1)), A.Layout((1, 8)), element_bits=bits)
    r = client.post("/api/tiled", json={"atom": op, "element_bits": bits, "thr_layout": "(32,1)",
                                        "val_layout": "(1,8)"})
    assert r.status_code == 422 and "CopyOperation is not valid" in r.json()["detail"], r.text
    if bits == 64:
        tm = atoms.make_tiled_mma("SM80_8x8x4_F64F64F64F64_TN")
        with pytest.raises(A.LayoutError, match="cannot move 64-bit elements"):
            atoms.make_tiled_copy_A(op, tm, element_bits=64)


def test_a_copy_narrower_than_its_element_is_refused_with_cutes_print():
    """CuTe C++ compiles Copy_Atom<UniversalCopy<uint32_t>, double> and prints ValLayoutSrc (1,1):(0,1) (its recast
    rounds 32 bits up to one 64-bit element): refused here, and the refusal now says what CuTe prints."""
    for op, bits in (("UniversalCopy_32b", 64), ("UniversalCopy_16b", 32), ("UniversalCopy_16b", 64)):
        with pytest.raises(A.LayoutError, match=r"not a whole number .*CuTe's recast rounds up and prints "
                                                r"\(1,1\):\(0,1\)"):
            atoms.get(op).src_layout(bits)


def test_copy_atoms_keep_the_element_types_cute_takes():
    """CuTe C++'s ValLayoutSrc / ValLayoutDst of ldmatrix / stmatrix x4 with 32-bit T (tf32 operands)."""
    ld, st = atoms.get("SM75_U32x4_LDSM_N"), atoms.get("SM90_U32x4_STSM_N")
    assert (str(ld.src_layout(32)), str(ld.dst_layout(32))) == ("(32,4):(4,1)", "(32,(1,4)):(1,(1,32))")
    assert (str(st.src_layout(32)), str(st.dst_layout(32))) == ("(32,(1,4)):(1,(1,32))", "(32,4):(4,1)")


def test_a_permutation_with_holes_never_lists_cells_off_the_operand(client):
    """make_tiled_mma's N entry (8,2):(1,16) has size 16 and cosize 24: the tiles step by 16, so thread 64 (the atom at
    N = 1) holds B rows 16.. and C columns 16.. of a 16-wide tile. /api/partition listed them wrapped into the tensor
    (B (0,1) for row 16) and past it (C (0,16) of a 32x16 C); /api/tiled and the kernel path answered "cannot evaluate
    this input (IndexError ...)". Each is refused before the partition, naming the permutation and the divide that
    reaches past the operand; a tile that covers the holes (N = 32) is answered, every cell inside its operand."""
    body = {"atom": SM80, "permutation": "_,(8,2):(1,16),_", "thread": 64}
    r = client.post("/api/partition", json=body)
    assert r.status_code == 422, r.text
    assert "the permutation's N entry (8,2):(1,16) (size 16, cosize 24) divides the 16x16 B's 16 into " \
        "((8,2),2):((1,16),8), which reaches 31: past the tensor" in r.json()["detail"], r.text
    ok = client.post("/api/partition", json={**body, "tile": "32,32,16"})
    assert ok.status_code == 200, ok.text
    for part in ok.json()["parts"]:
        assert all(0 <= i < part["rows"] and 0 <= j < part["cols"] for i, j in part["cells"]), part
    t = client.post("/api/tiled", json={"atom": SM80, "atom_layout": "(2,2,1)", "permutation": "_,(8,2):(1,16),_"})
    assert t.status_code == 422 and "past the tensor" in t.text and "IndexError" not in t.text, t.text
    page = client.get("/tv", params={"panel": "kernel", "kp_perm": "_,(8,2):(1,16),_", "kp_layout": "(2,2,1)",
                                     "kp_cta": "32,16,16", "kp_a": "UniversalCopy_32b", "kp_b": "UniversalCopy_32b",
                                     "kp_c": "UniversalCopy_32b"})
    assert "which reaches 31: past the tensor" in page.text and "IndexError" not in page.text


def test_a_rank_1_tiler_with_holes_or_duplicates_is_named_not_a_500(client):
    """make_tiled_copy(atom, layout_tv, tiler = (128)) leaves 64 holes: the coverage words unpacked each element as
    (row, col) and /api/tiled answered 500. A rank-1 tile is drawn as one row; its elements are named as CuTe's
    coordinates, (64)."""
    r = client.post("/api/tiled", json={"atom": "UniversalCopy_32b", "layout_tv": "(32,2):(1,32)", "tiler": "128"})
    assert r.status_code == 200, r.text
    j = r.json()
    assert j["coverage"]["uncovered"] == 64 and "64 element(s) are claimed by no thread (holes), e.g. (64), (65)" in \
        j["problem"], j["problem"]
    r = client.post("/api/tiled", json={"atom": "UniversalCopy_32b", "layout_tv": "(32,2):(1,0)", "tiler": "32"})
    assert r.status_code == 200 and "(0) by T0V0, T0V1" in r.json()["problem"], r.text

def test_tv_page_names_the_duplicates(client):
    r = client.get("/tv", params={"tatom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "tthr": "(16,8):(8,0)",
                                  "tval": "(1,8):(8,1)", "kp_t": "0"})  # kp_t: the kernel path comes open
    assert r.status_code == 200
    assert 'id="tiled-coverage"' in r.text and "claimed more than once" in r.text and "holes" in r.text
    assert "T0V1" in r.text or "T1V0" in r.text
    for k in range(1, 6):
        assert f'id="kp-step-{k}"' in r.text


SW128 = "Sw<3,3,3> o ((8,16),(64,1)):((64,512),(1,0))"


def test_tma_atom_box_cluster_and_partition():
    from algebra.hw import tma

    g = A.Layout((4096, 4096), (4096, 1))
    one = tma.make_tma_atom("SM90_TMA_LOAD", g, A.parse(SW128), (128, 64))
    assert one.dims == ((1,), (0,)) and one.box == (64, 128) and one.instructions == 1
    assert str(one.tma_tensor()) == "ArithTuple(0,0) o (4096,4096):(1@1,1@0)"
    assert A.parse(str(one.tma_tensor())) == one.tma_tensor()
    two = tma.make_tma_atom("SM90_TMA_LOAD_MULTICAST", g, A.parse(SW128), (128, 64), 2)
    assert two.full_box == (64, 128) and two.box == (64, 64) and two.chunk == 4096
    owners = [two.owner(i) for i in range(128 * 64)]
    assert owners.count((0, 0)) == owners.count((0, 1)) == 4096
    assert all(two.owner(m + 128 * k)[1] == m // 64 for m in (0, 63, 64, 127) for k in (0, 63))
    p = [two.partition(r, (1, 2)) for r in range(2)]
    assert p[0]["source"](0) == (128, 128) and p[1]["source"](0) == (128, 192)
    assert p[1]["smem_offset"] == 0 and p[1]["destination"].offset == 4096 and two.encode().valid  # CuTe: see below
    k128 = tma.make_tma_atom("SM90_TMA_LOAD", g, A.parse("Sw<3,3,3> o ((8,16),(64,2)):((64,512),(1,8192))"),
                             (128, 128))
    assert k128.box == (64, 128) and k128.instructions == 2
    for call, needle in ((lambda: tma.make_tma_atom("SM90_TMA_LOAD", g, A.Layout((128, 64)), (128, 64)),
                          "contiguous in global memory"),
                         (lambda: tma.make_tma_atom("SM90_TMA_LOAD", g, A.parse(SW128), (128, 64), 2), "MULTICAST"),
                         (lambda: tma.make_tma_atom("SM90_TMA_LOAD", g, A.parse(SW128), (64, 64)), "shape"),
                         (lambda: tma.make_tma_atom("SM90_TMA_LOAD", A.Layout((4096, 100), (100, 1)),
                                                    A.parse(SW128), (128, 64)), "multiple of 16 bytes")):
        with pytest.raises(A.LayoutError, match=needle):
            call()


def test_tma_partition_as_cute_returns_it():
    """tma_partition(atom, r, Layout<N>{}, group_modes<0,R>(sA), group_modes<0,R>(gA)) as CuTe C++ prints it
    (tests/oracle/cute_tma.py --partition, seeds 12700-12702): rank 1, ((TMA, TMA_Iter)), each part coalesced; the TMA
    mode is the whole instruction (all CTAs), domain-offset to CTA r's share (it was cut to the share, rank 2); a
    swizzled destination carries the offset in its layout, the pointer stays (it was the pointer's offset)."""
    from algebra.hw import tma

    g = A.Layout((4096, 4096), (4096, 1))
    four = tma.make_tma_atom("SM90_TMA_LOAD_MULTICAST", g, A.parse("Sw<3,3,3> o ((8,16),(64,2)):((64,512),(1,8192))"),
                             (128, 128), 4)
    p = four.partition(1, (2, 1))
    assert str(p["source"]) == "ArithTuple(128,288) o (((64,128),2)):(((1@0,1@1),64@0))"
    assert (str(p["destination"]), p["smem_offset"]) == ("Sw<3,3,3> o 2048 o ((8192,2)):((1,8192))", 0)
    assert str(p["loads"]) == "ArithTuple(128,288) o ((64,32),2):((1@0,1@1),64@0)"
    m = tma.make_tma_atom("SM90_TMA_LOAD_MULTICAST", A.parse("(8,16):(1,8)"), A.parse("(8,8):(1,8)"), (8, 8), 2)
    p = m.partition(1, (0, 1))
    assert (str(p["source"]), str(p["destination"]), p["smem_offset"]) == (
        "ArithTuple(96) o ((64,1)):((1@0,0))", "((64,1)):((1,0))", 32)
    # global modes 0 and 2 share TMA dimension 1 (coalesce_256): CuTe scales them by run-time ints, and its coalesce
    # leaves (64,4):(1@1,64@1) unmerged (it was 256:1@1)
    m = tma.make_tma_atom("SM90_TMA_LOAD_MULTICAST", A.parse("(64,32,4):(32,1,2048)"), A.parse("(64,16,4):(16,1,1024)"),
                          (64, 16, 4), 4, "UINT8")
    assert str(m.partition(3)["source"]) == "ArithTuple(0,192) o (((16,64,4),1)):(((1@0,1@1,64@1),0))"


def test_api_tma_partition(client):
    r = client.post("/api/tma/partition", json={"tensor": "(4096,4096):(4096,1)", "smem": SW128, "tile": "128,64",
                                                "cluster_size": 4})
    assert r.status_code == 200, r.text
    j = r.json()
    assert j["box"] == [64, 32] and len(j["partitions"]) == 4 and j["encode"]["valid"]
    assert {c for row in j["owners"] for c in row} == {"C0", "C1", "C2", "C3"}
    bad = client.post("/api/tma/partition", json={"tensor": "(4096,4096):(4096,1)", "smem": SW128, "tile": "128,64",
                                                  "cluster_size": 17})
    assert bad.status_code == 422 and "cluster_size" in bad.json()["detail"]
    three = client.post("/api/tma/partition", json={"tensor": "(4096,4096):(4096,1)", "smem": SW128,
                                                    "tile": "128,64", "cluster_size": 3})  # CuTe asserts: 128 % 3
    assert three.status_code == 422 and "does not divide the box" in three.json()["detail"]



def test_api_tma_partition_takes_a_cta_coordinate_with_a_zero(client):
    """cta_coord "1,0" (the second tile down the first mode) was refused as "not a list of positive integers", and
    "0,0,0" for a rank-2 tile was read as no coordinate: a tile coordinate is integers >= 0, its rank checked. The
    sources are CuTe's tma_partition of local_tile(get_tma_tensor(shape(g)), (128,64), coord)."""
    body = {"tensor": "(4096,4096):(4096,1)", "smem": SW128, "tile": "128,64"}
    for coord, origin in (("1,0", "(0,128)"), ("0,1", "(64,0)"), ("1,1", "(64,128)"), ("0,0", "(0,0)")):
        r = client.post("/api/tma/partition", json={**body, "cta_coord": coord})
        assert r.status_code == 200, r.text
        assert r.json()["partitions"][0]["source"] == f"ArithTuple{origin} o (((64,128),1)):(((1@0,1@1),0))"
    for coord, needle in (("0,0,0", "needs 2 entries"), ("-1,0", "integers >= 0"), ("2000000,0", "up to 2^20")):
        r = client.post("/api/tma/partition", json={**body, "cta_coord": coord})
        assert r.status_code == 422 and needle in r.json()["detail"], r.text

def test_local_tile_of_a_coordinate_tensor():
    """CuTe C++ prints these for local_tile(make_identity_tensor(shape), tiler, coord, proj)."""
    x = A.make_coord_tensor((0, 0), (32, 64))
    got = A.local_tile(x, (16, 32, 16), (1, 0, None), (None, 1, 1))
    assert str(got) == "ArithTuple(0,0) o (32,16,4):(1@0,1@1,16@1)"
    assert str(A.local_tile(x, (16, 16, 8), (2, 1, None), (None, 1, 1))) == "ArithTuple(16,0) o (16,8,8):(1@0,1@1,8@1)"
    t = A.local_tile(A.parse("ArithTuple(0,0) o (128,64):(_1@0,_1@1)"), (32, 16), (1, 2))
    assert t(0) == (32, 32) and t(31 + 32 * 15) == (63, 47)


def _loaded(m, cta):
    """Tile indices (column-major) whose TMA coordinate CTA ``cta``'s partition loads, through the coordinate tensor."""
    tile, shape, pos, coords = m.cta_tile, A.inttuple.wrap(m.gmem.shape), {}, m.tma_tensor()
    for k in range(A.size(tile)):
        crd = [k // A.size(tile[:j]) % tile[j] for j in range(len(tile))]  # column-major in the tile
        pos[coords(sum(x * A.size(shape[:j]) for j, x in enumerate(crd)))] = k
    src = m.partition(cta)["loads"]
    return [pos[src(k)] for k in range(A.size(src.layout))]


def test_tma_atoms_as_cute_builds_them():
    """make_tma_atom against CuTe C++ (tests/oracle/cute_tma.py, seeds 10830, 11300-11311): a size-1 global mode is
    no TMA dimension (stride 0 in get_tma_tensor; it was a third dimension 1@2); global modes contiguous over the box
    share one TMA dimension while its box is <= 256 elements (coalesce_256; they were refused, and before that two
    dimensions); strides TMA cannot address (CuTe asserts) are refused."""
    from algebra.hw import tma

    a = tma.make_tma_atom("SM90_TMA_LOAD_MULTICAST", A.parse("(128,512,1):(512,1,512)"),
                          A.parse("(128,64,1):(64,1,8192)"), (128, 64, 1), 2)
    assert str(a.tma_tensor()) == "ArithTuple(0,0) o (128,512,1):(1@1,1@0,0)"  # CuTe's print
    assert (a.dims, a.full_box, a.box) == (((1,), (0,)), (64, 128), (64, 64))
    assert str(a.gbasis()) == "(64,128):(1@1,1@0)"  # construct_tma_gbasis
    for g, s, t, c, bits, tensor, gbasis in (  # CuTe's get_tma_tensor and construct_tma_gbasis prints
            ("(8,16):(1,8)", "(8,8):(1,8)", (8, 8), 2, "FLOAT16", "ArithTuple(0) o (8,16):(1@0,8@0)",
             "((8,8)):((1@0,1@1))"),
            ("(64,64,4):(256,4,1)", "(16,64,4):(256,4,1)", (16, 64, 4), 1, "FLOAT32",
             "ArithTuple(0,0) o (64,64,4):(1@1,4@0,1@0)", "((4,64),16):((1@2,1@1),1@0)"),
            ("(16,32,64):(1,16,512)", "(16,16,8):(1,16,256)", (16, 16, 8), 4, "UINT8",
             "ArithTuple(0,0) o (16,32,64):(1@0,16@0,1@1)", "((16,16),8):((1@0,1@1),1@2)"),
            ("(64,8,16):(1,64,512)", "(64,8,16):(1,64,512)", (64, 8, 16), 2, "FLOAT16",
             "ArithTuple(0,0) o (64,8,16):(1@0,1@1,8@1)", "(64,(8,16)):(1@0,(1@1,1@2))"),
            ("(64,16,32):(1,64,1024)", "(64,8,16):(1,64,512)", (64, 8, 16), 1, "FLOAT16",
             "ArithTuple(0,0,0) o (64,16,32):(1@0,1@1,1@2)", "(64,8,16):(1@0,1@1,1@2)")):
        m = tma.make_tma_atom("SM90_TMA_LOAD_MULTICAST" if c > 1 else "SM90_TMA_LOAD", A.parse(g), A.parse(s), t, c,
                              bits)
        assert (str(m.tma_tensor()), str(m.gbasis())) == (tensor, gbasis)
        assert m.encode().valid and sorted(i for p in range(c) for i in _loaded(m, p)) == list(range(A.size(t)))
    m = tma.make_tma_atom("SM90_TMA_LOAD_MULTICAST", A.parse("(8,16):(1,8)"), A.parse("(8,8):(1,8)"), (8, 8), 2)
    assert m.problem() == [(128, 1)] and m.box == (32,) and str(m.partition(1, (0, 1))["loads"]) == \
        "ArithTuple(96) o (32,1):(1@0,0)"  # one 1-D dimension of 128 elements; CTA 1 loads 96..127
    for g, s, t, c, bits, words in (("(32,256,32):(1,40,10240)", "(16,64,4):(1,64,16)", (16, 64, 4), 4, "UINT8",
                                     "multiple of 16 bytes"),):
        with pytest.raises(A.LayoutError, match=words):
            tma.make_tma_atom("SM90_TMA_LOAD_MULTICAST" if c > 1 else "SM90_TMA_LOAD", A.parse(g), A.parse(s), t, c,
                              bits)



@pytest.mark.parametrize("g,s,t,c,coord,tensor,sources", [  # CuTe C++'s get_tma_tensor and tma_partition prints
    ("(64,256):(0,1)", "(64,64):(64,1)", (64, 64), 2, (0, 2), "ArithTuple(0) o (64,256):(0,1@0)",
     ["ArithTuple(128) o (((64,64),1)):(((1@0,0),0))"] * 2),
    ("(256,64):(1,0)", "(64,64):(1,64)", (64, 64), 2, (1, 0), "ArithTuple(0) o (256,64):(1@0,0)",
     ["ArithTuple(64) o (((64,64),1)):(((1@0,0),0))"] * 2),
    ("(256,4,64):(1,0,256)", "(64,4,16):(1,1024,64)", (64, 4, 16), 4, (1, 0, 2),
     "ArithTuple(0,0) o (256,4,64):(1@0,0,1@1)", ["ArithTuple(64,32) o (((64,16,4),1)):(((1@0,1@1,0),0))"] * 4),
    ("(256,1,64):(1,0,256)", "(64,1,16):(1,64,64)", (64, 1, 16), 1, (1, 0, 2),
     "ArithTuple(0,0) o (256,1,64):(1@0,0,1@1)", ["ArithTuple(64,32) o (((64,16),1)):(((1@0,1@1),0))"]),
])
def test_tma_coordinates_of_a_broadcast_global_mode(g, s, t, c, coord, tensor, sources):
    """A global mode of stride 0 (a broadcast) that shared memory walks last has no TMA coordinate: CuTe's
    coordinate tensor is make_coord_tensor of the strides, whose coprofile ends at the last dimension a mode walks
    (tests/oracle/cute_tma.py's program on these cases; seed range 13450-13499). It printed ArithTuple(0,0) for
    (64,256):(0,1)."""
    from algebra.hw import tma

    m = tma.make_tma_atom("SM90_TMA_LOAD_MULTICAST" if c > 1 else "SM90_TMA_LOAD", A.parse(g), A.parse(s), t, c)
    assert str(m.tma_tensor()) == tensor
    assert [str(m.partition(r, coord)["source"]) for r in range(c)] == sources

def test_tma_tiles_off_the_grid_any_cluster_and_more_than_five_dimensions():
    """CuTe C++ (tests/oracle/cute_tma.py --wide, seeds 11910-11913): a CTA tile need not divide the global tensor (TMA
    fills past the edge; it was refused), a cluster of 3 CTAs multicasts where it divides the box (refused as not a
    power of 2), a TMA dimension past the fourth is grouped into the fifth (``group<4,-1>``: a 1-tuple at rank 5; a
    6th dimension was refused); a folded box not read at one stride is refused with CuTe's print, a folded merged
    dimension because CuTe does not compile it."""
    from algebra.hw import tma

    for g, s, t, c, bits, tensor, gbasis in (  # CuTe's get_tma_tensor and construct_tma_gbasis prints
            ("(104,72):(1,104)", "(64,32):(1,64)", (64, 32), 8, "FLOAT16", "ArithTuple(0,0) o (104,72):(1@0,1@1)",
             "(64,32):(1@0,1@1)"),
            ("(200,100):(1,200)", "(64,96):(1,64)", (64, 96), 3, "FLOAT16", "ArithTuple(0,0) o (200,100):(1@0,1@1)",
             "(64,96):(1@0,1@1)"),
            ("(35,32,2,12,26):(1,48,1536,3104,37264)", "(16,8,1,4,1):(1,16,0,128,0)", (16, 8, 1, 4, 1), 4, "UINT8",
             "ArithTuple(0,0,0,0,0) o (35,32,2,12,26):(1@0,1@1,1@3,1@2,1@4)", "(16,8,4,1,(1)):(1@0,1@1,1@3,1@2,(1@4))"),
            ("(16,192,8,3,6,12):(1,16,3072,24584,73752,442512)", "(16,64,4,1,1,4):(1,16,1024,0,0,4096)",
             (16, 64, 4, 1, 1, 4), 8, "FLOAT16", "ArithTuple(0,0,0,0,0) o (16,192,8,3,6,12):(1@0,1@1,1@2,1@4,3@4,1@3)",
             "(16,64,4,4,(1,1)):(1@0,1@1,1@2,1@5,(1@3,1@4))")):
        m = tma.make_tma_atom("SM90_TMA_LOAD_MULTICAST" if c > 1 else "SM90_TMA_LOAD", A.parse(g), A.parse(s), t, c,
                              bits)
        assert (str(m.tma_tensor()), str(m.gbasis())) == (tensor, gbasis)
    assert tma.make_tma_atom("SM90_TMA_LOAD_MULTICAST", A.parse("(200,100):(1,200)"), A.parse("(64,96):(1,64)"),
                             (64, 96), 3).box == (64, 32)
    m = tma.make_tma_atom("SM90_TMA_LOAD_MULTICAST", A.parse("(40,12):(1,40)"), A.parse("(16,6):(1,16)"), (16, 6), 3)
    assert m.box == (16, 2) and sorted(i for p in range(3) for i in _loaded(m, p)) == list(range(96))
    seven = "(8,2,2,2,2,2,2):(1,16,64,256,1024,4096,16384)"
    with pytest.raises(A.LayoutError, match=r"CuTe prints ArithTuple\(0,0,0,0,0\) o \(8,2,2,2,2,2,2\):\(1@0,1@1,1@2,"
                                            r"1@3,1@4,4@4,16@4\)"):
        tma.make_tma_atom("SM90_TMA_LOAD", A.parse(seven), A.parse("(8,2,2,2,2,2,2)"), (8, 2, 2, 2, 2, 2, 2))
    with pytest.raises(A.LayoutError, match="does not compile"):
        tma.make_tma_atom("SM90_TMA_LOAD", A.parse("(64,2,2,2,4,8):(1,128,512,2048,8192,32768)"),
                          A.parse("(64,2,2,2,4,8)"), (64, 2, 2, 2, 4, 8))


def test_tiled_mma_of_blackwell_umma_atoms():
    """make_tiled_mma of a tcgen05.mma atom (1 and 2 CTAs) as CuTe C++ prints it (seed 11931 of
    tests/oracle/cute_vocab.py --umma); it was refused ("is a copy atom"). The fragments are descriptors and TMEM:
    refused by name, not drawn as registers. A thread whose MMA tile starts past a tensor smaller than the tiled
    MMA's tile is refused with CuTe's print (its origin is off the tensor; we gave offset 0, thread 0's tile)."""
    from algebra.hw import sm100

    one = atoms.make_tiled_mma(sm100.umma("f16", 128, 256, "K", "K", 1, "smem", "f16", "f32"))
    assert [str(one.get_layout_TV(op)) for op in "ABC"] == [
        "(1,((128,16),(1,1))):(0,((1,128),(0,0)))", "(1,((256,16),(1,1))):(0,((1,256),(0,0)))",
        "(1,((128,256),(1,1))):(0,((1,128),(0,0)))"]
    assert one.partition_shape_A((256, 64)) == ((128, 16), 2, 4)
    part, off = one.partition_A(A.make_layout_row_major((256, 64)), 0)
    assert (str(part), off) == ("((128,16),2,4):((64,1),8192,16)", 0)
    two = atoms.make_tiled_mma(sm100.umma("f16", 256, 128, "K", "MN", 2, "smem", "f16", "f32"))
    assert [str(two.get_layout_TV(op)) for op in "ABC"] == [
        "(2,((128,16),(1,1))):(128,((1,256),(0,0)))", "(2,((64,16),(1,1))):(64,((1,128),(0,0)))",
        "(2,((128,128),(1,1))):(128,((1,256),(0,0)))"]
    part, off = two.partition_A(A.Layout((256, 64)), 1)
    assert (str(part), off, two.partition_shape_A((256, 64))) == ("((128,16),1,4):((1,256),0,4096)", 128,
                                                                  ((128, 16), 1, 4))
    part, off = two.partition_C(A.Layout((256, 128)), 1)
    assert (str(part), off) == ("((128,128),1,1):((1,256),0,0)", 128)
    with pytest.raises(A.LayoutError, match="tensor memory"):
        two.partition_fragment_C(A.Layout((256, 128)), 1)
    pair = atoms.make_tiled_mma(sm100.umma("f16", 64, 24, "K", "K", 1, "smem", "f16", "f16"), A.parse("(2,1,1)"))
    with pytest.raises(A.LayoutError, match=r"CuTe prints \(\(64,24\),1,3\):\(\(1,64\),0,1536\) @ 64,"):
        pair.partition_C(A.Layout((64, 72)), 1)
    sm80 = atoms.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", A.parse("(2,1,1)"))
    with pytest.raises(A.LayoutError, match="past the tensor"):
        sm80.partition_A(A.Layout((16, 16)), 32)
    assert sm80.partition_fragment_A(A.Layout((16, 16)), 32) == sm80.partition_fragment_A(A.Layout((16, 16)), 0)


def test_contract_keyword_arguments_are_accepted():
    """CONTRACT §7 names ``partition_fragment_A(tensor_layout, thr_idx)``, ``A.local_tile(tensor, tiler, coord, proj)``
    and ``ref_layout(bits)``: each works by keyword as by position."""
    mma = atoms.make_tiled_mma("SM80_16x8x16_F32F16F16F32_TN", atom_layout=A.Layout((2, 2, 1)), permutation=None)
    frag = mma.partition_fragment_A(tensor_layout=A.Layout((64, 32)), thr_idx=3)
    assert frag == mma.partition_fragment_A(A.Layout((64, 32)), 3)
    assert str(frag) == "((2,2,2),2,2):((1,2,4),8,16)"
    t = A.Layout((128, 64, 32))
    assert A.local_tile(tensor=t, tiler=(32, 16, 8), coord=(1, 0, 2), proj=(1, None, 1)) == \
        A.local_tile(t, (32, 16, 8), (1, 0, 2), (1, None, 1)) == (A.Layout((32, 8, 32), (1, 128, 8192)), 2080)
    tmem = atoms.get("SM100_TMEM_LOAD_32dp32b4x")
    assert str(tmem.ref_layout(bits=32)) == str(tmem.ref_layout(32)) == "(32,128):(0,1)"
    assert tmem.src_layout(bits=16) == tmem.src_layout(16) and tmem.dst_layout(bits=16) == tmem.dst_layout(16)


def test_tmem_copies_and_f16_accumulators_as_cute():
    """Tiled tcgen05.ld / st (make_tmem_copy over a dense TMEM tensor; _16b: one 16-bit value per 32-bit column) and
    f16 accumulators' TMEM layouts as CuTe C++ gives them (tests/oracle/cute_vocab.py --tmem, seed 12721): each
    value's lane.column.bit for one thread, 1x and 2x repeats, 8- / 16- / 32-bit values."""
    from algebra.hw import sm100_tmem

    for name, bits, warp, thread, want in (
            ("SM100_TMEM_LOAD_32dp32b1x", 32, 1, 20, "52.0.0"),
            ("SM100_TMEM_LOAD_16dp32b1x", 16, 1, 13, "45.0.0 45.0.16"),
            ("SM100_TMEM_STORE_16dp256b1x_16b", 16, 0, 31,
             "7.12.0 7.13.0 7.14.0 7.15.0 15.12.0 15.13.0 15.14.0 15.15.0"),
            ("SM100_TMEM_STORE_16dp128b1x", 8, 3, 31,
             "103.3.0 103.3.8 103.3.16 103.3.24 111.3.0 111.3.8 111.3.16 111.3.24"),
            ("SM100_TMEM_STORE_16dp128b2x_16b", 16, 0, 13, "3.2.0 3.3.0 11.2.0 11.3.0 3.10.0 3.11.0 11.10.0 11.11.0"),
            ("SM100_TMEM_LOAD_16dp64b2x", 32, 0, 31, "15.1.0 15.3.0")):
        got = sm100_tmem.thread_map(name, warp, bits)[thread]
        assert " ".join(f"{v['lane']}.{v['column']}.{v['bit']}" for v in got) == want, name
    # FrgTypeC::make(((M/CTAs, N), 1, 1)) of f16 C: half_t units, lane at DP<half_t> = 2^17, one 32-bit column each
    for m, n, cta, cute in ((64, 8, 1, "(((16,4),8),1,1):(((131072,4194304),2),0,0)"),
                            (128, 16, 1, "((128,16),1,1):((131072,2),0,0)"),
                            (128, 96, 2, "((64,(48,2)),1,1):((131072,(2,8388608)),0,0)")):
        ours, theirs, rows = sm100_tmem.accumulator_layout(m, n, cta), A.parse(cute), m // cta
        assert all(2 * (ours((r, j)) & 0xFFFFFFFF) == theirs(r + rows * j) for j in range(0, n, 3) for r in range(rows))


def test_a_permutation_cute_does_not_divide_refuses_b_and_c_only():
    """``cute_vocab.py --wide`` seed 13224 case 28: N permuted by a shuffled bijection of 0..191 whose divide by the
    wgmma atom's N = 96 leaves 3 against a mode of 2. CuTe C++ does not compile get_layoutB_TV / get_layoutC_TV /
    partition_shape_B/C / partition_B/C ("Shape Divisibility Condition") and prints the A keys below; the oracle's
    compare takes a case CuTe does not compile as one we must refuse."""
    case = {"kind": "mma", "atom": "SM90_64x96x16_F32F16F16_SS", "layout": "(1,2,1)",
            "perm": [None, "(2,2,8,2,3):(4,2,24,1,8)", None], "thr": 4, "A": [128, 24], "B": [384, 24],
            "C": [128, 384], "row_major": False, "copies": {"A": "SM80_CP_ASYNC_CACHEALWAYS_8B"}, "identity": "C"}
    tm = atoms.make_tiled_mma(case["atom"], A.parse(case["layout"]), cute_vocab._perm(case["perm"]))
    assert str(tm.get_layout_TV("A")) == "(256,((64,16),(1,1))):(0,((1,64),(0,0)))"
    assert tm.partition_shape_A((128, 24)) == ((64, 16), 2, 2)
    assert tuple(map(str, tm.partition_A(A.Layout((128, 24)), 4))) == ("((64,16),2,2):((1,128),64,2048)", "0")
    tc = atoms.make_tiled_copy_A(case["copies"]["A"], tm, element_bits=16)
    assert (str(tc.tv_layout), str(tc.get_layoutS_TV())) == ("(256,((64,16),(1,1))):(0,((1,64),(0,0)))",
                                                             "(256,(4,256)):(0,(1,4))")
    for call in (lambda: tm.get_layout_TV("B"), lambda: tm.get_layout_TV("C"),
                 lambda: tm.partition_shape_B((384, 24)), lambda: tm.partition_C(A.Layout((128, 384)), 4)):
        with pytest.raises(A.LayoutError, match="divisib"):
            call()
    refused = {"0.refused": "static assertion failed: Shape Divisibility Condition"}
    assert cute_vocab.compare([case], refused) == []
    answered = {**case, "perm": [None, None, None]}
    assert "where we answer" in cute_vocab.compare([answered], refused)[0]


def test_tma_partition_says_what_tma_does_with_a_tile_past_the_tensor(client):
    """A CTA tile coordinate past the tensor ("100,100" of a 256x256 tensor in 64x64 tiles) was answered as CuTe prints
    it and nothing more. TMA loads write zeros for the out-of-bounds box (CuTe's tensor map: OOB fill NONE) and stores
    drop it: the answer and the TV page say so, for a tile wholly outside and one that reaches past the edge."""
    body = {"tensor": "(256,256):(256,1)", "smem": "(64,64):(64,1)", "tile": "64,64", "cluster_size": 1}
    far = client.post("/api/tma/partition", json={**body, "cta_coord": "100,100"})
    assert far.status_code == 200, far.text
    assert far.json()["partitions"][0]["source"] == "ArithTuple(6400,6400) o (((64,64),1)):(((1@0,1@1),0))"
    (note,) = far.json()["notes"]
    assert "wholly outside" in note and "mode 0: 6400..6463 of 0..255" in note and "zeros" in note
    edge = client.post("/api/tma/partition", json={**body, "tensor": "(200,256):(256,1)", "cta_coord": "3,1"})
    (note,) = edge.json()["notes"]
    assert "reaches past" in note and "mode 0: 192..255 of 0..199" in note and "zeros" in note
    inside = client.post("/api/tma/partition", json={**body, "cta_coord": "3,3"})
    assert inside.status_code == 200 and inside.json()["notes"] == []
    page = client.get("/tv", params={"tm_g": body["tensor"], "tm_s": body["smem"], "tm_tile": "64,64",
                                     "tm_cluster": "1", "tm_coord": "100,100", "panel": "tmac"})
    assert page.status_code == 200 and 'id="tmac-oob"' in page.text and "wholly outside" in page.text
    bad = client.get("/tv", params={"tm_coord": "-1,0", "panel": "tmac"})
    assert bad.status_code == 200 and "CTA coordinate" in bad.text and 'id="tmac-oob"' not in bad.text


def test_the_tma_oracle_draws_broadcast_global_modes():
    """cute_tma.gen_cases never drew a global mode of stride 0 (the audit's (64,256):(0,1)); now about one case in
    five has one, drawn from its own stream so the other cases of a seed stay as they were."""
    import cute_tma

    new = cute_tma.gen_cases(13800, 60)
    zero = [c for c in new if 0 in A.inttuple.flatten(A.parse(c["g"]).stride)]
    assert 5 <= len(zero) <= 25
    assert any(1 not in A.inttuple.flatten(A.parse(c["g"]).stride) for c in zero)  # the stride-1 mode too, rarely
    old = cute_tma._gen(__import__("random").Random(13800), 60, False, False)
    assert [n == o for n, o in zip(new, old, strict=True)] == [n not in zero for n in new]


def test_the_vocab_oracle_draws_copy_atoms_with_element_types_cute_refuses():
    """cute_vocab.gen_cases never drew Copy_Atom<Op, T> with a T CuTe's static_assert refuses: now one case in ten is
    an atom with a T of any width. CuTe C++ (seeds 13806-13810): SM90_U32x4_STSM_N with double and SM75_U16x8_LDSM_T
    with float do not compile; UniversalCopy<uint32_t> with double prints (1,1):(0,1) for all three value layouts,
    which we refuse naming that print."""
    cases = cute_vocab.gen_cases(13806, 60)
    drawn = {(c["atom"], c["bits"]) for c in cases if c["kind"] == "atom_t"}
    assert len(drawn) >= 3
    st, ldt, uc = ({"kind": "atom_t", "atom": a, "bits": b} for a, b in (
        ("SM90_U32x4_STSM_N", 64), ("SM75_U16x8_LDSM_T", 32), ("UniversalCopy_32b", 64)))
    refused = {"0.refused": "static assertion failed: CopyOperation is not valid for Src of ValType.",
               "1.refused": "static assertion failed: CopyOperation is not valid for Dst of ValType.",
               **{f"2.v{x}": "(1,1):(0,1)" for x in ("src", "dst", "ref")}}
    assert cute_vocab.compare([st, ldt, uc], refused) == []
    ok = {"kind": "atom_t", "atom": "SM75_U32x4_LDSM_N", "bits": 32}
    assert cute_vocab.ours(0, ok) == {"0.vsrc": "(32,4):(4,1)", "0.vdst": "(32,(1,4)):(1,(1,32))",
                                      "0.vref": "(32,(1,4)):(1,(1,32))"}
    assert "where we answer" in cute_vocab.compare([ok], {"0.refused": "static assertion failed"})[0]
    assert "ours raised" in cute_vocab.compare([uc], {f"0.v{x}": "(1,2):(0,1)" for x in ("src", "dst", "ref")})[0]


def test_a_permutation_of_fewer_than_three_entries_is_padded_with_underscores(client):
    """CuTe's make_tiled_mma pads its permutation with ``_`` (``append<3>(permutations, _)``): ``Tile<_64>`` is
    ``Tile<_64,_,_>``. It was refused ("permutation needs one entry ... per M, N, K") by the library and the API;
    a lone layout or size is the M entry, as ``append<3>`` wraps it (a rank-3 Layout was taken mode by mode, one
    mode per M, N, K); four entries are refused (CuTe's static_assert)."""
    two = atoms.make_tiled_mma(SM80, A.parse("(2,2)"), (64,))
    assert two == atoms.make_tiled_mma(SM80, A.parse("(2,2,1)"), (64, None, None)) == atoms.make_tiled_mma(
        SM80, A.parse("(2,2)"), 64)
    assert str(two.get_layoutC_TV()) == "((4,8,2,2),((2,2),(2,1))):((128,1,16,512),((64,8),(32,0)))"  # CuTe's
    assert atoms.make_tiled_mma(SM80, None, [None, 16]).tile_size_mnk(1) == 16
    # make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_1,_1,_1>>{}, Layout<Shape<_16,_8,_16>>{})
    lone = atoms.make_tiled_mma(SM80, A.parse("(1,1,1)"), A.parse("(16,8,16)"))
    assert str(lone.get_layoutC_TV()) == "((4,8),((2,2),(128,1))):((4096,1),((2048,8),(16,0)))"
    with pytest.raises(A.LayoutError, match="permutation takes up to three entries"):
        atoms.make_tiled_mma(SM80, None, (16, None, None, None))
    body = {"atom": SM80, "atom_layout": "(2,2)"}
    short = client.post("/api/tiled", json={**body, "permutation": "64"})
    full = client.post("/api/tiled", json={**body, "permutation": "64,_,_"})
    assert short.status_code == full.status_code == 200 and short.json()["layout_TV"] == full.json()["layout_TV"]
    r = client.post("/api/partition", json={**body, "permutation": "_,_,_,_", "thread": 0})
    assert r.status_code == 422 and "permutation" in r.json()["detail"]


def test_an_sm70_thread_past_the_count_that_is_no_lane_is_refused():
    """SM70's single atom has 8 threads, on lanes 0-3 and 16-19. get_slice took every index below
    cosize(thr_layout_vmnk) = 20, so thread 8 (past the count, and no lane) answered with lane 0's registers; it
    is refused now, while the lanes 16-19 and the indices 0-7 stay CuTe's get_slice."""
    tm = atoms.make_tiled_mma("SM70_8x8x4_F32F16F16F32_TN")
    g = A.Layout((8, 8))
    for t in (8, 12, 15):
        for call in (tm.partition_C, tm.partition_fragment_A, tm.partition_fragment_C):
            with pytest.raises(A.LayoutError, match=f"thread {t} out of range: the tiled MMA has 8 threads"):
                call(g, t)
    assert tm.partition_C(g, 16) == (A.parse("((2,2,2),1,1):((8,2,32),0,0)"), 4)
    assert tm.partition_C(g, 7)[1] == 17 and str(tm.partition_fragment_C(g, 19)) == "((2,2,2),1,1):((1,2,4),0,0)"


def test_ldmatrix_x1_and_x2_fit_as_many_values_as_their_reference_layout_holds():
    """CuTe's TiledCopy asserts its values are a multiple of ``AtomNumVal = size<1>(ValLayoutRef)``: ldmatrix's
    destination, 2 (x1) or 4 (x2) 16-bit values per thread. The check read the source's 8 (each address row), so
    make_tiled_copy_C(SM75_U32x1_LDSM_N, SM80 16x8x16) and make_tiled_copy(SM75_U32x1_LDSM_N, (32,1), (1,2)) were
    refused ("4 % 8 != 0"), which CuTe C++ compiles; the values are what it prints."""
    tm = atoms.make_tiled_mma(SM80)
    tc = atoms.make_tiled_copy_C("SM75_U32x1_LDSM_N", tm, element_bits=16)
    assert tc.tiler == (16, 8) and str(tc.tv_layout) == "((4,8),((2,2),(1,1))):((32,1),((16,8),(0,0)))"
    assert str(tc.get_layoutS_TV()) == "((8,4),(8,2)):((1,0),(16,8))"
    assert str(tc.get_layoutD_TV()) == "((4,8),(2,2)):((32,1),(16,8))"
    tc = atoms.make_tiled_copy_C("SM75_U16x4_LDSM_T", tm, element_bits=16)
    assert (str(tc.get_layoutS_TV()), str(tc.get_layoutD_TV())) == (
        "((8,2,2),(8,1)):((16,8,0),(1,0))", "((4,8),((2,2),1)):((32,1),((16,8),0))")
    tc = atoms.make_tiled_copy("SM75_U32x1_LDSM_N", A.Layout((32, 1)), A.Layout((1, 2)), 16)
    assert tc.tiler == (32, 2) and str(tc.tv_layout) == "(32,2):(1,32)"
    assert str(tc.get_layoutS_TV()) == "((8,4),((2,4),1)):((4,0),((32,1),0))"
    assert str(tc.get_layoutD_TV()) == "(32,(2,1)):(1,(32,0))"
    with pytest.raises(A.LayoutError, match=r"too few values for SM75_U32x2_LDSM_N: 2 % 4 != 0"):
        atoms.make_tiled_copy("SM75_U32x2_LDSM_N", A.Layout((32, 1)), A.Layout((1, 2)), 16)


def test_partition_fragment_of_a_coordinate_tensor():
    """thr_mma.partition_fragment_A/B/C(make_identity_tensor(...)) raised a TypeError (the coordinate tensor's
    partition was unpacked as a (layout, offset) pair). CuTe C++ gives the registers' layout where the rest modes are
    single (and always for C, whose fragment is its shape); where A's or B's rest modes have basis strides its
    make_ordered_layout does not compile (no operator< for ScaledBasis), and that is refused by name."""
    tm = atoms.make_tiled_mma(SM80)

    def ident(*shape: int) -> A.CoordTensor:
        return A.make_coord_tensor((0,) * len(shape), shape)

    assert str(tm.partition_fragment_A(ident(16, 16), 3)) == "((2,2,2),1,1):((1,2,4),0,0)"
    assert str(tm.partition_fragment_B(ident(8, 16), 3)) == "((2,2),1,1):((1,2),0,0)"
    assert str(tm.partition_fragment_C(ident(32, 16), 3)) == "((2,2),2,2):((1,2),4,8)"
    with pytest.raises(A.LayoutError, match="make_ordered_layout"):
        tm.partition_fragment_A(ident(32, 48), 3)


@pytest.mark.parametrize(("body", "field"), [
    ({"atom": SM80, "mma": SM80}, "mma"), ({"atom": SM80, "layout_tv": "(32,8)", "tiler": "16,16"}, "layout_tv"),
    ({"atom": SM80, "tiler": "16,16"}, "tiler"),
    ({"atom": "SM75_U32x4_LDSM_N", "mma": SM80, "layout_tv": "(32,8)", "tiler": "16,16"}, "mma"),
])
def test_api_tiled_names_a_field_its_form_does_not_take(client, body, field):
    """/api/tiled dropped ``mma`` / ``layout_tv`` / ``tiler`` in silence for an MMA atom (200 with the tiled MMA), and
    ``mma`` beside ``layout_tv``: now 422 naming the field."""
    r = client.post("/api/tiled", json=body)
    assert r.status_code == 422 and r.json()["detail"].startswith(f"{field}:"), r.text


def test_a_coordinate_with_underscores_prints_them_in_a_refusal(client):
    """A tile coordinate keeps a mode with ``_`` (None here); a refusal that quotes the coordinate printed Python's
    ``(1,None,2)``, which is no CuTe spelling and does not parse back. It prints CuTe's ``(1,_,2)``, in the algebra
    and through ``/api/algebra``."""
    with pytest.raises(ValueError) as exc:
        A.local_tile(A.parse("(64,32):(32,1)"), A.parse("(16,8,4)"), (1, None, 2))
    assert "(1,_,2)" in str(exc.value) and "None" not in str(exc.value)
    r = client.post("/api/algebra", json={"op": "local_tile", "args": ["(64,32):(32,1)", "<16:1,8:1>", "(1,_,2)"]})
    assert r.status_code == 422 and "(1,_,2)" in r.json()["detail"] and "None" not in r.json()["detail"]
    assert A.inttuple.to_str((1, (None, 3), None)) == "(1,(_,3),_)"
