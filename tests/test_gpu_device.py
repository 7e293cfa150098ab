"""On an NVIDIA GPU (marker ``gpu``): every smem variant passes its correctness check and, where Nsight Compute is
installed, measured wavefronts per instruction equal the bank model's prediction; every transpose variant checks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpu_worker import benches, telemetry

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import smem as smem_bench  # noqa: E402
import transpose as transpose_bench  # noqa: E402

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not telemetry.device_info()["available"], reason="no NVIDIA GPU (NVML)")]


@pytest.mark.parametrize("name,spec", smem_bench.CASES, ids=[n for n, _ in smem_bench.CASES])
def test_smem_variant_checks_and_matches_the_model(name, spec):
    r = benches.run_smem({**spec, "runs": 20, "iterations": 64}, profile=benches.find_ncu() is not None)
    assert r["check"]["passed"] and r["check"]["checked"] > 0
    assert r["timing"]["n"] == 20 and r["timing"]["median"] > 0
    m = r["measured"]
    if m and m.get("available"):
        assert m["wavefronts_per_instruction"] == pytest.approx(r["prediction"]["wavefronts_per_access"], rel=0.01)


@pytest.mark.parametrize("config", sorted(transpose_bench.CONFIGS))
def test_transpose_variants_check(config):
    r = benches.run_transpose({**transpose_bench.CONFIGS[config], "n": 4096, "runs": 20})
    for name in ("naive", "tiled", "padded", "swizzled"):
        assert r["variants"][name]["check"]["passed"] and r["variants"][name]["check"]["verified"]
    assert r["prediction"]["tiled"]["read"]["ways"] > 1 == r["prediction"]["padded"]["read"]["ways"]
