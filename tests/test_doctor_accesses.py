"""The layout doctor's accesses and answers as a learner meets them: paddings listed by distinct outcome (the
smallest of each, the rest folded), explanations that speak of the accesses given, the thread-layout convention
(refused with the convention and its way out, or read as offsets), and the access builder's lane preview."""

from __future__ import annotations

import pytest

from algebra.doctor.solver import solve
from algebra.doctor.solver_access import SolveError
from app.services.solver import PRESETS

TRANSPOSE = PRESETS["fp32-32x32-transpose"]


def _solve(p: dict, **kw) -> dict:
    return solve(p["element_bytes"], p["tile"], p["accesses"], **kw)


def test_transpose_lists_each_padding_outcome_once():
    r = _solve(TRANSPOSE)
    pads = [c for c in r["candidates"] if c["kind"] == "padding"]
    outcomes = [(tuple(c["wavefronts"]), c["vector_kept"], c["constraints_met"]) for c in pads]
    assert len(outcomes) == len(set(outcomes)) and len(pads) >= 2
    first = pads[0]
    assert first["layout"] == "(32,32):(33,1)" and first["wavefronts"] == [1, 1]
    assert first["folded"]["pads"] == list(range(3, 33, 2)) and "+1 is the smallest" in first["folded"]["text"]
    assert pads[1]["layout"] == "(32,32):(34,1)" and pads[1]["wavefronts"] == [1, 2]
    assert r["candidates"][0]["swizzle"] == "Sw<5,0,5>" and r["candidates"][0]["folded"] is None


def test_folding_frees_room_for_other_outcomes():
    r = _solve(TRANSPOSE, limit=12)
    assert sum(c["kind"] == "padding" and c["wavefronts"] == [1, 1] for c in r["candidates"]) == 1
    assert {c["total"] for c in r["candidates"]} >= {2, 3, 5}


def test_sw505_explanation_speaks_of_scalar_reads():
    why = _solve(TRANSPOSE)["candidates"][0]["why"]
    assert "Sw<5,0,5>" in why and "4-byte scalar" in why and "16-byte" not in why and "vectors of" not in why
    vec = _solve(PRESETS["fp16-64x64-cpasync-ldmatrix"])["candidates"][0]["why"]
    assert "16 bytes (vectors and ldmatrix rows)" in vec and "no access is split" in vec


def test_thread_layout_convention_is_explained_with_the_way_out():
    acc = {"kind": "thread_layout", "layout": "(4,8):(64,8)", "vector": 8}
    with pytest.raises(SolveError) as exc:
        solve(2, "(64,64):(64,1)", [acc])
    msg = str(exc.value)
    assert msg.startswith("accesses[0].layout: a thread layout maps lane t to the tile's column-major 1-D "
                          "coordinate row + 64*col")
    assert "(4,8):(1,512) in coordinates" in msg and '"of": "offset"' in msg and len(msg) <= 400
    as_offsets = solve(2, "(64,64):(64,1)", [dict(acc, of="offset")])
    as_coords = solve(2, "(64,64):(64,1)", [dict(acc, layout="(4,8):(1,512)")])
    assert as_offsets["naive"]["per_access"][0]["byte_addresses"] == \
        as_coords["naive"]["per_access"][0]["byte_addresses"] == [2 * (64 * i + 8 * j) for j in range(8)
                                                                   for i in range(4)]


def test_thread_layout_bad_inputs():
    base = {"kind": "thread_layout", "layout": "(8,4):(512,1)", "vector": 8}
    assert solve(2, "(64,64):(64,1)", [base])["naive"]["total"] == 4
    for spec, field in [(dict(base, of="rows"), "accesses[0].of"), (dict(base, layout="(8,4):(9999,1)"), "layout"),
                        (dict(base, layout="32:200", of="offset"), "holds no element")]:
        with pytest.raises(SolveError, match=field.replace("[", r"\[").replace("]", r"\]")):
            solve(2, "(64,64):(64,1)", [spec])


def test_preview_matches_the_solvers_naive_lanes(client):
    p = PRESETS["fp16-64x64-cpasync-ldmatrix"]
    naive = _solve(p)["naive"]["per_access"]
    for i, acc in enumerate(p["accesses"]):
        r = client.post("/api/solve/access", json={"element_bytes": 2, "tile": p["tile"], "access": acc, "index": i})
        assert r.status_code == 200
        j = r.json()
        assert [x["byte"] for x in j["lanes"]] == naive[i]["byte_addresses"] and j["phases"] == naive[i]["phases"]
        assert all(x["bank"] == (x["byte"] // 4) % 32 and x["byte"] == 2 * x["offset"] for x in j["lanes"])
    j = client.post("/api/solve/access", json={"tile": "(64,64):(64,1)",
                                               "access": {"kind": "ldmatrix", "index": [0, 0], "num": 2,
                                                          "trans": True}}).json()
    assert len(j["lanes"]) == 16 and j["phases"] == [8, 8] and (j["lanes"][8]["row"], j["lanes"][8]["col"]) == (8, 0)


def test_preview_of_a_constraint_and_bad_input(client):
    j = client.post("/api/solve/access", json={"tile": "(64,64):(64,1)", "access": {"kind": "wgmma"}}).json()
    assert j["constraint"] is True and j["lanes"] == []
    bad = [({"tile": "(64,64", "access": {"kind": "row"}}, "tile"),
           ({"tile": "(64,64):(64,1)", "element_bytes": 3, "access": {"kind": "row"}}, "element_bytes"),
           ({"tile": "(64,64):(64,1)", "access": {"kind": "row", "index": 99}, "index": 3}, "accesses[3].index"),
           ({"tile": "(64,64):(64,1)", "access": {"kind": "thread_layout", "layout": "(4,8):(64,8)", "vector": 8}},
            "column-major"),
           ({"tile": "(64,64):(64,1)", "access": []}, "access"),
           ({"tile": "(64,64):(64,1)", "access": {"kind": "row"}, "index": 9}, "index")]
    for body, word in bad:
        r = client.post("/api/solve/access", json=body)
        assert r.status_code == 422 and word in str(r.json()["detail"]), (body, r.json())
