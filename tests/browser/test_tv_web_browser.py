"""The TV atlas's tiled copy / MMA and Hopper panels, and the workbench's local_tile, in a real chromium."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest

from tests.browser.test_web_browser import cell

pytestmark = pytest.mark.browser


def test_tiled_mma_isolates_a_thread(page, live_server, screenshot):
    page.goto(f"{live_server.url}/tv?tatom=SM80_16x8x16_F32F16F16F32_TN&tlayout=(2,2,1)#tiled-h")
    assert page.inner_text("#tiled-tile") == "32 x 16 x 16"
    page.click("#tiled .threads button[data-thread='64']")
    lit = page.eval_on_selector_all("#grid-tiled .gr > span:not(.dim)", "els => els.map(e => e.textContent)")
    assert sorted(lit) == ["T64V0", "T64V1", "T64V2", "T64V3"]
    page.locator("#tiled-h").scroll_into_view_if_needed()
    screenshot(page, "tv-tiled-mma-2x2", full_page=False)
    page.select_option("#top-select", "A")
    page.wait_for_function("() => document.querySelector('#tiled .msg.note')?.textContent"
                           ".includes('held by 2 threads')")
    assert parse_qs(urlparse(page.url).query)["top"] == ["A"]
    assert not page.console_errors


def test_an_sm70_atom_names_its_threads_by_lane(page, live_server):
    """SM70's quad-pair atom: cell (4,0) of C is T16V0 as CuTe's print_latex draws it; the thread buttons name lanes,
    T16 isolates its 8 values, and the grid's SVG export draws T16V0 in row 4, column 0."""
    page.goto(f"{live_server.url}/tv?atom=SM70_8x8x4_F32F16F16F32_TN&operand=C")
    assert page.inner_text(cell("grid-tv", 4, 0)) == "T16V0"
    assert page.locator(".threads[data-grid='grid-tv'] button").all_inner_texts() == [
        "T0", "T1", "T2", "T3", "T16", "T17", "T18", "T19"]
    page.click(".threads button[data-thread='16']")
    lit = page.eval_on_selector_all("#grid-tv .gr > span:not(.dim)", "els => els.map(e => e.textContent)")
    assert sorted(lit) == [f"T16V{v}" for v in range(8)]
    svg = page.evaluate("window.layoutlabSvg('grid-tv')")
    x, y = (float(g) for g in re.search(r'<rect x="([\d.]+)" y="([\d.]+)"[^>]*/><text[^>]*>T16V0<', svg).groups())
    x0, y0 = (float(g) for g in re.search(r'<rect x="([\d.]+)" y="([\d.]+)"[^>]*/><text[^>]*>T0V0<', svg).groups())
    assert x == x0 and y > y0  # column 0, below row 0
    assert not page.console_errors


def test_hopper_swizzle_and_tma_rule(page, live_server, screenshot):
    page.goto(f"{live_server.url}/tv?atom=SM80_16x8x8_F32F16F16F32_TN&operand=A#hopper-h")
    assert "accepts" in page.inner_text("#tma-verdict")
    page.select_option("#hspan-select", "64")
    page.wait_for_function("() => document.querySelector('#smem-name')?.textContent.includes('SW64')")
    verdict = page.inner_text("#tma-verdict")
    assert "refuses" in verdict and "box_inner_swizzle" in verdict  # a 64-element fp16 box row is 128 B > 64 B
    assert page.locator("#tma-rules tr.fail").count() == 1
    q = parse_qs(urlparse(page.url).query)
    assert q["hspan"] == ["64"] and q["atom"] == ["SM80_16x8x8_F32F16F16F32_TN"]  # the other panels' state stays
    page.fill("#tbox-input", "64,32")
    page.wait_for_function("() => document.querySelector('#tma-verdict')?.textContent.includes('accepts')")
    assert page.inner_text("#desc-value").startswith("0x")
    page.locator("#hopper-h").scroll_into_view_if_needed()
    screenshot(page, "tv-hopper-sw64", full_page=False)
    page.reload()  # a panel below the screen skips rendering (content-visibility), so read its text, not innerText
    assert "SW64" in page.text_content("#smem-name") and page.input_value("#tbox-input") == "64,32"


def test_workbench_local_tile_links_back_to_a(page, live_server, screenshot):
    page.goto(f"{live_server.url}/algebra?op=local_tile&a=(8,8):(8,1)&b=<2:1, 4:1>&c=(1,1)")
    assert page.inner_text("#op-result") == "(2,4):(8,1)" and page.inner_text("#op-offset") == "20"
    assert page.locator("#grid-a .acc").count() == 8
    page.hover(cell("grid-r", 1, 3))  # R(1,3) = 8 + 3 = 11: offset 20 + 11 = 31 of A
    assert page.eval_on_selector_all("#grid-a .src", "els => els.map(e => e.textContent)") == ["31"]
    screenshot(page, "workbench-local-tile")
    page.fill("#c-input", "(3,1)")
    page.wait_for_function("() => document.querySelector('#op-offset')?.textContent === '52'")
