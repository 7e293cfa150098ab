"""The whiteboard in a real chromium with the sheet's own numbers: every question carries the interview sheet's
numbers (parts 5.2 and 7.2 among them), and once the last one is answered the score page shows each answer beside
its key with the worked steps. Screenshot: tests/artifacts/whiteboard-review.png."""

from __future__ import annotations

import pytest

from app.drills.core import from_id

pytestmark = pytest.mark.browser


def test_a_sheet_session_reviews_every_answer_beside_its_key(page, live_server, screenshot):
    page.goto(f"{live_server.url}/drills/whiteboard")
    page.check("#wb-sheet")
    page.click("#start-btn")
    page.wait_for_selector("#answer-form")
    seen, wrong = [], None
    for _ in range(60):
        if page.locator("#wb-score").count():
            break
        did = page.get_attribute("#answer-form input[name=id]", "value")
        d = from_id(did)
        seen.append(d)
        answer = d.expected
        if wrong is None and d.kind != "explain":
            answer, wrong = "0", did  # one wrong answer, to see it beside its key
        page.fill("#answer-input", answer)
        page.click("#check-btn")
        page.wait_for_function("(old) => !document.querySelector(`#answer-form input[name=id][value='${old}']`)",
                               arg=did)
    page.wait_for_selector("#wb-review")
    assert all(d.sheet for d in seen if d.kind != "explain"), [d.id for d in seen if not d.sheet]
    assert any(d.kind == "transpose_view" and d.variant == "prove" and d.expected == "13, 13" for d in seen)
    assert any(d.kind == "banks" and d.variant == "banks" and d.expected == "5, 6, 7, 8" for d in seen)
    rows = page.locator("#wb-review tbody tr")
    assert rows.count() == len(seen)
    bad = page.locator(f"#wb-review tr[data-drill='{wrong}']")
    assert "wrong" in bad.get_attribute("class") and bad.locator(".wb-answer").inner_text() == "0"
    assert bad.locator(".wb-key").inner_text() == from_id(wrong).expected
    bad.locator("summary").click()
    assert bad.locator("ol.steps li").count() == len(from_id(wrong).steps)
    assert page.inner_text("#wb-score").startswith(f"Score: {len(seen) - 1} / {len(seen)}")
    screenshot(page, "whiteboard-review")
    assert page.console_errors == []
