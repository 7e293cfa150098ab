"""Whiteboard sessions over the API: the seed's whole sheet (3-5 questions per part, each slot's variant), answered
in order once each, the score and the ten-minute rule per part, sessions private to their learner, stale empty
sessions dropped."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fastapi.testclient import TestClient
from test_drills_api import wrong

from app.drills import progress, store
from app.drills.core import DrillError, from_id


@pytest.fixture()
def fresh(app: Any) -> Any:
    def make() -> TestClient:
        return TestClient(app, raise_server_exceptions=False)
    return make


def test_whiteboard_is_the_full_sheet_in_order_with_score(fresh: Any) -> None:
    c = fresh()
    s = c.post("/api/drills/whiteboard").json()
    sid, qs = s["session"], s["parts"]
    assert [p["part"] for p in s["sheet"]] == list(range(7)) and s["part_limit_s"] == 600
    assert all(3 <= p["questions"] <= 8 for p in s["sheet"]) and len(qs) == sum(p["questions"] for p in s["sheet"])
    for p, (label, tests) in enumerate(progress.SHEET):  # every slot got the variant the sheet asks for
        mine = [q for q in qs if q["part"] == p]
        for q, (kind, test) in zip(mine, tests, strict=True):
            d = from_id(q["id"])
            assert d.kind == kind and test(d), (label, q["id"], d.variant)
    r = c.post(f"/api/drills/{qs[1]['id']}/answer", json={"answer": "1", "session": sid})
    assert r.status_code == 409
    last = [q for q in qs if q["part"] == 6][0]["index"]
    for q in qs:
        d = from_id(q["id"])
        answer = d.expected if q["index"] != last else wrong(d.expected, d)
        r = c.post(f"/api/drills/{q['id']}/answer", json={"answer": answer, "session": sid})
        assert r.status_code == 200 and r.json()["correct"] == (q["index"] != last)
    res = c.get(f"/api/drills/whiteboard/{sid}").json()
    assert res["finished"] and res["score"] == len(qs) - 1 and res["redo"] == [6]
    assert c.post(f"/api/drills/{qs[0]['id']}/answer", json={"answer": "1", "session": sid}).status_code == 409
    other = fresh()
    assert other.get(f"/api/drills/whiteboard/{sid}").status_code == 404


def test_whiteboard_ten_minute_rule_per_part() -> None:
    learner = store.ensure_learner(None)
    t0 = 1_000_000.0
    sid = progress.start_whiteboard(learner, now=t0)
    qs = store.get_session(learner, sid)["parts"]
    t = t0
    for q in qs:
        t += 60 * {5: 3, 6: 1.25}.get(q["part"], 1)  # part 6: 4 x 3 min = 12 min; part 7: 7 x 1.25 = 8.75 min
        d = from_id(q["id"])
        store.record_attempt(learner, q["id"], d.kind, d.seed, d.expected, True, session=sid, now=t)
    res = progress.session_results(learner, sid)
    assert res["score"] == len(qs) and [p.part for p in res["redo"]] == [5]
    assert "12.0 min" in res["redo"][0].why and not res["sheet"][6].redo


def test_stale_empty_whiteboard_sessions_are_dropped_when_one_starts(fresh: Any) -> None:
    a, b = store.ensure_learner(None), store.ensure_learner(None)
    now = time.time()
    recent_empty = progress.start_whiteboard(a, now=now - 3_600)
    old_empty = progress.start_whiteboard(a, now=now - 2 * 86_400)
    old_used = progress.start_whiteboard(b, now=now - 2 * 86_400)
    d = from_id(store.get_session(b, old_used)["parts"][0]["id"])
    store.record_attempt(b, d.id, d.kind, d.seed, d.expected, True, session=old_used, now=now - 86_000)
    assert store.get_session(a, old_empty) is not None  # nothing is dropped before a new session starts
    c = fresh()
    c.post("/api/drills/whiteboard")
    assert store.get_session(a, old_empty) is None
    assert store.get_session(b, old_used) is not None and store.get_session(a, recent_empty) is not None
    with pytest.raises(DrillError):
        progress.session_results(a, old_empty)
    assert store.drop_stale_sessions(now) == 0
