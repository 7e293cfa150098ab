"""The GEMM ladder's rung pages in a real chromium: from the lab's table to a rung, its links to the banks lab (the
same wavefronts), and to the layout doctor, which decodes the rung's descriptor and checks its TMA box on arrival.
Screenshots: tests/artifacts/rung-*."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_from_the_ladder_to_a_rung_and_its_banks(page, live_server, screenshot):
    page.goto(f"{live_server.url}/lab")
    page.click("#gemm-layouts-table a[href='/lab/rungs/2']")
    page.wait_for_selector("#rung-fact")
    assert "8-way" in page.inner_text("#rung-fact")
    row = page.locator("#rung-smem-table tr[data-access='ldmatrix.x4 A'] td")
    assert "32 (8-way)" in row.all_inner_texts()
    page.locator("#rung-grid .gridwrap").scroll_into_view_if_needed()
    page.wait_for_selector("#rung-grid .gk .gt:not(.cold)")  # the drawn fragment fills in when it comes into view
    screenshot(page, "rung-2")
    page.click("#rung-smem-table tr[data-access='ldmatrix.x4 A'] a:has-text('banks lab')")
    page.wait_for_selector("[data-k=wavefronts]")
    assert page.inner_text("[data-k=wavefronts]") == "32"
    assert page.console_errors == []


def test_a_rungs_descriptor_and_box_open_checked_in_the_doctor(page, live_server, screenshot):
    page.goto(f"{live_server.url}/lab/rungs/8")
    assert "99" in page.inner_text("#rung-timing")
    page.click("#rung-desc a")
    page.wait_for_selector("#d-layout")  # decoded on arrival, no click
    assert page.inner_text("#d-layout") == "Sw<3,3,3> o 0 o ((8,8),(8,2)):((64,512),(1,8))"
    checks = page.inner_text("#d-result")
    assert "✗" not in checks and "equals the descriptor's layout" in checks
    screenshot(page, "rung-8-doctor")
    page.goto(f"{live_server.url}/lab/rungs/8")
    page.click("#rung-tma tbody tr:nth-child(2) a")  # B: the box one CTA multicasts
    page.wait_for_selector("#t-chunks")
    assert page.inner_text("#t-result").startswith("Valid") and "64 x 128" in page.inner_text("#t-result")
    assert page.console_errors == []
