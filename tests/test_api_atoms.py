"""/api/atoms and /api/sectors: TV grids of MMA / copy atoms and sector efficiency."""

from __future__ import annotations


def test_atom_list_has_kinds(client):
    items = client.get("/api/atoms").json()
    kinds = {i["name"]: i["kind"] for i in items}
    assert kinds["SM80_16x8x16_F32F16F16F32_TN"] == "mma" and kinds["SM75_U32x4_LDSM_N"] == "copy"


def test_m16n8k16_c_fragment(client):
    j = client.get("/api/atoms/SM80_16x8x16_F32F16F16F32_TN").json()
    assert j["shape"] == [16, 8, 16]
    c = {o["operand"]: o for o in j["operands"]}["C"]
    assert c["tv_layout"] == "((4,8),(2,2)):((32,1),(16,8))" and (c["rows"], c["cols"]) == (16, 8)
    # thread t holds rows t//4 and t//4 + 8, columns 2*(t%4) and 2*(t%4)+1
    for t in range(32):
        r, col = t // 4, 2 * (t % 4)
        assert c["threads"][r][col] == t and c["values"][r][col] == 0
        assert c["threads"][r][col + 1] == t and c["values"][r][col + 1] == 1
        assert c["threads"][r + 8][col] == t and c["values"][r + 8][col] == 2


def test_every_c_element_has_one_owner(client):
    c = {o["operand"]: o for o in client.get("/api/atoms/SM80_16x8x8_F32F16F16F32_TN").json()["operands"]}["C"]
    pairs = {(t, v) for tr, vr in zip(c["threads"], c["values"], strict=True) for t, v in zip(tr, vr, strict=True)}
    assert len(pairs) == c["rows"] * c["cols"] and all(t >= 0 for tr in c["threads"] for t in tr)


def test_ldmatrix_dst_rows_of_eight(client):
    j = client.get("/api/atoms/SM75_U32x4_LDSM_N?element_bits=16").json()
    dst = {o["operand"]: o for o in j["operands"]}["dst"]
    assert dst["cols"] == 8 and dst["rows"] == 32
    assert dst["threads"][0][:8] == [0, 0, 1, 1, 2, 2, 3, 3]


def test_unknown_atom_is_422(client):
    r = client.get("/api/atoms/SM99_NOPE")
    assert r.status_code == 422 and "unknown atom" in r.json()["detail"]


def test_sector_efficiency_seed_example(client):
    scalar = client.post("/api/sectors", json={"tv": "((8,4),(2,2)):((2,32),(1,16))", "element_bytes": 4,
                                                "vector": 1}).json()
    assert abs(scalar["utilization"] - 0.5) < 1e-9
    good = client.post("/api/sectors", json={"tv": "((16,2),4):((1,16),32)", "element_bytes": 4, "vector": 1}).json()
    assert abs(good["utilization"] - 1.0) < 1e-9 and good["instructions"][0]["sectors"] == 4
    assert client.post("/api/sectors", json={"tv": "((8,4", "element_bytes": 4}).status_code == 422
