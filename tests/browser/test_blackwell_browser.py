"""The TV atlas's Blackwell section in a real chromium: a UMMA atom and its accumulator in tensor memory, a
tcgen05.ld atom for one warp (the quarter rule), live updates through htmx and the permalink. The section comes
closed and loads its result when first opened (``?panel=blackwell``); a permalink naming its fields opens it filled."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from tests.browser.test_tv_kernel_browser import heading_to_top, panel_requests

pytestmark = pytest.mark.browser


def test_blackwell_section(page, live_server, screenshot):
    page.goto(f"{live_server.url}/tv?bw_kind=f16&bw_m=128&bw_n=256&bw_cta=2"
              "&bw_ld=SM100_TMEM_LOAD_16dp256b1x&bw_warp=5#blackwell-h")
    expect(page.locator("#blackwell-sec")).to_have_attribute("open", "")
    expect(page.locator("#umma-name")).to_have_text("SM100_MMA_F16BF16_2x1SM_SS")
    expect(page.locator("#tmem-lanes")).to_have_text("32-47")
    expect(page.locator("#tmem-alloc")).to_have_text("128")
    expect(page.locator("#blackwell-honest")).to_contain_text("not measured")
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


def test_ts_form_draws_a_beside_c(page, live_server, screenshot):
    """A from tensor memory (the TS form) over 2 CTAs with M = 128: A's 8 columns sit right after C's, each CTA's 64
    rows on lanes 0-63 and again on 64-127 (CuTe's Duplicated FrgTypeA); switching A back to smem removes them."""
    page.goto(f"{live_server.url}/tv?bw_kind=f16&bw_m=128&bw_n=64&bw_cta=2&bw_src=tmem#blackwell-h")
    expect(page.locator("#umma-name")).to_have_text("SM100_MMA_F16BF16_2x1SM_TS")
    expect(page.locator("#tmem-a")).to_contain_text("Duplicated")
    expect(page.locator("#tmem-alloc-a")).to_have_text("64")
    assert page.locator("#tmem-svg rect.tmem-a").count() == page.locator("#tmem-svg rect.tmem-c").count() == 256
    box = page.locator("#tmem-svg rect.tmem-a").first.bounding_box()
    assert box is not None and abs(box["width"] - 8) <= 1  # one pixel per column, and the outline
    page.locator("#tmem-c").scroll_into_view_if_needed()
    screenshot(page, "tv-blackwell-ts-a", full_page=False)
    page.select_option("#bw-src", "smem")
    page.wait_for_function("() => document.querySelector('#umma-name')?.textContent === 'SM100_MMA_F16BF16_2x1SM_SS'")
    assert page.locator("#tmem-svg rect.tmem-a").count() == 0 and page.locator("#tmem-a").count() == 0
    assert not page.console_errors


def test_blackwell_section_loads_when_opened(page, live_server, screenshot):
    asked = panel_requests(page)
    page.goto(f"{live_server.url}/tv")
    expect(page.locator("#blackwell-sec")).not_to_have_attribute("open", "")
    assert page.locator("#umma-name").count() == 0 and not asked
    page.click("#blackwell-sec > summary")
    expect(page.locator("#umma-name")).to_have_text("SM100_MMA_F16BF16_SS")
    expect(page.locator("#tmem-lanes")).to_have_text("0-31")
    assert len(asked) == 1 and "panel=blackwell" in asked[0] and "bw_kind=f16" in asked[0]
    heading_to_top(page, "blackwell-h")
    screenshot(page, "tv-blackwell-opened", full_page=False)
    page.fill("#bw-warp", "5")
    expect(page.locator("#tmem-lanes")).to_have_text("32-63")
    assert parse_qs(urlparse(page.url).query)["bw_warp"] == ["5"]
    assert len(asked) == 1 and not page.console_errors


def test_doctor_reads_a_blackwell_descriptor(page, live_server, screenshot):
    page.goto(f"{live_server.url}/doctor#desc")
    page.fill("#d-val", "0x4000404000010000")  # make_umma_desc of Layout_K_SW128_Atom<half_t> tiled to 128 x 64
    page.fill("#d-mn", "128")
    page.fill("#d-tile", "Sw<3,4,3> o smem_ptr[16b](unset) o ((_8,_16),(_64,_1)):((_64,_512),(_1,_0))")
    page.click("#desc-form button[type=submit]")
    page.wait_for_selector("#d-arch")
    assert "Blackwell" in page.inner_text("#d-arch")
    assert "SBO = 1024 B" in page.inner_text("#d-explain")
    assert "✗" not in page.inner_text("#d-result")
    page.locator("#d-explain").scroll_into_view_if_needed()
    screenshot(page, "doctor-blackwell-descriptor", full_page=False)
    page.select_option("#e-arch", "sm100")
    page.fill("#e-tile", "(64,64):(1,64)")
    page.click("#enc-form button[type=submit]")
    page.wait_for_function("() => document.querySelector('#d-result')?.textContent.includes('canonical')")
    assert page.console_errors == [] or all("422" in e for e in page.console_errors)
