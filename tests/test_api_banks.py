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


def test_offsets_as_row_col_with_a_vector_read_as_the_doctor_reads_them(client):
    """CONTRACT §5: the doctor's access kinds are /api/banks' -- `offsets` one [row, col] per lane with `vector`
    elements each. /api/banks refused that form ("vector accesses from coordinates") while /api/solve/access
    answered it; the vector runs along the row, (r, c) .. (r, c + v - 1), as `row` reads it. Fresh draws, seed
    17588: every lane's byte address and the wavefronts equal the doctor's preview and the offsets given as
    integers."""
    import random

    rng = random.Random(17588)
    for _ in range(12):
        eb = rng.choice((1, 2, 4, 8))
        rows, cols = 1 << rng.randint(3, 6), 1 << rng.randint(4, 7)
        tile = f"({rows},{cols}):({cols},1)"
        v = rng.choice([x for x in (2, 4, 8, 16) if x * eb <= 16])
        cells = [[rng.randrange(rows), v * rng.randrange(cols // v)] for _ in range(rng.choice((8, 16, 32)))]
        r = banks(client, tile, eb, kind="offsets", index=cells, vector=v)
        assert r.status_code == 200, r.text
        j = r.json()
        doc = client.post("/api/solve/access", json={"element_bytes": eb, "tile": tile, "access": {
            "kind": "offsets", "offsets": cells, "vector": v}}).json()
        assert j["byte_addresses"] == [lane["byte"] for lane in doc["lanes"]]
        assert j["wavefronts"] == sum(doc["wavefronts"]) if isinstance(doc["wavefronts"], list) else doc["wavefronts"]
        flat = banks(client, tile, eb, kind="offsets", index=[a * cols + b for a, b in cells], vector=v).json()
        assert (flat["byte_addresses"], flat["phases"]) == (j["byte_addresses"], j["phases"])


def test_offsets_as_row_col_whose_vector_leaves_the_row_or_is_split_are_refused(client):
    r = banks(client, "(8,64):(64,1)", 2, kind="offsets", index=[[0, 60]], vector=8)
    assert r.status_code == 422 and "lane 0" in r.json()["detail"]
    r = banks(client, "(8,64):(1,8)", 2, kind="offsets", index=[[0, 0]], vector=2)  # column-major: no row vector
    assert r.status_code == 422 and "contiguous" in r.json()["detail"]
