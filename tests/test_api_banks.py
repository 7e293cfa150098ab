"""POST /api/banks: CONTRACT §2/§3 bank maps, ways and wavefronts; bad input."""

from __future__ import annotations


def banks(client, layout, element_bytes=2, swizzle=None, **access):
    body = {"layout": layout, "swizzle": swizzle, "element_bytes": element_bytes, "access": access}
    return client.post("/api/banks", json=body)


def test_fp16_column_read_is_8_way_then_swizzle_fixes_it(client):
    naive = banks(client, "(8,64):(64,1)", kind="column", index=0).json()
    assert naive["banks"] == [0] * 8 and naive["ways"] == 8 and naive["wavefronts"] == 8
    assert naive["byte_addresses"] == [128 * r for r in range(8)]
    fixed = banks(client, "(8,64):(64,1)", swizzle="Sw<3,3,3>", kind="column", index=0).json()
    assert fixed["ways"] == 1 and fixed["wavefronts"] == 1
    assert sorted(fixed["banks"]) == [0, 4, 8, 12, 16, 20, 24, 28]


def test_swizzle_in_the_layout_equals_swizzle_field(client):
    a = banks(client, "Sw<3,3,3> o (8,64):(64,1)", kind="column", index=3).json()
    b = banks(client, "(8,64):(64,1)", swizzle="Sw<3,3,3>", kind="column", index=3).json()
    assert a == b


def test_fp32_32x32_column_and_contract_example(client):
    j = banks(client, "(32,32):(32,1)", element_bytes=4, kind="column", index=5).json()
    assert j["ways"] == 32 and j["banks"] == [5] * 32
    j = banks(client, "(32,32):(32,1)", element_bytes=4, swizzle="Sw<5,0,5>", kind="column", index=5).json()
    assert j["ways"] == 1 and sorted(j["banks"]) == list(range(32))
    assert all(b == (a // 4) % 32 for a, b in zip(j["byte_addresses"], j["banks"], strict=True))


def test_row_read_is_conflict_free(client):
    j = banks(client, "(8,64):(64,1)", kind="row", index=2).json()
    assert j["ways"] == 1 and len(j["banks"]) == 32


def test_ldmatrix_phases(client):
    j = banks(client, "(16,64):(64,1)", kind="ldmatrix", index=0).json()
    assert len(j["phases"]) == 4 and j["ways"] == 8 and j["wavefronts"] == 32
    j = banks(client, "(16,64):(64,1)", swizzle="Sw<3,3,3>", kind="ldmatrix", index=0).json()
    assert j["phases"] == [1, 1, 1, 1] and j["wavefronts"] == 4


def test_explicit_offsets_broadcast(client):
    j = banks(client, "(8,64):(64,1)", element_bytes=4, kind="offsets", index=[0] * 32).json()
    assert j["ways"] == 1 and j["wavefronts"] == 1  # one word, broadcast to every lane


def test_bad_input_is_422(client):
    assert banks(client, "(8,64):(64,1)", kind="column", index=64).status_code == 422
    assert banks(client, "(8,64", kind="column", index=0).status_code == 422
    assert banks(client, "(8,64):(64,1)", swizzle="Sw<1,2>x", kind="column", index=0).status_code == 422
    assert banks(client, "(8,64):(64,1)", element_bytes=3, kind="column", index=0).status_code == 422
    r = banks(client, "(8,64):(64,1)", kind="diagonal", index=0)
    assert r.status_code == 422 and isinstance(r.json()["detail"], str)
    r = banks(client, "Sw<3,3,3> o (8,64):(64,1)", swizzle="Sw<3,3,3>", kind="column", index=0)
    assert r.status_code == 422 and "either" in r.json()["detail"]
