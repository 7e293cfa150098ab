"""Menu and number fields of the explorer, the banks lab, the doctor and the TV atlas's Triton panel, from a
hand-edited permalink: a value the page's menu does not offer is named in the page (app.page_query: an alert naming
the field, the value kept in its form field), never silently drawn as the field's default. Before,
``/?colour=bank`` drew offset colours, ``bits=12`` on a Triton panel priced 16-bit elements,
``/doctor?preset=nope`` opened the first preset and ``/banks?compare=yes`` turned the comparison off.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest

BLOCKED = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
SHARED = "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>"


@pytest.mark.parametrize("query, field", [
    ("colour=bank", "colour"), ("colour=zz", "colour"), ("colour=%D9%A1", "colour"),
    (f"ttgir={quote(SHARED)}&bits=12", "bits"), (f"ttgir={quote(SHARED)}&bits=%D9%A1%D9%A6", "bits"),
    (f"ttgir={quote(SHARED)}&bits=16x", "bits"), ("bits=128", "bits"), ("colour=", "colour"), ("bits=", "bits")])
def test_the_explorer_refuses_a_menu_value_it_does_not_offer(client, query, field):
    r = client.get(f"/?{query}", headers={"Accept": "text/html"})
    assert r.status_code == 200, (query, r.status_code)
    assert field in r.text and "is not one of" in r.text, r.text[:400]


@pytest.mark.parametrize("query", ["colour=none", "colour=NONE", "colour=offset", "bits=8",
                                   f"ttgir={quote(SHARED)}&bits=32"])
def test_the_explorer_reads_every_value_its_menus_offer(client, query):
    assert client.get(f"/?{query}").status_code == 200


@pytest.mark.parametrize("query", ["tt_bits=12", "tt_bits=%D9%A1%D9%A6", "tt_bits=sixteen"])
@pytest.mark.parametrize("panel", ["", "&panel=triton"])
def test_the_tv_atlas_triton_panel_refuses_bits_it_does_not_offer(client, query, panel):
    r = client.get(f"/tv?tt_layout={quote(BLOCKED)}&tt_shared={quote(SHARED)}&{query}{panel}",
                   headers={"Accept": "text/html"})
    assert r.status_code == 200, (query, r.status_code)
    assert "tt_bits" in r.text and "is not one of" in r.text


def test_the_triton_panels_price_the_bits_asked_for(client):
    """32-bit elements are priced as 32-bit, as /api/triton/conflicts prices them."""
    api = client.post("/api/triton/conflicts", json={"distributed": BLOCKED, "shared": SHARED, "shape": [64, 64],
                                                     "element_bits": 32}).json()
    r = client.get(f"/tv?tt_layout={quote(BLOCKED)}&tt_shared={quote(SHARED)}&tt_bits=32&panel=triton")
    assert r.status_code == 200
    assert f"{api['wavefronts']}" in r.text


@pytest.mark.parametrize("query, field", [("preset=nope", "preset"), ("preset=%D9%A1", "preset"),
                                          ("preset=", "preset")])
def test_the_doctor_refuses_a_preset_it_does_not_offer(client, query, field):
    r = client.get(f"/doctor?{query}", headers={"Accept": "text/html"})
    assert r.status_code == 200, (query, r.status_code)
    assert field in r.text, r.text[:400]


@pytest.mark.parametrize("query", ["desc_mn=abc", "desc_mn=7", "desc_mn=257", "desc_mn=%D9%A1%D9%A6", "desc_mn=64.0",
                                   "desc_mn=-64", "descriptor=0x4000004000010000&desc_mn=abc"])
def test_the_doctor_refuses_a_descriptor_mn_it_cannot_decode_with(client, query):
    """``desc_mn`` fills the descriptor doctor's MN field; ``abc`` was dropped in silence and the form showed 64."""
    r = client.get(f"/doctor?{query}", headers={"Accept": "text/html"})
    assert r.status_code == 200, (query, r.status_code)
    assert "desc_mn" in r.text and "8 to 256" in r.text, r.text[:400]


@pytest.mark.parametrize("query", ["preset=FP16-64x64-wgmma", "desc_mn=", "desc_mn=128", "desc_mn=8",
                                   "desc_mn=256"])
def test_the_doctor_reads_what_it_offers(client, query):
    assert client.get(f"/doctor?{query}").status_code == 200


@pytest.mark.parametrize("value, on", [("1", True), ("0", False), ("yes", True), ("off", False), ("", True)])
def test_the_banks_comparison_flag_reads_as_trans_does(client, value, on):
    r = client.get(f"/banks?compare={value}")
    assert r.status_code == 200
    assert ('id="grid-cmp-0"' in r.text) is on


def test_the_banks_comparison_flag_names_a_value_it_cannot_read(client):
    r = client.get("/banks?compare=maybe")
    assert r.status_code == 200 and "compare: &#39;maybe&#39; is not one of" in r.text


@pytest.mark.parametrize("query, field", [("numbers=zz", "numbers"), ("kind=banks&numbers=Sheet%20", "numbers")])
def test_the_drills_page_names_a_numbers_value_it_does_not_offer(client, query, field):
    """``numbers`` is fresh or sheet, as the whiteboard form takes it; anything else was read as fresh."""
    r = client.get(f"/drills?{query}", headers={"Accept": "text/html"}, follow_redirects=False)
    assert r.status_code == 200, (query, r.status_code)
    assert field in r.text


def test_the_lab_names_a_results_file_it_does_not_have(client):
    """``/lab?gemm=<file>`` picks the ladder's results file; a name that is none of them was drawn as the first."""
    r = client.get("/lab?gemm=gemm_nope.json", headers={"Accept": "text/html"})
    assert r.status_code == 200
    assert "gemm" in r.text and "gemm_nope.json" in r.text


@pytest.mark.parametrize("swizzle", ["\u0664", "zz", "(4,8):(8,1", "Sw<3,3"])
def test_a_swizzle_the_banks_lab_cannot_read_is_named(client, swizzle):
    """/api/banks and /banks name the swizzle field when its text does not parse (the parser's words alone said
    "unexpected character ... at position 0", with nothing saying which field)."""
    r = client.post("/api/banks", json={"layout": "(32,32):(32,1)", "swizzle": swizzle, "element_bytes": 4,
                                        "access": {"kind": "column", "index": 5}})
    assert r.status_code == 422
    assert r.json()["detail"].startswith("swizzle: ")
    page = client.get(f"/banks?swizzle={quote(swizzle)}")
    assert page.status_code == 200 and "swizzle: " in page.text
