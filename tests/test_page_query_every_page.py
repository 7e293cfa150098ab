"""Every page answers a menu value it does not offer the same way (app.page_query): status 200, the page itself with
the field named inline (``role="alert"``), and the value kept in the form's field, marked invalid; the JSON API keeps
its 422 ``{"detail"}``. Before, the explorer, the TV atlas, the doctor and the lab answered a bare error page (422,
also an error in the browser's console) that dropped the form; the banks lab and the TV atlas's sector form
answered 200 with an inline message; the workbench 200 and the drills 404; and a blank menu value (``/?colour=``)
was silently read as the default.

The pages and their menus are found, not listed: every GET page route of the app is opened, and every ``<select>``
it shows is sent a value it does not offer and a blank one. A field the page does not read from its query leaves the
page unchanged; one it reads must be named as above. A new page, or a new menu, that forgets fails here.
"""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

#: pages whose route takes a path parameter or only answers one of its states: the URL opened for them
SAMPLE = {"/drills": "/drills?kind=offsets&seed=17600", "/lab/rungs/{rung}": "/lab/rungs/4",
          "/drills/whiteboard/{sid}": None, "/lab/jobs/{job_id}": None}
BAD = "zz-not-offered"


def page_urls(app: Any) -> list[str]:
    from fastapi.routing import APIRoute

    urls = []
    for r in app.routes:
        routes = getattr(r, "original_router", None)
        for route in (routes.routes if routes is not None else [r]):
            if not isinstance(route, APIRoute) or "GET" not in route.methods or route.include_in_schema:
                continue
            url = SAMPLE.get(route.path, route.path)
            if url and "{" not in url:
                urls.append(url)
    return sorted(set(urls))


def menus(text: str) -> list[str]:
    """The names of the page's ``<select>`` menus (in order, once each)."""
    names = re.findall(r'<select\b[^>]*\bname="([^"]+)"', text)
    return list(dict.fromkeys(html.unescape(n) for n in names))


def offers_blank(text: str, name: str) -> bool:
    """True when the menu ``name`` offers a blank choice (its options, or the deferred list beside it)."""
    m = re.search(rf'<select\b[^>]*\bname="{re.escape(name)}"', text)
    rest = text[m.start():] if m else ""
    end = rest.find("</select>")
    options = rest[:end] + (rest[end:].split("</template>", 1)[0] if rest[end:end + 30].find("<template") >= 0 else "")
    return '<option value=""' in options


def strip_volatile(text: str) -> str:
    """The page without what changes from one request to the next by itself (nonces, times, ids)."""
    text = re.sub(r'nonce="[^"]*"', "", text)
    return re.sub(r"\d{2}:\d{2}:\d{2}|\b\d+(\.\d+)? ?s ago\b", "", text)


def test_the_pages_are_found(app):
    urls = page_urls(app)
    for url in ("/", "/algebra", "/banks", "/tv", "/doctor", "/lab", "/drills?kind=offsets&seed=17600"):
        assert url in urls, urls


@pytest.mark.parametrize("value", [BAD, ""], ids=["not-offered", "blank"])
def test_every_page_refuses_a_menu_value_it_does_not_offer_the_same_way(app, client, value):
    checked = []
    for url in page_urls(app):
        page = client.get(url, headers={"Accept": "text/html"}, follow_redirects=False)
        if page.status_code != 200:
            continue
        same = strip_volatile(client.get(url, headers={"Accept": "text/html"}, follow_redirects=False).text)
        if strip_volatile(page.text) != same:
            continue  # a page that differs by itself cannot tell a read field from an ignored one
        for name in menus(page.text):
            if value == "" and offers_blank(page.text, name):
                continue  # "(none)" is one of its choices
            sep = "&" if "?" in url else "?"
            asked = f"{url}{sep}{name}={value}"
            r = client.get(asked, headers={"Accept": "text/html"}, follow_redirects=False)
            if r.status_code == 200 and strip_volatile(r.text) == same:
                continue  # the page does not read this field from its query
            checked.append(asked)
            assert r.status_code == 200, (asked, r.status_code, r.text[:300])
            alert = re.search(r'id="query-problems"[^>]*>(.*?)</div>', r.text, re.S)
            assert alert and f'data-field="{name}"' in alert.group(1), (asked, r.text[:600])
            control = re.search(rf'<select\b[^>]*\bname="{re.escape(name)}"[^>]*aria-invalid="true"[^>]*>'
                                rf'<option value="{re.escape(value)}" selected disabled>', r.text)
            assert control, (asked, "the form does not keep the value")
            assert "<main>" in r.text, (asked, "the page itself, not a bare message")
    assert len(checked) >= 8, checked  # the explorer, workbench, banks lab, TV atlas, drills, lab at least


@pytest.mark.parametrize("url, field", [
    ("/?colour=zebra", "colour"), ("/algebra?op=frobnicate&a=(4,8):(8,1)", "op"),
    ("/banks?element_bytes=3", "element_bytes"), ("/banks?element_bytes=4&vector=8&access=row:0", "vector"),
    ("/tv?bits=12", "bits"), ("/tv?eb=3", "eb"), ("/doctor?preset=nope", "preset"),
    ("/doctor?desc_mn=7", "desc_mn"), ("/drills?kind=nope&seed=17601", "kind"),
    ("/drills?kind=offsets&seed=17602&numbers=zz", "numbers"), ("/drills?kind=offsets&seed=-1", "seed"),
    ("/lab?gemm=nope.json", "gemm"), ("/lab/history?mine=maybe", "mine"), ("/lab/history?gpu=nope", "gpu")])
def test_each_refused_field_is_named_in_a_page_of_the_site(client, url, field):
    r = client.get(url, headers={"Accept": "text/html"}, follow_redirects=False)
    assert r.status_code == 200, (url, r.status_code)
    assert "<main>" in r.text and f'<li data-field="{field}">' in r.text, r.text[:600]


def test_two_refused_fields_are_both_named_and_both_kept(client):
    r = client.get("/banks?element_bytes=3&num=7&access=ldmatrix:0,0", headers={"Accept": "text/html"})
    assert r.status_code == 200
    for field, value in (("element_bytes", "3"), ("num", "7")):
        assert f'<li data-field="{field}">' in r.text
        assert re.search(rf'name="{field}"[^>]*aria-invalid="true"><option value="{value}" selected disabled>', r.text)


def test_an_htmx_fragment_is_refused_alike_and_says_so_in_a_header(client):
    """A fragment (the banks lab re-drawn as a menu changes) gets the same answer with the alert, which htmx
    swaps as any answer; a header names the refused fields."""
    r = client.get("/banks?element_bytes=4&vector=8&access=row:0", headers={"HX-Request": "true"})
    assert r.status_code == 200 and r.headers["HX-Query-Problem"] == "vector"
    assert 'id="query-problems"' in r.text and "vector: &#39;8&#39; is not one of 1, 2, 4" in r.text


@pytest.mark.parametrize("path, body", [("/api/layout", {"layout": "(4,8"}),
                                        ("/api/banks", {"layout": "(8,8):(8,1)", "element_bytes": 3,
                                                        "access": {"kind": "column", "index": 0}})])
def test_the_json_api_keeps_its_422(client, path, body):
    r = client.post(path, json=body)
    assert r.status_code == 422 and isinstance(r.json()["detail"], str)
    assert r.headers["content-type"].startswith("application/json")


def test_the_api_drills_route_keeps_json_for_a_bad_query(client):
    r = client.get("/api/drills/next?kind=offsets&seed=-1")
    assert r.status_code == 422 and "seed" in r.json()["detail"]


def test_every_link_the_site_builds_to_its_pages_is_read_without_a_problem(client):
    """The GEMM ladder's links (explorer, banks lab, TV atlas, doctor) name only values the pages offer."""
    links = []

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
        elif isinstance(x, str) and x.startswith("/") and "?" in x and not x.startswith("/api/"):
            links.append(x)

    walk(client.get("/api/bench/gemm/rungs").json())
    assert len(links) >= 10, links
    for url in sorted(set(links)):
        r = client.get(url, headers={"Accept": "text/html"})
        assert r.status_code == 200 and 'id="query-problems"' not in r.text, (url, r.text[:300])
