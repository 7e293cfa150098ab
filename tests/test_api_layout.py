"""POST /api/layout: facts, the rank-2 table (CONTRACT §2), caps and bad input."""

from __future__ import annotations

import pytest


def post(client, text: str):
    return client.post("/api/layout", json={"layout": text})


def test_hierarchical_layout_table(client):
    r = post(client, "(4,(2,4)):(2,(1,8))")
    assert r.status_code == 200
    j = r.json()
    assert (j["layout"], j["size"], j["cosize"], j["rank"], j["depth"]) == ("(4,(2,4)):(2,(1,8))", 32, 32, 2, 2)
    t = j["table"]
    assert (t["rows"], t["cols"]) == (4, 8)
    assert t["offsets"][1][5] == 19          # coordinate (1, 5): 1*2 + (1,2).(1,8) = 19
    assert t["offsets"][0] == [0, 1, 8, 9, 16, 17, 24, 25]
    assert j["injective"] is True and j["compact"] is True


def test_row_major_and_column_major(client):
    rm = post(client, "(4,8):(8,1)").json()["table"]["offsets"]
    cm = post(client, "(4,8):(1,4)").json()["table"]["offsets"]
    assert all(rm[i][j] == 8 * i + j and cm[i][j] == i + 4 * j for i in range(4) for j in range(8))


def test_rank1_is_one_row(client):
    j = post(client, "8:2").json()
    assert j["rank"] == 1
    assert j["table"] == {"rows": 1, "cols": 8, "offsets": [[0, 2, 4, 6, 8, 10, 12, 14]]}


def test_the_empty_layout_is_one_cell_and_its_bank_accesses_say_what_is_wrong(client):
    """():() as CuTe prints the rank-0 layout: one cell at offset 0; a bank access reads its one cell, and a row or
    column access is refused with CuTe's reason (a shape with no modes), not an internal error."""
    j = post(client, "():()").json()
    assert (j["layout"], j["size"], j["rank"], j["table"]["offsets"]) == ("():()", 1, 0, [[0]])
    banks = {"layout": "():()", "swizzle": None, "element_bytes": 4}
    r = client.post("/api/banks", json={**banks, "access": {"kind": "offsets", "index": [0] * 32}})
    assert r.status_code == 200 and r.json()["banks"] == [0] * 32
    r = client.post("/api/banks", json={**banks, "access": {"kind": "column", "index": 0}})
    assert r.status_code == 422 and "has no modes" in r.json()["detail"]


def test_rank3_folds_modes_into_columns(client):
    t = post(client, "(4,2,3):(1,12,4)").json()["table"]
    assert (t["rows"], t["cols"]) == (4, 6)
    # column j = (j % 2, j // 2) of modes 1 and 2
    assert all(t["offsets"][i][j] == i + 12 * (j % 2) + 4 * (j // 2) for i in range(4) for j in range(6))


def test_stride_zero_is_not_injective(client):
    j = post(client, "(4,8):(0,1)").json()
    assert j["injective"] is False and j["compact"] is False and j["cosize"] == 8


def test_swizzled_layout_offsets(client):
    t = post(client, "Sw<3,3,3> o (8,64):(64,1)").json()["table"]["offsets"]
    for r in range(8):  # the 16-byte chunk index of row r is XOR-ed with r
        assert t[r][0] == 64 * r + 8 * r


def test_over_enumeration_cap_keeps_scalar_facts(client):
    r = post(client, "(2048,2048):(1,2048)")
    assert r.status_code == 200
    j = r.json()
    assert j["size"] == 2048 * 2048 and j["cosize"] == 2048 * 2048 and j["table"] is None
    assert "2^20" in j["note"]


@pytest.mark.parametrize("bad", ["(4,8", "(4,8):(1,2,3)", "abc", ":", "(4,8):(1,4))", "((((((((2)))))))):1"])
def test_malformed_layout_is_422(client, bad):
    r = post(client, bad)
    assert r.status_code == 422
    assert isinstance(r.json()["detail"], str) and r.json()["detail"]


def test_missing_field_and_too_long_are_422(client):
    assert client.post("/api/layout", json={}).status_code == 422
    r = post(client, "(" + "1," * 3000 + "1):1")
    assert r.status_code == 422
    assert "4000" in r.json()["detail"].replace(",", "")


def test_depth_cap(client):
    r = post(client, "(((((((2,2),2),2),2),2),2),2):(((((((1,2),4),8),16),32),64),128)")
    assert r.status_code == 422 and "depth" in r.json()["detail"]


def test_enumeration_cap_size_is_answered_in_full(client):
    """At the cap (2^20 cells) the table is enumerated; one row for rank 1, offsets[i][j] = L(i + rows * j)."""
    t = post(client, "1048576:3").json()["table"]
    assert (t["rows"], t["cols"]) == (1, 1 << 20) and t["offsets"][0][:3] == [0, 3, 6]
    assert t["offsets"][0][-1] == 3 * ((1 << 20) - 1)
    r = post(client, "Sw<3,4,3> o (1024,1024):(1024,1)").json()  # swizzled cells cost 8: capped at 2^18
    assert r["table"] is None and "enumeration cap of 2^18 swizzled cells" in r["note"]
    t = post(client, "Sw<3,4,3> o (512,512):(512,1)").json()["table"]
    import algebra as A

    L = A.parse("Sw<3,4,3> o (512,512):(512,1)")
    assert all(t["offsets"][i][j] == L(i + 512 * j) for i in (0, 5, 511) for j in (0, 17, 511))


def test_hover_metadata_only_for_drawn_grids():
    from app.config import MAX_CELLS
    from app.services.layouts import describe_layout

    big = describe_layout(f"{2 * MAX_CELLS}:1")
    assert big.offsets is not None and big.col_crd == [] and big.col_off == []
    v = describe_layout("((2,3),(2,2)):((1,2),(6,12))")
    for i in range(v.rows):
        for j in range(v.cols):
            assert v.row_off[i] + sum(v.col_off[j]) == v.offsets[i][j]
    assert v.row_crd[5] == "(1,2)" and v.col_crd[3] == ["(1,1)"]


def test_layout_cache_is_bounded_by_bytes(monkeypatch):
    from algebra.core.memo import BoundedCache
    from app.services import layouts

    monkeypatch.setattr(layouts, "_cache", BoundedCache(4 << 20, "test"))
    for n in range(60, 120):
        assert layouts.describe_layout(f"({n},32):(32,1)").offsets[1][0] == 32
    assert 0 < layouts._cache.bytes <= 4 << 20
    assert layouts._cache.get("(119,32):(32,1)") is not None and layouts._cache.get("(60,32):(32,1)") is None
