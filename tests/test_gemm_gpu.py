"""GEMM ladder on a GPU (marker ``gpu``): every rung is correct against the cuBLAS reference at two sizes, and the
``gemm`` job kind runs end to end. Needs an sm_90 device, nvcc and cuBLAS."""

from __future__ import annotations

import os
import shutil

import pytest

from gpu_worker import gemm
from gpu_worker.build import find_toolkit
from gpu_worker.registry import JobContext
from gpu_worker.run import run_binary

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(find_toolkit().nvcc is None and shutil.which("nvcc") is None, reason="no nvcc"),
]
SIZES = "1024x1024x1024,768x512x320"  # a multiple of every rung's tile; the second is rectangular


def _env() -> dict:
    env = dict(os.environ)
    lib = gemm.find_cublas()
    if lib:
        env["LAYOUTLAB_CUBLAS"] = lib
    return env


@pytest.mark.parametrize("rung", range(1, 9))
def test_rung_is_correct_at_two_sizes(rung):
    built = gemm.build_rung(rung)
    out = run_binary(built.path, ["--sizes", SIZES, "--check-only", "--timeout", "120"], timeout_s=180, env=_env())
    assert out["ok"], out
    assert len(out["results"]) == 2
    for r in out["results"]:
        assert r["ok"] and r["rel_err"] < 1e-2 and r["reference_spot_err"] < 1e-4, r


# Sizes where rung 8's stream-K tail runs when forced on (GEMM_STREAM_K=always; more cluster tiles than the 66
# resident clusters, not a multiple): up to three contributors per tile, short (K = 576: 9 k tiles) and long segments.
STREAM_K_SIZES = "4096x4096x1024,2304x2560x576,2560x2304x4096"


@pytest.mark.parametrize("fp16,mode,note", [(False, "always", "stream-K tail always"),
                                            (True, "always", "stream-K tail always"),
                                            (False, "all", "stream-K over every tile")])
def test_rung8_stream_k_is_correct(fp16, mode, note):
    built = gemm.build_rung(8, defines={"GEMM_FP16": 1} if fp16 else None)
    out = run_binary(built.path, ["--sizes", STREAM_K_SIZES, "--check-only", "--dists", "uniform,normal",
                                  "--timeout", "120"], timeout_s=180, env={**_env(), "GEMM_STREAM_K": mode})
    assert note in out["note"]
    assert out["ok"], out
    assert out["dtype"] == ("fp16" if fp16 else "bf16") and len(out["results"]) == 6
    for r in out["results"]:
        assert r["ok"] and r["rel_err"] < 1e-2, r


def test_job_runner_end_to_end():
    params = gemm.GemmParams(rung=6, m=1024, n=1024, k=1024, iters=5, warmup=1)
    stages = []
    res = gemm.run_gemm(params, JobContext(job_id="t", report=stages.append))
    assert res["check"]["passed"] and res["tflops"] > 0 and res["cublas_tflops"] > 0
    assert res["prediction"]["wavefronts"] == 4
    assert any(s["stage"] == "building" for s in stages)
