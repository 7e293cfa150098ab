"""The GPU lab (/lab) in a real chromium: the page and its charts load, the form's refusals (422 bad parameters, 409
no worker) appear inline, and the history, the committed measurements and the GEMM ladder are drawn from stored
results. Screenshots land in tests/artifacts/lab-*.png (not committed)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser
RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results"


def _newest(prefix: str) -> dict:
    from app.services.bench_charts import newest_result

    found = newest_result(prefix, RESULTS)
    if not found:
        pytest.skip(f"no committed {prefix}_*.json")
    return found[1]


def _no_workers() -> None:
    from gpu_worker.store import get_store

    store = get_store()
    for w in store.workers():
        store.remove_worker(w["id"])


def _seed_history() -> dict[str, str]:
    """Store real committed results as finished jobs: three smem reads and a transpose at two sizes (a sweep)."""
    from gpu_worker.schemas import SmemParams, TransposeParams
    from gpu_worker.store import get_store

    store = get_store()
    ids = {}
    smem = _newest("smem")["cases"]
    for name in ("f32_col_naive", "f32_col_pad1", "f32_col_sw505"):
        r = smem[name]
        params = SmemParams(**{k: r["plan"].get(k) for k in ("element_bytes", "rows", "cols")},
                            **({"variant": "padded", "pad": 1} if "pad1" in name else
                               {"variant": "swizzle", "swizzle": "Sw<5,0,5>"} if "sw" in name else {}))
        job = store.create("smem", params.model_dump())
        store.update(job["id"], status="done", result=r, finished=time.time())
        ids[name] = job["id"]
    tr = _newest("transpose")["cases"]
    sweep = [r for r in tr.values() if "variants" in r and r["config"]["elem_bytes"] == 4 and r["config"]["tile"] == 32]
    if len({r["config"]["n"] for r in sweep}) < 2:
        pytest.skip("the committed transpose results hold one size only")
    for r in sweep:
        cfg = r["config"]
        params = TransposeParams(dtype="fp32", n=cfg["n"], tile=cfg["tile"], block_rows=cfg["block_rows"],
                                 pad=cfg["pad"], swizzle=cfg["swizzle"])
        job = store.create("transpose", params.model_dump())
        store.update(job["id"], status="done", result=r, finished=time.time())
        ids[f"transpose_{cfg['n']}"] = job["id"]
    return ids


def _bar_values(page, chart_id: str) -> dict[str, float]:
    return page.eval_on_selector_all(f"#{chart_id} .bar-g", "els => Object.fromEntries(els.map("
                                     "e => [e.dataset.label, parseFloat(e.dataset.value)]))")


def test_lab_page_draws_committed_measurements_and_the_ladder(page, live_server, screenshot):
    page.goto(f"{live_server.url}/lab")
    assert page.inner_text("h1") == "GPU lab"
    # the sections fold: the ladder first and open, the committed measurements folded until opened
    sections = page.eval_on_selector_all("details.lab-section", "els => els.map(e => [e.id, e.open])")
    assert sections[0] == ["sec-ladder", True] and ["sec-reference", False] in sections
    page.click("#sec-reference > summary")
    smem = _newest("smem")["cases"]
    bars = _bar_values(page, "ref-smem")
    assert bars["f32_col_naive"] == pytest.approx(smem["f32_col_naive"]["derived"]["cycles_per_warp_access"])
    assert bars["f32_col_naive"] / bars["f32_col_pad1"] > 20 and bars["f32_col_naive"] / bars["f32_col_sw505"] > 20
    assert page.locator("#ref-smem .bar-g.bad").count() >= 1
    assert page.locator("#ref-smem line.model").count() == len(bars)
    assert "slower" in page.inner_text("#smem-headline")
    assert page.locator("#ref-transpose-0 polyline").count() >= 4
    screenshot(page, "lab-reference", full_page=False)
    # the GEMM ladder: one chart per size with a cuBLAS line, and each rung's smem layout drawn as a bank grid
    charts = page.locator("#gemm-charts figure")
    assert charts.count() >= 1 and page.locator("#gemm-charts .ref line").count() == charts.count()
    from app.services.bench_ladder import ladder_view

    lad = ladder_view()
    first = lad["charts"][0]
    assert _bar_values(page, "gemm-0") == {b["label"]: pytest.approx(b["value"]) for b in first["bars"]}
    page.locator("#rung-2").scroll_into_view_if_needed()
    assert "8-way" in page.inner_text("#rung-2 > summary") and "1-way" in page.inner_text("#rung-4 > summary")
    grid = page.locator("#rung2-smem")
    assert (grid.get_attribute("data-rows"), grid.get_attribute("data-cols")) == ("16", "64")
    # built as it comes near
    page.wait_for_function("() => document.querySelectorAll('#rung2-smem .acc').length >= 256")
    acc = page.eval_on_selector_all("#rung2-smem .acc", "els => els.map(e => e.textContent.trim())")
    assert len(acc) == 16 * 16  # the 16x16 fragment of one ldmatrix.x4, each cell labelled with its bank
    assert sorted(set(acc), key=int) == [str(b) for b in range(8)]  # unpadded 128-byte rows: 8 banks for 32 words
    page.locator("#rung4-smem").scroll_into_view_if_needed()  # a grid below the screen is built as it comes near
    page.wait_for_function("() => document.querySelectorAll('#rung4-smem .acc').length >= 256")
    acc4 = page.eval_on_selector_all("#rung4-smem .acc", "els => els.map(e => e.textContent.trim())")
    assert len(set(acc4)) == 32  # the swizzle spreads the same fragment over all 32 banks
    assert page.locator("#rung-2 .error").count() == 0
    screenshot(page, "lab-ladder", full_page=False)
    page.locator("#rung-2 > summary").click()  # collapses; rung 3 opens with its padded layout
    page.locator("#rung-3 > summary").click()
    assert "(16,64):(72,1)" in page.inner_text("#rung-3")
    assert not page.console_errors


def test_queue_button_says_why_it_cannot_run(page, live_server, screenshot):
    from gpu_worker.store import get_store

    _no_workers()
    page.goto(f"{live_server.url}/lab")
    assert page.locator("#queue-btn").is_disabled()
    assert "none is running" in page.inner_text("#queue-reason")
    device = page.inner_text("#device")
    assert "Shared Library Not Found" not in device and "`" not in device
    screenshot(page, "lab-no-worker", full_page=False)
    store = get_store()  # a live worker without a GPU: GPU kinds stay disabled, compile only is allowed
    store.heartbeat({"id": "cpu-only", "host": "h", "pid": 1, "busy": False, "kinds": ["compile_only"],
                     "device": {"available": False, "reason": "NVML Shared Library Not Found"}})
    try:
        page.goto(f"{live_server.url}/lab")
        assert page.locator("#queue-btn").is_disabled()
        assert "needs a GPU" in page.inner_text("#queue-reason")
        page.select_option("#lab-kind", "compile_only")
        assert page.locator("#queue-btn").is_enabled() and page.inner_text("#queue-reason") == ""
    finally:
        store.remove_worker("cpu-only")


def test_lab_form_shows_422_and_409_inline(page, live_server, screenshot):
    _no_workers()
    page.goto(f"{live_server.url}/lab")
    page.evaluate("() => { document.querySelector('#queue-btn').disabled = false; }")  # as if a worker had been live
    page.select_option("select[name=variant]", "padded")
    page.fill("input[name=pad]", "0")
    with page.expect_response(lambda r: r.url.endswith("/lab/jobs")) as resp:
        page.click("form.lab-form button[type=submit]")
    assert resp.value.status == 422
    page.wait_for_selector("#job [role=alert]")
    assert "variant padded needs pad >= 1" in page.inner_text("#job")
    screenshot(page, "lab-422", full_page=False)
    page.fill("input[name=pad]", "1")
    with page.expect_response(lambda r: r.url.endswith("/lab/jobs")) as resp:
        page.click("form.lab-form button[type=submit]")
    assert resp.value.status == 409
    page.locator("#job [role=alert]", has_text="no live").wait_for()
    assert "layoutlab worker" in page.inner_text("#job") and "`" not in page.inner_text("#job")
    assert page.locator("#job [role=alert] code", has_text="layoutlab worker").count() == 1
    page.select_option("#lab-kind", "transpose")
    assert page.locator("fieldset[data-kind=transpose]").is_visible()
    assert not page.locator("fieldset[data-kind=smem]").first.is_visible()
    screenshot(page, "lab-409", full_page=False)
    assert not [e for e in page.console_errors if "409" not in e and "422" not in e]


def test_lab_history_charts_stored_results(page, live_server, screenshot):
    ids = _seed_history()
    page.goto(f"{live_server.url}/lab")
    page.wait_for_selector("#history .bar-chart")
    titles = page.eval_on_selector_all("#history figcaption", "els => els.map(e => e.textContent)")
    assert any("cycles per warp access" in t for t in titles) and any("sweep over n" in t for t in titles)
    sweep = page.locator("#history .line-chart").filter(has_text="sweep over n").first
    names = sweep.locator(".series").evaluate_all("els => els.map(e => e.dataset.name)")
    assert {"naive", "padded", "swizzled", "memcpy"} <= set(names)
    assert all(n == 2 for n in sweep.locator(".series").evaluate_all("els => els.map(e => e.querySelectorAll("
                                                                      "'circle').length)"))
    # the naive read's bar is the tallest and ~32x the fixes
    smem = page.locator("#history .bar-chart").filter(has_text="cycles per warp access").first
    heights = smem.locator(".bar-g").evaluate_all("els => els.map(e => [e.dataset.label, parseFloat(e.dataset.value)])")
    values = [v for _, v in heights]
    assert max(values) / min(values) > 20
    page.locator("#history").scroll_into_view_if_needed()
    screenshot(page, "lab-history", full_page=False)
    page.click(f"#history a:has-text('{ids['f32_col_naive']}')")
    page.wait_for_selector(f"#job [data-job='{ids['f32_col_naive']}']")
    assert "wavefronts / instruction" in page.inner_text("#job")
    assert not page.console_errors
