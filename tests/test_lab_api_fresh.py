"""The lab's job API and the layout doctor's access API on fresh and hostile inputs (seeds 15000-15099): a key that
an access or a job does not read is refused by its name (422, the keys it takes listed), a tile that puts two
coordinates at one offset is refused with the pair before any work starts, and good inputs keep their answers."""

from __future__ import annotations

import random

import pytest
from fastapi.testclient import TestClient

from algebra.doctor.solver_access import KINDS, SolveError, make_access, make_tile
from gpu_worker import registry
from gpu_worker.registry import ParamsError

TILE = "(64,64):(64,1)"
#: A valid access of each kind on TILE (fp16), as the doctor's builder writes them.
GOOD = {
    "offsets": {"kind": "offsets", "offsets": [[t // 8, (t % 8) * 8] for t in range(32)], "vector": 8, "op": "store"},
    "row": {"kind": "row", "index": 3, "vector": 2, "start": 0, "count": 32},
    "column": {"kind": "column", "index": 5, "start": 0, "count": 32},
    "thread_layout": {"kind": "thread_layout", "layout": "(8,4):(512,1)", "vector": 1, "of": "coordinate"},
    "ldmatrix": {"kind": "ldmatrix", "index": [0, 0], "num": 4, "trans": True},
    "stmatrix": {"kind": "stmatrix", "index": [8, 8], "num": 2},
    "tma": {"kind": "tma", "box": [64, 64]},
    "wgmma": {"kind": "wgmma", "operand": "A", "major": "K"},
}


@pytest.fixture(scope="module")
def http(app, monkeypatch_module):
    monkeypatch_module.setenv("LAYOUTLAB_LAB_RATE", "100000/60")
    monkeypatch_module.setenv("LAYOUTLAB_LAB_ADDRESS_RATE", "100000/60")
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        yield c


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def _refused(kind: str, params: dict) -> str:
    with pytest.raises(ParamsError) as exc:
        registry.validate(kind, params)
    return str(exc.value)


# ------------------------------------------------------------------ the doctor's access description: unknown keys

def test_every_kind_of_access_as_the_builder_writes_it_is_read():
    tile = make_tile(TILE, 2)
    for i, kind in enumerate(KINDS):
        acc = make_access({**GOOD[kind], "name": f"a{i}"}, i, tile)
        assert acc.name == f"a{i}"


@pytest.mark.parametrize("kind", KINDS)
def test_a_misspelled_key_names_itself_and_the_keys_the_kind_takes(kind):
    tile = make_tile(TILE, 2)
    rng = random.Random(15000 + KINDS.index(kind))
    good = GOOD[kind]
    key = rng.choice([k for k in good if k != "kind"])
    typo = key[:-1] + key[-1] * 2 if rng.random() < 0.5 else key.upper()
    spec = {("kind" if k == "kind" else (typo if k == key else k)): v for k, v in good.items()}
    with pytest.raises(SolveError) as exc:
        make_access(spec, 2, tile)
    msg = str(exc.value)
    assert msg.startswith(f"accesses[2].{typo}:"), msg
    assert key in msg and "name" in msg and "kind" in msg, msg


def test_a_key_of_another_kind_is_refused_too():
    tile = make_tile(TILE, 2)
    for spec, key in (({"kind": "column", "index": 0, "layout": "(32,1):(1,0)"}, "layout"),
                      ({"kind": "row", "index": 0, "num": 4}, "num"),
                      ({"kind": "ldmatrix", "index": [0, 0], "vector": 8}, "vector"),
                      ({"kind": "tma", "box": [64, 64], "major": "K"}, "major"),
                      ({"kind": "wgmma", "box": [64, 64]}, "box"),
                      ({"kind": "thread_layout", "layout": "(32,1):(1,0)", "offsets": [0]}, "offsets")):
        with pytest.raises(SolveError) as exc:
            make_access(spec, 0, tile)
        assert str(exc.value).startswith(f"accesses[0].{key}:"), (spec, str(exc.value))


def test_the_doctor_routes_and_the_lab_job_refuse_a_misspelled_key(http):
    bad = [{"kind": "column", "idnex": 3}]
    for path, body in (("/api/solve/smem", {"element_bytes": 2, "tile": TILE, "accesses": bad}),
                       ("/api/solve/smem/measured", {"element_bytes": 2, "tile": TILE, "accesses": bad}),
                       ("/api/solve/access", {"element_bytes": 2, "tile": TILE, "access": bad[0]}),
                       ("/api/bench/jobs", {"kind": "smem_solve",
                                            "params": {"element_bytes": 2, "tile": TILE, "accesses": bad}})):
        r = http.post(path, json=body)
        assert r.status_code == 422, (path, r.status_code, r.text)
        assert "accesses[0].idnex" in r.json()["detail"] and "index" in r.json()["detail"], (path, r.text)


def test_a_float_matrix_count_is_no_count():
    tile = make_tile(TILE, 2)
    for num in (4.0, 2.0, True):
        with pytest.raises(SolveError) as exc:
            make_access({"kind": "ldmatrix", "index": [0, 0], "num": num}, 0, tile)
        assert str(exc.value).startswith("accesses[0].num:"), (num, str(exc.value))


def test_an_access_name_is_text():
    tile = make_tile(TILE, 2)
    for name in ({"a": 1}, [1], 5, True):  # null or "" is no name: the kind names it
        with pytest.raises(SolveError) as exc:
            make_access({"kind": "column", "name": name}, 1, tile)
        assert str(exc.value).startswith("accesses[1].name:"), (name, str(exc.value))


# ------------------------------------------------------------------ smem jobs: unused fields, non-injective tiles

def test_an_smem_job_refuses_a_layout_its_variant_does_not_read():
    for variant, extra in (("naive", {}), ("padded", {"pad": 2}), ("swizzle", {"swizzle": "Sw<5,0,5>"})):
        msg = _refused("smem", {"variant": variant, "layout": "(32,32):(1,32)", **extra})
        assert msg.startswith("layout:") and "custom" in msg, (variant, msg)
    assert registry.validate("smem", {"variant": "custom", "layout": "(32,32):(1,32)"}).layout == "(32,32):(1,32)"


def test_an_smem_job_refuses_access_fields_its_access_kind_does_not_read():
    for access, key in (({"kind": "column", "layout": "(32,1):(1,0)"}, "access.layout"),
                        ({"kind": "row", "offsets": list(range(32))}, "access.offsets"),
                        ({"kind": "thread_layout", "layout": "(32,1):(1,0)", "offsets": list(range(32))},
                         "access.offsets"),
                        ({"kind": "column", "num": 2}, "access.num"),
                        ({"kind": "row", "trans": True}, "access.trans")):
        msg = _refused("smem", {"access": access})
        assert msg.startswith(f"{key}:"), (access, msg)


def test_a_custom_tile_given_with_rows_and_cols_must_have_that_shape():
    msg = _refused("smem", {"variant": "custom", "layout": "(64,32):(32,1)", "rows": 32, "cols": 32})
    assert "64x32" in msg and "32x32" in msg, msg
    ok = registry.validate("smem", {"variant": "custom", "layout": "(64,32):(32,1)", "rows": 64, "cols": 32})
    assert ok.plan()["rows"] == 64


def _pair(msg: str) -> tuple[tuple[int, int], tuple[int, int]]:
    import re

    found = re.findall(r"\((\d+), (\d+)\)", msg)
    assert len(found) >= 2, msg
    return (int(found[0][0]), int(found[0][1])), (int(found[1][0]), int(found[1][1]))


def _eval(shape: tuple[int, int], stride: tuple[int, int], rc: tuple[int, int]) -> int:
    return rc[0] * stride[0] + rc[1] * stride[1]


def test_a_non_injective_tile_is_refused_with_two_coordinates_at_one_offset():
    """Fresh flat rank-2 tiles whose strides make two coordinates meet; both job kinds name a pair, checked here
    from the definition (offset = r * d0 + c * d1)."""
    rng = random.Random(15010)
    seen = 0
    while seen < 25:
        rows, cols = rng.choice([4, 8, 16, 32]), rng.choice([4, 8, 16, 32])
        d0, d1 = rng.randrange(0, 9), rng.randrange(0, 9)
        offs = {r * d0 + c * d1 for r in range(rows) for c in range(cols)}
        if len(offs) == rows * cols:
            continue
        seen += 1
        text = f"({rows},{cols}):({d0},{d1})"
        for kind, params in (("smem", {"variant": "custom", "layout": text}),
                             ("smem_solve", {"element_bytes": 4, "tile": text,
                                             "accesses": [{"kind": "column", "index": 0}]})):
            msg = _refused(kind, params)
            assert "injective" in msg, (kind, text, msg)
            a, b = _pair(msg)
            assert a != b and _eval((rows, cols), (d0, d1), a) == _eval((rows, cols), (d0, d1), b), (kind, text, msg)
            assert max(a[0], b[0]) < rows and max(a[1], b[1]) < cols, (kind, text, msg)


def test_a_swizzled_custom_tile_that_is_injective_still_runs():
    plan = registry.validate("smem", {"variant": "custom", "layout": "Sw<3,3,3> o (64,64):(64,1)",
                                      "element_bytes": 2, "access": {"kind": "ldmatrix", "num": 4}}).plan()
    assert plan["prediction"]["max_wavefronts"] == 4


def test_the_job_route_refuses_both_before_any_work(http):
    r = http.post("/api/bench/jobs", json={"kind": "smem", "params": {"variant": "naive", "layout": "(32,32):(1,32)"}})
    assert r.status_code == 422 and r.json()["detail"].startswith("layout:"), r.text
    r = http.post("/api/bench/jobs", json={"kind": "smem", "params": {"variant": "custom", "layout": "(32,32):(1,1)"}})
    assert r.status_code == 422 and "(1, 0)" in r.json()["detail"] and "(0, 1)" in r.json()["detail"], r.text


def test_the_lab_form_sends_only_what_the_variant_and_access_read(http):
    """The form shows every field (rows 32, cols 32, index 0, a leftover custom layout); what it sends is what the
    chosen variant and access read, so a valid choice is refused only for want of a worker (409)."""
    base = {"kind": "smem", "element_bytes": "2", "rows": "32", "cols": "32", "pad": "1", "swizzle": "Sw<5,0,5>",
            "layout": "(64,64):(64,1)", "index": "0", "num": "4", "thread_layout": "(4,8):(64,1)"}
    for extra in ({"variant": "naive", "access": "column"}, {"variant": "custom", "access": "row"},
                  {"variant": "custom", "access": "thread_layout"},
                  {"variant": "padded", "access": "ldmatrix", "pad": "8"}):
        r = http.post("/lab/jobs", data={**base, **extra})
        assert r.status_code == 409 and "no live worker" in r.text, (extra, r.status_code, r.text[:300])
    from app.routes.pages_lab import form_params

    _, params = form_params({**base, "variant": "custom", "access": "thread_layout"})
    assert "rows" not in params and "index" not in params["access"] and params["layout"] == "(64,64):(64,1)"


# ------------------------------------------------------------------ the audit's other finds (seeds 15020-15029)

def test_an_ldmatrix_first_row_is_a_json_integer_named_as_given():
    tile = make_tile(TILE, 2)
    for spec, field in (({"kind": "ldmatrix", "index": False}, "accesses[0].index"),
                        ({"kind": "ldmatrix", "index": True}, "accesses[0].index"),
                        ({"kind": "ldmatrix", "row": True}, "accesses[0].row"),
                        ({"kind": "ldmatrix", "row": 8, "col": 2.0}, "accesses[0].col"),
                        ({"kind": "ldmatrix", "index": [0, 0], "row": 8}, "accesses[0].row"),
                        ({"kind": "ldmatrix", "index": 8, "row": 8}, "accesses[0].row"),
                        ({"kind": "offsets", "index": [True] * 32}, "accesses[0].index[0]"),
                        ({"kind": "offsets", "index": [0] * 32, "offsets": [0] * 32}, "accesses[0].index")):
        with pytest.raises(SolveError) as exc:
            make_access(spec, 0, tile)
        assert str(exc.value).startswith(f"{field}:"), (spec, str(exc.value))
    assert make_access({"kind": "ldmatrix", "index": 8, "col": 8, "num": 1}, 0, tile).lanes[0] == (8, 8)
    assert make_access({"kind": "ldmatrix", "row": 8, "col": 16, "num": 1}, 0, tile).lanes[0] == (8, 16)


def test_a_swizzle_alone_as_a_custom_tile_names_the_layout():
    msg = _refused("smem", {"variant": "custom", "layout": "Sw<3,3,3>"})
    assert msg.startswith("layout") and "tile layout" in msg, msg


def test_the_tma_check_names_each_argument_of_a_wrong_type(http):
    base = {"dtype": "FLOAT16", "global_dim": [4096, 4096], "global_strides": [8192], "box_dim": [64, 64],
            "element_strides": [1, 1], "swizzle": "128B"}
    assert http.post("/api/solve/tma", json=base).json()["valid"] is True
    call = ("cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p, {4096, 4096}, {8192}, {64, 64}, "
            "{1, 1}, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE, "
            "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)")
    for field, value in (("dtype", True), ("dtype", 16), ("dtype", ["FLOAT16"]), ("dtype", None),
                         ("element_strides", {}), ("element_strides", ""), ("element_strides", 1),
                         ("element_strides", [True, 1]), ("global_address", "0"), ("global_address", 1.5),
                         ("global_address", True), ("global_address", -16)):
        r = http.post("/api/solve/tma", json={**base, field: value})
        assert r.status_code == 422 and r.json()["detail"].startswith(f"{field}:"), (field, value, r.text[:200])
    r = http.post("/api/solve/tma", json={"call": call, "box_dim": [32, 32]})
    assert r.status_code == 422 and r.json()["detail"].startswith("box_dim:"), r.text
    assert http.post("/api/solve/tma", json={"call": call}).json()["box_dim"] == [64, 64]


def test_a_linear_layout_import_refuses_a_key_it_would_drop(http):
    gluon = {"reg_bases": [[0, 1]], "lane_bases": [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], "warp_bases": [],
             "block_bases": [], "shape": [8, 8]}
    good = http.post("/api/solve/linear/import", json=gluon)
    assert good.status_code == 200 and good.json()["cute"] == "((4,8),2):((16,1),8)", good.text
    for body, key in (({**gluon, "lane_base": gluon["lane_bases"]}, "lane_base"),
                      ({**gluon, "bases": {}}, "bases"),
                      ({"bases": {"register": [[1]]}, "out_dims": {"dim0": 2}, "shape": [2]}, "bases"),
                      ({"bases": {"register": [[1]]}, "out_dims": {"dim0": 2}, "outdims": {"dim0": 2}}, "outdims")):
        r = http.post("/api/solve/linear/import", json=body)
        assert r.status_code == 422 and r.json()["detail"].startswith(f"{key}:"), (body, r.text)


def test_an_atom_export_reads_element_bits_only_where_it_means_something(http):
    mma = {"name": "SM80_16x8x16_F32F16F16F32_TN", "operand": "C"}
    assert http.get("/api/solve/linear/atom", params=mma).status_code == 200
    for bits in (7, 16, -8):
        r = http.get("/api/solve/linear/atom", params={**mma, "element_bits": bits})
        assert r.status_code == 422 and r.json()["detail"].startswith("element_bits:"), (bits, r.text)
    copy = {"name": "SM75_U16x2_LDSM_T", "operand": "src"}
    assert http.get("/api/solve/linear/atom", params=copy).json()["tv_layout"] == "((8,4),8):((8,0),1)"
    assert http.get("/api/solve/linear/atom", params={**copy, "element_bits": 8}).json()["tv_layout"] == \
        "((8,4),16):((16,0),1)"
    for bits in (7, 0, 64):
        r = http.get("/api/solve/linear/atom", params={**copy, "element_bits": bits})
        assert r.status_code == 422 and r.json()["detail"].startswith("element_bits:"), (bits, r.text)


def test_a_rung_page_reads_a_rung_in_ascii_digits_only(http):
    assert http.get("/lab/rungs/3").status_code == 200
    assert http.get("/lab/rungs/9").status_code == 404
    for rung in ("1.0", "%D9%A3", "%EF%BC%93", "true", "1e0", "+1"):
        r = http.get(f"/lab/rungs/{rung}")
        assert r.status_code == 422 and "rung" in r.text, (rung, r.status_code)


def test_an_smem_access_index_outside_the_tile_is_refused_not_wrapped():
    """A column 100 of a 32-column tile used to read column 4 (100 mod 32); the accesses after the first still wrap."""
    rng = random.Random(15050)
    for _ in range(20):
        rows, cols = rng.choice([8, 16, 32, 64]), rng.choice([8, 16, 32, 64])
        base = {"element_bytes": 2, "rows": rows, "cols": cols}
        for kind, count in (("column", cols), ("row", rows), ("ldmatrix", rows * cols // 64)):
            msg = _refused("smem", {**base, "access": {"kind": kind, "index": count + rng.randrange(100)}})
            assert msg.startswith("access.index:") and str(count - 1) in msg, (kind, rows, cols, msg)
            plan = registry.validate("smem", {**base, "access": {"kind": kind, "index": count - 1}}).plan()
            first = plan["coords"][0]
            assert first == {"column": (0, cols - 1), "row": (rows - 1, 0),
                             "ldmatrix": (rows - 8, cols - 8)}[kind], (kind, rows, cols, first)
