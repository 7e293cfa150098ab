"""Drills in a real chromium: a hint opened, a wrong answer (marked cells, no key), a reveal that counts as a miss
and does not promote the drill; answer wrong then right; hints escalate; progress is still there after the server
restarts; the whiteboard sheet runs to its score page.

Screenshots land in tests/artifacts/ (not committed)."""

from __future__ import annotations

import pytest

from app.drills import identity, store
from app.drills.core import from_id

pytestmark = pytest.mark.browser

def table_seed() -> int:
    return next(s for s in range(200) if from_id(f"offsets-{s}").table_shape == (4, 4))


def test_answer_wrong_then_right_with_steps_and_hints(browser, live_server, screenshot):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    seed = table_seed()
    drill = from_id(f"offsets-{seed}")
    page.goto(f"{live_server.url}/drills?kind=offsets&seed={seed}")
    assert drill.prompt.split(":")[0] in page.inner_text("#drill-prompt")

    page.click("#hint-btn")
    page.wait_for_selector(".hint.level1")
    page.click("#hint-btn")
    page.wait_for_selector(".hint.level2")
    assert "Hint 2" in page.inner_text("#hint-box")

    rows = [r.split() for r in drill.expected.split("\n")]
    rows[1][2] = str(int(rows[1][2]) + 3)
    page.fill("#answer-input", "\n".join(" ".join(r) for r in rows))
    page.click("#check-btn")
    page.wait_for_selector("#verdict.wrong")
    assert "Not quite" in page.inner_text("#verdict-title")
    assert "row 1, column 2" in page.inner_text("#verdict-reason")
    bad = page.eval_on_selector_all(".mine .gr span.bad", "els => els.length")
    assert bad == 1
    assert page.query_selector("#expected") is None  # a wrong answer does not show the key
    screenshot(page, "drills-wrong")

    page.fill("#answer-input", drill.expected.replace("\n", " ; "))
    page.click("#check-btn")
    page.wait_for_selector("#verdict.right")
    assert page.inner_text("#verdict-title") == "Correct"
    assert page.inner_text("#expected").split() == drill.expected.split()
    steps = page.eval_on_selector_all("#verdict .steps li", "els => els.length")
    assert steps == len(drill.steps)
    assert page.eval_on_selector_all("#verdict .grids div.grid", "els => els.length") >= 1
    assert page.inner_text("#side-score").startswith("1 / 2 right")  # the sidebar follows the answers
    screenshot(page, "drills-right")
    assert not errors
    ctx.close()


def learner_box(page, base: str, kind: str) -> str:
    page.goto(f"{base}/drills/progress")
    return page.inner_text(f'#progress-table tr[data-kind="{kind}"]')


def test_hint_wrong_reveal_not_promoted(browser, live_server, screenshot):
    """A link's ``hint=`` shows and records nothing; open a hint (a POST, recorded, shown again on reload), answer
    wrong (no key shown), reveal (key shown, counted as a miss), then the copied key: graded right, recorded not at
    all, so the drill is not promoted (its kind stays in box 0, due now) and correct / streak stay 0."""
    import json

    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    hint_posts: list[str] = []
    page.on("request", lambda r: hint_posts.append(r.url) if r.method == "POST" and r.url.endswith("/hint") else None)
    seed = next(s for s in range(200) if from_id(f"natural_coord-{s}").variant == "idx")
    drill = from_id(f"natural_coord-{seed}")
    page.goto(f"{live_server.url}/drills?kind=natural_coord&seed={seed}&hint=3")  # a link's hint= shows nothing
    assert page.query_selector(".hint") is None and not hint_posts
    page.click("#hint-btn")
    page.wait_for_selector(".hint.level1")
    assert hint_posts == [f"{live_server.url}/drills/hint"]  # the button posts; the page's GET recorded nothing
    lid = identity.unsign(next(c["value"] for c in ctx.cookies() if c["name"] == "layoutlab_learner"))
    assert store.served_info(lid, drill.id)[1] == 1
    page.reload()
    page.wait_for_selector(".hint.level1")  # the page shows the hints this learner opened
    assert page.query_selector(".hint.level2") is None and store.served_info(lid, drill.id)[1] == 1

    wrong = next(ex for _, _, ex in drill.mistakes if ex) if drill.mistakes else "(0,(0,0))"
    page.fill("#answer-input", wrong)
    page.click("#check-btn")
    page.wait_for_selector("#verdict.wrong")
    assert page.query_selector("#expected") is None
    assert drill.expected not in page.inner_text("#verdict")
    screenshot(page, "drills-hint-wrong")

    page.click("#reveal-btn")
    page.wait_for_selector("#expected")
    assert page.inner_text("#expected") == drill.expected
    assert page.eval_on_selector_all("#verdict .steps li", "els => els.length") == len(drill.steps)
    screenshot(page, "drills-revealed")

    page.fill("#answer-input", drill.expected)
    page.click("#check-btn")
    page.wait_for_selector("#verdict.right")
    progress = json.loads(page.evaluate("fetch('/api/drills/progress').then(r => r.text())"))
    st = {k["kind"]: k for k in progress["kinds"]}["natural_coord"]
    assert (st["box"], st["attempts"], st["correct"], st["streak"]) == (0, 2, 0, 0), st  # the copied key: no record
    row = learner_box(page, live_server.url, "natural_coord")
    assert "now" in row  # missed: it comes back at once
    screenshot(page, "drills-not-promoted")
    assert not errors
    ctx.close()


def test_progress_survives_server_restart(browser, app, screenshot):
    from app.drills import store
    from tests.conftest import LiveServer

    server = LiveServer(app).start()
    ctx = browser.new_context(viewport={"width": 1200, "height": 900})
    page = ctx.new_page()
    page.set_default_timeout(10_000)
    drill = from_id("majorness-3")
    page.goto(f"{server.url}/drills?kind=majorness&seed=3")
    page.fill("#answer-input", drill.expected)
    page.click("#check-btn")
    page.wait_for_selector("#verdict.right")
    server.stop()
    store.reset_connections()

    from app.main import create_app

    again = LiveServer(create_app(), port=server.port).start()
    try:
        page.goto(f"{again.url}/drills/progress")
        row = page.inner_text('#progress-table tr[data-kind="majorness"]')
        assert "1\t1\t100%" in row.replace(" ", "\t") or "100%" in row
        screenshot(page, "drills-progress")
    finally:
        again.stop()
        ctx.close()


def test_whiteboard_session_reaches_the_score_page(browser, live_server, screenshot):
    ctx = browser.new_context(viewport={"width": 1300, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/drills/whiteboard")
    page.click("#start-btn")
    total = 0
    while True:
        page.wait_for_selector("#wb-score, #drill")
        if page.query_selector("#wb-score"):
            break
        total += 1
        did = page.get_attribute("#drill", "data-drill")
        if total == 2:
            screenshot(page, "drills-whiteboard-part")
        page.fill("#answer-input", from_id(did).expected)
        page.click("#check-btn")
        page.wait_for_function(
            "q => document.getElementById('wb-score') || (document.getElementById('wb-question') || {}).textContent "
            "!== q", arg=str(total))
    assert total >= 21
    assert f"{total} / {total}" in page.inner_text("#wb-score")
    assert page.eval_on_selector_all("#wb-table tbody tr", "els => els.length") == 7
    screenshot(page, "drills-whiteboard-score")
    ctx.close()


def test_symbolic_drill_wrong_then_right(browser, live_server, screenshot):
    """A view in terms of ld: a shape-changing answer is refused with its reason, the strides alone are accepted."""
    seed = next(s for s in range(200) if from_id(f"symbolic-{s}").variant == "tiled/row")
    drill = from_id(f"symbolic-{seed}")
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{live_server.url}/drills?kind=symbolic&seed={seed}")
    assert "leading dimension" in page.inner_text("#drill-prompt")
    shape, stride = drill.expected.split(":")
    page.fill("#answer-input", shape.replace("(", "").replace(")", "").join("()") + ":"
              + stride.replace("(", "").replace(")", "").join("()"))
    page.click("#check-btn")
    page.wait_for_selector("#verdict.wrong")
    assert "modes of sizes" in page.inner_text("#verdict-reason")
    page.fill("#answer-input", stride)
    page.click("#check-btn")
    page.wait_for_selector("#verdict.right")
    assert "admissible values" in page.inner_text("#verdict-reason")
    assert page.inner_text("#expected") == drill.expected
    assert page.eval_on_selector_all("#verdict .steps li", "els => els.length") == len(drill.steps)
    screenshot(page, "drills-symbolic")
    assert not errors
    ctx.close()
