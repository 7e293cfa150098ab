"""The banks lab's controls and the layout doctor's access builder in a real chromium, at desktop and phone widths:
presets follow the element size and keep the typed tile, the fp32 comparison offers Sw<5,0,5>, ldmatrix .xN / .trans
work on the default 8x64 tile, the builder writes the JSON the solver reads, states the thread-layout convention,
previews the lanes and explains a refusal. Screenshots: tests/artifacts/controls-*.png (not committed)."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlparse

import pytest

pytestmark = pytest.mark.browser
WIDTHS = (1280, 375)
OVER = "document.documentElement.scrollWidth - document.documentElement.clientWidth"


def _query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}


def _presets(page) -> list[str]:
    return page.eval_on_selector_all("#sw-presets a[data-swizzle]", "els => els.map(e => e.dataset.swizzle)")


def _settled(page, text: str) -> None:
    page.wait_for_function("(t) => document.querySelector('#result')?.textContent.includes(t)", arg=text)


@pytest.mark.parametrize("width", WIDTHS)
def test_banks_presets_follow_the_element_size_and_keep_the_tile(page, live_server, screenshot, width):
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/banks?layout=(32,32):(32,1)&element_bytes=2&access=column:0")
    assert _presets(page) == ["", "Sw<1,3,3>", "Sw<2,3,3>", "Sw<3,3,3>"]
    page.select_option("#eb", "4")
    assert _presets(page) == ["", "Sw<1,2,3>", "Sw<2,2,3>", "Sw<3,2,3>"]  # at once, before the server answers
    _settled(page, "swizzled (Sw<5,0,5>)")
    assert "B <= 3" not in page.inner_text("#result")
    screenshot(page, f"controls-banks-fp32-{width}")
    page.fill("#lay", "(16,32):(32,1)")
    _settled(page, "(16,32):(32,1)")
    page.click("#sw-presets a[data-swizzle='Sw<3,2,3>']")
    page.wait_for_function("() => location.search.includes('swizzle=Sw')")
    q = _query(page.url)
    assert q["element_bytes"] == "4" and q["layout"] == "(16,32):(32,1)" and q["swizzle"] == "Sw<3,2,3>"
    assert page.input_value("#eb") == "4" and page.input_value("#lay") == "(16,32):(32,1)"
    _settled(page, "Sw<3,2,3> XORs")
    assert _presets(page) == ["", "Sw<1,2,3>", "Sw<2,2,3>", "Sw<3,2,3>"]
    assert page.evaluate(OVER) <= 0
    assert page.console_errors == []


@pytest.mark.parametrize("width", WIDTHS)
def test_banks_ldmatrix_controls(page, live_server, screenshot, width):
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/banks")  # the default 8x64 fp16 tile, column 0
    page.select_option("#ldm-num", "4")
    page.wait_for_selector("#ldm-story")
    assert page.input_value("#acc") == "ldmatrix:0,0" and page.locator("#banks-error [role=alert]").count() == 0
    assert "m8n8.x4.shared.b16" in page.inner_text("#ldm-story") and "side by side" in page.inner_text("#ldm-story")
    assert page.locator("#result .banks").count() == 4
    ways = page.inner_text("#verdict [data-k=wavefronts]")
    page.select_option("#ldm-num", "2")
    page.wait_for_function("() => document.querySelector('#ldm-story')?.textContent.includes('.x2')")
    assert page.locator("#result .banks").count() == 2
    page.check("#ldm-trans")
    page.wait_for_function("() => document.querySelector('#ldm-story')?.textContent.includes('x2.trans')")
    q = _query(page.url)
    assert q["num"] == "2" and q["trans"] == "1" and q["access"] == "ldmatrix:0,0"
    assert int(page.inner_text("#verdict [data-k=wavefronts]")) == int(ways) // 2  # .trans: same rows, same cost
    page.click("#ldm-lanes summary")
    assert "(2, 1), (3, 1)" in page.inner_text("#ldm-lanes tbody tr:nth-child(6)")  # lane 5 gets a column pair
    page.click("#access-help summary")
    assert "trans=1" in page.inner_text("#access-help") and "num=1|2|4" in page.inner_text("#access-help")
    screenshot(page, f"controls-banks-ldmatrix-{width}")
    assert page.evaluate(OVER) <= 0
    page.goto(page.url)  # the permalink restores the controls
    assert page.input_value("#ldm-num") == "2" and page.is_checked("#ldm-trans")
    assert page.console_errors == []


def _raw(page) -> list[dict]:
    return json.loads(page.input_value("#s-acc"))


@pytest.mark.parametrize("width", WIDTHS)
def test_doctor_access_builder(page, live_server, screenshot, width):
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/doctor")
    page.wait_for_selector("#s-cands tbody tr.sel")
    assert page.locator("#b-list .b-row").count() == 2
    assert page.input_value("#b-1-kind") == "ldmatrix" and page.input_value("#b-1-num") == "4"
    assert "column-major 1-D coordinate" in page.inner_text("#b-convention")
    page.wait_for_selector("#b-lanes")
    assert page.locator("#b-lanes tbody tr").count() == 32
    screenshot(page, f"controls-doctor-builder-{width}")
    # a thread layout typed as offsets is refused with the convention, then read as offsets
    page.select_option("#b-0-kind", "thread_layout")
    page.fill("#b-0-layout", "(4,8):(64,8)")
    page.select_option("#b-0-vector", "8")
    page.wait_for_selector("#b-error")
    err = page.inner_text("#b-error")
    assert "column-major 1-D coordinate" in err and "(4,8):(1,512) in coordinates" in err
    screenshot(page, f"controls-doctor-convention-{width}")
    page.select_option("#b-0-of", "offset")
    page.wait_for_function("() => document.querySelector('#b-lanes tbody tr:nth-child(5) td:nth-child(2)')"
                           "?.textContent === '(0, 8)'")  # lane 4 = (0, 1) of the thread layout: offset 8
    assert page.inner_text("#b-lanes tbody tr:nth-child(2) td:nth-child(2)") == "(1, 0)"  # lane 1: offset 64
    assert _raw(page)[0] == {"name": "cp.async 16 B", "op": "store", "kind": "thread_layout",
                             "layout": "(4,8):(64,8)", "vector": 8, "of": "offset"}
    # ldmatrix .x2.trans
    page.select_option("#b-1-num", "2")
    page.check("#b-1-trans")
    page.wait_for_function("() => document.querySelectorAll('#b-lanes tbody tr').length === 16")
    assert _raw(page)[1]["num"] == 2 and _raw(page)[1]["trans"] is True
    # stmatrix: the same rows, written
    page.select_option("#b-1-kind", "stmatrix")
    page.wait_for_function("() => document.querySelectorAll('#b-lanes tbody tr').length === 32")
    assert _raw(page)[1]["kind"] == "stmatrix" and page.input_value("#b-1-num") == "4"
    # a wgmma operand has no lanes; an MN-major one on this row-major tile is refused (no MN-major GMMA atom tiles
    # to it), the K-major one is answered
    page.click("#b-add")
    page.select_option("#b-2-kind", "wgmma")
    page.select_option("#b-2-major", "MN")
    page.wait_for_selector("#b-summary:has-text('no lanes')")
    assert _raw(page)[2] == {"name": "access 3", "kind": "wgmma", "operand": "A", "major": "MN"}
    page.click("#s-go")
    page.wait_for_selector("#s-error:has-text('no MN-major GMMA atom')")
    page.select_option("#b-2-major", "K")
    page.click("#s-go")
    page.wait_for_function("() => location.search.includes('wgmma')")
    page.wait_for_selector("#s-cands tbody tr.sel")
    screenshot(page, f"controls-doctor-built-{width}")
    assert page.evaluate(OVER) <= 0
    # the raw JSON stays: editing it rebuilds the builder
    page.click("#b-raw summary")
    page.fill("#s-acc", '[{"kind": "column", "index": 3}]')
    page.wait_for_function("() => document.querySelectorAll('#b-list .b-row').length === 1")
    assert page.input_value("#b-0-kind") == "column" and page.input_value("#b-0-index") == "3"
    assert [e for e in page.console_errors if "status of 422" not in e] == []  # the refusal above is a 422


def test_doctor_preset_fills_the_builder_and_folds_paddings(page, live_server, screenshot):
    page.goto(f"{live_server.url}/doctor")
    page.wait_for_selector("#s-cands tbody tr.sel")
    page.click("a[data-preset='fp32-32x32-transpose']")
    page.wait_for_function("() => document.querySelector('#s-cands tbody tr:nth-child(2) td:nth-child(2)')"
                           "?.textContent.startsWith('Sw<5,0,5>')")
    assert [page.input_value(f"#b-{i}-kind") for i in range(2)] == ["row", "column"]
    assert page.input_value("#b-0-op") == "store"
    layouts = page.eval_on_selector_all("#s-cands tbody tr td:nth-child(2)", "els => els.map(e => e.textContent)")
    assert sum(x.startswith("(32,32):(33,1)") for x in layouts) == 1 and "+15 larger, same result" in layouts[2]
    assert not any(x.startswith("(32,32):(35,1)") for x in layouts)
    assert "16-byte" not in page.inner_text("#s-detail") and "4-byte scalar" in page.inner_text("#s-detail")
    screenshot(page, "controls-doctor-transpose-1280")
    assert page.console_errors == []
