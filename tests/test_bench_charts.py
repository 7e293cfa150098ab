"""The lab's chart geometry, history sweeps, committed-result charts and the GEMM ladder view (no GPU needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.services import bench_charts as C
from app.services import bench_ladder as L

RESULTS = Path(__file__).resolve().parent.parent / "bench" / "results"


def test_bar_chart_heights_are_proportional_and_the_reference_is_on_the_same_scale():
    c = C.bar_chart("t", "u", [{"label": "a", "value": 32.0, "model": 32}, {"label": "b", "value": 1.0}],
                    {"value": 40.0, "label": "ref"})
    a, b = c["bars"]
    assert c["top"] >= 40.0
    assert a["h"] / b["h"] == pytest.approx(32.0, rel=0.02)
    assert a["y"] == pytest.approx(C.PLOT_H - a["h"]) and a["my"] == pytest.approx(a["y"], abs=0.1)
    assert c["ref"]["y"] == pytest.approx(C.PLOT_H - 40.0 / c["top"] * C.PLOT_H, abs=0.1)
    assert b["x"] > a["x"] and "my" not in b


def test_bar_slots_widen_for_long_labels():
    short = C.bar_chart("t", "u", [{"label": "a", "value": 1}, {"label": "b", "value": 2}])
    long = C.bar_chart("t", "u", [{"label": "ldsm_x4t_sw333", "value": 1, "note": "1.0x"},
                                  {"label": "f32_custom_colmajor_row", "value": 2}])
    assert long["bars"][1]["x"] - long["bars"][0]["x"] > short["bars"][1]["x"] - short["bars"][0]["x"]
    assert C.wrap_label("f32_custom_colmajor_row") == ["f32_custom_", "colmajor_ro"]


def test_line_chart_places_points_by_x_value():
    c = C.line_chart("t", "n", "GB/s", [{"name": "a", "points": [(16384, 100.0), (8192, 50.0)]},
                                       {"name": "b", "points": [(8192, 10.0)]}])
    a, b = c["series"]
    assert [p["x"] for p in a["points"]] == [8192, 16384]
    assert a["points"][0]["px"] == b["points"][0]["px"] < a["points"][1]["px"]
    assert a["points"][1]["py"] == pytest.approx(C.PLOT_H - 100.0 / c["top"] * C.PLOT_H)
    assert a["path"].count(",") == 2 and [t["label"] for t in c["xticks"]] == ["8192", "16384"]


def _smem_job(pad: int, cycles: float, model: float, finished: float, rows: int = 32) -> dict:
    return {"kind": "smem", "status": "done", "finished": finished,
            "params": {"element_bytes": 4, "rows": rows, "cols": 32, "variant": "padded", "pad": pad,
                       "access": {"kind": "column"}, "runs": 30},
            "result": {"derived": {"cycles_per_warp_access": cycles}, "prediction": {"wavefronts_per_access": model}}}


def test_sweeps_find_one_varying_parameter_and_keep_the_newest_run():
    jobs = [_smem_job(1, 1.0, 1, 1), _smem_job(2, 2.0, 2, 2), _smem_job(2, 2.1, 2, 3), _smem_job(4, 4.0, 4, 4),
            _smem_job(1, 1.0, 1, 5, rows=64)]  # differs in rows *and* pad from the others: its own group
    charts = C.sweeps(jobs)
    by_title = {c["title"]: c for c in charts}
    pad = next(c for t, c in by_title.items() if "over pad" in t)
    meas = {p["x"]: p["y"] for p in pad["series"][0]["points"]}
    assert meas == {1: 1.0, 2: 2.1, 4: 4.0}
    assert [p["y"] for p in pad["series"][1]["points"]] == [1, 2, 4]
    rows = next(c for t, c in by_title.items() if "over rows" in t)
    assert [t["label"] for t in rows["xticks"]] == ["32", "64"]
    assert not C.sweeps([_smem_job(1, 1.0, 1, 1)])
    failed = {**_smem_job(3, 3.0, 3, 9), "status": "failed"}
    assert all(p["x"] != 3 for c in C.sweeps([*jobs, failed]) for s in c["series"] for p in s["points"])


def test_reference_charts_read_the_newest_committed_results():
    files = sorted(RESULTS.glob("smem_*.json"))
    if not files:
        pytest.skip("no committed smem results")
    ref = C.reference_charts(RESULTS)
    name, doc = C.newest_result("smem", RESULTS)
    bars = {b["label"]: b for b in ref["smem"]["chart"]["bars"]}
    assert ref["smem"]["file"] == name
    naive = doc["cases"]["f32_col_naive"]
    assert bars["f32_col_naive"]["value"] == naive["derived"]["cycles_per_warp_access"]
    assert bars["f32_col_naive"]["cls"] == "bad" and bars["f32_col_pad1"]["cls"] == "good"
    assert bars["f32_col_naive"]["value"] / bars["f32_col_pad1"]["value"] > 20
    assert bars["v16_row"]["cls"] == "good"  # four phases of 16-byte accesses are the ideal, not a conflict
    if ref["transpose"]:
        for chart in ref["transpose"]["lines"]:
            assert {s["name"] for s in chart["series"]} >= {"naive", "padded", "swizzled"}


def test_newest_result_orders_by_the_date_field(tmp_path):
    (tmp_path / "smem_A.json").write_text(json.dumps({"date": "2026-12-01T00:00:00", "cases": {}}))
    (tmp_path / "smem_Z.json").write_text(json.dumps({"date": "2026-11-01T00:00:00", "cases": {}}))
    (tmp_path / "smem_bad.json").write_text("{")
    assert C.newest_result("smem", tmp_path)[0] == "smem_A.json"
    assert C.newest_result("transpose", tmp_path) is None


def test_gemm_ladder_view_draws_every_rung_with_the_kernels_prediction():
    pytest.importorskip("gpu_worker.gemm")
    if not list(RESULTS.glob("gemm_*.json")):
        pytest.skip("no committed gemm results")
    lad = L.ladder_view()
    assert lad["error"] is None and lad["charts"]
    for chart in lad["charts"]:
        assert chart["ref"]["label"] == "cuBLAS" and chart["ref"]["value"] > 0
    for item in lad["rungs"]:
        r = item["rung"]
        assert item["agrees"], f"rung {r['id']}: drawn access disagrees with gpu_worker.gemm's prediction"
        assert item["grid"].rows == item["rows_drawn"] and item["grid"].marks
        assert item["view"].wavefronts == r["prediction"]["wavefronts"]
    by_id = {i["rung"]["id"]: i for i in lad["rungs"]}
    if 2 in by_id and 4 in by_id:
        assert by_id[2]["view"].ways == 8 and by_id[4]["view"].ways == 1
        assert "ldmatrix%3A0%2C0" in by_id[2]["banks_url"]
    assert L.ladder_view("../../etc/passwd")["source"] == lad["source"]  # unknown names fall back, never a path


def test_gemm_files_lists_only_files_that_hold_rungs(tmp_path, monkeypatch):
    ladder = {"date": "2026-11-30", "rungs": [{"rung": 4, "results": []}, {"rung": 4, "defines": ["X=1"]}]}
    (tmp_path / "gemm_ladder.json").write_text(json.dumps(ladder))
    (tmp_path / "gemm_experiments.json").write_text(json.dumps({"variants": {"a": {}}}))
    (tmp_path / "gemm_odd.json").write_text(json.dumps({"rungs": ["not a rung"]}))
    (tmp_path / "gemm_broken.json").write_text("{")
    monkeypatch.setattr(L, "RESULTS_DIR", tmp_path)
    assert L.gemm_files() == [{"name": "gemm_ladder.json", "rungs": 1, "date": "2026-11-30"}]


def test_rung_access_keeps_the_kernels_strides():
    sub, access, rows = L.rung_access({"base_layout": "(128,64):(72,1)", "element_bytes": 2})
    assert (sub, access["kind"], rows) == ("(16,64):(72,1)", "ldmatrix", 16)
    sub, access, rows = L.rung_access({"base_layout": "(128,16):(1,128)", "element_bytes": 4})
    assert sub == "(64,16):(1,128)" and access["vector"] == 4 and len(access["offsets"]) == 32
