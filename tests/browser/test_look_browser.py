"""Every page is pleasant at every size, in a real chromium: with large inputs (128x128 layouts, a swizzled 128x64
tile, the largest wgmma atom, the doctor's candidate table, the lab's charts) the page itself never scrolls sideways
at 375, 768, 1280 or 1920 px (a wide grid or table scrolls inside its own box), no console error and no failed
request on any page, the navigation keeps each entry on one line on a phone, a grid zoomed far out hides its
numbers but keeps its colours, the drill's question comes before the list of kinds on a phone, the MMA atom's
A | C arrangement stacks when it cannot fit, the doctor's candidates can be picked from the keyboard, and every text
meets WCAG AA contrast in the light and the dark colour scheme."""

from __future__ import annotations

import pytest

from tests.browser.test_grid_web_browser import wait_js
from tests.browser.test_web_browser import cell

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


# WCAG 2 AA contrast of every visible text against the colours painted behind it (backgrounds composed up the tree,
# opacity included): 4.5:1, 3:1 for large text; in the light and the dark scheme (static/dark.css). Left out on
# purpose: dimmed cells (.dim: another thread's), cells outside the layout (.x), disabled buttons, a zoomed-out grid's
# hidden numbers, the "updating" note, SVG charts.
CONTRAST_JS = r"""() => {
    const parse = (c) => {
        const m = c.match(/rgba?\(([^)]+)\)/);
        if (!m) return null;
        const p = m[1].split(/[,\s/]+/).filter(Boolean).map(Number);
        return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
    const lum = ([r, g, b]) => {
        const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
    const over = (top, bot) => [0, 1, 2].map((k) => top[k] * top[3] + bot[k] * (1 - top[3])).concat(1);
    const bgOf = (e) => {
        const layers = [];
        for (let a = e; a; a = a.parentElement) {
            const c = parse(getComputedStyle(a).backgroundColor);
            if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; } }
        return layers.reverse().reduce((bg, l) => over(l, bg), [255, 255, 255, 1]); };
    const opacity = (e) => {
        let o = 1;
        for (let a = e; a; a = a.parentElement) o *= Number(getComputedStyle(a).opacity);
        return o; };
    const skip = 'script,style,option,[hidden],svg,.dim,.x,button:disabled,.busy,.grid.tiny,' +
        'details:not([open]) > :not(summary)';
    const bad = [], seen = new Set();
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const e = n.parentElement;
        if (!n.textContent.trim() || !e || seen.has(e)) continue;
        seen.add(e);
        const s = getComputedStyle(e), r = e.getBoundingClientRect(), fg0 = parse(s.color);
        if (e.closest(skip) || s.visibility === 'hidden' || !r.width || !r.height || !fg0 || !fg0[3]) continue;
        const bg = bgOf(e), fg = over([fg0[0], fg0[1], fg0[2], fg0[3] * opacity(e)], bg);
        const [hi, lo] = [lum(fg), lum(bg)].sort((x, y) => y - x), ratio = (hi + 0.05) / (lo + 0.05);
        const size = parseFloat(s.fontSize), large = size >= 24 || (Number(s.fontWeight) >= 700 && size >= 18.66);
        if (ratio < (large ? 3 : 4.5))
            bad.push(`${ratio.toFixed(2)}:1 ${e.tagName}.${[...e.classList].join('.')} ` +
                     `"${n.textContent.trim().slice(0, 25)}" ${s.color} on rgb(${bg.slice(0, 3).map(Math.round)})`);
    }
    return bad; }"""


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


def test_a_fragment_opened_on_its_own_logs_no_error(page, live_server):
    """A fragment has no page head, so the browser asks for /favicon.ico: it must not fail (204)."""
    failed = watch(page)
    assert page.goto(live_server.url + "/lab/history").status == 200
    page.wait_for_load_state("networkidle")
    assert not page.console_errors, page.console_errors
    assert not failed, failed


@pytest.mark.parametrize("path", [
    "/?layout=(4,8):(8", "/?layout=Sw<3,3,3> o (32,128):(128,1)", "/algebra?op=complement&a=(2,2):(1,1)&b=8",
    "/algebra?op=composition&a=(6,2):(8,2)&b=(4,3):(3,1)",
    "/banks?layout=(32,32):(32,1)&element_bytes=4&access=column:0", "/tv?atom=SM90_64x256x16_F32F16F16_SS&operand=C",
    "/drills/progress", "/doctor", "/lab"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_text_contrast_meets_wcag_aa(page, live_server, path, scheme):
    page.emulate_media(color_scheme=scheme)
    page.goto(live_server.url + path)
    assert page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") == (scheme == "dark")
    if path == "/doctor":
        page.locator("#s-cands tbody tr").first.wait_for()
    low = page.evaluate(CONTRAST_JS)
    assert not low, low[:8]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_text_contrast_of_a_drill_verdict(page, live_server, scheme):
    page.emulate_media(color_scheme=scheme)
    page.goto(f"{live_server.url}/drills?kind=layout_stats&seed=1")
    page.fill("#answer-input", "1 1 1 1")
    page.click("#check-btn")
    page.locator("#verdict").wait_for()
    low = page.evaluate(CONTRAST_JS)
    assert not low, low[:8]


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


def test_fit_on_a_phone_uses_the_width_under_which_the_card_sits(page, live_server):
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"{live_server.url}/?layout=Sw<3,4,3> o 0 o (128,64):(64,1)")
    page.click("#fig-grid-explorer button[data-zoom=fit]")
    grid = page.locator("#grid-explorer").bounding_box()
    room = page.evaluate("document.querySelector('#fig-grid-explorer').parentElement.clientWidth")
    assert 0.9 * room <= grid["width"] <= room  # the hover card is below the grid here, not beside it
    assert page.evaluate(OVERFLOW_JS)["over"] <= 0


def test_thread_value_labels_are_never_clipped(page, live_server):
    """wgmma 64x256x16's C: labels up to T127V127 fit their cells, on screen and in the exported SVG."""
    page.goto(f"{live_server.url}/tv?atom=SM90_64x256x16_F32F16F16_SS&operand=C")
    page.evaluate("() => { const w = document.querySelector('#fig-grid-tv .gridwrap'); "
                  "w.scrollTo(w.scrollWidth, w.scrollHeight); }")
    corner = cell("grid-tv", 63, 255)
    wait_js(page, f"document.querySelector('{corner}')?.textContent === 'T127V127'")
    seen, clipped = page.evaluate("""() => { const cs = [...document.querySelectorAll('#grid-tv .gr > span')]
        .filter((c) => c.clientWidth > 0);
        return [cs.length, cs.filter((c) => c.scrollWidth > c.clientWidth).map((c) => c.textContent).slice(0, 5)]; }""")
    assert seen > 1000 and not clipped, clipped
    svg = page.evaluate("window.layoutlabSvg('grid-tv')")
    width = float(svg.split('<rect x="')[1].split('width="')[1].split('"')[0])  # the first cell's rectangle
    assert width >= 6.7 * len("T127V127")


def test_cell_menu_labels_widen_the_cells_and_back(page, live_server):
    page.goto(f"{live_server.url}/?layout=((8,16),(8,16)):((1,64),(8,1024))")
    width = "getComputedStyle(document.querySelector('#grid-explorer .gr > span')).width"
    clipped = ("[...document.querySelectorAll('#grid-explorer .gr > span')].filter((c) => c.clientWidth > 0 "
               "&& c.scrollWidth > c.clientWidth).length")
    before = page.evaluate(width)
    page.click("#fig-grid-explorer .gridview > summary")
    page.select_option("#fig-grid-explorer select.cell-label", "coord")
    assert page.text_content(cell("grid-explorer", 1, 0)) == "((1,0),(0,0))"
    assert page.evaluate(clipped) == 0 and float(page.evaluate(width)[:-2]) > float(before[:-2])
    page.select_option("#fig-grid-explorer select.cell-label", "value")
    assert page.evaluate(width) == before and page.evaluate(clipped) == 0


def test_workbench_examples_take_one_row_per_group_on_a_phone(page, live_server):
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"{live_server.url}/algebra?op=composition&a=(6,2):(8,2)&b=(4,3):(3,1)")
    rows = page.eval_on_selector_all("#chips .presets", "ps => ps.map((p) => p.getBoundingClientRect().height)")
    assert len(rows) >= 5 and max(rows) < 40, rows  # one line each (they wrapped to 3-5 lines)
    page.locator("#chips a.chip", has_text="raked product").click()  # a chip past the edge still scrolls in and loads
    wait_js(page, "document.querySelector('#op-result') !== null && location.search.includes('raked_product')")
    assert page.evaluate(OVERFLOW_JS)["over"] <= 0


def test_narrow_hover_card_appears_only_with_a_cell(page, live_server):
    page.set_viewport_size({"width": 768, "height": 900})
    page.goto(f"{live_server.url}/?layout=(128,128):(128,1)")
    assert not page.locator("#hover-explorer").is_visible()  # no hint card over the grid's last rows
    page.hover(cell("grid-explorer", 1, 4))
    assert page.locator("#hover-explorer").is_visible()
    assert page.inner_text("#hover-explorer").startswith("L(513) = 132")
