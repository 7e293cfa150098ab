"""The TV atlas's kernel path (atom -> tiled MMA -> tiled copies -> one thread's registers -> its partitions), the
tiled copy / MMA section (a tiled copy that names its duplicates and holes), the TMA cluster section and the copy /
MMA walkthroughs, in a real chromium.
These sections come closed and load their result when first opened (``?panel=``); a permalink naming their fields
opens them filled."""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode, urlparse

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def panel_requests(page) -> list[str]:
    """The ``?panel=`` fragment URLs ``page`` asks for from now on."""
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url) if "panel=" in r.url else None)
    return seen


def heading_to_top(page, hid: str) -> None:
    """Scroll so that heading ``hid`` is at the top of the window (for a screenshot of its section)."""
    page.evaluate("(h) => document.getElementById(h).scrollIntoView({block: 'start'})", hid)


def test_kernel_path_walks_one_thread(page, live_server, screenshot):
    page.goto(f"{live_server.url}/tv?kp_t=5#kernel-h")
    expect(page.locator("#kernel-sec")).to_have_attribute("open", "")
    expect(page.locator("#kp-summary")).to_contain_text("following thread 5")
    for k in range(1, 6):
        expect(page.locator(f"#kp-step-{k}")).to_have_count(1)
    expect(page.locator("#kp-step-2")).to_contain_text("get_layoutC_TV()")
    expect(page.locator("#kp-step-4")).to_contain_text("partition_fragment_C")
    page.locator("#fig-kp-part-c").scroll_into_view_if_needed()  # grids off screen are drawn as they come near
    page.wait_for_function("() => document.querySelectorAll('#fig-kp-part-c .acc').length === 16")  # thread 5's C
    page.locator("#kernel-h").scroll_into_view_if_needed()
    screenshot(page, "tv-kernel-path", full_page=False)
    page.fill("#kp-t", "6")
    page.press("#kp-t", "Enter")
    page.wait_for_function("() => document.querySelector('#kp-summary')?.textContent.includes('thread 6')")
    assert parse_qs(urlparse(page.url).query)["kp_t"] == ["6"]
    page.fill("#kp-perm", "")  # without the N permutation, ldmatrix x4 has too few B values per thread
    page.press("#kp-perm", "Enter")
    page.wait_for_function("() => document.querySelector('#kp-step-3 .kp-problem')?.textContent"
                           ".includes('does not fit')")
    assert not page.console_errors


def test_kernel_path_loads_when_opened(page, live_server, screenshot):
    asked = panel_requests(page)
    page.goto(f"{live_server.url}/tv")
    expect(page.locator("#kernel-sec")).not_to_have_attribute("open", "")
    assert page.locator("#kp-summary").count() == 0 and not asked  # not in the first load, not fetched
    page.click("#kernel-sec > summary")
    expect(page.locator("#kp-summary")).to_contain_text("following thread 0")  # the fragment, swapped in
    expect(page.locator("#kp-step-5")).to_have_count(1)
    assert len(asked) == 1 and "panel=kernel" in asked[0] and "kp_atom=" in asked[0]
    heading_to_top(page, "kernel-h")
    page.wait_for_function("() => document.querySelectorAll('#kp-step-2 .grid .gr').length > 0")
    screenshot(page, "tv-kernel-path-opened", full_page=False)
    page.click("#kernel-sec > summary")  # closed and opened again: no second fetch
    page.click("#kernel-sec > summary")
    expect(page.locator("#kp-summary")).to_be_visible()
    page.fill("#kp-t", "9")  # its form still re-renders it and writes the permalink
    page.press("#kp-t", "Enter")
    expect(page.locator("#kp-summary")).to_contain_text("following thread 9")
    assert parse_qs(urlparse(page.url).query)["kp_t"] == ["9"]
    assert len(asked) == 1
    page.reload()  # the permalink now names the section's fields: it comes open and filled, nothing fetched
    expect(page.locator("#kernel-sec")).to_have_attribute("open", "")
    expect(page.locator("#kp-summary")).to_contain_text("following thread 9")
    assert len(asked) == 1
    assert not page.console_errors


def test_a_link_to_a_closed_section_opens_it(page, live_server, screenshot):
    page.goto(f"{live_server.url}/tv")
    heading_to_top(page, "tiled-h")
    screenshot(page, "tv-sections-closed", full_page=False)
    page.click('nav.presets a[href="#tmac-h"]')  # "On this page"
    expect(page.locator("#tmac-sec")).to_have_attribute("open", "")
    expect(page.locator("#tmac-box")).to_have_text("(64, 64)")
    page.goto(f"{live_server.url}/tv#blackwell-h")  # an address ending in the heading's id
    expect(page.locator("#umma-name")).to_have_text("SM100_MMA_F16BF16_SS")
    assert not page.console_errors


def test_a_tiled_copy_names_its_duplicates_and_holes(page, live_server, screenshot):
    page.goto(f"{live_server.url}/tv?tatom=SM80_CP_ASYNC_CACHEALWAYS_16B&tthr=(16,8):(8,0)&tval=(1,8):(8,1)#tiled-h")
    expect(page.locator("#tiled-sec")).to_have_attribute("open", "")  # a permalink naming its fields opens it
    text = page.text_content("#tiled-coverage")
    assert "claimed more than once" in text and "holes" in text and "T0V1" in text
    page.locator("#tiled-h").scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelectorAll('#grid-tiled .bad').length > 0")
    screenshot(page, "tv-tiled-copy-duplicates", full_page=False)
    page.fill("#tthr-input", "(16,8):(8,1)")
    page.wait_for_function("() => !document.querySelector('#tiled-coverage')")
    assert page.locator("#grid-tiled .bad").count() == 0


TILED_FIELDS = ("tatom", "tthr", "tval", "tbits", "tlayout", "top")


def test_the_tiled_section_loads_when_opened(page, live_server, screenshot):
    asked = panel_requests(page)
    page.goto(f"{live_server.url}/tv?atom=SM90_64x256x16_F32F16F16_SS&operand=C")  # bench/web.py's permalink
    expect(page.locator("#tiled-sec")).not_to_have_attribute("open", "")
    assert page.locator("#grid-tiled").count() == 0 and not asked  # not in the first load, not fetched
    page.select_option("#operand-select", "A")  # another form: the closed section's fields stay out of the address
    expect(page.locator("#fact-operand")).to_have_text("A")
    assert not set(TILED_FIELDS) & set(parse_qs(urlparse(page.url).query))
    page.click("#tiled-sec > summary")
    expect(page.locator("#tiled-atom")).to_have_text("SM80_CP_ASYNC_CACHEALWAYS_16B")  # the fragment, swapped in
    expect(page.locator("#tiled-tile")).to_have_text("16 x 64")
    assert len(asked) == 1 and "panel=tiled" in asked[0] and "tatom=" in asked[0]
    heading_to_top(page, "tiled-h")
    page.wait_for_function("() => document.querySelectorAll('#grid-tiled .gr > span').length > 0")
    screenshot(page, "tv-tiled-opened", full_page=False)
    page.fill("#tthr-input", "(16,8):(8,0)")  # its form still re-renders it and writes the permalink
    expect(page.locator("#tiled-coverage")).to_contain_text("claimed more than once")
    assert parse_qs(urlparse(page.url).query)["tthr"] == ["(16,8):(8,0)"]
    page.select_option("#operand-select", "C")  # open now: the other forms carry its fields
    expect(page.locator("#fact-operand")).to_have_text("C")
    assert parse_qs(urlparse(page.url).query)["tthr"] == ["(16,8):(8,0)"]
    assert len(asked) == 1
    page.reload()  # the permalink now names the section's fields: it comes open and filled, nothing fetched
    expect(page.locator("#tiled-sec")).to_have_attribute("open", "")
    expect(page.locator("#tiled-coverage")).to_contain_text("claimed more than once")
    assert len(asked) == 1
    assert not page.console_errors


def test_tma_cluster_section(page, live_server, screenshot):
    page.goto(f"{live_server.url}/tv?tm_cluster=4#tmac-h")
    expect(page.locator("#tmac-box")).to_have_text("(64, 32)")
    expect(page.locator("#tmac-tensor")).to_have_text("ArithTuple(0,0) o (4096,4096):(1@1,1@0)")
    expect(page.locator("#tmac-parts tbody tr")).to_have_count(4)
    page.locator("#tmac-h").scroll_into_view_if_needed()
    screenshot(page, "tv-tma-cluster", full_page=False)
    row = page.locator("#tmac-parts tbody tr").nth(1).locator("td")  # CTA 1: CuTe's whole box, and its own share
    expect(row.nth(1)).to_contain_text("ArithTuple(")
    expect(row.nth(3)).not_to_be_empty()
    page.locator("#tmac-parts").scroll_into_view_if_needed()
    screenshot(page, "tv-tma-partition-loads", full_page=False)
    assert not page.console_errors


def test_tma_section_loads_when_opened(page, live_server, screenshot):
    asked = panel_requests(page)
    page.goto(f"{live_server.url}/tv")
    assert page.locator("#tmac-facts").count() == 0 and not asked
    page.click("#tmac-sec > summary")
    expect(page.locator("#tmac-parts tbody tr")).to_have_count(2)  # the first preset: a cluster of 2
    assert len(asked) == 1 and "panel=tmac" in asked[0]
    heading_to_top(page, "tmac-h")
    screenshot(page, "tv-tma-cluster-opened", full_page=False)
    page.select_option("#tmac-cluster", "4")
    expect(page.locator("#tmac-parts tbody tr")).to_have_count(4)
    assert parse_qs(urlparse(page.url).query)["tm_cluster"] == ["4"]
    assert not page.console_errors


WALKS = {"copywalk": ("cw", "copy", "#walk-src", "#cw-t"), "mmawalk": ("mw", "mma", "#walk-part-c", "#mw-t")}


@pytest.mark.parametrize("name", list(WALKS))
def test_a_walkthrough_loads_when_opened(page, live_server, screenshot, name):
    prefix, wid, part, thread = WALKS[name]
    asked = panel_requests(page)
    page.goto(f"{live_server.url}/tv?atom=SM90_64x256x16_F32F16F16_SS&operand=C")  # bench/web.py's permalink
    expect(page.locator(f"#{name}-sec")).not_to_have_attribute("open", "")
    assert page.locator(f"#{wid}-walk-thread").count() == 0 and not asked
    page.select_option("#operand-select", "A")  # another form: a closed walkthrough's fields stay out of the address
    expect(page.locator("#fact-operand")).to_have_text("A")
    assert not any(k.startswith(prefix + "_") for k in parse_qs(urlparse(page.url).query))
    page.click(f"#{name}-sec > summary")
    expect(page.locator(f"#{wid}-walk-thread b")).to_have_text("0")  # the fragment, swapped in
    expect(page.locator(f"#{wid}-level-parts {part}")).to_have_count(1)
    assert len(asked) == 1 and f"panel={name}" in asked[0] and f"{prefix}_atom=" in asked[0]
    heading_to_top(page, f"{name}-h")
    page.wait_for_function("(g) => document.querySelectorAll(g + ' .gr').length > 0", arg=f"#{wid}-level-1 .grid")
    screenshot(page, f"tv-{name.replace('walk', '-walkthrough')}-opened", full_page=False)
    page.fill(thread, "3")  # its form re-renders it and writes the permalink, now with the other forms' fields
    expect(page.locator(f"#{wid}-walk-thread b")).to_have_text("3")
    query = parse_qs(urlparse(page.url).query)
    assert query[f"{prefix}_t"] == ["3"] and query["operand"] == ["A"]
    page.select_option("#operand-select", "B")  # the section is open now: the other forms carry its fields
    expect(page.locator("#fact-operand")).to_have_text("B")
    assert parse_qs(urlparse(page.url).query)[f"{prefix}_t"] == ["3"]
    assert len(asked) == 1
    page.reload()  # the permalink names the section's fields: it comes open and filled, nothing fetched
    expect(page.locator(f"#{name}-sec")).to_have_attribute("open", "")
    expect(page.locator(f"#{wid}-walk-thread b")).to_have_text("3")
    assert len(asked) == 1
    assert not page.console_errors


def test_tma_cluster_of_three_ctas(page, live_server, screenshot):
    """A cluster need not be a power of 2: CuTe cuts the multicast box among 3 CTAs where the box's outer mode is
    divisible by 3, and asserts otherwise (the page names the reason)."""
    q = urlencode({"tm_g": "(200,100):(1,200)", "tm_s": "(64,96):(1,64)", "tm_tile": "64,96", "tm_cluster": "3"})
    page.goto(f"{live_server.url}/tv?{q}#tmac-h")
    expect(page.locator("#tmac-parts tbody tr")).to_have_count(3)
    expect(page.locator("#tmac-box")).to_have_text("(64, 32)")  # CuTe's box: 96 cut among 3 CTAs
    page.locator("#tmac-h").scroll_into_view_if_needed()
    screenshot(page, "tv-tma-cluster3", full_page=False)
    q = urlencode({"tm_g": "(4096,4096):(1,4096)", "tm_s": "(128,64):(1,128)", "tm_tile": "128,64", "tm_cluster": "3"})
    page.goto(f"{live_server.url}/tv?{q}#tmac-h")
    expect(page.locator("#tmac-sec .msg.error")).to_contain_text("the cluster of 3 CTAs does not divide the box")
    assert not page.console_errors


#: the long menus of the sections sent closed (templates/_menu.html): section -> select ids
MENUS = {"tiled": ("tatom-select",), "copywalk": ("cw-atom",), "mmawalk": ("mw-atom",),
         "kernel": ("kp-atom", "kp-a", "kp-b", "kp-c"), "blackwell": ("bw-ld",)}
# a menu of the page, or of a closed section's inert form (templates/_section.html)
MENU_JS = """(ids) => ids.map((id) => { const s = document.getElementById(id) || [...document.querySelectorAll(
        'template.closed-form')].map((t) => t.content.getElementById(id)).find(Boolean);
    return [id, s.value, s.selectedIndex >= 0 ? s.options[s.selectedIndex].text : null,
            [...s.querySelectorAll('optgroup:not([hidden]), option:not([hidden])')].map((o) => o.label || o.value),
            s.getBoundingClientRect().width]; })"""


def test_a_closed_sections_menus_are_whole_once_opened(page, live_server):
    """A section sent closed holds its form inert, with only the chosen option of each long menu; opening it (a
    click, a link to its heading) puts in the form and the whole list, as the section sent open has it, the same one
    chosen; a search box then filters it as before."""
    ids = [i for group in MENUS.values() for i in group]
    fields = {"tbits": "16", "cw_t": "0", "mw_t": "0", "kp_t": "0", "bw_warp": "0"}  # the defaults: sent open
    page.goto(f"{live_server.url}/tv?{urlencode(fields)}")
    whole = page.evaluate(MENU_JS, ids)
    assert all(len(opts) > 10 for _, _, _, opts, _ in whole)
    page.goto(f"{live_server.url}/tv?atom=SM90_64x256x16_F32F16F16_SS&operand=C")  # bench/web.py's permalink
    page.wait_for_selector("#tiled-sec", state="attached")  # under a grid taller than the screen: after its paint
    short = page.evaluate(MENU_JS, ids)
    assert [(i, v, t, len(o)) for i, v, t, o, _ in short] == [(i, v, t, 1) for i, v, t, _, _ in whole]
    for name in ("tiled", "copywalk", "mmawalk", "blackwell"):
        page.click(f"#{name}-sec > summary")
    page.click('a[href="#kernel-h"]')  # a link to a closed section's heading opens it
    expect(page.locator("#kernel-sec")).to_have_attribute("open", "")
    assert page.evaluate(MENU_JS, ids) == whole  # the same options, and each menu as wide as it was sent whole
    assert page.locator("template[id$='-all']").count() == 1  # the atom picker's own, until it is reached
    width = page.evaluate("document.getElementById('atom-select').getBoundingClientRect().width")
    page.focus("#atom-select")  # reached: its whole list, the box as wide as before
    assert page.locator("template[id$='-all']").count() == 0
    assert page.evaluate("document.getElementById('atom-select').options.length") > 300
    assert page.evaluate("document.getElementById('atom-select').value") == "SM90_64x256x16_F32F16F16_SS"
    assert page.evaluate("document.getElementById('atom-select').getBoundingClientRect().width") == width
    page.fill("#tatom-search", "LDSM_T")  # the search box filters the whole list
    assert page.evaluate("document.getElementById('tatom-select').value").endswith("LDSM_T")
    assert not page.console_errors


SM70 = "SM70_8x8x4_F32F16F16F32_TN"
SM70_LANES = [f"T{t}" for t in (*range(8), *range(16, 24))]
#: (the page's fields for SM70 (1,2,1), its thread field, its lane buttons, the atom's C picture, partition_C's grid)
LANE_PAGES = {
    "kernel": ({"kp_atom": SM70, "kp_layout": "(1,2,1)", "kp_perm": "", "kp_a": "UniversalCopy_32b",
                "kp_b": "UniversalCopy_32b", "kp_c": "UniversalCopy_32b", "kp_cta": "", "kp_t": "0"}, "kp_t",
               "#kp-lane-buttons", "#kp-mma-atom", "#kp-part-c", "kernel-h", "kernel-path-sm70-lanes"),
    "mmawalk": ({"mw_atom": SM70, "mw_layout": "(1,2,1)", "mw_tile": "", "mw_t": "0"}, "mw_t", "#mma-lane-buttons",
                "#walk-atom-c", "#walk-part-c", "mmawalk-h", "walkthrough-sm70-lanes"),
}


def lit_labels(page, grid: str) -> list[str]:
    """The labels of a grid's outlined cells, once every tile of it is drawn (tiles are drawn as they come near)."""
    page.locator(grid).scroll_into_view_if_needed()
    page.wait_for_function("(g) => document.querySelectorAll(g + ' .gr').length > 0", arg=grid)
    return page.eval_on_selector_all(f"{grid} .acc", "els => els.map(e => e.textContent)")


@pytest.mark.parametrize("name", list(LANE_PAGES))
def test_a_lane_button_follows_an_sm70_lane(page, live_server, screenshot, name):
    """SM70 (1,2,1): the thread picker's buttons name the lanes T0-T7, T16-T23 (as the cells do); T16 follows lane 16,
    thread 4 of the first atom: its 8 values of the atom's C and of the tile's C are outlined, and the permalink
    names lane 16. A number that is no lane (8) is refused with the lanes named."""
    fields, field, buttons, atom_c, part_c, heading, shot = LANE_PAGES[name]
    page.goto(f"{live_server.url}/tv?{urlencode(fields)}#{heading}")
    expect(page.locator(f"#{name}-sec")).to_have_attribute("open", "")
    assert page.locator(f"{buttons} button").all_inner_texts() == SM70_LANES
    page.click(f"{buttons} button[data-lane='16']")
    expect(page.locator(f"{buttons} button[data-lane='16']")).to_have_attribute("aria-pressed", "true")
    assert parse_qs(urlparse(page.url).query)[field] == ["16"]
    for grid in (atom_c, part_c):
        labels = lit_labels(page, grid)
        assert len(labels) == 8 and all(x.startswith("T16V") for x in labels), (grid, labels)
    dup = page.evaluate("() => { const seen = new Set(), dup = []; for (const e of document.querySelectorAll('[id]'))"
                        " { if (seen.has(e.id)) dup.push(e.id); seen.add(e.id); } return dup; }")
    assert dup == [], dup  # a form field and a grid once shared the id kp-atom
    heading_to_top(page, heading)
    page.wait_for_function("(g) => document.querySelectorAll(g + ' .gr').length > 0", arg=atom_c)
    screenshot(page, shot, full_page=False)
    page.fill(f"#{field.replace('_', '-')}", "8")
    page.press(f"#{field.replace('_', '-')}", "Enter")
    expect(page.locator(f"#{name}-sec .msg.error")).to_contain_text("the 16 threads are lanes 0-7, 16-23")
    assert not page.console_errors


# the form controls of the document inside a box the browser is not rendering at the first load: a closed <details>
# (but a grid's own Cells menu) or a content-visibility box (a grid's tiles hold no controls)
LOCKED_CONTROLS_JS = """() => [...document.querySelectorAll('input, select, button, textarea')].filter((c) => {
    for (let e = c.parentElement; e; e = e.parentElement) {
        if (e.tagName === 'DETAILS' && !e.open && !e.classList.contains('gridview')) return true;
        if (getComputedStyle(e).contentVisibility !== 'visible') return true; }
    return false; }).map((c) => c.id || c.name || c.tagName)"""


def test_no_form_control_waits_in_a_box_the_first_load_does_not_render(page, live_server):
    """After DOMContentLoaded Chromium visits every form control, and lays out each box it was skipping that holds one,
    and the page with it: one full layout per box (14 layouts on bench/web.py's permalink, 5 without). A closed
    section's form comes inert (templates/_section.html) and the panels holding controls are not content-visibility
    boxes. Clicking a closed section's summary puts its form in before the section opens."""
    page.goto(f"{live_server.url}/tv?atom=SM90_64x256x16_F32F16F16_SS&operand=C")  # bench/web.py's permalink
    expect(page.locator("#fact-atom")).to_have_text("SM90_64x256x16_F32F16F16_SS")
    page.wait_for_selector("#tiled-sec", state="attached")  # under a grid taller than the screen: after its paint
    assert page.evaluate(LOCKED_CONTROLS_JS) == []
    assert page.locator("#tiled-form").count() == 0 and page.locator("template.closed-form").count() == len(MENUS) + 1
    live = page.evaluate("""() => { document.querySelector('#tiled-sec > summary').click();
        return [!!document.querySelector('#tiled-sec #tiled-form'), document.getElementById('tiled-sec').open,
                document.querySelectorAll('#tiled-sec template.closed-form').length]; }""")
    assert live == [True, True, 0]  # in the click's own task: no frame shows the open section without its form
    expect(page.locator("#tiled-atom")).to_have_text("SM80_CP_ASYNC_CACHEALWAYS_16B")  # its result, fetched with it
    assert not page.console_errors  # (its form re-rendering it: test_the_tiled_section_loads_when_opened)


def test_what_waits_under_a_tall_grid_comes_in_after_its_paint(page, live_server):
    """bench/web.py's SM90 64x256 permalink: the first screen is painted before the panels under the grid are in the
    page; they come in while the page is idle, working (htmx set up: a Hopper menu redraws its panel), and an address
    or a link naming an id under the grid puts them in at once and goes there."""
    url = f"{live_server.url}/tv?atom=SM90_64x256x16_F32F16F16_SS&operand=C"
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("#hopper-form", state="attached")
    assert page.locator("template.after-paint").count() == 0
    before = page.locator("#hopper").inner_text()
    page.select_option("#hmajor-select", "MN")
    expect(page.locator("#hopper")).not_to_have_text(before)
    page.goto(url + "#hopper-h")  # an address naming a heading under the grid
    assert page.evaluate("Math.abs(document.getElementById('hopper-h').getBoundingClientRect().top)") < 5
    page.goto(url, wait_until="domcontentloaded")
    page.click('a[href="#blackwell-h"]')  # a link to a closed section under the grid, maybe before the idle time
    expect(page.locator("#blackwell-sec")).to_have_attribute("open", "")
