"""The TV atlas's sections sent closed hold their form inert (templates/_section.html): no form control of a closed
section is in the first load's document, where Chromium's scan of form controls after DOMContentLoaded would lay out
each closed box, and the page with it (one full layout per section: 14 layouts on bench/web.py's SM90 64x256
permalink, 5 without). A section sent open (the query names its fields) has its form as it is."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

CONTROLS = {"input", "select", "button", "textarea"}
LAZY = ("tiled", "copywalk", "mmawalk", "kernel", "tmac", "blackwell")
#: bench/web.py's TV permalink, the bare page, and one that opens every section (each names one of its fields)
CLOSED = ("/tv?atom=SM90_64x256x16_F32F16F16_SS&operand=C", "/tv")
OPEN = "/tv?tbits=16&cw_t=0&mw_t=0&kp_t=0&tm_cluster=2&bw_warp=0"


class Sections(HTMLParser):
    """Per section (``details.section``): open or not, the form controls in the document and those in its inert
    ``template.closed-form``."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, str, bool]] = []  # (tag, section id or "", in a closed-form template)
        self.found: dict[str, dict] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        sec, inert = (self.stack[-1][1], self.stack[-1][2]) if self.stack else ("", False)
        if tag == "details" and "section" in (a.get("class") or "").split():
            sec = a["id"] or ""
            self.found[sec] = {"open": "open" in a, "live": [], "inert": []}
        if tag == "template" and "closed-form" in (a.get("class") or "").split():
            inert = True
        if tag in CONTROLS and sec:
            self.found[sec]["inert" if inert else "live"].append(a.get("id") or a.get("name") or tag)
        if tag not in ("input", "br", "img", "meta", "link", "hr", "wbr"):
            self.stack.append((tag, sec, inert))

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()[0] == tag:
                break


def sections(client, url: str) -> dict[str, dict]:
    r = client.get(url)
    assert r.status_code == 200
    p = Sections()
    p.feed(r.text)
    return p.found


@pytest.mark.parametrize("url", CLOSED)
def test_a_closed_sections_controls_are_inert(client, url):
    found = sections(client, url)
    for name in LAZY:
        s = found[f"{name}-sec"]
        assert not s["open"]
        assert s["live"] == [], f"{name}: form controls in the document while closed: {s['live']}"
        assert s["inert"], f"{name}: its form is not sent at all"


def test_a_section_sent_open_has_its_form_live(client):
    found = sections(client, OPEN)
    for name in LAZY:
        s = found[f"{name}-sec"]
        assert s["open"] and s["inert"] == [] and s["live"], name


#: an atom grid of 64 rows (taller than a screen) and one of 16
BIG, SMALL = "/tv?atom=SM90_64x256x16_F32F16F16_SS&operand=C", "/tv?atom=SM80_16x8x16_F32F16F16F32_TN&operand=C"


def _under_the_grid(text: str) -> str:
    return text[text.index('<div id="result"'):]


def test_what_a_tall_grid_leaves_below_the_screen_comes_after_its_paint(client):
    """Under an atom grid taller than a screen, the rest of the page is sent whole but inert, in one
    ``template.after-paint`` after the result (static/grid-data.js puts it in once the grid is painted); every panel
    and form is in it, so the page says the same. Under a small grid nothing waits."""
    big = client.get(BIG).text
    assert big.count('<template class="after-paint">') == 1
    inert = big[big.index('<template class="after-paint">'):big.rindex("</template>")]
    for part in ("tiled-sec", "sectors-form", "hopper-form", "blackwell-sec", "triton-form", 'id="hopper-h"'):
        assert part in inert, part
    assert 'id="grid-tv"' not in inert and 'id="tv-form"' not in inert  # the first screen is not in it
    small = client.get(SMALL).text
    assert "after-paint" not in _under_the_grid(small)
    assert "hopper-form" in small and "sectors-form" in small
