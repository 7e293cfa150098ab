"""Large grids in a real chromium: tiles laid out lazily (on scroll, then when idle), the hover card kept in view,
SVG export across tiles. Screenshots land in tests/artifacts/."""

from __future__ import annotations

import re

import pytest

from tests.browser.test_web_browser import cell, grid_text

pytestmark = pytest.mark.browser

IN_VIEW_JS = """([sel, box]) => {
  const r = document.querySelector(sel).getBoundingClientRect();
  const b = box ? document.querySelector(box).getBoundingClientRect()
                : {top: 0, left: 0, bottom: innerHeight, right: innerWidth};
  return r.width > 0 && r.top >= b.top - 1 && r.bottom <= b.bottom + 1
    && r.left >= b.left - 1 && r.right <= b.right + 1;
}"""


def wait_js(page, expr: str, timeout: float = 10_000) -> None:
    """Poll ``expr`` until truthy (page.evaluate each time: Playwright's wait_for_function polls through eval,
    which the app's Content-Security-Policy forbids)."""
    import time

    deadline = time.monotonic() + timeout / 1000
    while not page.evaluate(f"() => {{ try {{ return !!({expr}); }} catch (e) {{ return false; }} }}"):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {expr}")
        page.wait_for_timeout(50)


def built(page, *grid_ids: str, timeout: float = 15_000) -> None:
    """Wait until every tile of these grids is built: a big grid arrives as data and static/grid-data.js builds the
    tiles on screen at once, the others as they scroll near or while the page is idle."""
    for gid in grid_ids:
        wait_js(page, f"document.getElementById('{gid}') && !document.querySelector('#{gid} .gt.cold')", timeout)


def scroll_wrap(page, grid_id: str, x: str, y: str) -> None:
    wrap = f"document.querySelector('#fig-{grid_id} .gridwrap')"
    page.evaluate(f"(() => {{ const w = {wrap}; w.scrollTo({x}, {y}); }})()")


def test_cold_tiles_warm_on_scroll_then_all_when_idle(page, live_server, screenshot):
    page.goto(f"{live_server.url}/?layout=(128,128):(128,1)")
    total = page.locator("#grid-explorer .gk .gt").count()
    cold = page.locator("#grid-explorer .gk .gt.cold").count()
    assert total == 64 and cold >= 48  # only the top-left tiles were laid out at first
    assert page.locator("#grid-explorer .gh .gt.cold").count() >= 5  # and the labels above them
    corner = cell("grid-explorer", 127, 127)
    scroll_wrap(page, "grid-explorer", "w.scrollWidth", "w.scrollHeight")
    wait_js(page, f"document.querySelector('{corner}')?.closest('.gt').classList.contains('cold') === false")
    assert page.evaluate(IN_VIEW_JS, [corner, "#fig-grid-explorer .gridwrap"])
    assert page.locator(corner).inner_text() == "16383"
    label = '#grid-explorer .gh .gt[data-j="112"] > span:nth-child(16)'
    wait_js(page, f"!document.querySelector('{label}').parentElement.classList.contains('cold')")
    assert page.evaluate(IN_VIEW_JS, [label, "#fig-grid-explorer .gridwrap"]) and page.inner_text(label) == "127"
    screenshot(page, "explorer-128x128-bottom-right", full_page=False)
    wait_js(page, "!document.querySelector('#grid-explorer .gt.cold')", timeout=15_000)
    text = grid_text(page, "grid-explorer")
    assert all(text[i][j] == str(128 * i + j) for i in (0, 77, 127) for j in (0, 50, 127))
    assert not page.console_errors


def test_hover_card_stays_in_view(page, live_server, screenshot):
    page.goto(f"{live_server.url}/?layout=(64,64):(64,1)")
    scroll_wrap(page, "grid-explorer", "w.scrollWidth", "w.scrollHeight")
    target = cell("grid-explorer", 63, 63)
    wait_js(page, f"document.querySelector('{target}')?.closest('.gt').classList.contains('cold') === false")
    page.mouse.wheel(0, 400)  # scroll the page too: the card sticks
    page.hover(target)
    card = page.inner_text("#hover-explorer")
    assert "L(4095) = 4095" in card and "flat coordinate (63, 63)" in card
    assert page.evaluate(IN_VIEW_JS, ["#hover-explorer", None])
    grid_box = page.locator("#fig-grid-explorer .gridwrap").bounding_box()
    card_box = page.locator("#hover-explorer").bounding_box()
    assert card_box["x"] >= grid_box["x"] + grid_box["width"]  # beside the grid, not wrapped below it
    screenshot(page, "explorer-64x64-hover-corner", full_page=False)


def test_hover_card_on_a_narrow_screen(page, live_server, screenshot):
    page.set_viewport_size({"width": 760, "height": 900})
    page.goto(f"{live_server.url}/?layout=(64,64):(64,1)")
    page.hover(cell("grid-explorer", 5, 3))
    assert "L(197) = 323" in page.inner_text("#hover-explorer")
    assert page.evaluate(IN_VIEW_JS, ["#hover-explorer", None])
    screenshot(page, "explorer-64x64-narrow", full_page=False)


def test_svg_export_across_tiles(page, live_server):
    page.goto(f"{live_server.url}/?layout=(20,20):(1,20)")
    svg = page.evaluate("window.layoutlabSvg('grid-explorer')")
    assert svg.count("<rect") == 1 + 400
    W, H, pad = 44, 22, 28  # layoutlab.grid.Grid.svg_body
    i, j = 17, 18
    x, y = pad + j * W + W // 2, pad + i * H + H // 2 + 4
    assert f'<text x="{x}" y="{y}" text-anchor="middle">{i + 20 * j}</text>' in svg
    page.goto(f"{live_server.url}/?layout=(4,(2,4)):(2,(1,8))")
    svg = page.evaluate("window.layoutlabSvg('grid-explorer')")
    assert svg.count("<line") == 3 * 4  # the (2,4) mode's three inner boundaries, on each of the four rows


def test_the_svg_button_draws_what_the_library_draws(page, live_server):
    """The page's SVG is the server's drawing (``Grid.svg_body``): for a layout, the one ``layoutlab.svg`` makes, but
    for the fills, which the page reads from its CSS (``rgb(...)`` for ``#rrggbb``) and the cells' offsets."""
    import layoutlab

    text = "(4,(2,4)):(2,(1,8))"
    page.goto(f"{live_server.url}/?layout={text}")
    svg = page.evaluate("window.layoutlabSvg('grid-explorer')")

    def plain(s: str) -> str:
        s = re.sub(r'<g class="cell"[^>]*>', '<g class="cell">', s)
        return re.sub(r'fill="(#[0-9a-f]{6}|rgb\([^)]*\))"', 'fill="F"', s)

    assert plain(svg) == plain(layoutlab.svg(text))
    assert "rgb(" in svg and not page.console_errors


def test_svg_export_reads_tiles_not_laid_out(page, live_server):
    page.goto(f"{live_server.url}/?layout=(64,64):(64,1)")
    corner = cell("grid-explorer", 63, 63)
    tile = '#grid-explorer .gk > .gt[data-i0="48"][data-j="48"]'
    cold, empty, svg = page.evaluate(f"""async () => [document.querySelector('{tile}').classList.contains('cold'),
                                         !document.querySelector('{corner}'),
                                         await window.layoutlabSvg('grid-explorer')]""")
    assert cold and empty  # exported before that tile was built (deferred) or laid out
    W, H, pad = 44, 22, 28
    fills = {(int(x), int(y)): f for x, y, f in
             re.findall(r'<rect x="(\d+)" y="(\d+)" width="44" height="22" fill="([^"]+)"', svg)}
    assert len(fills) == 4096

    def at(i: int, j: int) -> str:
        return fills[pad + j * W, pad + i * H]

    # colours are offset mod 32: 4095 and 31 share one, 0 another; none is the page's default (transparent)
    assert at(63, 63) == at(0, 31) != at(0, 0) and "rgba(0, 0, 0, 0)" not in fills.values()


def test_keyboard_moves_a_cursor_over_the_grid(page, live_server, screenshot):
    page.goto(f"{live_server.url}/?layout=(64,64):(64,1)")
    page.focus("#fig-grid-explorer .gridwrap")
    for key in ("ArrowRight", "ArrowRight", "ArrowDown"):
        page.keyboard.press(key)
    card = page.inner_text("#hover-explorer")
    assert "L(129) = 66" in card and "flat coordinate (1, 2)" in card  # 1-D index 1 + 64 * 2; offset 64 + 2
    page.keyboard.press("End")
    page.keyboard.press("PageDown")
    page.keyboard.press("PageDown")
    page.keyboard.press("PageDown")
    page.keyboard.press("PageDown")  # clamps at the last row
    card = page.inner_text("#hover-explorer")
    assert "L(4095) = 4095" in card and "flat coordinate (63, 63)" in card
    target = cell("grid-explorer", 63, 63)
    assert page.evaluate(f"document.querySelector('{target}').classList.contains('hl')")
    assert page.evaluate(IN_VIEW_JS, [target, "#fig-grid-explorer .gridwrap"])
    screenshot(page, "explorer-64x64-keyboard", full_page=False)


def test_a_one_dimensional_grid_builds_its_far_tiles_and_hovers_them(page, live_server, screenshot):
    """1 x 65,536 cells arrive as one warm tile of 256 plus JSON: the last tile, its column labels (with the
    nested mode's boundary) and the hover card's coordinates are built on the page as they scroll near."""
    page.goto(f"{live_server.url}/?layout=((256,256)):((1,256))")
    assert page.locator("#grid-explorer .gk .gt").count() == 256
    assert page.locator("#grid-explorer .gh .gt[data-h]").count() == 255  # labels too arrive empty
    last = '#grid-explorer .gk .gt[data-j="65280"] > .gr[data-i="0"] > span:nth-child(256)'
    scroll_wrap(page, "grid-explorer", "w.scrollWidth", "0")
    wait_js(page, f"document.querySelector('{last}')?.closest('.gt').classList.contains('cold') === false")
    assert page.locator(last).text_content() == "65535"  # DOM text: a lazy tile not yet painted has no innerText
    head = '#grid-explorer .gh .gt[data-j="65280"] > span'
    wait_js(page, f"document.querySelectorAll('{head}').length === 256")
    assert page.text_content(f"{head}:nth-child(256)") == "65535"
    assert "l1" in page.get_attribute(f"{head}:nth-child(1)", "class")  # 65280 = 255 * 256: a boundary
    page.hover(last)
    card = page.inner_text("#hover-explorer")
    assert "L(65535) = 65535" in card and "natural coordinate ((255,255))" in card, card
    assert "mode 0: (255,255) → 65535" in card
    page.hover('#grid-explorer .gk .gt[data-j="65280"] > .gr[data-i="0"] > span:nth-child(2)')
    card = page.inner_text("#hover-explorer")
    assert "L(65281) = 65281" in card and "natural coordinate ((1,255))" in card, card
    screenshot(page, "explorer-1x65536-end", full_page=False)
    assert not page.console_errors


ON_SCREEN_JS = """(id) => {
  const g = document.getElementById(id), w = g.closest('.gridwrap').getBoundingClientRect();
  const top = Math.max(0, w.top), bottom = Math.min(innerHeight, w.bottom);
  const left = Math.max(0, w.left), right = Math.min(innerWidth, w.right);
  const out = {seen: 0, seenCold: 0, built: 0, total: 0};
  for (const t of g.querySelectorAll('.gk > .gt')) {
    const r = t.getBoundingClientRect();
    const seen = r.bottom > top && r.top < bottom && r.right > left && r.left < right;
    out.total += 1; out.built += t.classList.contains('cold') ? 0 : 1;
    if (seen) { out.seen += 1; out.seenCold += t.classList.contains('cold') ? 1 : 0; }
  }
  return out; }"""


@pytest.mark.parametrize("width", [1280, 375])
def test_the_first_screenful_is_built_before_the_first_paint(page, live_server, width):
    """A big grid arrives as data: at the load event every tile on screen holds its cells, and no more than the
    screen's worth of tiles was built (the rest waits for scrolling or idle time); on a phone the grid starts below
    the screen, and its tiles are built as it scrolls in."""
    page.set_viewport_size({"width": width, "height": 900})
    page.add_init_script("addEventListener('load', () => { window.__atLoad = [...document.querySelectorAll("
                         "'#grid-explorer .gk > .gt:not(.cold)')].length; });")
    page.goto(f"{live_server.url}/?layout=(128,128):(128,1)", wait_until="load")
    got = page.evaluate(ON_SCREEN_JS, "grid-explorer")
    assert got["seenCold"] == 0 and got["total"] == 64, got
    assert page.evaluate("window.__atLoad") <= max(1, got["seen"]) + 2, got
    if width == 1280:
        assert got["seen"] >= 2 and page.locator(cell("grid-explorer", 0, 0)).text_content() == "0"
    else:
        page.evaluate("document.getElementById('fig-grid-explorer').scrollIntoView()")
        wait_js(page, f"(({ON_SCREEN_JS})('grid-explorer')).seenCold === 0")
        assert page.evaluate(ON_SCREEN_JS, "grid-explorer")["seen"] >= 2
    assert not page.console_errors


def test_grids_below_the_screen_wait(page, live_server):
    """The TV atlas's walkthrough grids (opened by a permalink naming their fields) are far below the first screen:
    none of their tiles is built at load."""
    page.goto(f"{live_server.url}/tv?atom=SM90_64x256x16_F32F16F16_SS&operand=C&cw_t=0&mw_t=0", wait_until="load")
    built_far = "document.querySelectorAll('#walk-src .gk > .gt:not(.cold), #walk-warps .gk > .gt:not(.cold)').length"
    assert page.evaluate(built_far) == 0
    assert page.evaluate(ON_SCREEN_JS, "grid-tv")["seenCold"] == 0
    page.locator("#walk-warps").scroll_into_view_if_needed()
    built(page, "walk-warps")
    assert page.locator("#walk-warps .gr > span").count() == 32 * 16


TYPING_JS = """() => { window.__t = {inFlight: 0, most: 0, sent: 0, swapped: []}; const seen = new WeakSet();
  document.body.addEventListener('htmx:beforeRequest', () => { const t = window.__t; t.sent += 1;
    t.inFlight += 1; t.most = Math.max(t.most, t.inFlight); });
  document.body.addEventListener('htmx:afterRequest', () => { window.__t.inFlight -= 1; });
  document.body.addEventListener('htmx:afterSettle', (e) => { if (seen.has(e.detail.xhr)) return;
    seen.add(e.detail.xhr); window.__t.swapped.push(document.querySelector('#fact-layout')?.textContent); }); }"""


def test_fast_typing_keeps_one_request_in_flight_and_swaps_no_stale_answer(page, live_server):
    """Keys faster than the server: one request at a time (hx-sync queue last), an answer to an input already changed
    is not swapped, the last layout typed is the one shown, htmx logs no abort error and nothing goes to localStorage
    (htmx's page snapshot per swap)."""
    page.goto(f"{live_server.url}/?layout=(64,64):(1,64)")
    page.evaluate(TYPING_JS)
    box = page.locator("#layout-input")
    box.click()
    page.keyboard.press("End")
    page.keyboard.press("ArrowLeft")
    page.keyboard.type("123456789", delay=5)  # (64,64):(1,64123456789)
    wait_js(page, "document.querySelector('#fact-layout')?.textContent === '(64,64):(1,64123456789)'")
    page.wait_for_timeout(300)
    t = page.evaluate("window.__t")
    assert t["most"] == 1 and t["sent"] >= 2, t
    assert t["swapped"][-1] == "(64,64):(1,64123456789)" and len(t["swapped"]) < t["sent"], t  # stale ones dropped
    assert page.locator(cell("grid-explorer", 0, 1)).text_content() == "64123456789"
    assert page.evaluate("localStorage.getItem('htmx-history-cache')") is None
    assert not page.console_errors, page.console_errors
    from urllib.parse import parse_qs, urlparse

    assert parse_qs(urlparse(page.url).query)["layout"] == ["(64,64):(1,64123456789)"]
