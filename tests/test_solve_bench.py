"""The layout doctor's GPU measurement without a GPU: the plan (lane tables, kernel modes, predictions) agrees with
the solver, bad layout choices are refused by the ``smem_solve`` kind's model, and the kernel builds for every mode
(marker ``nvcc``)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from gpu_worker import registry, solve_bench

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import solve_smem  # noqa: E402


def test_plan_matches_the_solver_and_the_kernel_modes():
    spec = solve_smem.CASES["fp16_64x64_cpasync_ldmatrix_x4"]
    p = solve_bench.plan(spec["element_bytes"], spec["tile"], spec["accesses"], spec["layouts"])
    naive, best, padded = p["layouts"]
    assert best["layout"] == "Sw<3,3,3> o 0 o (64,64):(64,1)" and padded["layout"] == "(64,64):(72,1)"
    assert [(a["mode"], a["width"], a["predicted"]) for a in naive["accesses"]] == [("st", 16, 4), ("ldmatrix", 16, 32)]
    assert [a["predicted"] for a in best["accesses"]] == [4, 4]
    for lay in p["layouts"]:
        for a in lay["accesses"]:
            assert len(a["addresses"]) == 32 and all(x % a["width"] == 0 for x in a["addresses"])
            assert max(a["addresses"]) + a["width"] <= lay["footprint_bytes"]
    assert solve_bench.defines(best["accesses"][1]) == {"MODE": 2, "WIDTH": 16, "LDM_NUM": 4, "LDM_TRANS": 0}


def test_partial_warps_run_only_their_lanes():
    p = solve_bench.plan(2, "(64,32):(32,1)", [{"kind": "row", "index": 0, "vector": 8}], [{"kind": "naive"}])
    a = p["layouts"][0]["accesses"][0]
    assert a["lanes"] == 4 and a["predicted"] == 1


@pytest.mark.parametrize("layouts,msg", [
    ([{"kind": "swizzle", "swizzle": [3, 1, 7]}], "breaks a vector"),
    ([{"kind": "padding", "pad": 200}], "padding"),
    ([{"kind": "xor", "xor": {"3": 8}}], "XOR"),
    ([{"kind": "diagonal"}], "tag .diagonal. found using .kind. does not match"),
])
def test_smem_solve_kind_refuses_bad_layouts(layouts, msg):
    spec = solve_smem.CASES["fp16_64x64_cpasync_ldmatrix_x4"]
    with pytest.raises(registry.ParamsError, match=msg):
        registry.validate("smem_solve", {"element_bytes": 2, "tile": spec["tile"], "accesses": spec["accesses"],
                                         "layouts": layouts})


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_kernel_builds_for_loads_stores_and_ldmatrix():
    specs = [{"element_bytes": 2, "tile": "(64,64):(64,1)",
              "accesses": [{"kind": "row", "index": 0, "vector": 8, "op": "store"},
                           {"kind": "ldmatrix", "index": [0, 0], "num": 2, "trans": True},
                           {"kind": "column", "index": 0}], "layouts": [{"kind": "naive"}]}]
    assert len(solve_bench.prebuild(specs, workers=2)) == 3
