"""In a real chromium at desktop and phone widths: an unknown path and the lab's history opened on their own are styled
pages of the site; a lab job's result is a table with its chart and the history's result column is filled; the
workbench's hover card never covers a grid, and its derivation numbers steps without running through sub-steps.
Screenshots land in tests/artifacts/alone-*.png (not committed)."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.browser
WIDTHS = (1280, 375)
OVER = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
CARD_OVER_GRID = """() => { const c = document.querySelector('.float-card');
  if (!c || c.hidden) return null;
  const r = c.getBoundingClientRect();
  return [...document.querySelectorAll('.gridwrap')].filter((g) => { const q = g.getBoundingClientRect();
    return q.width && r.left < q.right && r.right > q.left && r.top < q.bottom && r.bottom > q.top; }).length; }"""


def _jobs() -> dict[str, str]:
    from gpu_worker.store import get_store

    store = get_store()
    out = {}
    for kind, params, result in (
        ("compile_only", {"template": "noop"},
         {"kind": "compile_only", "template": "noop", "worker": "w-cpu", "compiled": True, "cached": True,
          "toolkit": {"version": "13.0", "source": "PATH"}, "key": "a4367684f0e3"}),
        ("transpose", {"dtype": "fp32", "n": 8192},
         {"kind": "transpose", "config": {"n": 8192}, "copy_gbps": 4000.0, "prediction": {},
          "variants": {"naive": {"gbps": 500.0, "pct_of_copy": 12.5, "check": {"passed": True}},
                       "padded": {"gbps": 3500.0, "pct_of_copy": 87.5, "check": {"passed": True}}}})):
        job = store.create(kind, params)
        store.update(job["id"], status="done", result=result, finished=time.time())
        out[kind] = job["id"]
    return out


@pytest.mark.parametrize("width", WIDTHS)
def test_unknown_path_and_lone_history_are_styled_pages(page, live_server, screenshot, width):
    page.set_viewport_size({"width": width, "height": 900})
    r = page.goto(f"{live_server.url}/nope")
    assert r.status == 404 and page.inner_text("h1").startswith("Page not found")
    assert page.locator("header.top nav a").count() >= 7 and page.evaluate(OVER) <= 0
    assert page.evaluate("getComputedStyle(document.querySelector('.msg.error')).borderStyle") != "none"
    screenshot(page, f"alone-404-{width}", full_page=False)
    _jobs()
    r = page.goto(f"{live_server.url}/lab/history")
    assert r.status == 200 and page.inner_text("h1") == "GPU lab: history"
    assert page.locator("link[href='/static/lab.css']").count() == 1 and page.evaluate(OVER) <= 0
    results = page.eval_on_selector_all("table.jobs td.result", "els => els.map(e => e.textContent.trim())")
    assert "built by nvcc (from the build cache)" in results and any(x.startswith("best of 2: padded") for x in results)
    screenshot(page, f"alone-history-{width}", full_page=False)
    assert not [e for e in page.console_errors if "404" not in e]


@pytest.mark.parametrize("width", WIDTHS)
def test_lab_job_results_are_tables_with_charts(page, live_server, screenshot, width):
    ids = _jobs()
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/lab")
    page.click(f"#history a:has-text('{ids['compile_only']}')")
    page.wait_for_selector(f"#job [data-job='{ids['compile_only']}'] table.result-rows")
    rows = page.eval_on_selector_all("#job table.result-rows tr", "els => els.map(e => e.innerText)")
    assert any(r.startswith("template") and "noop" in r for r in rows) and any("13.0" in r for r in rows)
    assert not page.locator("#job details.raw").get_attribute("open")  # the JSON only on request
    page.click(f"#history a:has-text('{ids['transpose']}')")
    page.wait_for_selector(f"#job [data-job='{ids['transpose']}'] #job-chart")
    bars = page.eval_on_selector_all("#job-chart .bar-g", "els => els.map(e => e.dataset.label)")
    assert bars == ["naive", "padded"] and page.locator("#job-chart .ref").count() == 1
    assert page.evaluate(OVER) <= 0
    page.locator("#job").screenshot(path=str(screenshot(page, f"alone-lab-job-{width}", full_page=False)))
    assert not page.console_errors


@pytest.mark.parametrize("width", WIDTHS)
def test_workbench_hover_card_never_covers_a_grid(page, live_server, screenshot, width):
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/algebra?op=logical_divide&a=(4,8):(1,4)&b=4:3")
    checked = 0
    for panel in page.locator(".split .panel").all():
        cells = panel.locator(".grid .gr > span:not(:first-child)")
        n = cells.count()
        for k in sorted({0, n // 2, n - 1}):
            cells.nth(k).scroll_into_view_if_needed()
            cells.nth(k).hover()
            assert page.evaluate(CARD_OVER_GRID) == 0, (width, k)
            checked += 1
    assert checked >= 9
    result = page.locator(".split .panel", has_text="result =").locator(".grid .gr > span:not(:first-child)")
    result.nth(5).hover()
    assert page.locator(".float-card").is_visible()
    screenshot(page, f"alone-workbench-hover-{width}", full_page=False)
    page.evaluate("document.querySelector('details.derivation').open = true")
    top = page.eval_on_selector_all("#steps > li", "els => els.length")
    sub = page.eval_on_selector_all("#steps ol.sub > li", "els => els.length")
    assert top == 4 and sub >= 10
    assert page.evaluate("getComputedStyle(document.querySelector('#steps ol.sub')).listStyleType") == "lower-alpha"
    page.locator("details.derivation").screenshot(path=str(screenshot(page, f"alone-derivation-{width}",
                                                                      full_page=False)))
    assert not page.console_errors
