"""The class and the doctor's constraints in a real chromium: two students join a class through the drills' profile
form and the lab's class form, their jobs show their names in the lab's history (and "mine" keeps one's own), the
instructor signs in on /lab/class and sees every job of the class with its submitter and the leaderboard, a student
sees the leaderboard only; the layout doctor marks a fix that breaks a TMA box in its row and selects the best fix
that keeps every constraint. Screenshots: tests/artifacts/class-*.png, doctor-constraints.png."""

from __future__ import annotations

import json
import time
from urllib.parse import quote

import pytest

pytestmark = pytest.mark.browser
CODE, TOKEN = "cute-class-7", "instructor-secret-7"


@pytest.fixture()
def classes(monkeypatch):
    monkeypatch.setenv("LAYOUTLAB_CLASS_CODES", f"other-class, {CODE}")
    monkeypatch.setenv("LAYOUTLAB_INSTRUCTOR_TOKEN", TOKEN)


def _student(browser, live_server, name: str, how: str):
    """A browser of its own: the profile named, the class joined through the drills' form or the lab's."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = ctx.new_page()
    pg.set_default_timeout(10_000)
    pg.goto(f"{live_server.url}/drills/progress")
    pg.fill("#profile-input", name)
    if how == "profile":
        pg.fill("#class-code-input", CODE)
    pg.click("form[action='/drills/profile'] button[type=submit]")
    pg.wait_for_selector("#profile-name")
    pg.goto(f"{live_server.url}/lab")  # the lab client cookie, linked to this browser's profile
    if how == "lab":
        pg.goto(f"{live_server.url}/lab/class")
        pg.fill("#class-code", CODE)
        pg.click("#class-join button[type=submit]")
    pg.goto(f"{live_server.url}/lab/class")
    assert pg.inner_text("#class-mine") == CODE
    return ctx, pg


def _client_of(ctx) -> str:
    from app.services import lab_clients

    value = next(c["value"] for c in ctx.cookies() if c["name"] == lab_clients.COOKIE)
    return lab_clients.verify(value)


def _done_job(pg, kind: str, result: dict) -> str:
    """A job submitted from the student's page (the lab's API, as its scripts do), then finished as a worker would
    finish it (no GPU here: the kind and result are written)."""
    from gpu_worker.store import get_store

    job = pg.evaluate("async () => (await fetch('/api/bench/jobs', {method: 'POST', headers: {'Content-Type': "
                      "'application/json'}, body: JSON.stringify({kind: 'compile_only', params: {nvcc: 'skip'}})}))"
                      ".json()")
    get_store().update(job["id"], kind=kind, status="done", result=result, finished=time.time())
    return job["id"]


@pytest.fixture()
def worker():
    """A live worker record for compile_only (no worker runs: submitted jobs stay queued until written)."""
    from gpu_worker.store import get_store

    get_store().heartbeat({"id": "w-class", "host": "h", "pid": 1, "kinds": ["compile_only"], "busy": None,
                           "device": {"available": False, "reason": "no GPU"}})
    yield
    get_store().remove_worker("w-class")


def test_the_class_view_and_leaderboard(browser, live_server, classes, worker, screenshot):
    ada_ctx, ada = _student(browser, live_server, f"Ada {time.time_ns() % 10**6}", "profile")
    bob_ctx, bob = _student(browser, live_server, f"Bob {time.time_ns() % 10**6}", "lab")
    ada_name, bob_name = (p.inner_text("#class-me").split(" · ")[0][len("You are "):] for p in (ada, bob))
    a1 = _done_job(ada, "gemm", {"tflops": 401.0, "pct_of_cublas": 62.0,
                                                "params": {"rung": 7, "m": 4096}})
    b1 = _done_job(bob, "gemm", {"tflops": 433.5, "pct_of_cublas": 67.0,
                                                "params": {"rung": 7, "m": 4096}})
    a2 = _done_job(ada, "transpose", {
        "variants": {"swizzled": {"gbps": 2950.0, "pct_of_copy": 91.0, "check": {"passed": True}}},
        "config": {"n": 8192}, "prediction": {"swizzled": {"read": {"ways": 1}}}})

    # the lab's history names the submitter; "mine" keeps one's own jobs
    ada.goto(f"{live_server.url}/lab")
    ada.wait_for_selector(f"#history tr[data-job='{b1}'] td.submitter")
    assert ada.inner_text(f"#history tr[data-job='{b1}'] td.submitter").strip() == bob_name
    assert ada.inner_text(f"#history tr[data-job='{a1}'] td.submitter").startswith(ada_name)
    screenshot(ada, "class-lab-history")
    ada.click("#history-mine")
    ada.wait_for_selector("#history-all")
    assert ada.locator(f"#history tr[data-job='{a1}']").count() == 1
    assert ada.locator(f"#history tr[data-job='{b1}']").count() == 0

    # a student sees the leaderboard, not the class's job list
    bob.goto(f"{live_server.url}/lab/class")
    bob.wait_for_selector("#leaderboard")
    assert bob.locator("#class-jobs").count() == 0
    assert bob_name in bob.inner_text("#leaderboard tr[data-kernel='gemm rung 7 m=4096']")
    screenshot(bob, "class-student")

    # the instructor signs in once and sees every job of the class with its submitter
    inst_ctx = browser.new_context(viewport={"width": 1400, "height": 900})
    inst = inst_ctx.new_page()
    inst.goto(f"{live_server.url}/lab/class")
    inst.click("details.class-instructor summary")
    inst.fill("#instructor-token", "wrong")
    inst.click("#instructor-form button[type=submit]")
    assert "not the instructor token" in inst.inner_text("#class-error")
    inst.click("details.class-instructor summary")
    inst.fill("#instructor-token", TOKEN)
    inst.click("#instructor-form button[type=submit]")
    inst.wait_for_selector("#class-list")
    inst.click(f"#class-list a[href='/lab/class?code={quote(CODE)}']")
    inst.wait_for_selector("#class-jobs")
    rows = {r.get_attribute("data-job"): r.locator(".submitter").inner_text()
            for r in inst.locator("#class-jobs tbody tr[data-job]").all()}
    assert {a1, a2, b1} <= set(rows) and rows[a1] == ada_name and rows[b1] == bob_name
    board = inst.locator("#leaderboard tr[data-kernel='gemm rung 7 m=4096']").inner_text()
    assert "433.50 TFLOP/s" in board and bob_name in board
    assert ada_name in inst.locator("#leaderboard tr[data-kernel='transpose swizzled n=8192']").inner_text()
    screenshot(inst, "class-instructor")
    for ctx in (ada_ctx, bob_ctx, inst_ctx):
        ctx.close()


def test_the_doctor_marks_fixes_that_break_a_constraint(page, live_server, screenshot):
    from app.services.solver import PRESETS

    accesses = PRESETS["fp16-64x64-cpasync-ldmatrix"]["accesses"] + [{"name": "TMA box", "kind": "tma",
                                                                        "box": [64, 64]}]
    page.goto(f"{live_server.url}/doctor?element_bytes=2&tile={quote('(64,64):(64,1)')}"
              f"&accesses={quote(json.dumps(accesses))}")
    page.wait_for_selector("#s-cands tbody tr.sel")
    padded = page.locator("#s-cands tbody tr:has-text('(64,64):(72,1)')").first
    assert padded.get_attribute("data-constraints") == "broken" and "broken" in padded.get_attribute("class")
    cells = padded.locator("td").all_inner_texts()
    assert cells[3] == "8 / 8" and cells[4].startswith("✗ breaks") and "TMA box" in cells[4]
    assert "over" in padded.locator("td").nth(3).get_attribute("class")  # never the green of a working fix
    sel = page.locator("#s-cands tbody tr.sel")
    assert sel.get_attribute("data-constraints") == "met" and sel.locator("td").nth(4).inner_text() == "✓ kept"
    detail = page.inner_text("#s-detail")
    assert "null" not in detail and page.locator("#copy-cpp").count() == 1 and page.locator("#copy-dsl").count() == 1
    padded.click()
    page.wait_for_selector("#s-broken")
    assert "TMA box" in page.inner_text("#s-broken") and "null" not in page.inner_text("#s-detail")
    screenshot(page, "doctor-constraints")
    # wgmma: every fix but the swizzle breaks it; the selected one keeps both constraints
    page.goto(f"{live_server.url}/doctor?preset=fp16-64x64-wgmma")
    page.wait_for_selector("#s-cands tbody tr.sel")
    assert page.locator("#s-cands tbody tr.sel").get_attribute("data-constraints") == "met"
    assert page.locator("#s-cands tbody tr[data-constraints='broken']").count() >= 2
    assert page.console_errors == []


def test_a_history_row_follows_its_job_card(page, live_server, screenshot):
    """When a job's card turns final, its history row says so in the same moment, not at the history's next poll;
    the card never says a stage equal to its status ("failed · failed")."""
    from gpu_worker.store import get_store

    page.goto(f"{live_server.url}/lab")
    client = _client_of(page.context)
    store = get_store()
    job = store.create("compile_only", {"nvcc": "skip"}, client=client)
    store.update(job["id"], status="running", progress={"stage": "building", "done": None, "total": None},
                 started=time.time(), lease_until=time.time() + 600)
    page.goto(f"{live_server.url}/lab")
    page.click(f"#history tr[data-job='{job['id']}'] a")
    page.wait_for_selector(f"#job article[data-job='{job['id']}'][data-status='running']")
    assert page.inner_text(f"#history tr[data-job='{job['id']}'] td.status") == "running"
    store.update(job["id"], status="failed", error="nvcc exited with status 1", progress={"stage": "failed"},
                 finished=time.time())
    page.wait_for_selector(f"#job article[data-job='{job['id']}'][data-status='failed']")
    row = page.locator(f"#history tr[data-job='{job['id']}']")
    assert row.locator("td.status").inner_text() == "failed" and row.locator("td.stage").inner_text() == ""
    assert "failed · failed" not in page.inner_text("#job header")
