"""The layout doctor (/doctor) in a real chromium: the solver answers the issue's known cases on load and on a
preset click, a candidate row opens its why / bits / code, bad input shows the field, the GPU button explains why it
cannot run without a GPU, and the descriptor doctor and linear layouts render. Screenshots: tests/artifacts/doctor-*."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def _first_row(page) -> list[str]:
    return page.eval_on_selector_all("#s-cands tbody tr:nth-child(2) td", "els => els.map(e => e.textContent)")


def test_solver_page_finds_sw333_and_explains_it(page, live_server, screenshot):
    page.goto(f"{live_server.url}/doctor")
    page.wait_for_selector("#s-cands tbody tr.sel")
    row = _first_row(page)
    assert row[1] == "Sw<3,3,3> o 0 o (64,64):(64,1)" and row[3] == "8 / 8"
    assert row[4] == "✓ kept" and row[7] == "SWIZZLE_128B" and row[8] == "GMMA::Layout_K_SW128_Atom<half_t>"
    naive = page.eval_on_selector_all("#s-cands tbody tr.naive td", "els => els.map(e => e.textContent)")
    assert naive[3] == "36 / 8"
    detail = page.inner_text("#s-detail")
    assert "B = 3" in detail and "M = 3" in detail and "Swizzle<3,3,3>" in detail
    assert page.locator(".bits span.src").count() == 3 and page.locator(".bits span.dst").count() == 3
    screenshot(page, "doctor-solver")
    # another candidate: the padding row, chosen by clicking
    page.click("#s-cands tbody tr:has-text('(64,64):(72,1)')")
    assert "Padding each line by 8" in page.inner_text("#s-detail")
    assert page.console_errors == []


def test_preset_and_bad_input(page, live_server):
    page.goto(f"{live_server.url}/doctor")
    page.wait_for_selector("#s-cands tbody tr.sel")
    page.click("a[data-preset='fp32-32x32-transpose']")
    page.wait_for_function("() => document.querySelector('#s-cands tbody tr:nth-child(2) td:nth-child(2)')?.textContent"
                           ".startsWith('Sw<5,0,5>')")
    assert _first_row(page)[2] == "1 + 1"
    permalink = page.url
    assert "tile=%2832%2C32%29" in permalink and "accesses=" in permalink
    page.goto(permalink)  # the permalink restores the request
    page.wait_for_function("() => document.querySelector('#s-cands tbody tr:nth-child(2) td:nth-child(2)')?.textContent"
                           ".startsWith('Sw<5,0,5>')")
    page.click("#b-raw summary")  # the raw JSON is the advanced field under the access builder
    page.fill("#s-acc", '[{"kind": "ldmatrix", "num": 3}]')
    page.click("#s-go")
    page.wait_for_selector("#s-error:not([hidden])")
    assert page.inner_text("#s-error").startswith("accesses[0].num")


def test_measure_button_explains_without_a_gpu(page, live_server):
    import json
    import urllib.request

    with urllib.request.urlopen(f"{live_server.url}/api/bench/device") as r:
        dev = json.load(r)
    if dev["available"]:
        pytest.skip("a GPU worker is live here; the no-GPU message is not shown")
    page.goto(f"{live_server.url}/doctor")
    page.wait_for_selector("#s-cands tbody tr.sel")
    page.click("#measure")
    page.wait_for_selector("#measure-why")
    assert page.inner_text("#measure-why").startswith("No GPU to measure on")
    # the preset was measured on the H200 (bench/results/solve_smem_*.json): ncu beside the model, every row equal
    page.wait_for_selector("#measure-table")
    assert "H200" in page.inner_text("#measure-committed")
    cells = page.eval_on_selector_all("#measure-table tr td:last-child", "els => els.map(e => e.textContent)")
    assert cells and set(cells) == {"equal"}


def test_descriptor_tma_and_linear_layouts(page, live_server, screenshot):
    page.goto(f"{live_server.url}/doctor")
    page.click("#desc-form button[type=submit]")
    page.wait_for_selector("#d-layout")
    assert page.inner_text("#d-layout") == "Sw<3,3,3> o 0 o ((8,8),(8,2)):((64,512),(1,8))"
    assert page.locator("#d-coremap tr").count() == 64 and "✗" not in page.inner_text("#d-result")
    page.click("#enc-form button[type=submit]")
    page.wait_for_selector("#d-result h3:has-text('0x4000004000010000')")
    page.click("#tma-form button[type=submit]")
    page.wait_for_selector("#t-chunks")
    assert page.locator("#t-chunks tr").count() == 64
    page.click("#lli-form button[type=submit]")
    page.wait_for_selector("#l-cute")
    assert page.inner_text("#l-cute") == "((4,8),(2,2)):((32,1),(16,8))"
    screenshot(page, "doctor-tools")
    assert page.console_errors == []
