"""``POST /api/solve/smem`` (CONTRACT §5) and the doctor's other routes through the app: the known answers, the
contract's fields, the ``lab`` job each candidate carries, and 422s that name the field."""

from __future__ import annotations

import pytest

CP_ASYNC = [[t // 8, (t % 8) * 8] for t in range(32)]
BODY = {"element_bytes": 2, "tile": "(64,64):(64,1)",
        "accesses": [{"name": "cp.async 16 B", "kind": "offsets", "offsets": CP_ASYNC, "vector": 8},
                     {"name": "ldmatrix.x4", "kind": "ldmatrix", "index": [0, 0], "num": 4}]}


def test_contract_fields_and_known_answer(client):
    r = client.post("/api/solve/smem", json=BODY)
    assert r.status_code == 200
    out = r.json()
    best = out["candidates"][0]
    for key in ("layout", "swizzle", "pad", "wavefronts", "total", "ideal", "footprint_bytes", "tma", "wgmma", "why"):
        assert key in best
    assert (best["layout"], best["swizzle"], best["pad"], best["wavefronts"], best["total"], best["ideal"],
            best["footprint_bytes"], best["tma"], best["wgmma"]) == (
        "Sw<3,3,3> o 0 o (64,64):(64,1)", "Sw<3,3,3>", 0, [4, 4], 8, 8, 8192, "SWIZZLE_128B",
        "GMMA::Layout_K_SW128_Atom<half_t>")
    assert out["naive"]["wavefronts"] == [4, 32]
    lab = best["lab"]
    assert lab["kind"] == "smem_solve" and lab["params"]["layouts"][1] == {"kind": "swizzle", "swizzle": [3, 3, 3]}
    from gpu_worker import registry

    model = registry.validate(lab["kind"], lab["params"])
    assert [[a["predicted"] for a in lay["accesses"]] for lay in model._plan["layouts"]] == [[4, 32], [4, 4]]


def test_fp32_transpose_is_one_plus_one(client):
    r = client.post("/api/solve/smem", json={"element_bytes": 4, "tile": "(32,32):(32,1)",
                                             "accesses": [{"kind": "row", "index": 0, "op": "store"},
                                                          {"kind": "column", "index": 0}]})
    assert r.json()["candidates"][0]["wavefronts"] == [1, 1]


@pytest.mark.parametrize("body,field", [
    ({**BODY, "element_bytes": "two"}, "element_bytes"),
    ({**BODY, "element_bytes": 3}, "element_bytes"),
    ({**BODY, "tile": "(64,64:(64,1)"}, "tile"),
    ({**BODY, "accesses": []}, "accesses"),
    ({**BODY, "accesses": [{"kind": "ldmatrix", "num": 8}]}, "accesses[0].num"),
    ({**BODY, "accesses": [BODY["accesses"][0], {"kind": "offsets", "offsets": [[99, 0]]}]},
     "accesses[1].offsets[0][0]"),
    ({**BODY, "accesses": [{"kind": "thread_layout", "layout": "(16):(1)"}]}, "accesses[0].layout"),
    ({**BODY, "limit": 0}, "limit"),
    ({**BODY, "extra": 1}, "extra"),
])
def test_bad_input_is_422_naming_the_field(client, body, field):
    r = client.post("/api/solve/smem", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["detail"].startswith(field)


def test_descriptor_tma_and_linear_routes(client):
    r = client.post("/api/solve/descriptor", json={"descriptor": "0x4000004000010000", "mn": 64})
    assert r.status_code == 200 and r.json()["valid"]
    r = client.post("/api/solve/descriptor/encode", json={"tile": "Sw<3,3,3> o (64,64):(64,1)"})
    assert r.json()["value"] == "0x4000004000010000"
    assert client.post("/api/solve/descriptor", json={"descriptor": "0xZZ"}).status_code == 422
    r = client.post("/api/solve/tma", json={"dtype": "fp16", "global_dim": [4096, 4096], "global_strides": [8192],
                                            "box_dim": [128, 64], "swizzle": "128B"})
    assert r.status_code == 200 and not r.json()["valid"]
    assert client.post("/api/solve/tma", json={"bogus": 1}).json()["detail"].startswith("bogus")
    r = client.post("/api/solve/linear", json={"layout": "Sw<3,3,3> o (64,64):(64,1)"})
    assert r.json()["offset"]["bases"]["offset"][6] == [1, 8]
    r = client.post("/api/solve/linear/import", json=r.json()["offset"])
    assert r.json()["cute"] == "Sw<3,3,3> o 0 o (64,64):(64,1)"
    r = client.get("/api/solve/linear/atom", params={"name": "SM80_16x8x16_F32F16F16F32_TN", "operand": "C"})
    assert r.json()["gluon"]["shape"] == [16, 8]
    assert client.post("/api/solve/linear", json={"layout": "(4,4):(1,3)"}).status_code == 422
    assert client.get("/doctor").status_code == 200


def test_committed_measurement_of_a_bench_case(client):
    r = client.post("/api/solve/smem/measured", json=BODY | {"accesses": [
        {"name": "cp.async", "kind": "offsets", "offsets": CP_ASYNC, "vector": 8, "op": "store"},
        {"kind": "ldmatrix", "index": [0, 0], "num": 4}]})
    out = r.json()
    assert out["found"] and out["case"] == "fp16_64x64_cpasync_ldmatrix_x4"
    runs = [a for lay in out["result"]["layouts"] for a in lay["accesses"]]
    assert runs and all(a["measured"] == a["predicted"] for a in runs)
    assert not client.post("/api/solve/smem/measured", json=BODY).json()["found"]  # loads, not stores: not measured
