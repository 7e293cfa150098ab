"""Refused page query values as a person meets them in chromium (app.page_query), and fresh permalinks of the explorer
read back from the DOM against the algebra. Screenshots go to tests/artifacts/."""

from __future__ import annotations

import random
from urllib.parse import quote

import pytest

import algebra as A
from tests.browser.test_web_browser import grid_text

pytestmark = pytest.mark.browser


def refused(page, url: str) -> str:
    """Open ``url``; the alert's text (the page itself was drawn, with no error in the console)."""
    response = page.goto(url)
    assert response.status == 200, (url, response.status)
    page.wait_for_selector("#query-problems")
    assert page.locator("main h1, main form").count() > 0  # the page, not a bare message
    return page.inner_text("#query-problems")


def test_a_refused_menu_value_is_named_and_kept_then_the_form_recovers(page, live_server, screenshot):
    text = refused(page, f"{live_server.url}/?layout={quote('(4,8):(8,1)')}&colour=zebra")
    assert "colour: 'zebra' is not one of offset, none" in text
    select = page.locator("#colour-select")
    assert select.input_value() == "zebra" and select.get_attribute("aria-invalid") == "true"
    screenshot(page, "page-query-explorer-colour")
    page.locator("#layout-input").fill("(4,8):(1,4)")  # an edit sends the form without the refused value
    page.wait_for_function("() => document.querySelector('#fact-layout')?.textContent === '(4,8):(1,4)'")
    assert grid_text(page, "grid-explorer")[0][:3] == ["0", "4", "8"]
    assert not page.console_errors, page.console_errors


@pytest.mark.parametrize("path, field, needle", [
    ("/banks?element_bytes=3", "element_bytes", "element_bytes: '3' is not one of 1, 2, 4, 8, 16"),
    ("/algebra?op=frobnicate", "op", "op: 'frobnicate' is not one of"),
    ("/tv?bits=12", "bits", "bits: '12' is not one of 8, 16, 32, 64, 128"),
    ("/doctor?element_bytes=3", "element_bytes", "element_bytes: '3' is not one of 1, 2, 4, 8, 16"),
    ("/drills?kind=offsets&seed=17603&numbers=zz", "numbers", "numbers: 'zz' is refused")])
def test_every_page_shows_a_refused_value_the_same_way(page, live_server, screenshot, path, field, needle):
    text = refused(page, live_server.url + path)
    assert needle in text, text
    name = path.split("?")[0].strip("/") or "explorer"
    screenshot(page, f"page-query-{name}-{field}")
    assert not page.console_errors, page.console_errors


@pytest.mark.parametrize("seed", range(17600, 17606))
def test_a_fresh_explorer_permalink_draws_the_algebra_and_survives_back_and_forward(page, live_server, seed):
    rng = random.Random(seed)
    shape = (rng.choice([2, 3, 4, 8]), (rng.choice([2, 3]), rng.choice([2, 4])))
    stride = (rng.choice([1, 2, 12]), (rng.choice([3, 4, 24]), rng.choice([0, 1, 6])))
    lay = A.Layout(shape, stride)
    page.goto(f"{live_server.url}/?layout={quote(str(lay))}")
    rows, cols = shape[0], A.size(lay) // shape[0]
    want = [[str(lay((i, j))) for j in range(cols)] for i in range(rows)]
    assert grid_text(page, "grid-explorer") == want, (seed, str(lay))
    other = A.Layout((4, 4), (4, 1))
    page.goto(f"{live_server.url}/?layout={quote(str(other))}")  # typing replaces the address; a visit pushes
    page.go_back()
    page.wait_for_function(f"() => document.querySelector('#fact-layout')?.textContent === '{lay}'")
    assert grid_text(page, "grid-explorer") == want
    page.go_forward()
    page.wait_for_function(f"() => document.querySelector('#fact-layout')?.textContent === '{other}'")
    assert not page.console_errors, page.console_errors
