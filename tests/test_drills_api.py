"""Drill routes: the CONTRACT surface, bad input (never a 5xx), learners kept apart, progress across a restart,
profiles, the whiteboard session and the HTML pages."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.drills import progress, store
from app.drills.core import DrillError, from_id, kinds


@pytest.fixture()
def fresh(app: Any) -> Any:
    """A new browser: its own cookie jar, so its own learner."""
    def make() -> TestClient:
        return TestClient(app, raise_server_exceptions=False)
    return make


def solve(c: TestClient, kind: str, seed: int, right: bool = True) -> dict[str, Any]:
    d = c.get(f"/api/drills/next?kind={kind}&seed={seed}").json()
    drill = from_id(d["id"])
    answer = drill.expected if right else wrong(drill.expected, drill)
    res = c.post(f"/api/drills/{d['id']}/answer", json={"answer": answer}).json()
    assert res["correct"] is right and res["readable"]
    return res


def wrong(expected: str, drill: Any = None) -> str:
    """A readable wrong answer: the key with one integer changed (or another choice word)."""
    nums = list(re.finditer(r"\d+", expected))
    cands = [expected[:m.start()] + str(int(m.group()) + 1) + expected[m.end():] for m in reversed(nums)]
    cands += ["neither" if expected != "neither" else "row"]
    for cand in cands:
        if drill is None:
            return cand
        g = drill.grade(cand)
        if g.readable and not g.correct:
            return cand
    raise AssertionError(f"no wrong answer found for {expected}")


def test_kinds_next_answer_contract(fresh: Any) -> None:
    c = fresh()
    ks = c.get("/api/drills/kinds").json()
    names = [k["kind"] for k in ks]
    assert names == [k.kind for k in kinds()] and len(ks) == 12 and "symbolic" in names
    assert all(set(k) >= {"kind", "title"} for k in ks)
    for k in ks:
        d = c.get(f"/api/drills/next?kind={k['kind']}&seed=7").json()
        assert d["id"] == f"{k['kind']}-7" and d["kind"] == k["kind"]
        assert d["prompt"] and d["answer_format"]
        res = c.post(f"/api/drills/{d['id']}/answer", json={"answer": from_id(d["id"]).expected}).json()
        assert res["correct"] is True and res["expected"] == from_id(d["id"]).expected
        assert res["steps"] and all({"text", "layout"} <= set(s) for s in res["steps"])
    anyone = c.get("/api/drills/next").json()
    assert anyone["kind"] in {k["kind"] for k in ks}


def test_wrong_answers_are_graded_with_reasons_and_marked_cells(fresh: Any) -> None:
    c = fresh()
    seed = next(s for s in range(100) if from_id(f"offsets-{s}").table_shape)
    drill = from_id(f"offsets-{seed}")
    rows = [r.split() for r in drill.expected.split("\n")]
    rows[0][0] = str(int(rows[0][0]) + 1)
    res = c.post(f"/api/drills/{drill.id}/answer", json={"answer": "\n".join(" ".join(r) for r in rows)}).json()
    assert res["correct"] is False and res["readable"] is True
    assert res["cells"][0][0] is False and sum(not x for row in res["cells"] for x in row) == 1
    assert "row 0, column 0" in res["reason"]


BAD_ANSWERS = ["(((((", "((1,2)", ")", "Sw<99,99,99>", "__import__('os').system('true')", "2**99999", "9" * 300,
               "<1:2", "(4,8):(1", "(0,0):(1,1)", "1/0", "∞", "?", "Sw<3,3,3> o (8,64):(64,1)", "-5", "x" * 3999]


@pytest.mark.parametrize("kind", [k.kind for k in kinds()])
def test_malformed_answers_never_500(fresh: Any, kind: str) -> None:
    c = fresh()
    for seed in (3, 11):
        did = f"{kind}-{seed}"
        for bad in BAD_ANSWERS:
            r = c.post(f"/api/drills/{did}/answer", json={"answer": bad})
            assert r.status_code == 200, (did, bad, r.text)
            body = r.json()
            assert body["correct"] is False and body["reason"], (did, bad)


def test_bad_requests_are_4xx_with_detail(fresh: Any) -> None:
    c = fresh()
    cases = [
        c.post("/api/drills/offsets-1/answer", json={"answer": ""}),
        c.post("/api/drills/offsets-1/answer", json={"answer": "   "}),
        c.post("/api/drills/offsets-1/answer", json={"answer": "1" * 5000}),
        c.post("/api/drills/offsets-1/answer", json={}),
        c.post("/api/drills/offsets-1/answer", content=b"not json", headers={"content-type": "application/json"}),
        c.post("/api/drills/nosuchkind-1/answer", json={"answer": "1"}),
        c.post("/api/drills/offsets-x/answer", json={"answer": "1"}),
        c.post("/api/drills/offsets-99999999999/answer", json={"answer": "1"}),
        c.get("/api/drills/next?kind=nosuchkind"),
        c.get("/api/drills/next?kind=offsets&seed=-1"),
        c.get("/api/drills/next?kind=offsets&seed=abc"),
        c.get("/api/drills/offsets-1/hint?level=9"),
        c.get("/api/drills/whiteboard/doesnotexist"),
        c.post("/api/drills/profile", json={"name": "<script>"}),
    ]
    for r in cases:
        assert 400 <= r.status_code < 500, r.text
        assert isinstance(r.json()["detail"], str) and r.json()["detail"]


def test_unreadable_answers_are_not_recorded(fresh: Any) -> None:
    c = fresh()
    r = c.post("/api/drills/offsets-2/answer", json={"answer": "((("}).json()
    assert r["readable"] is False and "could not read" in r["reason"]
    assert c.get("/api/drills/progress").json()["attempts"] == 0


def test_two_learners_never_mix(fresh: Any) -> None:
    a, b = fresh(), fresh()
    solve(a, "banks", 1)
    solve(a, "banks", 2)
    solve(b, "offsets", 1, right=False)
    pa, pb = a.get("/api/drills/progress").json(), b.get("/api/drills/progress").json()
    assert (pa["attempts"], pa["correct"]) == (2, 2) and (pb["attempts"], pb["correct"]) == (1, 0)
    assert {k["kind"]: k["attempts"] for k in pa["kinds"]}["offsets"] == 0
    assert {k["kind"]: k["attempts"] for k in pb["kinds"]}["banks"] == 0
    assert a.cookies.get("layoutlab_learner") != b.cookies.get("layoutlab_learner")


def test_progress_survives_a_restart(fresh: Any) -> None:
    c = fresh()
    solve(c, "tiled_view", 5)
    solve(c, "tiled_view", 6, right=False)
    cookie = c.cookies.get("layoutlab_learner")
    store.reset_connections()  # the server goes away: cached SQLite connections closed
    from app.main import create_app

    again = TestClient(create_app(), raise_server_exceptions=False)
    again.cookies.set("layoutlab_learner", cookie)
    p = again.get("/api/drills/progress").json()
    tv = {k["kind"]: k for k in p["kinds"]}["tiled_view"]
    assert (tv["attempts"], tv["correct"], tv["box"]) == (2, 1, 0)


def test_named_profile_moves_between_browsers(fresh: Any) -> None:
    a, b = fresh(), fresh()
    solve(a, "majorness", 1)
    assert a.post("/api/drills/profile", json={"name": "Ada L"}).json() == {"name": "Ada L", "switched": False}
    assert b.post("/api/drills/profile", json={"name": "Ada L"}).json()["switched"] is True
    pb = b.get("/api/drills/progress").json()
    assert pb["name"] == "Ada L" and pb["attempts"] == 1


def test_hints_escalate(fresh: Any) -> None:
    c = fresh()
    h = [c.get(f"/api/drills/composition-1/hint?level={k}") for k in (1, 2, 3)]
    assert h[0].status_code == 404  # not a kind
    h = [c.get(f"/api/drills/algebra_op-1/hint?level={k}").json() for k in (1, 2, 3)]
    assert [x["level"] for x in h] == [1, 2, 3]
    assert h[0]["text"] != h[1]["text"] and h[2]["steps"] == from_id("algebra_op-1").steps


def test_spaced_repetition_brings_missed_kinds_back_first(fresh: Any) -> None:
    c = fresh()
    solve(c, "banks", 1, right=False)
    solve(c, "offsets", 1)
    assert c.get("/api/drills/progress").json()["next_kind"] == "banks"
    assert c.get("/api/drills/next").json()["kind"] == "banks"


def test_whiteboard_session_in_order_with_score(fresh: Any) -> None:
    c = fresh()
    s = c.post("/api/drills/whiteboard").json()
    sid, parts = s["session"], s["parts"]
    assert len(parts) == 7 and s["current"] == 0 and s["part_limit_s"] == 600
    r = c.post(f"/api/drills/{parts[1]['id']}/answer", json={"answer": "1", "session": sid})
    assert r.status_code == 409
    for i, p in enumerate(parts):
        answer = from_id(p["id"]).expected if i != 6 else wrong(from_id(p["id"]).expected, from_id(p["id"]))
        r = c.post(f"/api/drills/{p['id']}/answer", json={"answer": answer, "session": sid})
        assert r.status_code == 200 and r.json()["correct"] == (i != 6)
    res = c.get(f"/api/drills/whiteboard/{sid}").json()
    assert res["finished"] and res["score"] == 6 and res["redo"] == [6]
    assert c.post(f"/api/drills/{parts[0]['id']}/answer", json={"answer": "1", "session": sid}).status_code == 409
    other = fresh()
    assert other.get(f"/api/drills/whiteboard/{sid}").status_code == 404


def test_whiteboard_ten_minute_rule() -> None:
    learner = store.ensure_learner(None)
    t0 = 1_000_000.0
    sid = progress.start_whiteboard(learner, now=t0)
    parts = store.get_session(learner, sid)["parts"]
    minutes = [1, 1, 2, 2, 3, 11, 9]
    t = t0
    for did, m in zip(parts, minutes, strict=True):
        t += 60 * m
        d = from_id(did)
        store.record_attempt(learner, did, d.kind, d.seed, d.expected, True, session=sid, now=t)
    res = progress.session_results(learner, sid)
    assert res["score"] == 7 and [p.index for p in res["redo"]] == [5]
    assert "11.0 min" in res["redo"][0].why and res["parts"][6].redo is False


def test_stale_empty_whiteboard_sessions_are_dropped_when_one_starts(fresh: Any) -> None:
    a, b = store.ensure_learner(None), store.ensure_learner(None)
    now = time.time()
    recent_empty = progress.start_whiteboard(a, now=now - 3_600)
    old_empty = progress.start_whiteboard(a, now=now - 2 * 86_400)
    old_used = progress.start_whiteboard(b, now=now - 2 * 86_400)
    d = from_id(store.get_session(b, old_used)["parts"][0])
    store.record_attempt(b, d.id, d.kind, d.seed, d.expected, True, session=old_used, now=now - 86_000)
    assert store.get_session(a, old_empty) is not None  # nothing is dropped before a new session starts
    c = fresh()
    c.post("/api/drills/whiteboard")
    assert store.get_session(a, old_empty) is None
    assert store.get_session(b, old_used) is not None and store.get_session(a, recent_empty) is not None
    with pytest.raises(DrillError):
        progress.session_results(a, old_empty)
    assert store.drop_stale_sessions(now) == 0


def test_pages(fresh: Any) -> None:
    c = fresh()
    r = c.get("/drills", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/drills?kind=")
    r = c.get("/drills?kind=offsets&seed=4")
    assert r.status_code == 200 and from_id("offsets-4").prompt.split(".")[0] in r.text
    frag = c.post("/drills/answer", data={"id": "offsets-4", "answer": from_id("offsets-4").expected},
                  headers={"HX-Request": "true"})
    assert frag.status_code == 200 and "Correct" in frag.text and "<html" not in frag.text
    full = c.post("/drills/answer", data={"id": "offsets-4", "answer": "1 2"})
    assert full.status_code == 200 and "<html" in full.text and "verdict" in full.text
    hint = c.get("/drills?kind=offsets&seed=4&hint=2", headers={"HX-Request": "true"})
    assert "Hint 2" in hint.text and "Hint 1" in hint.text
    assert c.get("/drills?kind=nope&seed=1").status_code == 404
    assert c.post("/drills/answer", data={"id": "bad", "answer": "1"}).status_code == 404
    assert c.get("/drills/progress").status_code == 200
    r = c.post("/drills/whiteboard", follow_redirects=True)
    assert r.status_code == 200 and "Part <b id=\"wb-part\">1</b>" in r.text
    assert c.get("/drills/whiteboard").status_code == 200
    assert c.get("/drills/whiteboard/nope").status_code == 404
