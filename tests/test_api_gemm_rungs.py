"""``GET /api/bench/gemm/rungs`` (CONTRACT §6), the rung pages ``/lab/rungs/{k}`` and the ladder's table on
``/lab``: exactly the contract's fields, layouts that parse, predictions that the banks lab reproduces from each
access's own link, every link a page that answers, and the committed H200 record beside the model."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

import algebra as A
from app.services import ladder_layouts as L

RUNG_KEYS = {"rung", "name", "tile", "stages", "smem", "tma", "wgmma_desc", "atoms", "links"}
SMEM_KEYS = {"operand", "layout", "swizzle", "bytes", "accesses"}
ACCESS_KEYS = {"name", "predicted_wavefronts", "ideal"}


@pytest.fixture(scope="module")
def rungs(client: Any) -> list[dict]:
    r = client.get("/api/bench/gemm/rungs")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    return r.json()


def test_exactly_the_contract_fields(rungs):
    assert [r["rung"] for r in rungs] == list(range(1, 9))
    for r in rungs:
        assert set(r) == RUNG_KEYS, r["rung"]
        assert len(r["tile"]) == 3 and r["stages"] >= 1 and set(r["atoms"]) == {"mma", "copy"}
        for s in r["smem"]:
            assert set(s) == SMEM_KEYS and s["bytes"] > 0
            assert all(set(a) == ACCESS_KEYS for a in s["accesses"])
        assert (r["tma"] is None) == (r["wgmma_desc"] is None) == (r["rung"] < 6)


def test_every_layout_parses_with_its_swizzle(rungs):
    for r in rungs:
        for s in r["smem"]:
            lay = A.parse(s["layout"])
            assert (s["swizzle"] is None) == isinstance(lay, A.Layout)
            if s["swizzle"]:
                assert s["layout"].startswith(s["swizzle"] + " o ")
                assert str(lay.layout_a) == s["swizzle"]


def _banks_body(url: str) -> dict:
    q = {k: v[0] for k, v in parse_qs(urlsplit(url).query, keep_blank_values=True).items()}
    kind, _, arg = q["access"].partition(":")
    nums = [int(x) for x in arg.split(",")]
    access = ({"kind": "ldmatrix", "index": nums, "num": int(q.get("num", 4))} if kind == "ldmatrix" else
              {"kind": "offsets", "index": nums, "vector": int(q.get("vector", 1))})
    return {"layout": q["layout"], "swizzle": q["swizzle"] or None, "element_bytes": int(q["element_bytes"]),
            "access": access}


def test_each_prediction_is_what_the_banks_lab_computes_from_the_access_link(client, rungs):
    checked = 0
    for r in rungs:
        links = {(b["operand"], b["access"]): b["url"] for b in r["links"]["banks"]}
        for s in r["smem"]:
            for a in s["accesses"]:
                body = _banks_body(links[(s["operand"], a["name"])])
                got = client.post("/api/banks", json=body)
                assert got.status_code == 200, got.text
                assert got.json()["wavefronts"] == a["predicted_wavefronts"], (r["rung"], a["name"])
                assert len(got.json()["phases"]) == a["ideal"], (r["rung"], a["name"])
                checked += 1
    assert checked >= 30


def test_the_unpadded_rung_is_not_ideal_and_the_padded_and_swizzled_rungs_are(rungs):
    def ideal(r: dict) -> bool:
        return all(a["predicted_wavefronts"] == a["ideal"] for s in r["smem"] for a in s["accesses"])
    by = {r["rung"]: r for r in rungs}
    assert not ideal(by[2]) and ideal(by[3]) and ideal(by[4])
    assert by[3]["smem"][0]["layout"] == "(128,64):(72,1)" and by[4]["smem"][0]["swizzle"] == "Sw<3,3,3>"


def test_descriptors_and_boxes(rungs):
    for r in rungs[5:]:
        d = r["wgmma_desc"]
        assert (d["layout_type"], d["leading_byte_offset"], d["stride_byte_offset"]) == (1, 16, 1024)
        assert d["value"] == "0x4000004000010000" and f"n{r['tile'][1]}k16" in d["instruction"]
        assert all(b["swizzle"] == "CU_TENSOR_MAP_SWIZZLE_128B" and b["box_dim"][0] == 64 for b in r["tma"])
    assert [b["multicast"] for b in rungs[7]["tma"]] == [1, 2, 1]


def test_every_link_answers(client, rungs):
    urls = set()
    for r in rungs:
        lk = r["links"]
        urls |= {lk["page"], *lk["explorer"].values(), *(b["url"] for b in lk["banks"])}
        urls |= {u for u in lk["tv"].values() if u} | {t["url"] for t in lk["doctor"]["tma"]}
        if lk["doctor"]["descriptor"]:
            urls.add(lk["doctor"]["descriptor"])
    assert len(urls) > 30
    for u in sorted(urls):
        page = client.get(u)
        assert page.status_code == 200, u
        assert 'class="msg error" role="alert"' not in page.text, u  # the page drew what it was given
    assert rungs[1]["links"]["tv"] == {"mma": "/tv?atom=SM80_16x8x16_F32BF16BF16F32_TN&operand=A",
                                      "copy": "/tv?atom=SM75_U32x4_LDSM_N"}


def test_the_doctor_opens_on_the_rungs_descriptor_and_box(client, rungs):
    page = client.get(rungs[7]["links"]["doctor"]["descriptor"]).text
    assert re.search(r'id="desc-form" data-run="1"', page) and 'value="0x4000004000010000"' in page
    assert 'value="Sw&lt;3,3,3&gt; o (64,64):(64,1)"' in page
    page = client.get(rungs[7]["links"]["doctor"]["tma"][1]["url"]).text
    assert 'id="tma-form" data-run="1"' in page and "{64, 128}" in page and "SWIZZLE_128B" in page
    plain = client.get("/doctor").text
    assert "data-run" not in plain and 'value="0x4000004000010000"' in plain  # the default, not run
    assert client.get("/doctor?descriptor=" + "9" * 500 + "&desc_mn=64").status_code == 200


def test_rung_pages(client):
    page = client.get("/lab/rungs/3").text
    assert "What changed from rung 2" in page and "bank 4r mod 32" in page
    assert page.count('class="good">equal') >= 2 and 'class="bad">differs' not in page
    assert 'href="/lab/rungs/2"' in page and 'href="/lab/rungs/4"' in page
    page8 = client.get("/lab/rungs/8").text
    assert 'id="rung-timing"' in page8 and "wgmma operand reads" in page8 and "decode it in the wgmma doctor" in \
        page8.lower()
    assert "Where the ladder starts" in client.get("/lab/rungs/1").text
    assert client.get("/lab/rungs/9").status_code == 404
    assert client.get("/lab/rungs/0").status_code == 404
    assert client.get("/lab/rungs/two").status_code == 422


def test_the_lab_table_holds_every_rung_beside_the_record(client):
    page = client.get("/lab").text
    table = page[page.index('id="gemm-layouts-table"'):].split("</table>", 1)[0]
    assert len(re.findall(r'<tr data-rung="\d">', table)) == 8
    assert table.count('class="good">equal') == 8
    assert "32.0 · 32.0" in table  # rung 2's ldmatrix, the model beside Nsight


def test_the_committed_record_equals_the_model_and_keeps_rung_8s_speed():
    doc = L.record()
    assert doc and doc["nvidia_smi_before"]["name"] == "NVIDIA H200" and doc["nvidia_smi_before"]["driver_version"]
    assert doc["all_measured_equal_predicted"] and doc["all_checks_passed"]
    from gpu_worker.gemm_decl import predicted_counters

    m, n, k = (int(x) for x in doc["profile_size"].split("x"))
    for row in doc["rungs"]:
        assert row["predicted"] == json.loads(json.dumps(predicted_counters(row["rung"], m, n, k))), row["rung"]
        for cls, pred in row["predicted"].items():
            meas = row["measured"][cls]
            assert meas["instructions"] == pred["instructions"], (row["rung"], cls)
            if pred["instructions"]:
                assert abs(meas["wavefronts_per_instruction"] - pred["wavefronts_per_instruction"]) < 0.05
    conflicts = {r["rung"]: r["measured"]["ld"]["conflicts"] for r in doc["rungs"]}
    assert conflicts[2] > 1e6 and conflicts[3] == conflicts[4] == conflicts[5] == 0
    timing = doc["timing"]["summary"]
    assert timing["4096x4096x4096"]["pct_of_cublas"] >= 99 and timing["8192x8192x8192"]["pct_of_cublas"] >= 102


def test_no_record_means_no_measured_column(tmp_path):
    assert L.record(tmp_path) is None and L.ladder_rows(tmp_path)["meta"] is None
    (tmp_path / "gemm_layouts_bad.json").write_text("{not json")
    assert L.record(tmp_path) is None
    page = L.rung_page(2, tmp_path)
    assert page["row"] is None and page["classes"] == []
    with pytest.raises(L.UnknownRung):
        L.rung_page(12)


def test_every_rung_page_names_its_copy_atom_with_a_link_and_prints_no_python_object(client):
    for k in range(1, 9):
        page = client.get(f"/lab/rungs/{k}").text
        assert " object at 0x" not in page and "<built-in method" not in page and "&lt;built-in" not in page, k
        copy = re.search(r"Copy that feeds it: (.*?)</li>", page, re.S)
        assert copy, k
        link = re.search(r'href="([^"]+)"', copy.group(1))
        assert link is None or client.get(link.group(1).replace("&amp;", "&")).status_code == 200, k


def test_a_template_that_prints_a_method_is_refused_as_it_renders():
    from app.templating import templates

    with pytest.raises(TypeError, match="printed code"):
        templates.env.from_string("{{ d.copy }}").render(d={"copy": "x"})
    assert templates.env.from_string("{{ d['copy'] }}").render(d={"copy": "x"}) == "x"
