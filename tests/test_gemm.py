"""GEMM ladder (gpu_worker/gemm.py, kernels/gemm, bench/gemm.py) without a GPU: parameter validation, the rung table
against each binary's own description, sm_90a compilation (skipped without nvcc), the layouts' bank predictions and
the committed results."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import algebra
from gpu_worker import gemm, registry
from gpu_worker.build import find_toolkit

ROOT = Path(__file__).resolve().parent.parent
needs_nvcc = pytest.mark.skipif(find_toolkit().nvcc is None and shutil.which("nvcc") is None, reason="no nvcc")


def _bench_module():
    spec = importlib.util.spec_from_file_location("bench_gemm", ROOT / "bench" / "gemm.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ------------------------------------------------------------------------------------------------ parameters
def test_defaults_validate():
    p = registry.validate("gemm", {})
    assert (p.rung, p.m, p.n, p.k, p.dtype) == (7, 4096, 4096, 4096, "bf16")


@pytest.mark.parametrize("rung", range(1, 9))
def test_each_rung_accepts_its_own_tile(rung):
    bm, bn, bk = gemm.RUNGS[rung].tile
    p = registry.validate("gemm", {"rung": rung, "m": 2 * bm, "n": 3 * bn, "k": 4 * bk})
    assert p.rung == rung


@pytest.mark.parametrize(("params", "needle"), [
    ({"rung": 7, "m": 4000}, "m=4000 is not a multiple of 256"),
    ({"rung": 6, "n": 4160}, "n=4160 is not a multiple of 128"),
    ({"rung": 1, "k": 40}, "k=40 is not a multiple of 16"),
    ({"rung": 0}, "rung"),
    ({"rung": 9}, "rung"),
    ({"rung": 8, "k": 4000}, "k=4000 is not a multiple of 64"),
    ({"dtype": "fp16"}, "dtype fp16 needs rung 8"),
    ({"rung": 6, "dtype": "fp16"}, "rung 6 is bf16 only"),
    ({"rung": 8, "dtype": "fp32"}, "dtype"),
    ({"m": 32768}, "m"),
    ({"m": 64}, "m"),
    ({"iters": 1}, "iters"),
    ({"tile": 5}, "tile"),
])
def test_bad_params_are_refused_with_the_reason(params, needle):
    with pytest.raises(registry.ParamsError) as exc:
        registry.validate("gemm", params)
    assert needle in str(exc.value)


def test_fp16_is_accepted_for_rung_8():
    p = registry.validate("gemm", {"rung": 8, "dtype": "fp16", "m": 512, "n": 256, "k": 64})
    assert (p.rung, p.dtype) == (8, "fp16")


def test_kind_is_registered():
    kind = registry.get("gemm")
    assert kind.needs_gpu and kind.params_model is gemm.GemmParams


# ------------------------------------------------------------------------------------------------ layouts
def test_predicted_ldmatrix_wavefronts():
    waves = {r: gemm.predicted_wavefronts(r)["wavefronts"] for r in range(1, 9)}
    assert waves[2] == 32  # 8 rows 128 B apart: 8-way, four matrices
    assert all(waves[r] == 4 for r in (1, 3, 4, 5, 6, 7, 8))


def test_layouts_parse_and_tile_the_gmma_atom():
    from algebra.hw.hopper import smem_atom

    atom = algebra.parse(str(smem_atom("K", 128, 16)))  # Sw<3,3,3> o (8,64):(64,1) in bf16 elements
    for r in gemm.RUNGS.values():
        layout = algebra.parse(r.smem_layout)
        assert algebra.parse(str(layout)) == layout
        if r.swizzle:
            tile = algebra.parse(r.smem_layout)
            for row in range(0, 128, 5):
                for col in range(64):
                    assert tile((row, col)) == atom((row % 8, col)) + 512 * (row // 8)


def test_ladder_reads_committed_results():
    files = sorted((ROOT / "bench" / "results").glob("gemm_*.json"))
    assert files, "no committed GEMM results"
    lad = gemm.ladder(gemm.DEFAULT_RESULTS if gemm.DEFAULT_RESULTS.is_file() else files[-1])
    assert [r["id"] for r in lad["rungs"]] == sorted(r["id"] for r in lad["rungs"])
    assert "4096x4096x4096" in lad["sizes"]
    for r in lad["rungs"]:
        assert r["banks_query"]["layout"] and r["smem_layout"]
        for s in r["results"]:
            if s["ok"]:
                assert s["rel_err"] < 1e-2 and s["tflops"] > 0
    assert all(c["tflops"] for c in lad["cublas"])


# ------------------------------------------------------------------------------------------------ bench helpers
def test_bench_parses_ptxas_and_ncu():
    bench = _bench_module()
    text = ("ptxas info    : Compiling entry function '_Z10gemm_rung7v' for 'sm_90a'\n"
            "ptxas info    : Function properties for _Z10gemm_rung7v\n"
            "    0 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
            "ptxas info    : Used 168 registers, used 16 barriers, 64 bytes smem\n"
            "ptxas info    : Compiling entry function '_Z12gemm_comparev' for 'sm_90a'\n"
            "ptxas info    : Used 24 registers, used 0 barriers\n")
    for parse in (bench.parse_ptxas, gemm.parse_ptxas):
        info = parse(text)
        assert (info["registers"], info["spill_stores"], info["spill_loads"], info["static_smem_bytes"]) == \
            (168, 8, 4, 64)
    csv = ('==PROF== Connected\n"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
           '"0","gemm_rung2","smsp__sass_inst_executed_op_ldsm.sum","","196,608"\n')
    assert bench.parse_ncu_csv(csv) == {"smsp__sass_inst_executed_op_ldsm.sum": 196608.0}
    nvml = {"available": True, "sm_clock_mhz": {"min": 1980, "max": 1980}, "power_w": {"max": 120.0},
            "throttled": False, "clock_event_reasons": []}
    assert bench.clocks_note({"nvml": nvml, "in_kernel_clock": {"ghz_median": 1.631}}) == \
        "1980-1980 MHz 120 W kernel 1.63 GHz"  # NVML's reading beside the clock the kernel really ran at
    assert bench.clocks_note({"in_kernel_clock": {"ghz_median": 1.6}}) == "kernel 1.60 GHz"
    assert bench.clocks_note({}) == ""
    report = ("  <unnamed>::gemm_rung8(CUtensorMap_st) (132, 1, 1)x(384, 1, 1), Context 1, Stream 13\n"
              "    SM Frequency                   Ghz         1.57\n"
              "    OPT   Shared is the highest-utilized pipeline (90.0%) based on elapsed cycles. It is the\n"
              "          logical sum of several other pipelines. It's\n"
              "          dominated by its Tensor (FP) sub-pipeline.\n"
              "  nvjet_sm90_tst_256x128 (2, 66, 1)x(384, 1, 1), Context 1\n"
              "    OPT   Tensor is the highest-utilized pipeline (90.4%) based on elapsed cycles.\n")
    got = bench.ncu_sections_summary("==PROF== x\n" + report)
    assert got["rung8"]["metrics"] == {"SM Frequency (Ghz)": 1.57,
                                       "shared pipe (tensor-dominated), % of elapsed cycles": 90.0}
    assert got["nvjet_sm90_tst_256x128"]["metrics"] == {"tensor pipe, % of elapsed cycles": 90.4}


# ------------------------------------------------------------------------------------------------ nvcc
@needs_nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize(("rung", "dtype"), [(8, "bf16"), *(pytest.param(*rd, marks=pytest.mark.kernels)
                                                 for rd in [*((r, "bf16") for r in range(1, 8)), (8, "fp16")])])
def test_rung_compiles_for_sm90a_and_describes_itself(rung, dtype):
    built = gemm.build_rung(rung, defines={"GEMM_FP16": 1} if dtype == "fp16" else None)
    assert built.path.is_file()
    ptx = built.ptxas
    assert ptx["registers"] <= 255 and ptx["spill_stores"] == 0 and ptx["spill_loads"] == 0
    out = subprocess.run([str(built.path), "--describe"], capture_output=True, text=True, timeout=60)
    desc = json.loads(out.stdout.strip().splitlines()[-1])
    info = gemm.RUNGS[rung]
    assert desc["ok"] and desc["rung"] == rung and desc["dtype"] == dtype
    assert tuple(desc["tile"]) == info.tile
    assert desc["threads"] == info.threads and desc["stages"] == info.stages
    assert desc["smem_layout"] == info.smem_layout
    assert gemm.build_rung(rung, defines={"GEMM_FP16": 1} if dtype == "fp16" else None).cached


@needs_nvcc
@pytest.mark.nvcc
def test_ceiling_kernels_compile_for_sm90a(tmp_path):
    bench = _bench_module()
    nvcc = find_toolkit().nvcc or shutil.which("nvcc")
    for name in bench.PEAKS:
        bench.build(0, tmp_path, nvcc, [], name)
        assert (tmp_path / name).is_file()


@needs_nvcc
@pytest.mark.nvcc
def test_stream_k_schedule_covers_every_k_iteration_once():
    """Rung 8's own host walk of its schedule (``--describe --sizes``, 66 clusters as on an H100/H200): every
    (tile, k tile) computed by exactly one piece, pieces at k 0 owned by their tile's holder, the others within the
    workspace slots, and the busiest cluster's k iterations as planned."""
    built = gemm.build_rung(8)
    sizes = ["4096x4096x4096", "8192x8192x8192", "1024x1024x1024", "2304x2560x576", "4096x4096x1024",
             "8448x8448x512", "256x256x64"]

    def plans(mode: str) -> dict:
        out = subprocess.run([str(built.path), "--describe", "--clusters", "66", "--sizes", ",".join(sizes)],
                             capture_output=True, text=True, timeout=60, env={**os.environ, "GEMM_STREAM_K": mode})
        got = {f"{p['m']}x{p['n']}x{p['k']}": p for p in json.loads(out.stdout.strip().splitlines()[-1])["plans"]}
        assert set(got) == set(sizes)
        for p in got.values():
            assert p["covered_once"] and p["slots_ok"], p
        return got

    bad_cases = (("bogus", [], "GEMM_STREAM_K must be off, auto, always or all"),
                 ("auto", ["--energy", "abc"], "--energy takes seconds"),
                 ("auto", ["--energy", "99"], "--energy takes 0 to 10"))
    for bad_env, bad_args, needle in bad_cases:  # bad settings are refused with the reason, exit status 2
        out = subprocess.run([str(built.path), "--describe", *bad_args], capture_output=True, text=True, timeout=60,
                             env={**os.environ, "GEMM_STREAM_K": bad_env})
        res = json.loads(out.stdout.strip().splitlines()[-1])
        assert out.returncode == 2 and not res["ok"] and needle in res["error"], res
    auto, always, every = plans("auto"), plans("always"), plans("all")
    # auto: stream-K only where the tiles make >= 8 waves (8192^3: 1024 tiles on 66 clusters)
    assert auto["4096x4096x4096"]["dp_tiles"] == 256 and auto["4096x4096x4096"]["max_work"] == 256
    assert (auto["8192x8192x8192"]["dp_tiles"], auto["8192x8192x8192"]["max_work"]) == (990, 1986)  # not 2048
    # always: 3 whole waves of 66 clusters, then 58 tiles' k iterations over 66 workers: 249 instead of 4 x 64
    assert (always["4096x4096x4096"]["dp_tiles"], always["4096x4096x4096"]["max_work"]) == (198, 249)
    assert always["1024x1024x1024"]["dp_tiles"] == always["1024x1024x1024"]["tiles"] == 16  # fewer tiles than clusters
    assert always["2304x2560x576"]["slots"] == 2  # a tile shared by three clusters
    # all: no data-parallel waves; 256 tiles x 64 k tiles over 66 clusters, 249 each (ceil(16384 / 66) = 249)
    assert (every["4096x4096x4096"]["dp_tiles"], every["4096x4096x4096"]["max_work"]) == (0, 249)
    assert every["8192x8192x8192"]["max_work"] == 1986 and every["8192x8192x8192"]["slots"] == 1


# ------------------------------------------------------------------------------------------ rung-4 experiments
def _experiments_module():
    path = ROOT / "bench" / "gemm_rung4_experiments.py"
    spec = importlib.util.spec_from_file_location("gemm_rung4_experiments", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_rung4_experiments_name_existing_sources_and_refuse_unknown_variants():
    exp = _experiments_module()
    for name, (src, _defines, what) in exp.VARIANTS.items():
        where = exp.KERNELS if src.startswith("rung") else exp.EXP
        assert (where / src).is_file(), name
        assert what
    with pytest.raises(SystemExit):
        exp.main(["--only", "no_such_variant"])


@needs_nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("name", ["staged_d2", pytest.param("ws_cluster2", marks=pytest.mark.kernels)])
def test_rung4_experiment_kernels_still_compile(name, tmp_path):
    exp = _experiments_module()
    nvcc = find_toolkit().nvcc or shutil.which("nvcc")
    info = exp.build(name, nvcc, tmp_path)
    assert info["ok"], info.get("error")
    assert info["ptxas"]["registers"] <= 255 and (tmp_path / name).is_file()


# ------------------------------------------------------------------------------------------------ lab page
def test_waterfall_bars_float_from_the_previous_rung():
    from app.services.bench_charts import PLOT_H
    from app.services.bench_ladder import waterfall_chart

    c = waterfall_chart("t", "TFLOP/s", [{"label": "a", "value": 100.0}, {"label": "b", "value": 400.0},
                                         {"label": "c", "value": 350.0}],
                        [{"label": "cuBLAS", "value": 420.0, "cls": "cublas"},
                         {"label": "ceiling", "value": 425.0, "cls": "ceiling"}])
    a, b, d = c["bars"]
    assert c["top"] >= 425
    assert (a["delta"], b["delta"], d["delta"]) == (100.0, 300.0, -50.0)
    assert (a["cls"], b["cls"], d["cls"]) == ("good", "good", "bad")
    assert b["h"] == round(300 / c["top"] * PLOT_H, 1) and b["y"] == round(PLOT_H - 400 / c["top"] * PLOT_H, 1)
    assert d["y"] == b["y"] and b["text"] == "+300" and d["text"] == "−50.0"  # a loss hangs from the previous top
    ys = sorted(ln["ty"] for ln in c["lines"])
    assert ys[1] - ys[0] >= 12  # close lines keep their labels apart


def test_ladder_page_has_the_waterfall_the_ceilings_and_rung4s_limit():
    from app.services import bench_ladder as L

    view = L.ladder_view()
    assert view["error"] is None
    wf = {c["title"].split(" bf16")[0]: c for c in view["waterfalls"]}
    assert "4096 x 4096 x 4096" in wf
    labels = {ln["label"] for ln in wf["4096 x 4096 x 4096"]["lines"]}
    assert {"cuBLAS", "wgmma ceiling", "mma.sync ceiling"} <= labels
    assert [b["label"].split()[0] for b in wf["4096 x 4096 x 4096"]["bars"]] == [str(i) for i in range(1, 9)]
    lsu = view["lsu"]
    rows = {r["name"]: r for r in lsu["rows"]}
    assert rows["rung4"]["lsu_per_tflops"] > 1.5 * rows["rung5"]["lsu_per_tflops"]  # the pipe register staging fills
    assert lsu["chart"]["bars"] and view["variants"]
    energy = {(r["job"], r["size"], r["dist"]): r for r in view["energy"]["rows"]}
    at4k = energy[("rung8", "4096x4096x4096", "uniform")]
    assert 0.05 < at4k["rung"]["joules_per_gemm"] < 0.5 and at4k["cublas"]["watts"] > 100


def test_energy_rows_tolerate_missing_and_empty_files(tmp_path):
    from app.services.bench_ladder import ENERGY_FILE, energy_rows

    assert energy_rows(tmp_path) is None
    (tmp_path / ENERGY_FILE).write_text('{"rungs": [{"label": "rung8", "results": [{"m": 1, "n": 1, "k": 1}]}]}')
    assert energy_rows(tmp_path) is None
    (tmp_path / ENERGY_FILE).write_text("not json")
    assert energy_rows(tmp_path) is None
