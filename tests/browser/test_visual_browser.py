"""The visualizer in a real chromium: the explorer keeps its last grid while a layout is mistyped, the copy and MMA
walkthroughs, zoom / fit / full screen, hover cards on the banks and workbench grids, the atom search, SVG export
named after the layout with its outlines, and big grids whose tiles are built from JSON. Screenshots land in
tests/artifacts/visual-*.png."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.test_grid_web_browser import built, wait_js
from tests.browser.test_web_browser import cell, grid_text

pytestmark = pytest.mark.browser


def test_malformed_layout_keeps_the_last_grid_and_shows_the_error(page, live_server, screenshot):
    page.goto(f"{live_server.url}/?layout=(4,8):(8,1)")
    before = grid_text(page, "grid-explorer")
    box = page.locator("#layout-input")
    box.fill("(4,8):(8")  # a partial input, as while typing
    page.locator("#explorer-error [role=alert]").wait_for()
    assert "unexpected end" in page.inner_text("#explorer-error")
    assert grid_text(page, "grid-explorer") == before  # the last good grid stays
    screenshot(page, "visual-explorer-typing", full_page=False)
    box.fill("(4,8):(8,2)")
    wait_js(page, "document.querySelector('#fact-layout')?.textContent === '(4,8):(8,2)'")
    wait_js(page, "document.querySelector('#explorer-error').childElementCount === 0")
    assert grid_text(page, "grid-explorer")[1][1] == "10"
    assert not page.console_errors


def test_copy_walkthrough_renders_and_follows_a_thread(page, live_server, screenshot):
    page.goto(f"{live_server.url}/tv?cw_atom=SM80_CP_ASYNC_CACHEALWAYS_16B&cw_thr=(16,8):(8,1)&cw_val=(1,8):(8,1)"
              "&cw_t=9#copywalk-h")
    expect(page.locator("#copywalk-sec")).to_have_attribute("open", "")  # the permalink names its fields: filled
    expect(page.locator("#copy-walk-thread b")).to_have_text("9")
    for gid in ("walk-atom-src", "walk-atom-dst", "walk-tiled", "walk-src", "walk-dst"):
        assert page.locator(f"#{gid}").count() == 1
    built(page, "walk-src", "walk-dst")  # below the screen: built while the page is idle
    src = page.locator("#walk-src .acc")
    assert src.count() == 8 and all(t.startswith("T9V") for t in src.all_text_contents())
    assert page.locator("#walk-dst .acc").all_text_contents() == src.all_text_contents()
    # side by side: the destination's panel starts to the right of the source's
    a, b = (page.locator(f"#copy-part-{k}").bounding_box() for k in (1, 2))
    assert b["x"] > a["x"] + a["width"] - 1 and abs(b["y"] - a["y"]) < 2
    page.locator("#copy-level-parts").scroll_into_view_if_needed()
    screenshot(page, "visual-copy-walkthrough", full_page=False)
    page.fill("#cw-t", "100")
    wait_js(page, "document.querySelector('#copy-walk-thread b')?.textContent === '100'")
    built(page, "walk-src")
    lit = page.locator("#walk-src .acc").all_text_contents()
    assert len(lit) == 8 and all(t.startswith("T100V") for t in lit)
    assert not page.console_errors


def test_mma_walkthrough_highlights_one_thread_in_a_b_c(page, live_server, screenshot):
    page.goto(f"{live_server.url}/tv?mw_atom=SM80_16x8x16_F32F16F16F32_TN&mw_layout=(2,2,1)&mw_tile=&mw_t=37#mmawalk-h")
    expect(page.locator("#mmawalk-sec")).to_have_attribute("open", "")
    expect(page.locator("#mma-walk-thread b")).to_have_text("37")
    built(page, "walk-warps", "walk-part-a", "walk-part-b", "walk-part-c")  # sent as data, built on the page
    for op, n in (("a", 8), ("b", 4), ("c", 4)):  # lane 5 of the atom: 8 A, 4 B and 4 C values
        texts = page.locator(f"#walk-atom-{op} .acc").all_text_contents()
        assert len(texts) == n and all(t.startswith("T5V") for t in texts)
    assert page.locator("#walk-warps .acc").count() == 4
    warp_of = page.evaluate("""() => {
        const out = {};
        for (const c of document.querySelectorAll('#walk-warps .gr > span')) {
            const t = Number(c.textContent.slice(1).split('V')[0]);
            out[t >> 5] = [...c.classList].find((k) => /^p\\d+$/.test(k));
        }
        return out; }""")
    assert len(set(warp_of.values())) == 4  # four warps, four colours
    page.locator("#mma-level-2").scroll_into_view_if_needed()
    screenshot(page, "visual-mma-warps", full_page=False)
    assert page.locator("#walk-part-c .acc").count() == 4 and page.locator("#walk-part-a .acc").count() == 8
    assert not page.console_errors


def test_zoom_fit_and_full_screen(page, live_server, screenshot):
    page.goto(f"{live_server.url}/?layout=(128,128):(128,1)")
    tools = '#fig-grid-explorer .gridtools'
    page.click(f"{tools} button[data-zoom=out]")
    assert page.evaluate("document.querySelector('#grid-explorer').style.zoom") == "0.8"
    page.click(f"{tools} button[data-zoom=in]")
    page.click(f"{tools} button[data-zoom=in]")
    assert page.evaluate("document.querySelector('#grid-explorer').style.zoom") == "1.25"
    page.click(f"{tools} button[data-zoom=fit]")
    fits = """() => { const r = document.querySelector('#grid-explorer').getBoundingClientRect();
        return r.width > 100 && r.right <= innerWidth + 1 && r.height <= innerHeight + 1; }"""
    assert page.evaluate(fits)
    screenshot(page, "visual-explorer-fit", full_page=False)
    page.click(f"{tools} button.fullscreen")
    assert "full" in page.get_attribute("#fig-grid-explorer", "class")
    wait_js(page, "document.fullscreenElement?.id === 'fig-grid-explorer'")  # the browser's own full screen
    assert page.get_attribute(f"{tools} button.fullscreen", "aria-pressed") == "true"
    assert page.evaluate(fits)
    wait_js(page, "!document.querySelector('#grid-explorer .gt.cold')", timeout=15_000)  # all tiles built
    assert page.text_content(cell("grid-explorer", 127, 127)) == "16383"
    screenshot(page, "visual-explorer-fullscreen", full_page=False)
    page.keyboard.press("Escape")
    wait_js(page, "!document.querySelector('#fig-grid-explorer').classList.contains('full')")
    wait_js(page, "document.fullscreenElement === null")
    assert page.evaluate("document.querySelector('#grid-explorer').style.zoom") == ""
    assert not page.console_errors


def test_cell_label_and_colour_menus(page, live_server):
    page.goto(f"{live_server.url}/?layout=(4,8):(8,1)")
    tools = '#fig-grid-explorer .gridtools'
    page.click(f"{tools} .gridview > summary")  # the menu opens over the grid
    page.select_option(f"{tools} select.cell-label", "index")
    assert grid_text(page, "grid-explorer")[1][2] == str(1 + 4 * 2)
    page.select_option(f"{tools} select.cell-label", "coord")
    assert grid_text(page, "grid-explorer")[1][2] == "(1,2)"
    page.select_option(f"{tools} select.cell-colour", "col")
    assert "p2" in page.get_attribute(cell("grid-explorer", 1, 2), "class")
    page.select_option(f"{tools} select.cell-label", "value")
    page.select_option(f"{tools} select.cell-colour", "value")
    assert grid_text(page, "grid-explorer")[1][2] == "10"
    assert "p10" in page.get_attribute(cell("grid-explorer", 1, 2), "class")


def test_hover_cards_on_banks_and_workbench(page, live_server, screenshot):
    page.goto(f"{live_server.url}/banks?layout=(8,64):(64,1)&element_bytes=2&swizzle=Sw<3,3,3>&access=column:0")
    page.hover(cell("grid-banks", 3, 0))
    card = page.inner_text("#hover-banks")
    # (3, 0): offset 192 -> Sw<3,3,3> -> 216, byte 432, bank 12, read by lane 3
    assert "offset 192 → Sw<3,3,3> → 216" in card and "bank 12" in card and "lane 3" in card
    screenshot(page, "visual-banks-hover", full_page=False)
    page.goto(f"{live_server.url}/algebra?op=composition&a=(6,2):(8,2)&b=(4,3):(3,1)")
    page.hover(cell("grid-r", 1, 1))
    card = page.locator(".float-card")
    assert card.is_visible() and "natural coordinate" in card.inner_text()


def test_atom_search_picks_a_matching_atom(page, live_server):
    page.goto(f"{live_server.url}/tv")
    page.fill("#atom-search", "16x8x8 f16f16f16")
    wait_js(page, "document.querySelector('#fact-atom')?.textContent.includes('16x8x8')")
    chosen = page.eval_on_selector("#atom-select", "s => s.value")
    assert "16x8x8" in chosen and "F16F16F16" in chosen
    visible = page.eval_on_selector("#atom-select", "s => [...s.options].filter((o) => !o.hidden).length")
    assert 0 < visible < 20


def test_svg_export_named_after_the_layout_with_outlines(page, live_server, screenshot):
    page.goto(f"{live_server.url}/banks?layout=(8,64):(64,1)&element_bytes=2&swizzle=Sw<3,3,3>&access=column:0")
    with page.expect_download() as dl:
        page.click("#fig-grid-banks button.svg-export")
    name = dl.value.suggested_filename
    assert name == "Sw[3,3,3]_o_(8,64)_(64,1).svg"
    svg = open(dl.value.path()).read()
    assert svg.count('class="acc"') == 8 and "the cells this warp reads" in svg and "Sw&lt;3,3,3&gt; o" in svg
    page.set_content(f"<body style='margin:0'>{svg}</body>")  # the downloaded picture itself
    screenshot(page, "banks-svg-export", full_page=False)


def test_big_workbench_grid_builds_its_deferred_tiles(page, live_server, screenshot):
    page.goto(f"{live_server.url}/algebra?op=composition&a=(128,128):(128,1)&b=(128,128):(1,128)")
    assert page.locator("#grid-r .gt[data-i0]:empty").count() > 0  # sent empty, filled from JSON
    page.evaluate("() => { const w = document.querySelector('#fig-grid-r .gridwrap'); "
                  "w.scrollTo(w.scrollWidth, w.scrollHeight); }")
    corner = cell("grid-r", 127, 127)
    wait_js(page, f"document.querySelector('{corner}') !== null")
    assert page.text_content(corner) == str(127 * 1 + 127 * 128)  # R(i, j) = A(B(i, j)) = (128,128):(1,128) here
    screenshot(page, "visual-workbench-128", full_page=False)
    assert not page.console_errors


def test_per_thread_menu_follows_the_element_size(page, live_server):
    page.goto(f"{live_server.url}/banks?layout=(8,64):(64,1)&element_bytes=2&access=row:0&vector=8")
    assert page.eval_on_selector_all("#vec option", "os => os.map((o) => o.value)") == ["1", "2", "4", "8"]
    page.select_option("#eb", "16")
    assert page.eval_on_selector_all("#vec option", "os => os.map((o) => o.value)") == ["1"]
    page.select_option("#eb", "4")
    assert page.eval_on_selector_all("#vec option", "os => os.map((o) => o.value)") == ["1", "2", "4"]
    assert page.eval_on_selector("#vec", "s => s.value") == "1"  # 8 was dropped at 16 bytes; the last legal kept
    wait_js(page, "document.querySelector('#verdict [data-k=ways]') !== null")
    assert page.locator("#banks-error [role=alert]").count() == 0


def test_links_survive_the_cell_menus(page, live_server):
    page.goto(f"{live_server.url}/algebra?op=composition&a=(6,2):(8,2)&b=(4,3):(3,1)")
    for gid in ("grid-b", "grid-r"):  # show indices in B and the result: links still follow the values
        page.click(f"#fig-{gid} .gridview > summary")
        page.select_option(f"#fig-{gid} select.cell-label", "coord")
    page.hover(cell("grid-r", 1, 1))
    lit = page.locator("#grid-a .src").all_text_contents()
    # R(1,1) = A(B(1,1)); B(1,1) = 4 (shown as its coordinate), A's cell at 1-D index 4 holds A(4) = 32
    assert lit == ["32"] and page.text_content("#op-result") == "((2,2),3):((24,2),8)"
    assert page.text_content(cell("grid-r", 1, 1)) == "((1,0),1)"  # the natural coordinate


def test_atom_search_without_a_match_keeps_the_atom(page, live_server):
    page.goto(f"{live_server.url}/tv?atom=SM80_16x8x8_F32F16F16F32_TN")
    page.fill("#atom-search", "no such atom")
    page.wait_for_timeout(300)
    assert page.eval_on_selector("#atom-select", "s => s.value") == "SM80_16x8x8_F32F16F16F32_TN"
    page.fill("#atom-search", "")
    assert page.eval_on_selector("#atom-select", "s => [...s.options].every((o) => !o.hidden)")
    assert page.text_content("#fact-atom") == "SM80_16x8x8_F32F16F16F32_TN"
