"""The TV atlas's Blackwell section in a real chromium: a UMMA atom and its accumulator in tensor memory, a
tcgen05.ld atom for one warp (the quarter rule), live updates through htmx and the permalink."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

pytestmark = pytest.mark.browser


def test_blackwell_section(page, live_server, screenshot):
    page.goto(f"{live_server.url}/tv?bw_kind=f16&bw_m=128&bw_n=256&bw_cta=2"
              "&bw_ld=SM100_TMEM_LOAD_16dp256b1x&bw_warp=5#blackwell-h")
    assert page.inner_text("#umma-name") == "SM100_MMA_F16BF16_2x1SM_SS"
    assert page.inner_text("#tmem-lanes") == "32-47"
    assert page.inner_text("#tmem-alloc") == "128"
    assert "not measured" in page.inner_text("#blackwell-honest")
    assert page.locator("#tmem-svg rect").count() > 100
    page.locator("#blackwell-h").scroll_into_view_if_needed()
    screenshot(page, "tv-blackwell-2cta", full_page=False)
    page.locator("#tmem-c").scroll_into_view_if_needed()
    screenshot(page, "tv-blackwell-tmem-c", full_page=False)
    page.locator("#tmem-ld").scroll_into_view_if_needed()
    screenshot(page, "tv-blackwell-tmem-ld", full_page=False)
    page.fill("#bw-warp", "6")
    page.wait_for_function("() => document.querySelector('#tmem-lanes')?.textContent === '64-79'")
    page.select_option("#bw-cta", "1")
    page.wait_for_function("() => document.querySelector('#umma-name')?.textContent === 'SM100_MMA_F16BF16_SS'")
    q = parse_qs(urlparse(page.url).query)
    assert q["bw_warp"] == ["6"] and q["bw_cta"] == ["1"]
    page.fill("#bw-m", "96")
    page.wait_for_function("() => document.querySelector('#blackwell')?.textContent.includes('M must be 64 or 128')")
    assert not page.console_errors
