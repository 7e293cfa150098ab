"""The committed H200 record of Triton's stores into shared memory (bench/triton_device.py): for every case, the
model, recomputed now from the TTGIR the compiled kernel printed, issues the instruction the SASS holds, as many as
Nsight Compute counted, with Nsight's wavefronts per instruction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from algebra.doctor import triton_conflicts as C
from algebra.doctor.triton_layouts import convert

RESULTS = Path(__file__).resolve().parent.parent / "bench" / "results"
RECORDS = sorted(RESULTS.glob("triton_conflicts_H200_*.json"))
#: the model's instruction -> the SASS opcode ptxas makes of it
SASS = {"st.shared.v4.b32": "STS.128", "st.shared.v2.b32": "STS.64", "st.shared.b32": "STS",
        "st.shared.b16": "STS.U16", "st.shared.b8": "STS.U8", "stmatrix.x1": "STSM.16.M88",
        "stmatrix.x2": "STSM.16.M88.2", "stmatrix.x4": "STSM.16.M88.4", "stmatrix.x1.trans": "STSM.16.MT88",
        "stmatrix.x2.trans": "STSM.16.MT88.2", "stmatrix.x4.trans": "STSM.16.MT88.4"}


def record() -> dict:
    assert RECORDS, "no bench/results/triton_conflicts_H200_*.json: run bash bench/triton_device.sh on the H200"
    return json.loads(RECORDS[-1].read_text())


def predict(case: dict, shared_text: str | None = None) -> tuple[str, int, int]:
    """(instruction, instructions, wavefronts) of the whole launch by the model of today."""
    shape, bits = case["shape"], case["element_bits"]
    d, s = convert(case["dist_ttgir"], shape), convert(shared_text or case["shared_ttgir"], shape, bits)
    plans = [C.plan(d, s, bits, "store", warp=w) for w in range(case["num_warps"])]
    grid = case["grid"]
    return plans[0]["kind"], grid * sum(p["count"] for p in plans), grid * sum(p["wavefronts"] for p in plans)


def agrees(per_model: float, per_nsight: float) -> bool:
    """bench/triton_device.py's rule: within 1 % + 0.05 wavefronts per instruction (a conflict adds a whole one)."""
    return abs(per_model - per_nsight) <= 0.05 + 0.01 * per_model


def test_record_is_complete() -> None:
    r = record()
    assert r["nvml_before"]["device"].startswith("NVIDIA H200") and r["nvml_before"]["driver"]
    assert r["all_correct"] and r["all_agree"] and len(r["cases"]) >= 6
    kinds = {k for c in r["cases"] for k in c["sass_stores"]}
    assert {"STS.128", "STS.U16"} <= kinds and any(k.startswith("STSM") for k in kinds)
    assert any(c["measured"]["conflicts"] > 0 for c in r["cases"])
    assert any(c["measured"]["conflicts"] == 0 for c in r["cases"])


@pytest.mark.parametrize("i", range(len(json.loads(RECORDS[-1].read_text())["cases"]) if RECORDS else 1))
def test_model_equals_nsight(i: int) -> None:
    case = record()["cases"][i]
    kind, inst, wf = predict(case)
    got = case["measured"]
    assert list(case["sass_stores"]) == [SASS[kind]], (case["case"], kind, case["sass_stores"])
    assert got["class"] == ("stsm" if kind.startswith("stmatrix") else "sts")
    assert inst == got["instructions"], case["case"]
    assert agrees(wf / inst, got["wavefronts_per_instruction"]), (case["case"], wf / inst, got)


def test_a_wrong_layout_disagrees() -> None:
    """The comparison can fail: pricing each store against the row-major buffer instead of its own gets some case
    wrong (the swizzles that remove a conflict are what the record measures)."""
    r = record()
    row_major = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
    wrong = 0
    for case in r["cases"]:
        _, inst, wf = predict(case, row_major)
        wrong += inst != case["measured"]["instructions"] or not agrees(wf / inst,
                                                                       case["measured"]["wavefronts_per_instruction"])
    assert wrong >= 2
