"""The executed tour notebook exported to HTML (nbconvert), opened in chromium from a file: the grids hover as the
explorer's do, and the page makes no network request (every request that is not the file itself is intercepted,
recorded and refused)."""

from __future__ import annotations

import pytest

from tests.notebook_tour import cell, executed

pytestmark = pytest.mark.browser


def export(tmp_path):
    """The executed notebook as one HTML file; nbconvert's own CDN scripts (MathJax, require.js) left out, so every
    request the page still makes comes from the outputs."""
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="lab", mathjax_url="", require_js_url="", jquery_url="",
                           widget_renderer_url="").from_notebook_node(executed())
    path = tmp_path / "tour.html"
    path.write_text(body, encoding="utf-8")
    return path


def test_exported_notebook_hovers_and_stays_offline(page, tmp_path, screenshot):
    path = export(tmp_path)
    requests: list[str] = []

    def intercept(route):
        url = route.request.url
        if url.startswith("file://") and url.split("#")[0] == path.as_uri():
            route.continue_()
        else:
            requests.append(url)
            route.abort()

    page.route("**/*", intercept)
    page.goto(path.as_uri())
    page.wait_for_function("() => !!(window.LayoutLab && document.querySelector('.llab [data-offset]'))")
    nb = executed()
    first = cell(nb, 'A.parse("(4,8):(8,1)")')
    gid = next(x for x in first.outputs[0].data["text/html"].split('data-grid="')[1:]).split('"')[0]
    # cell (0, 5) of (4,8):(8,1): 1-D coordinate 0 + 4 * 5 = 20, offset 5
    target = page.locator(f"#{gid} [data-offset]").nth(5)
    target.hover()
    card = page.locator(f"#{gid}-card")
    page.wait_for_function("(id) => document.getElementById(id).textContent.includes('L(20)')", arg=f"{gid}-card")
    text = card.inner_text()
    assert "L(20) = 5" in text and "natural coordinate (0, 5)" in text and "mode 1: 5 → 5" in text
    # a TV picture's card names the thread and its value
    tv = page.locator(".llab .grid.tv [data-thread]").first
    tv.scroll_into_view_if_needed()
    tv.hover()
    tv_card = tv.locator("xpath=ancestor::div[contains(@class,'with-card')]/div[contains(@class,'hover')]")
    assert "thread 0 · warp 0, lane 0" in tv_card.inner_text()
    # zoom works from the output's own tools
    page.locator(f'.gridtools[data-grid="{gid}"] button[data-zoom="out"]').click()
    assert page.eval_on_selector(f"#{gid}", "g => g.dataset.z") == "0.8"
    page.locator(f'.gridtools[data-grid="{gid}"] button[data-zoom="1"]').click()
    assert requests == [], f"the exported notebook requested {requests}"
    assert not page.console_errors
    page.evaluate("() => window.scrollTo(0, 0)")
    screenshot(page, "notebook-tour-top", full_page=False)
    screenshot(page, "notebook-tour")


def test_a_card_reads_offsets_past_2_to_the_53_exactly(page, tmp_path):
    """The hover card of a layout whose offsets pass Number.MAX_SAFE_INTEGER: each mode's share and the sum before
    the swizzle, exactly (JSON numbers rounded them to 2^60); a coordinate layout's card still reads, with no error."""
    import layoutlab

    big = (1 << 60) + 1
    html = "".join(layoutlab.html(x) for x in (f"(2,2):(1,{big})", f"Sw<1,0,1> o (2,2):(1,{big - 1})",
                                                "(2,2):(1@0,1@1)"))
    path = tmp_path / "big.html"
    path.write_text(f"<!doctype html><html><head><meta charset='utf-8'></head><body>{html}</body></html>")
    page.goto(path.as_uri())
    page.wait_for_function("() => !!window.LayoutLab")
    cards = page.locator(".llab .with-card")
    expect = [f"mode 1: 1 → {big}", f"before Sw<1,0,1>: {big}", "natural coordinate (1, 1)"]
    for k, want in enumerate(expect):
        cards.nth(k).locator("[data-offset]").nth(3).hover()  # cell (1, 1)
        card = cards.nth(k).locator(".hover")
        page.wait_for_function("(el) => el.textContent.includes('L(3)')", arg=card.element_handle())
        assert want in card.inner_text(), card.inner_text()
    assert not page.console_errors
