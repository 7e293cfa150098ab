"""Every page is pleasant at every size, in a real chromium: with large inputs (128x128 layouts, a swizzled 128x64
tile, the largest wgmma atom, the doctor's candidate table, the lab's charts) the page itself never scrolls sideways
at 375, 768, 1280 or 1920 px (a wide grid or table scrolls inside its own box), no console error and no failed
request on any page, the navigation keeps each entry on one line on a phone, a grid zoomed far out hides its
numbers but keeps its colours, the drill's question comes before the list of kinds on a phone, the MMA atom's
A | C arrangement stacks when it cannot fit, and the doctor's candidates can be picked from the keyboard."""

from __future__ import annotations

import pytest

from tests.browser.test_grid_web_browser import wait_js

pytestmark = pytest.mark.browser

WIDTHS = (375, 768, 1280, 1920)
BIG = {
    "explorer": "/?layout=(128,128):(128,1)",
    "explorer-swizzled": "/?layout=Sw<3,4,3> o 0 o (128,64):(64,1)",
    "workbench": "/algebra?op=logical_divide&a=((8,16),(8,16)):((1,64),(8,1024))&b=<8:1, 8:1>",
    "banks": "/banks?layout=(128,64):(64,1)&element_bytes=2&swizzle=Sw<3,4,3>&access=column:0",
    "tv": "/tv?atom=SM90_64x256x16_F32F16F16_SS&operand=C",
    "doctor": "/doctor",
    "drills": "/drills?kind=offsets&seed=3",
    "drills-progress": "/drills/progress",
    "drills-whiteboard": "/drills/whiteboard",
    "lab": "/lab",
}
# the page's own width beyond the window, and the outermost elements that stick out (for the failure message)
OVERFLOW_JS = """() => {
    const sticks = (e) => e.getBoundingClientRect().right > innerWidth + 1;
    const boxed = (e) => { for (let a = e.parentElement; a && a !== document.body; a = a.parentElement)
        if (/(auto|scroll|hidden|clip)/.test(getComputedStyle(a).overflowX)) return true; return false; };
    const out = [...document.querySelectorAll('main *')].filter((e) => sticks(e) && !boxed(e)
        && !(e.parentElement && sticks(e.parentElement) && !boxed(e.parentElement)));
    return {over: document.scrollingElement.scrollWidth - innerWidth,
            culprits: out.slice(0, 5).map((e) => `${e.tagName}#${e.id}.${[...e.classList].join('.')}`)}; }"""


def watch(page) -> list[str]:
    """Failed requests and HTTP errors of ``page`` from now on (console errors are in ``page.console_errors``)."""
    failed: list[str] = []
    page.on("requestfailed", lambda r: failed.append(f"{r.url} {r.failure}"))
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    return failed


@pytest.mark.parametrize("name", list(BIG))
def test_no_sideways_page_scroll_and_no_errors_at_any_width(page, live_server, name):
    failed = watch(page)
    page.set_viewport_size({"width": WIDTHS[0], "height": 900})
    assert page.goto(live_server.url + BIG[name]).status == 200
    if name == "doctor":  # the candidates table is drawn by the page's script after its first solve
        page.locator("#s-cands tbody tr").first.wait_for()
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
        got = page.evaluate(OVERFLOW_JS)
        assert got["over"] <= 0, f"{name} at {width} px scrolls sideways by {got['over']} px: {got['culprits']}"
        if name == "tv" and width <= 768:  # the A | C arrangement stacks instead of hiding B and C to the right
            assert page.evaluate("[...document.querySelectorAll('.mma-atom')].every((m) => "
                                 "m.scrollWidth <= m.clientWidth + 1)")
    page.wait_for_load_state("networkidle")
    assert not page.console_errors, page.console_errors
    assert not failed, failed


def test_navigation_entries_stay_whole_on_a_phone(page, live_server):
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"{live_server.url}/doctor")
    lines = page.eval_on_selector_all("header.top nav a", """els => els.map((a) => {
        const r = document.createRange(); r.selectNodeContents(a);
        return [a.textContent.trim(), new Set([...r.getClientRects()].map((q) => Math.round(q.top))).size]; })""")
    assert len(lines) == 7 and all(n == 1 for _, n in lines), lines
    # the brand keeps its own line: the nav starts under it instead of squeezing beside it
    brand, nav = page.locator("header.top .brand").bounding_box(), page.locator("header.top nav").bounding_box()
    assert nav["y"] >= brand["y"] + brand["height"] - 1


def test_zoomed_out_grid_hides_numbers_and_keeps_colours(page, live_server):
    page.goto(f"{live_server.url}/?layout=(128,128):(128,1)")
    tools = "#fig-grid-explorer .gridtools"
    cell = "#grid-explorer .gr > span"
    style = (f"() => {{ const s = getComputedStyle(document.querySelector('{cell}')); "
             "return [s.color, s.backgroundColor]; }")
    colour, fill = page.evaluate(style)
    page.click(f"{tools} button[data-zoom=fit]")
    assert "tiny" in page.get_attribute("#grid-explorer", "class")
    tiny_colour, tiny_fill = page.evaluate(style)
    assert tiny_colour == "rgba(0, 0, 0, 0)" and tiny_fill == fill != "rgba(0, 0, 0, 0)"
    assert "numbers hidden" in page.inner_text(f"{tools} .zoom-level")
    page.hover("#grid-explorer .gr > span >> nth=5")  # the hover card still names the cell
    card = page.inner_text("#hover-explorer")
    assert card.startswith("L(640) = 5"), card
    page.click(f"{tools} button[data-zoom='1']")
    assert "tiny" not in page.get_attribute("#grid-explorer", "class")
    assert page.evaluate(style)[0] == colour and page.inner_text(f"{tools} .zoom-level") == ""
    page.click(f"{tools} button[data-zoom=out]")  # 80 %: still readable, numbers shown
    assert page.evaluate(style)[0] == colour and page.inner_text(f"{tools} .zoom-level") == "80 %"
    assert not page.console_errors


def test_drill_question_comes_before_the_kinds_on_a_phone(page, live_server):
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"{live_server.url}/drills?kind=offsets&seed=3")
    side, main = page.locator(".drill-side").bounding_box(), page.locator(".drill-main").bounding_box()
    assert main["y"] < side["y"]
    assert page.eval_on_selector(".drill-side", "e => getComputedStyle(e).position") == "static"
    page.set_viewport_size({"width": 1280, "height": 800})  # beside the question again, and sticky
    side, main = page.locator(".drill-side").bounding_box(), page.locator(".drill-main").bounding_box()
    assert side["x"] + side["width"] <= main["x"] and abs(side["y"] - main["y"]) < 40
    assert page.eval_on_selector(".drill-side", "e => getComputedStyle(e).position") == "sticky"


def test_doctor_candidates_from_the_keyboard(page, live_server):
    page.goto(f"{live_server.url}/doctor")
    page.locator("#s-cands tbody tr[data-k='1']").wait_for()
    page.focus("#s-cands tbody tr[data-k='0']")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.k") == "2"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"  # the focused row shows where the keyboard is
    page.keyboard.press("Enter")
    wait_js(page, "document.querySelector('#s-detail h3')?.textContent.startsWith('#3:')")
    assert page.evaluate("document.activeElement.dataset.k") == "2"  # focus survives the redraw
    assert page.get_attribute("#s-cands tbody tr[data-k='2']", "aria-selected") == "true"
    page.keyboard.press("ArrowUp")
    page.keyboard.press(" ")
    wait_js(page, "document.querySelector('#s-detail h3')?.textContent.startsWith('#2:')")
    assert not page.console_errors
