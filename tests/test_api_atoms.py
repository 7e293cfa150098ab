"""/api/atoms, /api/tiled, /api/sectors and /api/tma: TV grids of MMA / copy atoms, tiled copies and MMAs, sector
efficiency and the TMA tensor map rules."""

from __future__ import annotations

import pytest

import algebra as A


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


def test_tiled_copy_contract_example(client):
    """CONTRACT §3b: make_tiled_copy(cp.async 16B, (16,8):(8,1), (1,8), 16 bits) -> tiler (16,64)."""
    r = client.post("/api/tiled", json={"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "thr_layout": "(16,8):(8,1)",
                                        "val_layout": "(1,8)", "element_bits": 16})
    assert r.status_code == 200, r.text
    j = r.json()
    assert j["kind"] == "copy" and j["tile"] == "16 x 64" and j["tv_layout"] == "((8,16),8):((128,1),16)"
    tv = A.parse(j["tv_layout"])
    for t in (0, 9, 127):
        for v in range(8):
            idx = tv((t, v))
            assert (j["threads"][idx % 16][idx // 16], j["values"][idx % 16][idx // 16]) == (t, v)


def test_tiled_mma_partitions_cover_the_tile(client):
    r = client.post("/api/tiled", json={"atom": "SM80_16x8x16_F32F16F16F32_TN", "atom_layout": "(2,2,1)",
                                        "operand": "C"})
    j = r.json()
    assert r.status_code == 200 and j["tile"] == "32 x 16 x 16" and j["num_threads"] == 128
    assert (j["rows"], j["cols"]) == (32, 16)
    # the atom's C layout for warp (0,0); warp (m, n) = thread 32*m + 64*n holds the block shifted by (16m, 8n)
    c = A.parse("((4,8),(2,2)):((32,1),(16,8))")
    for t in range(32):
        for v in range(4):
            idx = c((t, v))
            m, n = idx % 16, idx // 16
            assert j["threads"][m][n] == t and j["values"][m][n] == v
            assert j["threads"][m + 16][n] == t + 32 and j["threads"][m][n + 8] == t + 64
    a = client.post("/api/tiled", json={"atom": "SM80_16x8x16_F32F16F16F32_TN", "atom_layout": "(2,2,1)",
                                        "operand": "A"}).json()
    assert (a["rows"], a["cols"]) == (32, 16) and min(min(r) for r in a["threads"]) == 0


@pytest.mark.parametrize(("body", "needle"), [
    ({"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "thr_layout": "(16,8):(8,1)", "val_layout": "(1,4)"}, "values"),
    ({"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "thr_layout": "(64,64):(64,1)", "val_layout": "(1,8)"}, "cap"),
    ({"atom": "SM80_CP_ASYNC_CACHEALWAYS_16B", "thr_layout": "(16,8", "val_layout": "(1,8)"}, "thread layout"),
    ({"atom": "SM80_16x8x16_F32F16F16F32_TN", "atom_layout": "(2,2,1)", "operand": "D"}, "operand"),
    ({"atom": "NOPE", "thr_layout": "32:1"}, "NOPE"),
    # a blank operand is refused as " " is, not read as C (MMA) or A (make_tiled_copy_A)
    ({"atom": "SM80_16x8x16_F32F16F16F32_TN", "operand": ""}, "operand"),
    ({"atom": "SM75_U32x4_LDSM_N", "mma": "SM80_16x8x16_F32F16F16F32_TN", "operand": ""}, "operand"),
    ({"atom": "SM75_U32x4_LDSM_N", "mma": "SM80_16x8x16_F32F16F16F32_TN", "operand": " "}, "operand"),
])
def test_tiled_refusals_are_422(client, body, needle):
    r = client.post("/api/tiled", json=body)
    assert r.status_code == 422 and needle in r.json()["detail"]


def test_tma_rules(client):
    ok = client.post("/api/tma", json={"tensor": "(4096,4096):(4096,1)", "box": "64,64"}).json()
    assert ok["valid"] and ok["swizzle"] == "128B" and ok["box_dim"] == [64, 64] and ok["global_strides"] == [8192]
    wide = client.post("/api/tma", json={"tensor": "(4096,4096):(4096,1)", "box": "64,128"}).json()
    assert not wide["valid"] and [c["rule"] for c in wide["checks"] if not c["ok"]] == ["box_inner_swizzle"]
    odd = client.post("/api/tma", json={"tensor": "(1024,1001):(1001,1)", "box": "8,8", "dtype": "FLOAT32",
                                        "swizzle": "NONE"}).json()
    assert [c["rule"] for c in odd["checks"] if not c["ok"]] == ["global_strides[0]"]  # 4004 B is not a multiple of 16
    mn = client.post("/api/tma", json={"tensor": "(4096,4096):(4096,1)", "box": "64,64", "major": "MN"})
    assert mn.status_code == 422 and "transposed" in mn.json()["detail"]


def test_gmma_atom_and_descriptor(client):
    j = client.post("/api/gmma", json={"major": "K", "span_bytes": 128, "element_bits": 16, "tile_mn": 64,
                                       "tile_k": 64}).json()
    assert j["atom"] == "GMMA::Layout_K_SW128_Atom<half_t>" and j["layout"] == "Sw<3,3,3> o (8,64):(64,1)"
    assert j["byte_swizzle"] == [3, 4, 3]
    sw = A.parse(j["layout"])
    assert all(j["offsets"][r][c] == sw(r + 8 * c) for r in range(8) for c in range(64))
    f = {x["name"]: x for x in j["fields"]}
    assert f["layout_type"]["meaning"] == "SWIZZLE_128B" and f["stride_byte_offset"]["value"] == 1024
    value = int(j["descriptor"], 16)
    assert (value >> 62) == 1 and ((value >> 32) & 0x3FFF) == 1024 >> 4 and ((value >> 16) & 0x3FFF) == 1
    bad = client.post("/api/gmma", json={"tile_mn": 60})
    assert bad.status_code == 422 and "multiple" in bad.json()["detail"]
    assert client.post("/api/gmma", json={"major": "X"}).status_code == 422
