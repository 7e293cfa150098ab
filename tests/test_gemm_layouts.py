"""The ladder's layouts: each rung's declaration (gpu_worker/gemm_decl.py) against the algebra, the hardware models
and the bank model; the build's constants; and (marker ``nvcc``) what each kernel computes at compile time, printed
by its ``--describe`` probe, against the declaration."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

import algebra as A
from algebra.banks import analyze
from algebra.doctor import solver_desc
from algebra.hw import hopper
from gpu_worker import gemm
from gpu_worker.build import find_toolkit
from gpu_worker.gemm_decl import DECLS, define_flags, defines, predict, predicted_counters, r1_thread

needs_nvcc = pytest.mark.skipif(find_toolkit().nvcc is None and shutil.which("nvcc") is None, reason="no nvcc")
RUNGS = sorted(DECLS)


def accesses(rung: int):
    return [(op, a) for op in DECLS[rung].smem for a in op.accesses]


# ------------------------------------------------------------------------------------------------ declarations
def test_every_layout_parses_and_round_trips():
    for d in DECLS.values():
        for op in d.smem:
            lay = A.parse(op.layout)
            assert A.parse(str(lay)) == lay
            assert A.size(lay) == op.shape[0] * op.shape[1]
            # the allocation covers the layout, padding included
            assert op.bytes >= A.cosize(A.parse(op.base)) * op.element_bytes


def test_unpadded_mma_rung_conflicts_and_padded_and_swizzled_rungs_do_not():
    verdicts = {r: [predict(r, op.operand, a.name).is_ideal for op, a in accesses(r)] for r in RUNGS}
    assert not all(verdicts[2])
    assert predict(2, "A", "ldmatrix.x4 A").wavefronts == 32 and predict(2, "A", "ldmatrix.x4 A").ways == 8
    for r in range(3, 9):
        assert all(verdicts[r]), (r, verdicts[r])
    assert predict(1, "A", "st.shared.f32 A").ways == 2  # the SIMT rung's widening stores: 2 lanes per bank


def test_prediction_is_the_bank_model_on_the_kernels_own_addresses():
    """Recomputed from the kernel's indexing written out here: rung 2's A fragment (lanes 0-15 rows 0-15 at k 0,
    16-31 at k 8) 128 bytes a row; rung 3 at 144 bytes a row; rung 4 through the XOR of the chunk with row % 8."""
    def rows(pitch: int, swz: bool) -> list[int]:
        out = []
        for lane in range(32):
            r, c = lane & 15, (lane >> 4) * 8
            chunk = (c // 8) ^ (r % 8) if swz else c // 8
            out.append(2 * (r * pitch + 8 * chunk))
        return out
    assert analyze(rows(64, False), kind="ldmatrix").wavefronts == predict(2, "A", "ldmatrix.x4 A").wavefronts == 32
    assert analyze(rows(72, False), kind="ldmatrix").wavefronts == predict(3, "A", "ldmatrix.x4 A").wavefronts == 4
    assert analyze(rows(64, True), kind="ldmatrix").wavefronts == predict(4, "A", "ldmatrix.x4 A").wavefronts == 4


def test_every_instance_costs_the_same_so_one_instruction_speaks_for_all():
    for r in RUNGS:
        for op, a in accesses(r):
            p = predict(r, op.operand, a.name)
            assert p.wavefronts == p.first.wavefronts, (r, a.name)


def test_rung1_threads_cover_the_tile_once():
    assert sorted(r1_thread(t) for t in range(256)) == [(y, x) for y in range(16) for x in range(16)]


def test_the_descriptor_is_the_swizzle_atom_tiled_down_the_tile():
    atom = hopper.smem_atom("K", 128, 16)
    for d in DECLS.values():
        if not d.wgmma:
            continue
        a = d.operand("A")
        made = hopper.make_gmma_desc(atom, d.wgmma.m, a.shape[1])
        assert (made.leading_byte_offset, made.stride_byte_offset, made.layout_type) == \
            (d.wgmma.leading_byte_offset, d.wgmma.stride_byte_offset, d.wgmma.layout_type)
        tile = f"{a.swizzle_text} o ({d.wgmma.m},64):(64,1)"
        decoded = solver_desc.decode(f"0x{d.wgmma.value:016x}", mn=d.wgmma.m, tile=tile)
        assert decoded["valid"], decoded["checks"]
        assert d.wgmma.k_step_bytes == d.wgmma.k * a.element_bytes


def test_each_tma_box_is_legal_and_lands_as_the_declared_layout():
    for d in DECLS.values():
        for box in d.tma:
            rows, cols = box.box_dim[1], box.box_dim[0]
            args = hopper.encode_tiled("BFLOAT16", [4096, 4096], [8192], list(box.box_dim),
                                       swizzle=box.swizzle.removeprefix("SWIZZLE_"))
            assert args.valid, [c for c in args.checks if not c.ok]
            # SWIZZLE_128B on a box of 128-byte rows: the 8-row GMMA atom, stacked down the rows
            atom = hopper.smem_atom("K", cols * 2, 16).layout
            lay = A.parse(box.smem_layout)
            assert all(lay((r, c)) == atom((r % 8, c)) + 8 * cols * (r // 8) for r in range(rows) for c in range(cols))
            op = d.operand(box.operand)
            part = A.parse(op.layout)
            # the box lands as the operand's first rows
            assert all(part((r, c)) == lay((r, c)) for r in range(rows) for c in range(cols))


def test_smem_bytes_and_the_build_constants():
    for r in DECLS:
        flags = define_flags(r)
        assert flags == sorted(flags) and f"-DGEMM_RUNG={r}" in flags
        assert all(isinstance(v, int) for v in defines(r).values())
    assert DECLS[3].smem_bytes == 2 * (128 + 256) * 72 * 2 and DECLS[8].smem_bytes == 4 * 49152 + 4 * 8192 + 1024
    assert gemm.RUNGS[8].tile == (256, 256, 64) and DECLS[8].tile == (128, 256, 64)  # a 2-CTA cluster along M


def test_predicted_counters_equal_the_committed_ncu_figures_of_rung_2():
    """The ladder's own earlier Nsight run (bench/results/gemm_h200.json, 1024^3): 131072 ldmatrix, 4194304
    wavefronts, 3670016 bank conflicts for rung 2; 4 wavefronts each for rungs 3 and 4."""
    doc = json.loads((gemm.RESULTS_DIR / "gemm_h200.json").read_text())
    ncu = {e["label"]: e.get("ncu") or {} for e in doc["rungs"]}
    for r in (2, 3, 4):
        p = predicted_counters(r, 1024, 1024, 1024)["ld"]
        assert p["instructions"] == ncu[f"rung{r}"]["smsp__sass_inst_executed_op_ldsm.sum"]
        assert p["wavefronts"] == ncu[f"rung{r}"]["smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum"]
    assert predicted_counters(2, 1024, 1024, 1024)["ld"]["conflicts"] == \
        ncu["rung2"]["l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"]


# ------------------------------------------------------------------------------------------------ the kernels
def _describe(rung: int) -> dict:
    built = gemm.build_rung(rung)
    out = subprocess.run([str(built.path), "--describe"], capture_output=True, text=True, timeout=60)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _table(layout: str, rows: int, cols: int) -> list[list[int]]:
    lay = A.parse(layout)
    return [[lay((r, c)) for c in range(cols)] for r in range(rows)]


@needs_nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("rung", RUNGS)
def test_the_kernel_computes_the_declared_layouts(rung):
    d, desc = DECLS[rung], _describe(rung)
    probe = desc["probe"]
    assert desc["rung"] == rung and desc["tile"] == list(d.granularity)
    assert (desc["threads"], desc["stages"], desc["smem_bytes"]) == (d.threads, d.stages, d.smem_bytes)
    assert desc["smem_layout"] == d.operand("A").layout
    if not d.tma:  # the kernel's own address function over every element of A and B
        for op in d.smem:
            assert probe[op.operand]["offsets"] == _table(op.layout, *op.shape), op.operand
        if rung == 1:
            assert [tuple(x) for x in probe["threads"]["offsets"]] == [r1_thread(t) for t in range(d.threads)]
        else:
            assert probe["b_base_elems"] * 2 == d.operand("A").bytes
        return
    for box in d.tma:  # what the kernel hands cuTensorMapEncodeTiled
        assert probe[f"box_{box.operand}"] == {"box_dim": list(box.box_dim), "swizzle_bytes": 128}, box.operand
    got = hopper.decode_gmma_descriptor(probe["desc"])
    w = d.wgmma
    assert (got.start_address, got.leading_byte_offset, got.stride_byte_offset, got.layout_type) == \
        (0, w.leading_byte_offset, w.stride_byte_offset, w.layout_type)
    assert hopper.decode_gmma_descriptor(probe["desc_k_step"]).start_address == w.k_step_bytes
    a = A.parse(d.operand("A").layout)
    assert probe["a_wg1_bytes"] == 2 * a((w.m, 0))  # the second warpgroup's A starts at row 64 of the layout
    assert probe["b_base_bytes"] == d.operand("A").bytes
    assert probe["stage_bytes"] == d.operand("A").bytes + d.operand("B").bytes and probe["wgmma_n"] == w.n
    if rung >= 7:
        c = d.operand("C")
        assert probe["C"]["offsets"] == _table(c.layout, *c.shape)


# ------------------------------------------------------------------------------------------------ the oracle's nvcc
def test_the_cute_oracle_finds_cuda_through_an_nvcc_binary_or_a_wrapper(tmp_path, monkeypatch):
    """tests/oracle/cute_cpp.py runs at collection (``pytest -m gpu`` imports it): an nvcc that is a binary (the
    device image's) must not be decoded as text; a wrapper script that names the real nvcc leads to its CUDA."""
    import importlib.util
    import os
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("cute_cpp_probe", Path(__file__).parent / "oracle" / "cute_cpp.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    real = tmp_path / "cuda-x"
    (real / "include").mkdir(parents=True)
    (real / "include" / "cuda_runtime_api.h").write_text("")
    wrapper_dir, binary_dir = tmp_path / "wrap", tmp_path / "bin"
    wrapper_dir.mkdir()
    binary_dir.mkdir()
    (wrapper_dir / "nvcc").write_text(f"#!/bin/sh\nexec {real}/bin/nvcc \"$@\"\n")
    (binary_dir / "nvcc").write_bytes(b"\x7fELF\x02\x01\x01\xff\xfe\xfd" + bytes(range(256)) * 4)
    for f in (wrapper_dir / "nvcc", binary_dir / "nvcc"):
        f.chmod(0o755)
    monkeypatch.setenv("CUDA_HOME", "")
    monkeypatch.setenv("PATH", f"{wrapper_dir}{os.pathsep}{os.environ['PATH']}")
    assert mod.cuda_include()[0] == str(real / "include")
    monkeypatch.setenv("PATH", f"{binary_dir}{os.pathsep}{os.environ['PATH']}")
    mod.cuda_include()  # reads the binary's head as bytes: no UnicodeDecodeError
