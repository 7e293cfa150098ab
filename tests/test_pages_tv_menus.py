"""The TV atlas's menu fields (``app.routes.pages_tv.MENUS``): a value no menu offers, from a hand-edited permalink,
is named in the page (app.page_query: 200, an alert naming the field and its choices, the value kept in
its form field), on the page and on a section's fragment alike. Before,
``bits=12``, ``hmajor=X``, ``tswz=16B`` or ``tm_cluster=٢`` were read as the field's default, and the page drew an
answer to a question that was not asked."""

from __future__ import annotations

import pytest

from app.routes.pages_tv import MENUS


@pytest.mark.parametrize("query, field", [
    ("bits=12", "bits"), ("bits=%D9%A1%D9%A6", "bits"), ("tbits=sixteen", "tbits"), ("cw_bits=24", "cw_bits"),
    ("hmajor=X", "hmajor"), ("hspan=48", "hspan"), ("hbits=64", "hbits"), ("tswz=16B", "tswz"),
    ("bits=", "bits"), ("eb=3", "eb"), ("eb=", "eb"), ("atom=nope", "atom"), ("top=", "top"),
    ("tm_dtype=", "tm_dtype"), ("kp_a=nope", "kp_a"),
    ("tm_cluster=%D9%A2", "tm_cluster"), ("tm_cluster=17", "tm_cluster"), ("tm_cluster=0", "tm_cluster"),
    # the Blackwell section's menus: drawn as an error in the panel while the select showed its first option
    ("bw_kind=mxf8f6f4", "bw_kind"), ("bw_kind=xyz", "bw_kind"), ("bw_cta=3", "bw_cta"), ("bw_cta=%D9%A2", "bw_cta"),
    ("bw_src=gmem", "bw_src"), ("bw_am=X", "bw_am"), ("bw_bm=KM", "bw_bm"),
    ("bw_ld=SM100_TMEM_LOAD_32dp32b3x", "bw_ld"), ("bw_ld=SM100_TMEM_LOAD_16dp256b64x", "bw_ld")])
@pytest.mark.parametrize("panel", ["", "&panel=tmac", "&panel=copywalk", "&panel=blackwell"])
def test_a_value_no_menu_offers_is_refused_naming_the_field(client, query, field, panel):
    r = client.get(f"/tv?{query}{panel}", headers={"Accept": "text/html"})
    assert r.status_code == 200, (query, r.status_code)
    assert field in r.text and "is not one of" in r.text, r.text[:400]


@pytest.mark.parametrize("query", ["bits=32", "hmajor=mn", "hmajor=MN", "hspan=64", "hbits=8", "tswz=128b",
                                   "tm_cluster=4", "tbits=8", "cw_bits=64", "bits=128", "bw_kind=TF32",
                                   "bw_cta=2", "bw_src=tmem", "bw_am=mn", "bw_bm=MN", "bw_kind=i8",
                                   "bw_ld=SM100_TMEM_LOAD_16dp256b32x_16b"])
def test_every_value_a_menu_offers_is_read(client, query):
    r = client.get(f"/tv?{query}")
    assert r.status_code == 200, (query, r.text[:300])


def test_the_menus_cover_what_the_page_offers():
    assert set(MENUS) == {"bits", "tbits", "cw_bits", "hmajor", "hspan", "hbits", "tswz", "tm_cluster", "tt_bits",
                          "bw_kind", "bw_cta", "bw_src", "bw_am", "bw_bm", "bw_ld", "eb", "atom", "tatom", "cw_atom",
                          "mw_atom", "kp_atom", "kp_a", "kp_b", "kp_c", "top", "tdtype", "tm_dtype"}
    assert all(default in allowed for allowed, default in MENUS.values())


def test_the_blackwell_form_shows_the_value_it_drew(client):
    # a menu value the page reads (any case) is the one its select shows, so the form and the drawing agree
    r = client.get("/tv?bw_kind=TF32&bw_am=mn&bw_ld=sm100_tmem_load_16dp128b2x", headers={"HX-Request": "true",
                                                                                      "HX-Target": "blackwell"})
    assert r.status_code == 200 and "SM100_MMA_TF32_SS" in r.text and "tcgen05.ld.sync.aligned.16x128b.x2" in r.text
    page = client.get("/tv?bw_kind=TF32&bw_am=mn&bw_ld=sm100_tmem_load_16dp128b2x").text
    assert "<option selected>tf32</option>" in page and "<option selected>MN</option>" in page
    assert "<option selected>SM100_TMEM_LOAD_16dp128b2x</option>" in page
