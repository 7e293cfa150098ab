"""The TV atlas's menu fields (``app.routes.pages_tv.MENUS``): a value no menu offers, from a hand-edited permalink,
is refused with a 422 that names the field and its choices, on the page and on a section's fragment alike. Before,
``bits=12``, ``hmajor=X``, ``tswz=16B`` or ``tm_cluster=٢`` were read as the field's default, and the page drew an
answer to a question that was not asked."""

from __future__ import annotations

import pytest

from app.routes.pages_tv import MENUS


@pytest.mark.parametrize("query, field", [
    ("bits=12", "bits"), ("bits=%D9%A1%D9%A6", "bits"), ("tbits=sixteen", "tbits"), ("cw_bits=24", "cw_bits"),
    ("hmajor=X", "hmajor"), ("hspan=48", "hspan"), ("hbits=64", "hbits"), ("tswz=16B", "tswz"),
    ("tm_cluster=%D9%A2", "tm_cluster"), ("tm_cluster=17", "tm_cluster"), ("tm_cluster=0", "tm_cluster")])
@pytest.mark.parametrize("panel", ["", "&panel=tmac", "&panel=copywalk"])
def test_a_value_no_menu_offers_is_refused_naming_the_field(client, query, field, panel):
    r = client.get(f"/tv?{query}{panel}", headers={"Accept": "text/html"})
    assert r.status_code == 422, (query, r.status_code)
    assert field in r.text and "is not one of" in r.text, r.text[:400]


@pytest.mark.parametrize("query", ["bits=32", "hmajor=mn", "hmajor=MN", "hspan=64", "hbits=8", "tswz=128b",
                                   "tm_cluster=4", "tbits=8", "cw_bits=64", "bits=", "bits=128"])
def test_every_value_a_menu_offers_is_read(client, query):
    r = client.get(f"/tv?{query}")
    assert r.status_code == 200, (query, r.text[:300])


def test_the_menus_cover_what_the_page_offers():
    assert set(MENUS) == {"bits", "tbits", "cw_bits", "hmajor", "hspan", "hbits", "tswz", "tm_cluster", "tt_bits"}
    assert all(default in allowed for allowed, default in MENUS.values())
