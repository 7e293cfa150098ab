"""On an NVIDIA GPU with Nsight Compute (marker ``gpu``): the layout doctor's fixes measure what they predict --
for every access of the issue's known cases, ncu's wavefronts per instruction on the solver's best layout (and on
the tile as given) equal the bank model's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpu_worker import benches, solve_bench, telemetry

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import solve_smem  # noqa: E402

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not telemetry.device_info()["available"], reason="no NVIDIA GPU (NVML)"),
              pytest.mark.skipif(benches.find_ncu() is None, reason="Nsight Compute (ncu) not found")]


@pytest.mark.parametrize("name", ["fp16_64x64_cpasync_ldmatrix_x4", "fp32_32x32_row_write_column_read"])
def test_measured_wavefronts_of_the_fix_equal_the_prediction(name):
    spec = {**solve_smem.CASES[name], "layouts": [{"kind": "naive"}, "best"]}
    r = solve_bench.run_solve(spec)
    naive, best = r["layouts"]
    assert best["kind"] != "naive"
    for lay in (naive, best):
        for a in lay["accesses"]:
            assert a["check"]["passed"] and a["measured"] is not None, a.get("reason")
            assert a["measured"] == pytest.approx(a["predicted"]), (lay["layout"], a["name"])
    assert sum(a["measured"] for a in best["accesses"]) < sum(a["measured"] for a in naive["accesses"])
    assert r["all_match"]
